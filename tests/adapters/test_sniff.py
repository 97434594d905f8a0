"""Format detection from the first lines of each real-world shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from monitor.adapters import sniff

CASES: dict[str, list[dict[str, Any]]] = {
    "claude_code": [{"type": "summary", "summary": "Title", "leafUuid": "x"}],
    "codex": [
        {"timestamp": "2026-02-23T11:54:52.352Z", "type": "session_meta", "payload": {"id": "x"}}
    ],
    "pi": [
        {
            "type": "session",
            "id": "x",
            "timestamp": "2025-12-09T00:53:29.825Z",
            "cwd": "/w",
            "provider": "anthropic",
            "modelId": "m",
        }
    ],
    "otel": [{"resourceSpans": []}],
    "events": [
        {
            "event_id": "e",
            "session_id": "s",
            "turn": 1,
            "ts": "2026-01-01T00:00:00Z",
            "kind": "compaction",
        }
    ],
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_first_decodable_record_decides(fmt: str) -> None:
    lines = [b"\n", b"garbage\n", *(json.dumps(r).encode() + b"\n" for r in CASES[fmt])]
    assert sniff(lines) == fmt


def test_claude_code_message_record() -> None:
    rec = {"parentUuid": None, "sessionId": "s", "type": "user", "uuid": "u"}
    assert sniff([json.dumps(rec).encode()]) == "claude_code"


def test_unknown_shapes_give_none() -> None:
    assert sniff([b'{"a": 1}\n', b"[1, 2]\n", b"not json\n"]) is None
    assert sniff([]) is None
