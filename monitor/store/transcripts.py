"""Captured transcripts of intake items (``intake_transcripts``): what to capture, and the copy.

A session's provenance is the ``sessions.sources`` column. Stores migrated before it existed do
not have it; ``session_sources`` looks the column up instead of assuming it, so capture works on
both and reports such sessions as not recorded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import JSON, String, column, inspect, or_, select, table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from monitor.fixtures import with_summaries
from monitor.store.models import FlagRow, IntakeItem, TranscriptRow
from monitor.store.writes import utc

if TYPE_CHECKING:
    from monitor.capture import Capture

#: Ids per IN (...) list, well under every driver's parameter limit.
_CHUNK: Final = 1000
#: Captures worth trying again: the source could not be asked last time.
RETRY: Final = ("unavailable",)

_SESSIONS: Final = table("sessions", column("session_id", String), column("sources", JSON))


def pending(
    session: Session, *, week: str | None = None, item_ids: Sequence[int] | None = None
) -> list[tuple[int, str]]:
    """(item id, session id) of items with no transcript yet, or one worth trying again."""
    stmt = (
        select(IntakeItem.id, IntakeItem.session_id)
        .outerjoin(TranscriptRow, TranscriptRow.item_id == IntakeItem.id)
        .where(or_(TranscriptRow.item_id.is_(None), TranscriptRow.status.in_(RETRY)))
        .order_by(IntakeItem.id)
    )
    if week is not None:
        stmt = stmt.where(IntakeItem.week == week)
    if item_ids is not None:
        stmt = stmt.where(IntakeItem.id.in_(list(item_ids)))
    return [(int(i), str(s)) for i, s in session.execute(stmt)]


def has_sources(session: Session) -> bool:
    """Whether the store records sessions' provenance (the ``sessions.sources`` column)."""
    columns = inspect(session.connection()).get_columns("sessions")
    return any(c["name"] == "sources" for c in columns)


def session_sources(
    session: Session, session_ids: Sequence[str]
) -> dict[str, list[dict[str, Any]] | None]:
    """Session id -> its recorded spans (None where not recorded, or nothing is)."""
    if not session_ids or not has_sources(session):
        return {}
    out: dict[str, list[dict[str, Any]] | None] = {}
    for start in range(0, len(session_ids), _CHUNK):
        chunk = list(session_ids[start : start + _CHUNK])
        stmt = select(_SESSIONS.c.session_id, _SESSIONS.c.sources).where(
            _SESSIONS.c.session_id.in_(chunk)
        )
        for sid, sources in session.execute(stmt):
            out[sid] = list(sources) if isinstance(sources, list) else None
    return out


def focus_turns(session: Session, session_ids: Sequence[str]) -> dict[str, set[int]]:
    """Session id -> the turns its flags point at (flagged, original and compaction turns)."""
    out: dict[str, set[int]] = defaultdict(set)
    for start in range(0, len(session_ids), _CHUNK):
        chunk = list(session_ids[start : start + _CHUNK])
        stmt = select(
            FlagRow.session_id, FlagRow.turn, FlagRow.original_turn, FlagRow.compaction_turn
        ).where(FlagRow.session_id.in_(chunk))
        for sid, *turns in session.execute(stmt):
            out[sid].update(int(t) for t in turns if t is not None)
    return dict(out)


def save(session: Session, item_id: int, got: Capture, now: datetime) -> None:
    """Store (or replace) an item's transcript, and give the item's draft the compaction
    summaries it holds (``fixtures.with_summaries``)."""
    row = {
        "item_id": item_id,
        "session_id": got.session_id,
        "status": got.status,
        "events": list(got.events),
        "omitted": got.omitted,
        "sources": [dict(s) for s in got.sources] if got.sources is not None else None,
        "notes": list(got.notes),
        "captured_at": utc(now),
    }
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(TranscriptRow).values(row)
    stmt = stmt.on_conflict_do_update(
        index_elements=["item_id"], set_={k: stmt.excluded[k] for k in row if k != "item_id"}
    )
    session.execute(stmt)
    item = session.get(IntakeItem, item_id)
    if item is not None and item.draft is not None and got.events:
        item.draft = with_summaries(item.draft, got.events)


def load(session: Session, item_id: int) -> TranscriptRow | None:
    return session.get(TranscriptRow, item_id)
