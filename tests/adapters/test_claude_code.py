"""Claude Code adapter on small transcripts shaped like the real ones (FORMATS.md section 1)."""

from __future__ import annotations

import json
from typing import Any

from monitor.adapters import Problem, claude_code
from monitor.events import Event

SID = "4d5611e5-241a-462a-8d15-5122611a9569"


def rec(uuid: str, rtype: str, **fields: Any) -> dict[str, Any]:
    base = {
        "parentUuid": None,
        "isSidechain": False,
        "sessionId": SID,
        "version": "2.1.39",
        "type": rtype,
        "uuid": uuid,
        "timestamp": "2026-02-12T16:02:25.284Z",
    }
    return {**base, **fields}


def user(uuid: str, content: Any, **fields: Any) -> dict[str, Any]:
    return rec(uuid, "user", message={"role": "user", "content": content}, **fields)


def assistant(uuid: str, msg_id: str, *blocks: dict[str, Any], **fields: Any) -> dict[str, Any]:
    message = {
        "model": "claude-opus-4-6",
        "id": msg_id,
        "role": "assistant",
        "content": list(blocks),
    }
    return rec(uuid, "assistant", message=message, **fields)


def tool_use(call_id: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": inp}


def result(call_id: str, text: str = "ok") -> list[dict[str, Any]]:
    return [{"tool_use_id": call_id, "type": "tool_result", "content": text}]


def boundary(uuid: str, trigger: str = "auto") -> dict[str, Any]:
    return rec(
        uuid,
        "system",
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="x",
        compactMetadata={"trigger": trigger, "preTokens": 170251},
    )


def lines(*records: dict[str, Any]) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in records]


def parse(*records: dict[str, Any], source: str = "s.jsonl") -> list[Event | Problem]:
    return list(claude_code.parse(lines(*records), source))


def events(items: list[Event | Problem]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def test_one_api_response_split_over_records_is_one_turn() -> None:
    out = events(
        parse(
            user("u1", "Work on bead spotter-dov."),
            assistant("a1", "msg_1", {"type": "text", "text": "Looking."}),
            assistant("a2", "msg_1", tool_use("t1", "Read", file_path="/a")),
            user("r1", result("t1")),
            assistant("a3", "msg_1", tool_use("t2", "Read", file_path="/b")),
            user("r2", result("t2")),
            assistant("a4", "msg_2", tool_use("t3", "Bash", command="ls")),
        )
    )
    turns = [(e.kind, e.turn) for e in out]
    assert turns == [
        ("user_message", 1),
        ("assistant_message", 2),
        ("tool_call", 2),
        ("tool_result", 2),
        ("tool_call", 2),
        ("tool_result", 2),
        ("tool_call", 3),
    ]
    assert out[3].tool is not None and out[3].tool.name == "Read"
    assert out[3].tool.call_id == "t1"
    assert out[2].tool is not None and out[2].tool.arguments == {"file_path": "/a"}
    assert out[2].attrs["model"] == "claude-opus-4-6"


def test_compaction_is_its_own_turn_and_carries_the_summary() -> None:
    out = events(
        parse(
            assistant("a1", "msg_1", tool_use("t1", "Read", file_path="/a")),
            boundary("b1", trigger="manual"),
            user("s1", "This session is being continued ... Summary: X", isCompactSummary=True),
            assistant("a2", "msg_2", tool_use("t2", "Read", file_path="/a")),
        )
    )
    assert [(e.kind, e.turn) for e in out] == [
        ("tool_call", 1),
        ("compaction", 2),
        ("tool_call", 3),
    ]
    comp = out[1]
    assert comp.compaction is not None
    assert comp.compaction.trigger == "manual"
    assert comp.compaction.tokens_before == 170251
    assert comp.compaction.compactor == "claude_code/2.1.39"
    assert comp.text is not None and comp.text.endswith("Summary: X")
    assert comp.event_id == "b1"


def test_boundary_without_summary_is_still_a_compaction() -> None:
    out = events(parse(boundary("b1"), user("u1", "next")))
    assert [e.kind for e in out] == ["compaction", "user_message"]
    assert out[0].text is None


def test_pre_boundary_versions_mark_compaction_by_continuation_text() -> None:
    text = "This session is being continued from a previous conversation that ran out of context."
    out = events(parse(user("u1", text)))
    assert [e.kind for e in out] == ["compaction"]


def test_client_written_user_records_are_not_human_messages() -> None:
    out = events(
        parse(
            user("m1", "<skill body>", isMeta=True),
            user("c1", "<command-name>/compact</command-name>"),
            user("c2", "<local-command-stdout>Compacted</local-command-stdout>"),
            user("i1", "[Request interrupted by user for tool use]"),
            user("n1", "<task-notification>\n<task-id>b0be39e</task-id>"),
            user("h1", [{"type": "text", "text": "did you push?"}]),
        )
    )
    typed = [(e.kind, e.text) for e in out if e.origin is None]
    assert typed == [("user_message", "did you push?")]
    assert [(e.text, e.origin) for e in out if e.origin is not None] == [
        ("<skill body>", "harness"),
        ("<command-name>/compact</command-name>", "harness"),
        ("<local-command-stdout>Compacted</local-command-stdout>", "command"),
        ("[Request interrupted by user for tool use]", "interrupt"),
        ("<task-notification>\n<task-id>b0be39e</task-id>", "harness"),
    ]
    # Client-written records take no turn of their own: the typed message is the first.
    assert out[-1].turn == 1


def test_sidechain_agent_file_is_its_own_session_linked_to_parent() -> None:
    source = f"proj/{SID}/subagents/agent-a881341.jsonl"
    out = events(
        parse(
            user("u1", "What is the hook contract?", isSidechain=True, agentId="a881341"),
            assistant("a1", "msg_1", tool_use("t1", "WebFetch", url="u"), isSidechain=True),
            source=source,
        )
    )
    assert {e.session_id for e in out} == {f"{SID}/agent-a881341"}
    assert all(e.attrs["parent_session"] == SID for e in out)


def test_flattened_subagent_file_name_gives_the_agent_id() -> None:
    assert claude_code.agent_id_from_path(f"x__{SID}__subagents__agent-acompact-fffbd0.jsonl") == (
        "acompact-fffbd0"
    )
    assert claude_code.agent_id_from_path(f"{SID}.jsonl") is None


def test_inline_sidechains_split_by_chain_root() -> None:
    out = events(
        parse(
            user("u1", "orchestrate"),
            assistant("a1", "msg_1", tool_use("t1", "Task", prompt="p1")),
            user("s1", "Create components", isSidechain=True),
            assistant(
                "s2",
                "msg_2",
                tool_use("t2", "Bash", command="ls"),
                isSidechain=True,
                parentUuid="s1",
            ),
            user("x1", "Create types", isSidechain=True),
            assistant(
                "x2",
                "msg_3",
                tool_use("t3", "Bash", command="ls"),
                isSidechain=True,
                parentUuid="x1",
            ),
            user("r1", result("t1"), parentUuid="a1"),
        )
    )
    sessions = {e.session_id for e in out}
    assert sessions == {SID, f"{SID}/sidechain-s1", f"{SID}/sidechain-x1"}
    main = [e for e in out if e.session_id == SID]
    assert [e.kind for e in main] == ["user_message", "tool_call", "tool_result"]
    assert "parent_session" not in main[0].attrs


def test_unknown_record_is_skipped_and_reported() -> None:
    items = parse(rec("z1", "brand-new-thing"), user("u1", "hi"))
    problems = [i for i in items if isinstance(i, Problem)]
    assert [(p.reason, p.severity, p.line) for p in problems] == [
        ("unknown_record:brand-new-thing", "skipped", 1)
    ]
    assert len(events(items)) == 1


def test_known_noise_records_are_dropped_silently() -> None:
    items = parse(
        {"type": "summary", "summary": "Title", "leafUuid": "l"},
        rec("p1", "progress", data={}),
        rec("s1", "system", subtype="turn_duration"),
        user("u1", "hi"),
    )
    assert [type(i).__name__ for i in items] == ["Event"]


def test_truncated_last_line_is_reported_not_raised() -> None:
    good = lines(user("u1", "hi"))
    cut = json.dumps(user("u2", "there")).encode()[:40]
    items = list(claude_code.parse([*good, cut], "s.jsonl"))
    assert isinstance(items[0], Event)
    assert isinstance(items[1], Problem)
    assert (items[1].reason, items[1].line) == ("truncated_last_line", 2)


def test_garbage_mid_file_is_not_json() -> None:
    items = list(claude_code.parse([b"{nope\n", *lines(user("u1", "hi"))], "s.jsonl"))
    assert isinstance(items[0], Problem) and items[0].reason == "not_json"
    assert isinstance(items[1], Event)
