"""The corpus of nasty payloads shared by the abuse tests, and hypothesis strategies for
record-shaped junk. Each corpus entry is ``(name, bytes)``; the names show up in test ids."""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import strategies as st

GOOD: Final = {
    "event_id": "e1",
    "session_id": "s1",
    "turn": 3,
    "ts": "2026-01-01T00:00:00Z",
    "kind": "tool_call",
    "tool": {"name": "Read", "arguments": {"path": "a.py"}},
}


def _with(**changes: Any) -> bytes:
    doc = {**GOOD, **changes}
    return json.dumps({k: v for k, v in doc.items() if v is not _DROP}).encode()


_DROP: Final = object()

FIVE_MB: Final = 5 * 1024 * 1024
DEEP: Final = 10_000

#: Payloads that are never a valid event. Every one must be rejected with a reason, never crash.
NASTY: Final[list[tuple[str, bytes]]] = [
    ("empty", b""),
    ("whitespace", b" \n\t "),
    ("garbage", b"\x00\x01\x02 not json"),
    ("invalid-utf8-value", _with(session_id="x").replace(b'"x"', b'"\xff\xfe\xc3("')),
    ("invalid-utf8-key", b'{"\xff": 1}'),
    ("lone-surrogate-escape", _with(session_id="\ud800")),
    ("truncated", _with()[:-7]),
    ("nan-literal", _with()[:-1] + b', "n": NaN}'),
    ("infinity-literal", _with(turn=0).replace(b'"turn": 0', b'"turn": Infinity')),
    ("turn-nan", _with(turn=0).replace(b'"turn": 0', b'"turn": NaN')),
    ("5mb-text", _with(kind="user_message", text="a" * FIVE_MB)),
    ("5mb-argument", _with(tool={"name": "Read", "arguments": {"p": "b" * FIVE_MB}})),
    ("10k-deep-list", b"[" * DEEP + b"]" * DEEP),
    ("10k-deep-object", b'{"a":' * DEEP + b"1" + b"}" * DEEP),
    (
        "10k-deep-arguments",
        _with(tool={"name": "R", "arguments": {}}).replace(
            b'"arguments": {}', b'"arguments": {"a":' + b"[" * DEEP + b"]" * DEEP + b"}"
        ),
    ),
    ("turn-as-string", _with(turn="3")),
    ("turn-negative", _with(turn=-1)),
    ("turn-huge", _with(turn=2**64)),
    ("turn-float", _with(turn=3.5)),
    ("ts-naive", _with(ts="2026-01-01T00:00:00")),
    ("ts-number", _with(ts=1767225600)),
    ("ts-garbage", _with(ts="yesterday")),
    ("kind-unknown", _with(kind="telepathy")),
    ("kind-null", _with(kind=None)),
    ("missing-event-id", _with(event_id=_DROP)),
    ("missing-session-id", _with(session_id=_DROP)),
    ("empty-session-id", _with(session_id="")),
    ("long-session-id", _with(session_id="s" * 257)),
    ("null-session-id", _with(session_id=None)),
    ("tool-call-without-tool", _with(tool=_DROP)),
    ("tool-is-string", _with(tool="Read")),
    ("arguments-is-list", _with(tool={"name": "Read", "arguments": [1, 2]})),
    ("tool-name-empty", _with(tool={"name": "", "arguments": {}})),
    ("message-without-text", _with(kind="user_message", tool=_DROP)),
    ("text-is-number", _with(kind="user_message", text=12)),
    ("attrs-not-strings", _with(attrs={"agent": {"nested": True}})),
    ("schema-v2", _with(v=2)),
    ("top-level-number", b"42"),
    ("top-level-string", b'"event"'),
    ("top-level-null", b"null"),
    ("huge-array-of-numbers", b"[" + b",".join([b"1"] * 200_000) + b"]"),
    ("huge-array-in-arguments", _with(tool={"name": "R", "arguments": {"xs": [0] * 600_000}})),
    ("batch-9mb", b"[" + b",".join([_with()] * 60_000) + b"]"),
    ("batch-unclosed", b"[" + _with() + b","),
    ("batch-of-nulls", b"[null, null]"),
]


def json_values() -> st.SearchStrategy[Any]:
    """Arbitrary JSON-shaped values, with awkward scalars."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=40)
    )
    return st.recursive(
        scalars,
        lambda kids: (
            st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4)
        ),
        max_leaves=20,
    )


#: Keys the adapters read (from their source), so generated records reach deep into them.
ADAPTER_KEYS: Final = (
    "type", "subtype", "role", "sessionId", "uuid", "parentUuid", "timestamp", "message",
    "content", "text", "name", "input", "id", "tool_use_id", "is_error", "isCompactSummary",
    "compactMetadata", "preTokens", "postTokens", "trigger", "payload", "arguments", "call_id",
    "output", "toolCallId", "toolName", "isError", "summary", "tokensBefore", "resourceSpans",
    "scopeSpans", "spans", "attributes", "resourceLogs", "scopeLogs", "logRecords", "body",
    "traceId", "spanId", "startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", "key", "value",
    "session_id", "event_id", "turn", "ts", "kind", "tool", "compaction", "model", "agentId",
)  # fmt: skip
#: Values the adapters branch on.
ADAPTER_WORDS: Final = (
    "user", "assistant", "system", "tool_use", "tool_result", "text", "compact_boundary",
    "summary", "session_meta", "response_item", "event_msg", "function_call",
    "function_call_output", "compacted", "context_compacted", "message", "toolCall",
    "toolResult", "compaction", "session", "auto", "manual", "2026-01-01T00:00:00Z",
    "execute_tool", "chat", "gen_ai.tool.name",
)  # fmt: skip


def adapter_records() -> st.SearchStrategy[Any]:
    """Records shaped like the log formats, with junk where the adapters expect structure."""
    leaf = (
        st.sampled_from(ADAPTER_WORDS)
        | st.none()
        | st.integers(min_value=-(2**66), max_value=2**66)
        | st.floats()
        | st.text(max_size=30)
        | st.booleans()
    )
    return st.recursive(
        leaf,
        lambda kids: (
            st.lists(kids, max_size=4)
            | st.dictionaries(st.sampled_from(ADAPTER_KEYS), kids, max_size=6)
        ),
        max_leaves=30,
    )
