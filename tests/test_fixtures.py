"""Fixture drafts from flags: the candidates they name, and the published schema they follow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from monitor.fixtures import build_draft, file_name, with_summaries

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schemas" / "fixture-draft.v1.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def restated(turn: int, earlier_turn: int, earlier: str, key: str = "aa11") -> dict[str, Any]:
    return {
        "signal": "restated_instruction",
        "turn": turn,
        "original_turn": earlier_turn,
        "compaction_turn": None,
        "key": key,
        "evidence": {
            "earlier": earlier,
            "later": f"again: {earlier.lower()}",
            "original_turn": earlier_turn,
            "spans_compaction": False,
        },
    }


def repeated(turn: int, first: int, tool: str, args: str, key: str = "bb22") -> dict[str, Any]:
    return {
        "signal": "repeated_tool_call",
        "turn": turn,
        "original_turn": first + 3,
        "compaction_turn": turn - 1,
        "key": key,
        "evidence": {
            "tool": tool,
            "arguments": args,
            "first_turn": first,
            "original_turn": first + 3,
        },
    }


def test_a_restated_instruction_becomes_a_constraint_at_its_earliest_wording() -> None:
    flags = [
        restated(50, 9, "Use the staging database.", key="k1"),
        restated(30, 4, "Use the staging database only.", key="k1"),  # same instruction, earlier
        restated(70, 20, "Write tests first.", key="k2"),
    ]
    draft = build_draft("sess", 80, 2, flags)
    constraints = [e for e in draft["must_survive"] if e["class"] == "constraint"]
    assert [(c["turn"], c["literal"]) for c in constraints] == [
        (4, "Use the staging database only."),
        (20, "Write tests first."),
    ]
    assert constraints[0]["evidence"]["flag_turns"] == [30, 50]
    assert all(c["candidate"] is True for c in constraints)
    assert draft["candidate"] is True
    assert (draft["turns"], draft["compactions_expected"]) == (80, 2)
    VALIDATOR.validate(draft)


def test_a_repeated_call_becomes_a_reference_to_its_first_result() -> None:
    draft = build_draft("sess", 40, 1, [repeated(33, 7, "Read", '{"path":"a.py"}')])
    (ref,) = draft["must_survive"]
    assert ref["class"] == "reference" and ref["turn"] == 10  # the latest result, not the first
    assert ref["call"] == {"tool": "Read", "arguments": '{"path":"a.py"}'}
    assert "Read" in ref["probe"] and ref["literal"].startswith("Read ")
    assert draft["source"] == {"flags": 1, "compaction_turns": [32]}
    VALIDATOR.validate(draft)


def test_the_schema_rejects_what_a_draft_must_not_be() -> None:
    good = build_draft("sess", 40, 1, [repeated(33, 7, "Read", "{}")])
    no_call = json.loads(json.dumps(good))
    del no_call["must_survive"][0]["call"]
    bad_class = json.loads(json.dumps(good))
    bad_class["must_survive"][0]["class"] = "vibe"
    extra = {**good, "unexpected": 1}
    for doc in (no_call, bad_class, extra, {**good, "turns": -1}):
        assert not VALIDATOR.is_valid(doc)


def test_file_names_are_safe_and_distinct() -> None:
    a = {"conversation_id": "../../etc/passwd", "intake": {"item_id": 3}}
    b = {"conversation_id": "..\\..\\etc\\passwd", "intake": {"item_id": 4}}
    assert "/" not in file_name(a) and "\\" not in file_name(b)
    assert file_name(a) != file_name(b)
    assert file_name({"conversation_id": "s-1"}) == "s-1.json"


texts = st.text(min_size=0, max_size=40)
flags_st = st.lists(
    st.one_of(
        st.builds(
            restated, st.integers(1, 500), st.integers(0, 499), texts, st.sampled_from("abc")
        ),
        st.builds(
            repeated, st.integers(5, 500), st.integers(0, 4), texts, texts, st.sampled_from("xyz")
        ),
    ),
    max_size=30,
)


@given(st.text(min_size=1, max_size=30), st.integers(0, 10_000), st.integers(0, 50), flags_st)
def test_every_draft_follows_the_schema(
    sid: str, turns: int, compactions: int, flags: list[dict[str, Any]]
) -> None:
    draft = build_draft(sid, turns, compactions, flags)
    VALIDATOR.validate(json.loads(json.dumps(draft)))
    ids = [e["id"] for e in draft["must_survive"]]
    assert len(ids) == len(set(ids)) == len({(f["signal"], f["key"]) for f in flags})
    for e in draft["must_survive"]:  # each entry sits at the earliest turn its flags name
        same = [f for f in flags if e["id"].endswith("-" + f["key"]) and _cls(f) == e["class"]]
        assert e["turn"] == min(_turn(f) for f in same)
        assert e["evidence"]["flag_turns"] == sorted({f["turn"] for f in same})
    turns_seen = [e["turn"] for e in draft["must_survive"]]
    assert turns_seen == sorted(turns_seen)


def _cls(flag: dict[str, Any]) -> str:
    return "constraint" if flag["signal"] == "restated_instruction" else "reference"


def _turn(flag: dict[str, Any]) -> int:
    ev = flag["evidence"]
    return int(ev["original_turn"] if _cls(flag) == "constraint" else flag["original_turn"])


def test_survival_flags_become_entries_of_their_ledger_class() -> None:
    from monitor.detect import DetectConfig, detect_all
    from tests.detect.test_survival_step import compaction, ev

    events = [
        ev(0, 0, "user_message", text="Never modify anything under /migrations."),
        ev(1, 1, "assistant_message", text="I will send the migration plan before any change."),
        compaction(2, 2, "Do modify anything under /migrations as needed."),
    ]
    flags = [f.report() for f in detect_all(events, DetectConfig(survival=True))]
    draft = build_draft("sess", 3, 1, flags)
    VALIDATOR.validate(draft)
    by_class = {e["class"]: e for e in draft["must_survive"]}
    assert set(by_class) == {"constraint", "commitment"}
    commitment = by_class["commitment"]
    assert commitment["evidence"]["signal"] == "dropped_item" and commitment["turn"] == 1
    assert "send the migration plan before any change" in commitment["probe"]
    assert commitment["expect"].startswith("yes")
    assert by_class["constraint"]["probe"].startswith("Is the agent forbidden to modify")
    constraint = by_class["constraint"]
    assert constraint["evidence"]["signal"] == "inverted_item"
    assert "/migrations" in constraint["evidence"]["summary_sentence"]
    assert "call" not in constraint and "call" not in commitment
    assert constraint["seen"][0]["verdict"] == "contradicted"
    assert constraint["seen"][0]["compactor"] is None or isinstance(
        constraint["seen"][0]["compactor"], str
    )


def test_every_ledger_item_checked_at_a_compaction_is_a_candidate() -> None:
    from monitor.detect import DetectConfig, step
    from monitor.detect.ledger import to_json
    from tests.detect.test_survival_step import compaction, ev

    events = [
        ev(0, 0, "user_message", text="Never modify anything under /migrations."),
        ev(1, 1, "user_message", text="Use pnpm for every install."),
        compaction(2, 2, "- Never modify anything under /migrations."),
        ev(3, 3, "user_message", text="Keep the /v1/charges response shape the same."),
    ]
    state, flags = None, []
    for e in events:
        state, raised = step(state, e, DetectConfig(survival=True))
        flags.extend(f.report() for f in raised)
    assert state is not None
    draft = build_draft("sess", 4, 1, flags, to_json(state.ledger))
    VALIDATOR.validate(draft)
    by_literal = {e["literal"]: e for e in draft["must_survive"]}
    # Kept at the compaction: a candidate all the same, with its verdict.
    kept = by_literal["Never modify anything under /migrations."]
    assert kept["seen"] == [{"compaction_turn": 2, "verdict": "verbatim"}]
    assert "evidence" not in kept
    # Dropped there: from its flag, with the flag's evidence and the ledger's verdict.
    dropped = by_literal["Use pnpm for every install."]
    assert dropped["evidence"]["signal"] == "dropped_item"
    assert [v["verdict"] for v in dropped["seen"]] == ["absent"]
    # Stated after the last compaction: nothing was asked of a summary yet.
    assert "Keep the /v1/charges response shape the same." not in by_literal
    assert draft["source"]["compaction_turns"] == [2]


def test_summaries_are_listed_by_turn_and_a_lost_one_is_named_without_text() -> None:
    draft = {"must_survive": [{"seen": [{"compaction_turn": 9}, {"compaction_turn": 30}]}]}
    events = [
        {"kind": "user_message", "turn": 1, "text": "not a summary"},
        {"kind": "compaction", "turn": 30, "text": "later summary", "attrs": {"compactor": "c2"}},
        {"kind": "compaction", "turn": 9, "text": "", "compaction": {"compactor": "c1"}},
    ]
    got = with_summaries(draft, events)
    assert got["compactions"] == [
        {"turn": 9, "summary": None, "compactor": "c1"},
        {"turn": 30, "summary": "later summary", "compactor": "c2"},
    ]
    assert "compactions" not in draft  # the input is not changed
    lost = with_summaries(draft, events[:1])["compactions"]
    assert lost == [{"turn": 9, "summary": None}, {"turn": 30, "summary": None}]
    assert "compactions" not in with_summaries({"must_survive": []}, events[:1])
