"""``monitor flags`` and ``monitor sessions`` for on-call: where each flag came from, the call
behind it, and filters by compactor, agent, signal and time; an empty answer says so."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest

from monitor.cli import main
from monitor.events import Compaction, Event, Tool, encode

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


def _event(turn: int, kind: str, sid: str = "s1", **kw: Any) -> Event:
    return Event(f"{sid}-{turn}", sid, turn, T0 + timedelta(minutes=turn), kind, **kw)  # type: ignore[arg-type]


def _session(sid: str = "s1") -> list[Event]:
    read = Tool(name="Read", arguments={"file_path": "/repo/app.py"})
    return [
        _event(1, "user_message", sid, text="Never push to main; open a pull request."),
        _event(2, "tool_call", sid, tool=read),
        _event(3, "compaction", sid, compaction=Compaction(compactor="sum-v1")),
        _event(4, "tool_call", sid, tool=read),
        _event(5, "user_message", sid, text="Again: never push to main, open a pull request."),
    ]


def _write(path: Path, events: list[Event]) -> Path:
    path.write_text("\n".join(encode(e).decode() for e in events) + "\n")
    return path


def test_monitor_flags_shows_the_source_and_the_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "log.jsonl", _session())
    db = f"sqlite:///{tmp_path}/m.db"
    assert main(["replay", str(path), "--db", db]) == 0
    capsys.readouterr()
    assert main(["flags", "--db", db, "--signal", "repeated_tool_call"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("s1  turn 4  repeated_tool_call  original 2  compaction 3")
    assert out[1].strip() == 'Read {"file_path":"/repo/app.py"}'
    assert out[2].strip() == f"at {path.resolve()}:4"
    assert main(["flags", "--db", db, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["flags"]
    assert {r["source"]["line"] for r in rows} == {4, 5}


def test_flags_and_sessions_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = [
        msgspec_replace(e, attrs={"agent": "codex"} if e.turn == 1 else {})
        for e in _session("codex-1")
    ]
    b = [msgspec_replace(e, attrs={"agent": "pi"} if e.turn == 1 else {}) for e in _session("pi-1")]
    b[2] = msgspec_replace(b[2], compaction=Compaction(compactor="sum-v2"))
    path = _write(tmp_path / "log.jsonl", a + b)
    db = f"sqlite:///{tmp_path}/m.db"
    assert main(["replay", str(path), "--db", db]) == 0

    def rows(*args: str) -> list[dict[str, Any]]:
        capsys.readouterr()
        assert main([*args, "--db", db, "--json"]) == 0
        out: dict[str, list[dict[str, Any]]] = json.loads(capsys.readouterr().out)
        return next(iter(out.values()))

    assert {r["session_id"] for r in rows("flags", "--agent", "pi")} == {"pi-1"}
    assert {r["session_id"] for r in rows("flags", "--compactor", "sum-v2")} == {"pi-1"}
    assert {r["signal"] for r in rows("flags", "--signal", "restated_instruction")} == {
        "restated_instruction"
    }
    assert rows("flags", "--since", "2026-12-02") == []
    assert len(rows("flags", "--since", "2026-12-01T09:04:00Z")) == 4  # turns 4 and 5 of each
    assert [r["session_id"] for r in rows("sessions", "--agent", "codex")] == ["codex-1"]
    assert [r["session_id"] for r in rows("sessions", "--compactor", "sum-v2")] == ["pi-1"]
    assert len(rows("sessions", "--signal", "repeated_tool_call")) == 2
    assert rows("sessions", "--since", "2026-12-02") == []
    capsys.readouterr()
    assert main(["flags", "--db", db, "--agent", "nobody"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no flags match (agent=nobody)" in captured.err
    assert main(["sessions", "--db", db, "--compactor", "none"]) == 0
    assert "no sessions match (compactor=none)" in capsys.readouterr().err


def msgspec_replace(event: Event, **changes: Any) -> Event:
    return msgspec.structs.replace(event, **changes)
