"""Codex rollout adapter on lines shaped like FORMATS.md section 2 (no real rollout is saved)."""

from __future__ import annotations

import json
from typing import Any

from monitor.adapters import Problem, codex
from monitor.events import Event

SID = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"


def line(ts: str, rtype: str, payload: dict[str, Any]) -> bytes:
    return (
        json.dumps(
            {"timestamp": f"2026-02-23T11:{ts}Z", "type": rtype, "payload": payload}
        ).encode()
        + b"\n"
    )


def call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"type": "function_call", "name": name, "arguments": args, "call_id": call_id}


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "done"}


META = line(
    "54:52.352",
    "session_meta",
    {"id": SID, "cwd": "/repo", "originator": "Codex Desktop", "cli_version": "0.104.0-alpha.1"},
)
CONTEXT = line(
    "54:52.355", "turn_context", {"turn_id": "t1", "cwd": "/repo", "model": "gpt-5.3-codex"}
)
STARTED = line("54:52.353", "event_msg", {"type": "task_started", "turn_id": "t1"})
USER = line(
    "54:52.354", "event_msg", {"type": "user_message", "message": "fix the tests", "images": []}
)
USER_ITEM = line(
    "54:52.354",
    "response_item",
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>"}],
    },
)
RG = {"cmd": "rg -n foo src", "workdir": "/repo", "yield_time_ms": 1000}


def run(
    *lines: bytes, source: str = f"rollout-2026-02-23T11-54-34-{SID}.jsonl"
) -> list[Event | Problem]:
    return list(codex.parse(list(lines), source))


def events(items: list[Event | Problem]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def test_session_user_text_calls_and_steps() -> None:
    out = events(
        run(
            META,
            STARTED,
            USER,
            USER_ITEM,
            CONTEXT,
            line("54:55.000", "response_item", {"type": "reasoning", "summary": []}),
            line("54:58.901", "response_item", call("call_A", "exec_command", RG)),
            line("54:58.950", "response_item", call("call_B", "exec_command", {"cmd": "ls"})),
            line("54:59.002", "response_item", output("call_A")),
            line("54:59.003", "response_item", output("call_B")),
            line(
                "55:10.000",
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Fixed."}],
                },
            ),
            line("55:10.100", "event_msg", {"type": "agent_message", "message": "Fixed."}),
        )
    )
    assert {e.session_id for e in out} == {SID}
    # The environment block Codex writes into the user role is kept, marked as the harness's.
    injected = [e for e in out if e.origin == "harness"]
    assert [(e.kind, e.text) for e in injected] == [("user_message", "<environment_context>")]
    out = [e for e in out if e.origin is None]
    assert [(e.kind, e.turn) for e in out] == [
        ("user_message", 1),
        ("tool_call", 2),
        ("tool_call", 2),
        ("tool_result", 2),
        ("tool_result", 2),
        ("assistant_message", 3),
    ]
    first = out[1]
    assert first.tool is not None and first.tool.arguments == RG  # the JSON string is decoded
    assert out[3].tool is not None and out[3].tool.name == "exec_command"
    assert out[0].text == "fix the tests"
    assert out[1].attrs == {
        "agent": "codex",
        "agent_version": "0.104.0-alpha.1",
        "model": "gpt-5.3-codex",
    }


def test_compacted_then_context_compacted_is_one_compaction() -> None:
    out = events(
        run(
            META,
            line(
                "51:48.878",
                "compacted",
                {"message": "", "replacement_history": [{"type": "message"}]},
            ),
            line("51:48.897", "event_msg", {"type": "context_compacted"}),
            line("52:00.000", "response_item", call("call_C", "exec_command", RG)),
        )
    )
    assert [(e.kind, e.turn) for e in out] == [("compaction", 1), ("tool_call", 2)]
    comp = out[0].compaction
    assert comp is not None and comp.compactor == "codex/0.104.0-alpha.1"


def test_ui_only_compaction_mirror_still_counts() -> None:
    out = events(run(META, line("51:48.897", "event_msg", {"type": "context_compacted"})))
    assert [e.kind for e in out] == ["compaction"]


def test_custom_and_shell_calls_keep_their_input() -> None:
    patch = {
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": "c1",
        "name": "apply_patch",
        "input": "*** Begin Patch",
    }
    shell = {
        "type": "local_shell_call",
        "call_id": "c2",
        "action": {"command": ["bash", "-lc", "ls"]},
    }
    out = events(
        run(
            META,
            line("00:00.000", "response_item", patch),
            line("00:01.000", "response_item", shell),
        )
    )
    assert [(e.tool.name, e.tool.arguments) for e in out if e.tool] == [
        ("apply_patch", {"input": "*** Begin Patch"}),
        ("local_shell", {"command": ["bash", "-lc", "ls"]}),
    ]


def test_arguments_that_are_not_json_are_kept_as_input() -> None:
    redacted = "[REDACTED_ARGUMENTS len=83 sha=b4e1e5f7]"
    out = events(run(META, line("00:00.000", "response_item", call("c", "exec_command", redacted))))
    assert out[0].tool is not None and out[0].tool.arguments == {"input": redacted}


def test_session_id_falls_back_to_the_file_name() -> None:
    out = events(run(USER))
    assert out[0].session_id == SID


def test_unknown_envelope_and_item_types_are_skipped() -> None:
    items = run(
        META,
        line("00:00.000", "brand_new", {"x": 1}),
        line("00:00.100", "response_item", {"type": "odd"}),
    )
    assert [(p.reason, p.severity) for p in items if isinstance(p, Problem)] == [
        ("unknown_record:brand_new", "skipped"),
        ("unknown_record:response_item/odd", "skipped"),
    ]
