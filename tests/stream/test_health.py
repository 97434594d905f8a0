"""``/health`` and ``/ready`` of a real worker subprocess (Tansu broker, Postgres).

Liveness answers as soon as the web server does; readiness waits for a partition assignment and
fails, naming the check, while the database cannot be reached, though the worker stays alive.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from monitor.testing import free_port

from .conftest import Rig

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

#: Longest a test waits for the worker to reach a state (seconds).
WAIT_S = 45.0


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _poll(rig: Rig, url: str, done: Callable[[int, Any], bool]) -> tuple[int, Any]:
    """GET ``url`` until ``done(status, body)`` (connection errors: not up yet), bounded."""
    deadline = time.monotonic() + WAIT_S
    last: tuple[int, Any] | None = None
    while time.monotonic() < deadline:
        assert rig.procs[-1].poll() is None, rig.tail()
        try:
            last = _get(url)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            last = None
        if last is not None and done(*last):
            return last
        time.sleep(0.3)
    pytest.fail(f"{url} never got there; last answer {last}\n{rig.tail()}")


def _start(rig: Rig) -> str:
    port = free_port()
    rig.overrides.update(web_port=str(port), web_host="127.0.0.1")
    rig.start()
    return f"http://127.0.0.1:{port}"


def test_ready_after_assignment(rig: Rig) -> None:
    base = _start(rig)
    assert _poll(rig, f"{base}/health", lambda s, b: s == 200) == (200, {"status": "ok"})
    _, body = _poll(rig, f"{base}/ready", lambda s, b: s == 200)
    checks = body["checks"]
    assert body["status"] == "ready"
    assert checks["partitions"]["partitions"] == list(range(rig.partitions))  # the only worker
    assert checks["broker"] == {"ok": True, "brokers": 1}
    assert checks["database"] == {"ok": True}


@pytest.mark.parametrize("where", ["bogus port", "missing database"])
def test_not_ready_without_database(rig: Rig, where: str) -> None:
    if where == "bogus port":
        rig.db_url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/test"
    else:
        rig.db_url = "postgresql+psycopg://postgres@127.0.0.1:5432/monitor_no_such_database"
    base = _start(rig)
    # Wait until everything but the database is fine, so the 503 is the database's alone.
    status, body = _poll(
        rig,
        f"{base}/ready",
        lambda s, b: b["checks"]["partitions"]["ok"] and b["checks"]["broker"]["ok"],
    )
    assert status == 503
    assert body["status"] == "not ready"
    db = body["checks"]["database"]
    assert db["ok"] is False and "OperationalError" in db["error"]
    assert _get(f"{base}/health") == (200, {"status": "ok"})  # alive all the same
