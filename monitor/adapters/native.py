"""Our own event format: one JSON ``Event`` per line (what ``monitor produce`` and SDKs write).

Validation is ``monitor.events.decode``'s; its ``BadEvent`` reason becomes the Problem's reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from monitor.adapters.base import DETAIL_CHARS, Item, Problem
from monitor.events import BadEvent, decode


def parse(lines: Iterable[bytes], source: str) -> Iterator[Item]:
    """Events of a JSONL file of normalised events, in file order; Problems for bad lines."""
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            yield decode(stripped)
        except BadEvent as exc:
            truncated = exc.reason == "not_json" and not raw.endswith(b"\n")
            reason = "truncated_last_line" if truncated else exc.reason
            yield Problem(source, number, reason, exc.detail[:DETAIL_CHARS])
