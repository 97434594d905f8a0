"""Dead letters: what the worker does with bytes that are not valid events.

A dead-letter record keeps the *original bytes* as its value (the whole record, or the one
element of a batch that failed) and says why in headers, so an operator can fix the producer and
re-publish the value unchanged. Pure functions; ``agents.py`` sends what they return.
"""

from __future__ import annotations

from typing import Final

import msgspec

from monitor.events import MAX_BATCH_BYTES, BadEvent, Event

#: Characters of the decoder's message kept in the ``monitor.detail`` header.
MAX_DETAIL_CHARS: Final = 300
#: Payload bytes kept in a dead letter. Larger payloads (oversized records, mostly) are cut here
#: and say so in ``monitor.size``: a dead letter must never itself be too large to publish.
MAX_PAYLOAD_BYTES: Final = 256 * 1024

HEADER_REASON: Final = "monitor.reason"
HEADER_DETAIL: Final = "monitor.detail"
HEADER_SOURCE: Final = "monitor.source"
HEADER_INDEX: Final = "monitor.index"
HEADER_SIZE: Final = "monitor.size"

_raw_list: Final = msgspec.json.Decoder(list[msgspec.Raw])


class DeadLetter(msgspec.Struct, frozen=True):
    """One undecodable record or batch element. ``index`` is its position in a batch record;
    ``size`` the original length when ``payload`` was cut to ``MAX_PAYLOAD_BYTES``."""

    reason: str
    detail: str
    payload: bytes
    index: int | None = None
    size: int | None = None

    def headers(self, topic: str, partition: int, offset: int) -> list[tuple[str, bytes]]:
        """Kafka headers naming the reason and where the payload came from."""
        out = [
            (HEADER_REASON, self.reason.encode()),
            (HEADER_DETAIL, self.detail[:MAX_DETAIL_CHARS].encode("utf-8", "replace")),
            (HEADER_SOURCE, f"{topic}/{partition}/{offset}".encode()),
        ]
        if self.index is not None:
            out.append((HEADER_INDEX, str(self.index).encode()))
        if self.size is not None:
            out.append((HEADER_SIZE, str(self.size).encode()))
        return out


def _letter(bad: BadEvent, payload: bytes, index: int | None = None) -> DeadLetter:
    if len(payload) <= MAX_PAYLOAD_BYTES:
        return DeadLetter(bad.reason, bad.detail, payload, index)
    return DeadLetter(bad.reason, bad.detail, payload[:MAX_PAYLOAD_BYTES], index, len(payload))


def _batch_elements(data: bytes, expected: int) -> list[bytes] | None:
    """The raw elements of a batch record, if it is one that decoded into ``expected`` results."""
    if not data.lstrip().startswith(b"[") or len(data) > MAX_BATCH_BYTES:
        return None
    try:
        raws = _raw_list.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    return [bytes(r) for r in raws] if len(raws) == expected else None


def dead_letters(data: bytes, results: list[Event | BadEvent]) -> list[DeadLetter]:
    """The dead letters of one record, given ``events.decode_record(data)``.

    A bad element of a batch yields its own bytes; a record that failed as a whole (not JSON,
    oversized, a bad single event) yields the whole record (cut at ``MAX_PAYLOAD_BYTES``).
    """
    bad = [(i, r) for i, r in enumerate(results) if isinstance(r, BadEvent)]
    if not bad:
        return []
    elements = _batch_elements(data, len(results))
    if elements is None:
        return [_letter(r, data) for _, r in bad]
    return [_letter(r, elements[i], i) for i, r in bad]
