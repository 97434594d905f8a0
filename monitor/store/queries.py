"""Read side of the store: the on-call drill-down (``monitor flags``, ``monitor sessions``)
and the survival report's inputs (``monitor report``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, func, or_, select
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
        "source": row.source,
    }


def _sessions_of_agent(agent: str) -> Select[str]:
    return select(SessionRow.session_id).where(SessionRow.agent == agent)


def list_flags(
    session: Session,
    *,
    session_id: str | None = None,
    signal: str | None = None,
    since: datetime | None = None,
    compactor: str | None = None,
    agent: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Stored flags matching every filter given, in (session, turn, signal, key) order.

    ``since`` compares the flagged event's time; ``compactor`` is the version of the compaction
    the flag follows; ``agent`` is the session's (flags of sessions not stored yet are left out).
    """
    stmt = select(FlagRow).order_by(FlagRow.session_id, FlagRow.turn, FlagRow.signal, FlagRow.key)
    if session_id is not None:
        stmt = stmt.where(FlagRow.session_id == session_id)
    if signal is not None:
        stmt = stmt.where(FlagRow.signal == signal)
    if since is not None:
        stmt = stmt.where(FlagRow.ts >= since.astimezone(UTC))
    if compactor is not None:
        stmt = stmt.where(FlagRow.compactor == compactor)
    if agent is not None:
        stmt = stmt.where(FlagRow.session_id.in_(_sessions_of_agent(agent)))
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
        "flags": row.repeat_flags + row.restate_flags + row.dropped_flags + row.inverted_flags,
        "repeat_flags": row.repeat_flags,
        "restate_flags": row.restate_flags,
        "dropped_flags": row.dropped_flags,
        "inverted_flags": row.inverted_flags,
        "incident": row.incident,
        "compactor": row.compactor,
        "agent": row.agent,
        "sources": row.sources,
    }


def list_sessions(
    session: Session,
    *,
    signal: str | None = None,
    since: datetime | None = None,
    compactor: str | None = None,
    agent: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Stored sessions matching every filter given, most flags first.

    ``signal``: sessions with a stored flag of that signal; ``since``: flagged at or after it
    (its latest flag's event time); ``compactor``: the session's latest compactor version.
    """
    total = (
        SessionRow.repeat_flags
        + SessionRow.restate_flags
        + SessionRow.dropped_flags
        + SessionRow.inverted_flags
    )
    # Sessions stored only for their survival counts (checked, nothing lost) are not flagged.
    stmt = (
        select(SessionRow)
        .where(or_(total > 0, SessionRow.incident))
        .order_by(total.desc(), SessionRow.session_id)
    )
    if signal is not None:
        flagged = select(FlagRow.session_id).where(FlagRow.signal == signal)
        stmt = stmt.where(SessionRow.session_id.in_(flagged))
    if since is not None:
        stmt = stmt.where(SessionRow.last_flagged_at >= since.astimezone(UTC))
    if compactor is not None:
        stmt = stmt.where(SessionRow.compactor == compactor)
    if agent is not None:
        stmt = stmt.where(SessionRow.agent == agent)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [session_report(r) for r in session.scalars(stmt)]


def survival_inputs(
    session: Session, *, since: datetime | None = None
) -> tuple[list[dict[str, Any]], dict[str, dict[str, int]], dict[str, int]]:
    """What ``monitor report`` sums: each stored session's survival counts, the flags per
    compactor and signal, and the compactions per compactor.

    ``since`` keeps sessions last seen at or after it, and flags raised at or after it.
    Each compaction counts under its own compactor version (``sessions.compactions_by``);
    rows written before that column count all their compactions under the latest version.
    """
    sessions = select(
        SessionRow.survival,
        SessionRow.compactor,
        SessionRow.compactions,
        SessionRow.compactions_by,
    )
    flags = (
        select(FlagRow.compactor, FlagRow.signal, func.count())
        .where(FlagRow.compactor.is_not(None))
        .group_by(FlagRow.compactor, FlagRow.signal)
    )
    if since is not None:
        sessions = sessions.where(SessionRow.last_seen >= since.astimezone(UTC))
        flags = flags.where(FlagRow.ts >= since.astimezone(UTC))
    counts: list[dict[str, Any]] = []
    compactions: dict[str, int] = {}
    for survival, compactor, n, by in session.execute(sessions):
        if survival:
            counts.append(survival)
        if by:
            for name, k in by.items():
                compactions[name] = compactions.get(name, 0) + int(k)
        elif compactor is not None and n:
            compactions[compactor] = compactions.get(compactor, 0) + int(n)
    downstream: dict[str, dict[str, int]] = {}
    for compactor, signal, n in session.execute(flags):
        downstream.setdefault(str(compactor), {})[signal] = int(n)
    return counts, downstream, compactions
