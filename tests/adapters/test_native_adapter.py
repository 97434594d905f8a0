"""Our own JSONL event format: validation is ``monitor.events.decode``'s."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.adapters import Problem, native
from monitor.events import Event, Tool, encode


def test_events_round_trip_and_bad_lines_are_problems() -> None:
    event = Event(
        event_id="e1",
        session_id="s1",
        turn=3,
        ts=datetime(2026, 1, 1, tzinfo=UTC),
        kind="tool_call",
        tool=Tool(name="Read", arguments={"file_path": "/a"}),
    )
    lines = [encode(event) + b"\n", b"\n", b'{"event_id": "e2"}\n', b"nope\n", encode(event)[:20]]
    items = list(native.parse(lines, "e.jsonl"))
    assert items[0] == event
    assert [(p.line, p.reason) for p in items[1:] if isinstance(p, Problem)] == [
        (3, "schema"),
        (4, "not_json"),
        (5, "truncated_last_line"),
    ]
