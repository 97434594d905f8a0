"""The worker's provenance: each stored flag names the topic, partition and offset of the input
record that held its event, and each stored session the offsets its records span."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from monitor.events import Event, decode_record
from monitor.stream.produce import produce_events
from monitor.testing import generate_events

from .conftest import Rig, expected

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]


def _record_at(bootstrap: str, topic: str, partition: int, offset: int) -> bytes:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        for _ in range(40):
            for records in consumer.poll(timeout_ms=250, max_records=1).values():
                assert records[0].offset == offset
                value: bytes = records[0].value
                return value
    finally:
        consumer.close()
    raise AssertionError(f"no record at {topic}[{partition}]@{offset}")


def test_stored_flags_and_sessions_name_their_input_records(rig: Rig) -> None:
    events = generate_events(60, seed=21)
    want_flags, want_sessions = expected(events, rig.settings)
    rig.start()
    produce_events(events, rig.settings, batch=True)
    rig.wait_for(want_flags, want_sessions)
    topic = rig.settings.input_topic
    rows = rig.query("SELECT session_id, event_id, source FROM flags")
    assert rows and all(r[2] is not None for r in rows)
    spans: dict[str, Any] = dict(rig.query("SELECT session_id, sources FROM sessions"))
    for session_id, event_id, source in rows:
        assert source["topic"] == topic and set(source) == {"topic", "partition", "offset"}
        value = _record_at(rig.bootstrap, topic, source["partition"], source["offset"])
        held = [e.event_id for e in decode_record(value) if isinstance(e, Event)]
        assert event_id in held, (source, event_id)
        (span,) = spans[session_id]  # one session, one key, one partition: one span
        assert span["topic"] == topic and span["partition"] == source["partition"]
        assert span["first_offset"] <= source["offset"] <= span["last_offset"]
