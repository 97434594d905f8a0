"""Builds the Faust worker from ``Settings`` and runs it (``monitor worker``).

Faust settings the monitor relies on: raw key/value serializers everywhere (``monitor.events``
decodes; no ``faust.Record`` reaches the core), at-least-once processing (offsets are committed
after the producer is flushed; see ``agents.py`` for the order of writes), tables in memory and
rebuilt from their changelogs at start, ``earliest`` offset reset so nothing produced before
the group existed is skipped.

Besides the agents, the app carries the worker's operational pieces: ``/health`` and ``/ready``
beside ``/metrics``, the expiry sweep that drops ended and idle sessions from the tables, and
the weekly fixture-intake crontab (``schedule.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal

from monitor.config import Settings
from monitor.detect import DetectConfig, flush, warm
from monitor.stream import agents, schedule, sinkproc, topics, transport, versions
from monitor.stream.kafka import faust_broker_credentials
from monitor.stream.tables import Expirable, SessionTables

if TYPE_CHECKING:
    import faust
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from monitor.metrics import Metrics

log = logging.getLogger(__name__)

#: Longest a readiness check waits for the broker or the database (seconds).
READY_TIMEOUT_S: Final = 2.0
#: Sessions the expiry sweep judges between two yields to the event loop, and drops per
#: durable publish of their flushed flags.
EXPIRY_SLICE: Final = 1000


@dataclass
class Worker:
    """The built app and what it declared (tests and ``monitor worker`` start it alike)."""

    app: faust.App
    topics: topics.Topics
    #: None in the sink process (it keeps no detector state).
    tables: SessionTables | None


def heartbeat_interval(session_timeout_s: float) -> float:
    """A third of the session timeout, at most Kafka's usual 3 s."""
    return min(3.0, session_timeout_s / 3.0)


#: What an app runs: everything, everything but the sinks, or only the sinks (``sinkproc.py``).
Role = Literal["all", "detect", "sinks"]


def create_app(
    settings: Settings,
    maker: sessionmaker[Session],
    metrics: Metrics | None = None,
    role: Role = "all",
) -> Worker:
    """The Faust app with its topics, tables and agents declared (on a supported Faust only:
    ``versions.check_faust``)."""
    import faust

    versions.check_faust()

    sinks_only = role == "sinks"
    app = faust.App(
        sinkproc.sinks_app_id(settings) if sinks_only else settings.app_id,
        broker=settings.broker,
        broker_credentials=faust_broker_credentials(settings),
        store="memory://",
        key_serializer="raw",
        value_serializer="raw",
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        consumer_auto_offset_reset="earliest",
        consumer_max_fetch_size=settings.fetch_max_bytes,
        broker_session_timeout=settings.session_timeout_s,
        broker_heartbeat_interval=heartbeat_interval(settings.session_timeout_s),
        web_port=settings.web_port if settings.web_port > 0 else 6066,
        web_bind=settings.web_host,
        # MONITOR_WEB_PORT=0 runs without a web server; the sink process never has one.
        web_enabled=settings.web_port > 0 and not sinks_only,
        # Serve only our pages (/metrics, /health, /ready): Faust's built-in /table views would
        # show detector state (session ids, instruction text), and /router, /graph and the
        # stats index describe internals nobody outside needs.
        web_tables_enabled=False,
        web_router_enabled=False,
        web_graph_enabled=False,
        web_stats_enabled=False,
        processing_guarantee="at_least_once",
    )
    transport.install(
        app,
        fetch_max_wait_ms=(
            settings.sink_fetch_max_wait_ms if sinks_only else settings.fetch_max_wait_ms
        ),
        end_offsets_by_fetch=settings.end_offsets_by_fetch,
    )
    declared = topics.declare(app, settings)
    if sinks_only:
        agents.register_sinks(
            app, declared, maker, settings.sink_batch, settings.sink_within_s, metrics
        )
        if metrics is not None:
            from monitor.metrics import install_faust_sensor

            install_faust_sensor(app, metrics)
        return Worker(app, declared, None)
    # Faust creates the topics it consumes; the dead-letter topic is only written, and a broker
    # may not create topics on first write (or would use its own partition count).
    app.task(declared.deadletter.maybe_declare)
    tables = SessionTables(app, settings.partitions)
    cfg = settings.detect_config()
    agents.register_detect(app, declared, tables, cfg, metrics)
    if role == "all":
        agents.register_sinks(
            app, declared, maker, settings.sink_batch, settings.sink_within_s, metrics
        )
    register_expiry(app, declared, tables, cfg, settings.expiry_interval_s, metrics)
    schedule.register_intake(
        app,
        maker,
        settings.intake_cron,
        metrics,
        intake_publisher(app, settings),
        capture=schedule.intake_capture(maker, settings),
    )
    schedule.register_intake_freshness(app, maker, metrics)
    if settings.web_port > 0:
        _add_health_pages(app, declared, DatabaseCheck(settings.db_url))
    if metrics is not None:
        _add_pages(app, metrics)
    return Worker(app, declared, tables)


def intake_publisher(app: faust.App, settings: Settings) -> schedule.Publish | None:
    """Publishes new intake items to ``settings.intake_topic`` (keyed by session id, JSON, acks
    awaited); ``None`` when the setting is empty."""
    if not settings.intake_topic:
        return None
    topic = topics.plain_topic(app, settings, settings.intake_topic)

    async def publish(items: list[dict[str, Any]]) -> None:
        await topic.maybe_declare()
        sends = [(topic, str(i["session_id"]).encode(), json.dumps(i).encode(), None)
                 for i in items]  # fmt: skip
        await agents.send_durably(app, sends)
        log.info("published %d intake item(s) to %s", len(items), settings.intake_topic)

    return publish


# --- expiry ------------------------------------------------------------------------------------


def owned_partitions(app: faust.App, declared: topics.Topics) -> set[int]:
    """Input partitions assigned to this worker (its changelog partitions are the same ones)."""
    name = declared.input.get_topic_name()
    return {tp.partition for tp in app.assignor.assigned_actives() if tp.topic == name}


async def expire_sessions(
    app: faust.App,
    declared: topics.Topics,
    tables: SessionTables,
    cfg: DetectConfig,
    metrics: Metrics | None = None,
    now: datetime | None = None,
) -> int:
    """Drop the ended and idle sessions of the partitions this worker owns; return how many.

    Events still held for reordering are flushed first, and their flags and session summary
    published (and acknowledged by the broker) before the state goes, as the detect agent
    orders its writes: a crash in between republishes the same flags, never loses them.
    Skipped while partitions move (the tables are being rebuilt then).
    """
    if app.rebalancing or app.in_recovery:
        return 0
    owned = owned_partitions(app, declared)
    now = now or datetime.now(UTC)
    keys = tables.meta_keys()
    dropped = 0
    for start in range(0, len(keys), EXPIRY_SLICE):
        found = [
            e
            for key in keys[start : start + EXPIRY_SLICE]
            if (e := tables.expirable(key, owned, now, cfg.idle_expiry_s)) is not None
        ]
        if found:
            dropped += await _drop(app, declared, tables, cfg, found, metrics)
        await asyncio.sleep(0)
    if metrics is not None:
        metrics.set_active_sessions(tables.sessions())
    if dropped:
        log.info("expired %d session(s)", dropped)
    return dropped


async def _drop(
    app: faust.App,
    declared: topics.Topics,
    tables: SessionTables,
    cfg: DetectConfig,
    found: list[Expirable],
    metrics: Metrics | None,
) -> int:
    from monitor.provenance import record_source, stamp
    from monitor.stream.tables import unpack_meta

    topic = declared.input.get_topic_name()
    work = agents.Work(tables.load, saved_spans=tables.spans)
    for e in found:
        new, raised = flush(e.state, cfg)
        sid = new.meta.session_id
        # The record that held each released event, if this worker saw it arrive; else the
        # last record applied to the session (the event arrived in it or before).
        last = unpack_meta(e.meta_record)[:2]
        raised = [
            stamp([f], record_source(topic, *(tables.held.origin(sid, f.event_id) or last)))[0]
            for f in raised
        ]
        tables.held.keep(sid, ())
        if raised and metrics is not None:
            metrics.observe_flags(raised, new.meta.attrs)
        outcome = agents.Outcome(
            flags=raised, states={new.meta.session_id: (e.state, new)}, bad=[], events=0
        )
        work.add(outcome, (e.partition, -1))
    await agents.send_durably(app, work.sends(declared.flags, declared.sessions))
    dropped = 0
    for e in found:
        dropped += await tables.delete(e.state.meta.session_id, e.partition, e.meta_record)
    return dropped


def register_expiry(
    app: faust.App,
    declared: topics.Topics,
    tables: SessionTables,
    cfg: DetectConfig,
    interval_s: float,
    metrics: Metrics | None = None,
) -> Any:
    """Sweep every ``interval_s`` seconds, on every worker (each owns its partitions' state)."""

    async def sweep_expired_sessions() -> None:
        try:
            await expire_sessions(app, declared, tables, cfg, metrics)
        except Exception:  # a crashed timer would stop the worker; the next sweep retries
            log.exception("session expiry sweep failed")

    return app.timer(interval_s)(sweep_expired_sessions)


# --- health and readiness ----------------------------------------------------------------------


class DatabaseCheck:
    """``SELECT 1`` on a fresh connection, in a thread, bounded by ``timeout_s``.

    A connection of its own (no pool) tests what a new sink connection would meet. At most one
    check runs at a time: probes arriving while the database hangs share the running one
    instead of piling up threads.
    """

    def __init__(self, url: str, timeout_s: float = READY_TIMEOUT_S) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._engine: Engine | None = None
        self._running: asyncio.Future[None] | None = None

    def _make_engine(self) -> Engine:
        from sqlalchemy import create_engine
        from sqlalchemy.pool import NullPool

        from monitor.store.db import normalise_url

        url = normalise_url(self.url)
        timeout = max(1, round(self.timeout_s))
        args: dict[str, Any] = (
            {"timeout": self.timeout_s}
            if url.startswith("sqlite")
            else {"connect_timeout": timeout, "options": f"-c statement_timeout={timeout * 1000}"}
        )
        return create_engine(url, poolclass=NullPool, connect_args=args)

    def ping(self) -> None:
        """Blocking: connect and ``SELECT 1`` (raises on failure)."""
        from sqlalchemy import text

        if self._engine is None:
            self._engine = self._make_engine()
        with self._engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    async def __call__(self) -> dict[str, Any]:
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(asyncio.to_thread(self.ping))
            self._running.add_done_callback(_retrieve)
        try:
            await asyncio.wait_for(asyncio.shield(self._running), self.timeout_s)
        except TimeoutError:
            return {"ok": False, "error": f"no answer within {self.timeout_s:g}s"}
        except Exception as exc:
            return {"ok": False, "error": _describe(exc)}
        return {"ok": True}


def _retrieve(future: asyncio.Future[None]) -> None:
    """Mark a finished check's exception as seen (a timed-out caller no longer waits for it)."""
    if not future.cancelled():
        future.exception()


def _describe(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:300]


async def broker_check(app: faust.App, timeout_s: float = READY_TIMEOUT_S) -> dict[str, Any]:
    """A metadata round trip through the worker's own producer connection."""
    client = getattr(getattr(app.producer, "_producer", None), "client", None)
    if client is None:
        return {"ok": False, "error": "producer not started"}
    try:
        cluster = await asyncio.wait_for(client.fetch_all_metadata(), timeout_s)
    except TimeoutError:
        return {"ok": False, "error": f"no answer within {timeout_s:g}s"}
    except Exception as exc:
        return {"ok": False, "error": _describe(exc)}
    return {"ok": True, "brokers": len(cluster.brokers())}


def partitions_check(app: faust.App, declared: topics.Topics) -> dict[str, Any]:
    """Input partitions assigned, and no rebalance or table recovery in progress."""
    owned = sorted(owned_partitions(app, declared))
    moving = bool(app.rebalancing or app.in_recovery)
    out: dict[str, Any] = {"ok": bool(owned) and not moving, "partitions": owned}
    if moving:
        out["error"] = "rebalancing or recovering tables"
    elif not owned:
        out["error"] = "no input partitions assigned"
    return out


async def readiness(
    app: faust.App, declared: topics.Topics, database: DatabaseCheck
) -> dict[str, dict[str, Any]]:
    """Every readiness check by name (each ``{"ok": bool, ...}``), run concurrently."""
    broker, db = await asyncio.gather(broker_check(app), database())
    return {"broker": broker, "partitions": partitions_check(app, declared), "database": db}


def _add_health_pages(app: faust.App, declared: topics.Topics, database: DatabaseCheck) -> None:
    @app.page("/health")
    async def health_page(web: Any, request: Any) -> Any:
        return web.json({"status": "ok"})

    @app.page("/ready")
    async def ready_page(web: Any, request: Any) -> Any:
        checks = await readiness(app, declared, database)
        ready = all(c["ok"] for c in checks.values())
        body = {"status": "ready" if ready else "not ready", "checks": checks}
        return web.json(body, status=200 if ready else 503)

    del health_page, ready_page


def _add_pages(app: faust.App, metrics: Metrics) -> None:
    from monitor.metrics import exposition, install_faust_sensor

    install_faust_sensor(app, metrics)

    @app.page("/metrics")
    async def metrics_page(web: Any, request: Any) -> Any:
        body, content_type = exposition(metrics.registry)
        return web.bytes(body, content_type=content_type.split(";")[0])

    del metrics_page


def _check_schema(url: str) -> None:
    """Fail fast on a database without the monitor's current schema (the sinks would fail on
    every write); an unreachable one only warns (the sinks retry, and flags wait in their
    topic until the database is back)."""
    from sqlalchemy.exc import OperationalError

    from monitor.config import mask_url
    from monitor.errors import Fatal
    from monitor.store.db import make_engine, revisions, upgrade

    if url.startswith("sqlite"):
        upgrade(url)  # the embedded default sets itself up
        return
    engine = make_engine(url)
    try:
        current, heads = revisions(engine)
    except OperationalError as exc:
        log.warning("database %s unreachable at start; writes will retry: %s", mask_url(url), exc)
        return
    finally:
        engine.dispose()
    if not current:
        raise Fatal(f"no monitor schema in {mask_url(url)}; run `monitor db upgrade` first")
    if current != heads:
        raise Fatal(
            f"the database {mask_url(url)} is at revision {', '.join(sorted(current))}; the "
            f"worker needs {', '.join(sorted(heads))}: run `monitor db upgrade` first"
        )


def run_worker(settings: Settings, loglevel: str = "info") -> None:
    """Run the worker until SIGTERM/SIGINT (``monitor worker``)."""
    from monitor.metrics import build_metrics

    metrics = build_metrics()
    sinks = sinkproc.SinkProcess(settings, metrics, loglevel) if sinkproc.wanted(settings) else None
    if sinks is not None:
        sinks.start()  # first: its start-up (imports, group join) overlaps this process's
    try:
        _run(settings, metrics, loglevel, role="all" if sinks is None else "detect")
    finally:
        if sinks is not None:
            sinks.stop()


def _run(settings: Settings, metrics: Metrics, loglevel: str, role: Role) -> None:
    import faust

    from monitor.store.db import make_engine, make_sessionmaker

    versions.check_faust()  # before touching the database or the broker
    _check_schema(settings.db_url)
    maker = make_sessionmaker(make_engine(settings.db_url))
    worker = create_app(settings, maker, metrics, role=role)
    if role != "sinks":
        warm(settings.detect_config())
    public = settings.public()

    async def announce() -> None:
        # A task, not a line here: Faust's worker sets up logging only once it starts.
        log.info("starting worker with settings %s", public)

    worker.app.task(announce)
    faust.Worker(worker.app, loglevel=loglevel).execute_from_commandline()
