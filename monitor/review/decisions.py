"""What a reviewer may do to an intake item, and what the recorded actions add up to.

The store keeps every action in order (``intake_actions``); the state of each candidate is a
fold over them (``fold``), so the record of who decided what is the state itself and cannot
drift from it. The lifecycle rules (``claim``, ``release``, ``resolve``, ``reopen``) are pure
functions of the item's status and holder; the store applies them with a conditional UPDATE.

- Claiming a queued item makes it yours; an item another reviewer holds needs an override,
  which is recorded with the holder it was taken from. Resolving or releasing one is the same.
- Only the holder changes candidates: confirm, reject, edit (saving an edit confirms it), or add
  an item the detectors missed (added items are confirmed).
- Accepting needs at least one confirmed item; the finished fixture holds only those.
- A resolved item can be reopened; it goes back into review, held by whoever reopened it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final, Literal

CLASSES: Final = ("constraint", "commitment", "open_question", "reference")
VERDICTS: Final = ("confirmed", "rejected")
ENTRY_ACTIONS: Final = ("confirm", "reject", "edit", "add")
LIFECYCLE_ACTIONS: Final = ("claim", "release", "resolve", "reopen")
EDITABLE: Final = ("class", "turn", "literal", "probe", "expect")
MAX_LITERAL: Final = 4_000
MAX_TEXT: Final = 2_000
MAX_NOTE: Final = 2_000


class ReviewError(ValueError):
    """A request the review rules refuse. ``status`` is the HTTP status that says why: 409 for
    the item's state, 422 for a value, 404 for a missing item or entry."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Action:
    """One recorded reviewer action."""

    id: int
    reviewer: str
    action: str
    entry_id: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    override: bool = False
    at: datetime | None = None


@dataclass(frozen=True)
class Entry:
    """A ``must_survive`` candidate as the review left it."""

    id: str
    cls: str
    turn: int
    literal: str
    probe: str
    expect: str
    origin: Literal["draft", "added"] = "draft"
    call: Mapping[str, Any] | None = None
    verdict: str | None = None
    edited: bool = False
    decided_by: str | None = None
    #: The draft's evidence and survival verdicts, shown beside the candidate, never exported.
    evidence: Mapping[str, Any] | None = None
    seen: tuple[Mapping[str, Any], ...] = ()

    def fields(self) -> dict[str, Any]:
        """The entry as a fixture states it."""
        out: dict[str, Any] = {
            "id": self.id,
            "class": self.cls,
            "turn": self.turn,
            "literal": self.literal,
            "probe": self.probe,
            "expect": self.expect,
        }
        if self.call is not None:
            out["call"] = dict(self.call)
        return out


def _text(raw: Mapping[str, Any], name: str, limit: int) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ReviewError(f"{name} must not be empty", 422)
    value = value.strip()
    if len(value) > limit:
        raise ReviewError(f"{name} is longer than {limit} characters", 422)
    return value


def check_fields(raw: Mapping[str, Any], turns: int) -> dict[str, Any]:
    """A reviewer's class, turn, literal, probe and expect, checked and normalised."""
    cls = raw.get("class")
    if cls not in CLASSES:
        raise ReviewError(f"class must be one of {', '.join(CLASSES)}", 422)
    try:
        turn = int(raw.get("turn"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ReviewError("turn must be a whole number", 422) from None
    if not 0 <= turn <= max(turns, 0):
        raise ReviewError(f"turn must be between 0 and {turns}", 422)
    return {
        "class": cls,
        "turn": turn,
        "literal": _text(raw, "literal", MAX_LITERAL),
        "probe": _text(raw, "probe", MAX_TEXT),
        "expect": _text(raw, "expect", MAX_TEXT),
    }


def _from_draft(entry: Mapping[str, Any]) -> Entry:
    return Entry(
        id=str(entry["id"]),
        cls=str(entry["class"]),
        turn=int(entry["turn"]),
        literal=str(entry.get("literal", "")),
        probe=str(entry.get("probe", "")),
        expect=str(entry.get("expect", "")),
        call=entry.get("call"),
        evidence=entry.get("evidence"),
        seen=tuple(entry.get("seen") or ()),
    )


def _with_fields(entry: Entry, fields: Mapping[str, Any]) -> Entry:
    return replace(
        entry,
        cls=str(fields.get("class", entry.cls)),
        turn=int(fields.get("turn", entry.turn)),
        literal=str(fields.get("literal", entry.literal)),
        probe=str(fields.get("probe", entry.probe)),
        expect=str(fields.get("expect", entry.expect)),
    )


def fold(draft: Mapping[str, Any] | None, actions: Iterable[Action]) -> tuple[Entry, ...]:
    """The candidates after the actions, in order: the draft's, then the added ones.

    Actions on entries that do not exist are ignored (the shell refuses them before recording).
    """
    entries: dict[str, Entry] = {}
    for raw in (draft or {}).get("must_survive") or ():
        entry = _from_draft(raw)
        entries[entry.id] = entry
    for a in actions:
        if a.action == "add" and a.entry_id and a.entry_id not in entries:
            base = Entry(a.entry_id, "constraint", 0, "", "", "", origin="added")
            call = a.detail.get("call")
            added = replace(_with_fields(base, a.detail), call=call if call else None)
            entries[a.entry_id] = replace(added, verdict="confirmed", decided_by=a.reviewer)
            continue
        found = entries.get(a.entry_id or "")
        if found is None:
            continue
        entry = found
        if a.action == "confirm":
            entries[entry.id] = replace(entry, verdict="confirmed", decided_by=a.reviewer)
        elif a.action == "reject":
            entries[entry.id] = replace(entry, verdict="rejected", decided_by=a.reviewer)
        elif a.action == "edit":
            edited = _with_fields(entry, a.detail)
            entries[entry.id] = replace(
                edited, verdict="confirmed", edited=True, decided_by=a.reviewer
            )
    return tuple(entries.values())


def tally(entries: Iterable[Entry]) -> dict[str, int]:
    out = {"confirmed": 0, "rejected": 0, "undecided": 0}
    for e in entries:
        out[e.verdict or "undecided"] += 1
    return out


# --- the lifecycle ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """A permitted transition: the new status and holder, and whose claim was overridden."""

    status: str
    holder: str | None
    overridden: str | None = None


def _held(status: str, holder: str | None, reviewer: str, override: bool, what: str) -> str | None:
    """The other reviewer overridden (None when the reviewer holds the item); raises otherwise."""
    if status != "in_review":
        raise ReviewError(f"the item is {status}; only an item in review can be {what}")
    if holder == reviewer:
        return None
    if not override:
        raise ReviewError(f"{holder} holds this item; overriding their claim is recorded")
    return holder


def claim(status: str, holder: str | None, reviewer: str, *, override: bool = False) -> Move:
    if status == "queued":
        return Move("in_review", reviewer)
    if status == "in_review":
        if holder == reviewer:
            return Move("in_review", reviewer)
        if not override:
            raise ReviewError(f"{holder} holds this item; take it over with an override")
        return Move("in_review", reviewer, holder)
    raise ReviewError(f"the item is {status}; reopen it to review it again")


def release(status: str, holder: str | None, reviewer: str, *, override: bool = False) -> Move:
    return Move("queued", None, _held(status, holder, reviewer, override, "released"))


def resolve(
    status: str,
    holder: str | None,
    reviewer: str,
    *,
    accept: bool,
    confirmed: int,
    override: bool = False,
) -> Move:
    overridden = _held(status, holder, reviewer, override, "resolved")
    if accept and confirmed < 1:
        raise ReviewError("confirm at least one item before accepting, or reject the item", 422)
    return Move("accepted" if accept else "rejected", holder, overridden)


def reopen(status: str, reviewer: str) -> Move:
    if status not in ("accepted", "rejected"):
        raise ReviewError(f"the item is {status}; only a resolved item can be reopened")
    return Move("in_review", reviewer)


def may_change_entries(status: str, holder: str | None, reviewer: str) -> None:
    """Raise unless ``reviewer`` holds the item in review."""
    if status != "in_review":
        raise ReviewError(f"the item is {status}; claim it to change its items")
    if holder != reviewer:
        raise ReviewError(f"{holder} holds this item; take it over to change its items")


def check_note(note: object) -> str | None:
    if note is None or (isinstance(note, str) and not note.strip()):
        return None
    if not isinstance(note, str):
        raise ReviewError("note must be text", 422)
    if len(note) > MAX_NOTE:
        raise ReviewError(f"note is longer than {MAX_NOTE} characters", 422)
    return note.strip()
