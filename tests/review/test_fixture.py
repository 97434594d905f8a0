"""The finished fixture: confirmed entries only, no annotations, valid against the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from monitor.fixtures import build_draft
from monitor.review import fixture
from monitor.review.decisions import Action, ReviewError, fold

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "fixture.v1.json").read_text(encoding="utf-8"))
FLAGS: list[dict[str, Any]] = [
    {
        "signal": "restated_instruction",
        "turn": 60 + i,
        "original_turn": i,
        "key": f"k{i}",
        "evidence": {"earlier": f"rule {i}", "later": f"again rule {i}", "original_turn": i},
    }
    for i in range(3)
] + [
    {
        "signal": "repeated_tool_call",
        "turn": 44,
        "original_turn": 30,
        "key": "r1",
        "evidence": {"tool": "Bash", "arguments": "{}", "first_turn": 12},
    }
]
DRAFT = build_draft("a/b session", 80, 2, FLAGS)
ITEM = {
    "id": 7,
    "week": "2026-W48",
    "session_id": "a/b session",
    "status": "accepted",
    "resolved_by": "alice",
    "resolved_at": "2026-12-01T10:00:00+00:00",
    "draft": DRAFT,
}
IDS = [e["id"] for e in DRAFT["must_survive"]]


def test_the_packaged_schema_is_the_published_one() -> None:
    packaged = ROOT / "monitor" / "review" / "fixture.v1.json"
    assert packaged.read_bytes() == (ROOT / "schemas" / "fixture.v1.json").read_bytes()
    assert fixture.schema() == SCHEMA
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_only_confirmed_entries_without_annotations() -> None:
    actions = [
        Action(1, "alice", "confirm", IDS[0]),
        Action(2, "alice", "reject", IDS[1]),
        Action(
            3,
            "alice",
            "edit",
            IDS[3],
            {
                "class": "reference",
                "turn": 12,
                "literal": "Bash {}",
                "probe": "What did it say?",
                "expect": "the result",
            },
        ),
        Action(
            4,
            "alice",
            "add",
            "added-1f",
            {
                "class": "open_question",
                "turn": 70,
                "literal": "Which port?",
                "probe": "Which questions are open?",
                "expect": "the port",
            },
        ),
    ]
    transcript = {
        "status": "captured",
        "omitted": 0,
        "events": [
            {
                "event_id": "e",
                "session_id": "a/b session",
                "turn": 0,
                "ts": "t",
                "kind": "user_message",
                "text": "rule 0",
            }
        ],
    }
    doc = fixture.build(ITEM, fold(DRAFT, actions), transcript)
    fixture.validate(doc)
    jsonschema.validate(doc, SCHEMA, format_checker=jsonschema.FormatChecker())
    assert [e["id"] for e in doc["must_survive"]] == [IDS[0], IDS[3], "added-1f"]
    assert all(
        set(e) <= {"id", "class", "turn", "literal", "probe", "expect", "call"}
        for e in doc["must_survive"]
    )
    assert doc["must_survive"][1]["call"] == {"tool": "Bash", "arguments": "{}"}
    assert doc["review"] == {
        "item_id": 7,
        "week": "2026-W48",
        "reviewed_by": "alice",
        "resolved_at": "2026-12-01T10:00:00+00:00",
    }
    assert doc["transcript"]["events"][0]["text"] == "rule 0"
    assert fixture.file_name(doc) == "7-a_b_session.fixture.json"
    assert fixture.dumps(doc).endswith(b"}\n")


def test_no_transcript_when_the_source_was_gone() -> None:
    doc = fixture.build(
        ITEM,
        fold(DRAFT, [Action(1, "a", "confirm", IDS[0])]),
        {"status": "gone", "omitted": 0, "events": []},
    )
    fixture.validate(doc)
    assert "transcript" not in doc


def test_only_an_accepted_item_with_a_confirmed_entry_exports() -> None:
    with pytest.raises(ReviewError, match="is in_review"):
        fixture.build({**ITEM, "status": "in_review"}, fold(DRAFT, []))
    with pytest.raises(ReviewError, match="no confirmed items"):
        fixture.build(ITEM, fold(DRAFT, [Action(1, "a", "reject", IDS[0])]))


def test_validation_names_the_problem() -> None:
    doc = fixture.build(ITEM, fold(DRAFT, [Action(1, "a", "confirm", IDS[0])]))
    doc["must_survive"][0]["candidate"] = True
    with pytest.raises(ReviewError, match="must_survive/0") as err:
        fixture.validate(doc)
    assert err.value.status == 500
