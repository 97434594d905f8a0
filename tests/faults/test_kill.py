"""The worker SIGKILLed three times at seeded random points of a large stream, restarted each
time: the store ends equal to an offline replay of the same events (nothing lost, nothing twice).

``KILL_STREAM_SESSIONS`` sessions of about 30 events each travel as batch records
(``monitor produce``'s encoding). The stream goes out in ``KILLS + 1`` parts, the next only after
a kill, so every kill lands before the end of the stream however fast the worker is. Each kill
waits for a seeded random fraction of its part's flags to reach the store, then a seeded random
delay. A part goes out only once the current worker is ready, so its flags arrive while it is
processed rather than in one flush after a group join; whether a kill lands inside its part's
run of records still depends on the worker's pace (three runs of 3,300 sessions: all nine did).
Sessions interleave, so nearly every session has events on both sides of each kill: their later
events need the state saved before it.
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
    bounds = [len(events) * i // (KILLS + 1) for i in range(KILLS + 2)]
    # Flags an offline replay of each prefix writes: the store's count once that prefix is in.
    before = [len(expected(events[:end], rig.settings)[0]) for end in bounds[: KILLS + 1]]
    assert before == sorted(set(before)), f"a part raises no flag: {before}"
    worker = rig.start()
    started = time.monotonic()
    seen: list[int] = []
    for i in range(KILLS):
        # A worker still joining would find a whole part waiting and flush its flags at once.
        rig.wait_ready(len(rig.procs) - 1)
        produce_events(events[bounds[i] : bounds[i + 1]], rig.settings, batch=True)
        # At least one flag of this part: the restarted worker made progress before each kill.
        target = before[i] + max(1, int(rng.uniform(0.1, 0.85) * (before[i + 1] - before[i])))
        wait_until(lambda t=target: len(rig.flags()) >= t, rig, timeout_s=120)
        # A random extra delay moves the kill off the polling grid, into a run of records.
        time.sleep(rng.uniform(0.0, 0.5))
        kill(worker)
        seen.append(len(rig.flags()))
        worker = rig.start()
    produce_events(events[bounds[KILLS] :], rig.settings, batch=True)
    # Each kill landed inside its own part of the stream, and short of what that part adds.
    assert all(before[i] < n <= before[i + 1] for i, n in enumerate(seen)), (seen, before)
    rig.wait_for(want_flags, want_sessions, timeout_s=150)
    print(
        f"\n{len(events)} events, {len(want_flags)} flags, {len(want_sessions)} sessions,"
        f" kills at {seen} flags (parts start at {before}), {time.monotonic() - started:.1f}s"
    )
