"""The finished fixture: an accepted item's confirmed entries, without the review's annotations.

``build`` is pure; ``document`` reads an item from the store and builds it; ``dumps`` is the one
serialisation both the page's download and ``monitor intake export --fixture`` write, so the two
give the same bytes. Every document is checked against ``schemas/fixture.v1.json`` (shipped in
the package as ``fixture.v1.json``) before it leaves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from monitor.review.decisions import Entry, ReviewError, fold

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from sqlalchemy.orm import Session

FORMAT: Final = "fixture.v1"
SCHEMA_FILE: Final = "fixture.v1.json"
#: Transcript states worth shipping: ``gone`` and the rest have no events.
_SHIPPED: Final = ("captured", "partial")
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def schema() -> dict[str, Any]:
    text = resources.files("monitor.review").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator() -> Validator:
    import jsonschema

    return jsonschema.Draft202012Validator(
        schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def validate(doc: Mapping[str, Any]) -> None:
    """Raise ReviewError (500: the fixture the code built is wrong) naming the first problem."""
    error = next(iter(_validator().iter_errors(doc)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(document)"
        raise ReviewError(
            f"the fixture does not match {SCHEMA_FILE} at {where}: {error.message}", 500
        )


def build(
    item: Mapping[str, Any],
    entries: Iterable[Entry],
    transcript: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The fixture of an accepted item (``item_report`` shape, draft included)."""
    if item["status"] != "accepted":
        raise ReviewError(f"item {item['id']} is {item['status']}; only accepted items export")
    confirmed = sorted(
        (e.fields() for e in entries if e.verdict == "confirmed"),
        key=lambda f: (f["turn"], f["id"]),
    )
    if not confirmed:
        raise ReviewError(f"item {item['id']} has no confirmed items to export")
    draft = item.get("draft") or {}
    doc: dict[str, Any] = {
        "format": FORMAT,
        "conversation_id": draft.get("conversation_id") or item["session_id"],
        "turns": int(draft.get("turns", 0)),
        "compactions_expected": int(draft.get("compactions_expected", 0)),
        "must_survive": confirmed,
    }
    if transcript is not None and transcript.get("status") in _SHIPPED:
        doc["transcript"] = {
            "status": transcript["status"],
            "omitted": int(transcript.get("omitted", 0)),
            "events": list(transcript.get("events") or ()),
        }
    doc["review"] = {
        "item_id": item["id"],
        "week": item["week"],
        "reviewed_by": item["resolved_by"],
        "resolved_at": item["resolved_at"],
    }
    return doc


def document(session: Session, item_id: int) -> dict[str, Any]:
    """The checked fixture of a stored item."""
    from monitor.store.intake import item_report
    from monitor.store.review import accepted_row, transcript_report

    row, actions, transcript = accepted_row(session, item_id)
    doc = build(
        item_report(row, draft=True),
        fold(row.draft, actions),
        transcript_report(transcript) if transcript is not None else None,
    )
    validate(doc)
    return doc


def dumps(doc: Mapping[str, Any]) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def file_name(doc: Mapping[str, Any]) -> str:
    """``<item id>-<conversation id, made safe>.fixture.json``."""
    stem = _UNSAFE.sub("_", str(doc["conversation_id"])).strip("._") or "conversation"
    return f"{doc['review']['item_id']}-{stem[:200]}.fixture.json"
