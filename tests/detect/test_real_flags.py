"""Every flag on the real transcripts, against the reviewed record (``real_flags.json``).

The record lists each flag the detectors raise on ``../shared/real_logs`` and
``../shared/real_logs_more``, judged by hand, and apart the right ones they no longer raise.
A change that adds or removes a flag on real data fails here until someone has read the new
flag in its transcript and recorded a verdict.
Skipped where the shared folders are absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from monitor.adapters import read_paths
from monitor.detect import detect_all
from monitor.events import Event
from monitor.flags import Flag

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
FOLDERS = [SHARED / "real_logs", SHARED / "real_logs_more"]
RECORD = Path(__file__).with_name("real_flags.json")


@pytest.fixture(scope="module")
def replayed() -> tuple[list[Event], list[Flag]]:
    present = [str(p) for p in FOLDERS if p.is_dir()]
    if len(present) < len(FOLDERS):
        pytest.skip("the shared real transcripts are absent")
    events = [e for e in read_paths(present) if isinstance(e, Event)]
    return events, detect_all(events)


def _key(item: Any) -> tuple[str, int, str, int]:
    if isinstance(item, Flag):
        return (item.session_id, item.turn, item.signal, item.original_turn)
    return (item["session_id"], item["turn"], item["signal"], item["original_turn"])


def test_the_flags_are_those_reviewed(replayed: tuple[list[Event], list[Flag]]) -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))["flags"]
    got = Counter(_key(f) for f in replayed[1])
    want = Counter(_key(r) for r in record)
    assert got - want == Counter(), f"new flags to judge: {sorted(got - want)}"
    assert want - got == Counter(), f"reviewed flags no longer raised: {sorted(want - got)}"


def test_every_reviewed_flag_has_a_verdict_and_a_reason() -> None:
    for r in json.loads(RECORD.read_text(encoding="utf-8"))["flags"]:
        assert r["verdict"] in ("right", "wrong") and len(r["why"]) > 20, r


def test_the_flags_recorded_as_missed_are_still_missed(
    replayed: tuple[list[Event], list[Flag]],
) -> None:
    """A right flag no longer raised is kept apart with why; raised again, it moves back."""
    missed = json.loads(RECORD.read_text(encoding="utf-8")).get("missed", [])
    got = {_key(f) for f in replayed[1]}
    for r in missed:
        assert r["verdict"] == "right" and len(r["why"]) > 20, r
        assert _key(r) not in got, f"raised again, move it back to 'flags': {_key(r)}"


def test_restatements_are_right_rare_and_one_per_message(
    replayed: tuple[list[Event], list[Flag]],
) -> None:
    events, flags = replayed
    record = {_key(r): r for r in json.loads(RECORD.read_text(encoding="utf-8"))["flags"]}
    restated = [f for f in flags if f.signal == "restated_instruction"]
    per_message = Counter((f.session_id, f.turn) for f in restated)
    assert all(n == 1 for n in per_message.values())
    assert all(record[_key(f)]["verdict"] == "right" for f in restated)
    typed = sum(1 for e in events if e.kind == "user_message" and e.origin in (None, "human"))
    assert len(restated) * 50 <= typed, (len(restated), typed)


def test_harness_records_are_marked_and_never_flagged(
    replayed: tuple[list[Event], list[Flag]],
) -> None:
    events, flags = replayed
    injected = {(e.session_id, e.turn) for e in events if e.kind == "user_message" and e.origin}
    assert injected, "the real transcripts hold client-written user records"
    origins = Counter(e.origin for e in events if e.kind == "user_message" and e.origin)
    assert set(origins) <= {"harness", "command", "interrupt"} and origins["harness"]
    typed = {(e.session_id, e.turn) for e in events if e.kind == "user_message" and not e.origin}
    for f in flags:
        if f.signal == "restated_instruction":
            assert (f.session_id, f.turn) in typed
