"""``step``: state is a bounded frozen value; unchanged parts keep their identity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import DetectConfig, detect_all, step
from monitor.detect.session import (
    PARTS,
    SessionState,
    changed_parts,
    decode_part,
    decode_state,
    encode_part,
    encode_state,
    is_idle,
)
from monitor.events import Compaction, Event, Tool

T0 = datetime(2026, 12, 1, tzinfo=UTC)
CFG = DetectConfig()


def ev(i: int, turn: int, kind: Any, session: str = "s", **body: Any) -> Event:
    return Event(
        event_id=f"{session}-{i}",
        session_id=session,
        turn=turn,
        ts=T0 + timedelta(seconds=turn),
        kind=kind,
        **body,
    )


def run(events: list[Event], cfg: DetectConfig = CFG) -> SessionState:
    state = None
    for e in events:
        state, _ = step(state, e, cfg)
    assert state is not None
    return state


def test_counters_and_attrs() -> None:
    state = run(
        [
            ev(0, 0, "user_message", text="Use tabs.", attrs={"agent": "pi", "secret": "x"}),
            ev(1, 1, "tool_call", tool=Tool("Read", {"p": 1})),
            ev(2, 1, "tool_result", tool=Tool("Read")),
            ev(3, 2, "compaction", compaction=Compaction(compactor="v9")),
            ev(4, 3, "incident"),
            ev(5, 4, "session_end"),
        ]
    )
    m = state.meta
    assert (m.events, m.tool_calls, m.user_messages, m.compactions) == (6, 1, 1, 1)
    assert (m.max_turn, m.compaction_turns, m.compactor) == (4, (2,), "v9")
    assert m.incident and m.ended
    assert m.attrs == {"agent": "pi"}  # only the known low-cardinality keys are kept
    assert is_idle(state, T0, CFG.idle_expiry_s)


def test_redelivered_event_changes_nothing() -> None:
    e = ev(0, 0, "tool_call", tool=Tool("Read", {"p": 1}))
    state, _ = step(None, e, CFG)
    again, flags = step(state, e, CFG)
    assert again is state and flags == []


def test_unchanged_parts_keep_identity() -> None:
    state = run([ev(0, 0, "user_message", text="Never push to main.")])
    after_result, _ = step(state, ev(1, 1, "tool_result", tool=Tool("Read")), CFG)
    assert changed_parts(state, after_result) == ("meta",)
    after_call, _ = step(after_result, ev(2, 2, "tool_call", tool=Tool("Read", {"p": 1})), CFG)
    assert changed_parts(after_result, after_call) == ("meta", "recent")
    after_user, _ = step(after_call, ev(3, 3, "user_message", text="Please add a test."), CFG)
    assert "instructions" in changed_parts(after_call, after_user)
    assert changed_parts(None, after_user) == PARTS


def test_idle_expiry_uses_the_callers_clock() -> None:
    state = run([ev(0, 0, "incident")])
    assert not is_idle(state, T0 + timedelta(hours=1), 7200)
    assert is_idle(state, T0 + timedelta(hours=3), 7200)


def test_restatement_flag_reports_the_compaction_it_spans() -> None:
    events = [
        ev(0, 0, "user_message", text="Never modify anything under /repo/db/migrations."),
        ev(1, 1, "tool_call", tool=Tool("Read", {"p": 1})),
        ev(2, 2, "compaction", compaction=Compaction(compactor="v3")),
        ev(3, 3, "user_message", text="Again: never modify anything under /repo/db/migrations!"),
        ev(4, 4, "user_message", text="Again: never modify anything under /repo/db/migrations!"),
    ]
    flags = detect_all(events)
    assert (flags[0].turn, flags[0].original_turn, flags[0].compaction_turn) == (3, 0, 2)
    assert flags[0].evidence["spans_compaction"] is True
    assert flags[0].evidence["compactor"] == "v3"
    # the restatement at turn 4 repeats turn 3's message too; no compaction lies between them
    later = [f for f in flags if f.turn == 4 and f.original_turn == 3]
    assert all(f.compaction_turn is None for f in later)


ops = st.lists(
    st.tuples(
        st.sampled_from(["tool_call", "user_message", "compaction", "tool_result"]),
        st.integers(0, 400),
        st.text(max_size=30),
    ),
    max_size=120,
)


@settings(max_examples=60, deadline=None)
@given(ops)
def test_state_is_bounded_and_round_trips(raw: list[tuple[str, int, str]]) -> None:
    cfg = DetectConfig(max_calls=8, max_instructions=4, max_seen_ids=5)
    state = None
    for i, (kind, arg, text) in enumerate(raw):
        if kind in ("tool_call", "tool_result"):
            body: dict[str, Any] = {"tool": Tool("Bash", {"n": arg})}
        elif kind == "user_message":
            body = {"text": f"Always run make {arg}. {text}"}
        else:
            body = {"compaction": Compaction()}
        new, _ = step(state, ev(i, i, kind, **body), cfg)
        for part in changed_parts(state, new):
            assert decode_part(part, encode_part(new, part)) == getattr(new, part)
        state = new
    if state is None:
        return
    assert len(state.calls.by_fp) <= 8
    assert len(state.recent.by_fp) <= 16
    assert len(state.instructions.items) <= 4
    assert len(state.meta.seen) <= 5 * 8  # 8 bytes per entry
    assert len(state.meta.compaction_turns) <= 32
    assert decode_state(encode_state(state)) == state


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=60), st.randoms())
def test_interleaving_sessions_changes_nothing(args: list[int], rnd: Any) -> None:
    """Per-session results do not depend on how sessions interleave (only order within one)."""
    events = []
    for s in ("a", "b", "c"):
        for i, a in enumerate(args):
            kind = "compaction" if a == 5 else "tool_call"
            body = {"compaction": Compaction()} if a == 5 else {"tool": Tool("Read", {"a": a})}
            events.append(ev(i, i, kind, session=s, **body))
    shuffled = sorted(events, key=lambda e: (e.turn, rnd.random()))
    key = lambda f: (f.session_id, f.turn, f.key)  # noqa: E731
    assert sorted(detect_all(events), key=key) == sorted(detect_all(shuffled), key=key)


def test_reordering_within_the_window_gives_the_in_order_flags() -> None:
    in_order = [
        ev(0, 1, "tool_call", tool=Tool("Read", {"p": 1})),
        ev(1, 2, "compaction", compaction=Compaction()),
        ev(2, 3, "tool_call", tool=Tool("Read", {"p": 1})),
        ev(3, 4, "user_message", text="ok"),
        ev(4, 5, "session_end"),
    ]
    late_compaction = [in_order[0], in_order[2], in_order[1], in_order[3], in_order[4]]
    assert detect_all(late_compaction) == []  # without reordering the repeat is missed
    cfg = DetectConfig(reorder_turns=2)
    want = [(f.turn, f.compaction_turn) for f in detect_all(in_order)]
    assert want == [(3, 2)]
    assert [(f.turn, f.compaction_turn) for f in detect_all(late_compaction, cfg)] == want
    # held events wait in state, and a duplicate of a held event is dropped
    state = run([*late_compaction[:3], late_compaction[1]], cfg)
    assert [e.event_id for e in state.pending.events] == ["s-0", "s-1", "s-2"]
    assert state.meta.events == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["call1", "call2", "compact"]), max_size=30), st.randoms())
def test_any_shuffle_within_the_window_equals_in_order(ops: list[str], rnd: Any) -> None:
    events = []
    for i, op in enumerate(ops):
        if op == "compact":
            events.append(ev(i, i, "compaction", compaction=Compaction()))
        else:
            events.append(ev(i, i, "tool_call", tool=Tool("Read", {"p": op})))
    # each event moves at most 2 positions later (= 2 turns, one event per turn)
    keyed = sorted(events, key=lambda e: e.turn + rnd.uniform(0, 2.5))
    cfg = DetectConfig(reorder_turns=3)
    assert detect_all(keyed, cfg) == detect_all(events, DetectConfig())


def test_a_redelivered_stretch_longer_than_the_seen_window_counts_once() -> None:
    events = [ev(i, i // 3, "tool_call", tool=Tool("Read", {"p": i})) for i in range(200)]
    events.insert(120, ev(999, 40, "compaction", compaction=Compaction()))
    once = run(events)
    twice = run(events + events)
    assert twice.meta == once.meta
    assert detect_all(events + events) == detect_all(events)


def test_many_events_in_one_turn_are_all_counted() -> None:
    events = [ev(i, 7, "tool_call", tool=Tool("Read", {"p": i})) for i in range(100)]
    assert run(events).meta.tool_calls == 100
