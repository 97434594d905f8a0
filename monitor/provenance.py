"""Where flags and sessions came from: file and line for a replay, topic/partition/offset for
the worker (the shapes are fixed in PROVENANCE.md and schemas/README.md).

A flag's ``source`` names the record that held the flagged event. A session's ``sources`` is a
short list of spans of its input, at most ``MAX_SPANS``: the first span of each file (or
topic partition) in the order they appeared, widened as later records of the same one arrive;
a span past the cap is merged into the last one kept. Neither is part of a flag's key: the
same flag re-read from elsewhere is the same flag.

Pure values and functions; the shells (``replay.py``, ``stream/agents.py``) call them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Generic, TypeVar

import msgspec

from monitor.flags import Flag

#: Most spans kept per session.
MAX_SPANS: Final = 16
#: The file name recorded for standard input.
STDIN: Final = "-"

Source = dict[str, Any]
#: What a span is of: ("file", path) or ("topic", topic, partition).
SpanKey = tuple[str, ...] | tuple[str, str, int]


def file_source(file: str, line: int) -> Source:
    return {"file": file, "line": line}


def record_source(topic: str, partition: int, offset: int) -> Source:
    return {"topic": topic, "partition": partition, "offset": offset}


def stamp(flags: Sequence[Flag], source: Source) -> list[Flag]:
    """``flags`` carrying ``source`` (flags already stamped keep theirs)."""
    return [f if f.source is not None else msgspec.structs.replace(f, source=source) for f in flags]


class Spans:
    """A session's input spans while it is read: ``add`` one position at a time.

    Kept as small lists internally (``[key, first, last]``) because replay adds a position per
    event; ``to_json`` gives the stored shape.
    """

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: list[list[Any]] = []

    def add(self, key: SpanKey, position: int) -> None:
        items = self._items
        span: list[Any] | None
        if items and items[-1][0] == key:
            span = items[-1]
        else:
            span = next((s for s in items if s[0] == key), None)
            if span is None:
                if len(items) < MAX_SPANS:
                    items.append([key, position, position])
                    return
                span = items[-1]  # over the cap: the last span takes it
        if position < span[1]:
            span[1] = position
        if position > span[2]:
            span[2] = position

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[SpanKey, int, int]]:
        return [(key, first, last) for key, first, last in self._items]

    def to_json(self) -> list[Source]:
        return [_span_json(key, first, last) for key, first, last in self._items]

    @classmethod
    def from_json(cls, spans: Iterable[Mapping[str, Any]] | None) -> Spans:
        out = cls()
        for span in spans or ():
            key = span_key(span)
            if key is None:
                continue
            if "file" in span:
                first, last = span.get("first_line"), span.get("last_line")
            else:
                first, last = span.get("first_offset"), span.get("last_offset")
            if isinstance(first, int) and isinstance(last, int):
                out.add(key, first)
                out.add(key, last)
        return out


def span_key(span: Mapping[str, Any]) -> SpanKey | None:
    """The key of a stored span (or of a flag source), None for a shape this does not know."""
    if isinstance(span.get("file"), str):
        return ("file", span["file"])
    if isinstance(span.get("topic"), str) and isinstance(span.get("partition"), int):
        return ("topic", span["topic"], span["partition"])
    return None


def _span_json(key: SpanKey, first: int, last: int) -> Source:
    if key[0] == "file":
        return {"file": key[1], "first_line": first, "last_line": last}
    return {"topic": key[1], "partition": key[2], "first_offset": first, "last_offset": last}


def merge_spans(
    stored: Iterable[Mapping[str, Any]] | None, new: Iterable[Mapping[str, Any]] | None
) -> list[Source] | None:
    """The spans of a stored session widened by a newer run's (``None`` when neither has any:
    a row written before provenance was recorded stays unknown)."""
    if not stored and not new:
        return None
    spans = Spans.from_json(stored)
    for key, first, last in Spans.from_json(new).items():
        spans.add(key, first)
        spans.add(key, last)
    return spans.to_json()


T = TypeVar("T")


class Held(Generic[T]):
    """Where each event still held for reordering came from, by session and event id.

    With ``reorder_turns`` the core releases an event later than it arrived, so the flag it
    raises must name the record that held *it*, not the one that released it. Entries live
    only while their event waits (``keep`` drops the rest); the shell's memory, not state.
    """

    __slots__ = ("_by_session",)

    def __init__(self) -> None:
        self._by_session: dict[str, dict[str, T]] = {}

    def note(self, session_id: str, event_id: str, origin: T) -> None:
        self._by_session.setdefault(session_id, {})[event_id] = origin

    def holds(self, session_id: str) -> bool:
        """Whether any event of the session is remembered."""
        return session_id in self._by_session

    def origin(self, session_id: str, event_id: str) -> T | None:
        held = self._by_session.get(session_id)
        return held.get(event_id) if held else None

    def keep(self, session_id: str, waiting: Iterable[str]) -> None:
        """Forget the session's entries but those of the events still ``waiting``."""
        held = self._by_session.get(session_id)
        if held is None:
            return
        left = {e: held[e] for e in waiting if e in held}
        if left:
            self._by_session[session_id] = left
        else:
            del self._by_session[session_id]

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_session.values())
