"""Read side of the store: the on-call drill-down (``monitor flags``, ``monitor sessions``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.store.models import FlagRow, SessionRow


def iso(dt: datetime | None) -> str | None:
    """ISO time in UTC; SQLite hands back naive datetimes, which the writes stored as UTC."""
    if dt is None:
        return None
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)).isoformat()


def flag_report(row: FlagRow) -> dict[str, Any]:
    """A stored flag in the same item shape as ``Flag.report()`` (replay and flags agree)."""
    return {
        "session_id": row.session_id,
        "signal": row.signal,
        "turn": row.turn,
        "original_turn": row.original_turn,
        "compaction_turn": row.compaction_turn,
        "key": row.key,
        "event_id": row.event_id,
        "ts": iso(row.ts),
        "evidence": row.evidence,
    }


def list_flags(
    session: Session,
    *,
    session_id: str | None = None,
    signal: str | None = None,
    since: datetime | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    stmt = select(FlagRow).order_by(FlagRow.session_id, FlagRow.turn, FlagRow.signal, FlagRow.key)
    if session_id is not None:
        stmt = stmt.where(FlagRow.session_id == session_id)
    if signal is not None:
        stmt = stmt.where(FlagRow.signal == signal)
    if since is not None:
        stmt = stmt.where(FlagRow.ts >= since.astimezone(UTC))
    if limit is not None:
        stmt = stmt.limit(limit)
    return [flag_report(r) for r in session.scalars(stmt)]


def session_report(row: SessionRow) -> dict[str, Any]:
    return {
        "session_id": row.session_id,
        "first_seen": iso(row.first_seen),
        "last_seen": iso(row.last_seen),
        "first_flagged_at": iso(row.first_flagged_at),
        "turns": row.turns,
        "events": row.events,
        "tool_calls": row.tool_calls,
        "user_messages": row.user_messages,
        "compactions": row.compactions,
        "flags": row.repeat_flags + row.restate_flags,
        "repeat_flags": row.repeat_flags,
        "restate_flags": row.restate_flags,
        "incident": row.incident,
        "compactor": row.compactor,
        "agent": row.agent,
    }


def list_sessions(session: Session, *, limit: int | None = None) -> list[dict[str, Any]]:
    total = SessionRow.repeat_flags + SessionRow.restate_flags
    stmt = select(SessionRow).order_by(total.desc(), SessionRow.session_id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [session_report(r) for r in session.scalars(stmt)]
