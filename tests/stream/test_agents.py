"""The detect agent's pure part (``process``) and the sinks' retry loop, without a broker."""

from __future__ import annotations

import asyncio

import pytest

from monitor.detect import DetectConfig, SessionState
from monitor.events import BadEvent, decode_record, encode_batch
from monitor.replay import collect
from monitor.stream import agents
from monitor.stream.agents import process, retry_forever
from monitor.stream.records import decode as decode_summaries
from monitor.stream.records import is_reportable, partition_key
from monitor.testing import generate_events

CFG = DetectConfig()


class Store:
    """A dict standing in for the tables: state plus the (partition, offset) marker."""

    def __init__(self) -> None:
        self.data: dict[str, tuple[SessionState, tuple[int, int]]] = {}

    def load(self, sid: str) -> tuple[SessionState | None, tuple[int, int] | None]:
        state, marker = self.data.get(sid, (None, None))
        return state, marker

    def apply(self, outcome: agents.Outcome, source: tuple[int, int]) -> None:
        for _old, new in outcome.states.values():
            self.data[new.meta.session_id] = (new, source)


def _records(events: list, size: int) -> list[bytes]:
    return [encode_batch(events[i : i + size]) for i in range(0, len(events), size)]


def test_records_through_process_give_replay_flags() -> None:
    events = generate_events(30, seed=3)
    store, flags = Store(), []
    for offset, record in enumerate(_records(events, 7)):
        outcome = process(decode_record(record), store.load, CFG, (0, offset))
        store.apply(outcome, (0, offset))
        flags.extend(outcome.flags)
    _, want = collect(events, CFG)
    assert sorted(flags, key=repr) == sorted(want, key=repr)
    assert flags


def test_a_record_seen_before_a_crash_is_skipped_whole() -> None:
    events = generate_events(5, seed=4)
    records = _records(events, 40)  # more events per record than the seen-id window
    store = Store()
    for offset, record in enumerate(records):
        store.apply(process(decode_record(record), store.load, CFG, (0, offset)), (0, offset))
    # Re-delivery of every record after a crash: same partition, same offsets.
    for offset, record in enumerate(records):
        again = process(decode_record(record), store.load, CFG, (0, offset))
        assert again.flags == [] and again.states == {} and again.events == 0
    # The same bytes at a new offset (a producer duplicate) are not skipped by the marker.
    later = process(decode_record(records[0]), store.load, CFG, (0, len(records)))
    assert later.states


def test_summaries_go_out_in_arrays_keyed_by_the_sessions_input_partition() -> None:
    """Every summary of a session lands under one key, so one sink writes its row."""
    events = generate_events(40, seed=6)
    sessions = sorted({e.session_id for e in events})
    home = {sid: i % 3 for i, sid in enumerate(sessions)}  # as a keyed producer would
    records = [
        r for sid in sessions for r in _records([e for e in events if e.session_id == sid], 5)
    ]
    work = agents.Work(Store().load)
    keys_by_session: dict[str, set[bytes]] = {}
    for offset, record in enumerate(records):
        items = decode_record(record)
        source = (home[items[0].session_id], offset)  # type: ignore[union-attr]
        work.add(process(items, work.load, CFG, source), source)
    sends = work.summary_sends("sessions")
    assert len(sends) == len({home[s] for s in work.states})  # one array per partition here
    for topic, key, value, _ in sends:
        assert topic == "sessions" and key is not None
        for summary in decode_summaries(value):
            keys_by_session.setdefault(summary.session_id, set()).add(key)
            assert key == partition_key(home[summary.session_id])
    reportable = {sid for sid, (_, new, _) in work.states.items() if is_reportable(new.meta)}
    assert set(keys_by_session) == reportable and reportable
    assert all(len(keys) == 1 for keys in keys_by_session.values())


def test_bad_items_are_reported_and_do_not_stop_the_record() -> None:
    events = generate_events(1, seed=5)[:3]
    record = encode_batch(events)[:-1] + b',{"event_id": 1}]'
    outcome = process(decode_record(record), Store().load, CFG, (0, 0))
    assert outcome.events == 3
    assert [b.reason for b in outcome.bad] == ["schema"]
    assert all(isinstance(b, BadEvent) for b in outcome.bad)


def test_retry_forever_backs_off_until_the_write_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agents, "RETRY_FIRST_S", 0.01)
    calls = []

    async def write() -> int:
        calls.append(1)
        if len(calls) < 4:
            raise ConnectionError("database down")
        return 7

    assert asyncio.run(retry_forever(write, "test")) == 7
    assert len(calls) == 4


def test_retry_forever_gives_up_only_when_stopping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agents, "RETRY_FIRST_S", 0.01)
    calls = []

    async def write() -> int:
        calls.append(1)
        raise ConnectionError("database down")

    result = asyncio.run(retry_forever(write, "test", should_stop=lambda: len(calls) >= 3))
    assert result is None and len(calls) == 3
