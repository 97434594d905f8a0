"""The offline shell: events from files -> ``detect.step`` -> flags -> store.

The same ``step`` runs in the Faust worker, so ``monitor replay`` over a log gives exactly the
flags the stream gives for the same events. Problems (malformed lines, unknown records) are
counted and reported with file:line; they never abort the run. Items read with their origin
(``run_located``) give each flag the file and line of its event, and each session the spans
of its input (``monitor.provenance``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from monitor.adapters import FATAL_REASONS, Problem
from monitor.detect import DetectConfig, flush, step
from monitor.detect.session import Meta, SessionState
from monitor.events import Event
from monitor.flags import Flag
from monitor.provenance import Held, Source, Spans, file_source, stamp

#: Problems kept verbatim for the report; the rest are only counted.
MAX_PROBLEM_SAMPLES = 20
#: Whole-file problems kept verbatim (each names an input someone has to fix).
MAX_FILE_PROBLEMS = 1000


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
    #: Problems about whole inputs that could not be read at all (``FATAL_REASONS``).
    fatal: int = 0
    #: Problems about whole files (line 0), all of them: each names an input to look at.
    file_problems: list[Problem] = field(default_factory=list)
    flag_times: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)
    #: Session id -> spans of its input (only for items fed with an origin).
    sources: dict[str, Spans] = field(default_factory=dict)
    _held: Held[Source] = field(default_factory=Held)

    def feed(self, item: Event | Problem, origin: tuple[str, int] | None = None) -> list[Flag]:
        """Process one item; ``origin`` is the (file, line) it was read from, if known."""
        if isinstance(item, Problem):
            self._problem(item)
            return []
        if origin is None:
            return self._feed_event(item, None, 0)
        return self._feed_event(item, *origin)

    def _feed_event(self, item: Event, file: str | None, line: int) -> list[Flag]:
        """``feed`` for an event, read from ``file`` at ``line`` when ``file`` is given
        (``run_located`` calls it for every record of a replay, with no tuple to build). An
        event that raised nothing and that nothing waits on only adds its line to its
        session's spans (``_locate``'s one effect then), without the rest of ``_locate``."""
        sid = item.session_id
        state, flags = step(self.states.get(sid), item, self.cfg)
        self.states[sid] = state
        self.events += 1
        if item.kind == "compaction":
            self.compactions += 1
        if file is None:
            if flags:
                self._raised(flags)
        elif flags or state.pending.events or self._held.holds(sid):
            flags = self._locate(sid, item, state, flags, (file, line))
            if flags:
                self._raised(flags)
        else:
            spans = self.sources.get(sid)
            if spans is None:
                spans = self.sources[sid] = Spans()
            spans.add(("file", file), line)
        if self.on_event is not None:
            self.on_event(item, flags)
        return flags

    def _locate(
        self,
        sid: str,
        event: Event,
        state: SessionState,
        flags: list[Flag],
        origin: tuple[str, int],
    ) -> list[Flag]:
        """Record where ``event`` came from; give ``flags`` the source of the event each
        names (an event released from reordering was read earlier than this one)."""
        file, line = origin
        spans = self.sources.get(sid)
        if spans is None:
            spans = self.sources[sid] = Spans()
        spans.add(("file", file), line)
        if not state.pending.events and not self._held.holds(sid):
            # The common case: the source is built only for the few events with flags.
            return stamp(flags, file_source(file, line)) if flags else flags
        here = file_source(file, line)
        if state.pending.events:
            self._held.note(sid, event.event_id, here)
        out = [
            stamp([f], self._held.origin(sid, f.event_id) or here)[0] for f in flags
        ]  # fmt: skip
        self._held.keep(sid, (e.event_id for e in state.pending.events))
        return out

    def finish(self) -> None:
        """End of input: process what still waits for reordering."""
        for session_id, state in self.states.items():
            if state.pending.events:
                self.states[session_id], flags = flush(state, self.cfg)
                located = [
                    stamp([f], src)[0] if (src := self._held.origin(session_id, f.event_id)) else f
                    for f in flags
                ]
                self._held.keep(session_id, ())
                self._raised(located)

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
        if problem.line == 0:
            self.fatal += problem.reason in FATAL_REASONS
            if len(self.file_problems) < MAX_FILE_PROBLEMS:
                self.file_problems.append(problem)
        self.problems[problem.reason] += 1
        if len(self.problem_samples) < MAX_PROBLEM_SAMPLES:
            self.problem_samples.append(problem)

    def run(self, items: Iterable[Event | Problem]) -> Replay:
        for item in items:
            self.feed(item)
        self.finish()
        return self

    def run_located(self, items: Iterable[tuple[str, int, Event | Problem]]) -> Replay:
        """``run`` over ``adapters.read_located`` output: (file, line, item)."""
        for file, line, item in items:
            if isinstance(item, Event):
                self._feed_event(item, file, line)
            else:
                self._problem(item)
        self.finish()
        return self

    def session_sources(self) -> dict[str, list[Source]]:
        """Session id -> its input spans, as the sessions table stores them."""
        return {sid: spans.to_json() for sid, spans in self.sources.items()}

    def status(self) -> int:
        """The run's exit status (``monitor.errors``): fatal when an input could not be read
        at all or nothing was processed though something was wrong; skipped when lines or
        files were left out; else OK."""
        from monitor.errors import FATAL, OK, SKIPPED

        if self.fatal or (self.problems and not self.events):
            return FATAL
        return SKIPPED if self.problems else OK

    def flagged_metas(self) -> list[Meta]:
        """Sessions worth storing: those with a flag, a reported incident, or items checked at
        a compaction (the survival report counts every check, flagged or not)."""
        from monitor.stream.records import is_reportable

        return [s.meta for s in self.states.values() if is_reportable(s.meta)]

    def session_items(self) -> dict[str, list[dict[str, Any]]]:
        """The ledger items of the sessions stored (fixture drafts propose them)."""
        from monitor.detect.ledger import to_json

        return {sid: to_json(s.ledger) for sid, s in self.states.items() if s.ledger.items}

    def summary(self, top: int = 10) -> dict[str, Any]:
        metas = sorted(
            self.flagged_metas(),
            key=lambda m: (-(m.repeat_flags + m.restate_flags), m.session_id),
        )
        return {
            "sessions": len(self.states),
            "events": self.events,
            "compactions": self.compactions,
            "flagged_sessions": len(self.flag_times),
            # The two signals always on, then any other the run raised (survival's).
            "flags_by_signal": {
                "repeated_tool_call": self.flags_by_signal["repeated_tool_call"],
                "restated_instruction": self.flags_by_signal["restated_instruction"],
                **{s: n for s, n in sorted(self.flags_by_signal.items()) if n},
            },
            "problems": dict(self.problems),
            "status": self.status(),
            "skipped_records": dict(self.skipped),
            "problem_samples": [
                {"source": p.source, "line": p.line, "reason": p.reason, "detail": p.detail}
                for p in self.problem_samples
            ],
            "file_problems": [
                {"source": p.source, "reason": p.reason, "detail": p.detail}
                for p in self.file_problems
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
