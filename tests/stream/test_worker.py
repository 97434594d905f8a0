"""The worker against a real broker (Tansu) and Postgres: the store equals ``monitor replay``.

Each test runs ``python -m monitor.stream`` subprocesses with their own topics and group on the
session's broker, feeds events with ``monitor produce``'s code, and waits (bounded) until the
store holds exactly the rows an offline replay of the same events writes.
"""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from kafka import KafkaConsumer, KafkaProducer

from monitor.detect import DetectConfig, detect_all, survival_counts
from monitor.events import MAX_EVENT_BYTES, Compaction, Event, Tool, encode, encode_batch
from monitor.replay import Replay
from monitor.stream.deadletter import HEADER_INDEX, HEADER_REASON, HEADER_SIZE, MAX_PAYLOAD_BYTES
from monitor.stream.produce import make_producer, produce_events
from monitor.stream.topics import ensure_topics
from monitor.testing import free_port, generate_events, read_topic, stop_pid

from .conftest import Rig, expected

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]


def test_stream_equals_replay(rig: Rig) -> None:
    events = generate_events(150, seed=11)
    want_flags, want_sessions = expected(events, rig.settings)
    assert want_flags and want_sessions  # the generated set exercises the detectors
    rig.start()
    # Half as batch records, half as single-event records: both encodings are first-class.
    half = len(events) // 2
    produce_events(events[:half], rig.settings, batch=True)
    produce_events(events[half:], rig.settings, batch=False)
    rig.wait_for(want_flags, want_sessions)


def test_survival_flags_and_counts_stream_equal_replay(rig: Rig) -> None:
    rig.overrides["survival"] = "true"
    events = generate_events(60, seed=14, summaries=True)
    want_flags, want_sessions = expected(events, rig.settings)
    assert any(f[1] == "dropped_item" for f in want_flags)
    replay = Replay(cfg=rig.settings.detect_config()).run(events)
    want_counts = {m.session_id: survival_counts(m) for m in replay.flagged_metas()}
    rig.start()
    produce_events(events, rig.settings, batch=True)
    rig.wait_for(want_flags, want_sessions)
    rows = rig.query("SELECT session_id, survival, dropped_flags FROM sessions")
    got = {sid: survival or {} for sid, survival, _ in rows}
    assert got == want_counts
    assert sum(n for *_, n in rows) == sum(f[1] == "dropped_item" for f in want_flags)


def test_semantic_stage_stream_equals_replay(rig: Rig) -> None:
    # The semantic stage embeds in the worker's process and in replay's: the same flags, with
    # the semantic model's scores (which differ from the default model's, so the worker is
    # shown to have read with the stage).
    rig.overrides["semantic"] = "true"
    events = generate_events(12, seed=15)
    want_flags, want_sessions = expected(events, rig.settings)

    def scores(cfg: Any) -> dict[tuple[str, int], float]:
        return {
            (f.session_id, f.turn): f.evidence["score"]
            for f in detect_all(events, cfg)
            if f.signal == "restated_instruction"
        }

    want_scores = scores(rig.settings.detect_config())
    assert want_scores and want_scores != scores(DetectConfig())
    rig.start()
    produce_events(events, rig.settings, batch=True)
    rig.wait_for(want_flags, want_sessions)
    rows = rig.query(
        "SELECT session_id, turn, evidence FROM flags WHERE signal = 'restated_instruction'"
    )
    assert {(sid, turn): ev["score"] for sid, turn, ev in rows} == want_scores


def test_sigkill_mid_stream_then_restart(rig: Rig) -> None:
    # With the survival check on, so its ledger too must come back from the changelog.
    rig.overrides["survival"] = "true"
    events = generate_events(150, seed=12, summaries=True)
    want_flags, want_sessions = expected(events, rig.settings)
    worker = rig.start()
    # Single-event records; the last third is produced only after the kill, so the kill always
    # lands mid-stream however fast the worker drains what it was given.
    cut = len(events) * 2 // 3
    produce_events(events[:cut], rig.settings, batch=False)
    deadline = time.monotonic() + 60
    while len(rig.flags()) < len(want_flags) // 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    got_before_kill = len(rig.flags())
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(10)
    assert 0 < got_before_kill < len(want_flags), "the kill did not land mid-stream"
    produce_events(events[cut:], rig.settings, batch=False)
    rig.start()
    rig.wait_for(want_flags, want_sessions)


class _Twice:
    """A producer that appends every record twice in a row (what a producer retry after a lost
    acknowledgement does)."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer

    def send(self, topic: str, key: bytes, value: bytes) -> None:
        self.producer.send(topic, key=key, value=value)
        self.producer.send(topic, key=key, value=value)

    def flush(self) -> None:
        self.producer.flush()


def test_every_event_delivered_twice(rig: Rig) -> None:
    events = generate_events(120, seed=13)
    want_flags, want_sessions = expected(events, rig.settings)
    settings = rig.settings
    ensure_topics(settings, [settings.input_topic])
    producer = make_producer(settings)
    rig.start()
    half = len(events) // 2
    produce_events(events[:half], settings, batch=True, producer=_Twice(producer))
    produce_events(events[half:], settings, batch=False, producer=_Twice(producer))
    producer.close()
    rig.wait_for(want_flags, want_sessions)


def test_malformed_records_are_dead_lettered(rig: Rig) -> None:
    rig.partitions = 3  # not the test broker's auto-create default (4): see the topic check
    events = generate_events(60, seed=14)
    # Two valid events that travel in a batch record around one bad element.
    extra = generate_events(1, seed=99, turns=2, prefix="extra")[:2]
    want_flags, want_sessions = expected(events + extra, rig.settings)
    bad_batch_element = b'{"event_id": "x", "kind": "tool_call"}'
    oversized = b'{"text": "' + b"a" * MAX_EVENT_BYTES + b'"}'
    bad: list[tuple[bytes, bytes, str]] = [  # key, value, expected reason
        (b"k1", b"not json at all", "not_json"),
        (b"k2", b"", "not_json"),
        (b"k3", b'{"event_id": 7}', "schema"),
        (b"k4", oversized, "oversized"),
    ]
    port = free_port()
    rig.overrides.update(web_port=str(port), web_host="127.0.0.1")
    settings = rig.settings
    ensure_topics(settings, [settings.input_topic])
    producer = KafkaProducer(bootstrap_servers=rig.bootstrap, max_request_size=4 * MAX_EVENT_BYTES)
    rig.start()
    step = len(events) // (len(bad) + 1)
    for i, event in enumerate(events):
        if i % step == 0 and i // step < len(bad):
            key, value, _ = bad[i // step]
            producer.send(settings.input_topic, key=key, value=value)
        producer.send(settings.input_topic, key=event.session_id.encode(), value=encode(event))
    batch = encode_batch(extra[:1])[:-1] + b"," + bad_batch_element + b"," + encode(extra[1]) + b"]"
    producer.send(settings.input_topic, key=extra[0].session_id.encode(), value=batch)
    producer.flush()
    producer.close()

    rig.wait_for(want_flags, want_sessions)
    letters = read_topic(rig.bootstrap, settings.deadletter_topic, len(bad) + 1)
    assert len(letters) == len(bad) + 1
    # The worker creates the topic itself (brokers may not auto-create), with its partitions.
    consumer = KafkaConsumer(bootstrap_servers=rig.bootstrap)
    try:
        partitions = consumer.partitions_for_topic(settings.deadletter_topic)
    finally:
        consumer.close()
    assert partitions == set(range(settings.partitions))
    by_value = {m.value: dict(m.headers) for m in letters}
    for _, value, reason in bad:
        kept = value[:MAX_PAYLOAD_BYTES]
        assert by_value[kept][HEADER_REASON] == reason.encode()
        if kept != value:
            assert by_value[kept][HEADER_SIZE] == str(len(value)).encode()
    element = by_value[bad_batch_element]
    assert element[HEADER_REASON] == b"schema"
    assert element[HEADER_INDEX] == b"1"
    # ... and the counter saw each one, by reason.
    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    counts = dict(re.findall(r'^compaction_monitor_dead_letters_total\{reason="(\w+)"\} (\S+)$',
                             page, re.MULTILINE))  # fmt: skip
    assert counts == {"not_json": "2.0", "schema": "2.0", "oversized": "1.0"}


def test_two_workers_share_partitions(rig: Rig) -> None:
    events = generate_events(150, seed=15)
    half = len(events) // 2
    settings = rig.settings
    rig.start()
    produce_events(events[:half], settings, batch=True)
    rig.wait_for(*expected(events[:half], settings))
    # A second worker joins: partitions move, and their state moves with them (changelog).
    rig.start()
    rig.wait_ready(1)
    produce_events(events[half:], settings, batch=True)
    rig.wait_for(*expected(events, settings))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        a, b = rig.assigned_input_partitions(0), rig.assigned_input_partitions(1)
        if a and b and not a & b and a | b == set(range(rig.partitions)):
            return
        time.sleep(0.5)
    pytest.fail(f"partitions not shared: {a} / {b}\n{rig.tail()}")


def _phases(sessions: int) -> tuple[list[Event], list[Event]]:
    """Phase 1: each session calls a tool, is compacted and reports an incident (which makes
    its row visible in the store). Phase 2: each repeats the call, which is flagged only if the
    worker still knows phase 1's state."""
    t0 = datetime(2026, 2, 1, tzinfo=UTC)
    one: list[Event] = []
    two: list[Event] = []
    for i in range(sessions):
        sid = f"recover-{i:03d}"
        call = Tool(name="Read", arguments={"path": f"src/{i}.py"})

        def ev(turn: int, kind: Any, sid: str = sid, **kw: Any) -> Event:
            return Event(f"{sid}-{turn}", sid, turn, t0 + timedelta(seconds=turn), kind, **kw)

        one += [
            ev(0, "tool_call", tool=call),
            ev(1, "compaction", compaction=Compaction()),
            ev(2, "incident"),
        ]
        two.append(ev(3, "tool_call", tool=call))
    return one, two


def test_restart_recovers_state_from_changelog(rig: Rig) -> None:
    one, two = _phases(60)
    settings = rig.settings
    first = rig.start()
    produce_events(one, settings, batch=False)
    _, sessions_one = expected(one, settings)
    rig.wait_for([], sessions_one)
    stop_pid(first, timeout_s=15.0)
    rig.start()  # rebuilds the tables from their changelog topic
    produce_events(two, settings, batch=False)
    want_flags, want_sessions = expected(one + two, settings)
    assert len(want_flags) == 60
    rig.wait_for(want_flags, want_sessions)


def test_database_outage_delays_writes_and_loses_nothing(rig: Rig) -> None:
    events = generate_events(80, seed=16)
    want_flags, want_sessions = expected(events, rig.settings)
    rig.start()
    rig.wait_ready(0)
    dbname = rig.db_url.rsplit("/", 1)[1]
    admin = psycopg.connect(
        "host=127.0.0.1 port=5432 user=postgres dbname=postgres", autocommit=True
    )
    try:
        admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (dbname,)
        )
        produce_events(events, rig.settings, batch=True)
        deadline = time.monotonic() + 60
        while "write failed" not in rig.log_path(0).read_text(errors="replace"):
            assert time.monotonic() < deadline, rig.tail()
            time.sleep(0.5)
    finally:
        admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
        admin.close()
    rig.wait_for(want_flags, want_sessions)
