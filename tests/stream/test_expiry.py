"""The worker's expiry sweep against a real broker (Tansu) and Postgres.

Three kinds of session go through one worker that sweeps every second and holds events back for
reordering (``reorder_turns``): sessions that ended, sessions idle for longer than
``idle_expiry_s`` (their last event is months old) whose repeat is still held back, and live
sessions. The ended and idle ones must leave the table through its changelog (a tombstone per
part), the idle ones' held-back repeats must be flushed into flags first, and the live ones must
stay.
"""

from __future__ import annotations

import re
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kafka import KafkaConsumer

from monitor.events import Compaction, Event, Tool
from monitor.stream.produce import produce_events
from monitor.stream.tables import state_key
from monitor.testing import free_port

from .conftest import Rig, expected

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

SESSIONS = 8  # of each kind
WAIT_S = 45.0


def _session(sid: str, t0: datetime, kinds: list[str]) -> list[Event]:
    call = Tool(name="Read", arguments={"path": f"src/{sid}.py"})
    out = []
    for turn, kind in enumerate(kinds):
        kw: dict[str, Any] = {}
        if kind == "call":
            kw["tool"] = call
        elif kind == "other_call":
            kw["tool"] = Tool(name="Grep", arguments={"pattern": sid})
        elif kind == "compaction":
            kw["compaction"] = Compaction()
        real = {"call": "tool_call", "other_call": "tool_call"}.get(kind, kind)
        out.append(Event(f"{sid}-{turn}", sid, turn, t0 + timedelta(seconds=turn), real, **kw))  # type: ignore[arg-type]
    return out


def _events() -> tuple[list[Event], dict[str, list[str]]]:
    now = datetime.now(UTC).replace(microsecond=0)
    months_ago = now - timedelta(days=90)
    kinds = {
        # A flagged repeat, then the end: dropped because the session says it ended.
        "ended": ["call", "compaction", "call", "session_end"],
        # The repeat waits for reordering; only the sweep's flush releases it.
        "idle": ["call", "compaction", "call"],
        # Recent and open: kept.
        "live": ["call", "other_call"],
    }
    events: list[Event] = []
    ids: dict[str, list[str]] = {k: [] for k in kinds}
    for kind, steps in kinds.items():
        for i in range(SESSIONS):
            sid = f"{kind}-{i:02d}"
            ids[kind].append(sid)
            events += _session(sid, months_ago if kind == "idle" else now, steps)
    return events, ids


def _final_changelog(consumer: KafkaConsumer, held: dict[bytes, bytes | None]) -> None:
    """Fold newly read changelog records into ``held`` (key -> latest value; None: deleted)."""
    for batch in consumer.poll(timeout_ms=300).values():
        for m in batch:
            held[m.key] = m.value


def _active_sessions(port: int) -> float | None:
    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(r"^compaction_monitor_active_sessions (\S+)$", page, re.MULTILINE)
    return float(m.group(1)) if m else None


def test_ended_and_idle_sessions_leave_the_table(rig: Rig) -> None:
    port = free_port()
    rig.overrides.update(
        reorder_turns="3", expiry_interval_s="1", web_port=str(port), web_host="127.0.0.1"
    )
    settings = rig.settings
    events, ids = _events()
    want_flags, want_sessions = expected(events, settings)
    flagged = {f[0] for f in want_flags}
    assert flagged == set(ids["ended"]) | set(ids["idle"])  # the idle ones need the flush

    rig.start()
    rig.wait_ready(0)
    produce_events(events, settings, batch=True)  # one record per session
    rig.wait_for(want_flags, want_sessions)

    changelog = f"{settings.app_id}-session-state-changelog"
    consumer = KafkaConsumer(
        changelog,
        bootstrap_servers=rig.bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    held: dict[bytes, bytes | None] = {}
    gone = [state_key(sid, "meta") for sid in ids["ended"] + ids["idle"]]
    kept = [state_key(sid, "meta") for sid in ids["live"]]
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            _final_changelog(consumer, held)
            if all(k in held and held[k] is None for k in gone):
                break
        else:
            pytest.fail(f"not all expired sessions were tombstoned\n{rig.tail()}")
    finally:
        consumer.close()
    # Every part an expired session ever wrote is deleted; live sessions keep theirs.
    for key, value in held.items():
        sid = key.split(b"\0")[0].decode()
        if sid in ids["live"]:
            assert value is not None, key
        else:
            assert value is None, key
    assert all(held.get(k) is not None for k in kept)
    deadline = time.monotonic() + WAIT_S
    while _active_sessions(port) != len(ids["live"]):
        assert time.monotonic() < deadline, (_active_sessions(port), rig.tail())
        time.sleep(0.5)
    # Nothing was lost or added on the way out.
    assert rig.flags() == want_flags and rig.sessions() == want_sessions
