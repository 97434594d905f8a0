"""What the detectors report: a ``Flag`` with its evidence, and the key that makes it idempotent."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, Final, Literal

import msgspec

Signal = Literal["repeated_tool_call", "restated_instruction", "dropped_item", "inverted_item"]
SIGNALS: Final[tuple[str, ...]] = (
    "repeated_tool_call",
    "restated_instruction",
    "dropped_item",
    "inverted_item",
)
#: The signals that are consequences of a loss, seen turns after it (the weekly sample keeps
#: both represented).
CONSEQUENCE_SIGNALS: Final[tuple[str, ...]] = ("repeated_tool_call", "restated_instruction")
#: The signals of the survival check (raised at a compaction, about an earlier item).
SURVIVAL_SIGNALS: Final[tuple[str, ...]] = ("dropped_item", "inverted_item")


class Flag(msgspec.Struct, frozen=True, omit_defaults=False):
    """One piece of evidence that a compaction lost something in ``session_id``.

    ``key`` names *what* repeated (the call's fingerprint, or the restated instruction), so
    (session_id, signal, turn, key) is unique: re-processing the same events yields the same
    keys, and the store's unique constraint turns duplicates into no-ops.

    ``source`` says where the flagged event was read (``monitor.provenance``); the shells set
    it, the core never does, and it is not part of the key.
    """

    session_id: str
    signal: Signal
    turn: int
    original_turn: int
    compaction_turn: int | None
    key: str
    evidence: dict[str, Any]
    event_id: str
    ts: datetime
    attrs: dict[str, str] = msgspec.field(default_factory=dict)
    source: dict[str, Any] | None = None

    def report(self) -> dict[str, Any]:
        """The item shape shared by ``monitor replay --json`` and ``monitor flags --json``."""
        return {
            "session_id": self.session_id,
            "signal": self.signal,
            "turn": self.turn,
            "original_turn": self.original_turn,
            "compaction_turn": self.compaction_turn,
            "key": self.key,
            "event_id": self.event_id,
            "ts": self.ts.astimezone(UTC).isoformat(),
            "evidence": self.evidence,
            "source": self.source,
        }


def text_key(text: str) -> str:
    """A short stable key for a piece of text (a restated instruction, a call fingerprint)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder(Flag)


def encode(flag: Flag) -> bytes:
    return _encoder.encode(flag)


def decode(data: bytes) -> Flag:
    return _decoder.decode(data)
