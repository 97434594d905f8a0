"""Fault tests reuse the stream tests' rig: worker subprocesses on the session's Tansu broker,
a migrated Postgres database per module, and ``expected`` (the rows ``monitor replay`` writes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

from ..stream.conftest import CATCH_UP_S, Rig, expected, rig

__all__ = ["CATCH_UP_S", "Rig", "expected", "kill", "rig", "wait_until"]


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL a worker by its PID and reap it: no shutdown code runs."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def wait_until(check: Callable[[], bool], rig: Rig, timeout_s: float = CATCH_UP_S) -> None:
    """Poll ``check`` until it holds; fail with the workers' logs if it never does."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, rig.tail()
        time.sleep(0.25)
