"""The review page's store: actions recorded with each move, races settled by the database."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.orm import Session, sessionmaker

from monitor.fixtures import build_draft
from monitor.review.decisions import ReviewError, fold
from monitor.sampling import Pick
from monitor.store import review
from monitor.store.db import make_engine, make_sessionmaker, upgrade
from monitor.store.intake import add_items, get_item
from monitor.store.models import Base

T0 = datetime(2026, 12, 2, 9, tzinfo=UTC)
FLAGS: list[dict[str, Any]] = [
    {
        "signal": "restated_instruction",
        "turn": 60 + i,
        "original_turn": i,
        "key": f"k{i}",
        "evidence": {"earlier": f"rule {i}", "later": f"again {i}", "original_turn": i},
    }
    for i in range(3)
]


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    url = (
        request.getfixturevalue("pg_url")
        if request.param == "postgres"
        else f"sqlite:///{tmp_path}/store.db"
    )
    upgrade(url)
    engine = make_engine(url)
    yield url, make_sessionmaker(engine)
    engine.dispose()


def queue(maker: sessionmaker[Session], n: int = 1) -> list[int]:
    picks = [Pick(f"s{i}", 1.0, {"tier": "evidence"}) for i in range(n)]
    drafts = {p.session_id: build_draft(p.session_id, 80, 1, FLAGS) for p in picks}
    with maker.begin() as s:
        return add_items(s, "2026-W48", picks, drafts)


def test_the_migration_makes_the_models_tables(store: tuple[str, Any]) -> None:
    url, _ = store
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_every_move_is_recorded_with_its_reviewer(store: tuple[str, Any]) -> None:
    _, maker = store
    (item,) = queue(maker)
    with maker.begin() as s:
        review.claim(s, item, "alice", T0)
        review.claim(s, item, "alice", T0)  # already hers: nothing new
    with maker.begin() as s, pytest.raises(ReviewError, match="alice holds this item"):
        review.claim(s, item, "bob", T0)
    with maker.begin() as s:
        review.claim(s, item, "bob", T0, override=True)
    with maker.begin() as s, pytest.raises(ReviewError, match="bob holds this item"):
        review.decide(s, item, "alice", T0, "confirm", "constraint-k0")
    with maker.begin() as s:
        review.decide(s, item, "bob", T0, "confirm", "constraint-k0")
        review.decide(s, item, "bob", T0, "reject", "constraint-k1")
        added = review.decide(
            s,
            item,
            "bob",
            T0,
            "add",
            None,
            {
                "class": "commitment",
                "turn": 9,
                "literal": "I will",
                "probe": "What?",
                "expect": "it does",
            },
            origin={"event_id": "e9", "turn": 9},
        )
    with maker.begin() as s, pytest.raises(ReviewError, match="no item 'nope'"):
        review.decide(s, item, "bob", T0, "confirm", "nope")
    with maker.begin() as s, pytest.raises(ReviewError, match="turn must be between"):
        review.decide(
            s,
            item,
            "bob",
            T0,
            "edit",
            "constraint-k2",
            {"class": "constraint", "turn": 999, "literal": "x", "probe": "y", "expect": "z"},
        )
    with maker.begin() as s, pytest.raises(ReviewError, match="bob holds this item"):
        review.resolve(s, item, "alice", T0, accept=True, note="done")
    with maker.begin() as s:
        review.resolve(s, item, "alice", T0, accept=True, note=" taken over ", override=True)
    with maker() as s:
        got = get_item(s, item)
        actions = review.actions(s, item)
    assert got is not None
    assert (got["status"], got["resolved_by"], got["note"]) == ("accepted", "alice", "taken over")
    assert [(a.reviewer, a.action, a.override) for a in actions] == [
        ("alice", "claim", False),
        ("bob", "claim", True),
        ("bob", "confirm", False),
        ("bob", "reject", False),
        ("bob", "add", False),
        ("alice", "resolve", True),
    ]
    assert actions[1].detail == {"from": "alice"}
    assert actions[5].detail == {"status": "accepted", "note": "taken over", "from": "bob"}
    assert actions[4].entry_id == added and actions[4].detail["from"] == {
        "event_id": "e9",
        "turn": 9,
    }
    entries = {e.id: e.verdict for e in fold(got["draft"], actions)}
    assert entries == {
        "constraint-k0": "confirmed",
        "constraint-k1": "rejected",
        "constraint-k2": None,
        added: "confirmed",
    }
    with maker.begin() as s:
        review.reopen(s, item, "bob", T0)
    with maker() as s:
        again = get_item(s, item)
    assert again is not None
    assert (again["status"], again["claimed_by"], again["resolved_by"]) == (
        "in_review",
        "bob",
        None,
    )


def test_accepting_needs_a_confirmed_item_and_release_returns_it(store: tuple[str, Any]) -> None:
    _, maker = store
    (item,) = queue(maker)
    with maker.begin() as s:
        review.claim(s, item, "alice", T0)
    with maker.begin() as s, pytest.raises(ReviewError, match="confirm at least one"):
        review.resolve(s, item, "alice", T0, accept=True)
    with maker.begin() as s:
        review.release(s, item, "alice", T0)
    with maker() as s:
        got = get_item(s, item)
    assert got is not None and (got["status"], got["claimed_by"]) == ("queued", None)
    with maker.begin() as s, pytest.raises(ReviewError, match="no intake item 99") as err:
        review.claim(s, 99, "alice", T0)
    assert err.value.status == 404


def test_the_queue_tallies_each_item(store: tuple[str, Any]) -> None:
    _, maker = store
    first, second = queue(maker, 2)
    with maker.begin() as s:
        review.claim(s, first, "alice", T0)
        review.decide(s, first, "alice", T0, "confirm", "constraint-k0")
    with maker() as s:
        rows = review.queue(s, "2026-W48")
        held = review.queue(s, "2026-W48", "in_review")
        assert review.weeks(s) == ["2026-W48"]
        data = review.item_data(s, first)
    assert [r["tally"] for r in rows] == [
        {"confirmed": 1, "rejected": 0, "undecided": 2},
        {"confirmed": 0, "rejected": 0, "undecided": 3},
    ]
    assert [r["id"] for r in held] == [first]
    assert (data.previous_id, data.next_id, data.transcript) == (None, second, None)


@pytest.mark.postgres
def test_two_reviewers_racing_for_an_item_cannot_both_win(pg_url: str) -> None:
    upgrade(pg_url)
    engine = make_engine(pg_url)
    maker = make_sessionmaker(engine)
    items = queue(maker, 20)
    start = threading.Barrier(2, timeout=30)
    won: dict[str, list[int]] = {"alice": [], "bob": []}

    def reviewer(name: str) -> None:
        start.wait()
        for item in items:
            try:
                with maker.begin() as s:
                    review.claim(s, item, name, T0)
                won[name].append(item)
            except ReviewError:
                pass

    threads = [threading.Thread(target=reviewer, args=(n,)) for n in won]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    with maker() as s:
        claims = [a for i in items for a in review.actions(s, i) if a.action == "claim"]
        holders = {i: (get_item(s, i) or {})["claimed_by"] for i in items}
    engine.dispose()
    assert sorted(won["alice"] + won["bob"]) == items  # each item won exactly once
    assert len(claims) == len(items)  # and recorded once
    assert all(holders[i] == name for name, mine in won.items() for i in mine)
