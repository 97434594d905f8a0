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

from monitor.detect import ledger as lg
from monitor.detect import scorer as sc
from monitor.detect import survival as sv
from monitor.detect.config import DetectConfig
from monitor.detect.lang import units
from monitor.detect.repeats import check_call, excerpt
from monitor.detect.restatements import (
    MAX_LISTED,
    Instruction,
    Judged,
    MessageVerdict,
    instructions_in,
    judge,
    model_for,
    remembered,
)
from monitor.detect.session import MAX_COMPACTIONS, Instructions, Meta, Pending, SessionState
from monitor.events import Event
from monitor.flags import Flag, text_key

__all__ = [
    "CHECK_CELLS",
    "DetectConfig",
    "SessionState",
    "detect_all",
    "flush",
    "new_state",
    "step",
    "survival_counts",
    "warm",
]

#: Attribute keys copied from events into session attrs (and later into metric labels).
SESSION_ATTRS = ("agent", "agent_version", "model", "compactor", "tenant", "parent_session")
_MAX_ATTR_CHARS = 128


#: A seen-window entry: the turn (big-endian, so entries compare by turn as bytes; saturating
#: beyond 2**32 - 1: still ordered, never wrong) then the CRC-32 of the event id.
_SEEN: Final = struct.Struct(">II")
_SEEN_SIZE: Final = _SEEN.size
_pack_seen: Final = _SEEN.pack
_crc32: Final = zlib.crc32
#: ``msgspec.structs.replace``, bound once: every event replaces its session's meta.
_replace: Final = msgspec.structs.replace
_TURN_CAP: Final = 2**32 - 1


def _seen_key(event: Event) -> bytes:
    """The event's seen-window entry. A CRC collision needs the same turn too, so one session's
    few dozen recent ids never collide in practice."""
    crc = zlib.crc32(event.event_id.encode("utf-8", "surrogatepass"))
    return _SEEN.pack(min(event.turn, _TURN_CAP), crc)


def new_state(event: Event) -> SessionState:
    """The empty state of the session ``event`` opens."""
    return SessionState(meta=Meta(session_id=event.session_id, first_ts=event.ts, last_ts=event.ts))


def warm(cfg: DetectConfig) -> None:
    """Load the models ``cfg`` reads with now, not on the first event that needs one: a worker
    pays for them before it takes records instead of inside its first run, where the event loop
    would stand still for them (the scorers ~0.1 s, the semantic stage's encoder ~1 s)."""
    model_for(cfg)
    if cfg.survival:
        sc.load(sc.SURVIVAL)
    if cfg.semantic:
        from monitor.detect import semantic

        semantic.encoder()


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
    return _attrs_updated(current, event.attrs)


def _attrs_updated(current: dict[str, str], attrs: dict[str, str]) -> dict[str, str]:
    """(Apart from ``_merged_attrs``, which runs for most events: its comprehension would keep
    ``current`` in a cell, built on every call.)"""
    update = {
        k: v[:_MAX_ATTR_CHARS]
        for k, v in attrs.items()
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
    return _reordered(state, event, cfg)


def _reordered(
    state: SessionState, event: Event, cfg: DetectConfig
) -> tuple[SessionState, list[Flag]]:
    """``step`` with events held for reordering. Apart from ``step`` because its comprehensions
    read ``event`` and ``cfg``: a function whose locals a comprehension reads keeps them in cells,
    which every call builds and every use dereferences."""
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
#: Kinds that are the agent's own work (a compaction means it worked long enough to need
#: one): a user message after one is no retry.
_WORK: Final = frozenset({"tool_call", "assistant_message", "compaction"})


def _text_fp(text: str) -> int:
    """A fingerprint of a message as typed (case and spacing aside): a retry sends the same."""
    return zlib.crc32(" ".join(text.lower().split()).encode("utf-8", "surrogatepass")) or 1


def _asking(ledger: lg.Ledger, asked: list[lg.Item]) -> lg.Ledger:
    return lg.Ledger(ledger.items, (*ledger.asked, *asked)[-lg.MAX_ITEMS :]) if asked else ledger


def _ledger_after_user(
    ledger: lg.Ledger, text: str, turn: int, verdict: MessageVerdict
) -> lg.Ledger:
    """The ledger after a typed user message: pending agent questions settled by it, the
    constraints it contradicts revised (or revoked), its new constraints and references, and
    the questions it asks waiting for the reply."""
    ledger = lg.answered(ledger, text)
    revising: set[str] = set()
    for j in verdict.contradicted:
        for it in ledger.items:
            if it.cls == "constraint" and it.current_literal == j.earlier.text[: lg.LITERAL_CHARS]:
                ledger = lg.revise(ledger, it.id, turn, j.sentence)
                revising.add(j.sentence)
    m = units.read(text)
    for item_id, sentence in lg.revisions(ledger, m.sentences):
        if sentence not in revising:
            ledger = lg.revise(ledger, item_id, turn, sentence)
            revising.add(sentence)
    new = list(lg.user_items(text, turn, list(remembered(m)), frozenset(revising)))
    open_now, pending = lg.left_open_by_asker(text, lg.questions(text, turn, "user"))
    ledger = lg.add(ledger, [*new, *open_now])
    return _asking(ledger, pending)


#: Where each (class, verdict) count sits in a check's counts (``Meta.last_check``).
CHECK_CELLS: Final[dict[tuple[str, str], int]] = {
    (c, v): i * len(sv.COUNTED) + j
    for i, c in enumerate(lg.CLASSES)
    for j, v in enumerate(sv.COUNTED)
}
_CELLS: Final = CHECK_CELLS


def survival_counts(meta: Meta) -> dict[str, dict[str, dict[str, int]]]:
    """The session's survival checks as compactor -> class -> verdict -> items (the store's
    ``sessions.survival``, which ``monitor report`` sums)."""
    return {
        compactor: {
            cls: {v: counts[_CELLS[(cls, v)]] for v in sv.COUNTED}
            for cls in lg.CLASSES
            if any(counts[_CELLS[(cls, v)]] for v in sv.COUNTED)
        }
        for compactor, counts in meta.survival.items()
    }


def _added(total: tuple[int, ...] | None, counts: tuple[int, ...]) -> tuple[int, ...]:
    if not total:
        return counts
    return tuple(a + b for a, b in zip(total, counts, strict=True))


def _survival_check(
    ledger: lg.Ledger,
    event: Event,
    compactor: str | None,
    attrs: dict[str, str],
    cfg: DetectConfig,
) -> tuple[lg.Ledger, list[Flag], tuple[int, ...]]:
    """Every live item against the compaction's summary: the ledger with the verdicts seen,
    a ``dropped_item`` flag per absent item, an ``inverted_item`` flag per contradicted one,
    and the counts by class and verdict (all ``unchecked`` when the event has no summary)."""
    # A question still waiting for its reply is as open as one left open: the summary must
    # carry it. It stays pending, for the reply after the compaction to settle.
    live = (*ledger.items, *ledger.asked)
    counts = [0] * len(_CELLS)
    text = event.text or ""
    if not text.strip():
        for it in live:
            counts[_CELLS[(it.cls, "unchecked")]] += 1
        return ledger, [], tuple(counts)
    flags: list[Flag] = []
    verdicts: dict[str, str] = {}
    for c in sv.check_all(live, text):
        it = c.item
        counts[_CELLS[(it.cls, c.verdict)]] += 1
        verdicts[it.id] = c.verdict
        if c.verdict not in ("absent", "contradicted"):
            continue
        flags.append(
            Flag(
                session_id=event.session_id,
                signal="dropped_item" if c.verdict == "absent" else "inverted_item",
                turn=event.turn,
                original_turn=it.turn,
                compaction_turn=event.turn,
                key=it.id,
                evidence={
                    "class": it.cls,
                    "literal": excerpt(it.current_literal, cfg),
                    "original": excerpt(it.literal, cfg) if it.revised else None,
                    "speaker": it.speaker,
                    "verdict": c.verdict,
                    "sentence": excerpt(c.sentence, cfg) if c.sentence else None,
                    "reason": c.reason or None,
                    "score": c.score,
                    "item_turn": it.turn,
                    "revised_turn": it.revised_turn if it.revised else None,
                    "compactor": compactor,
                },
                event_id=event.event_id,
                ts=event.ts,
                attrs=attrs,
            )
        )
    return lg.seen(ledger, verdicts, event.turn), flags, tuple(counts)


def _restatement_flag(
    event: Event,
    meta: Meta,
    attrs: dict[str, str],
    restated: tuple[Judged, ...],
    cfg: DetectConfig,
) -> Flag:
    """The one flag a user message raises, whatever it restates: the evidence lists the
    restated instructions, those with a compaction between the two turns first (the primary
    signal), then by score. The key names the message, so re-processing it adds nothing."""

    def spanning(j: Judged) -> int | None:
        return _compaction_between(meta.compaction_turns, j.earlier.turn, event.turn)

    ranked = sorted(restated, key=lambda j: (spanning(j) is None, -j.score, j.earlier.turn))
    top = ranked[0]
    c = spanning(top)
    return Flag(
        session_id=event.session_id,
        signal="restated_instruction",
        turn=event.turn,
        original_turn=top.earlier.turn,
        compaction_turn=c,
        key=text_key(f"message\x00{event.event_id}"),
        evidence={
            "earlier": excerpt(top.earlier.text, cfg),
            "later": excerpt(top.sentence, cfg),
            "original_turn": top.earlier.turn,
            "turn": event.turn,
            "score": top.score,
            "cues": list(top.cues),
            "spans_compaction": c is not None,
            "tier": "spanning" if c is not None else "unspanned",
            "compactor": meta.compactor,
            "restated": [
                {
                    "earlier": excerpt(j.earlier.text, cfg),
                    "original_turn": j.earlier.turn,
                    "later": excerpt(j.sentence, cfg),
                    "score": j.score,
                    "spans_compaction": spanning(j) is not None,
                }
                for j in ranked[:MAX_LISTED]
            ],
            "restated_count": len(ranked),
        },
        event_id=event.event_id,
        ts=event.ts,
        attrs=attrs,
    )


def _before(history: tuple[Instruction, ...], turn: int) -> tuple[Instruction, ...]:
    """The instructions given before ``turn``. (A comprehension in ``_apply`` itself would put
    ``_apply``'s locals it reads in cells, a cost on every event.)"""
    return tuple(i for i in history if i.turn < turn)


def _apply(state: SessionState, event: Event, cfg: DetectConfig) -> tuple[SessionState, list[Flag]]:
    """Process one event in order (the rules themselves)."""
    meta = state.meta
    turn = event.turn
    # The seen-window entry (``_seen_key``, inlined: this runs for every event). A plain
    # ``encode()`` gives the same bytes as the surrogate-passing one for every id it accepts, and
    # costs a third of it.
    try:
        event_id = event.event_id.encode()
    except UnicodeEncodeError:
        event_id = event.event_id.encode("utf-8", "surrogatepass")
    key = _pack_seen(turn if turn < _TURN_CAP else _TURN_CAP, _crc32(event_id))
    max_turn = meta.max_turn
    # A new event of the newest turn (a tool call's result shares its turn) is redelivered only
    # if its entry is in the window: one search settles the usual case without the call. (Not
    # ``key in meta.seen``: bytes' ``in`` first tries its operand as an int, raising inside.)
    if (
        turn <= max_turn
        and (turn < max_turn or meta.seen.find(key) >= 0)
        and _redelivered(meta, event, key)
    ):
        return state, []
    keep = _SEEN_SIZE * (cfg.max_seen_ids - 1)
    seen = meta.seen[-keep:] + key if keep > 0 else key
    last_ts = event.ts if event.ts > meta.last_ts else meta.last_ts
    if turn > max_turn:
        max_turn = turn
    attrs = _merged_attrs(meta.attrs, event) if event.attrs else meta.attrs
    kind = event.kind
    if attrs is meta.attrs:
        if kind in _COUNTED_ONLY and not (cfg.survival and kind == "assistant_message"):
            # About half of all events: only the counters move, and this path costs about
            # half of the generic one below.
            if kind == "assistant_message" and not meta.work_since_user:
                meta = _replace(
                    meta, events=meta.events + 1, seen=seen, last_ts=last_ts, max_turn=max_turn,
                    work_since_user=True,
                )  # fmt: skip
            else:
                meta = _replace(
                    meta, events=meta.events + 1, seen=seen, last_ts=last_ts, max_turn=max_turn
                )
            return _replace(state, meta=meta), []
        if kind == "tool_call":
            # The other common kind: its own path saves building the generic changes.
            calls, recent, flag = check_call(state, meta, event, cfg)
            meta = _replace(
                meta, events=meta.events + 1, seen=seen, last_ts=last_ts, max_turn=max_turn,
                tool_calls=meta.tool_calls + 1, repeat_flags=meta.repeat_flags + (flag is not None),
                work_since_user=True,
            )  # fmt: skip
            if flag is None:
                return _replace(state, meta=meta, calls=calls, recent=recent), []
            return _replace(state, meta=meta, calls=calls, recent=recent), [flag]
    calls, recent, instructions = state.calls, state.recent, state.instructions
    ledger = state.ledger
    flags: list[Flag] = []
    changes: dict[str, object] = {
        "events": meta.events + 1,
        "seen": seen,
        "last_ts": last_ts,
        "max_turn": max_turn,
    }
    if attrs is not meta.attrs:
        changes["attrs"] = attrs
    if kind in _WORK and not meta.work_since_user:
        changes["work_since_user"] = True
    if kind == "tool_call":
        changes["tool_calls"] = meta.tool_calls + 1
        calls, recent, flag = check_call(state, meta, event, cfg)
        if flag is not None:
            flags.append(flag)
            changes["repeat_flags"] = meta.repeat_flags + 1
    elif kind == "user_message":
        changes["user_messages"] = meta.user_messages + 1
        if event.origin == "interrupt":
            changes["interrupted"] = True
        if event.origin is not None and event.origin != "human":
            # Injected into the user role by the harness (command wrappers, context blocks, skill
            # bodies): nobody typed it, so it neither instructs nor restates.
            changes["injected"] = meta.injected + 1
        else:
            text = (event.text or "")[: cfg.max_text_chars]
            fp = _text_fp(text)
            changes["last_user_fp"] = fp
            changes["last_user_turn"] = event.turn
            changes["work_since_user"] = False
            changes["interrupted"] = False
            if fp == meta.last_user_fp and meta.interrupted and not meta.work_since_user:
                # Sent again, word for word, right after an interrupt and with no agent work in
                # between: a retry, not a restatement.
                changes["retries"] = meta.retries + 1
            else:
                history = instructions.items
                if meta.interrupted and not meta.work_since_user:
                    # Re-sent, edited, right after an interrupt: what the previous message
                    # asked has not been acted on, so it cannot have been forgotten.
                    history = _before(history, meta.last_user_turn)
                # Only the survival ledger reads contradictions: without it, gated pairs are
                # neither featurised nor scored (``judge``'s ``contradictions``).
                verdict = judge(history, text, event.turn, cfg, contradictions=cfg.survival)
                if cfg.survival:
                    ledger = _ledger_after_user(ledger, text, event.turn, verdict)
                if verdict.restated:
                    flag = _restatement_flag(event, meta, attrs, verdict.restated, cfg)
                    flags.append(flag)
                    changes["restate_flags"] = meta.restate_flags + 1
                    if flag.compaction_turn is not None:
                        changes["restate_spanning"] = meta.restate_spanning + 1
                new = instructions_in(text, event.turn, cfg)
                if new:
                    items = (*instructions.items, *new)[-cfg.max_instructions :]
                    instructions = Instructions(items)
    elif kind == "assistant_message" and cfg.survival:
        text = (event.text or "")[: cfg.max_text_chars]
        ledger = lg.answered(ledger, text, "assistant")
        ledger = lg.add(ledger, list(lg.assistant_items(text, event.turn)))
        ledger = _asking(ledger, lg.questions(text, event.turn, "assistant"))
    elif kind == "compaction":
        compactor = (event.compaction.compactor if event.compaction else None) or attrs.get(
            "compactor"
        )
        changes["compactions"] = meta.compactions + 1
        changes["compaction_turns"] = (*meta.compaction_turns[-(MAX_COMPACTIONS - 1) :], event.turn)
        changes["compactor"] = compactor
        name = compactor or "unknown"
        changes["compacted"] = {**meta.compacted, name: meta.compacted.get(name, 0) + 1}
        if cfg.survival and (ledger.items or ledger.asked):
            ledger, raised, counts = _survival_check(ledger, event, compactor, attrs, cfg)
            flags.extend(raised)
            changes["last_check"] = counts
            changes["survival"] = {**meta.survival, name: _added(meta.survival.get(name), counts)}
            dropped = sum(1 for f in raised if f.signal == "dropped_item")
            if dropped:
                changes["dropped_flags"] = meta.dropped_flags + dropped
            if len(raised) > dropped:
                changes["inverted_flags"] = meta.inverted_flags + len(raised) - dropped
    elif kind == "incident":
        changes["incident"] = True
    elif kind == "session_end":
        changes["ended"] = True
    meta = _replace(meta, **changes)
    return SessionState(meta, calls, recent, instructions, state.pending, ledger), flags


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
