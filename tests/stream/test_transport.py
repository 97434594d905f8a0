"""The worker's transport: the consumer fetch wait comes from settings, not Faust's constant.

The wait bounds flag latency (a flag crosses two consumer hops), so the check is made on what
the started consumer's fetcher sends to the broker, against the real test broker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from monitor.config import load_settings
from monitor.stream import transport


def _fetcher_setting(make_app: Callable[[], Any], name: str) -> int:
    """Attribute ``name`` of the fetcher of a started consumer of the app ``make_app`` builds."""

    async def run() -> int:
        app = make_app()
        thread: Any = app.consumer._thread
        consumer = thread._create_consumer(asyncio.get_running_loop())
        await consumer.start()
        try:
            value: int = getattr(consumer._fetcher, name)
            return value
        finally:
            await consumer.stop()

    return asyncio.run(run())


def _fetcher_wait(bootstrap: str, fetch_max_wait_ms: int | None) -> int:
    import faust

    def make_app() -> Any:
        app = faust.App("transport-test", broker=f"kafka://{bootstrap}", store="memory://")
        if fetch_max_wait_ms is not None:
            transport.install(app, fetch_max_wait_ms=fetch_max_wait_ms)
        return app

    return _fetcher_setting(make_app, "_fetch_max_wait_ms")


@pytest.mark.kafka
def test_started_consumer_fetches_with_the_configured_wait(tansu_broker: str) -> None:
    assert _fetcher_wait(tansu_broker, None) == 1500  # Faust's own constant: why this exists
    assert _fetcher_wait(tansu_broker, 120) == 120


@pytest.mark.kafka
def test_the_worker_fetches_at_most_the_configured_bytes_per_partition(tansu_broker: str) -> None:
    """``MONITOR_FETCH_MAX_BYTES`` reaches the fetcher of the worker's started consumer."""
    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.stream.app import create_app

    settings = load_settings(
        {
            "MONITOR_BROKER": f"kafka://{tansu_broker}",
            "MONITOR_FETCH_MAX_BYTES": "65536",
            "MONITOR_WEB_PORT": "0",
            "MONITOR_DB_URL": "sqlite://",
        }
    )
    engine = make_engine("sqlite://")
    try:
        size = _fetcher_setting(
            lambda: create_app(settings, make_sessionmaker(engine)).app,
            "_max_partition_fetch_bytes",
        )
    finally:
        engine.dispose()
    assert size == 65536
    assert load_settings({}).fetch_max_bytes == 1_048_576  # Faust's default, kept


def test_default_is_kafkas_consumer_default() -> None:
    assert load_settings({}).fetch_max_wait_ms == 500
    assert load_settings({"MONITOR_FETCH_MAX_WAIT_MS": "100"}).fetch_max_wait_ms == 100


class _Probe:
    """Stands in for the direct read of one offset and for the re-read seek."""

    def __init__(self, holds: bool | None) -> None:
        self.holds = holds
        self.seeks: list[int] = []
        self.committed: list[dict[Any, int]] = []


def _guarded_consumer(probe: _Probe) -> tuple[Any, Any]:
    """A worker consumer (never started) with the broker-facing calls replaced by ``probe``."""
    import faust
    from faust.types import TP

    app = faust.App("guard-test", broker="kafka://127.0.0.1:1", store="memory://")
    transport.install(app, fetch_max_wait_ms=500)
    consumer: Any = app.consumer
    tp = TP("events", 2)

    async def holds_record(tp: Any, offset: int) -> bool | None:
        return probe.holds

    async def seek(tp: Any, offset: int) -> None:
        probe.seeks.append(offset)

    async def commit_offsets(offsets: Any, start_new_transaction: bool = True) -> bool:
        probe.committed.append(dict(offsets))
        consumer._committed_offset.update(offsets)
        return True

    consumer._holds_record = holds_record
    consumer.seek = seek
    consumer._commit_offsets = commit_offsets
    return consumer, tp


def _ack(consumer: Any, tp: Any, *offsets: int) -> None:
    for offset in offsets:
        consumer._acked[tp].append(offset)
        consumer._acked_index[tp].add(offset)


def test_no_commit_past_a_record_that_was_dropped_before_its_ack() -> None:
    from faust.transport.drivers import aiokafka as driver

    async def run() -> None:
        probe = _Probe(holds=True)
        consumer, tp = _guarded_consumer(probe)
        consumer._committed_offset[tp] = 51
        _ack(consumer, tp, 52, 53)  # 51 was fetched, never delivered, never acknowledged
        # Faust on its own commits 54 here: its guard only stops a hole of two or more.
        assert driver.Consumer._new_offset(consumer, tp) == 54
        _ack(consumer, tp, 52, 53)  # (its _new_offset consumed them)
        await consumer._commit_tps([tp], True)
        assert probe.committed == [] and probe.seeks == [51]  # read again from 51
        await consumer._commit_tps([tp], True)
        assert probe.seeks == [51]  # not again at once: the re-read is under way
        _ack(consumer, tp, 51)  # the re-read delivered it
        await consumer._commit_tps([tp], True)
        assert probe.committed == [{tp: 54}]

    asyncio.run(run())


def test_commits_past_an_offset_that_holds_no_record() -> None:
    async def run() -> None:
        probe = _Probe(holds=False)  # e.g. a transaction marker at the committed offset
        consumer, tp = _guarded_consumer(probe)
        consumer._committed_offset[tp] = 51
        _ack(consumer, tp, 52, 53)
        await consumer._commit_tps([tp], True)
        assert probe.seeks == [] and probe.committed == [{tp: 54}]

    asyncio.run(run())


def test_in_order_acks_commit_as_before() -> None:
    async def run() -> None:
        probe = _Probe(holds=True)
        consumer, tp = _guarded_consumer(probe)
        consumer._committed_offset[tp] = 51
        _ack(consumer, tp, 51, 52, 53)
        await consumer._commit_tps([tp], True)
        assert probe.seeks == [] and probe.committed == [{tp: 54}]

    asyncio.run(run())


@pytest.mark.kafka
def test_record_at_reads_the_offset_itself(
    tansu_broker: str, one_partition_topic: Callable[[str], str]
) -> None:
    from kafka import KafkaProducer

    topic = one_partition_topic("probe")
    producer = KafkaProducer(bootstrap_servers=tansu_broker)
    for i in range(3):
        producer.send(topic, value=b"%d" % i, partition=0)
    producer.flush()
    producer.close()

    async def run() -> tuple[bool | None, bool | None]:
        servers = [tansu_broker]
        here = await transport.record_at(servers, {}, topic, 0, 1)
        beyond = await transport.record_at(servers, {}, topic, 0, 3, timeout_s=1.0)
        return here, beyond

    assert asyncio.run(run()) == (True, None)


def test_a_failing_probe_holds_the_commit_back() -> None:
    async def run() -> None:
        probe = _Probe(holds=True)
        consumer, tp = _guarded_consumer(probe)

        async def broken(tp: Any, offset: int) -> bool | None:
            raise ConnectionError("broker away")

        consumer._holds_record = broken
        consumer._committed_offset[tp] = 51
        _ack(consumer, tp, 52, 53)
        assert await consumer._commit_tps([tp], True) is False
        assert probe.committed == [] and probe.seeks == []

    asyncio.run(run())


def _queued_after_resume(install: bool, suspend_first: bool) -> int:
    """Queue one record in a stream queue, resume flow control, count what is left."""
    import faust

    async def run() -> int:
        app = faust.App("flow-test", broker="kafka://127.0.0.1:1", store="memory://")
        if install:
            transport.install(app, fetch_max_wait_ms=500)
        app.flow_control.resume()  # running: flow is active, as during table recovery
        queue = app.channel().queue
        if suspend_first:
            app.flow_control.suspend()
        queue.put_nowait(b"record")
        app.flow_control.resume()  # what Faust calls when recovery completes
        return int(queue.qsize())

    return asyncio.run(run())


def test_resuming_active_flow_keeps_queued_records() -> None:
    assert _queued_after_resume(install=False, suspend_first=False) == 0  # Faust: dropped
    assert _queued_after_resume(install=True, suspend_first=False) == 1


def test_resuming_after_a_suspension_still_clears() -> None:
    # Records queued before a rebalance are read again from the committed offsets.
    assert _queued_after_resume(install=True, suspend_first=True) == 0


def test_a_partition_never_committed_is_sought_to_its_first_offset() -> None:
    async def run() -> None:
        probe = _Probe(holds=True)
        consumer, tp = _guarded_consumer(probe)
        committed_tp = type(tp)("events", 3)

        async def seek_to_committed() -> dict[Any, int | None]:
            return {tp: None, committed_tp: 40}  # Faust seeks only what has a commit

        async def earliest_offsets(*tps: Any) -> dict[Any, int]:
            return {t: 7 for t in tps}

        consumer.seek_to_committed = seek_to_committed
        consumer.earliest_offsets = earliest_offsets
        consumer.assignment = lambda: {tp, committed_tp}
        consumer.app.topics.acks_enabled_for = lambda topic: True
        await consumer.perform_seek()
        assert probe.seeks == [7]  # read again from the start, where "earliest" begins
        assert consumer._committed_offset[tp] == 7  # and guarded from there
        assert consumer._committed_offset[committed_tp] == 40

    asyncio.run(run())
