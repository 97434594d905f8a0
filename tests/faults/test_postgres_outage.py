"""Postgres really stopped for about 20 s mid-stream (the local cluster, via ``pg_ctlcluster``),
then started again: the sinks retry, the flags wait in their topic, and the store ends equal to an
offline replay. Needs root (or the postgres user) on a machine whose cluster the tests may stop;
it is skipped where ``pg_ctlcluster`` or the cluster is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from monitor.stream.produce import produce_events
from monitor.testing import generate_events

from .conftest import Rig, expected, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

OUTAGE_S = 20.0


def _cluster() -> tuple[str, str] | None:
    """(version, name) of the local cluster listening on 5432, if ``pg_ctlcluster`` can drive it."""
    root = Path("/etc/postgresql")
    if shutil.which("pg_ctlcluster") is None or not root.is_dir() or os.geteuid() != 0:
        return None
    for conf in sorted(root.glob("*/*/postgresql.conf")):
        text = conf.read_text(errors="replace")
        if "port = 5432" in text or "port" not in text:
            return conf.parent.parent.name, conf.parent.name
    return None


def _ctl(cluster: tuple[str, str], action: str) -> None:
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", *cluster, action],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip


def _ready(timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", "5432"],
                         capture_output=True).returncode != 0:  # fmt: skip
        assert time.monotonic() < deadline, "PostgreSQL did not come back"
        time.sleep(0.5)


def test_postgres_stopped_mid_stream_loses_nothing(rig: Rig) -> None:
    cluster = _cluster()
    if cluster is None:
        pytest.skip("needs root and pg_ctlcluster for the local cluster on port 5432")
    events = generate_events(300, seed=51)
    want_flags, want_sessions = expected(events, rig.settings)
    half = len(events) // 2
    rig.start()
    rig.wait_ready(0)
    produce_events(events[:half], rig.settings, batch=True)
    wait_until(lambda: len(rig.flags()) > 0, rig)
    stopped_at = time.monotonic()
    try:
        _ctl(cluster, "stop")
        # The rest of the stream arrives while the database is down.
        produce_events(events[half:], rig.settings, batch=True)
        log = rig.log_path(0)
        while "write failed" not in log.read_text(errors="replace"):
            assert time.monotonic() - stopped_at < 60, rig.tail()
            time.sleep(0.5)
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped_at)))
    finally:
        _ctl(cluster, "start")
        _ready()
    outage = time.monotonic() - stopped_at
    assert outage >= OUTAGE_S
    failed = rig.log_path(0).read_text(errors="replace").count("write failed")
    rig.wait_for(want_flags, want_sessions, timeout_s=90)
    assert rig.procs[0].poll() is None, "the worker must ride out the outage"
    print(f"\n{len(events)} events, {len(want_flags)} flags, outage {outage:.1f}s,"
          f" {failed} failed writes retried")  # fmt: skip
