"""Two workers in one group, one SIGKILLed mid-stream: its partitions move to the survivor, which
recovers their state from the changelog, and the store ends equal to an offline replay."""

from __future__ import annotations

import pytest

from monitor.stream.produce import produce_events
from monitor.testing import generate_events

from .conftest import Rig, expected, kill, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]


def test_killed_workers_partitions_move_with_their_state(rig: Rig) -> None:
    events = generate_events(200, seed=31)
    settings = rig.settings
    everything = set(range(rig.partitions))
    rig.start()
    rig.start()
    rig.wait_ready(0)
    rig.wait_ready(1)

    def split() -> bool:
        a, b = rig.assigned_input_partitions(0), rig.assigned_input_partitions(1)
        return bool(a and b and not a & b and a | b == everything)

    wait_until(split, rig)
    victim = rig.assigned_input_partitions(1)
    # Sessions are split mid-way: their later events need the state built from the earlier ones.
    half = len(events) // 2
    produce_events(events[:half], settings, batch=True)
    rig.wait_for(*expected(events[:half], settings))
    kill(rig.procs[1])
    produce_events(events[half:], settings, batch=True)
    want_flags, want_sessions = expected(events, settings)
    # Flags that need the first half's state of the victim's sessions exist.
    assert set(want_flags) - set(expected(events[half:], settings)[0])
    rig.wait_for(want_flags, want_sessions, timeout_s=90)
    wait_until(lambda: rig.assigned_input_partitions(0) == everything, rig)
    assert victim and victim <= rig.assigned_input_partitions(0)
