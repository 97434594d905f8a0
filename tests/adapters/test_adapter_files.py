"""The file shell: directories walked, gzip read transparently, formats sniffed per file."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from monitor.adapters import Problem, read_paths
from monitor.events import Event

PI = [
    {
        "type": "session",
        "id": "pi-1",
        "timestamp": "2025-12-09T00:53:29.825Z",
        "cwd": "/w",
        "provider": "a",
        "modelId": "m",
    },
    {
        "type": "message",
        "timestamp": "2025-12-09T00:53:30Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    },
]
CLAUDE = [
    {
        "sessionId": "cc-1",
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "timestamp": "2026-02-12T16:02:25Z",
        "message": {"role": "user", "content": "hello"},
    },
]


def write(path: Path, records: list[Any], gz: bool = False) -> None:
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if gz else data)


def test_tree_walk_mixes_formats_and_gzip(tmp_path: Path) -> None:
    write(tmp_path / "projects" / "p" / "cc-1.jsonl", CLAUDE)
    write(tmp_path / "pi" / "s.jsonl.gz", PI, gz=True)
    (tmp_path / "projects" / "notes.txt").write_text("not a log")
    items = list(read_paths([str(tmp_path)]))
    assert all(isinstance(i, Event) for i in items)
    assert sorted((i.session_id, i.text) for i in items if isinstance(i, Event)) == [
        ("cc-1", "hello"),
        ("pi-1", "hi"),
    ]


def test_glob_and_forced_format(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", PI)
    items = list(read_paths([str(tmp_path / "*.jsonl")], fmt="pi"))
    assert [i.kind for i in items if isinstance(i, Event)] == ["user_message"]
    forced = list(read_paths([str(tmp_path / "a.jsonl")], fmt="codex"))
    assert forced and all(isinstance(i, Problem) for i in forced)


def test_missing_unknown_and_corrupt_files_are_problems(tmp_path: Path) -> None:
    (tmp_path / "odd.jsonl").write_bytes(b'{"a": 1}\n')
    (tmp_path / "bad.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    items = list(
        read_paths([str(tmp_path), str(tmp_path / "missing.jsonl"), str(tmp_path / "*.nope")])
    )
    reasons = sorted((Path(p.source).name, p.reason) for p in items if isinstance(p, Problem))
    assert reasons == [
        ("*.nope", "not_found"),
        ("bad.jsonl.gz", "cut_short"),
        ("missing.jsonl", "not_found"),
        ("odd.jsonl", "unknown_format"),
    ]


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"".join(json.dumps(r).encode() + b"\n" for r in CLAUDE)
    fake = io.TextIOWrapper(io.BytesIO(data))
    monkeypatch.setattr(sys, "stdin", fake)
    items = list(read_paths(["-"]))
    assert [(i.session_id, i.kind) for i in items if isinstance(i, Event)] == [
        ("cc-1", "user_message")
    ]


def test_unknown_format_name_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        list(read_paths([], fmt="aider"))
