"""Every adapter reports the line each event was read from: the record at that line is the
event's own (checked on the bundled examples and the real transcripts, by what each format
carries to name an event)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from monitor.adapters import read_file, read_file_located, read_located
from monitor.adapters.base import Problem
from monitor.events import Event

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
REAL = [SHARED / "real_logs", SHARED / "real_logs_more"]


def _records(path: Path) -> list[bytes]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return list(fh)


def _names_event(event: Event, record: dict[str, Any], fmt: str) -> bool:
    """Whether ``record`` is the one ``event`` was made from."""
    if fmt == "events":
        return record.get("event_id") == event.event_id
    if fmt == "claude_code":
        uuid = record.get("uuid")
        return isinstance(uuid, str) and event.event_id.startswith(uuid)
    if fmt == "codex":
        if event.event_id.endswith((":call", ":result")):
            call_id = event.event_id.split(":")[-2]
            return call_id in json.dumps(record)
        return True  # line-based ids are checked by ``:L<line>`` below
    if fmt == "pi":
        entry = record.get("id")
        return not isinstance(entry, str) or entry in event.event_id
    return True


def _check(path: Path) -> int:
    lines = _records(path)
    located = list(read_file_located(str(path)))
    assert [item for _, item in located] == list(read_file(str(path)))
    checked = 0
    last = 0
    fmt = None
    for line, item in located:
        if isinstance(item, Problem):
            assert line == item.line
            continue
        assert 1 <= line <= len(lines), (path.name, line)
        assert line >= last, "lines go forward"
        last = line
        record = json.loads(lines[line - 1])
        fmt = fmt or _format_of(record)
        if ":L" in item.event_id:
            assert item.event_id.rsplit(":L", 1)[1].split(":")[0] == str(line)
        assert _names_event(item, record, fmt), (path.name, line, item.event_id)
        checked += 1
    return checked


def _format_of(record: dict[str, Any]) -> str:
    from monitor.adapters.sniff import classify

    return classify(record) or "unknown"


def test_examples_report_their_lines() -> None:
    assert _check(ROOT / "examples" / "sessions.jsonl.gz") > 100_000


def test_real_transcripts_report_their_lines() -> None:
    files = [p for root in REAL if root.is_dir() for p in sorted(root.rglob("*.jsonl"))]
    if not files:
        pytest.skip("no real transcripts in ../shared")
    checked = sum(_check(p) for p in files)
    assert checked > 5000


def test_a_claude_code_compaction_keeps_its_boundary_line(tmp_path: Path) -> None:
    base = {"sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "version": "2.1.7"}
    records = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "Hi."}},
        {**base, "type": "system", "subtype": "compact_boundary", "uuid": "b1"},
        {
            **base,
            "type": "user",
            "uuid": "u2",
            "isCompactSummary": True,
            "message": {"role": "user", "content": "Summary."},
        },
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    got = [(line, item.kind, item.text) for line, item in read_file_located(str(path))
           if isinstance(item, Event)]  # fmt: skip
    assert got == [(1, "user_message", "Hi."), (2, "compaction", "Summary.")]


def test_read_located_names_absolute_files_and_stdin(tmp_path: Path) -> None:
    from monitor.adapters import expand

    path = tmp_path / "a.jsonl"
    event = {"event_id": "e", "session_id": "s", "turn": 0, "ts": "2026-12-01T00:00:00Z",
             "kind": "session_end"}  # fmt: skip
    path.write_text("\n" + json.dumps(event) + "\n")
    [(file, line, item)] = list(read_located(expand([str(path)])))
    assert (file, line) == (str(path.resolve()), 2) and isinstance(item, Event)
