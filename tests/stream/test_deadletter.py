from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from monitor.events import Event, decode_record, encode
from monitor.stream.deadletter import (
    HEADER_INDEX,
    HEADER_REASON,
    HEADER_SIZE,
    MAX_PAYLOAD_BYTES,
    dead_letters,
)

GOOD = [
    encode(
        Event(
            event_id=f"e{i}",
            session_id="s",
            turn=i,
            ts=datetime(2026, 1, 1, tzinfo=UTC),
            kind="user_message",
            text="hi",
        )
    )
    for i in range(5)
]
BAD = [b'{"event_id": 3}', b'"just a string"', b"[]", b'{"kind": "tool_call"}']


@given(st.lists(st.one_of(st.sampled_from(GOOD), st.sampled_from(BAD)), min_size=1, max_size=12))
def test_batch_elements_dead_letter_with_their_own_bytes(elements: list[bytes]) -> None:
    record = b"[" + b",".join(elements) + b"]"
    letters = dead_letters(record, decode_record(record))
    bad_positions = [i for i, e in enumerate(elements) if e in BAD]
    assert [d.index for d in letters] == bad_positions
    assert [d.payload for d in letters] == [elements[i] for i in bad_positions]
    assert all(d.reason == "schema" for d in letters)


@given(st.binary(max_size=200))
def test_a_record_that_fails_whole_keeps_all_its_bytes(data: bytes) -> None:
    results = decode_record(data)
    letters = dead_letters(data, results)
    if len(results) == 1 and not isinstance(results[0], Event):
        assert len(letters) == 1 and letters[0].payload == data and letters[0].index is None


def test_valid_records_make_no_dead_letters() -> None:
    assert dead_letters(GOOD[0], decode_record(GOOD[0])) == []
    batch = b"[" + b",".join(GOOD) + b"]"
    assert dead_letters(batch, decode_record(batch)) == []


def test_oversized_payload_is_cut_and_says_so() -> None:
    data = b'{"text": "' + b"x" * (2 * MAX_PAYLOAD_BYTES) + b'"}'
    [letter] = dead_letters(data, decode_record(data))
    assert letter.payload == data[:MAX_PAYLOAD_BYTES]
    headers = dict(letter.headers("in", 3, 42))
    assert headers[HEADER_SIZE] == str(len(data)).encode()
    assert headers[HEADER_REASON] in (b"oversized", b"schema")
    assert headers["monitor.source"] == b"in/3/42"
    assert HEADER_INDEX not in headers
