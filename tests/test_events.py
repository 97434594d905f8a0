"""The event model and its JSON Schema twin agree; bad input is a ``BadEvent`` with a reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.events import (
    MAX_EVENT_BYTES,
    BadEvent,
    Event,
    decode,
    decode_record,
    encode,
    encode_batch,
)

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schemas" / "agent-event.v1.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


def valid(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "event_id": "e1",
        "session_id": "s1",
        "turn": 3,
        "ts": "2026-12-01T10:00:00Z",
        "kind": "tool_call",
        "tool": {"name": "Read", "arguments": {"file_path": "/a.py"}, "call_id": "c1"},
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not ...}


GOOD = [
    valid(),
    valid(kind="user_message", tool=..., text="Never touch /migrations."),
    valid(kind="compaction", tool=..., compaction={"trigger": "manual", "compactor": "v2"}),
    valid(kind="incident", tool=...),
    valid(kind="session_end", tool=..., attrs={"agent": "codex"}),
    valid(ts="2026-12-01T10:00:00.123456+02:00", extra_field=1),
]
BAD = [
    (valid(turn=-1), "schema"),
    (valid(turn="3"), "schema"),
    (valid(event_id=""), "schema"),
    (valid(kind="thinking"), "schema"),
    (valid(ts="2026-12-01T10:00:00"), "schema"),  # no offset
    (valid(ts="yesterday"), "schema"),
    (valid(tool=...), "schema"),  # tool_call without a tool
    (valid(kind="user_message", tool=...), "schema"),  # message without text
    (valid(attrs={"n": 1}), "schema"),
    (valid(session_id=...), "schema"),
    (valid(compaction={"trigger": "sometimes"}), "schema"),
    (valid(v=2), "schema"),
]


@pytest.mark.parametrize("doc", GOOD)
def test_valid_events_pass_both(doc: dict[str, Any]) -> None:
    VALIDATOR.validate(doc)
    event = decode(json.dumps(doc).encode())
    assert decode(encode(event)) == event


@pytest.mark.parametrize(("doc", "reason"), BAD)
def test_invalid_events_fail_both(doc: dict[str, Any], reason: str) -> None:
    with pytest.raises(BadEvent) as info:
        decode(json.dumps(doc).encode())
    assert info.value.reason == reason
    assert not VALIDATOR.is_valid(doc)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "not_json"),
        (b"{", "not_json"),
        (b"\xff\xfe", "not_json"),
        (b"[]x", "not_json"),
        (b"42", "schema"),
        (b"{}", "schema"),
        (b'{"event_id": NaN}', "not_json"),
        (b"[" * 20000 + b"]" * 20000, "not_json"),
        (b'{"x": "' + b"a" * MAX_EVENT_BYTES + b'"}', "oversized"),
    ],
)
def test_bad_bytes_are_bad_events(data: bytes, reason: str) -> None:
    got = decode_record(data)
    assert len(got) == 1 and isinstance(got[0], BadEvent)
    assert got[0].reason == reason


def test_batch_records_decode_each_event_on_its_own() -> None:
    events = [decode(json.dumps(d).encode()) for d in GOOD[:3]]
    assert decode_record(encode_batch(events)) == events
    mixed = b"[" + encode(events[0]) + b', {"turn": -1}, ' + encode(events[1]) + b"]"
    out = decode_record(mixed)
    assert out[0] == events[0] and out[2] == events[1]
    assert isinstance(out[1], BadEvent) and out[1].reason == "schema"


events = st.builds(
    dict,
    event_id=st.text(min_size=1, max_size=20),
    session_id=st.text(min_size=1, max_size=20),
    turn=st.integers(0, 2**40),
    ts=st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    kind=st.sampled_from(["incident", "session_end", "compaction"]),
    attrs=st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)


@given(events)
def test_schema_and_model_agree_on_generated_events(doc: dict[str, Any]) -> None:
    data = json.dumps(doc).encode()
    try:
        event = decode(data)
    except BadEvent:
        assert not VALIDATOR.is_valid(doc)
        return
    VALIDATOR.validate(doc)
    assert isinstance(event, Event)
    assert msgspec.json.decode(encode(event))["session_id"] == doc["session_id"]


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise_anything_but_bad_event(data: bytes) -> None:
    for item in decode_record(data):
        assert isinstance(item, Event | BadEvent)
