"""OTel GenAI adapter on OTLP/JSON lines built per FORMATS.md section 11 (no real export saved)."""

from __future__ import annotations

import json
from typing import Any

from monitor.adapters import Problem, otel
from monitor.events import Event

CONV = "conv-7f3a"
TRACE = "5b8efff798038103d269b633813fc60c"
T0 = 1_760_000_000_000_000_000


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # int64 is a string in OTLP/JSON
    return {"stringValue": v}


def kv(**attrs: Any) -> list[dict[str, Any]]:
    return [{"key": k.replace("__", "."), "value": value(v)} for k, v in attrs.items()]


def span(
    span_id: str, name: str, start: int, attrs: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(T0 + start * 1_000_000),
        "endTimeUnixNano": str(T0 + start * 1_000_000 + 500_000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        **extra,
    }


def export(*spans: dict[str, Any]) -> bytes:
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": kv(service__name="my-agent", service__version="1.2.0")},
                "scopeSpans": [{"scope": {"name": "genai"}, "spans": list(spans)}],
            }
        ]
    }
    return json.dumps(body).encode() + b"\n"


def chat(span_id: str, start: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    return span(
        span_id,
        "chat gpt-4.1",
        start,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": CONV,
            "gen_ai.request.model": "gpt-4.1",
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        },
    )


def tool(
    span_id: str, start: int, call_id: str, args: str | None = None, error: bool = False
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.conversation.id": CONV,
        "gen_ai.tool.name": "read_file",
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.result": "contents",
    }
    if args is not None:
        attrs["gen_ai.tool.call.arguments"] = args
    extra = {"status": {"code": 2}} if error else {}
    return span(span_id, "execute_tool read_file", start, attrs, **extra)


USER = {"role": "user", "parts": [{"type": "text", "content": "read a.py"}]}
CALL = {
    "role": "assistant",
    "parts": [
        {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": {"path": "a.py"}}
    ],
}
RESULT = {
    "role": "tool",
    "parts": [{"type": "tool_call_response", "id": "call_1", "response": "x"}],
}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "a.py defines main"}]}


def run(*lines: bytes) -> list[Event | Problem]:
    return list(otel.parse(list(lines), "traces.jsonl"))


def events(items: list[Event | Problem]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def test_chat_and_tool_spans_become_steps() -> None:
    # Spans are exported when they end, so the batch is out of start order on purpose.
    out = events(
        run(
            export(
                tool("s2", 10, "call_1"),
                chat("s1", 0, [USER], [CALL]),
                chat("s3", 20, [USER, CALL, RESULT], [ANSWER]),
            )
        )
    )
    assert [(e.kind, e.turn) for e in out] == [
        ("user_message", 1),
        ("tool_call", 2),
        ("tool_result", 2),
        ("assistant_message", 3),
    ]
    call = out[1].tool
    assert call is not None and (call.name, call.arguments, call.call_id) == (
        "read_file",
        {"path": "a.py"},
        "call_1",
    )
    assert {e.session_id for e in out} == {CONV}
    assert out[0].attrs == {"agent": "my-agent", "agent_version": "1.2.0", "model": "gpt-4.1"}


def test_tool_span_without_captured_chat_content_gives_the_call() -> None:
    out = events(run(export(tool("s2", 10, "call_9", args='{"path": "b.py"}', error=True))))
    assert [(e.kind, e.turn) for e in out] == [("tool_call", 1), ("tool_result", 1)]
    assert out[0].tool is not None and out[0].tool.arguments == {"path": "b.py"}
    assert out[1].tool is not None and out[1].tool.is_error is True


def test_retried_request_does_not_repeat_the_user_message() -> None:
    out = events(run(export(chat("s1", 0, [USER], []), chat("s2", 5, [USER], [ANSWER]))))
    assert [e.kind for e in out] == ["user_message", "assistant_message"]


def test_compaction_span_event_with_our_attributes() -> None:
    ev = {
        "timeUnixNano": str(T0 + 7_000_000),
        "name": otel.COMPACTION_EVENT,
        "attributes": kv(
            **{
                otel.COMPACTION_TRIGGER.replace(".", "__"): "manual",
                otel.COMPACTION_TOKENS_BEFORE.replace(".", "__"): 170000,
                otel.COMPACTION_TOKENS_AFTER.replace(".", "__"): 12000,
                otel.COMPACTION_COMPACTOR.replace(".", "__"): "summariser/3",
            }
        ),
    }
    agent = span(
        "s0",
        "invoke_agent coder",
        0,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": CONV},
        events=[ev],
    )
    out = events(run(export(agent)))
    assert [e.kind for e in out] == ["compaction"]
    comp = out[0].compaction
    assert comp is not None
    assert (comp.trigger, comp.tokens_before, comp.tokens_after, comp.compactor) == (
        "manual",
        170000,
        12000,
        "summariser/3",
    )


def test_compaction_and_user_message_as_log_records() -> None:
    logs = {
        "resourceLogs": [
            {
                "resource": {"attributes": kv(service__name="my-agent")},
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": str(T0),
                                "eventName": "gen_ai.user.message",
                                "body": {"kvlistValue": {"values": kv(content="hello")}},
                                "attributes": kv(gen_ai__conversation__id=CONV),
                            },
                            {
                                "timeUnixNano": str(T0 + 1),
                                "eventName": otel.COMPACTION_EVENT,
                                "attributes": kv(gen_ai__conversation__id=CONV),
                            },
                            {
                                "timeUnixNano": str(T0 + 2),
                                "body": {"stringValue": "an ordinary log line"},
                            },
                        ]
                    }
                ],
            }
        ]
    }
    out = events(run(json.dumps(logs).encode() + b"\n"))
    assert [(e.kind, e.turn, e.text) for e in out] == [
        ("user_message", 1, "hello"),
        ("compaction", 2, None),
    ]


def test_session_falls_back_to_trace_id() -> None:
    s = span(
        "s1",
        "execute_tool x",
        0,
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"},
    )
    out = events(run(export(s)))
    assert {e.session_id for e in out} == {TRACE}


def test_lines_that_are_not_otlp_are_skipped() -> None:
    items = run(b'{"hello": 1}\n')
    assert [(p.reason, p.severity) for p in items if isinstance(p, Problem)] == [
        ("unknown_record:not_otlp", "skipped")
    ]
