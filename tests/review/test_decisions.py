"""The review rules: what the recorded actions add up to, and who may move an item."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.fixtures import build_draft
from monitor.review import decisions
from monitor.review.decisions import Action, ReviewError, check_fields, fold, tally

FLAGS: list[dict[str, Any]] = [
    {
        "signal": "restated_instruction",
        "turn": 60,
        "original_turn": 4,
        "compaction_turn": 41,
        "key": "0a1b2c3d4e5f6071",
        "evidence": {
            "earlier": "Never force-push to main.",
            "later": "As I said, do not.",
            "original_turn": 4,
        },
    },
    {
        "signal": "repeated_tool_call",
        "turn": 44,
        "original_turn": 30,
        "compaction_turn": 41,
        "key": "9f0c2a1b3c4d5e6f",
        "evidence": {"tool": "Bash", "arguments": '{"command":"make test"}', "first_turn": 12},
    },
]
DRAFT = build_draft("s1", 80, 2, FLAGS)
FIELDS = {
    "class": "commitment",
    "turn": 7,
    "literal": "I will add tests.",
    "probe": "What did you promise?",
    "expect": "still adds the tests",
}


def act(i: int, action: str, entry: str | None = None, who: str = "ana", **detail: Any) -> Action:
    return Action(i, who, action, entry, detail)


def test_the_draft_alone_is_all_undecided() -> None:
    entries = fold(DRAFT, [])
    assert [e.id for e in entries] == [e["id"] for e in DRAFT["must_survive"]]
    assert tally(entries) == {"confirmed": 0, "rejected": 0, "undecided": 2}
    assert entries[1].call == {"tool": "Bash", "arguments": '{"command":"make test"}'}
    assert entries[0].evidence is not None and entries[0].evidence["flag_turns"] == [60]


def test_the_last_decision_counts_and_edits_confirm() -> None:
    first, second = (e["id"] for e in DRAFT["must_survive"])
    entries = fold(
        DRAFT,
        [
            act(1, "reject", first),
            act(2, "confirm", first, who="bo"),
            act(3, "edit", second, **FIELDS),
            act(4, "add", "added-ab12", **FIELDS),
            act(5, "confirm", "no-such-entry"),
        ],
    )
    by_id = {e.id: e for e in entries}
    assert by_id[first].verdict == "confirmed" and by_id[first].decided_by == "bo"
    edited = by_id[second]
    assert (edited.verdict, edited.edited, edited.cls, edited.literal) == (
        "confirmed",
        True,
        "commitment",
        "I will add tests.",
    )
    assert edited.call is not None  # the call stays with the entry
    added = by_id["added-ab12"]
    assert (added.origin, added.verdict, added.turn, added.call) == ("added", "confirmed", 7, None)
    assert [e.id for e in entries][-1] == "added-ab12"
    assert tally(entries)["confirmed"] == 3


def test_future_draft_fields_pass_through() -> None:
    draft = {
        **DRAFT,
        "must_survive": [
            dict(
                DRAFT["must_survive"][0],
                seen=[
                    {
                        "compaction_turn": 41,
                        "compactor": "v3",
                        "verdict": "absent",
                        "sentence": None,
                    }
                ],
            )
        ],
    }
    (entry,) = fold(draft, [])
    assert entry.seen[0]["verdict"] == "absent"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"class": "wish"}, "class must be one of"),
        ({"turn": "x"}, "turn must be a whole number"),
        ({"turn": 81}, "between 0 and 80"),
        ({"literal": "   "}, "literal must not be empty"),
        ({"probe": "p" * 2001}, "probe is longer than 2000"),
        ({"expect": None}, "expect must not be empty"),
    ],
)
def test_bad_fields_are_refused_with_a_reason(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ReviewError, match=message) as err:
        check_fields({**FIELDS, **change}, 80)
    assert err.value.status == 422


def test_fields_are_trimmed() -> None:
    got = check_fields({**FIELDS, "literal": "  keep it  ", "turn": "3"}, 80)
    assert (got["literal"], got["turn"]) == ("keep it", 3)


def test_the_lifecycle_rules() -> None:
    assert decisions.claim("queued", None, "ana") == decisions.Move("in_review", "ana")
    assert decisions.claim("in_review", "ana", "ana").overridden is None
    with pytest.raises(ReviewError, match="bo holds this item"):
        decisions.claim("in_review", "bo", "ana")
    assert decisions.claim("in_review", "bo", "ana", override=True).overridden == "bo"
    with pytest.raises(ReviewError, match="reopen it"):
        decisions.claim("accepted", "bo", "ana")
    assert decisions.release("in_review", "ana", "ana") == decisions.Move("queued", None)
    with pytest.raises(ReviewError, match="only an item in review"):
        decisions.release("queued", None, "ana")
    with pytest.raises(ReviewError, match="bo holds this item"):
        decisions.resolve("in_review", "bo", "ana", accept=False, confirmed=0)
    moved = decisions.resolve("in_review", "bo", "ana", accept=False, confirmed=0, override=True)
    assert (moved.status, moved.overridden) == ("rejected", "bo")
    with pytest.raises(ReviewError, match="confirm at least one") as err:
        decisions.resolve("in_review", "ana", "ana", accept=True, confirmed=0)
    assert err.value.status == 422
    assert (
        decisions.resolve("in_review", "ana", "ana", accept=True, confirmed=1).status == "accepted"
    )
    assert decisions.reopen("rejected", "bo") == decisions.Move("in_review", "bo")
    with pytest.raises(ReviewError):
        decisions.reopen("in_review", "bo")
    with pytest.raises(ReviewError, match="claim it"):
        decisions.may_change_entries("queued", None, "ana")
    with pytest.raises(ReviewError, match="bo holds"):
        decisions.may_change_entries("in_review", "bo", "ana")
    decisions.may_change_entries("in_review", "ana", "ana")


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["confirm", "reject", "edit", "add", "claim"]),
        st.sampled_from(
            [
                "constraint-0a1b2c3d4e5f6071",
                "reference-9f0c2a1b3c4d5e6f",
                "added-1",
                "added-2",
                "nope",
            ]
        ),
    ),
    max_size=30,
)


@given(ACTIONS)
def test_the_fold_is_the_last_word_on_each_entry(steps: list[tuple[str, str]]) -> None:
    actions = [
        act(i, a, e, **(FIELDS if a in ("edit", "add") else {})) for i, (a, e) in enumerate(steps)
    ]
    model: dict[str, str | None] = {e["id"]: None for e in DRAFT["must_survive"]}
    for a in actions:
        if a.action == "add" and a.entry_id not in model:
            model[str(a.entry_id)] = "confirmed"
        elif a.entry_id in model and a.action in ("confirm", "edit"):
            model[a.entry_id] = "confirmed"
        elif a.entry_id in model and a.action == "reject":
            model[a.entry_id] = "rejected"
    entries = fold(DRAFT, actions)
    assert {e.id: e.verdict for e in entries} == model
    assert sum(tally(entries).values()) == len(entries)
