"""pi adapter on lines shaped like FORMATS.md section 3."""

from __future__ import annotations

import json
from typing import Any

from monitor.adapters import Problem, pi
from monitor.events import Event

SID = "ffae836b-9420-4060-ac13-7745215f90ff"
SESSION = {
    "type": "session",
    "id": SID,
    "timestamp": "2025-12-09T00:53:29.825Z",
    "cwd": "/w",
    "provider": "anthropic",
    "modelId": "claude-opus-4-5",
}


def msg(role: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": "2025-12-08T22:41:05.306Z",
        "message": {"role": role, **fields},
    }


def read_call(call_id: str, path: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": path}}


def run(*records: dict[str, Any]) -> list[Event | Problem]:
    return list(pi.parse([json.dumps(r).encode() + b"\n" for r in records], "pi.jsonl"))


def events(items: list[Event | Problem]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def test_turns_calls_results_and_compaction() -> None:
    out = events(
        run(
            SESSION,
            msg("user", content=[{"type": "text", "text": "read main.ts"}]),
            msg(
                "assistant",
                content=[read_call("t1", "/a"), read_call("t2", "/b")],
                model="claude-opus-4-5",
            ),
            msg(
                "toolResult",
                toolCallId="t1",
                toolName="read",
                content=[{"type": "text", "text": "x"}],
                isError=False,
            ),
            msg("toolResult", toolCallId="t2", toolName="read", content=[], isError=True),
            {
                "type": "compaction",
                "timestamp": "2025-12-08T23:22:54.411Z",
                "summary": "# Checkpoint",
                "firstKeptEntryIndex": 3,
                "tokensBefore": 175004,
            },
            msg("assistant", content=[], stopReason="aborted"),
            msg("assistant", content=[{"type": "text", "text": "done"}]),
        )
    )
    assert [(e.kind, e.turn) for e in out] == [
        ("user_message", 1),
        ("tool_call", 2),
        ("tool_call", 2),
        ("tool_result", 2),
        ("tool_result", 2),
        ("compaction", 3),
        ("assistant_message", 5),  # the aborted, empty step 4 still counts as a step
    ]
    assert out[1].tool is not None and out[1].tool.arguments == {"path": "/a"}
    assert out[4].tool is not None and out[4].tool.is_error is True
    comp = out[5]
    assert comp.compaction is not None and comp.compaction.tokens_before == 175004
    assert comp.text == "# Checkpoint"
    assert {e.session_id for e in out} == {SID}


def test_user_bash_and_settings_records_are_not_events() -> None:
    items = run(
        SESSION,
        {
            "type": "model_change",
            "timestamp": "2025-12-09T00:08:20.826Z",
            "provider": "anthropic",
            "modelId": "claude-sonnet-4-5",
        },
        msg("bashExecution", command="ls", output="x", exitCode=0),
        msg("user", content=[{"type": "text", "text": "go"}]),
    )
    out = events(items)
    assert [e.kind for e in out] == ["user_message"]
    assert out[0].attrs["model"] == "claude-sonnet-4-5"
    assert not [i for i in items if isinstance(i, Problem)]


def test_unknown_records_are_skipped() -> None:
    items = run(
        SESSION,
        {"type": "branch_summary", "timestamp": "2025-12-09T00:08:20.826Z"},
        msg("robot", content=[]),
    )
    assert [(p.reason, p.severity) for p in items if isinstance(p, Problem)] == [
        ("unknown_record:branch_summary", "skipped"),
        ("unknown_record:message/robot", "skipped"),
    ]


def test_newer_entry_ids_make_event_ids() -> None:
    out = events(run(SESSION, {**msg("user", content="hi"), "id": "a1b2c3d4"}))
    assert out[0].event_id == f"{SID}:a1b2c3d4"
