"""The worker SIGKILLed three times at seeded random points of a large stream, restarted each
time: the store ends equal to an offline replay of the same events (nothing lost, nothing twice).

``KILL_STREAM_SESSIONS`` sessions of about 30 events each travel as batch records
(``monitor produce``'s encoding). Kill points are fractions of the expected flags already in the
store, drawn from a seeded generator, so a run is repeatable and the kills land mid-stream.
"""

from __future__ import annotations

import os
import random
import time

import pytest

from monitor.stream.produce import produce_events
from monitor.testing import generate_events

from .conftest import Rig, expected, kill, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

#: Sessions in the stream (about 30 events each; override with MONITOR_TEST_KILL_SESSIONS).
KILL_STREAM_SESSIONS = int(os.environ.get("MONITOR_TEST_KILL_SESSIONS", "3300"))
KILLS = 3
SEED = 8


def test_three_sigkills_at_random_points_lose_and_duplicate_nothing(rig: Rig) -> None:
    events = generate_events(KILL_STREAM_SESSIONS, seed=SEED)
    want_flags, want_sessions = expected(events, rig.settings)
    assert len(want_flags) > 1000
    rng = random.Random(SEED)
    # Kill points: increasing fractions of the final flag count, spread over the stream.
    points = sorted(rng.uniform(0.1, 0.85) for _ in range(KILLS))
    worker = rig.start()
    started = time.monotonic()
    produce_events(events, rig.settings, batch=True)
    seen: list[int] = []
    for point in points:
        # Past the previous kill too: each kill lands after the restarted worker made progress.
        target = max(int(point * len(want_flags)), seen[-1] + 50 if seen else 0)
        wait_until(lambda t=target: len(rig.flags()) >= t, rig, timeout_s=120)
        # A random extra delay moves the kill off the polling grid, into a run of records.
        time.sleep(rng.uniform(0.0, 0.5))
        kill(worker)
        seen.append(len(rig.flags()))
        worker = rig.start()
    assert all(0 < n < len(want_flags) for n in seen), f"a kill missed the stream: {seen}"
    rig.wait_for(want_flags, want_sessions, timeout_s=150)
    print(
        f"\n{len(events)} events, {len(want_flags)} flags, {len(want_sessions)} sessions,"
        f" kills at {seen} flags, {time.monotonic() - started:.1f}s"
    )
