"""Builds the Faust worker from ``Settings`` and runs it (``monitor worker``).

Faust settings the monitor relies on: raw key/value serializers everywhere (``monitor.events``
decodes; no ``faust.Record`` reaches the core), at-least-once processing (offsets are committed
after the producer is flushed; see ``agents.py`` for the order of writes), tables in memory and
rebuilt from their changelogs at start, ``earliest`` offset reset so nothing produced before
the group existed is skipped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from monitor.config import Settings
from monitor.stream import agents, compat, topics
from monitor.stream.kafka import faust_broker_credentials
from monitor.stream.tables import SessionTables

if TYPE_CHECKING:
    import faust
    from sqlalchemy.orm import Session, sessionmaker

    from monitor.metrics import Metrics

log = logging.getLogger(__name__)


@dataclass
class Worker:
    """The built app and what it declared (tests and ``monitor worker`` start it alike)."""

    app: faust.App
    topics: topics.Topics
    tables: SessionTables


def heartbeat_interval(session_timeout_s: float) -> float:
    """A third of the session timeout, at most Kafka's usual 3 s."""
    return min(3.0, session_timeout_s / 3.0)


def create_app(
    settings: Settings,
    maker: sessionmaker[Session],
    metrics: Metrics | None = None,
) -> Worker:
    """The Faust app with its topics, tables and agents declared."""
    import faust

    app = faust.App(
        settings.app_id,
        broker=settings.broker,
        broker_credentials=faust_broker_credentials(settings),
        store="memory://",
        key_serializer="raw",
        value_serializer="raw",
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=settings.session_timeout_s,
        broker_heartbeat_interval=heartbeat_interval(settings.session_timeout_s),
        web_port=settings.web_port if settings.web_port > 0 else 6066,
        web_bind=settings.web_host,
        web_enabled=settings.web_port > 0,  # MONITOR_WEB_PORT=0 runs without a web server
        processing_guarantee="at_least_once",
    )
    if settings.end_offsets_by_fetch:
        compat.install(app)
    declared = topics.declare(app, settings)
    tables = SessionTables(app, settings.partitions)
    agents.register_detect(app, declared, tables, settings.detect_config(), metrics)
    agents.register_sinks(
        app, declared, maker, settings.sink_batch, settings.sink_within_s, metrics
    )
    if metrics is not None:
        _add_pages(app, metrics)
    return Worker(app, declared, tables)


def _add_pages(app: faust.App, metrics: Metrics) -> None:
    from monitor.metrics import exposition, install_faust_sensor

    install_faust_sensor(app, metrics)

    @app.page("/metrics")
    async def metrics_page(web: Any, request: Any) -> Any:
        body, content_type = exposition(metrics.registry)
        return web.bytes(body, content_type=content_type.split(";")[0])

    del metrics_page


def _check_schema(url: str) -> None:
    """Fail fast on a database without the monitor's schema; an unreachable one only warns
    (the sinks retry, and flags wait in their topic until the database is back)."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import OperationalError

    from monitor.config import mask_url
    from monitor.store.db import make_engine, upgrade

    if url.startswith("sqlite"):
        upgrade(url)  # the embedded default sets itself up
        return
    engine = make_engine(url)
    try:
        has_schema = inspect(engine).has_table("flags")
    except OperationalError as exc:
        log.warning("database %s unreachable at start; writes will retry: %s", mask_url(url), exc)
        return
    finally:
        engine.dispose()
    if not has_schema:
        raise SystemExit(
            f"error: no monitor schema in {mask_url(url)}; run `monitor db upgrade` first"
        )


def run_worker(settings: Settings, loglevel: str = "info") -> None:
    """Run the worker until SIGTERM/SIGINT (``monitor worker``)."""
    import faust

    from monitor.metrics import build_metrics
    from monitor.store.db import make_engine, make_sessionmaker

    _check_schema(settings.db_url)
    maker = make_sessionmaker(make_engine(settings.db_url))
    worker = create_app(settings, maker, build_metrics())
    log.info("starting worker with settings %s", settings.public())
    faust.Worker(worker.app, loglevel=loglevel).execute_from_commandline()
