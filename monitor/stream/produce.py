"""``monitor produce FILE...``: publish logs to the input topic, keyed by session id.

Events are read through the adapters (any supported log format, or normalised JSONL) and sent
as *batch records*: a JSON array of consecutive events of one session (``events.encode_batch``).
A batch is closed when it reaches ``max_events`` or ``max_bytes``, and at the end of input, so a
session's events keep their order (one key, one partition, batches sent in order). The worker
processes a batch record for about the cost of one single-event record, which is where most of
its throughput comes from; ``batch=False`` sends one event per record instead.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from monitor.adapters.files import FATAL_REASONS
from monitor.config import Settings
from monitor.detect.config import DetectConfig
from monitor.events import MAX_EVENT_BYTES, Event, encode

#: Batch caps: events per record, and bytes per record (well under ``MAX_BATCH_BYTES``).
#: Events per record stay within the core's seen-id window (``DetectConfig.max_seen_ids``), so a
#: record a producer retry duplicated is recognised event by event. 32 events per record already
#: put Faust's per-record cost far below the core's per-event cost.
MAX_BATCH_EVENTS: Final = DetectConfig().max_seen_ids
MAX_BATCH_BYTES: Final = 512 * 1024
#: Sessions buffered at once; beyond this the largest pending batch is sent early.
MAX_PENDING_SESSIONS: Final = 10_000
#: Producer linger (ms): lets the client group records per partition into one request.
LINGER_MS: Final = 5


@dataclass
class ProduceStats:
    """What ``produce_paths`` did. ``problems`` counts unusable input lines by reason."""

    events: int = 0
    records: int = 0
    bytes: int = 0
    seconds: float = 0.0
    problems: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    #: Problems about whole files, and how many of them mean an input was not read at all.
    file_problems: list[Any] = field(default_factory=list)
    fatal: int = 0

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0


class Batcher:
    """Groups encoded events into per-session batch records (pure; ``add`` returns records due).

    A record is ``(session_id, value)``; ``value`` is one encoded event when the batch holds
    one, else a JSON array of them.
    """

    def __init__(
        self,
        max_events: int = MAX_BATCH_EVENTS,
        max_bytes: int = MAX_BATCH_BYTES,
        max_sessions: int = MAX_PENDING_SESSIONS,
    ) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_sessions = max_sessions
        self._pending: dict[str, list[bytes]] = {}
        self._sizes: dict[str, int] = {}

    def add(self, session_id: str, encoded: bytes) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        size = self._sizes.get(session_id, 0)
        if session_id in self._pending and size + len(encoded) + 1 > self.max_bytes:
            out.append(self._take(session_id))
        self._pending.setdefault(session_id, []).append(encoded)
        self._sizes[session_id] = self._sizes.get(session_id, 0) + len(encoded) + 1
        if len(self._pending[session_id]) >= self.max_events:
            out.append(self._take(session_id))
        elif len(self._pending) > self.max_sessions:
            out.append(self._take(max(self._sizes, key=self._sizes.__getitem__)))
        return out

    def flush(self) -> list[tuple[str, bytes]]:
        return [self._take(sid) for sid in list(self._pending)]

    def _take(self, session_id: str) -> tuple[str, bytes]:
        items = self._pending.pop(session_id)
        self._sizes.pop(session_id, None)
        if len(items) == 1:
            return session_id, items[0]
        return session_id, b"[" + b",".join(items) + b"]"


def make_producer(settings: Settings, **overrides: Any) -> Any:
    """A kafka-python producer for the input topic (acks from all in-sync replicas)."""
    from kafka import KafkaProducer

    from monitor.stream.kafka import kafka_python_config

    config: dict[str, Any] = {
        **kafka_python_config(settings),
        "acks": "all",
        "linger_ms": LINGER_MS,
        "max_request_size": 2 * MAX_BATCH_BYTES + MAX_EVENT_BYTES,
        "retries": 5,
    }
    config.update(overrides)
    return KafkaProducer(**config)


def produce_events(
    events: Iterable[Any],
    settings: Settings,
    batch: bool = True,
    producer: Any = None,
    stats: ProduceStats | None = None,
) -> ProduceStats:
    """Publish adapter items (``Event`` or ``Problem``) to ``settings.input_topic``."""
    from monitor.stream.topics import ensure_topics

    stats = stats or ProduceStats()
    own = producer is None
    if own:
        ensure_topics(settings, [settings.input_topic])
        producer = make_producer(settings)
    topic = settings.input_topic
    batcher = Batcher(max_events=MAX_BATCH_EVENTS if batch else 1)
    started = time.perf_counter()

    def send(records: list[tuple[str, bytes]]) -> None:
        for session_id, value in records:
            producer.send(topic, key=session_id.encode("utf-8", "surrogatepass"), value=value)
            stats.records += 1
            stats.bytes += len(value)

    try:
        for item in events:
            if not isinstance(item, Event):
                skipped = getattr(item, "severity", "") == "skipped"
                bucket = stats.skipped if skipped else stats.problems
                reason = getattr(item, "reason", "unknown")
                bucket[reason] += 1
                if not skipped and getattr(item, "line", None) == 0:
                    stats.file_problems.append(item)
                    stats.fatal += reason in FATAL_REASONS
                continue
            stats.events += 1
            send(batcher.add(item.session_id, encode(item)))
        send(batcher.flush())
        producer.flush()
    finally:
        if own:
            producer.close()
    stats.seconds += time.perf_counter() - started
    return stats


def produce_paths(
    paths: Sequence[str], settings: Settings, fmt: str | None = None, batch: bool = True
) -> ProduceStats:
    """Publish the events of log files (any adapter format; ``fmt`` forces one)."""
    from monitor.adapters import expand

    return produce_inputs(list(expand(paths)), settings, fmt=fmt, batch=batch)


def produce_inputs(
    inputs: Sequence[Any], settings: Settings, fmt: str | None = None, batch: bool = True
) -> ProduceStats:
    """Publish the events of ``adapters.expand`` output (files and problems)."""
    from monitor.adapters import read_located

    items = (item for _, _, item in read_located(inputs, fmt))
    return produce_events(items, settings, batch=batch)
