"""Properties every adapter keeps: never raise on any input, deterministic ids, turn order.

Inputs are real-shaped records of each format with random keys dropped or replaced (so the
parsers' deep paths run, not only their first "is it JSON" check), mixed with raw bytes.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.adapters import PARSERS, Problem
from monitor.events import Event, decode, encode

TS = "2026-02-12T16:02:25.284Z"
INPUTS = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
OUTPUTS = json.dumps(
    [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c", "name": "x", "arguments": {}}],
        }
    ]
)
CC = {"sessionId": "s", "timestamp": TS, "version": "2.1.39", "parentUuid": None}
TEMPLATES: dict[str, list[dict[str, Any]]] = {
    "claude_code": [
        {**CC, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "do it"}},
        {
            **CC,
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "id": "m1",
                "model": "x",
                "content": [
                    {"type": "text", "text": "ok"},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
                ],
            },
        },
        {
            **CC,
            "type": "user",
            "uuid": "r1",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": False}
                ]
            },
        },
        {
            **CC,
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "compactMetadata": {"trigger": "manual", "preTokens": 5},
        },
        {
            **CC,
            "type": "user",
            "uuid": "c1",
            "isCompactSummary": True,
            "message": {"content": "summary"},
        },
        {
            **CC,
            "type": "user",
            "uuid": "x1",
            "isSidechain": True,
            "agentId": "a9",
            "message": {"content": "sub"},
        },
    ],
    "codex": [
        {"timestamp": TS, "type": "session_meta", "payload": {"id": "s", "cli_version": "0.1"}},
        {"timestamp": TS, "type": "turn_context", "payload": {"model": "m"}},
        {
            "timestamp": TS,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "go"},
        },
        {
            "timestamp": TS,
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec",
                "arguments": '{"cmd": "ls"}',
                "call_id": "c1",
            },
        },
        {
            "timestamp": TS,
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": "x"},
        },
        {
            "timestamp": TS,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hi"}],
            },
        },
        {"timestamp": TS, "type": "compacted", "payload": {"message": "sum"}},
        {"timestamp": TS, "type": "event_msg", "payload": {"type": "context_compacted"}},
    ],
    "pi": [
        {"type": "session", "id": "s", "timestamp": TS, "modelId": "m"},
        {
            "type": "message",
            "timestamp": TS,
            "message": {"role": "user", "content": [{"type": "text", "text": "go"}]},
        },
        {
            "type": "message",
            "timestamp": TS,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "t", "name": "read", "arguments": {"path": "/a"}}
                ],
            },
        },
        {
            "type": "message",
            "timestamp": TS,
            "message": {
                "role": "toolResult",
                "toolCallId": "t",
                "toolName": "read",
                "content": [],
                "isError": False,
            },
        },
        {"type": "compaction", "timestamp": TS, "summary": "s", "tokensBefore": 9},
    ],
    "otel": [
        {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [{"key": "service.name", "value": {"stringValue": "a"}}]
                    },
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": "t",
                                    "spanId": "s1",
                                    "startTimeUnixNano": "1760000000000000000",
                                    "attributes": [
                                        {
                                            "key": "gen_ai.operation.name",
                                            "value": {"stringValue": "chat"},
                                        },
                                        {
                                            "key": "gen_ai.input.messages",
                                            "value": {"stringValue": INPUTS},
                                        },
                                        {
                                            "key": "gen_ai.output.messages",
                                            "value": {"stringValue": OUTPUTS},
                                        },
                                    ],
                                    "events": [
                                        {
                                            "name": "compaction_monitor.compaction",
                                            "timeUnixNano": "1760000000000000001",
                                            "attributes": [],
                                        }
                                    ],
                                },
                                {
                                    "traceId": "t",
                                    "spanId": "s2",
                                    "startTimeUnixNano": "1760000000000000002",
                                    "attributes": [
                                        {
                                            "key": "gen_ai.operation.name",
                                            "value": {"stringValue": "execute_tool"},
                                        },
                                        {"key": "gen_ai.tool.name", "value": {"stringValue": "x"}},
                                        {
                                            "key": "gen_ai.tool.call.id",
                                            "value": {"stringValue": "d"},
                                        },
                                    ],
                                },
                            ]
                        }
                    ],
                }
            ]
        },
    ],
    "events": [
        {
            "event_id": "e1",
            "session_id": "s",
            "turn": 1,
            "ts": TS,
            "kind": "tool_call",
            "tool": {"name": "Read", "arguments": {"a": 1}},
        },
        {
            "event_id": "e2",
            "session_id": "s",
            "turn": 2,
            "ts": TS,
            "kind": "compaction",
            "compaction": {"trigger": "auto"},
        },
    ],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (including itself), for picking a mutation site."""
    found = [value] if isinstance(value, dict | list) else []
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    )
    for child in children:
        found.extend(_containers(child))
    return found


@st.composite
def near_record(draw: st.DrawFn, fmt: str) -> bytes:
    record = copy.deepcopy(draw(st.sampled_from(TEMPLATES[fmt])))
    for _ in range(draw(st.integers(0, 3))):
        site = draw(st.sampled_from(_containers(record)))
        if not site:
            continue
        key = draw(st.sampled_from(sorted(site) if isinstance(site, dict) else range(len(site))))
        if draw(st.booleans()):
            del site[key]
        else:
            site[key] = draw(json_values)
    return json.dumps(record).encode() + b"\n"


def lines_for(fmt: str) -> st.SearchStrategy[list[bytes]]:
    return st.lists(
        st.one_of(near_record(fmt), near_record(fmt), st.binary(max_size=40)),
        max_size=10,
    )


FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(fmt: str, data: list[bytes]) -> list[Event | Problem]:
    return list(PARSERS[fmt](list(data), "f.jsonl"))


def _check(fmt: str, data: list[bytes]) -> None:
    items = _run(fmt, data)
    last: dict[str, int] = {}
    for item in items:
        assert isinstance(item, Event | Problem)
        if isinstance(item, Problem):
            assert 0 < item.line <= len(data)
            continue
        assert decode(encode(item)) == item  # every event passes the schema
        if fmt != "events":  # our own format is passed through as the producer wrote it
            assert item.turn >= last.get(item.session_id, 0)
            last[item.session_id] = item.turn
    assert items == _run(fmt, data)  # re-reading gives identical events and ids


@FAST
@given(data=lines_for("claude_code"))
def test_claude_code_properties(data: list[bytes]) -> None:
    _check("claude_code", data)


@FAST
@given(data=lines_for("codex"))
def test_codex_properties(data: list[bytes]) -> None:
    _check("codex", data)


@FAST
@given(data=lines_for("pi"))
def test_pi_properties(data: list[bytes]) -> None:
    _check("pi", data)


@FAST
@given(data=lines_for("otel"))
def test_otel_properties(data: list[bytes]) -> None:
    _check("otel", data)


@FAST
@given(data=lines_for("events"))
def test_native_properties(data: list[bytes]) -> None:
    _check("events", data)


@FAST
@given(data=st.lists(st.binary(max_size=80), max_size=8))
def test_arbitrary_bytes_never_raise(data: list[bytes]) -> None:
    for fmt in PARSERS:
        _check(fmt, data)
