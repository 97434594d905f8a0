"""Signal 1: a tool call repeated soon after a compaction.

A ``tool_call`` at turn ``t`` is flagged when an identical call (same tool, same canonical
arguments, less the fields configured as not changing what a call does) was last issued at
``t0`` before the most recent compaction ``c``, with ``c < t <= c + window``. Requiring the
*last* issue to precede ``c`` means only the first re-issue after a compaction counts: once the
agent fetched the result again it holds it, and a redelivered copy of the same call (same turn)
can never satisfy ``t0 < c < t``. Configured polls are never flagged.
"""

from __future__ import annotations

from itertools import islice

from monitor.detect.canon import canonical, fingerprint, fingerprint_hex, project
from monitor.detect.config import DetectConfig
from monitor.detect.redact import redact
from monitor.detect.session import (
    RECENT_CALLS,
    Calls,
    Meta,
    RecentCalls,
    SessionState,
    Turns,
    pack_turns,
)
from monitor.events import Event
from monitor.flags import Flag


def excerpt(text: str, cfg: DetectConfig) -> str:
    """Text as it may leave the core: secrets masked (unless disabled), cut to evidence_chars."""
    if cfg.redact:
        text = redact(text)
    limit = cfg.evidence_chars
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def check_call(
    state: SessionState, meta: Meta, event: Event, cfg: DetectConfig
) -> tuple[Calls, RecentCalls, Flag | None]:
    """Record ``event``'s call and return the flag it raises, if any.

    ``meta`` is the session's meta *before* this event (its latest compaction is the one that
    counts). Unchanged parts come back as the same objects.
    """
    tool = event.tool
    assert tool is not None  # guaranteed by Event validation for tool_call events
    arguments = project(tool.arguments, cfg.left_out(tool.name))
    fp = fingerprint(tool.name, arguments, cfg.max_argument_bytes)
    t = event.turn
    prior = state.call(fp)
    flag: Flag | None = None
    c = meta.last_compaction
    if (
        prior is not None
        and c is not None
        and prior[1] < c < t <= c + cfg.window
        and not cfg.is_poll(tool.name, tool.arguments)
    ):
        args_text = canonical(tool.arguments).decode("utf-8", "replace")
        flag = Flag(
            session_id=event.session_id,
            signal="repeated_tool_call",
            turn=t,
            original_turn=prior[1],
            compaction_turn=c,
            key=fingerprint_hex(fp),
            evidence={
                "tool": tool.name,
                "arguments": excerpt(args_text, cfg),
                "first_turn": prior[0],
                "original_turn": prior[1],
                "compaction_turn": c,
                "turn": t,
                "turns_after_compaction": t - c,
                "compactor": meta.compactor,
            },
            event_id=event.event_id,
            ts=event.ts,
            attrs=meta.attrs,
        )
    if prior is not None and prior[1] >= t:
        return state.calls, state.recent, flag  # same or older turn: nothing new to remember
    recent = {**state.recent.by_fp, fp: pack_turns(prior[0] if prior is not None else t, t)}
    if len(recent) <= RECENT_CALLS:
        return state.calls, RecentCalls(recent), flag
    return _merged(state.calls.by_fp, recent, cfg.max_calls), RecentCalls(), flag


def _merged(base: dict[int, Turns], recent: dict[int, Turns], cap: int) -> Calls:
    """Fold recent entries into the base; beyond ``cap`` the least recently issued go first.

    ``base`` is kept in last-issued order and every recent entry is newer than the base, so
    appending the recent entries after the base's others keeps that order without a sort.
    """
    merged = dict(base)  # a C-level copy: 3 us for 256 entries, where a comprehension took 25
    for fp in recent:
        merged.pop(fp, None)
    merged.update(recent)
    excess = len(merged) - cap
    if excess > 0:
        merged = dict(islice(merged.items(), excess, None))
    return Calls(merged)
