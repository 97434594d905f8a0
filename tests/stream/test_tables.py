"""SessionTables on a real (memory-backed) Faust table, with a recording producer."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import faust
import pytest

from monitor.detect import DetectConfig, step
from monitor.detect.session import SessionState, encode_part
from monitor.events import Compaction, Event, Tool
from monitor.stream import tables as tables_module
from monitor.stream.tables import SessionTables, state_key

T0 = datetime(2026, 12, 1, tzinfo=UTC)


class _Producer:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes, bytes | None, int]] = []

    async def send(self, topic: str, key: bytes, value: bytes | None, partition: int,
                   timestamp: Any, headers: Any) -> None:  # fmt: skip
        self.sent.append((key, value, partition))


def _tables() -> tuple[SessionTables, _Producer]:
    app = faust.App("tables-test", broker="kafka://127.0.0.1:1", store="memory://")
    tables = SessionTables(app, partitions=4)
    producer = _Producer()
    tables.app = SimpleNamespace(producer=producer)  # type: ignore[assignment]
    return tables, producer


def _state(sid: str, turns: int = 6) -> SessionState:
    state: SessionState | None = None
    for turn in range(turns):
        kw: dict[str, Any] = {}
        if turn == 3:
            kind, kw["compaction"] = "compaction", Compaction()
        elif turn % 2:
            kind, kw["text"] = "user_message", f"Never touch /migrations in {sid}."
        else:
            kind, kw["tool"] = "tool_call", Tool(name="Read", arguments={"path": sid})
        event = Event(f"{sid}-{turn}", sid, turn, T0 + timedelta(seconds=turn), kind, **kw)  # type: ignore[arg-type]
        state, _ = step(state, event, DetectConfig())
    assert state is not None
    return state


def test_a_saved_state_loads_back_as_the_same_object_with_its_marker() -> None:
    tables, producer = _tables()
    state = _state("s1")
    written = asyncio.run(tables.save(None, state, 2, 41))
    assert written == len(producer.sent) and producer.sent[-1][0] == state_key("s1", "meta")
    loaded, marker = tables.load("s1")
    assert loaded is state and marker == (2, 41)


def test_a_meta_value_the_worker_did_not_write_is_decoded_afresh() -> None:
    tables, _ = _tables()
    state = _state("s1")
    asyncio.run(tables.save(None, state, 0, 7))
    key = state_key("s1", "meta")
    tables.table.data[key] = bytes(bytearray(tables.table.data[key]))  # as recovery restores it
    loaded, marker = tables.load("s1")
    assert loaded is not state and loaded == state and marker == (0, 7)
    # A part changed behind the worker's back (a changelog replay) shows once meta is rewritten.
    later = _state("s1", turns=9)
    tables.table.data[state_key("s1", "calls")] = encode_part(later, "calls")
    tables.table.data[key] = bytes(bytearray(tables.table.data[key]))
    reloaded, _ = tables.load("s1")
    assert reloaded is not None and reloaded.calls == later.calls


def test_a_deleted_session_is_gone_from_the_cache_too() -> None:
    tables, _ = _tables()
    state = _state("s1")
    asyncio.run(tables.save(None, state, 1, 3))
    meta_record = tables.table.data[state_key("s1", "meta")]
    assert asyncio.run(tables.delete("s1", 1, meta_record))
    assert tables.load("s1") == (None, None)
    assert "s1" not in tables._decoded


def test_the_cache_keeps_the_most_recently_used_states(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables_module, "STATE_CACHE_SESSIONS", 3)
    tables, _ = _tables()
    states = {sid: _state(sid) for sid in ("a", "b", "c", "d")}
    for sid in "abc":
        asyncio.run(tables.save(None, states[sid], 0, 1))
    assert tables.load("a")[0] is states["a"]  # a is now the most recently used
    asyncio.run(tables.save(None, states["d"], 0, 2))
    assert list(tables._decoded) == ["c", "a", "d"]  # b, least recently used, left
    decoded, _ = tables.load("b")
    assert decoded == states["b"] and decoded is not states["b"]


def test_meta_carries_the_input_spans_and_an_older_record_still_loads() -> None:
    from monitor.detect.session import encode_part as encode
    from monitor.stream.tables import pack_meta, unpack_meta

    tables, _ = _tables()
    state = _state("s9")
    spans = [{"topic": "in", "partition": 2, "first_offset": 40, "last_offset": 41}]
    asyncio.run(tables.save(None, state, 2, 41, spans=spans))
    assert tables.spans("s9") == spans
    assert tables.load("s9")[1] == (2, 41)
    raw = tables.table.data[state_key("s9", "meta")]
    assert unpack_meta(raw)[:2] == (2, 41)
    # A meta value as workers before provenance wrote it: the marker, then the meta.
    import struct

    old = struct.pack(">iq", 3, 7) + encode(state, "meta")
    tables.table.data[state_key("s9", "meta")] = old
    loaded, marker = tables.load("s9")
    assert marker == (3, 7) and loaded is not None and loaded.meta == state.meta
    assert tables.spans("s9") == []
    assert unpack_meta(pack_meta(1, 2, b"[]", b"m")) == (1, 2, b"[]", b"m")


class _Builder:
    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []

    def append(self, *, timestamp: Any, key: bytes, value: bytes | None, headers: Any) -> bool:
        self.records.append((key, value))
        return True


class _BatchProducer:
    """aiokafka's batch API, recording what each submitted batch held, by partition."""

    def __init__(self) -> None:
        self.sent: list[tuple[bytes, bytes | None, int]] = []

    def create_batch(self) -> _Builder:
        return _Builder()

    async def send_batch(self, batch: _Builder, topic: str, *, partition: int) -> None:
        self.sent.extend((key, value, partition) for key, value in batch.records)


def test_save_all_writes_what_save_writes_in_the_same_order_per_partition() -> None:
    one, by_send = _tables()
    two, _ = _tables()
    batch = _BatchProducer()
    two.app = SimpleNamespace(producer=SimpleNamespace(_ensure_producer=lambda: batch))  # type: ignore[assignment]
    saves = []
    for i, sid in enumerate(("a", "b", "c", "d")):
        early, late = _state(sid, turns=4), _state(sid, turns=9)
        saves += [(None, early, i % 2, 10 + i, None), (early, late, i % 2, 20 + i, None)]
    for save in saves:
        asyncio.run(one.save(*save))
    written = asyncio.run(two.save_all(saves))
    assert written == len(by_send.sent) == len(batch.sent)
    for partition in (0, 1):
        assert [s for s in batch.sent if s[2] == partition] == [
            s for s in by_send.sent if s[2] == partition
        ]
    assert two.table.data == one.table.data
    for sid in "abcd":
        assert two.load(sid) == one.load(sid)
