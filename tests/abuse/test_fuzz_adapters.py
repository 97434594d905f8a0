"""Every adapter (``monitor.adapters.*.parse``) under abuse: junk lines and record-shaped junk
give events or ``Problem``s with a reason and a line number, never an exception, and every event
an adapter emits is a valid event (it survives ``encode`` -> ``decode``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.adapters import PARSERS, Problem
from monitor.adapters.base import MAX_TEXT_CHARS
from monitor.events import Event, decode, encode

from .conftest import FIVE_MB, NASTY, adapter_records

FORMATS = sorted(PARSERS)


def _run(fmt: str, lines: list[bytes]) -> list[Any]:
    out = list(PARSERS[fmt](iter(lines), "fuzz.jsonl"))
    for item in out:
        assert isinstance(item, Event | Problem), item
        if isinstance(item, Problem):
            assert item.reason and 0 <= item.line <= len(lines), item
        else:
            assert decode(encode(item)) == item
            if item.text is not None:
                assert len(item.text) <= MAX_TEXT_CHARS + 40
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_nasty_corpus_line_by_line(fmt: str) -> None:
    lines = [data + b"\n" for _, data in NASTY]
    out = _run(fmt, lines)
    problem_lines = {p.line for p in out if isinstance(p, Problem)}
    # Lines that are not JSON objects are all reported, each with its own line number.
    for number, (name, data) in enumerate(NASTY, start=1):
        try:
            is_object = isinstance(json.loads(data), dict)
        except (ValueError, RecursionError):
            is_object = False
        if not is_object and data.strip():  # blank lines are skipped silently
            assert number in problem_lines, name


@pytest.mark.parametrize("fmt", FORMATS)
def test_five_megabyte_strings_are_capped(fmt: str) -> None:
    big = "x" * FIVE_MB
    records = [
        {"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": big}},
        {"type": "response_item", "timestamp": "2026-01-01T00:00:00Z",
         "payload": {"type": "message", "role": "user", "content": [
             {"type": "input_text", "text": big}]}},
        {"type": "message", "id": "m1", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": [{"type": "text", "text": big}]}},
        {"event_id": "e", "session_id": "s", "turn": 0, "ts": "2026-01-01T00:00:00Z",
         "kind": "user_message", "text": big},
    ]  # fmt: skip
    _run(fmt, [json.dumps(r).encode() + b"\n" for r in records])


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_last_line_is_reported(fmt: str) -> None:
    out = _run(fmt, [b'{"type": "user", "sessionId": "s", "mess'])
    assert [p.reason for p in out if isinstance(p, Problem)] == ["truncated_last_line"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(FORMATS), records=st.lists(adapter_records(), max_size=8))
def test_record_shaped_junk(fmt: str, records: list[Any]) -> None:
    _run(fmt, [json.dumps(r).encode() + b"\n" for r in records])


@settings(max_examples=100, deadline=None)
@given(fmt=st.sampled_from(FORMATS), lines=st.lists(st.binary(max_size=80), max_size=6))
def test_any_lines(fmt: str, lines: list[bytes]) -> None:
    _run(fmt, [line + b"\n" for line in lines])
