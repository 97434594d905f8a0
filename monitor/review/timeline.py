"""The item page's timeline: a captured transcript laid out by turn, with what the reviewer
needs beside each turn: the flags raised there (and the turns they point back to), the
compaction's summary and the survival verdicts seen at it, and the candidates stated there.

Pure: events, flags and entries in, frozen rows out. A turn with a flag or a compaction but no
captured event still gets a row, so the page shows the evidence when the transcript is gone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from monitor.review.decisions import Entry


@dataclass(frozen=True)
class Row:
    """One event."""

    index: int
    event_id: str
    turn: int
    kind: str
    text: str | None = None
    tool: str | None = None
    arguments: str | None = None
    is_error: bool = False
    compactor: str | None = None
    tokens: str | None = None
    #: Where a compaction's summary text came from: the event, or the draft's "compactions".
    summary_from: str | None = None
    #: One line of a collapsed tool call or result.
    peek: str = ""


@dataclass(frozen=True)
class Note:
    """A flag, where it was raised (``role="flagged"``) or the earlier turn it points to."""

    signal: str
    role: str
    text: str
    detail: str | None = None


@dataclass(frozen=True)
class Verdict:
    """A ledger item's survival verdict at this turn's compaction."""

    entry_id: str
    literal: str
    verdict: str
    compactor: str | None
    sentence: str | None


@dataclass(frozen=True)
class Turn:
    turn: int
    rows: tuple[Row, ...]
    notes: tuple[Note, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    entries: tuple[str, ...] = ()
    #: Turns between the previous shown turn and this one with nothing captured.
    gap: int = 0

    @property
    def flagged(self) -> bool:
        return any(n.role == "flagged" for n in self.notes)


def _arguments(value: object) -> str:
    # msgspec rather than json: 2,000-event pages have a thousand calls, and json.dumps with
    # indent and sort_keys was half of the timeline's cost in a profile.
    encoded = msgspec.json.encode(value, order="sorted")
    return msgspec.json.format(encoded, indent=1).decode("utf-8")


PEEK_CHARS = 100


def _peek(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PEEK_CHARS else line[: PEEK_CHARS - 1] + "…"


def _row(index: int, event: Mapping[str, Any]) -> Row:
    tool = event.get("tool") or {}
    compaction = event.get("compaction") or {}
    tokens = None
    if compaction.get("tokens_before") is not None:
        tokens = f"{compaction.get('tokens_before')} → {compaction.get('tokens_after')} tokens"
    kind = str(event.get("kind"))
    return Row(
        index=index,
        event_id=str(event.get("event_id")),
        turn=int(event.get("turn", 0)),
        kind=kind,
        text=event.get("text"),
        tool=tool.get("name"),
        arguments=_arguments(tool["arguments"]) if tool.get("arguments") else None,
        is_error=bool(tool.get("is_error")),
        compactor=compaction.get("compactor") or (event.get("attrs") or {}).get("compactor"),
        tokens=tokens,
        summary_from="event" if kind == "compaction" and event.get("text") else None,
        peek=_peek(
            msgspec.json.encode(tool.get("arguments") or {}).decode("utf-8")
            if kind == "tool_call"
            else str(event.get("text") or "")
        )
        if tool
        else "",
    )


def _notes(flags: Iterable[Mapping[str, Any]]) -> dict[int, list[Note]]:
    out: dict[int, list[Note]] = defaultdict(list)
    for f in flags:
        ev = f.get("evidence") or {}
        turn, signal = int(f["turn"]), str(f["signal"])
        if signal == "repeated_tool_call":
            first = ev.get("first_turn", f.get("original_turn"))
            text = (
                f"{ev.get('tool')} called again, as at turn {first}, after the compaction at "
                f"turn {f.get('compaction_turn')}"
            )
            out[turn].append(Note(signal, "flagged", text, ev.get("arguments")))
            if first is not None and int(first) != turn:
                out[int(first)].append(
                    Note(
                        signal, "origin", f"{ev.get('tool')} first called here; repeated at {turn}"
                    )
                )
        elif signal == "restated_instruction":
            original = int(ev.get("original_turn", f.get("original_turn", turn)))
            across = " across a compaction" if ev.get("spans_compaction") else ""
            score = ev.get("score")
            text = f"restates the instruction of turn {original}{across}" + (
                f" (score {score})" if score is not None else ""
            )
            detail = f"“{ev.get('later', '')}” restates “{ev.get('earlier', '')}”"
            out[turn].append(Note(signal, "flagged", text, detail))
            if original != turn:
                out[original].append(Note(signal, "origin", f"instruction restated at turn {turn}"))
    return out


def _verdicts(entries: Iterable[Entry]) -> dict[int, list[Verdict]]:
    out: dict[int, list[Verdict]] = defaultdict(list)
    for e in entries:
        for seen in e.seen:
            turn = seen.get("compaction_turn")
            if turn is None:
                continue
            out[int(turn)].append(
                Verdict(
                    e.id,
                    e.literal,
                    str(seen.get("verdict")),
                    seen.get("compactor"),
                    seen.get("sentence"),
                )
            )
    return out


def build(
    events: Sequence[Mapping[str, Any]],
    flags: Iterable[Mapping[str, Any]] = (),
    entries: Sequence[Entry] = (),
    compactions: Iterable[Mapping[str, Any]] = (),
) -> list[Turn]:
    """Turns in order. ``compactions`` is the draft's list (``turn``, ``compactor``,
    ``summary``); a summary there is shown where the captured event has none."""
    by_turn: dict[int, list[Row]] = defaultdict(list)
    for i, event in enumerate(events):
        row = _row(i, event)
        by_turn[row.turn].append(row)
    summaries = {int(c["turn"]): c for c in compactions if c.get("turn") is not None}
    for turn, c in summaries.items():
        rows = by_turn[turn]
        at = next((k for k, r in enumerate(rows) if r.kind == "compaction"), None)
        summary = c.get("summary")
        if at is None:
            rows.append(
                Row(
                    -1,
                    f"draft-compaction-{turn}",
                    turn,
                    "compaction",
                    summary,
                    compactor=c.get("compactor"),
                    summary_from="draft",
                )
            )
        elif rows[at].text is None and summary:
            old = rows[at]
            rows[at] = Row(
                old.index,
                old.event_id,
                turn,
                "compaction",
                summary,
                compactor=old.compactor or c.get("compactor"),
                tokens=old.tokens,
                summary_from="draft",
            )
    notes = _notes(flags)
    verdicts = _verdicts(entries)
    stated: dict[int, list[str]] = defaultdict(list)
    for e in entries:
        stated[e.turn].append(e.id)
    turns = sorted(set(by_turn) | set(notes) | set(verdicts) | set(stated))
    out = []
    previous: int | None = None
    for t in turns:
        gap = t - previous - 1 if previous is not None and t - previous > 1 else 0
        out.append(
            Turn(
                t,
                tuple(by_turn.get(t, ())),
                tuple(notes.get(t, ())),
                tuple(verdicts.get(t, ())),
                tuple(stated.get(t, ())),
                gap,
            )
        )
        previous = t
    return out
