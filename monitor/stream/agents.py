"""The worker's agents: detect (input -> flags, summaries, dead letters) and the two sinks.

Ordering is what makes restarts safe. For each run of input records the detect
agent

1. runs ``detect.step`` over the records' events (state loaded from the tables),
2. publishes flags, session summaries and dead letters and *waits until the broker has them*,
3. only then assigns the changed state parts, each session's marked with the offset of the last
   record that changed it (their changelog records follow), and
4. acknowledges the records; Faust commits their offsets after flushing the producer.

So a crash can leave state *behind* the flags (the record is re-processed and the same flags,
keyed for idempotence, are published again) but never ahead of them (which would make the
re-processed events look like redelivered copies and lose their flags). The sinks acknowledge
a batch only after its database transaction commits; a failing database is retried with
backoff, so an outage delays writes and the uncommitted offsets keep the flags safe.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import msgspec

from monitor import flags as flag_codec
from monitor.detect import DetectConfig, step
from monitor.detect.ledger import to_json as ledger_json
from monitor.detect.session import SessionState
from monitor.events import BadEvent, decode_record
from monitor.flags import Flag
from monitor.provenance import Held, Spans, record_source, stamp
from monitor.stream import batches, records
from monitor.stream.deadletter import dead_letters
from monitor.stream.tables import SessionTables
from monitor.stream.topics import Topics

if TYPE_CHECKING:
    import faust
    from sqlalchemy.orm import Session, sessionmaker

    from monitor.metrics import Metrics

log = logging.getLogger(__name__)

#: Sink retry backoff: first delay, growth factor, cap (seconds).
RETRY_FIRST_S: Final = 0.2
RETRY_FACTOR: Final = 2.0
RETRY_MAX_S: Final = 30.0
#: The detect agent works on runs of input records: at most this many, or what arrived within
#: this many seconds. One run costs one wait for the broker's acks.
DETECT_BATCH_RECORDS: Final = 500
DETECT_BATCH_WITHIN_S: Final = 0.05
#: How often the active-sessions gauge is refreshed (seconds).
SESSIONS_GAUGE_EVERY_S: Final = 15.0


Marker = tuple[int, int]  # (partition, offset) of an input record
Loader = Callable[[str], tuple[SessionState | None, Marker | None]]


@dataclass
class Outcome:
    """What one input record produced (the pure part of the detect agent's work)."""

    flags: list[Flag]
    states: dict[str, tuple[SessionState | None, SessionState]]
    bad: list[BadEvent]
    events: int


def process(
    results: Sequence[Any],
    load: Loader,
    cfg: DetectConfig,
    source: Marker = (-1, -1),
    on_step: Callable[[Any, list[Flag], SessionState, float], None] | None = None,
    topic: str | None = None,
    held: Held[Marker] | None = None,
) -> Outcome:
    """Run the core over one record's decoded items.

    ``load`` returns a session's saved state and the (partition, offset) of the record that
    produced it; ``source`` is this record's. A session whose state already reflects this record
    (a re-delivery after a crash) is left alone: its flags were published before its state was.
    With ``topic`` given, each flag records the topic, partition and offset of the record that
    held its event (``held`` remembers the records of events waiting for reordering).
    """
    partition, offset = source
    states: dict[str, tuple[SessionState | None, SessionState]] = {}
    done: set[str] = set()
    out_flags: list[Flag] = []
    bad: list[BadEvent] = []
    events = 0
    for item in results:
        if isinstance(item, BadEvent):
            bad.append(item)
            continue
        sid = item.session_id
        if sid in done:
            continue
        old: SessionState | None
        cur: SessionState | None
        if sid in states:
            old, cur = states[sid]
        else:
            old, marker = load(sid)
            if marker is not None and marker[0] == partition and marker[1] >= offset >= 0:
                done.add(sid)
                continue
            cur = old
        started = time.perf_counter()
        new, flags = step(cur, item, cfg)
        states[sid] = (old, new)
        events += 1
        if topic is not None:
            flags = _located(flags, new, item.event_id, topic, source, held)
        out_flags.extend(flags)
        if on_step is not None:
            on_step(item, flags, new, time.perf_counter() - started)
    return Outcome(out_flags, states, bad, events)


def _located(
    flags: list[Flag],
    state: SessionState,
    event_id: str,
    topic: str,
    source: Marker,
    held: Held[Marker] | None,
) -> list[Flag]:
    """``flags`` with their record's provenance (see ``process``)."""
    sid = state.meta.session_id
    if held is None or (not state.pending.events and not held.holds(sid)):
        return stamp(flags, record_source(topic, *source)) if flags else flags
    if state.pending.events:
        held.note(sid, event_id, source)
    out = [
        stamp([f], record_source(topic, *(held.origin(sid, f.event_id) or source)))[0]
        for f in flags
    ]
    held.keep(sid, (e.event_id for e in state.pending.events))
    return out


@dataclass
class Work:
    """Outcomes of a run of input records, merged until they are written in one go.

    ``states`` maps a session to (state as saved, state now, marker of the last record that
    changed it); ``load`` answers from here first, so a session spread over several records of
    the run advances record by record.
    """

    saved: Loader
    states: dict[str, tuple[SessionState | None, SessionState, Marker]] = field(
        default_factory=dict
    )
    flags: list[Flag] = field(default_factory=list)
    events: int = 0
    #: The input topic (its records widen the sessions' spans); None for the expiry sweep.
    topic: str | None = None
    #: A session's saved input spans (``SessionTables.spans``).
    saved_spans: Callable[[str], list[dict[str, Any]]] = lambda sid: []
    spans: dict[str, Spans] = field(default_factory=dict)

    def load(self, sid: str) -> tuple[SessionState | None, Marker | None]:
        if sid in self.states:
            return self.states[sid][1], None
        return self.saved(sid)

    def add(self, outcome: Outcome, source: Marker) -> None:
        for sid, (old, new) in outcome.states.items():
            first = self.states[sid][0] if sid in self.states else old
            self.states[sid] = (first, new, source)
            spans = self.spans_of(sid)
            if self.topic is not None:
                spans.add(("topic", self.topic, source[0]), source[1])
        self.flags.extend(outcome.flags)
        self.events += outcome.events

    def spans_of(self, sid: str) -> Spans:
        spans = self.spans.get(sid)
        if spans is None:
            spans = self.spans[sid] = Spans.from_json(self.saved_spans(sid))
        return spans

    def summaries_by_partition(self) -> dict[int, list[records.SessionSummary]]:
        """Summaries of the sessions the run changed that the store keeps, by the sessions'
        input partition."""
        by_session: dict[str, list[Flag]] = {}
        for f in self.flags:
            by_session.setdefault(f.session_id, []).append(f)
        out: dict[int, list[records.SessionSummary]] = {}
        for sid, (old, new, marker) in self.states.items():
            if new is not old and records.is_reportable(new.meta):
                spans = self.spans_of(sid).to_json()
                items = ledger_json(new.ledger) if new.ledger.items else None
                summary = records.summarise(new.meta, by_session.get(sid, ()), spans or None, items)
                out.setdefault(marker[0], []).append(summary)
        return out

    def sends(self, flags: Any, sessions: Any) -> list[tuple[Any, bytes | None, bytes, Any]]:
        """Records of the run's flags (one each, keyed by session) and of its summaries."""
        out: list[tuple[Any, bytes | None, bytes, Any]] = [
            (flags, f.session_id.encode(), flag_codec.encode(f), None) for f in self.flags
        ]
        return out + self.summary_sends(sessions)

    def summary_sends(self, topic: Any) -> list[tuple[Any, bytes | None, bytes, Any]]:
        """Records of the run's summaries, keyed by input partition (``records.partition_key``)."""
        return [
            (topic, records.partition_key(partition), value, None)
            for partition, group in self.summaries_by_partition().items()
            for value in records.encode(group)
        ]


async def send_durably(app: Any, sends: Sequence[tuple[Any, bytes | None, bytes, Any]]) -> None:
    """Publish now and wait for the broker's acks. Straight to the producer, one batch per
    partition (``batches.py``): Faust's ``Topic.send`` costs about five times as much per
    message as the producer's ``send``, that several times a batch append, and the worker is
    CPU-bound."""
    futures = await batches.send_all(app, sends)
    if futures:
        await asyncio.gather(*futures)


def register_detect(
    app: faust.App,
    topics: Topics,
    tables: SessionTables,
    cfg: DetectConfig,
    metrics: Metrics | None = None,
    batch: int = DETECT_BATCH_RECORDS,
    within_s: float = DETECT_BATCH_WITHIN_S,
) -> Any:
    """The detect agent (concurrency 1: it writes tables).

    It takes input records in runs (up to ``batch`` records or ``within_s`` seconds), so the
    wait for the broker's acks is paid once per run, not once per record.
    """

    input_topic = topics.input.get_topic_name()

    def on_step(event: Any, flags: list[Flag], state: SessionState, seconds: float) -> None:
        if metrics is not None:
            metrics.observe_step(event, seconds)
            if flags:
                metrics.observe_flags(flags, state.meta.attrs)
            if event.kind == "compaction":
                metrics.observe_check(state.meta)

    async def detect(stream: Any) -> Any:
        # noack_take: we acknowledge records ourselves, once their state is saved (Faust's
        # ``take`` acknowledges in a ``finally`` block, even when processing was cut short).
        async for run in stream.noack_take(batch, within=within_s):
            work = Work(tables.load, topic=input_topic, saved_spans=tables.spans)
            sends: list[tuple[Any, bytes | None, bytes, Any]] = []
            for event in run:
                message = event.message
                data: bytes = message.value or b""
                results = decode_record(data)
                source = (message.partition, message.offset)
                outcome = process(
                    results, work.load, cfg, source, on_step, message.topic, tables.held
                )
                work.add(outcome, source)
                if outcome.bad:
                    for letter in dead_letters(data, results):
                        headers = letter.headers(message.topic, *source)
                        sends.append((topics.deadletter, message.key, letter.payload, headers))
                        if metrics is not None:
                            metrics.observe_dead_letter(letter.reason)
            sends += work.sends(topics.flags, topics.sessions)
            await send_durably(app, sends)
            await tables.save_all(
                (first, new, *marker, work.spans_of(sid).to_json())
                for sid, (first, new, marker) in work.states.items()
            )
            for event in run:
                await stream.ack(event)
            yield work.events

    if metrics is not None:

        async def count_sessions() -> None:
            metrics.set_active_sessions(tables.sessions())

        app.timer(SESSIONS_GAUGE_EVERY_S)(count_sessions)

    return app.agent(topics.input, name="detect")(detect)


async def retry_forever(
    write: Callable[[], Awaitable[int]],
    what: str,
    metrics: Metrics | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> int | None:
    """Run ``write`` until it succeeds, backing off between failures; ``None`` if told to stop."""
    delay = RETRY_FIRST_S
    attempt = 0
    while True:
        try:
            return await write()
        except Exception as exc:  # any database error: the batch stays unacknowledged
            attempt += 1
            if metrics is not None:
                metrics.observe_sink_error()
                metrics.observe_sink_retry()
            log.warning("%s failed (attempt %d), retrying in %.1fs: %s", what, attempt, delay, exc)
            if should_stop():
                return None
            await asyncio.sleep(delay)
            delay = min(delay * RETRY_FACTOR, RETRY_MAX_S)


def _decode_all(
    values: Sequence[bytes], decode: Callable[[bytes], list[Any]], what: str
) -> list[Any]:
    out = []
    for value in values:
        try:
            out.extend(decode(value))
        except msgspec.DecodeError as exc:  # not ours to fix; the record stays in the topic
            log.error("skipping undecodable %s record: %s", what, exc)
    return out


def register_sinks(
    app: faust.App,
    topics: Topics,
    maker: sessionmaker[Session],
    batch: int,
    within_s: float,
    metrics: Metrics | None = None,
) -> tuple[Any, Any]:
    """The flag sink and the session sink: batches of ``batch`` records or ``within_s`` seconds.
    A flag batch is one transaction; a summary batch is one per ``batch`` sessions (its records
    hold up to ``records.SUMMARIES_PER_RECORD`` each). ``noack_take`` leaves acknowledgement to
    us: a batch is acknowledged (and its offsets become committable) only after its writes
    commit. Faust's ``take`` would acknowledge in a ``finally`` block, even when the write never
    happened."""
    from monitor.store.writes import upsert_sessions, write_flags

    def write_flag_batch(flags: list[Flag]) -> int:
        with maker.begin() as session:
            return write_flags(session, flags)

    def write_session_batch(summaries: list[records.SessionSummary]) -> int:
        """Upsert the batch's sessions, at most ``batch`` rows per transaction (a record holds
        many summaries). A retry rewrites chunks already committed: upserts are idempotent."""
        merged = records.merge(summaries)
        written = 0
        for start in range(0, len(merged), batch):
            chunk = merged[start : start + batch]
            times = {s.session_id: t for s in chunk if (t := s.flag_times) is not None}
            spans = {s.session_id: s.sources for s in chunk if s.sources}
            items = {s.session_id: s.items for s in chunk if s.items}
            with maker.begin() as session:
                metas = [s.to_meta() for s in chunk]
                written += upsert_sessions(session, metas, times, spans, items)
        return written

    def sink(
        decode: Callable[[bytes], list[Any]],
        write: Callable[[list[Any]], int],
        what: str,
        observe: Callable[[int], None] | None = None,
    ) -> Callable[[Any], Any]:
        """One sink agent: decode a batch, write it in one transaction (retried until it
        commits), then acknowledge it. Stopping mid-retry leaves the batch unacknowledged."""

        async def run(stream: Any) -> Any:
            async for events in stream.noack_take(batch, within=within_s):
                items = _decode_all([e.value for e in events], decode, what)
                written = await retry_forever(
                    partial(asyncio.to_thread, write, items),
                    f"{what} write",
                    metrics,
                    lambda: bool(app.should_stop),
                )
                if written is None:  # stopping: leave the batch for the next owner
                    return
                if observe is not None:
                    observe(written)
                for event in events:
                    await stream.ack(event)
                yield written

        run.__name__ = run.__qualname__ = f"{what.replace(' ', '_')}_sink"  # Faust's log name
        return run

    observe_flags = metrics.observe_sink_write if metrics is not None else None
    flag_sink = sink(lambda v: [flag_codec.decode(v)], write_flag_batch, "flag", observe_flags)
    session_sink = sink(records.decode, write_session_batch, "session summary")

    return (
        app.agent(topics.flags, name="flag-sink")(flag_sink),
        app.agent(topics.sessions, name="session-sink")(session_sink),
    )
