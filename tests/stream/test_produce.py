from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from monitor.stream.produce import Batcher

# (session, payload size) pairs; payloads are JSON strings so a batch is a valid JSON array.
items = st.lists(st.tuples(st.sampled_from("abcde"), st.integers(1, 60)), max_size=80)


def _split(value: bytes) -> list[bytes]:
    if value.startswith(b"["):
        return [bytes(r) for r in msgspec.json.decode(value, type=list[msgspec.Raw])]
    return [value]


@given(items, st.integers(1, 7), st.integers(20, 300), st.integers(1, 6))
def test_batches_keep_every_event_once_in_session_order(
    pairs: list[tuple[str, int]], max_events: int, max_bytes: int, max_sessions: int
) -> None:
    batcher = Batcher(max_events=max_events, max_bytes=max_bytes, max_sessions=max_sessions)
    sent: list[tuple[str, bytes]] = []
    expected: dict[str, list[bytes]] = {}
    for n, (sid, size) in enumerate(pairs):
        payload = msgspec.json.encode(f"{n}:" + "x" * size)
        expected.setdefault(sid, []).append(payload)
        sent.extend(batcher.add(sid, payload))
    sent.extend(batcher.flush())
    got: dict[str, list[bytes]] = {}
    for sid, value in sent:
        elements = _split(value)
        assert len(elements) <= max_events
        if len(elements) > 1:  # a lone event may exceed the byte cap; a batch never does
            assert len(value) <= max_bytes + 1
        got.setdefault(sid, []).extend(elements)
    assert got == expected
    assert batcher.flush() == []


def test_single_events_are_sent_bare_and_batches_as_arrays() -> None:
    batcher = Batcher(max_events=2)
    assert batcher.add("s", b'{"a":1}') == []
    assert batcher.add("s", b'{"a":2}') == [("s", b'[{"a":1},{"a":2}]')]
    assert batcher.add("t", b'{"a":3}') == []
    assert batcher.flush() == [("t", b'{"a":3}')]
