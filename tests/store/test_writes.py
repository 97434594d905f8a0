"""The store contract, run on both backends: SQLite (embedded default) and real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import inspect, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.detect.session import Meta
from monitor.flags import Flag
from monitor.store.db import make_engine, make_sessionmaker, upgrade
from monitor.store.models import FlagRow, SessionRow
from monitor.store.queries import list_flags, list_sessions
from monitor.store.writes import upsert_sessions, write_flags

T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def maker(request: pytest.FixtureRequest, tmp_path) -> Iterator[sessionmaker[Session]]:  # type: ignore[no-untyped-def]
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/store.db"
    else:
        url = request.getfixturevalue("pg_url")
    upgrade(url)
    engine = make_engine(url)
    yield make_sessionmaker(engine)
    engine.dispose()


def aware(dt: datetime) -> datetime:
    """SQLite returns naive datetimes (stored as UTC); Postgres returns aware ones."""
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def flag(session: str = "s1", turn: int = 5, key: str = "k1", **over: object) -> Flag:
    values: dict[str, object] = {
        "session_id": session,
        "signal": "repeated_tool_call",
        "turn": turn,
        "original_turn": 1,
        "compaction_turn": 3,
        "key": key,
        "evidence": {"tool": "Read", "compactor": "v2", "arguments": "{}"},
        "event_id": f"{session}-{turn}-{key}",
        "ts": T0 + timedelta(minutes=turn),
    }
    values.update(over)
    return Flag(**values)  # type: ignore[arg-type]


def meta(session: str = "s1", events: int = 10, **over: object) -> Meta:
    values: dict[str, object] = {
        "session_id": session,
        "first_ts": T0,
        "last_ts": T0 + timedelta(hours=1),
        "max_turn": events - 1,
        "events": events,
        "tool_calls": events // 2,
        "compactions": 1,
        "repeat_flags": 1,
        "compactor": "v2",
        "attrs": {"agent": "pi"},
    }
    values.update(over)
    return Meta(**values)  # type: ignore[arg-type]


def test_migrations_create_the_schema_and_rerun_cleanly(maker: sessionmaker[Session]) -> None:
    engine = maker.kw["bind"]
    tables = set(inspect(engine).get_table_names())
    assert {"sessions", "flags", "intake_items", "alembic_version"} <= tables
    upgrade(engine.url.render_as_string(hide_password=False))  # again: nothing to do, no error


def test_flags_are_idempotent(maker: sessionmaker[Session]) -> None:
    batch = [flag(turn=5), flag(turn=6), flag(turn=6, key="k2"), flag(session="s2")]
    with maker.begin() as s:
        assert write_flags(s, batch) == 4
    with maker.begin() as s:
        assert write_flags(s, batch + batch) == 0
        assert write_flags(s, [flag(turn=7)]) == 1
    with maker() as s:
        assert s.scalar(select(FlagRow.id).where(FlagRow.turn == 7)) is not None
        assert len(s.scalars(select(FlagRow)).all()) == 5


def test_large_batches_are_chunked(maker: sessionmaker[Session]) -> None:
    batch = [flag(turn=t) for t in range(1234)]
    with maker.begin() as s:
        assert write_flags(s, batch) == 1234
    with maker() as s:
        assert len(list_flags(s)) == 1234


def test_flag_reports_round_trip_times_in_utc(maker: sessionmaker[Session]) -> None:
    plus2 = timezone(timedelta(hours=2))
    f = flag(ts=datetime(2026, 12, 1, 14, tzinfo=plus2))
    with maker.begin() as s:
        write_flags(s, [f])
    with maker() as s:
        [row] = list_flags(s)
        assert row == f.report()
        assert row["ts"] == "2026-12-01T12:00:00+00:00"
        assert list_flags(s, since=datetime(2026, 12, 1, 12, 30, tzinfo=UTC)) == []
        assert list_flags(s, signal="restated_instruction") == []
        assert list_flags(s, session_id="s1") == [row]


def test_session_counters_only_move_up(maker: sessionmaker[Session]) -> None:
    first = (T0 + timedelta(minutes=5), T0 + timedelta(minutes=9))
    with maker.begin() as s:
        upsert_sessions(s, [meta(events=10)], {"s1": first})
    with maker.begin() as s:  # older state replayed: nothing goes down
        upsert_sessions(
            s, [meta(events=4, incident=True)], {"s1": (T0 + timedelta(minutes=7),) * 2}
        )
    with maker.begin() as s:
        upsert_sessions(s, [meta(events=12, restate_flags=2)])
    with maker() as s:
        row = s.get(SessionRow, "s1")
        assert row is not None
        assert (row.events, row.turns, row.restate_flags, row.incident) == (12, 12, 2, True)
        assert row.first_flagged_at is not None and row.last_flagged_at is not None
        assert aware(row.first_flagged_at) == first[0]
        assert aware(row.last_flagged_at) == first[1]
        [listed] = list_sessions(s)
        assert listed["flags"] == 3 and listed["agent"] == "pi"


def test_survival_counts_and_ledger_follow_the_newest_state(maker: sessionmaker[Session]) -> None:
    cells = (0,) * 20
    newer = meta(compactions=2, events=12, dropped_flags=1, survival={"v2": (1, *cells[1:])})
    older = meta(compactions=1, events=8, survival={"v2": cells})
    items = [{"id": "i1", "class": "constraint", "turn": 1, "literal": "Never push to main."}]
    with maker.begin() as s:
        upsert_sessions(s, [newer], items={"s1": items})
    with maker.begin() as s:  # an older state redelivered keeps the newer counts and ledger
        upsert_sessions(s, [older], items={"s1": []})
    with maker() as s:
        row = s.get(SessionRow, "s1")
        assert row is not None
        assert row.dropped_flags == 1 and row.items == items
        assert row.survival and sum(sum(v.values()) for v in row.survival["v2"].values()) == 1
