"""Transcript capture: a sampled session's events, read back from where they came from.

A reviewer turns a queued session into a fixture by reading its conversation, but the input does
not last: replayed files move or are deleted, and the worker's input topic expires records. So
when an item is queued, its session's events are read back once, redacted, capped and stored
beside the item (``intake_transcripts``); the review page reads only that copy.

Where the events came from is the session's provenance, ``sessions.sources``: a list of spans,
``{"file": path, "first_line": int, "last_line": int}`` for a replayed file (``"-"`` for stdin)
or ``{"topic": name, "partition": int, "first_offset": int, "last_offset": int}`` for the
worker's input. A file span is read through the same adapters ``monitor replay`` used, up to its
last line (the adapters keep per-file state, so the file is read from its start); a topic span
through a bounded consumer on that partition, from its first offset while the topic still holds
it (at most the span's records, for at most 20 s: a span widened by the 16-span cap may cover
much of a partition, and is then read as far as that allows). Events of other sessions sharing
a file or a partition are dropped.

The outcome is one of:

- ``captured``: every span was read in full;
- ``partial``: some events were read, but a span was cut short or is gone;
- ``gone``: spans were recorded, but nothing of them is left to read;
- ``unavailable``: the source could not be asked (broker unreachable); a later run tries again;
- ``not_recorded``: the store has no provenance for the session (rows written before it was
  kept, or a store without the ``sources`` column).

``capture_many`` is the function of spans to a ``Capture``; ``capture_pending`` is the shell the
samplers call after queueing (``monitor sample``, the worker's weekly intake).
"""

from __future__ import annotations

import gzip
import itertools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Final, Literal

import msgspec

from monitor.adapters.base import Item, cap
from monitor.detect.redact import redact as redact_text
from monitor.events import Event, decode_record

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from monitor.config import Settings

Status = Literal["captured", "partial", "gone", "unavailable", "not_recorded"]
SpanStatus = Literal["complete", "partial", "gone", "unavailable"]
STATUSES: Final[tuple[str, ...]] = ("captured", "partial", "gone", "unavailable", "not_recorded")
#: Attributes kept on a captured event; the rest (tenants, user ids) is not the reviewer's.
KEPT_ATTRS: Final = frozenset({"agent", "model", "compactor"})


@dataclass(frozen=True)
class Limits:
    """How much of a session is kept. A 2,000-event session fits; a longer one keeps what a
    reviewer needs first (see ``cap_events``)."""

    max_events: int = 5_000
    max_bytes: int = 4_000_000
    #: Longest text kept per field (a message, a tool result, a compaction summary).
    max_text: int = 8_000
    #: Turns either side of a flagged or compaction turn kept first when over a limit.
    focus_radius: int = 3


@dataclass(frozen=True)
class SpanRead:
    """What one span gave for one session."""

    events: tuple[Event, ...] = ()
    status: SpanStatus = "complete"
    note: str | None = None


@dataclass(frozen=True)
class Capture:
    """A session's captured transcript: events as JSON builtins, redacted and capped."""

    session_id: str
    status: Status
    events: tuple[dict[str, Any], ...] = ()
    omitted: int = 0
    notes: tuple[str, ...] = ()
    sources: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class Request:
    """One session to capture: its spans (None when not recorded) and the turns that matter."""

    session_id: str
    sources: Sequence[Mapping[str, Any]] | None
    focus_turns: frozenset[int] = frozenset()


#: Reads one file for many sessions: path, session id -> (first, last line) -> reads.
FileReader = Callable[[str, Mapping[str, tuple[int, int]]], dict[str, SpanRead]]
#: Reads one partition for many sessions: topic, partition, session id -> (first, last offset).
TopicReader = Callable[[str, int, Mapping[str, tuple[int, int]]], dict[str, SpanRead]]


@dataclass(frozen=True)
class Readers:
    file: FileReader
    #: None when no broker is configured: topic spans are then ``unavailable``.
    topic: TopicReader | None = None


# --- spans -----------------------------------------------------------------------------------


def _span(source: Mapping[str, Any]) -> tuple[str, Any, int, int] | None:
    """("file", path, first, last) or ("topic", (topic, partition), first, last), else None."""

    def whole(value: object) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    if isinstance(source.get("file"), str):
        first, last = whole(source.get("first_line")), whole(source.get("last_line"))
        if first is not None and last is not None and 1 <= first <= last:
            return "file", source["file"], first, last
    elif isinstance(source.get("topic"), str):
        part = whole(source.get("partition"))
        first, last = whole(source.get("first_offset")), whole(source.get("last_offset"))
        if part is not None and first is not None and last is not None and 0 <= first <= last:
            return "topic", (source["topic"], part), first, last
    return None


def _describe(source: Mapping[str, Any]) -> str:
    if "file" in source:
        return f"{source.get('file')}:{source.get('first_line')}-{source.get('last_line')}"
    if "topic" in source:
        return (
            f"{source.get('topic')}[{source.get('partition')}]@"
            f"{source.get('first_offset')}-{source.get('last_offset')}"
        )
    return repr(dict(source))[:120]


def _widen(wants: dict[str, tuple[int, int]], sid: str, first: int, last: int) -> None:
    if sid in wants:
        lo, hi = wants[sid]
        first, last = min(lo, first), max(hi, last)
    wants[sid] = (first, last)


def capture_many(
    requests: Sequence[Request], readers: Readers, limits: Limits = Limits(), *, redact: bool = True
) -> list[Capture]:
    """Captures in request order. Each file and each partition is read once for every session
    that has a span in it."""
    files: dict[str, dict[str, tuple[int, int]]] = {}
    topics: dict[tuple[str, int], dict[str, tuple[int, int]]] = {}
    for req in requests:
        for source in req.sources or ():
            span = _span(source)
            if span is None:
                continue
            kind, where, first, last = span
            target = files.setdefault(where, {}) if kind == "file" else topics.setdefault(where, {})
            _widen(target, req.session_id, first, last)
    file_reads = {path: readers.file(path, wants) for path, wants in files.items()}
    topic_reads: dict[tuple[str, int], dict[str, SpanRead]] = {}
    for (topic, part), wants in topics.items():
        if readers.topic is None:
            note = f"{topic}[{part}]: no broker configured to read it back"
            topic_reads[topic, part] = {s: SpanRead(status="unavailable", note=note) for s in wants}
        else:
            topic_reads[topic, part] = readers.topic(topic, part, wants)
    out = []
    for req in requests:
        reads: list[SpanRead] = []
        seen: set[tuple[str, Any]] = set()
        for source in req.sources or ():
            span = _span(source)
            if span is None:
                reads.append(
                    SpanRead(status="gone", note=f"unrecognised source {_describe(source)}")
                )
                continue
            kind, where, _, _ = span
            if (kind, where) in seen:
                continue  # one read covers every span of a session in the same file / partition
            seen.add((kind, where))
            got = (file_reads if kind == "file" else topic_reads)[where]
            reads.append(got.get(req.session_id, SpanRead(status="gone")))
        out.append(assemble(req, reads, limits, redact=redact))
    return out


def assemble(
    req: Request, reads: Sequence[SpanRead], limits: Limits = Limits(), *, redact: bool = True
) -> Capture:
    """The capture a session's span reads make: status, events in turn order (each event once),
    cleaned and capped."""
    sources = tuple(dict(s) for s in req.sources) if req.sources is not None else None
    if not req.sources:
        return Capture(req.session_id, "not_recorded", sources=sources)
    events: list[Event] = []
    ids: set[str] = set()
    for read in reads:
        for event in read.events:
            if event.event_id not in ids:
                ids.add(event.event_id)
                events.append(event)
    notes = tuple(r.note for r in reads if r.note)
    statuses = {r.status for r in reads}
    status: Status
    if events:
        status = "captured" if statuses == {"complete"} else "partial"
    else:
        status = "unavailable" if "unavailable" in statuses else "gone"
    order = sorted(range(len(events)), key=lambda i: (events[i].turn, i))
    cleaned = [clean(events[i], limits, redact=redact) for i in order]
    kept, omitted = cap_events(cleaned, req.focus_turns, limits)
    return Capture(req.session_id, status, tuple(kept), omitted, notes, sources)


# --- cleaning and capping (pure) -------------------------------------------------------------


def _clean_value(value: Any, limits: Limits, redact: bool) -> Any:
    if isinstance(value, str):
        value = cap(value, limits.max_text)
        return redact_text(value) if redact else value
    if isinstance(value, dict):
        return {str(k): _clean_value(v, limits, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(v, limits, redact) for v in value]
    return value


def clean(event: Event, limits: Limits = Limits(), *, redact: bool = True) -> dict[str, Any]:
    """An event as JSON builtins with texts and arguments capped and redacted, and only the
    attributes a reviewer needs."""
    out: dict[str, Any] = msgspec.to_builtins(event)
    out.pop("v", None)
    attrs = {k: v for k, v in event.attrs.items() if k in KEPT_ATTRS}
    if attrs:
        out["attrs"] = attrs
    else:
        out.pop("attrs", None)
    if event.text is not None:
        out["text"] = _clean_value(event.text, limits, redact)
    if event.tool is not None:
        out["tool"]["arguments"] = _clean_value(event.tool.arguments, limits, redact)
    return out


_PRIORITY: Final = {
    "user_message": 0,
    "compaction": 0,
    "incident": 0,
    "session_end": 0,
    "assistant_message": 1,
    "tool_call": 1,
    "tool_result": 2,
}


def cap_events(
    events: Sequence[dict[str, Any]], focus_turns: Iterable[int], limits: Limits = Limits()
) -> tuple[list[dict[str, Any]], int]:
    """Events within the limits, in their order, and how many were left out.

    Over a limit, what a reviewer needs comes first: user messages, compactions and events
    near a flagged turn, then calls and assistant text, then tool results; nearer a focus turn
    first, earlier first.
    """
    sizes = [len(msgspec.json.encode(e)) for e in events]
    if len(events) <= limits.max_events and sum(sizes) <= limits.max_bytes:
        return list(events), 0
    focus = sorted(set(focus_turns))

    def distance(turn: int) -> int:
        return min((abs(turn - f) for f in focus), default=1 << 62)

    def rank(i: int) -> tuple[int, int, int]:
        e = events[i]
        near = distance(int(e["turn"]))
        tier = 0 if near <= limits.focus_radius else _PRIORITY.get(str(e["kind"]), 2)
        return tier, near, i

    keep: set[int] = set()
    used = 0
    for i in sorted(range(len(events)), key=rank):
        if len(keep) >= limits.max_events:
            break
        if used + sizes[i] > limits.max_bytes:
            continue
        keep.add(i)
        used += sizes[i]
    return [events[i] for i in sorted(keep)], len(events) - len(keep)


# --- reading files ---------------------------------------------------------------------------


class _Counted:
    """Lines of a stream up to ``last``, counting them (the adapters number lines from 1)."""

    def __init__(self, stream: Iterable[bytes], last: int) -> None:
        self._stream = stream
        self._last = last
        self.count = 0
        self.error: str | None = None

    def __iter__(self) -> Iterator[bytes]:
        try:
            for line in self._stream:
                self.count += 1
                yield line
                if self.count >= self._last:
                    return
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            self.error = f"{type(exc).__name__}: {exc}"


def _open(path: str, stack: ExitStack) -> IO[bytes]:
    handle: IO[bytes] = stack.enter_context(open(path, "rb"))  # noqa: SIM115
    if path.endswith(".gz"):
        unzipped: IO[bytes] = stack.enter_context(gzip.GzipFile(fileobj=handle, mode="rb"))  # type: ignore[arg-type]
        return unzipped
    return handle


def read_file_spans(path: str, wants: Mapping[str, tuple[int, int]]) -> dict[str, SpanRead]:
    """The events of each wanted session in a replayed file, read through the adapters.

    The file is read from its first line to the last wanted line, in the format it sniffs as
    (what ``monitor replay`` does without ``--format``).
    """
    from monitor.adapters.files import PARSERS
    from monitor.adapters.sniff import SNIFF_LINES, sniff

    def every(status: SpanStatus, note: str) -> dict[str, SpanRead]:
        return {sid: SpanRead(status=status, note=note) for sid in wants}

    if path == "-":
        return every("gone", "read from standard input: nothing to read back")
    if not os.path.isfile(path):
        return every("gone", f"{path}: the file is gone")
    last = max(hi for _, hi in wants.values())
    found: dict[str, list[Event]] = {sid: [] for sid in wants}
    with ExitStack() as stack:
        try:
            lines = _Counted(_open(path, stack), last)
            stream = iter(lines)
            head = list(itertools.islice(stream, SNIFF_LINES))
        except OSError as exc:
            return every("gone", f"{path}: unreadable ({exc})")
        fmt = sniff(head)
        if fmt is None:
            return every("gone", f"{path}: no longer in a format the adapters read")
        items: Iterator[Item] = PARSERS[fmt](itertools.chain(head, stream), path)
        for item in items:
            if isinstance(item, Event) and item.session_id in found:
                found[item.session_id].append(item)
    out = {}
    for sid, (_, hi) in wants.items():
        events = tuple(found[sid])
        if not events:
            out[sid] = SpanRead(status="gone", note=f"{path}: holds none of the session's events")
        elif lines.error is not None:
            out[sid] = SpanRead(events, "partial", f"{path}: read failed at line {lines.count}")
        elif lines.count < hi:
            note = f"{path}: has {lines.count} lines; the session's ran to line {hi}"
            out[sid] = SpanRead(events, "partial", note)
        else:
            out[sid] = SpanRead(events)
    return out


# --- reading a topic -------------------------------------------------------------------------


def events_from_records(
    records: Iterable[tuple[int, bytes | None]],
    wants: Mapping[str, tuple[int, int]],
    log_start: int,
    where: str,
    reached: int,
) -> dict[str, SpanRead]:
    """The events of each wanted session in a partition's records ``(offset, value)``.

    ``log_start`` is the partition's earliest offset still held: a span that starts before it
    lost its head to retention. ``reached`` is the highest offset read (-1 for none): a span
    that ends after it was not read to its end.
    """
    found: dict[str, list[Event]] = {sid: [] for sid in wants}
    for offset, value in records:
        if value is None:
            continue
        for got in decode_record(value):
            if isinstance(got, Event) and got.session_id in found:
                lo, hi = wants[got.session_id]
                if lo <= offset <= hi:
                    found[got.session_id].append(got)
    out = {}
    for sid, (lo, hi) in wants.items():
        events = tuple(found[sid])
        expired = log_start > lo
        short = reached < hi
        if not events:
            if log_start > hi:
                note = f"{where}: offsets {lo}-{hi} have expired (the log starts at {log_start})"
            else:
                note = f"{where}: holds none of the session's events at offsets {lo}-{hi}"
            out[sid] = SpanRead(status="gone", note=note)
        elif expired:
            note = f"{where}: offsets {lo}-{log_start - 1} have expired"
            out[sid] = SpanRead(events, "partial", note)
        elif short:
            out[sid] = SpanRead(events, "partial", f"{where}: read to offset {reached} of {hi}")
        else:
            out[sid] = SpanRead(events)
    return out


@dataclass(frozen=True)
class KafkaTopicReader:
    """Reads a span of the worker's input topic with a bounded kafka-python consumer: assigned
    (no group, nothing committed), at most the span's records, for at most ``timeout_s``."""

    config: Mapping[str, Any]
    timeout_s: float = 20.0
    #: Consecutive empty polls after which the partition is taken to hold no more.
    idle_polls: int = 3
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __call__(
        self, topic: str, partition: int, wants: Mapping[str, tuple[int, int]]
    ) -> dict[str, SpanRead]:
        from kafka import KafkaConsumer, TopicPartition
        from kafka.errors import KafkaError

        where = f"{topic}[{partition}]"
        lo = min(first for first, _ in wants.values())
        hi = max(last for _, last in wants.values())
        options = {
            "enable_auto_commit": False,
            "group_id": None,
            "request_timeout_ms": 10_000,
            "bootstrap_timeout_ms": int(min(self.timeout_s, 10.0) * 1000),
            **self.config,
            **self.extra,
        }
        try:
            consumer = KafkaConsumer(**options)
        except KafkaError as exc:
            note = f"{where}: broker not reachable ({type(exc).__name__})"
            return {sid: SpanRead(status="unavailable", note=note) for sid in wants}
        records: list[tuple[int, bytes | None]] = []
        try:
            parts = consumer.partitions_for_topic(topic)
            if not parts or partition not in parts:
                note = f"{where}: the topic or partition is gone"
                return {sid: SpanRead(status="gone", note=note) for sid in wants}
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            start = int(consumer.beginning_offsets([tp])[tp])
            if start > hi:
                return events_from_records((), wants, start, where, -1)
            consumer.seek(tp, max(lo, start))
            reached = max(lo, start) - 1
            deadline = time.monotonic() + self.timeout_s
            idle = 0
            while reached < hi and idle < self.idle_polls and time.monotonic() < deadline:
                batch = consumer.poll(timeout_ms=500, max_records=500).get(tp, [])
                idle = 0 if batch else idle + 1
                for record in batch:
                    if record.offset > hi:
                        reached = hi
                        break
                    records.append((record.offset, record.value))
                    reached = record.offset
        except KafkaError as exc:
            note = f"{where}: read failed ({type(exc).__name__})"
            return {sid: SpanRead(status="unavailable", note=note) for sid in wants}
        finally:
            consumer.close()
        return events_from_records(records, wants, start, where, reached)


def readers_for(settings: Settings) -> Readers:
    """Readers for a configured monitor: files as replayed, the input topic on its broker."""
    from monitor.stream.kafka import kafka_python_config

    try:
        config = kafka_python_config(settings)
    except ValueError:
        return Readers(file=read_file_spans)
    return Readers(file=read_file_spans, topic=KafkaTopicReader(config))


# --- the shell the samplers call -------------------------------------------------------------


def capture_pending(
    maker: sessionmaker[Session],
    readers: Readers,
    *,
    week: str | None = None,
    item_ids: Sequence[int] | None = None,
    limits: Limits = Limits(),
    redact: bool = True,
    now: datetime | None = None,
) -> Counter[str]:
    """Capture the transcripts of the intake items that have none yet (or whose source was
    unavailable last time); return how many ended in each status.

    No transaction is held while the sources are read: one reads what to capture, one writes.
    """
    from monitor.store import transcripts

    with maker() as session:
        pending = transcripts.pending(session, week=week, item_ids=item_ids)
        sids = [sid for _, sid in pending]
        sources = transcripts.session_sources(session, sids)
        focus = transcripts.focus_turns(session, sids)
    if not pending:
        return Counter()
    requests = [Request(sid, sources.get(sid), frozenset(focus.get(sid, ()))) for _, sid in pending]
    captures = capture_many(requests, readers, limits, redact=redact)
    at = now or datetime.now(UTC)
    with maker.begin() as session:
        for (item_id, _), got in zip(pending, captures, strict=True):
            transcripts.save(session, item_id, got, at)
    return Counter(c.status for c in captures)
