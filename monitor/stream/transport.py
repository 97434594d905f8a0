"""The worker's Kafka transport: Faust's aiokafka driver plus two consumer settings Faust fixes.

* ``fetch_max_wait_ms``: Faust builds its consumer with a fixed 1,500 ms fetch wait. A broker may
  hold a fetch that long when less than ``fetch_min_bytes`` is ready (Tansu holds every fetch the
  full wait), and a flag crosses two consumer hops (input -> detect, flags -> sink), so the wait
  bounds flag latency. The worker's default is Apache Kafka's own consumer default, 500 ms.
* ``end_offsets_by_fetch``: the Tansu end-offset workaround in ``compat.py`` (tests only).

Both are set on the consumer Faust creates, before it starts; everything else is Faust's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from monitor.stream.compat import fetched_end_offsets


def install(app: Any, *, fetch_max_wait_ms: int, end_offsets_by_fetch: bool = False) -> None:
    """Give ``app`` a Kafka transport whose worker consumer uses these settings."""
    from faust.transport.drivers import aiokafka as driver

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
        def _new_consumer_thread(self) -> Any:
            return WorkerConsumerThread(self, loop=self.loop, beacon=self.beacon)

    class WorkerTransport(driver.Transport):
        Consumer = WorkerConsumer

    app.transport = WorkerTransport(app.conf.broker_consumer, app)


__all__ = ["install"]
