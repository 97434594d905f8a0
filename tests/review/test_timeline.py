"""The timeline: turns with their events, flags, compaction summaries and verdicts."""

from __future__ import annotations

from typing import Any

from monitor.review.decisions import Entry
from monitor.review.timeline import build


def ev(turn: int, kind: str, **kw: Any) -> dict[str, Any]:
    return {
        "event_id": f"e{turn}-{kind}",
        "session_id": "s",
        "turn": turn,
        "ts": "t",
        "kind": kind,
        **kw,
    }


EVENTS = [
    ev(0, "user_message", text="Never force-push to main."),
    ev(1, "tool_call", tool={"name": "Bash", "arguments": {"command": "make test"}}),
    ev(1, "tool_result", tool={"name": "Bash", "is_error": True}, text="FAILED\n" + "x" * 300),
    ev(2, "compaction", compaction={"tokens_before": 9000, "tokens_after": 900, "compactor": "v3"}),
    ev(3, "tool_call", tool={"name": "Bash", "arguments": {"command": "make test"}}),
    ev(9, "user_message", text="As I said, do not force-push to main."),
]
FLAGS = [
    {
        "signal": "repeated_tool_call",
        "turn": 3,
        "original_turn": 1,
        "compaction_turn": 2,
        "evidence": {"tool": "Bash", "arguments": '{"command":"make test"}', "first_turn": 1},
    },
    {
        "signal": "restated_instruction",
        "turn": 9,
        "original_turn": 0,
        "compaction_turn": 2,
        "evidence": {
            "earlier": "Never force-push to main.",
            "later": "As I said, do not force-push to main.",
            "original_turn": 0,
            "score": 92.0,
            "spans_compaction": True,
        },
    },
]
ENTRY = Entry(
    "constraint-1",
    "constraint",
    0,
    "Never force-push to main.",
    "p",
    "x",
    seen=({"compaction_turn": 2, "compactor": "v3", "verdict": "absent", "sentence": None},),
)


def test_turns_carry_their_events_flags_and_verdicts() -> None:
    turns = {
        t.turn: t
        for t in build(
            EVENTS,
            FLAGS,
            [ENTRY],
            [{"turn": 2, "compactor": "v3", "summary": "The user wants tests."}],
        )
    }
    assert sorted(turns) == [0, 1, 2, 3, 9]
    assert turns[3].flagged and turns[9].flagged and not turns[0].flagged
    assert [n.role for n in turns[1].notes] == ["origin"]
    assert (
        "restates the instruction of turn 0 across a compaction (score 92.0)"
        in turns[9].notes[0].text
    )
    assert turns[0].entries == ("constraint-1",)
    call, result = turns[1].rows
    assert call.tool == "Bash" and '"command": "make test"' in str(call.arguments)
    assert result.is_error and len(result.peek) == 100 and result.peek.startswith("FAILED x")
    (compaction,) = turns[2].rows
    assert compaction.text == "The user wants tests." and compaction.summary_from == "draft"
    assert compaction.tokens == "9000 → 900 tokens" and compaction.compactor == "v3"
    assert [(v.entry_id, v.verdict) for v in turns[2].verdicts] == [("constraint-1", "absent")]
    assert turns[9].gap == 5


def test_without_a_transcript_the_evidence_still_has_turns() -> None:
    turns = build([], FLAGS, [ENTRY], [{"turn": 2, "compactor": None, "summary": "S."}])
    assert [t.turn for t in turns] == [0, 1, 2, 3, 9]
    assert turns[2].rows[0].kind == "compaction" and turns[2].rows[0].text == "S."
    assert all(not t.rows for t in turns if t.turn != 2)
