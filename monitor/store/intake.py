"""The fixture-intake queue: items move queued -> in_review -> accepted | rejected, and back
to queued when reopened.

Every change is one conditional UPDATE (``WHERE status = <expected> AND claimed_by = <seen>``),
so a transition happens once whoever races for it. A claim without an id takes the first queued
item in listing order (``ORDER``) with ``FOR UPDATE SKIP LOCKED`` on Postgres: concurrent
reviewers each lock a different row instead of queueing behind one. SQLite has no row locks;
the conditional UPDATE alone keeps two claims apart there.

An item in review belongs to its reviewer: someone else may resolve, reopen or claim it only
with ``force``, and every transition is appended to the item's ``history`` (who, when, what,
and whose claim a forced one overrode).

Listing order, which is also the ``rank`` shown: oldest week first; within a week, the order the
sampler queued the items (each run's picks best first: incidents, then its weighted draw; a
later top-up's picks after the earlier ones).

Callers own the transaction; times are arguments (``now``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
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
#: The listing (and claiming) order: see the module docstring.
ORDER: Final = (IntakeItem.week, IntakeItem.id)


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


def item_report(row: IntakeItem, *, draft: bool = False, rank: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id,
        "rank": rank,
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
        "history": list(row.history or []),
    }
    if draft:
        out["draft"] = row.draft
    return out


def _ranked() -> Any:
    """Item ids with their rank within their week (``ORDER``), as a subquery."""
    number = func.row_number().over(partition_by=IntakeItem.week, order_by=IntakeItem.id)
    return select(IntakeItem.id.label("item_id"), number.label("rank")).subquery()


def list_items(
    session: Session,
    *,
    week: str | None = None,
    status: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Items in listing order (``ORDER``), each with its rank within its week."""
    ranked = _ranked()
    stmt = (
        select(IntakeItem, ranked.c.rank)
        .join(ranked, ranked.c.item_id == IntakeItem.id)
        .order_by(*ORDER)
    )
    if week is not None:
        stmt = stmt.where(IntakeItem.week == week)
    if status is not None:
        stmt = stmt.where(IntakeItem.status == status)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [item_report(row, rank=int(rank)) for row, rank in session.execute(stmt)]


def _rank_of(session: Session, item_id: int) -> int | None:
    ranked = _ranked()
    found = session.scalar(select(ranked.c.rank).where(ranked.c.item_id == item_id))
    return int(found) if found is not None else None


def get_item(session: Session, item_id: int) -> dict[str, Any] | None:
    row = session.get(IntakeItem, item_id)
    if row is None:
        return None
    return item_report(row, draft=True, rank=_rank_of(session, item_id))


def claim(
    session: Session,
    reviewer: str,
    now: datetime,
    *,
    week: str | None = None,
    item_id: int | None = None,
    force: bool = False,
) -> dict[str, Any] | None:
    """Move an item to in_review for ``reviewer`` and return it: ``item_id``, or else the first
    queued one in listing order (None when nothing is queued).

    Claiming an item another reviewer holds needs ``force`` (recorded); claiming one's own
    again returns it unchanged; a resolved item must be reopened first.
    """
    if item_id is not None:
        return _claim_one(session, reviewer, now, item_id, force)
    while True:
        stmt = (
            select(IntakeItem.id)
            .where(IntakeItem.status == "queued")
            .order_by(*ORDER)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if week is not None:
            stmt = stmt.where(IntakeItem.week == week)
        found = session.scalar(stmt)
        if found is None:
            return None
        moved = _transition(
            session, found, "queued", None, _event("claim", reviewer, now),
            status="in_review", claimed_by=reviewer, claimed_at=utc(now),
        )  # fmt: skip
        if moved is not None:
            return moved
        # Another transaction took it between our read and our write (SQLite): try the next.


def _claim_one(
    session: Session, reviewer: str, now: datetime, item_id: int, force: bool
) -> dict[str, Any]:
    row = _current(session, item_id)
    if row.status in ("accepted", "rejected"):
        raise IntakeError(
            f"item {item_id} is {row.status}; `monitor intake reopen {item_id}` queues it again"
        )
    if row.status == "in_review" and row.claimed_by == reviewer:
        return item_report(row)
    holder = row.claimed_by if row.status == "in_review" else None
    if holder is not None and not force:
        raise IntakeError(_held_message(row, "claim"))
    moved = _transition(
        session, item_id, row.status, holder, _event("claim", reviewer, now, holder),
        status="in_review", claimed_by=reviewer, claimed_at=utc(now),
    )  # fmt: skip
    if moved is None:
        raise IntakeError(f"item {item_id} changed while it was being claimed; try again")
    return moved


def resolve(
    session: Session,
    item_id: int,
    *,
    accept: bool,
    reviewer: str,
    now: datetime,
    note: str | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Accept or reject an item under review; raises IntakeError otherwise.

    An item another reviewer holds resolves only with ``force``, which the history records.
    """
    row = _current(session, item_id)
    if row.status != "in_review":
        raise IntakeError(f"item {item_id} is {row.status}; only in_review items resolve")
    holder = row.claimed_by
    overridden = holder if holder is not None and holder != reviewer else None
    if overridden is not None and not force:
        raise IntakeError(_held_message(row, "resolve"))
    verdict = "accepted" if accept else "rejected"
    event = _event("resolve", reviewer, now, overridden, verdict=verdict)
    moved = _transition(
        session, item_id, "in_review", holder, event,
        status=verdict, resolved_by=reviewer, resolved_at=utc(now), note=note,
    )  # fmt: skip
    if moved is None:
        raise IntakeError(f"item {item_id} changed while it was being resolved; try again")
    return moved


def reopen(
    session: Session, item_id: int, *, reviewer: str, now: datetime, force: bool = False
) -> dict[str, Any]:
    """Put a resolved item (or one in review) back in the queue; the history keeps what it
    was. Reopening an item another reviewer holds in review needs ``force``."""
    row = _current(session, item_id)
    if row.status == "queued":
        raise IntakeError(f"item {item_id} is already queued")
    holder = row.claimed_by if row.status == "in_review" else None
    overridden = holder if holder is not None and holder != reviewer else None
    if overridden is not None and not force:
        raise IntakeError(_held_message(row, "reopen"))
    event = _event("reopen", reviewer, now, overridden, was=row.status)
    moved = _transition(
        session, item_id, row.status, row.claimed_by, event,
        status="queued", claimed_by=None, claimed_at=None, resolved_by=None, resolved_at=None,
    )  # fmt: skip
    if moved is None:
        raise IntakeError(f"item {item_id} changed while it was being reopened; try again")
    return moved


def _current(session: Session, item_id: int) -> IntakeItem:
    row = session.get(IntakeItem, item_id, populate_existing=True)
    if row is None:
        raise IntakeError(f"no intake item {item_id}")
    return row


def _held_message(row: IntakeItem, action: str) -> str:
    since = iso(row.claimed_at) or "?"
    return (
        f"item {row.id} is in review by {row.claimed_by} (since {since}); leave it to them, "
        f"or {action} it with --force (recorded in its history)"
    )


def _event(
    action: str, reviewer: str, now: datetime, overridden: str | None = None, **extra: str
) -> dict[str, Any]:
    out: dict[str, Any] = {"action": action, "by": reviewer, "at": iso(utc(now)), **extra}
    if overridden is not None:
        out["forced"] = True
        out["overrode"] = overridden
    return out


def _transition(
    session: Session,
    item_id: int,
    expected: str,
    holder: str | None,
    event: dict[str, Any],
    **values: Any,
) -> dict[str, Any] | None:
    """Apply ``values`` if the item is still ``expected`` and held by ``holder`` (None: by
    nobody), appending ``event`` to its history; None when it changed meanwhile."""
    history = session.scalar(select(IntakeItem.history).where(IntakeItem.id == item_id))
    held = IntakeItem.claimed_by.is_(None) if holder is None else IntakeItem.claimed_by == holder
    stmt = (
        update(IntakeItem)
        .where(IntakeItem.id == item_id, IntakeItem.status == expected, held)
        .values(history=[*(history or []), event], **values)
        .returning(IntakeItem)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    row = session.scalars(stmt).one_or_none()
    return item_report(row) if row is not None else None


def newest_item_time(session: Session) -> datetime | None:
    """When the newest intake item was queued (the last sample that queued anything)."""
    newest: datetime | None = session.scalar(select(func.max(IntakeItem.created_at)))
    if newest is None:
        return None
    return newest.replace(tzinfo=UTC) if newest.tzinfo is None else newest


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
