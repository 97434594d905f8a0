"""Probes phrased for an item's class: the shapes the issue names, and always well formed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.ledger import CLASSES
from monitor.probes import probe


@pytest.mark.parametrize(
    ("literal", "question"),
    [
        ("Never delete rows from the audit table.", "Is the agent forbidden to delete rows from"),
        ("pls dont rename my columns", "Is the agent forbidden to rename the user's columns?"),
        ("Do not open more than two PRs", "Is the agent forbidden to open more than two PRs?"),
    ],
)
def test_a_prohibition_asks_whether_the_agent_is_forbidden(literal: str, question: str) -> None:
    got, expect = probe("constraint", literal, 7)
    assert got.startswith(question)
    assert expect.startswith("yes") and "turn 7" in expect


@pytest.mark.parametrize(
    ("literal", "question"),
    [
        ("Always sign your commits.", "Must the agent sign its commits?"),
        ("You must cite the page numbers", "Must the agent cite the page numbers?"),
        ("format dates as ISO 8601", "Must the agent format dates as ISO 8601?"),
    ],
)
def test_a_rule_asks_whether_the_agent_must(literal: str, question: str) -> None:
    assert probe("constraint", literal, 2)[0] == question


def test_a_literal_without_a_known_opening_is_quoted_whole() -> None:
    got, _ = probe("constraint", "Dark mode stays the default.", 4)
    assert "“Dark mode stays the default”" in got


def test_commitments_keep_their_polarity() -> None:
    assert probe("commitment", "I'll rerun the benchmark after every change.", 3)[0] == (
        "Has the agent undertaken to rerun the benchmark after every change?"
    )
    won_t = probe("commitment", "Noted, I won't squash the history before review.", 3)[0]
    assert won_t == "Has the agent undertaken not to squash the history before review?"
    will_not = probe("commitment", "Going forward, I will not retag a release.", 3)[0]
    assert will_not == "Has the agent undertaken not to retag a release?"


def test_an_open_question_expects_still_open() -> None:
    asked = "Should the cache be per tenant?"
    asked_by_agent, expect = probe("open_question", asked, 5, "assistant")
    assert asked_by_agent.startswith("Has the user decided") and "per tenant" in asked_by_agent
    assert expect.startswith("no: still open")
    asked_by_user, _ = probe("open_question", "Is the vendor contract signed?", 5, "user")
    assert "the user asked" in asked_by_user


def test_a_versioned_reference_asks_where_and_at_what_revision() -> None:
    got, expect = probe("reference", "pricing.xlsx rev 9", 11)
    assert got == "Where is pricing.xlsx, and at what revision?"
    assert expect.startswith("pricing.xlsx rev 9")


def test_an_unversioned_reference_does_not_give_its_name_away() -> None:
    named = [
        ("OPS-4411", "ticket"),
        ("hotfix/tz-offsets", "branch"),
        ("deploy/values.yaml", "file"),
        ("infra/modules", "file or path"),
    ]
    for literal, kind in named:
        got, expect = probe("reference", literal, 6)
        assert kind in got and literal not in got
        assert literal in expect


@given(
    cls=st.sampled_from(CLASSES),
    literal=st.text(min_size=1, max_size=80).filter(str.strip),
    turn=st.integers(min_value=0, max_value=10**6),
    speaker=st.sampled_from(["user", "assistant"]),
)
def test_every_item_gets_a_probe_and_an_expectation(
    cls: str, literal: str, turn: int, speaker: str
) -> None:
    got, expect = probe(cls, literal, turn, speaker)
    assert got.strip() and expect.strip()
    assert str(turn) in got + expect


def test_typographic_apostrophes_read_as_plain_ones() -> None:
    typed = probe("commitment", "I\u2019ll keep the changelog in step with each merge.", 1)[0]
    assert typed == "Has the agent undertaken to keep the changelog in step with each merge?"
    curly = probe("constraint", "Don\u2019t force-push.", 1)[0]
    assert curly == "Is the agent forbidden to force-push?"


def test_a_promise_about_the_agent_reads_in_the_third_person() -> None:
    got = probe("commitment", "I'll export the chart so I can attach it to my report.", 2)[0]
    assert got == "Has the agent undertaken to export the chart so it can attach it to its report?"
    # A verb without a modal keeps its "I": "so it touch" would not be English.
    kept = probe("commitment", "I won't merge before I hear from legal.", 2)[0]
    assert kept == "Has the agent undertaken not to merge before I hear from legal?"
