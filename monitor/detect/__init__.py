"""The pure detection core: ``step(state, event, cfg) -> (state, flags)``.

The Faust worker, ``monitor replay`` and the tests all call ``step``, so a stream and an offline
replay of the same events give the same flags by construction. Nothing here does I/O, reads a
clock or touches metrics. Events of a session must arrive in turn order; gaps in turn numbers are
fine. An event older than the session's newest turn is still counted but cannot raise a repeat.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import Final

import msgspec

from monitor.detect.config import DetectConfig
from monitor.detect.repeats import check_call, excerpt
from monitor.detect.restatements import find_restatements, instructions_in
from monitor.detect.session import MAX_COMPACTIONS, Instructions, Meta, Pending, SessionState
from monitor.events import Event
from monitor.flags import Flag, text_key

__all__ = ["DetectConfig", "SessionState", "detect_all", "flush", "new_state", "step"]

#: Attribute keys copied from events into session attrs (and later into metric labels).
SESSION_ATTRS = ("agent", "agent_version", "model", "compactor", "tenant", "parent_session")
_MAX_ATTR_CHARS = 128


#: A seen-window entry: the turn (big-endian, so entries compare by turn as bytes; saturating
#: beyond 2**32 - 1: still ordered, never wrong) then the CRC-32 of the event id.
_SEEN: Final = struct.Struct(">II")
_SEEN_SIZE: Final = _SEEN.size
_TURN_CAP: Final = 2**32 - 1


def _seen_key(event: Event) -> bytes:
    """The event's seen-window entry. A CRC collision needs the same turn too, so one session's
    few dozen recent ids never collide in practice."""
    crc = zlib.crc32(event.event_id.encode("utf-8", "surrogatepass"))
    return _SEEN.pack(min(event.turn, _TURN_CAP), crc)


def new_state(event: Event) -> SessionState:
    """The empty state of the session ``event`` opens."""
    return SessionState(meta=Meta(session_id=event.session_id, first_ts=event.ts, last_ts=event.ts))


def _redelivered(meta: Meta, event: Event, key: bytes) -> bool:
    """Whether ``event`` was already applied: its (turn, id) is among the last ``max_seen_ids``
    events, or it is older than all of them (a redelivered stretch reaching further back than
    the window). New events in turn order are never older than the session's newest turn, and
    one past it cannot be in the window: the common case costs one comparison."""
    seen = meta.seen
    if not seen or event.turn > meta.max_turn:
        return False
    at = seen.find(key)
    while at >= 0:
        if at % _SEEN_SIZE == 0:
            return True
        at = seen.find(key, at + 1)  # matched across two entries: look further
    return event.turn < meta.max_turn and key[:4] <= seen[:4]


def _merged_attrs(current: dict[str, str], event: Event) -> dict[str, str]:
    if not event.attrs or event.attrs.items() <= current.items():
        return current  # the usual case: every event of a session carries the same attrs
    update = {
        k: v[:_MAX_ATTR_CHARS]
        for k, v in event.attrs.items()
        if k in SESSION_ATTRS and current.get(k) != v[:_MAX_ATTR_CHARS]
    }
    return {**current, **update} if update else current


def _compaction_between(turns: tuple[int, ...], start: int, end: int) -> int | None:
    """The latest remembered compaction turn c with start < c < end."""
    for c in reversed(turns):
        if start < c < end:
            return c
    return None


def step(
    state: SessionState | None, event: Event, cfg: DetectConfig
) -> tuple[SessionState, list[Flag]]:
    """Advance one session by one event; return its new state and the flags raised.

    A redelivered event changes nothing: one among the session's last ``cfg.max_seen_ids``
    events, or one older than all of them (see ``_redelivered``).
    With ``cfg.reorder_turns`` = R > 0, events wait in ``state.pending`` until an event more than
    R turns later arrives (or ``session_end``, or the shell calls ``flush``), and are processed in
    turn order: producers that deliver a session slightly out of order get the flags its true
    order gives. The flags returned are those of every event released by this call.
    """
    if state is None:
        state = new_state(event)
    if cfg.reorder_turns <= 0 and not state.pending.events:
        return _apply(state, event, cfg)
    key = _seen_key(event)
    if _redelivered(state.meta, event, key) or any(
        e.event_id == event.event_id for e in state.pending.events
    ):
        return state, []
    pending = sorted((*state.pending.events, event), key=lambda e: e.turn)  # stable
    newest = pending[-1].turn
    if event.kind == "session_end":
        ready, waiting = pending, []
    else:
        ready = [e for e in pending if e.turn < newest - cfg.reorder_turns]
        waiting = pending[len(ready) :]
    return _release(state, ready, waiting, cfg)


def flush(state: SessionState, cfg: DetectConfig) -> tuple[SessionState, list[Flag]]:
    """Process every event still waiting for reordering (end of input, or an idle session)."""
    if not state.pending.events:
        return state, []
    return _release(state, list(state.pending.events), [], cfg)


def _release(
    state: SessionState, ready: list[Event], waiting: list[Event], cfg: DetectConfig
) -> tuple[SessionState, list[Flag]]:
    flags: list[Flag] = []
    for e in ready:
        state, raised = _apply(state, e, cfg)
        flags.extend(raised)
    if tuple(waiting) != state.pending.events:
        state = msgspec.structs.replace(state, pending=Pending(tuple(waiting)))
    return state, flags


#: Kinds that change nothing but the session's counters and seen window.
_COUNTED_ONLY: Final = frozenset({"tool_result", "assistant_message"})


def _apply(state: SessionState, event: Event, cfg: DetectConfig) -> tuple[SessionState, list[Flag]]:
    """Process one event in order (the rules themselves)."""
    meta = state.meta
    turn = event.turn
    # The seen-window entry (``_seen_key``, inlined: this runs for every event).
    key = _SEEN.pack(
        turn if turn < _TURN_CAP else _TURN_CAP,
        zlib.crc32(event.event_id.encode("utf-8", "surrogatepass")),
    )
    if turn <= meta.max_turn and _redelivered(meta, event, key):
        return state, []
    keep = _SEEN_SIZE * (cfg.max_seen_ids - 1)
    seen = meta.seen[-keep:] + key if keep > 0 else key
    last_ts = event.ts if event.ts > meta.last_ts else meta.last_ts
    max_turn = turn if turn > meta.max_turn else meta.max_turn
    attrs = _merged_attrs(meta.attrs, event) if event.attrs else meta.attrs
    kind = event.kind
    if attrs is meta.attrs:
        if kind in _COUNTED_ONLY:
            # About half of all events: only the counters move, and this path costs about
            # half of the generic one below.
            meta = msgspec.structs.replace(
                meta, events=meta.events + 1, seen=seen, last_ts=last_ts, max_turn=max_turn
            )
            return SessionState(
                meta, state.calls, state.recent, state.instructions, state.pending
            ), []
        if kind == "tool_call":
            # The other common kind: its own path saves building the generic changes.
            calls, recent, flag = check_call(state, meta, event, cfg)
            if flag is None:
                meta = msgspec.structs.replace(
                    meta, events=meta.events + 1, seen=seen, last_ts=last_ts, max_turn=max_turn,
                    tool_calls=meta.tool_calls + 1,
                )  # fmt: skip
                return SessionState(meta, calls, recent, state.instructions, state.pending), []
            meta = msgspec.structs.replace(
                meta, events=meta.events + 1, seen=seen, last_ts=last_ts, max_turn=max_turn,
                tool_calls=meta.tool_calls + 1, repeat_flags=meta.repeat_flags + 1,
            )  # fmt: skip
            return SessionState(meta, calls, recent, state.instructions, state.pending), [flag]
    calls, recent, instructions = state.calls, state.recent, state.instructions
    flags: list[Flag] = []
    changes: dict[str, object] = {
        "events": meta.events + 1,
        "seen": seen,
        "last_ts": last_ts,
        "max_turn": max_turn,
    }
    if attrs is not meta.attrs:
        changes["attrs"] = attrs
    if kind == "tool_call":
        changes["tool_calls"] = meta.tool_calls + 1
        calls, recent, flag = check_call(state, meta, event, cfg)
        if flag is not None:
            flags.append(flag)
            changes["repeat_flags"] = meta.repeat_flags + 1
    elif kind == "user_message":
        text = (event.text or "")[: cfg.max_text_chars]
        changes["user_messages"] = meta.user_messages + 1
        keys: set[str] = set()
        for found in find_restatements(instructions.items, text, event.turn, cfg):
            flag_key = text_key(found.earlier.sentence)
            if flag_key in keys:
                continue  # the same instruction given twice before: one flag, the best match
            keys.add(flag_key)
            c = _compaction_between(meta.compaction_turns, found.earlier.turn, event.turn)
            flags.append(
                Flag(
                    session_id=event.session_id,
                    signal="restated_instruction",
                    turn=event.turn,
                    original_turn=found.earlier.turn,
                    compaction_turn=c,
                    key=flag_key,
                    evidence={
                        "earlier": excerpt(found.earlier.sentence, cfg),
                        "later": excerpt(found.sentence, cfg),
                        "original_turn": found.earlier.turn,
                        "turn": event.turn,
                        "score": round(found.score, 1),
                        "cues": list(found.cues),
                        "spans_compaction": c is not None,
                        "compactor": meta.compactor,
                    },
                    event_id=event.event_id,
                    ts=event.ts,
                    attrs=attrs,
                )
            )
        if flags:
            changes["restate_flags"] = meta.restate_flags + len(flags)
        new = instructions_in(text, event.turn, cfg)
        if new:
            items = (*instructions.items, *new)[-cfg.max_instructions :]
            instructions = Instructions(items)
    elif kind == "compaction":
        compactor = (event.compaction.compactor if event.compaction else None) or attrs.get(
            "compactor"
        )
        changes["compactions"] = meta.compactions + 1
        changes["compaction_turns"] = (*meta.compaction_turns[-(MAX_COMPACTIONS - 1) :], event.turn)
        changes["compactor"] = compactor
    elif kind == "incident":
        changes["incident"] = True
    elif kind == "session_end":
        changes["ended"] = True
    meta = msgspec.structs.replace(meta, **changes)
    return SessionState(meta, calls, recent, instructions, state.pending), flags


def detect_all(events: Iterable[Event], cfg: DetectConfig | None = None) -> list[Flag]:
    """Run the core over events (any sessions, each in turn order) and return every flag."""
    cfg = cfg or DetectConfig()
    states: dict[str, SessionState] = {}
    out: list[Flag] = []
    for event in events:
        state, flags = step(states.get(event.session_id), event, cfg)
        states[event.session_id] = state
        out.extend(flags)
    for state in states.values():
        out.extend(flush(state, cfg)[1])
    return out
