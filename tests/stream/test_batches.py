"""Per-partition batches (``monitor.stream.batches``) with a recording aiokafka stand-in."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from monitor.stream.batches import Batches, add_keyed


class _Builder:
    """aiokafka's ``BatchBuilder`` contract: ``append`` returns None once ``limit`` bytes are
    used, except for the first record; a closed builder takes nothing."""

    def __init__(self, limit: int) -> None:
        self.limit, self.used, self.closed = limit, 0, False
        self.records: list[tuple[bytes | None, bytes | None, list[Any]]] = []

    def append(self, *, timestamp: Any, key: bytes | None, value: bytes | None,
               headers: list[Any]) -> object | None:  # fmt: skip
        size = len(key or b"") + len(value or b"")
        if self.closed or (self.records and self.used + size > self.limit):
            return None
        self.records.append((key, value, headers))
        self.used += size
        return object()

    def close(self) -> None:
        self.closed = True

    def size(self) -> int:
        return self.used

    def record_count(self) -> int:
        return len(self.records)


class _Accumulator:
    def __init__(self, batch_size: int) -> None:
        self._batch_size = batch_size


class _Producer:
    def __init__(self, limit: int = 64, partitions: int = 3) -> None:
        self.limit, self.partitions = limit, partitions
        self.submitted: list[tuple[str, int, _Builder]] = []
        self._message_accumulator = _Accumulator(limit)

    def create_batch(self) -> _Builder:
        return _Builder(self.limit)

    async def send_batch(self, builder: _Builder, topic: str, *, partition: int) -> Any:
        self.submitted.append((topic, partition, builder))
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.set_result(None)
        return future

    async def partitions_for(self, topic: str) -> set[int]:
        return set(range(self.partitions))

    def _partition(self, topic: str, partition: Any, key: Any, value: Any, skey: bytes | None,
                   svalue: Any) -> int:  # fmt: skip
        return sum(skey or b"") % self.partitions

    def sent(self) -> list[tuple[str, int, bytes | None, bytes | None]]:
        return [(t, p, k, v) for t, p, b in self.submitted for k, v, _ in b.records]


records = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 2), st.binary(max_size=40)),
    max_size=60,
)


@given(records)
def test_each_partition_gets_its_records_in_order_and_none_twice(
    added: list[tuple[str, int, bytes]],
) -> None:
    producer = _Producer()
    batches = Batches(producer)
    for i, (topic, partition, value) in enumerate(added):
        batches.add(topic, partition, b"k%d" % i, value, None)
    futures = asyncio.run(batches.submit())
    assert len(futures) == len(producer.submitted) and batches.records == len(added)
    want = [(t, p, b"k%d" % i, v) for i, (t, p, v) in enumerate(added)]
    for tp in {(t, p) for t, p, _ in added}:
        assert [r for r in producer.sent() if r[:2] == tp] == [r for r in want if r[:2] == tp]
    assert sorted(producer.sent()) == sorted(want)
    # Builders fill up to the producer's batch size; only a lone record may exceed it.
    for _, _, builder in producer.submitted:
        assert builder.used <= producer.limit or len(builder.records) == 1


def test_headers_travel_as_pairs_and_a_tombstone_as_none() -> None:
    producer = _Producer()
    batches = Batches(producer)
    batches.add("t", 0, b"k", None, {"monitor.reason": b"schema"})
    asyncio.run(batches.submit())
    [(_, _, builder)] = producer.submitted
    assert builder.records == [(b"k", None, [("monitor.reason", b"schema")])]


def test_keyed_records_go_where_the_partitioner_puts_their_key() -> None:
    class Topic:
        def get_topic_name(self) -> str:
            return "flags"

    producer = _Producer(limit=10_000)
    batches = Batches(producer)
    sends = [(Topic(), b"s%d" % (i % 5), b"v%d" % i, None) for i in range(20)]
    asyncio.run(add_keyed(producer, batches, sends))
    asyncio.run(batches.submit())
    for topic, partition, key, _ in producer.sent():
        assert topic == "flags" and partition == sum(key or b"") % 3
    assert [r[3] for r in producer.sent() if r[2] == b"s1"] == [b"v1", b"v6", b"v11", b"v16"]


groups = st.lists(
    st.lists(st.binary(max_size=30), min_size=1, max_size=4),
    max_size=25,
)


@given(groups, st.integers(0, 2))
def test_a_group_lands_in_one_batch_unless_larger_than_one(
    added: list[list[bytes]], partition: int
) -> None:
    producer = _Producer(limit=120)
    batches = Batches(producer)
    want = []
    for g, values in enumerate(added):
        records = [(b"g%d-%d" % (g, i), v) for i, v in enumerate(values)]
        batches.add_group("state", partition, records)
        want.extend(records)
    asyncio.run(batches.submit())
    assert [(k, v) for _, _, k, v in producer.sent()] == want  # in order, none lost or doubled
    where = {k: n for n, (_, _, b) in enumerate(producer.submitted) for k, _, _ in b.records}
    for g, values in enumerate(added):
        keys = [b"g%d-%d" % (g, i) for i in range(len(values))]
        size = sum(21 + len(k) + len(v) for k, v in zip(keys, values, strict=True))
        if size <= producer.limit:
            assert len({where[k] for k in keys}) == 1, (g, values)
