"""Every event delivered twice (each copy late by a few records of its session, as a producer
retry after a lost ack can do), then the whole topic re-consumed by a fresh consumer group
(a new app id): the store still equals one offline replay of the events."""

from __future__ import annotations

import random
from typing import Any

import pytest

from monitor.events import Event, encode
from monitor.stream.produce import make_producer
from monitor.stream.topics import ensure_topics
from monitor.testing import generate_events, stop_pid

from .conftest import Rig, expected

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

#: A copy arrives after at most this many later events of its session (inside the core's
#: seen-id window of ``DetectConfig.max_seen_ids`` = 32).
MAX_COPY_DELAY = 8


def twice_late(events: list[Event], seed: int) -> list[Event]:
    """Each event, then its copy after 0..MAX_COPY_DELAY later events of the same session."""
    rng = random.Random(seed)
    out: list[Event] = []
    waiting: dict[str, list[tuple[int, Event]]] = {}
    for e in events:
        out.append(e)
        due = waiting.setdefault(e.session_id, [])
        for item in [d for d in due if d[0] <= 0]:
            out.append(item[1])
            due.remove(item)
        due[:] = [(n - 1, ev) for n, ev in due]
        due.append((rng.randint(0, MAX_COPY_DELAY), e))
        if due[-1][0] == 0:
            out.append(due.pop()[1])
    for due in waiting.values():
        out += [ev for _, ev in due]
    return out


def _send(rig: Rig, events: list[Event]) -> None:
    settings = rig.settings
    ensure_topics(settings, [settings.input_topic])
    producer: Any = make_producer(settings)
    try:
        for e in events:
            producer.send(settings.input_topic, key=e.session_id.encode(), value=encode(e))
        producer.flush()
    finally:
        producer.close()


def test_twice_delivered_then_reconsumed_by_a_fresh_group(rig: Rig) -> None:
    events = generate_events(150, seed=41)
    doubled = twice_late(events, seed=41)
    assert len(doubled) == 2 * len(events)
    assert doubled != [e for e in events for _ in (0, 1)]  # copies are not all adjacent
    want_flags, want_sessions = expected(events, rig.settings)
    # The copies do not change an offline replay either (the core drops them).
    assert expected(doubled, rig.settings) == (want_flags, want_sessions)
    first = rig.start()
    _send(rig, doubled)
    rig.wait_for(want_flags, want_sessions)
    stop_pid(first, timeout_s=15.0)
    # A fresh group (new app id: new offsets, empty tables) on the same topics. The store is
    # emptied, so every row must come back from the fresh group's own work: it re-detects the
    # whole input topic and its sink re-reads every flag record of both runs.
    rig.execute("TRUNCATE flags, sessions")
    rig.overrides["app_id"] = rig.name + "-fresh"
    rig.start()
    rig.wait_for(want_flags, want_sessions)
    count = rig.query("SELECT count(*), count(DISTINCT (session_id, signal, turn, key)) FROM flags")
    assert count == [(len(want_flags), len(want_flags))]
