"""Helpers for the stream tests: run workers as subprocesses, read Postgres, wait with bounds."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from monitor.config import Settings, load_settings
from monitor.flags import Flag
from monitor.replay import Replay
from monitor.store.db import normalise_url
from monitor.testing import start_worker, stop_pid, worker_env

#: Longest a test waits for the worker to catch up (seconds).
CATCH_UP_S = 60.0


def _psycopg_dsn(url: str) -> str:
    return normalise_url(url).replace("postgresql+psycopg://", "postgresql://")


@dataclass
class Rig:
    """One test's worker(s) on the shared broker, with its own topics, group and clean tables."""

    bootstrap: str
    db_url: str
    name: str
    tmp: Path
    partitions: int = 4
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    #: Extra settings for the workers (``Settings`` field name -> value).
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        return worker_env(
            self.bootstrap, self.db_url, self.name, partitions=self.partitions, **self.overrides
        )

    @property
    def settings(self) -> Settings:
        return load_settings(self.env)

    def log_path(self, index: int) -> Path:
        return self.tmp / f"worker-{index}.log"

    def start(self) -> subprocess.Popen[bytes]:
        proc = start_worker(self.env, self.log_path(len(self.procs)), cwd=self.tmp)
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            stop_pid(proc, timeout_s=15.0)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(_psycopg_dsn(self.db_url)) as conn:
            return list(conn.execute(sql).fetchall())

    def execute(self, sql: str) -> None:
        with psycopg.connect(_psycopg_dsn(self.db_url)) as conn:
            conn.execute(sql)

    def flags(self) -> list[tuple[Any, ...]]:
        return sorted(
            self.query(
                "SELECT session_id, signal, turn, key, original_turn, compaction_turn, event_id"
                " FROM flags"
            )
        )

    def sessions(self) -> list[tuple[Any, ...]]:
        return sorted(
            self.query(
                "SELECT session_id, turns, events, tool_calls, user_messages, compactions,"
                " repeat_flags, restate_flags, first_flagged_at, last_flagged_at FROM sessions"
            )
        )

    def wait_for(self, want_flags: list[tuple[Any, ...]], want_sessions: list[tuple[Any, ...]],
                 timeout_s: float = CATCH_UP_S) -> None:  # fmt: skip
        """Wait until the store holds exactly what replay produced (fails with a diff if not)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for proc in self.procs:
                assert proc.poll() is None or proc.returncode in (0, -9), self.tail()
            if self.flags() == want_flags and self.sessions() == want_sessions:
                return
            time.sleep(0.5)
        got, got_sessions = self.flags(), self.sessions()
        missing = sorted(set(want_flags) - set(got))[:5]
        extra = sorted(set(got) - set(want_flags))[:5]
        s_missing = sorted(set(want_sessions) - set(got_sessions))[:3]
        s_extra = sorted(set(got_sessions) - set(want_sessions))[:3]
        pytest.fail(
            f"store != replay after {timeout_s}s: {len(got)} flags vs {len(want_flags)};"
            f" missing {missing}; extra {extra}; sessions {len(got_sessions)} vs"
            f" {len(want_sessions)}: missing {s_missing}; extra {s_extra}\n{self.tail()}"
        )

    def wait_ready(self, index: int, timeout_s: float = 60.0) -> None:
        """Wait until worker ``index`` has joined its group and recovered its tables."""
        deadline = time.monotonic() + timeout_s
        while "[^Worker]: Ready" not in self.log_path(index).read_text(errors="replace"):
            assert time.monotonic() < deadline, self.tail()
            time.sleep(0.2)

    def tail(self, lines: int = 30) -> str:
        out = []
        for i in range(len(self.procs)):
            text = self.log_path(i).read_text(errors="replace").splitlines()
            out.append(f"--- worker {i} ---\n" + "\n".join(text[-lines:]))
        return "\n".join(out)

    def assigned_input_partitions(self, index: int) -> set[int]:
        """The input partitions worker ``index`` held after its latest rebalance (from its log,
        which its sink process shares: only the detect group's assignments count)."""
        text = self.log_path(index).read_text(errors="replace")
        group = re.escape(self.settings.app_id)
        blocks = re.findall(
            rf"Setting newly assigned partitions((?:(?!Setting newly).)*?) for group {group}\s*$",
            text,
            re.S | re.M,
        )
        if not blocks:
            return set()
        topic = re.escape(self.settings.input_topic)
        m = re.search(rf"\|\s*{topic}\s*\|\s*\{{([^}}]*)\}}", blocks[-1])
        if not m:
            return set()
        out: set[int] = set()
        for part in m.group(1).split(","):
            lo, _, hi = part.strip().partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
        return out


def expected(
    events: Any, settings: Settings
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The store rows ``monitor replay`` writes for ``events``, shaped as ``Rig.flags`` /
    ``Rig.sessions`` read them."""
    raised: list[Flag] = []
    replay = Replay(cfg=settings.detect_config(), on_flags=raised.extend).run(events)
    flags = sorted(
        (f.session_id, f.signal, f.turn, f.key, f.original_turn, f.compaction_turn, f.event_id)
        for f in raised
    )
    sessions = []
    for m in replay.flagged_metas():
        first, last = replay.flag_times.get(m.session_id, (None, None))
        sessions.append(
            (m.session_id, m.max_turn + 1, m.events, m.tool_calls, m.user_messages,
             m.compactions, m.repeat_flags, m.restate_flags, first, last)
        )  # fmt: skip
    return flags, sorted(sessions)


@pytest.fixture
def rig(
    tansu_broker: str, pg_schema_url: str, unique_name: Callable[[str], str], tmp_path: Path
) -> Iterator[Rig]:
    r = Rig(tansu_broker, pg_schema_url, unique_name("t"), tmp_path)
    r.execute("TRUNCATE flags, sessions")
    try:
        yield r
    finally:
        r.stop_all()
