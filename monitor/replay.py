"""The offline shell: events from files -> ``detect.step`` -> flags -> store.

The same ``step`` runs in the Faust worker, so ``monitor replay`` over a log gives exactly the
flags the stream gives for the same events. Problems (malformed lines, unknown records) are
counted and reported with file:line; they never abort the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from monitor.adapters import Problem
from monitor.detect import DetectConfig, flush, step
from monitor.detect.session import Meta, SessionState
from monitor.events import Event
from monitor.flags import Flag

#: Problems kept verbatim for the report; the rest are only counted.
MAX_PROBLEM_SAMPLES = 20


@dataclass
class Replay:
    """Runs the core over a stream of adapter items and keeps the run's tallies.

    ``on_flags`` receives each event's flags as they are raised (the store sink batches them).
    """

    cfg: DetectConfig = field(default_factory=DetectConfig)
    on_flags: Callable[[list[Flag]], None] | None = None
    on_event: Callable[[Event, list[Flag]], None] | None = None
    states: dict[str, SessionState] = field(default_factory=dict)
    events: int = 0
    compactions: int = 0
    flags_by_signal: Counter[str] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    problem_samples: list[Problem] = field(default_factory=list)
    flag_times: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)

    def feed(self, item: Event | Problem) -> list[Flag]:
        if isinstance(item, Problem):
            self._problem(item)
            return []
        state, flags = step(self.states.get(item.session_id), item, self.cfg)
        self.states[item.session_id] = state
        self.events += 1
        if item.kind == "compaction":
            self.compactions += 1
        self._raised(flags)
        if self.on_event is not None:
            self.on_event(item, flags)
        return flags

    def finish(self) -> None:
        """End of input: process what still waits for reordering."""
        for session_id, state in self.states.items():
            if state.pending.events:
                self.states[session_id], flags = flush(state, self.cfg)
                self._raised(flags)

    def _raised(self, flags: list[Flag]) -> None:
        if flags:
            for f in flags:
                self.flags_by_signal[f.signal] += 1
                first, last = self.flag_times.get(f.session_id, (f.ts, f.ts))
                self.flag_times[f.session_id] = (min(first, f.ts), max(last, f.ts))
            if self.on_flags is not None:
                self.on_flags(flags)

    def _problem(self, problem: Problem) -> None:
        if problem.severity == "skipped":
            self.skipped[problem.reason] += 1
            return
        self.problems[problem.reason] += 1
        if len(self.problem_samples) < MAX_PROBLEM_SAMPLES:
            self.problem_samples.append(problem)

    def run(self, items: Iterable[Event | Problem]) -> Replay:
        for item in items:
            self.feed(item)
        self.finish()
        return self

    def flagged_metas(self) -> list[Meta]:
        """Sessions worth storing: those with a flag or a reported incident."""
        return [
            s.meta
            for s in self.states.values()
            if s.meta.repeat_flags or s.meta.restate_flags or s.meta.incident
        ]

    def summary(self, top: int = 10) -> dict[str, Any]:
        metas = sorted(
            self.flagged_metas(),
            key=lambda m: (-(m.repeat_flags + m.restate_flags), m.session_id),
        )
        return {
            "sessions": len(self.states),
            "events": self.events,
            "compactions": self.compactions,
            "flagged_sessions": sum(1 for m in metas if m.repeat_flags or m.restate_flags),
            "flags_by_signal": {
                "repeated_tool_call": self.flags_by_signal["repeated_tool_call"],
                "restated_instruction": self.flags_by_signal["restated_instruction"],
            },
            "problems": dict(self.problems),
            "skipped_records": dict(self.skipped),
            "problem_samples": [
                {"source": p.source, "line": p.line, "reason": p.reason, "detail": p.detail}
                for p in self.problem_samples
            ],
            "top_sessions": [
                {
                    "session_id": m.session_id,
                    "flags": m.repeat_flags + m.restate_flags,
                    "repeated_tool_call": m.repeat_flags,
                    "restated_instruction": m.restate_flags,
                    "compactions": m.compactions,
                    "turns": m.max_turn + 1,
                }
                for m in metas[:top]
            ],
        }


def replay_events(events: Iterable[Event], cfg: DetectConfig | None = None) -> Replay:
    """Run the core over events, in memory; returns the finished ``Replay``."""
    return Replay(cfg=cfg or DetectConfig()).run(events)


def collect(
    replay_items: Iterable[Event | Problem], cfg: DetectConfig
) -> tuple[Replay, list[Flag]]:
    """Replay keeping every flag in memory (for ``--json`` output and tests)."""
    flags: list[Flag] = []
    replay = Replay(cfg=cfg, on_flags=flags.extend).run(replay_items)
    return replay, flags


def sorted_flags(flags: Sequence[Flag]) -> list[Flag]:
    """The order ``monitor flags`` lists in, so replay and store output compare directly."""
    return sorted(flags, key=lambda f: (f.session_id, f.turn, f.signal, f.key))
