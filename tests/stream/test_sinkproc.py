"""The sink process (``monitor.stream.sinkproc``): forwarded metrics, and against a real broker
and Postgres, a sink process that dies alone comes back, and one whose worker is killed goes."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from monitor.config import load_settings
from monitor.metrics import PREFIX, build_metrics
from monitor.stream import sinkproc
from monitor.stream.produce import produce_events
from monitor.testing import free_port, generate_events

from .conftest import Rig, expected

#: Longest a test waits for a process to come or go (seconds).
WAIT_S = 30.0


def _value(registry: object, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(PREFIX + name, labels)  # type: ignore[attr-defined]


def test_forwarded_calls_reach_the_workers_metrics_and_only_known_ones() -> None:
    ours, theirs = multiprocessing.Pipe(duplex=False)
    child = sinkproc.ForwardedMetrics(theirs)
    child.observe_sink_write(7)
    child.observe_sink_retry()
    child.set_consumer_lag("flags", 2, 40)
    metrics = build_metrics()
    forwarder = sinkproc.Forwarder(metrics)
    while ours.poll(0.2):
        forwarder.apply(*ours.recv())
    forwarder.apply("set_active_sessions", (10**6,))  # not the sink process's to set
    registry = metrics.registry
    assert _value(registry, "sink_writes_total") == 1
    assert _value(registry, "sink_flags_written_total") == 7
    assert _value(registry, "sink_retries_total") == 1
    assert _value(registry, "consumer_lag_messages", topic="flags", partition="2") == 40
    assert _value(registry, "active_sessions") == 0


def test_a_sink_rebalance_clears_its_own_lag_series_only() -> None:
    metrics = build_metrics()
    metrics.set_consumer_lag("events", 0, 5)  # the detect agent's input
    forwarder = sinkproc.Forwarder(metrics)
    forwarder.apply("set_consumer_lag", ("flags", 1, 3))
    forwarder.apply("clear_consumer_lag", ())
    registry = metrics.registry
    assert _value(registry, "consumer_lag_messages", topic="flags", partition="1") is None
    assert _value(registry, "consumer_lag_messages", topic="events", partition="0") == 5


def test_sqlite_keeps_the_sinks_in_the_worker() -> None:
    assert not sinkproc.wanted(load_settings({"MONITOR_DB_URL": "sqlite:///x.db"}))
    assert not sinkproc.wanted(
        load_settings({"MONITOR_DB_URL": "postgresql://h/db", "MONITOR_SINK_PROCESS": "false"})
    )
    assert sinkproc.wanted(load_settings({"MONITOR_DB_URL": "postgresql://h/db"}))


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _sink_process(pid: int) -> int | None:
    """The worker's sink process (multiprocessing's resource tracker is a child too)."""
    for child in _children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            return child
    return None


def _wait(what: str, done: object, rig: Rig) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what}\n{rig.tail()}"
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.kafka
@pytest.mark.postgres
@pytest.mark.slow
def test_a_killed_sink_process_comes_back_and_goes_with_its_worker(rig: Rig) -> None:
    port = free_port()
    rig.overrides.update(web_port=str(port), web_host="127.0.0.1")
    events = generate_events(80, seed=21)
    half = len(events) // 2
    worker = rig.start()
    _wait("no sink process", lambda: _sink_process(worker.pid) is not None, rig)
    first = _sink_process(worker.pid)
    assert first is not None
    produce_events(events[:half], rig.settings, batch=True)
    rig.wait_for(*expected(events[:half], rig.settings))
    os.kill(first, signal.SIGKILL)
    _wait("the sink process was not started again",
          lambda: _sink_process(worker.pid) not in (None, first), rig)  # fmt: skip
    produce_events(events[half:], rig.settings, batch=True)
    want_flags, want_sessions = expected(events, rig.settings)
    rig.wait_for(want_flags, want_sessions)
    # Its writes show on the worker's own /metrics page.
    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    written = re.search(rf"^{PREFIX}sink_flags_written_total (\S+)$", page, re.MULTILINE)
    assert written is not None and float(written.group(1)) >= 1
    second = _sink_process(worker.pid)
    assert second is not None
    os.kill(worker.pid, signal.SIGKILL)  # the worker cannot pass this on: the kernel does
    _wait("the sink process outlived its worker", lambda: not _alive(second), rig)
