"""The Postgres sinks in a process of their own, beside the worker's detect agent.

In one process the sinks competed with detection for the interpreter: Faust's per-record cost
for every flag record (there are more flag records than input records), psycopg's client work,
and the write threads holding the interpreter lock. On batch records the worker's process spent
34-37 us of cpu per event with them, 17-19 without them, while they take about 10 in a process
of their own, on the other cpu (``bench/stream_throughput.py``, ``bench/README.md``).

The child is a second Faust app, ``<app_id>-sinks`` (a consumer group of its own, so it never
takes part in the detect agent's partition assignment), running only ``agents.register_sinks``:
a batch is still acknowledged only after its transaction commits, so nothing about the order of
writes changes. It dies with the worker (``PR_SET_PDEATHSIG`` where Linux offers it, and a check
of its parent every second elsewhere); the worker starts it again if it exits alone. Its sink
counters and its consumers' lag, commit and rebalance figures reach the worker's ``/metrics``
through a pipe.

SQLite stays in one process: the sinks would be a second writer it serialises with locks, and an
in-memory database is not shared across processes at all.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any, Final

from prometheus_client import CollectorRegistry

from monitor.config import Settings
from monitor.metrics import Metrics

log = logging.getLogger(__name__)

#: Wait before starting a sink process again after it exited on its own (seconds).
RESTART_DELAY_S: Final = 1.0
#: How long a stopping worker waits for its sink process before killing it (seconds).
STOP_TIMEOUT_S: Final = 10.0
#: Metric calls the child may forward, by name (anything else is ignored).
FORWARDED: Final = frozenset(
    {
        "observe_sink_write",
        "observe_sink_error",
        "observe_sink_retry",
        "set_consumer_lag",
        "observe_rebalance",
        "observe_commit",
        "clear_consumer_lag",
    }
)
_PR_SET_PDEATHSIG: Final = 1


def wanted(settings: Settings) -> bool:
    """Whether the worker runs its sinks in a process of their own (see the module docstring)."""
    return settings.sink_process and not settings.db_url.startswith("sqlite")


def sinks_app_id(settings: Settings) -> str:
    return f"{settings.app_id}-sinks"


class ForwardedMetrics(Metrics):
    """The child's metrics: the calls the sinks and the Faust monitor make go to the parent."""

    def __init__(self, conn: Connection) -> None:
        super().__init__(CollectorRegistry())  # the series that stay here are never served
        self._conn = conn
        self._lock = threading.Lock()

    def _send(self, name: str, *args: Any) -> None:
        with self._lock, contextlib.suppress(OSError):  # a parent gone: the child dies soon
            self._conn.send((name, args))

    def observe_sink_write(self, flags_written: int) -> None:
        self._send("observe_sink_write", flags_written)

    def observe_sink_error(self) -> None:
        self._send("observe_sink_error")

    def observe_sink_retry(self) -> None:
        self._send("observe_sink_retry")

    def set_consumer_lag(self, topic: str, partition: int, messages: int) -> None:
        self._send("set_consumer_lag", topic, partition, messages)

    def clear_consumer_lag(self) -> None:
        self._send("clear_consumer_lag")

    def observe_rebalance(self) -> None:
        self._send("observe_rebalance")

    def observe_commit(self, seconds: float) -> None:
        self._send("observe_commit", seconds)


class Forwarder:
    """Applies a child's forwarded calls to the worker's ``Metrics``. Lag series the child set
    are its own to clear: a rebalance of the sinks' group leaves the input topic's alone."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._lag_series: set[tuple[str, int]] = set()

    def apply(self, name: str, args: tuple[Any, ...]) -> None:
        if name not in FORWARDED:
            return
        if name == "clear_consumer_lag":
            for topic, partition in self._lag_series:
                self.metrics.remove_consumer_lag(topic, partition)
            self._lag_series.clear()
            return
        if name == "set_consumer_lag":
            self._lag_series.add((args[0], args[1]))
        getattr(self.metrics, name)(*args)


def _die_with(parent: int) -> None:
    """End this process when ``parent`` ends, even by SIGKILL (which it cannot pass on)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:
        while True:
            if os.getppid() != parent:  # covers the race before prctl and other platforms
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(1.0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def run_sinks(settings: Settings, conn: Connection, loglevel: str, parent: int) -> None:
    """The child process: the sinks' Faust app until it is stopped (SIGTERM) or its parent
    ends."""
    _die_with(parent)
    import faust

    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.stream.app import create_app

    class SinkWorker(faust.Worker):
        """Faust's worker under its own name, so its log lines ("[^SinkWorker]: Ready") are
        told apart from the detect worker's in the log the two share."""

    sys.argv = sys.argv[:1]  # Faust's worker reads the command line
    maker = make_sessionmaker(make_engine(settings.db_url))
    worker = create_app(settings, maker, ForwardedMetrics(conn), role="sinks")
    SinkWorker(worker.app, loglevel=loglevel).execute_from_commandline()


class SinkProcess:
    """Starts the child, forwards its metrics, starts it again when it exits on its own, and
    stops it when the worker stops. One thread does all of it, so the child's parent-death
    signal (tied to the thread that started it) fires only when that thread or the worker ends.
    """

    def __init__(self, settings: Settings, metrics: Metrics | None, loglevel: str) -> None:
        self.settings = settings
        self.forwarder = Forwarder(metrics) if metrics is not None else None
        self.loglevel = loglevel
        self._stopping = threading.Event()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._thread = threading.Thread(target=self._supervise, name="sink-process", daemon=True)
        self.starts = 0

    def start(self) -> None:
        self._thread.start()

    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def _supervise(self) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads
        while not self._stopping.is_set():
            ours, theirs = context.Pipe(duplex=False)
            process = context.Process(
                target=run_sinks,
                args=(self.settings, theirs, self.loglevel, os.getpid()),
                name="monitor-sinks",
            )
            process.start()
            theirs.close()
            self._process = process
            self.starts += 1
            log.info("sink process %d started (%s)", process.pid, sinks_app_id(self.settings))
            self._forward(ours)
            process.join()
            if self._stopping.is_set():
                break
            log.error(
                "sink process %d exited with %s; starting it again", process.pid, process.exitcode
            )
            self._stopping.wait(RESTART_DELAY_S)

    def _forward(self, conn: Connection) -> None:
        """Apply the child's metric calls until it closes its end (it exited)."""
        with conn:
            while True:
                try:
                    name, args = conn.recv()
                except (EOFError, OSError):
                    return
                if self.forwarder is not None:
                    try:
                        self.forwarder.apply(name, args)
                    except Exception:  # a bad message must not stop the forwarding
                        log.exception("could not apply the sink process's %s", name)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Stop the child (SIGTERM: its sinks stop between batches) and wait for it."""
        self._stopping.set()
        process = self._process
        if process is not None and process.is_alive():
            process.terminate()
            process.join(timeout_s)
            if process.is_alive():
                process.kill()
                process.join(timeout_s)
        self._thread.join(timeout_s)
