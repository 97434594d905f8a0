"""Idempotent batched writes: at-least-once delivery plus keyed upserts loses and doubles nothing.

Callers own the transaction (``with sessionmaker.begin() as s: write_flags(s, flags)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Final, cast

from sqlalchemy import ColumnElement, CursorResult, case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from monitor.detect.session import Meta
from monitor.flags import Flag
from monitor.provenance import merge_spans
from monitor.store.models import FlagRow, SessionRow

#: Writes go to the tables, not the ORM entities: SQLAlchemy's ORM bulk path adds per-row
#: work that the sinks, which only insert and upsert, do not need.
_FLAGS: Final = FlagRow.__table__
_SESSIONS: Final = SessionRow.__table__


def _insert(session: Session, table: Any) -> Any:
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        return postgresql.insert(table)
    if dialect == "sqlite":
        return sqlite.insert(table)
    raise ValueError(f"unsupported database dialect {dialect!r} (use PostgreSQL or SQLite)")


def utc(dt: datetime | None) -> datetime | None:
    """Store UTC: SQLite keeps no offset, so every stored time is normalised first."""
    return dt.astimezone(UTC) if dt is not None else None


def flag_row(flag: Flag) -> dict[str, Any]:
    return {
        "session_id": flag.session_id,
        "signal": flag.signal,
        "turn": flag.turn,
        "original_turn": flag.original_turn,
        "compaction_turn": flag.compaction_turn,
        "key": flag.key,
        "event_id": flag.event_id,
        "ts": utc(flag.ts),
        "compactor": flag.evidence.get("compactor"),
        "evidence": flag.evidence,
        "source": flag.source,
    }


def write_flags(session: Session, flags: Sequence[Flag]) -> int:
    """Insert flags, ignoring ones already stored; return how many were new.

    One statement on the table, executed with the rows as parameters: psycopg pipelines it
    through one prepared statement. The count is the summed rowcount (a row skipped by
    ON CONFLICT counts 0); RETURNING would send the rows through SQLAlchemy's ORM bulk path,
    which cost two to three times as much per flag.
    """
    if not flags:
        return 0
    stmt = _insert(session, _FLAGS).on_conflict_do_nothing(
        index_elements=["session_id", "signal", "turn", "key"]
    )
    result = session.execute(
        stmt, [flag_row(f) for f in flags], execution_options={"preserve_rowcount": True}
    )
    return cast(CursorResult[Any], result).rowcount


def session_row(
    meta: Meta,
    flag_times: tuple[datetime, datetime] | None,
    sources: list[dict[str, Any]] | None = None,
    items: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    from monitor.detect import survival_counts

    return {
        "session_id": meta.session_id,
        "first_seen": utc(meta.first_ts),
        "last_seen": utc(meta.last_ts),
        "first_flagged_at": utc(flag_times[0]) if flag_times else None,
        "last_flagged_at": utc(flag_times[1]) if flag_times else None,
        "turns": meta.max_turn + 1,
        "events": meta.events,
        "tool_calls": meta.tool_calls,
        "user_messages": meta.user_messages,
        "compactions": meta.compactions,
        "repeat_flags": meta.repeat_flags,
        "restate_flags": meta.restate_flags,
        "restate_spanning": meta.restate_spanning,
        "retries": meta.retries,
        "incident": meta.incident,
        "compactor": meta.compactor,
        "agent": meta.attrs.get("agent"),
        "attrs": dict(meta.attrs),
        "sources": sources,
        "dropped_flags": meta.dropped_flags,
        "inverted_flags": meta.inverted_flags,
        "survival": survival_counts(meta) or None,
        "items": items,
        "compactions_by": dict(meta.compacted) or None,
    }


_COUNTERS = (
    "turns",
    "events",
    "tool_calls",
    "user_messages",
    "compactions",
    "repeat_flags",
    "restate_flags",
    "restate_spanning",
    "retries",
    "dropped_flags",
    "inverted_flags",
)


def upsert_sessions(
    session: Session,
    metas: Iterable[Meta],
    flag_times: dict[str, tuple[datetime, datetime]] | None = None,
    sources: dict[str, list[dict[str, Any]]] | None = None,
    items: dict[str, list[dict[str, Any]]] | None = None,
) -> int:
    """Insert or update session rows from detector state; return how many rows were written.

    Counters are absolute and only move up (GREATEST), so replaying older state, or the same
    state twice, never lowers them. ``flag_times`` maps session id -> (first, last) flag time.
    ``sources`` maps session id -> its input spans; they widen the stored ones (read in the
    same transaction), so a session replayed from two files keeps both.
    """
    flag_times = flag_times or {}
    sources = sources or {}
    items = items or {}
    rows = [
        session_row(m, flag_times.get(m.session_id), sources.get(m.session_id),
                    items.get(m.session_id))
        for m in metas
    ]  # fmt: skip
    if not rows:
        return 0
    if sources:
        _widen_sources(session, rows)
    dialect = session.get_bind().dialect.name
    greatest = func.greatest if dialect == "postgresql" else func.max

    def least(a: Any, b: Any) -> ColumnElement[Any]:
        if dialect == "postgresql":
            return func.least(a, b)  # ignores NULLs
        return func.min(func.coalesce(a, b), func.coalesce(b, a))

    def newest(a: Any, b: Any) -> ColumnElement[Any]:
        if dialect == "postgresql":
            return greatest(a, b)
        return func.max(func.coalesce(a, b), func.coalesce(b, a))

    stmt = _insert(session, _SESSIONS)
    ex, t = stmt.excluded, _SESSIONS.c
    updates: dict[str, Any] = {c: greatest(t[c], ex[c]) for c in _COUNTERS}
    updates.update(
        first_seen=least(t.first_seen, ex.first_seen),
        last_seen=newest(t.last_seen, ex.last_seen),
        first_flagged_at=least(t.first_flagged_at, ex.first_flagged_at),
        last_flagged_at=newest(t.last_flagged_at, ex.last_flagged_at),
        incident=t.incident | ex.incident,
        compactor=func.coalesce(ex.compactor, t.compactor),
        # The survival counts and the ledger are whole values, not counters: the newer state's
        # replace them, and an older state replayed (fewer compactions, fewer events) does not.
        survival=case(
            (ex.compactions >= t.compactions, func.coalesce(ex.survival, t.survival)),
            else_=t.survival,
        ),
        compactions_by=case(
            (ex.compactions >= t.compactions, func.coalesce(ex.compactions_by, t.compactions_by)),
            else_=t.compactions_by,
        ),
        items=case(
            (ex.events >= t.events, func.coalesce(ex["items"], t["items"])), else_=t["items"]
        ),
        agent=func.coalesce(ex.agent, t.agent),
        attrs=ex.attrs,
        sources=func.coalesce(ex.sources, t.sources),
        updated_at=func.now(),
    )
    stmt = stmt.on_conflict_do_update(index_elements=["session_id"], set_=updates)
    # Executed with the rows as parameters (see ``write_flags``): a multi-row VALUES was
    # compiled anew per batch, ~600 us per row. Rows go in session order, so two writers
    # lock shared rows in the same order.
    rows.sort(key=lambda r: r["session_id"])
    session.execute(stmt, rows)
    return len(rows)


def _widen_sources(session: Session, rows: list[dict[str, Any]]) -> None:
    """Merge each row's new spans into the spans stored for its session."""
    ids = [r["session_id"] for r in rows if r["sources"]]
    stored: dict[str, Any] = {}
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        query = select(_SESSIONS.c.session_id, _SESSIONS.c.sources).where(
            _SESSIONS.c.session_id.in_(chunk), _SESSIONS.c.sources.is_not(None)
        )
        stored.update({sid: spans for sid, spans in session.execute(query)})
    for row in rows:
        if row["session_id"] in stored:
            row["sources"] = merge_spans(stored[row["session_id"]], row["sources"])
