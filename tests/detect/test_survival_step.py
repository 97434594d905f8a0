"""The survival check inside ``step``: off by default, and when on, every verdict counted and
every absence or contradiction raised once, from state that survives encoding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import DetectConfig, detect_all, step, survival_counts
from monitor.detect.session import SessionState, decode_state, encode_state
from monitor.events import Compaction, Event

T0 = datetime(2026, 12, 1, tzinfo=UTC)
ON = DetectConfig(survival=True)

#: Rules and summaries written for these tests.
RULES = [
    "Never modify anything under /migrations.",
    "Keep the /v1/charges response shape the same.",
    "Store all timestamps as UTC.",
    "Use pnpm for every install.",
]
NEUTRAL = "The session covered the billing refactor and two failing integration tests."


def ev(i: int, turn: int, kind: Any, **body: Any) -> Event:
    return Event(
        event_id=f"s-{i}",
        session_id="s",
        turn=turn,
        ts=T0 + timedelta(seconds=turn),
        kind=kind,
        **body,
    )


def compaction(i: int, turn: int, summary: str | None) -> Event:
    return ev(i, turn, "compaction", text=summary, compaction=Compaction(compactor="v7"))


def run(events: list[Event], cfg: DetectConfig) -> tuple[SessionState, list[Any]]:
    state, out = None, []
    for e in events:
        state, flags = step(state, e, cfg)
        out.extend(flags)
    assert state is not None
    return state, out


def session(rule: str, summary: str | None) -> list[Event]:
    return [
        ev(0, 0, "user_message", text=rule),
        ev(1, 1, "assistant_message", text="The fixture had a stale path."),
        compaction(2, 2, summary),
        ev(3, 3, "assistant_message", text="Continuing with the fixture."),
    ]


def test_off_by_default_it_keeps_no_ledger_and_raises_nothing() -> None:
    state, flags = run(session(RULES[0], NEUTRAL), DetectConfig())
    assert not state.ledger.items and not state.meta.survival
    assert not any(f.signal in ("dropped_item", "inverted_item") for f in flags)


def test_a_summary_that_drops_a_rule_raises_one_dropped_item() -> None:
    state, flags = run(session(RULES[0], NEUTRAL), ON)
    dropped = [f for f in flags if f.signal == "dropped_item"]
    assert len(dropped) == 1
    f = dropped[0]
    assert (f.turn, f.original_turn, f.compaction_turn) == (2, 0, 2)
    assert f.evidence["class"] == "constraint" and "/migrations" in f.evidence["literal"]
    assert f.evidence["compactor"] == "v7" and f.evidence["verdict"] == "absent"
    assert survival_counts(state.meta)["v7"]["constraint"]["absent"] == 1
    assert state.meta.dropped_flags == 1


def test_a_summary_that_keeps_a_rule_counts_it_and_raises_nothing() -> None:
    state, flags = run(session(RULES[1], f"{NEUTRAL}\n- User rule: {RULES[1]}"), ON)
    assert not [f for f in flags if f.signal in ("dropped_item", "inverted_item")]
    assert survival_counts(state.meta)["v7"]["constraint"]["verbatim"] == 1
    (item,) = [i for i in state.ledger.items if i.cls == "constraint"]
    assert item.seen == ((2, "verbatim"),)


def test_a_summary_that_negates_a_rule_inverts_it() -> None:
    negated = "Do not keep the /v1/charges response shape the same."
    state, flags = run(session(RULES[1], f"{NEUTRAL}\n- {negated}"), ON)
    (inv,) = [f for f in flags if f.signal == "inverted_item"]
    assert inv.evidence["sentence"] and "/v1/charges" in inv.evidence["sentence"]
    assert state.meta.inverted_flags == 1


def test_a_compaction_without_summary_text_counts_items_unchecked() -> None:
    state, flags = run(session(RULES[0], None), ON)
    assert not [f for f in flags if f.signal == "dropped_item"]
    assert survival_counts(state.meta)["v7"]["constraint"]["unchecked"] == 1


def test_each_compaction_checks_again_and_the_ledger_survives_encoding() -> None:
    events = [*session(RULES[3], NEUTRAL), compaction(4, 4, NEUTRAL)]
    state, flags = run(events, ON)
    assert len([f for f in flags if f.signal == "dropped_item"]) == 2
    assert decode_state(encode_state(state)) == state
    (item,) = [i for i in state.ledger.items if i.cls == "constraint"]
    assert item.seen == ((2, "absent"), (4, "absent"))


@given(
    st.lists(
        st.tuples(st.sampled_from(RULES), st.booleans(), st.booleans()), min_size=1, max_size=5
    )
)
@settings(max_examples=40, deadline=None)
def test_flags_equal_the_counted_absences_and_contradictions(
    parts: list[tuple[str, bool, bool]],
) -> None:
    events: list[Event] = []
    turn = 0
    for rule, keep, has_text in parts:
        events.append(ev(len(events), turn, "user_message", text=rule))
        summary = (f"- {rule}" if keep else NEUTRAL) if has_text else None
        events.append(compaction(len(events), turn + 1, summary))
        turn += 2
    state, flags = run(events, ON)
    counts = survival_counts(state.meta).get("v7", {})
    absent = sum(c.get("absent", 0) for c in counts.values())
    contradicted = sum(c.get("contradicted", 0) for c in counts.values())
    assert len([f for f in flags if f.signal == "dropped_item"]) == absent
    assert len([f for f in flags if f.signal == "inverted_item"]) == contradicted
    assert state.meta.dropped_flags == absent and state.meta.inverted_flags == contradicted
    # The same events through the batch entry point give the same survival flags.
    again = [f for f in detect_all(events, ON) if f.signal in ("dropped_item", "inverted_item")]
    assert again == [f for f in flags if f.signal in ("dropped_item", "inverted_item")]


def test_the_replay_summary_counts_survival_flags_and_their_sessions() -> None:
    from monitor.replay import replay_events

    summary = replay_events(session(RULES[0], NEUTRAL), ON).summary()
    assert summary["flags_by_signal"] == {
        "repeated_tool_call": 0,
        "restated_instruction": 0,
        "dropped_item": 1,
    }
    assert summary["flagged_sessions"] == 1
    off = replay_events(session(RULES[0], NEUTRAL)).summary()
    assert off["flags_by_signal"] == {"repeated_tool_call": 0, "restated_instruction": 0}
    assert off["flagged_sessions"] == 0


def test_a_question_pending_at_a_compaction_is_checked_and_stays_pending() -> None:
    asked = "Which region should the replica live in, Frankfurt or Dublin?"
    events = [
        ev(0, 0, "user_message", text=RULES[3]),
        ev(1, 1, "assistant_message", text=asked),
        compaction(2, 2, f"- {RULES[3]}"),
    ]
    state, flags = run(events, ON)
    dropped = [f for f in flags if f.signal == "dropped_item"]
    assert [(f.original_turn, f.evidence["class"]) for f in dropped] == [(1, "open_question")]
    assert [q.literal for q in state.ledger.asked] == [asked]
    _, again = run([*events[:2], compaction(2, 2, f"- {RULES[3]}\n- Open: {asked}")], ON)
    assert not [f for f in again if f.signal == "dropped_item"]


def test_a_decision_the_user_asks_about_and_puts_off_stays_open_after_the_reply() -> None:
    asked = "Should the archive keep the raw audio files or only the transcripts?"
    events = [
        ev(0, 0, "user_message", text=f"{asked} Legal hasn't decided yet."),
        ev(1, 1, "assistant_message", text="Understood, I'll keep both until they decide."),
        ev(2, 2, "user_message", text="Next, the index page."),
        compaction(3, 3, "- Decided: the archive keeps only the transcripts, not the raw audio."),
    ]
    state, flags = run(events, ON)
    assert [q.literal for q in state.ledger.items if q.cls == "open_question"] == [asked]
    inverted = [f for f in flags if f.signal == "inverted_item"]
    assert [(f.original_turn, f.evidence["reason"]) for f in inverted] == [(0, "settled")]
    # Asked without putting it off, the reply and the next message settle it, as before.
    state, _ = run([ev(0, 0, "user_message", text=asked), *events[1:3]], ON)
    assert not [q for q in state.ledger.items if q.cls == "open_question"]
