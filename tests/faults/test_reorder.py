"""Events of a session arriving out of turn order within a small window: with
``MONITOR_REORDER_TURNS=R`` the worker holds them and the store equals the in-order replay."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from monitor.config import load_settings
from monitor.events import Event
from monitor.stream.produce import produce_events
from monitor.testing import generate_events

from .conftest import Rig, expected

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

REORDER_TURNS = 3


def _ended(events: list[Event]) -> list[Event]:
    """Every session closed by ``session_end``: the stream releases held events there (a replay
    also flushes at end of input, which a stream never reaches)."""
    last: dict[str, Event] = {}
    for e in events:
        last[e.session_id] = e
    out = list(events)
    for sid, e in last.items():
        if e.kind != "session_end":
            out.append(
                Event(f"{sid}-end", sid, e.turn + 1, e.ts + timedelta(seconds=1), "session_end")
            )
    return out


def shuffle_within(events: list[Event], window: int, seed: int) -> list[Event]:
    """Each session's events permuted inside consecutive blocks of ``window + 1`` positions, so no
    event arrives after one more than ``window`` turns newer; ``session_end`` stays last."""
    rng = random.Random(seed)
    slots: dict[str, list[int]] = {}
    for i, e in enumerate(events):
        slots.setdefault(e.session_id, []).append(i)
    out: list[Any] = list(events)
    for positions in slots.values():
        body = [events[i] for i in positions[:-1]]
        moved: list[Event] = []
        for start in range(0, len(body), window + 1):
            block = body[start : start + window + 1]
            rng.shuffle(block)
            moved += block
        for i, e in zip(positions[:-1], moved, strict=True):
            out[i] = e
    return out


def test_shuffle_is_out_of_order_within_the_window() -> None:
    events = _ended(generate_events(50, seed=21))
    shuffled = shuffle_within(events, REORDER_TURNS, seed=21)
    assert sorted(shuffled, key=lambda e: e.event_id) == sorted(events, key=lambda e: e.event_id)
    newest: dict[str, int] = {}
    late = 0
    for e in shuffled:
        top = newest.get(e.session_id, -1)
        assert e.turn >= top - REORDER_TURNS
        late += e.turn < top
        newest[e.session_id] = max(top, e.turn)
    assert late > len(events) // 10


def test_out_of_turn_events_give_the_in_order_flags(rig: Rig) -> None:
    events = _ended(generate_events(200, seed=22))
    shuffled = shuffle_within(events, REORDER_TURNS, seed=22)
    rig.overrides["reorder_turns"] = str(REORDER_TURNS)
    assert rig.settings.detect_config().reorder_turns == REORDER_TURNS
    # The reference: the events in turn order, detected without any reordering.
    in_order = load_settings({k: v for k, v in rig.env.items() if k != "MONITOR_REORDER_TURNS"})
    want_flags, want_sessions = expected(events, in_order)
    # Without the window the shuffled stream gives other flags: the test can tell.
    assert expected(shuffled, in_order)[0] != want_flags
    assert expected(shuffled, rig.settings) == (want_flags, want_sessions)
    rig.start()
    half = len(shuffled) // 2
    produce_events(shuffled[:half], rig.settings, batch=False)
    produce_events(shuffled[half:], rig.settings, batch=True)
    rig.wait_for(want_flags, want_sessions)
