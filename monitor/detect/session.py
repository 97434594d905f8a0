"""Bounded per-session detector state, as a frozen value in three parts.

``step`` returns a new ``SessionState``; a part it did not change is the *same object*, so a
streaming shell can write back only the parts that changed (``changed_parts``) and keep changelog
records small. Every collection is capped (see ``DetectConfig``), so a session's state has a fixed
upper size whatever its length:

* ``Meta``: counters, the latest compactions, recently seen event ids (about 1 KB at the caps).
* ``Calls`` + ``RecentCalls``: call fingerprint -> (first turn, last turn), at most
  ``max_calls`` in all (~16 B each). New entries go to the small ``RecentCalls``; every
  ``RECENT_CALLS`` entries it is merged into ``Calls`` and the least recently issued calls beyond
  the cap are dropped, so a call costs O(RECENT_CALLS), not O(max_calls).
* ``Instructions``: at most ``max_instructions`` instruction sentences (bounded by evidence_chars).
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, Literal

import msgspec

from monitor.detect.ledger import Ledger
from monitor.detect.restatements import Instruction
from monitor.events import Event

# State values are built and dropped on every event and can never form reference cycles, so
# they opt out of cyclic garbage collection (``gc=False``): with thousands of live sessions the
# collector's repeated walks over them cost more than the detection itself.

#: Compaction turns remembered (to say whether a restatement spans a compaction).
MAX_COMPACTIONS: Final = 32
#: Entries ``RecentCalls`` holds before it is merged into ``Calls``.
RECENT_CALLS: Final = 16


class Meta(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Counters and small facts about a session; rewritten on every event."""

    session_id: str
    first_ts: datetime
    last_ts: datetime
    max_turn: int = -1
    events: int = 0
    tool_calls: int = 0
    user_messages: int = 0
    compactions: int = 0
    repeat_flags: int = 0
    restate_flags: int = 0
    incident: bool = False
    ended: bool = False
    #: Turns of the latest compactions, oldest first (capped at MAX_COMPACTIONS).
    compaction_turns: tuple[int, ...] = ()
    #: Compactor version of the latest compaction.
    compactor: str | None = None
    #: (turn, CRC-32 of the event id) of the latest events, oldest first, packed as 8 bytes
    #: each (one flat object: no per-entry ints to allocate, copy or chase): drops redelivered
    #: copies, and anything older than all of them.
    seen: bytes = b""
    #: Low-cardinality attributes of the session (agent, model, tenant...), from its events.
    attrs: dict[str, str] = msgspec.field(default_factory=dict)
    #: Restatement flags whose restated instruction lies before a compaction (the primary tier).
    restate_spanning: int = 0
    #: User messages sent again with no agent work in between (retries, never flagged).
    retries: int = 0
    #: User-role records the harness injected (never read as instructions).
    injected: int = 0
    #: Fingerprint of the last typed user message, and whether the agent worked since.
    last_user_fp: int = 0
    work_since_user: bool = False
    #: An interrupt marker came after the last typed user message.
    interrupted: bool = False
    #: Turn of the last typed user message.
    last_user_turn: int = -1
    #: Survival-check flags raised (``dropped_item``, ``inverted_item``).
    dropped_flags: int = 0
    inverted_flags: int = 0
    #: Items checked at this session's compactions: compactor -> counts by class and verdict
    #: (``survival_counts`` reads them), and the counts of the latest compaction alone.
    survival: dict[str, tuple[int, ...]] = msgspec.field(default_factory=dict)
    last_check: tuple[int, ...] = ()
    #: Compactions by compactor version ("unknown" where the event named none): a session
    #: that changed version midway counts each compaction under its own.
    compacted: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def last_compaction(self) -> int | None:
        return self.compaction_turns[-1] if self.compaction_turns else None


#: A call's (first turn, last turn), packed into one int (``pack_turns``) when both fit in 32
#: bits: a tuple is an object the cyclic garbage collector tracks, and a session's call history
#: grows by one per new call, which made collections 10% of the core's time (1M events, 5,000
#: sessions); ints are not tracked, and the history dicts holding only ints are not either.
#: Larger turns keep the tuple, as do states written before (both decode).
Turns = int | tuple[int, int]
_TURN_BITS: Final = 32
_TURN_MASK: Final = (1 << _TURN_BITS) - 1


def pack_turns(first: int, last: int) -> Turns:
    if first <= _TURN_MASK and last <= _TURN_MASK:
        return (first << _TURN_BITS) | last
    return (first, last)


def unpack_turns(turns: Turns) -> tuple[int, int]:
    if isinstance(turns, int):
        return turns >> _TURN_BITS, turns & _TURN_MASK
    return turns


class Calls(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """The settled bulk of a session's call fingerprints: fp -> (first turn, last turn),
    packed (``Turns``).

    Rewritten only when ``RecentCalls`` overflows into it (once every ``RECENT_CALLS`` new
    entries), so neither the core nor a changelog copies the whole history per call.
    """

    by_fp: dict[int, Turns] = msgspec.field(default_factory=dict)


class RecentCalls(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Calls issued since the last merge; newer than anything in ``Calls`` for the same fp."""

    by_fp: dict[int, Turns] = msgspec.field(default_factory=dict)


class Instructions(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Instruction sentences the user gave, oldest first."""

    items: tuple[Instruction, ...] = ()


class Pending(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Events held back for reordering (only with ``DetectConfig.reorder_turns`` > 0)."""

    events: tuple[Event, ...] = ()


class SessionState(msgspec.Struct, frozen=True, array_like=True, gc=False):
    meta: Meta
    calls: Calls = msgspec.field(default_factory=Calls)
    recent: RecentCalls = msgspec.field(default_factory=RecentCalls)
    instructions: Instructions = msgspec.field(default_factory=Instructions)
    pending: Pending = msgspec.field(default_factory=Pending)
    #: What must survive a compaction (``ledger.py``); last, so older states still load.
    ledger: Ledger = msgspec.field(default_factory=Ledger)

    def call(self, fp: int) -> tuple[int, int] | None:
        """(first turn, last turn) of a call fingerprint, if remembered."""
        found = self.recent.by_fp.get(fp)
        if found is None:
            found = self.calls.by_fp.get(fp)
            if found is None:
                return None
        return unpack_turns(found)


Part = Literal["meta", "calls", "recent", "instructions", "pending", "ledger"]
PARTS: Final[tuple[Part, ...]] = ("meta", "calls", "recent", "instructions", "pending", "ledger")
PartValue = Meta | Calls | RecentCalls | Instructions | Pending | Ledger
_PART_TYPES: Final = {
    "meta": Meta,
    "calls": Calls,
    "recent": RecentCalls,
    "instructions": Instructions,
    "pending": Pending,
    "ledger": Ledger,
}


def changed_parts(old: SessionState | None, new: SessionState) -> tuple[Part, ...]:
    """The parts of ``new`` that differ from ``old``, by identity (step keeps unchanged ones)."""
    if old is None:
        return PARTS
    return tuple(p for p in PARTS if getattr(old, p) is not getattr(new, p))


_encoder: Final = msgspec.msgpack.Encoder()
_decoders: Final = {name: msgspec.msgpack.Decoder(t) for name, t in _PART_TYPES.items()}
_state_decoder: Final = msgspec.msgpack.Decoder(SessionState)


def encode_part(state: SessionState, part: Part) -> bytes:
    """One part of a state as compact msgpack (a changelog value)."""
    return _encoder.encode(getattr(state, part))


def decode_part(part: Part, data: bytes) -> PartValue:
    out: PartValue = _decoders[part].decode(data)
    return out


def assemble(parts: dict[Part, bytes | None]) -> SessionState | None:
    """A state from its encoded parts (as a shell stored them); None without a ``meta``."""
    meta = parts.get("meta")
    if meta is None:
        return None
    values = {p: decode_part(p, data) for p, data in parts.items() if data is not None}
    return SessionState(**values)  # type: ignore[arg-type]


def encode_state(state: SessionState) -> bytes:
    return _encoder.encode(state)


def decode_state(data: bytes) -> SessionState:
    return _state_decoder.decode(data)


def is_idle(state: SessionState, now: datetime, idle_expiry_s: float) -> bool:
    """Whether the shell may drop this session: ended, or silent (by event time) for too long."""
    return state.meta.ended or (now - state.meta.last_ts).total_seconds() > idle_expiry_s
