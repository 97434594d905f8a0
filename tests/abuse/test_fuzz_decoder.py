"""``monitor.events.decode_record`` under abuse: any bytes give events or ``BadEvent``s with a
known reason, never an exception, and a batch's good elements survive its bad ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import DetectConfig, detect_all
from monitor.events import BadEvent, Event, Tool, decode_record, encode

from .conftest import GOOD, NASTY, json_values

REASONS = {"not_json", "schema", "oversized"}


def _checked(data: bytes) -> list[Event | BadEvent]:
    out = decode_record(data)
    if not out:  # only an empty batch holds nothing to process or dead-letter
        assert data.strip().startswith(b"[") and msgspec.json.decode(data) == []
    for item in out:
        assert isinstance(item, Event | BadEvent)
        if isinstance(item, BadEvent):
            assert item.reason in REASONS, item
    return out


@pytest.mark.parametrize(("name", "data"), NASTY, ids=[n for n, _ in NASTY])
def test_every_nasty_payload_is_rejected_with_a_reason(name: str, data: bytes) -> None:
    out = _checked(data)
    assert all(isinstance(item, BadEvent) for item in out), (name, out[:3])


def test_the_corpus_reasons() -> None:
    reasons = {name: decode_record(data)[0].reason for name, data in NASTY}  # type: ignore[union-attr]
    assert reasons["5mb-text"] == reasons["5mb-argument"] == "oversized"
    assert reasons["batch-9mb"] == "oversized"
    assert reasons["invalid-utf8-value"] == reasons["nan-literal"] == "not_json"
    assert reasons["missing-session-id"] == reasons["turn-as-string"] == "schema"
    assert reasons["10k-deep-object"] in ("not_json", "schema")


def test_deep_nesting_inside_a_valid_event_is_decoded_or_rejected_and_detection_survives() -> None:
    depth = 5_000
    data = encode(Event("e", "s", 0, datetime(2026, 1, 1, tzinfo=UTC), "tool_call",
                        tool=Tool("R", {})))  # fmt: skip
    data = data.replace(
        b'"arguments":{}', b'"arguments":{"a":' + b"[" * depth + b"]" * depth + b"}"
    )
    (item,) = _checked(data)
    if isinstance(item, Event):
        # Fingerprinting bounds its recursion: the same deep call twice is still one call.
        again = Event("e2", "s", 1, item.ts, "tool_call", tool=item.tool)
        assert detect_all([item, again], DetectConfig()) == []


@given(st.binary(max_size=300))
def test_any_bytes(data: bytes) -> None:
    _checked(data)


@given(json_values())
def test_any_json_value(value: Any) -> None:
    _checked(json.dumps(value).encode())


@settings(max_examples=200)
@given(st.dictionaries(st.sampled_from(sorted(GOOD)), json_values(), max_size=6))
def test_good_event_with_fields_replaced_by_junk(changes: dict[str, Any]) -> None:
    _checked(json.dumps({**GOOD, **changes}).encode())


@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_a_batch_keeps_its_good_elements_in_order(pattern: list[bool]) -> None:
    elements = []
    for i, good in enumerate(pattern):
        doc = {**GOOD, "event_id": f"e{i}", "turn": i}
        elements.append(json.dumps(doc if good else {**doc, "turn": "bad"}))
    out = _checked(("[" + ",".join(elements) + "]").encode())
    assert [isinstance(x, Event) for x in out] == pattern
    assert [x.event_id for x in out if isinstance(x, Event)] == [
        f"e{i}" for i, good in enumerate(pattern) if good
    ]
