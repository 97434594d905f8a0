"""The fixture-intake queue: items move queued -> in_review -> accepted | rejected.

Every change is one conditional UPDATE (``WHERE status = <expected>``), so a transition happens
once whoever races for it. Claims take the oldest queued item with ``FOR UPDATE SKIP LOCKED`` on
Postgres: concurrent reviewers each lock a different row instead of queueing behind one. SQLite
has no row locks; the conditional UPDATE alone keeps two claims apart there.

Callers own the transaction; times are arguments (``now``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from monitor.store.models import FlagRow, IntakeItem
from monitor.store.queries import flag_report, iso
from monitor.store.writes import utc

if TYPE_CHECKING:
    from monitor.sampling import Pick

STATUSES: Final = ("queued", "in_review", "accepted", "rejected")
#: Ids per IN (...) list, well under every driver's parameter limit.
_CHUNK: Final = 1000


class IntakeError(Exception):
    """A transition the item's current state does not allow (or no such item)."""


# --- used by the sampler ---------------------------------------------------------------------


def week_items(session: Session, week: str) -> list[IntakeItem]:
    return list(
        session.scalars(select(IntakeItem).where(IntakeItem.week == week).order_by(IntakeItem.id))
    )


def spanning_counts(session: Session, session_ids: Sequence[str]) -> dict[str, int]:
    """Session id -> stored flags whose evidence spans a compaction."""
    out: dict[str, int] = {}
    for start in range(0, len(session_ids), _CHUNK):
        chunk = session_ids[start : start + _CHUNK]
        stmt = (
            select(FlagRow.session_id, func.count())
            .where(FlagRow.session_id.in_(chunk), FlagRow.compaction_turn.is_not(None))
            .group_by(FlagRow.session_id)
        )
        out.update({sid: int(n) for sid, n in session.execute(stmt)})
    return out


def flags_of(session: Session, session_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Session id -> its stored flags in report shape, in turn order."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for start in range(0, len(session_ids), _CHUNK):
        chunk = session_ids[start : start + _CHUNK]
        stmt = (
            select(FlagRow)
            .where(FlagRow.session_id.in_(chunk))
            .order_by(FlagRow.session_id, FlagRow.turn, FlagRow.signal, FlagRow.key)
        )
        for row in session.scalars(stmt):
            out[row.session_id].append(flag_report(row))
    return dict(out)


def add_items(
    session: Session, week: str, picks: Iterable[Pick], drafts: Mapping[str, dict[str, Any]]
) -> list[int]:
    """Queue picks; a session already queued (in any week) is skipped. Returns the new ids."""
    rows = [
        {
            "week": week,
            "session_id": p.session_id,
            "score": p.score,
            "reason": p.reason,
            "status": "queued",
            "draft": drafts.get(p.session_id),
        }
        for p in picks
    ]
    if not rows:
        return []
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = (
        insert(IntakeItem)
        .values(rows)
        .on_conflict_do_nothing(index_elements=["session_id"])
        .returning(IntakeItem.id)
    )
    return sorted(int(i) for i in session.scalars(stmt))


# --- the review lifecycle --------------------------------------------------------------------


def item_report(row: IntakeItem, *, draft: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id,
        "week": row.week,
        "session_id": row.session_id,
        "score": row.score,
        "reason": row.reason,
        "status": row.status,
        "claimed_by": row.claimed_by,
        "claimed_at": iso(row.claimed_at),
        "resolved_by": row.resolved_by,
        "resolved_at": iso(row.resolved_at),
        "note": row.note,
        "created_at": iso(row.created_at),
    }
    if draft:
        out["draft"] = row.draft
    return out


def list_items(
    session: Session,
    *,
    week: str | None = None,
    status: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    stmt = select(IntakeItem).order_by(IntakeItem.id)
    if week is not None:
        stmt = stmt.where(IntakeItem.week == week)
    if status is not None:
        stmt = stmt.where(IntakeItem.status == status)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [item_report(r) for r in session.scalars(stmt)]


def get_item(session: Session, item_id: int) -> dict[str, Any] | None:
    row = session.get(IntakeItem, item_id)
    return item_report(row, draft=True) if row is not None else None


def claim(
    session: Session, reviewer: str, now: datetime, *, week: str | None = None
) -> dict[str, Any] | None:
    """Move the oldest queued item to in_review for ``reviewer``; None when nothing is queued."""
    while True:
        stmt = (
            select(IntakeItem.id)
            .where(IntakeItem.status == "queued")
            .order_by(IntakeItem.id)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if week is not None:
            stmt = stmt.where(IntakeItem.week == week)
        item_id = session.scalar(stmt)
        if item_id is None:
            return None
        moved = _transition(
            session, item_id, "queued", status="in_review", claimed_by=reviewer, claimed_at=utc(now)
        )
        if moved is not None:
            return moved
        # Another transaction took it between our read and our write (SQLite): try the next.


def resolve(
    session: Session,
    item_id: int,
    *,
    accept: bool,
    reviewer: str,
    now: datetime,
    note: str | None = None,
) -> dict[str, Any]:
    """Accept or reject an item under review; raises IntakeError otherwise."""
    moved = _transition(
        session,
        item_id,
        "in_review",
        status="accepted" if accept else "rejected",
        resolved_by=reviewer,
        resolved_at=utc(now),
        note=note,
    )
    if moved is None:
        current = session.get(IntakeItem, item_id)
        if current is None:
            raise IntakeError(f"no intake item {item_id}")
        raise IntakeError(f"item {item_id} is {current.status}; only in_review items resolve")
    return moved


def _transition(
    session: Session, item_id: int, expected: str, **values: Any
) -> dict[str, Any] | None:
    stmt = (
        update(IntakeItem)
        .where(IntakeItem.id == item_id, IntakeItem.status == expected)
        .values(**values)
        .returning(IntakeItem)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    row = session.scalars(stmt).one_or_none()
    return item_report(row) if row is not None else None


# --- export ----------------------------------------------------------------------------------


def export_doc(row: IntakeItem) -> dict[str, Any]:
    """The item's fixture draft, with where it came from and how its review went."""
    draft = dict(row.draft or {})
    draft["intake"] = {
        "item_id": row.id,
        "week": row.week,
        "status": row.status,
        "score": row.score,
        "reason": row.reason,
        "reviewed_by": row.resolved_by or row.claimed_by,
        "resolved_at": iso(row.resolved_at),
        "note": row.note,
    }
    return draft


def export_items(
    session: Session,
    *,
    item_id: int | None = None,
    week: str | None = None,
    status: str | None = "accepted",
) -> list[dict[str, Any]]:
    """Export documents: one item by id (whatever its status), or a week's items in ``status``
    (None for every status)."""
    if item_id is not None:
        row = session.get(IntakeItem, item_id)
        if row is None:
            raise IntakeError(f"no intake item {item_id}")
        return [export_doc(row)]
    stmt = select(IntakeItem).order_by(IntakeItem.id)
    if week is not None:
        stmt = stmt.where(IntakeItem.week == week)
    if status is not None:
        stmt = stmt.where(IntakeItem.status == status)
    return [export_doc(r) for r in session.scalars(stmt)]
