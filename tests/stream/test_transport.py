"""The worker's transport: the consumer fetch wait comes from settings, not Faust's constant.

The wait bounds flag latency (a flag crosses two consumer hops), so the check is made on what
the started consumer's fetcher sends to the broker, against the real test broker.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from monitor.config import load_settings
from monitor.stream import transport


def _fetcher_wait(bootstrap: str, fetch_max_wait_ms: int | None) -> int:
    import faust

    async def run() -> int:
        app = faust.App("transport-test", broker=f"kafka://{bootstrap}", store="memory://")
        if fetch_max_wait_ms is not None:
            transport.install(app, fetch_max_wait_ms=fetch_max_wait_ms)
        thread: Any = app.consumer._thread
        consumer = thread._create_consumer(asyncio.get_running_loop())
        await consumer.start()
        try:
            wait: int = consumer._fetcher._fetch_max_wait_ms
            return wait
        finally:
            await consumer.stop()

    return asyncio.run(run())


@pytest.mark.kafka
def test_started_consumer_fetches_with_the_configured_wait(tansu_broker: str) -> None:
    assert _fetcher_wait(tansu_broker, None) == 1500  # Faust's own constant: why this exists
    assert _fetcher_wait(tansu_broker, 120) == 120


def test_default_is_kafkas_consumer_default() -> None:
    assert load_settings({}).fetch_max_wait_ms == 500
    assert load_settings({"MONITOR_FETCH_MAX_WAIT_MS": "100"}).fetch_max_wait_ms == 100
