"""The review page's writes and reads: each action is recorded in ``intake_actions`` in the same
transaction as the status change it makes, and a status change is one conditional UPDATE on
the status and holder read, so two reviewers racing for an item cannot both win.

Rules are in ``monitor.review.decisions``; this module only reads, applies and records. The
reviewer is always the authenticated one the web shell passes in. Callers own the transaction.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from monitor.review import decisions
from monitor.review.decisions import Action, Move, ReviewError
from monitor.store.intake import flags_of, item_report
from monitor.store.models import IntakeItem, ReviewActionRow, SessionRow, TranscriptRow
from monitor.store.queries import iso
from monitor.store.writes import utc


def _action(row: ReviewActionRow) -> Action:
    return Action(
        id=row.id,
        reviewer=row.reviewer,
        action=row.action,
        entry_id=row.entry_id,
        detail=row.detail or {},
        override=row.override,
        at=row.at,
    )


def actions(session: Session, item_id: int) -> list[Action]:
    stmt = (
        select(ReviewActionRow)
        .where(ReviewActionRow.item_id == item_id)
        .order_by(ReviewActionRow.id)
    )
    return [_action(r) for r in session.scalars(stmt)]


def _item(session: Session, item_id: int) -> IntakeItem:
    row = session.get(IntakeItem, item_id, populate_existing=True)
    if row is None:
        raise ReviewError(f"no intake item {item_id}", 404)
    return row


def _record(
    session: Session,
    item_id: int,
    reviewer: str,
    action: str,
    now: datetime,
    *,
    entry_id: str | None = None,
    detail: Mapping[str, Any] | None = None,
    override: bool = False,
) -> None:
    session.add(
        ReviewActionRow(
            item_id=item_id,
            reviewer=reviewer,
            action=action,
            entry_id=entry_id,
            detail=dict(detail or {}),
            override=override,
            at=utc(now),
        )
    )
    session.flush()


def _apply(session: Session, row: IntakeItem, move: Move, **values: Any) -> None:
    """Move the item if its status and holder are still what was read."""
    holder = IntakeItem.claimed_by
    stmt = (
        update(IntakeItem)
        .where(
            IntakeItem.id == row.id,
            IntakeItem.status == row.status,
            holder.is_(None) if row.claimed_by is None else holder == row.claimed_by,
        )
        .values(status=move.status, claimed_by=move.holder, **values)
        .execution_options(synchronize_session=False)
    )
    if session.execute(stmt).rowcount != 1:  # type: ignore[attr-defined]
        raise ReviewError("the item changed meanwhile; reload it")


def claim(
    session: Session, item_id: int, reviewer: str, now: datetime, *, override: bool = False
) -> None:
    row = _item(session, item_id)
    move = decisions.claim(row.status, row.claimed_by, reviewer, override=override)
    if row.status == "in_review" and row.claimed_by == reviewer:
        return  # already yours: nothing to record
    _apply(session, row, move, claimed_at=utc(now))
    detail = {"from": move.overridden} if move.overridden else {}
    _record(session, item_id, reviewer, "claim", now, detail=detail, override=bool(detail))


def release(
    session: Session, item_id: int, reviewer: str, now: datetime, *, override: bool = False
) -> None:
    row = _item(session, item_id)
    move = decisions.release(row.status, row.claimed_by, reviewer, override=override)
    _apply(session, row, move, claimed_at=None)
    detail = {"from": move.overridden} if move.overridden else {}
    _record(session, item_id, reviewer, "release", now, detail=detail, override=bool(detail))


def resolve(
    session: Session,
    item_id: int,
    reviewer: str,
    now: datetime,
    *,
    accept: bool,
    note: str | None = None,
    override: bool = False,
) -> None:
    row = _item(session, item_id)
    entries = decisions.fold(row.draft, actions(session, item_id))
    confirmed = decisions.tally(entries)["confirmed"]
    note = decisions.check_note(note)
    move = decisions.resolve(
        row.status, row.claimed_by, reviewer, accept=accept, confirmed=confirmed, override=override
    )
    _apply(session, row, move, resolved_by=reviewer, resolved_at=utc(now), note=note)
    detail: dict[str, Any] = {"status": move.status, "note": note}
    if move.overridden:
        detail["from"] = move.overridden
    _record(
        session, item_id, reviewer, "resolve", now, detail=detail, override=bool(move.overridden)
    )


def reopen(session: Session, item_id: int, reviewer: str, now: datetime) -> None:
    row = _item(session, item_id)
    move = decisions.reopen(row.status, reviewer)
    _apply(session, row, move, claimed_at=utc(now), resolved_by=None, resolved_at=None)
    _record(session, item_id, reviewer, "reopen", now, detail={"was": row.status})


def decide(
    session: Session,
    item_id: int,
    reviewer: str,
    now: datetime,
    action: str,
    entry_id: str | None = None,
    fields: Mapping[str, Any] | None = None,
    *,
    call: Mapping[str, Any] | None = None,
    origin: Mapping[str, Any] | None = None,
) -> str:
    """Confirm, reject or edit an entry, or add one; return the entry's id."""
    if action not in decisions.ENTRY_ACTIONS:
        raise ReviewError(f"unknown action {action!r}", 422)
    row = _item(session, item_id)
    decisions.may_change_entries(row.status, row.claimed_by, reviewer)
    turns = int((row.draft or {}).get("turns", 0))
    if action == "add":
        checked = decisions.check_fields(fields or {}, turns)
        entry_id = f"added-{secrets.token_hex(5)}"
        detail: dict[str, Any] = dict(checked)
        if call:
            detail["call"] = dict(call)
        if origin:
            detail["from"] = dict(origin)
        _record(session, item_id, reviewer, "add", now, entry_id=entry_id, detail=detail)
        return entry_id
    entries = {e.id: e for e in decisions.fold(row.draft, actions(session, item_id))}
    if entry_id not in entries:
        raise ReviewError(f"no item {entry_id!r} in this draft", 404)
    detail = decisions.check_fields(fields or {}, turns) if action == "edit" else {}
    _record(session, item_id, reviewer, action, now, entry_id=entry_id, detail=detail)
    return str(entry_id)


# --- reads for the pages ---------------------------------------------------------------------


@dataclass(frozen=True)
class ItemData:
    """Everything the item page shows, read in one transaction."""

    item: dict[str, Any]
    actions: list[Action]
    transcript: dict[str, Any] | None
    flags: list[dict[str, Any]]
    session: dict[str, Any] | None
    previous_id: int | None
    next_id: int | None


def transcript_report(row: TranscriptRow) -> dict[str, Any]:
    return {
        "status": row.status,
        "events": row.events or [],
        "omitted": row.omitted,
        "sources": row.sources,
        "notes": row.notes or [],
        "captured_at": iso(row.captured_at),
    }


def item_data(session: Session, item_id: int) -> ItemData:
    row = _item(session, item_id)
    transcript = session.get(TranscriptRow, item_id)
    srow = session.get(SessionRow, row.session_id)
    week = IntakeItem.week == row.week
    prev_id = session.scalar(select(func.max(IntakeItem.id)).where(week, IntakeItem.id < item_id))
    next_id = session.scalar(select(func.min(IntakeItem.id)).where(week, IntakeItem.id > item_id))
    return ItemData(
        item=item_report(row, draft=True),
        actions=actions(session, item_id),
        transcript=transcript_report(transcript) if transcript is not None else None,
        flags=flags_of(session, [row.session_id]).get(row.session_id, []),
        session={"events": srow.events, "turns": srow.turns} if srow is not None else None,
        previous_id=prev_id,
        next_id=next_id,
    )


def weeks(session: Session) -> list[str]:
    """Weeks that have intake items, newest first."""
    stmt = select(IntakeItem.week).distinct().order_by(IntakeItem.week.desc())
    return [str(w) for w in session.scalars(stmt)]


def queue(session: Session, week: str, status: str | None = None) -> list[dict[str, Any]]:
    """The week's items with their candidate tallies, oldest first."""
    stmt = select(IntakeItem).where(IntakeItem.week == week).order_by(IntakeItem.id)
    if status is not None:
        stmt = stmt.where(IntakeItem.status == status)
    rows = list(session.scalars(stmt))
    by_item: dict[int, list[Action]] = {r.id: [] for r in rows}
    if rows:
        acts = select(ReviewActionRow).where(
            ReviewActionRow.item_id.in_(list(by_item)),
            ReviewActionRow.action.in_(decisions.ENTRY_ACTIONS),
        )
        for a in session.scalars(acts.order_by(ReviewActionRow.id)):
            by_item[a.item_id].append(_action(a))
    transcripts = {}
    if rows:
        stmt_t = select(TranscriptRow.item_id, TranscriptRow.status).where(
            TranscriptRow.item_id.in_(list(by_item))
        )
        transcripts = {int(i): str(s) for i, s in session.execute(stmt_t)}
    out = []
    for r in rows:
        report = item_report(r)
        report["tally"] = decisions.tally(decisions.fold(r.draft, by_item[r.id]))
        report["transcript"] = transcripts.get(r.id)
        out.append(report)
    return out


def accepted_row(session: Session, item_id: int) -> tuple[IntakeItem, list[Action], Any]:
    """An item with its actions and transcript row (for the finished fixture)."""
    row = _item(session, item_id)
    return row, actions(session, item_id), session.get(TranscriptRow, item_id)
