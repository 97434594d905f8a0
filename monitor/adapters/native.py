"""Our own event format: one JSON ``Event`` per line (what ``monitor produce`` and SDKs write).

Validation is ``monitor.events.decode``'s; its ``BadEvent`` reason becomes the Problem's reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from monitor.adapters.base import DETAIL_CHARS, Item, Located, Problem, without_lines
from monitor.events import BadEvent, decode


def parse(lines: Iterable[bytes], source: str) -> Iterator[Item]:
    """Events of a JSONL file of normalised events, in file order; Problems for bad lines."""
    return without_lines(parse_located(lines, source))


def parse_located(lines: Iterable[bytes], source: str) -> Iterator[Located]:
    """``parse``'s items, each with its line."""
    for _, number, item in parse_named(lines, source, ""):
        yield Located(number, item)


def parse_named(lines: Iterable[bytes], source: str, name: str) -> Iterator[tuple[str, int, Item]]:
    """``parse``'s items as (``name``, line, item), the shape replay reads (``read_located``):
    yielded here rather than rebuilt a layer up, as every line of a replay passes through."""
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            event = decode(stripped)
        except BadEvent as exc:
            truncated = exc.reason == "not_json" and not raw.endswith(b"\n")
            reason = "truncated_last_line" if truncated else exc.reason
            yield name, number, Problem(source, number, reason, exc.detail[:DETAIL_CHARS])
            continue
        yield name, number, event
