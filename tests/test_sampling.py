"""Weekly sampling: the pure policy (``choose``) by properties, ``run_week`` on real stores."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session, sessionmaker

from monitor.sampling import (
    Candidate,
    choose,
    iso_week,
    parse_week,
    previous_week,
    run_week,
    seed_value,
    uniform,
    weight,
)
from monitor.store.db import make_engine, make_sessionmaker, upgrade
from monitor.store.intake import spanning_counts
from monitor.store.models import FlagRow, IntakeItem, SessionRow

WEEK = "2026-W49"
MON = datetime(2026, 11, 30, tzinfo=UTC)  # Monday of 2026-W49

# --- the pure policy -------------------------------------------------------------------------

candidates_st = st.lists(
    st.builds(
        Candidate,
        session_id=st.text("abcdef0123", min_size=1, max_size=6),
        incident=st.booleans(),
        compactions=st.integers(0, 20),
        turns=st.integers(0, 5000),
        repeat_flags=st.integers(0, 5),
        restate_flags=st.integers(0, 5),
        spanning_flags=st.integers(0, 10),
    ),
    max_size=40,
    unique_by=lambda c: c.session_id,
)
weeks_st = st.builds(lambda y, w: f"{y}-W{w:02d}", st.integers(2020, 2030), st.integers(1, 52))


@given(candidates_st, weeks_st, st.integers(0, 30), st.randoms())
def test_choose_is_a_deterministic_function_of_the_set(
    cands: list[Candidate], week: str, n: int, rnd: object
) -> None:
    picks = choose(cands, week, n)
    shuffled = list(cands)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert choose(shuffled, week, n) == picks
    ids = [p.session_id for p in picks]
    assert len(ids) == len(set(ids)) == min(n, len(cands))
    assert set(ids) <= {c.session_id for c in cands}


@given(candidates_st, weeks_st, st.integers(1, 30))
def test_incident_sessions_come_first(cands: list[Candidate], week: str, n: int) -> None:
    picks = choose(cands, week, n)
    taken = {p.session_id for p in picks}
    incidents = {c.session_id for c in cands if c.incident}
    if len(incidents) <= n:
        assert incidents <= taken
    else:
        assert taken <= incidents
    tiers = [p.reason["tier"] for p in picks]
    assert tiers == sorted(tiers, key=lambda t: t != "incident")


@given(candidates_st, weeks_st, st.integers(2, 30))
def test_both_signals_are_kept_when_both_exist(cands: list[Candidate], week: str, n: int) -> None:
    picks = choose(cands, week, n)
    by_id = {c.session_id: c for c in cands}
    non_incident = [p for p in picks if not by_id[p.session_id].incident]
    exists = set().union(*(c.signals for c in cands))
    if len(non_incident) >= 2:
        assert set().union(*(by_id[p.session_id].signals for p in picks)) == exists


@given(candidates_st, weeks_st, st.integers(1, 30))
def test_each_pick_records_its_score_and_components(
    cands: list[Candidate], week: str, n: int
) -> None:
    by_id = {c.session_id: c for c in cands}
    for p in choose(cands, week, n):
        c = by_id[p.session_id]
        assert p.score == pytest.approx(weight(c))
        assert p.score == pytest.approx(1 + sum(p.reason["components"].values()), abs=1e-5)
        assert p.reason["signals"] == sorted(c.signals)
        assert p.reason["counts"]["spanning_flags"] == c.spanning_flags


def test_denser_evidence_is_chosen_more_often_but_not_always() -> None:
    dense = Candidate("dense", compactions=6, turns=900, repeat_flags=3, spanning_flags=6)
    thin = Candidate("thin", compactions=0, turns=10, repeat_flags=1, spanning_flags=0)
    wins = Counter(
        choose([dense, thin], f"{2000 + i // 52}-W{i % 52 + 1:02d}", 1)[0].session_id
        for i in range(400)
    )
    share = weight(dense) / (weight(dense) + weight(thin))  # A-Res: P(first) = w / sum(w)
    assert wins["thin"] > 0
    assert wins["dense"] / 400 == pytest.approx(share, abs=0.07)


def test_the_week_seeds_the_draw() -> None:
    same = [Candidate(f"s{i}", repeat_flags=1, spanning_flags=1) for i in range(100)]
    draws = {tuple(p.session_id for p in choose(same, f"2026-W{w:02d}", 5)) for w in range(1, 9)}
    assert len(draws) == 8
    assert choose(same, WEEK, 5, seed="other") != choose(same, WEEK, 5)


def test_a_top_up_does_not_force_a_signal_the_queue_has() -> None:
    repeats = [Candidate(f"r{i}", repeat_flags=2, spanning_flags=2, turns=500) for i in range(10)]
    restate = Candidate("x", restate_flags=1, spanning_flags=0)
    forced = choose([*repeats, restate], WEEK, 3)
    assert "x" in {p.session_id for p in forced}
    assert next(p for p in forced if p.session_id == "x").reason["representation"] is True
    topped = choose([*repeats, restate], WEEK, 3, present=["restated_instruction"])
    assert "x" not in {p.session_id for p in topped}


def test_weeks() -> None:
    assert parse_week(WEEK) == (MON, MON + timedelta(days=7))
    assert iso_week(MON + timedelta(days=6, hours=23)) == WEEK
    assert previous_week(MON + timedelta(hours=1)) == "2026-W48"
    assert parse_week("2026-W53")[0] == datetime(2026, 12, 28, tzinfo=UTC)  # a 53-week year
    for bad in ("2026-49", "2025-W53", "2026-W00"):
        with pytest.raises(ValueError):
            parse_week(bad)


# --- the shell, on the store -----------------------------------------------------------------


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def maker(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[sessionmaker[Session]]:
    url = (
        request.getfixturevalue("pg_url")
        if request.param == "postgres"
        else f"sqlite:///{tmp_path}/store.db"
    )
    upgrade(url)
    engine = make_engine(url)
    yield make_sessionmaker(engine)
    engine.dispose()


def add_session(
    s: Session,
    sid: str,
    when: datetime,
    *,
    incident: bool = False,
    compactions: int = 1,
    turns: int = 100,
    repeats: int = 1,
    restates: int = 0,
    spanning_restates: int = 0,
    last: datetime | None = None,
) -> None:
    """A stored flagged session whose counters agree with its stored flags."""
    s.add(
        SessionRow(
            session_id=sid,
            first_seen=when,
            last_seen=last or when,
            first_flagged_at=when,
            last_flagged_at=last or when,
            turns=turns,
            events=turns,
            tool_calls=turns // 2,
            user_messages=turns // 4,
            compactions=compactions,
            repeat_flags=repeats,
            restate_flags=restates,
            incident=incident,
            attrs={},
        )
    )
    for i in range(repeats):
        s.add(
            FlagRow(
                session_id=sid,
                signal="repeated_tool_call",
                turn=20 + i,
                original_turn=5,
                compaction_turn=18,
                key=f"call{i}",
                event_id=f"{sid}-r{i}",
                ts=when,
                evidence={"tool": "Read", "arguments": f'{{"path":"f{i}"}}', "first_turn": 3},
            )
        )
    for i in range(restates):
        spans = i < spanning_restates
        s.add(
            FlagRow(
                session_id=sid,
                signal="restated_instruction",
                turn=40 + i,
                original_turn=2,
                compaction_turn=30 if spans else None,
                key=f"ins{i}",
                event_id=f"{sid}-s{i}",
                ts=when,
                evidence={"earlier": f"never touch file {i}", "later": f"do not touch {i}"},
            )
        )


def fill(maker: sessionmaker[Session], count: int, when: datetime = MON, prefix: str = "s") -> None:
    with maker.begin() as s:
        for i in range(count):
            add_session(
                s,
                f"{prefix}{i:04d}",
                when + timedelta(minutes=i),
                compactions=i % 6,
                turns=20 + 13 * i,
                repeats=(i % 3 != 0) * (1 + i % 4),
                restates=(i % 3 == 0) + (i % 5 == 0),
                spanning_restates=(i % 2),
            )


def queued(maker: sessionmaker[Session], week: str = WEEK) -> list[str]:
    with maker() as s:
        stmt = select(IntakeItem.session_id).where(IntakeItem.week == week)
        return sorted(s.scalars(stmt))


def every_candidate(s: Session) -> list[Candidate]:
    rows = list(s.scalars(select(SessionRow)))
    spanning = spanning_counts(s, [r.session_id for r in rows])
    return [
        Candidate(
            r.session_id,
            r.incident,
            r.compactions,
            r.turns,
            r.repeat_flags,
            r.restate_flags,
            spanning.get(r.session_id, 0),
        )
        for r in rows
    ]


@pytest.mark.postgres
def test_postgres_draws_the_same_uniforms(pg_url: str) -> None:
    """The SQL ranking and the Python one must agree bit for bit, or pruning is not exact."""
    ids = ["", "a", "abcdefghijk", "abcdefghijkl", "été 😀", "x" * 300, *map(str, range(200))]
    engine = make_engine(pg_url)
    with engine.connect() as conn:
        for week in ("2026-W49", "1999-W01"):
            rows = conn.execute(
                text("SELECT id, hashtextextended(id, :seed) FROM unnest(CAST(:ids AS text[])) id"),
                {"ids": ids, "seed": seed_value(week)},
            ).all()
            for sid, h in rows:
                expected = ((h & ((1 << 52) - 1)) + 0.5) / 2.0**52
                assert uniform(week, sid) == expected
    engine.dispose()


def test_run_week_equals_choose_over_every_candidate(maker: sessionmaker[Session]) -> None:
    fill(maker, 300)  # the pool starts at 64: Postgres must prune and Python re-rank exactly
    with maker.begin() as s:  # many flags, none spanning: the upper bound overrates these
        for i in range(100):
            add_session(s, f"talk{i:03d}", MON, turns=40 + i, repeats=0, restates=6)
    with maker() as s:
        expected = sorted(p.session_id for p in choose(every_candidate(s), WEEK, 12))
    with maker.begin() as s:
        new = run_week(s, WEEK, 12)
    assert len(new) == 12
    assert queued(maker) == expected


def test_run_week_is_deterministic_and_idempotent(maker: sessionmaker[Session]) -> None:
    fill(maker, 120)
    with maker.begin() as s:
        first = run_week(s, WEEK, 10)
    chosen = queued(maker)
    with maker.begin() as s:
        assert run_week(s, WEEK, 10) == []
    assert queued(maker) == chosen and len(first) == 10
    with maker.begin() as s:
        s.execute(delete(IntakeItem))
    with maker.begin() as s:
        run_week(s, WEEK, 10)
    assert queued(maker) == chosen


def test_a_session_is_never_queued_in_two_weeks(maker: sessionmaker[Session]) -> None:
    with maker.begin() as s:  # flagged in both weeks: a candidate for each
        for i in range(6):
            add_session(s, f"both{i}", MON - timedelta(days=2), last=MON + timedelta(days=1))
    with maker.begin() as s:
        assert len(run_week(s, "2026-W48", 3)) == 3
    with maker.begin() as s:
        assert len(run_week(s, WEEK, 10)) == 3
    assert not set(queued(maker, "2026-W48")) & set(queued(maker, WEEK))
    with maker.begin() as s:
        assert run_week(s, WEEK, 10) == []
    with maker() as s:
        assert s.scalar(select(IntakeItem.id).where(IntakeItem.week == "2026-W50")) is None


def test_other_weeks_are_not_candidates(maker: sessionmaker[Session]) -> None:
    fill(maker, 5, when=MON - timedelta(days=7), prefix="old")
    fill(maker, 5, when=MON + timedelta(days=7), prefix="new")
    fill(maker, 3)
    with maker.begin() as s:
        run_week(s, WEEK, 20)
    assert queued(maker) == ["s0000", "s0001", "s0002"]


def test_an_incident_session_is_always_taken(maker: sessionmaker[Session]) -> None:
    fill(maker, 200)
    with maker.begin() as s:  # the thinnest evidence there is, but an incident
        add_session(s, "incident", MON, incident=True, compactions=0, turns=1, repeats=1)
    with maker.begin() as s:
        run_week(s, WEEK, 3)
    with maker() as s:
        first = s.scalars(select(IntakeItem).order_by(IntakeItem.id)).first()
    assert first is not None and first.session_id == "incident"
    assert first.reason["tier"] == "incident"


def test_a_later_run_tops_the_week_up(maker: sessionmaker[Session]) -> None:
    fill(maker, 3)
    with maker.begin() as s:
        assert len(run_week(s, WEEK, 5)) == 3
    with maker.begin() as s:
        assert run_week(s, WEEK, 5) == []
    fill(maker, 4, when=MON + timedelta(days=2), prefix="late")
    with maker.begin() as s:
        assert len(run_week(s, WEEK, 5)) == 2
    with maker.begin() as s:
        assert run_week(s, WEEK, 5) == []
    assert len(queued(maker)) == 5


def test_both_signals_are_queued_when_both_exist(maker: sessionmaker[Session]) -> None:
    with maker.begin() as s:
        for i in range(30):
            add_session(s, f"heavy{i}", MON, compactions=5, turns=2000, repeats=4)
        add_session(s, "restated", MON, compactions=0, turns=5, repeats=0, restates=1)
    with maker.begin() as s:
        run_week(s, WEEK, 4)
    assert "restated" in queued(maker)


def test_items_carry_a_fixture_draft(maker: sessionmaker[Session]) -> None:
    with maker.begin() as s:
        add_session(s, "one", MON, repeats=2, restates=1, spanning_restates=1)
    with maker.begin() as s:
        run_week(s, WEEK, 1)
    with maker() as s:
        item = s.scalars(select(IntakeItem)).one()
    assert item.draft is not None
    assert item.draft["conversation_id"] == "one"
    classes = Counter(e["class"] for e in item.draft["must_survive"])
    assert classes == {"reference": 2, "constraint": 1}
    assert item.reason["counts"]["spanning_flags"] == 3
