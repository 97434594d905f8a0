"""Records the worker publishes besides flags: per-session summaries for the sessions table.

A ``SessionSummary`` carries the absolute counters of a session's ``Meta`` (and the times of the
flags raised by one input record), so the session sink can upsert them in any order and any
number of times: counters only move up, first/last times only widen.

Summaries travel as JSON arrays, up to ``SUMMARIES_PER_RECORD`` to a record: a run of input
records changes hundreds of sessions, and Faust's cost per record (producing it, then
consuming it in the sink) is many times the cost of a summary. A single JSON object, as older
workers published, still decodes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

import msgspec

from monitor.detect.session import Meta
from monitor.flags import Flag


class SessionSummary(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    first_ts: datetime
    last_ts: datetime
    max_turn: int
    events: int
    tool_calls: int
    user_messages: int
    compactions: int
    repeat_flags: int
    restate_flags: int
    incident: bool
    compactor: str | None = None
    #: Counters added later (absent from older workers' records: zero).
    restate_spanning: int = 0
    retries: int = 0
    dropped_flags: int = 0
    inverted_flags: int = 0
    #: Survival checks by compactor (``Meta.survival``) and the ledger's live items.
    survival: dict[str, tuple[int, ...]] = msgspec.field(default_factory=dict)
    items: list[dict[str, Any]] | None = None
    #: Compactions by compactor version (``Meta.compacted``; absent from older workers).
    compacted: dict[str, int] = msgspec.field(default_factory=dict)
    attrs: dict[str, str] = msgspec.field(default_factory=dict)
    #: First and last timestamp of the flags this summary was published with (if any).
    first_flag_ts: datetime | None = None
    last_flag_ts: datetime | None = None
    #: The session's input spans so far (``monitor.provenance``); absent from older workers.
    sources: list[dict[str, Any]] | None = None

    def to_meta(self) -> Meta:
        return Meta(
            session_id=self.session_id,
            first_ts=self.first_ts,
            last_ts=self.last_ts,
            max_turn=self.max_turn,
            events=self.events,
            tool_calls=self.tool_calls,
            user_messages=self.user_messages,
            compactions=self.compactions,
            repeat_flags=self.repeat_flags,
            restate_flags=self.restate_flags,
            incident=self.incident,
            compactor=self.compactor,
            attrs=dict(self.attrs),
            restate_spanning=self.restate_spanning,
            retries=self.retries,
            dropped_flags=self.dropped_flags,
            inverted_flags=self.inverted_flags,
            survival=dict(self.survival),
            compacted=dict(self.compacted),
        )

    @property
    def flag_times(self) -> tuple[datetime, datetime] | None:
        if self.first_flag_ts is None or self.last_flag_ts is None:
            return None
        return (self.first_flag_ts, self.last_flag_ts)


def is_reportable(meta: Meta) -> bool:
    """Sessions the store keeps: with a flag or a reported incident (as ``monitor replay``)."""
    return bool(
        meta.repeat_flags
        or meta.restate_flags
        or meta.incident
        or meta.dropped_flags
        or meta.inverted_flags
        or meta.survival
    )


def summarise(
    meta: Meta,
    flags: Iterable[Flag] = (),
    sources: list[dict[str, Any]] | None = None,
    items: list[dict[str, Any]] | None = None,
) -> SessionSummary:
    times = [f.ts for f in flags]
    return SessionSummary(
        session_id=meta.session_id,
        first_ts=meta.first_ts,
        last_ts=meta.last_ts,
        max_turn=meta.max_turn,
        events=meta.events,
        tool_calls=meta.tool_calls,
        user_messages=meta.user_messages,
        compactions=meta.compactions,
        repeat_flags=meta.repeat_flags,
        restate_flags=meta.restate_flags,
        incident=meta.incident,
        compactor=meta.compactor,
        attrs=dict(meta.attrs),
        restate_spanning=meta.restate_spanning,
        retries=meta.retries,
        dropped_flags=meta.dropped_flags,
        inverted_flags=meta.inverted_flags,
        survival=dict(meta.survival),
        compacted=dict(meta.compacted),
        items=items,
        first_flag_ts=min(times) if times else None,
        last_flag_ts=max(times) if times else None,
        sources=sources,
    )


def merge(summaries: Iterable[SessionSummary]) -> list[SessionSummary]:
    """One summary per session (a database upsert may touch a row once per statement):
    the one with the most events, with the flag times widened over all of them."""
    best: dict[str, SessionSummary] = {}
    for s in summaries:
        cur = best.get(s.session_id)
        if cur is None:
            best[s.session_id] = s
            continue
        keep = s if s.events >= cur.events else cur
        firsts = [t for t in (cur.first_flag_ts, s.first_flag_ts) if t is not None]
        lasts = [t for t in (cur.last_flag_ts, s.last_flag_ts) if t is not None]
        best[s.session_id] = msgspec.structs.replace(
            keep,
            first_flag_ts=min(firsts) if firsts else None,
            last_flag_ts=max(lasts) if lasts else None,
        )
    return list(best.values())


#: Most summaries in one record (typically ~350 bytes each: ~90 KiB).
SUMMARIES_PER_RECORD: Final = 256
#: Most bytes in one record, well under a broker's 1 MiB default. Summaries are small, but a
#: producer may send long attribute values (the compactor version is free text).
RECORD_BYTES: Final = 512 * 1024

_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder(SessionSummary | list[SessionSummary])


def encode(summaries: Iterable[SessionSummary]) -> list[bytes]:
    """Record values for ``summaries``: JSON arrays of up to ``SUMMARIES_PER_RECORD`` and
    ``RECORD_BYTES`` (a summary larger than that on its own travels alone)."""
    out: list[bytes] = []
    chunk: list[bytes] = []
    size = 2  # the brackets
    for summary in summaries:
        data = _encoder.encode(summary)
        if chunk and (len(chunk) == SUMMARIES_PER_RECORD or size + len(data) + 1 > RECORD_BYTES):
            out.append(b"[" + b",".join(chunk) + b"]")
            chunk, size = [], 2
        chunk.append(data)
        size += len(data) + 1
    if chunk:
        out.append(b"[" + b",".join(chunk) + b"]")
    return out


def partition_key(input_partition: int) -> bytes:
    """Key of the summary records for sessions of ``input_partition``.

    The order of a session's summaries does not matter, but which sink writes them does: keyed
    this way, every summary of a session lands in one partition, so one sink upserts its row
    and two workers' sinks never wait on each other's row locks.
    """
    return b"input-%d" % input_partition


def decode(data: bytes) -> list[SessionSummary]:
    """The summaries of one record: an array, or one object (as older workers wrote)."""
    value = _decoder.decode(data)
    return value if isinstance(value, list) else [value]
