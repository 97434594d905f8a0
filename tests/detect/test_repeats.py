"""The repeated-tool-call rule, by example and against a brute-force oracle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import DetectConfig, detect_all, step
from monitor.detect.canon import fingerprint
from monitor.detect.session import (
    Meta,
    RecentCalls,
    SessionState,
    decode_part,
    encode_part,
    pack_turns,
    unpack_turns,
)
from monitor.events import Compaction, Event, Tool

T0 = datetime(2026, 12, 1, tzinfo=UTC)
_META = Meta(session_id="s1", first_ts=T0, last_ts=T0)


class Log:
    """Builds one session's events, a turn at a time."""

    def __init__(self, session_id: str = "s1") -> None:
        self.session_id = session_id
        self.events: list[Event] = []

    def _add(self, turn: int, kind: Any, **body: Any) -> Event:
        event = Event(
            event_id=f"{self.session_id}-{len(self.events)}",
            session_id=self.session_id,
            turn=turn,
            ts=T0 + timedelta(seconds=turn),
            kind=kind,
            **body,
        )
        self.events.append(event)
        return event

    def call(self, turn: int, name: str = "Read", **args: Any) -> Event:
        return self._add(turn, "tool_call", tool=Tool(name, args))

    def compact(self, turn: int, compactor: str = "v1") -> Event:
        return self._add(turn, "compaction", compaction=Compaction(compactor=compactor))


def test_repeat_within_window_after_compaction_is_flagged_with_evidence() -> None:
    log = Log()
    log.call(1, file_path="/a.py")
    log.compact(3, compactor="sum-2")
    log.call(8, file_path="/a.py")
    [flag] = detect_all(log.events)
    assert flag.signal == "repeated_tool_call"
    assert (flag.turn, flag.original_turn, flag.compaction_turn) == (8, 1, 3)
    assert flag.evidence["tool"] == "Read"
    assert flag.evidence["compactor"] == "sum-2"
    assert flag.evidence["arguments"] == '{"file_path":"/a.py"}'
    assert flag.key == f"{fingerprint('Read', {'file_path': '/a.py'}):016x}"


def test_outside_window_or_without_compaction_is_not_flagged() -> None:
    log = Log()
    log.call(1, file_path="/a.py")
    log.call(2, file_path="/a.py")  # no compaction in between
    log.compact(3)
    log.call(9, file_path="/a.py")  # 6 turns after: outside the default window
    assert detect_all(log.events) == []
    assert len(detect_all(log.events, DetectConfig(window=6))) == 1


def test_only_the_first_reissue_after_a_compaction_counts() -> None:
    log = Log()
    log.call(1, file_path="/a.py")
    log.compact(2)
    log.call(3, file_path="/a.py")
    log.call(4, file_path="/a.py")  # the agent fetched it again at 3: it holds the result
    assert [f.turn for f in detect_all(log.events)] == [3]


def test_redelivered_copies_are_never_repeats() -> None:
    log = Log()
    first = log.call(1, file_path="/a.py")
    log.compact(2)
    repeat = log.call(3, file_path="/a.py")
    events = [first, first, log.events[1], repeat, repeat]
    assert [f.turn for f in detect_all(events)] == [3]
    # same turn and call under a new event id: still not a second repeat
    copy = Event(**{**{f: getattr(repeat, f) for f in repeat.__struct_fields__}, "event_id": "x"})
    assert [f.turn for f in detect_all([*events, copy])] == [3]


def test_ignored_tools_and_changed_arguments_are_not_flagged() -> None:
    log = Log()
    log.call(1, "TodoWrite", todos=[1])
    log.call(1, file_path="/a.py", limit=10)
    log.compact(2)
    log.call(3, "TodoWrite", todos=[1])
    log.call(3, file_path="/a.py", limit=20)
    assert detect_all(log.events) == []
    cfg = DetectConfig(ignored_tools=frozenset())
    assert [f.evidence["tool"] for f in detect_all(log.events, cfg)] == ["TodoWrite"]


def test_canonically_equal_arguments_repeat() -> None:
    log = Log()
    log.call(1, path="/x", limit=10)
    log.compact(2)
    log.call(3, limit=10.0, path="/x")
    assert len(detect_all(log.events)) == 1


def test_sessions_are_independent() -> None:
    a, b = Log("a"), Log("b")
    a.call(1, file_path="/a.py")
    b.compact(2)
    b.call(3, file_path="/a.py")
    assert detect_all(a.events + b.events) == []


def test_calls_are_capped_least_recently_issued_first() -> None:
    log = Log()
    for i in range(40):
        log.call(1 + i, file_path=f"/f{i}.py")
    log.call(41, file_path="/f1.py")  # issued again: now among the most recent
    log.compact(50)
    for i in (0, 1, 30, 39):
        log.call(51, file_path=f"/f{i}.py")
    flags = detect_all(log.events, DetectConfig(max_calls=5))
    # f0 fell out (merges keep the 5 most recently issued); f1 was refreshed at turn 41
    assert [f.evidence["arguments"] for f in flags] == [
        '{"file_path":"/f1.py"}',
        '{"file_path":"/f30.py"}',
        '{"file_path":"/f39.py"}',
    ]


def test_state_holds_at_most_max_calls_plus_the_recent_buffer() -> None:
    from monitor.detect import step
    from monitor.detect.session import RECENT_CALLS

    cfg = DetectConfig(max_calls=10)
    log, state = Log(), None
    for i in range(500):
        state, _ = step(state, log.call(i, file_path=f"/f{i}.py"), cfg)
        assert state is not None
        assert len(state.calls.by_fp) <= 10
        assert len(state.recent.by_fp) <= RECENT_CALLS
    assert state is not None and state.meta.tool_calls == 500


# --- property: the incremental detector equals a brute-force reading of the rule ---------------

steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("call"), st.sampled_from(["Read", "Grep", "TodoWrite"]), st.integers(0, 3)
        ),
        st.tuples(st.just("compact"), st.just(""), st.just(0)),
    ),
    max_size=40,
)


def oracle(ops: list[tuple[str, int, str, int]], cfg: DetectConfig) -> list[tuple[int, int]]:
    """For each call: flagged iff its latest earlier issue precedes the latest earlier compaction
    c, and the call comes within the window after c."""
    out = []
    for i, (op, turn, name, arg) in enumerate(ops):
        if op != "call" or name in cfg.ignored_tools:
            continue
        before = ops[:i]
        comps = [t for o, t, _, _ in before if o == "compact" and t < turn]
        issues = [t for o, t, n, a in before if o == "call" and (n, a) == (name, arg)]
        if comps and issues and max(issues) < comps[-1] < turn <= comps[-1] + cfg.window:
            out.append((turn, max(issues)))
    return out


@settings(max_examples=300)
@given(steps, st.lists(st.integers(0, 2), min_size=40, max_size=40))
def test_matches_oracle(raw: list[tuple[str, str, int]], gaps: list[int]) -> None:
    cfg = DetectConfig()
    log = Log()
    ops: list[tuple[str, int, str, int]] = []
    turn, after_compaction = 0, False
    for (op, name, arg), gap in zip(raw, gaps, strict=False):
        # A compaction is its own turn (schemas/README.md): nothing shares its turn number.
        turn += gap + (1 if op == "compact" or after_compaction else 0)
        after_compaction = op == "compact"
        ops.append((op, turn, name, arg))
        if op == "call":
            log.call(turn, name, a=arg)
        else:
            log.compact(turn)
    got = [(f.turn, f.original_turn) for f in detect_all(log.events, cfg)]
    assert got == oracle(ops, cfg)


def test_fields_that_do_not_change_the_call_are_left_out_of_its_identity() -> None:
    log = Log()
    log.call(1, "Bash", command="make test", description="Run the tests", timeout=60000)
    log.call(2, "Bash", command="make lint", description="Lint")
    log.compact(3)
    log.call(4, "Bash", command="make test", description="Re-run the tests after the fix")
    log.call(5, "Bash", command="make lint --fix", description="Lint")
    (flag,) = detect_all(log.events)
    assert (flag.turn, flag.original_turn) == (4, 1)
    assert "Re-run the tests" in flag.evidence["arguments"]  # evidence shows the call as made
    assert detect_all(log.events, DetectConfig(ignored_arguments={})) == []


def test_a_poll_is_ignored_only_when_its_field_says_so() -> None:
    log = Log()
    log.call(1, "write_stdin", session_id=3, chars="")
    log.call(2, "write_stdin", session_id=3, chars="yes\n")
    log.compact(3)
    log.call(4, "write_stdin", session_id=3, chars="")
    log.call(5, "write_stdin", session_id=3, chars="yes\n")
    flags = detect_all(log.events)
    assert [(f.turn, f.evidence["arguments"]) for f in flags] == [
        (5, '{"chars":"yes\\n","session_id":3}')
    ]


@given(st.integers(0, 2**53), st.integers(0, 2**53))
def test_packed_turns_round_trip_and_stay_encodable(first: int, last: int) -> None:
    packed = pack_turns(first, last)
    assert unpack_turns(packed) == (first, last)
    state = decode_part(
        "recent", encode_part(SessionState(meta=_META, recent=RecentCalls({7: packed})), "recent")
    )
    assert isinstance(state, RecentCalls) and unpack_turns(state.by_fp[7]) == (first, last)
    if first < 2**32 and last < 2**32:
        assert isinstance(packed, int)  # no tuple for the collector to track


def test_a_call_history_saved_as_tuples_still_loads_and_repeats() -> None:
    """States written before the turns were packed hold [first, last] pairs."""
    log = Log()
    log.call(1, path="a.py")
    log.call(2, path="b.py")
    log.compact(4)
    log.call(5, path="a.py")
    cfg = DetectConfig()
    state = None
    for event in log.events[:2]:
        state, _ = step(state, event, cfg)
    assert state is not None
    fp = fingerprint("Read", {"path": "a.py"})
    old_layout = msgspec.msgpack.encode(
        [{k: list(unpack_turns(v)) for k, v in state.recent.by_fp.items()}]
    )
    recent = decode_part("recent", old_layout)
    assert isinstance(recent, RecentCalls) and recent.by_fp[fp] == (1, 1)
    state = msgspec.structs.replace(state, recent=recent)
    assert state.call(fp) == (1, 1)
    flags = []
    for event in log.events[2:]:
        state, raised = step(state, event, cfg)
        flags += raised
    assert [f.turn for f in flags] == [5] and flags == detect_all(log.events, cfg)
