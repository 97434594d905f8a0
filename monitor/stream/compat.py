"""Workaround for brokers whose ListOffsets(LATEST) under-reports (Tansu 0.6); off by default.

Faust rebuilds a table by reading its changelog up to the end offset the broker reports. Tansu
reports the last record *batch*'s base offset + 1 instead of the last record's offset + 1, so when
the final batch holds several records, recovery stops early and silently drops the newest state.
The fix asks the log itself: fetch from the reported end - 1 (the start of the last batch) and
take the fetch response's high watermark, which Tansu reports correctly. On Apache Kafka the
answer equals ListOffsets, so the workaround is harmless but costs one fetch per partition.

Enabled only by ``MONITOR_END_OFFSETS_BY_FETCH=true`` (the test harness sets it; ``transport.py``
wires it in); production code paths never depend on it. ``tests/stream/test_compat.py`` shows
the quirk and the fix.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition


async def fetched_end_offsets(
    bootstrap: list[str],
    reported: Mapping[Any, int | None],
    timeout_s: float = 10.0,
) -> dict[Any, int | None]:
    """End offsets confirmed by fetching: ``max(reported, fetch high watermark)`` per partition."""
    todo = {tp: off for tp, off in reported.items() if off}
    out: dict[Any, int | None] = dict(reported)
    if not todo:
        return out
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None
    )
    await consumer.start()
    try:
        tps = {TopicPartition(tp.topic, tp.partition): tp for tp in todo}
        consumer.assign(list(tps))
        for ktp, tp in tps.items():
            consumer.seek(ktp, max(0, (todo[tp] or 0) - 1))
        deadline = time.monotonic() + timeout_s
        pending = set(tps)
        while pending and time.monotonic() < deadline:
            await consumer.getmany(*pending, timeout_ms=200, max_records=1)
            for ktp in list(pending):
                high = consumer.highwater(ktp)
                if high is not None:
                    out[tps[ktp]] = max(high, todo[tps[ktp]] or 0)
                    pending.discard(ktp)
        return out
    finally:
        await consumer.stop()


__all__ = ["fetched_end_offsets"]
