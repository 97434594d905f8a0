"""The worker's Kafka transport: Faust's aiokafka driver with what the worker needs changed.

Settings Faust fixes:

* ``fetch_max_wait_ms``: Faust builds its consumer with a fixed 1,500 ms fetch wait. A broker may
  hold a fetch that long when less than ``fetch_min_bytes`` is ready (Tansu holds every fetch the
  full wait), and a flag crosses two consumer hops (input -> detect, flags -> sink), so the wait
  bounds flag latency. The worker's default is Apache Kafka's own consumer default, 500 ms.
* ``end_offsets_by_fetch``: the Tansu end-offset workaround in ``compat.py`` (tests only).

And three changes so that no record is committed without being processed (the full story is
in schemas/stream.md, "Records Faust drops at start-up"):

* flow control empties the stream queues on resume only after a real suspension
  (``keep_queues_on_resume``): Faust resumes it at the end of table recovery, after the seek to
  the committed offsets, which used to drop whatever was queued in between;
* a partition with no committed offset is sought to its first offset (Faust skips it);
* a partition is committed only when the record at its committed offset is acknowledged
  (Faust lets one missing record through, and checks nothing before the first commit). When
  later records are acknowledged and that one is not, it was dropped: the partition is read
  again from it (the detect agent skips what its state already holds, the sinks write
  idempotently). A committed offset with no record behind it (a transaction marker, a
  compacted record) is recognised by reading that offset directly, and committed past.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition

from monitor.stream.compat import fetched_end_offsets

log = logging.getLogger(__name__)

#: Least time between two re-reads of a partition for the same missing record (seconds).
REREAD_EVERY_S: Final = 5.0


async def record_at(
    servers: list[str], auth: Mapping[str, Any], topic: str, partition: int, offset: int,
    timeout_s: float = 10.0,
) -> bool | None:  # fmt: skip
    """Whether ``offset`` holds a record: ``False`` when a fetch from it starts later (a
    transaction marker or a compacted record), ``None`` when the broker did not answer in time."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=servers, enable_auto_commit=False, group_id=None, **auth
    )
    await consumer.start()
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = await consumer.getmany(tp, timeout_ms=200, max_records=1)
            for records in got.values():
                first: int = records[0].offset
                return first == offset
        return None
    finally:
        await consumer.stop()


def keep_queues_on_resume(app: Any) -> None:
    """Stop Faust from emptying its stream queues when flow control resumes while active.

    ``FlowControlEvent.resume`` always clears the queues. Faust calls it when table recovery
    completes, *after* it has sought the partitions to their committed offsets and while the
    fetcher is already delivering (flow was resumed to read the changelogs): records queued in
    between are dropped and nothing reads them again. Clearing is right only after a real
    suspension (what was queued before it is read again from the committed offsets), so that
    is the only time this version clears.
    """
    from mode.utils.queues import FlowControlEvent

    class KeepingFlowControl(FlowControlEvent):
        def resume(self) -> None:
            suspended = self._suspend.is_set()
            self._suspend.clear()
            self._resume.set()
            if suspended:
                self.clear()

    # Before any stream queue exists: each registers with the app's flow control when made.
    app.__dict__["flow_control"] = KeepingFlowControl(loop=app.loop)


def install(app: Any, *, fetch_max_wait_ms: int, end_offsets_by_fetch: bool = False) -> None:
    """Give ``app`` a Kafka transport whose worker consumer uses these settings, and flow
    control that keeps queued records (``keep_queues_on_resume``)."""
    from faust.transport.drivers import aiokafka as driver

    keep_queues_on_resume(app)

    class WorkerConsumerThread(driver.AIOKafkaConsumerThread):
        def _create_worker_consumer(self, transport: Any) -> Any:
            consumer = super()._create_worker_consumer(transport)
            # aiokafka reads this when it starts its fetcher; Faust passes a constant.
            consumer._fetch_max_wait_ms = fetch_max_wait_ms
            return consumer

        async def _highwaters(self, partitions: Iterable[Any]) -> Mapping[Any, int]:
            reported = await super()._highwaters(list(partitions))
            if not end_offsets_by_fetch:
                return reported
            transport: Any = self.transport
            servers = driver.server_list(transport.url, transport.default_port)
            fixed = await fetched_end_offsets(servers, reported)
            return {tp: off for tp, off in fixed.items() if off is not None}

    class WorkerConsumer(driver.Consumer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Per partition, so bounded by the assignment: (offset, holds a record) as read
            # directly, and (offset, when) of the last re-read.
            self._probed: dict[Any, tuple[int, bool | None]] = {}
            self._reread: dict[Any, tuple[int, float]] = {}

        def _new_consumer_thread(self) -> Any:
            return WorkerConsumerThread(self, loop=self.loop, beacon=self.beacon)

        async def perform_seek(self) -> None:
            await super().perform_seek()
            # A partition with no committed offset yet is not sought at all (aiokafka has no
            # offset to seek it to), so Faust's premise, that whatever it dropped before this
            # point is read again from the committed offset, fails for it. Seek it to its first
            # offset (where auto_offset_reset "earliest" reads from), which then stands in for
            # the committed offset in the guard below.
            unknown = [tp for tp in self.assignment()
                       if self._committed_offset[tp] is None
                       and self.app.topics.acks_enabled_for(tp.topic)]  # fmt: skip
            if unknown:
                starts = await self.earliest_offsets(*unknown)
                for tp in unknown:
                    start = starts.get(tp)
                    if self._committed_offset[tp] is None and start is not None:
                        self._committed_offset[tp] = start
                        await self.seek(tp, start)

        async def _commit_tps(self, tps: Iterable[Any], start_new_transaction: bool) -> bool:
            ready = [tp for tp in tps if await self._safe_head_acknowledged(tp)]
            return bool(await super()._commit_tps(ready, start_new_transaction))

        async def _safe_head_acknowledged(self, tp: Any) -> bool:
            # A failed probe or seek (a stopping consumer, a broker away) holds this
            # partition's commit back; it is tried again at the next commit.
            try:
                return await self._head_acknowledged(tp)
            except Exception as exc:
                log.warning("holding back the commit of %s[%d]: %r", tp.topic, tp.partition, exc)
                return False

        async def _head_acknowledged(self, tp: Any) -> bool:
            """True when nothing unacknowledged stands between ``tp``'s committed offset and
            its acknowledged records; otherwise read the partition again from that offset."""
            committed = self._committed_offset[tp]
            if committed is None or not self._acked[tp] or committed in self._acked_index[tp]:
                return True
            probed = self._probed.get(tp)
            if probed is None or probed[0] != committed:
                probed = (committed, await self._holds_record(tp, committed))
                self._probed[tp] = probed
            if probed[1] is False:
                return True  # nothing there to wait for: commit past it, as Faust would
            now = time.monotonic()
            last_offset, last_at = self._reread.get(tp, (-1, 0.0))
            if last_offset != committed or now - last_at >= REREAD_EVERY_S:
                self._reread[tp] = (committed, now)
                log.warning(
                    "%s[%d] offset %d was never acknowledged while later records were;"
                    " reading the partition again from it",
                    tp.topic,
                    tp.partition,
                    committed,
                )
                await self.seek(tp, committed)
            return False

        async def _holds_record(self, tp: Any, offset: int) -> bool | None:
            transport: Any = self.transport
            conf = self.app.conf
            return await record_at(
                driver.server_list(transport.url, transport.default_port),
                driver.credentials_to_aiokafka_auth(conf.broker_credentials, conf.ssl_context),
                tp.topic,
                tp.partition,
                offset,
            )

    class WorkerTransport(driver.Transport):
        Consumer = WorkerConsumer

    app.transport = WorkerTransport(app.conf.broker_consumer, app)


__all__ = ["install"]
