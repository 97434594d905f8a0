"""Per-session detector state in one Faust table, one key per state part.

``detect.step`` keeps unchanged parts as the same object, so ``save`` writes back only the parts
that changed: a tool call rewrites ``meta`` and ``calls``, never the instruction list. Keys are
``<session id> NUL <part>``. One table means one changelog topic, co-partitioned with the input
topic (Faust uses the source record's partition), so all parts of a session sit in one changelog
partition and are written in order, ``meta`` last, in one producer batch, which the log appends
whole (``Batches.add_group``): a crash leaves a session's changes saved entirely or not at all.
(Parts saved ahead of ``meta`` would be a torn state: a re-processed tool call already recorded
at its own turn raises no flag, and the session's counters fall one short of its flags. Only a
session whose changed parts outgrow one batch, 16 KiB by default, is still split.)

The ``meta`` value carries a marker, the (partition, offset) of the input record that produced
it. A record re-delivered after a crash (its offset was never committed, but its state was
saved) is recognised by that marker and skipped whole, however many events it holds; the
core's own seen-id window only has to catch duplicates a producer sent twice. Beside the marker
it carries the session's input spans (``monitor.provenance``), so the provenance of a session
survives restarts and rebalances with its state and costs no changelog record of its own. A
``meta`` value written before spans existed (the marker, then the encoded meta) still loads.

Decoding every part of a session for every run of records took about as much of the worker as
detection itself (8% and 9% of a profile on single-event records), so the most recently saved
states stay decoded (``STATE_CACHE_SESSIONS``).
A cached state is used only while the table still holds the very ``meta`` object it was saved
with: every change writes ``meta`` anew, and recovery or a rebalance puts new objects in the
table, so anything but the worker's own last save decodes afresh.

Sessions leave the table through ``delete`` (the worker's expiry sweep), which writes a tombstone
per part, ``meta`` last, so a crash mid-delete again leaves a state the next sweep finishes. One
lock orders ``save`` and ``delete``: the detect agent and the sweep share the event loop, and each
awaits the producer between its writes.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import msgspec

from monitor.detect.session import (
    PARTS,
    Meta,
    Part,
    SessionState,
    changed_parts,
    decode_part,
    encode_part,
    is_idle,
)
from monitor.provenance import Held
from monitor.stream.batches import Batches, producer_of

if TYPE_CHECKING:
    import faust

_MARKER: Final = struct.Struct(">iq")  # source partition, source offset
#: A meta value with spans: this tag byte (no partition number starts with it), the marker, the
#: length of the spans' JSON, the JSON, then the encoded meta.
_TAG: Final = 0xFF
_WITH_SPANS: Final = struct.Struct(">BiqI")
#: Parts written before ``meta``, so ``meta`` (with the marker) lands last.
_WRITE_ORDER: Final[tuple[Part, ...]] = (*(p for p in PARTS if p != "meta"), "meta")


def state_key(session_id: str, part: Part) -> bytes:
    return session_id.encode("utf-8", "surrogatepass") + b"\0" + part.encode()


def pack_meta(partition: int, offset: int, spans: bytes, meta: bytes) -> bytes:
    """The table value of a session's ``meta`` part: marker, input spans (JSON), meta."""
    return _WITH_SPANS.pack(_TAG, partition, offset, len(spans)) + spans + meta


def unpack_meta(raw: bytes) -> tuple[int, int, bytes, bytes]:
    """(partition, offset, spans JSON, encoded meta) of a ``meta`` value; the spans are empty
    in a value written before they were recorded."""
    if raw and raw[0] == _TAG:
        _, partition, offset, size = _WITH_SPANS.unpack_from(raw)
        start = _WITH_SPANS.size
        return partition, offset, raw[start : start + size], raw[start + size :]
    partition, offset = _MARKER.unpack_from(raw)
    return partition, offset, b"", raw[_MARKER.size :]


_META_SUFFIX: Final = b"\0meta"
#: Decoded states kept (most recently used). At ~6 KB each, 4096 states are ~25 MB.
STATE_CACHE_SESSIONS: Final = 4096
_spans_encoder: Final = msgspec.json.Encoder()
_spans_decoder: Final = msgspec.json.Decoder(list[dict[str, Any]])


@dataclass(frozen=True)
class Expirable:
    """A session the expiry sweep may drop: its state, the changelog partition it lives in, and
    the ``meta`` record it was judged on (the drop is skipped if that record changed since)."""

    state: SessionState
    partition: int
    meta_record: bytes


class SessionTables:
    """Load and save ``SessionState`` values (the detect agent), find and drop expired sessions
    (the expiry sweep). Both run on the worker's event loop."""

    def __init__(self, app: faust.App, partitions: int) -> None:
        self.app = app
        self.table: Any = app.Table(
            "session-state",
            default=None,
            key_type=bytes,
            value_type=bytes,
            partitions=partitions,
            help="Detector state by session id and part; meta carries the applied offset.",
        )
        self._lock = asyncio.Lock()
        #: Records of events held for reordering (the worker's memory; see provenance.Held).
        self.held: Held[tuple[int, int]] = Held()
        #: session id -> (the ``meta`` value saved, the state it was saved from).
        self._decoded: dict[str, tuple[bytes, SessionState]] = {}

    def load(self, session_id: str) -> tuple[SessionState | None, tuple[int, int] | None]:
        """The saved state of a session and the (partition, offset) of the record behind it."""
        raw = self.table.get(state_key(session_id, "meta"))
        if raw is None:
            return None, None
        partition, offset, _, meta_bytes = unpack_meta(raw)
        cached = self._decoded.pop(session_id, None)
        if cached is not None and cached[0] is raw:
            self._decoded[session_id] = cached  # most recently used last
            return cached[1], (partition, offset)
        meta = decode_part("meta", meta_bytes)
        assert isinstance(meta, Meta)
        parts: dict[str, Any] = {}
        for part in PARTS:
            if part != "meta":
                value = self.table.get(state_key(session_id, part))
                if value is not None:
                    parts[part] = decode_part(part, value)
        return msgspec.structs.replace(SessionState(meta=meta), **parts), (partition, offset)

    def spans(self, session_id: str) -> list[dict[str, Any]]:
        """The session's input spans as last saved (empty for a new session)."""
        raw = self.table.get(state_key(session_id, "meta"))
        if raw is None:
            return []
        spans = unpack_meta(raw)[2]
        return list(_spans_decoder.decode(spans)) if spans else []

    async def save(
        self,
        old: SessionState | None,
        new: SessionState,
        partition: int,
        offset: int,
        spans: list[dict[str, Any]] | None = None,
    ) -> int:
        """Write the parts of ``new`` that differ from ``old`` (``meta`` last, always, since it
        carries the marker and the input ``spans``); return how many records were written.

        The changelog partition is given, not taken from Faust's current event: the detect
        agent saves a run of records at once, after the event context has moved on. Records go
        straight to the producer (about five times cheaper than ``Table.__setitem__``'s buffered
        path); Faust flushes the producer before it commits input offsets, as for its own
        changelog writes.
        """
        topic = self.table.changelog_topic.get_topic_name()
        spans_json = _spans_encoder.encode(spans) if spans else b""
        async with self._lock:
            written = 0
            for key, value in self._assign(old, new, partition, offset, spans_json):
                await self.app.producer.send(topic, key, value, partition, None, None)
                written += 1
            return written

    async def save_all(
        self,
        saves: Iterable[
            tuple[SessionState | None, SessionState, int, int, list[dict[str, Any]] | None]
        ],
    ) -> int:
        """``save`` for many sessions at once, each as (old, new, partition, offset, spans):
        the records go out as one aiokafka batch per changelog partition (``batches.py``), in
        the order ``save`` would send them. Return how many records were written."""
        topic = self.table.changelog_topic.get_topic_name()
        async with self._lock:
            out = Batches(producer_of(self.app))
            for old, new, partition, offset, spans in saves:
                spans_json = _spans_encoder.encode(spans) if spans else b""
                # A session's records in one batch: the log takes a batch whole, so a crash
                # never leaves a session's parts saved ahead of its meta.
                out.add_group(
                    topic, partition, self._assign(old, new, partition, offset, spans_json)
                )
            await out.submit()
            return out.records

    def _assign(
        self,
        old: SessionState | None,
        new: SessionState,
        partition: int,
        offset: int,
        spans_json: bytes = b"",
    ) -> list[tuple[bytes, bytes]]:
        """Put the changed parts of ``new`` in the table (``meta`` last, with the marker) and
        return them as changelog records, in write order. Call with the lock held."""
        sid = new.meta.session_id
        if old is not None and state_key(sid, "meta") not in self.table.data:
            old = None  # dropped by the expiry sweep since it was loaded: write it whole
        changed = set(changed_parts(old, new)) | {"meta"}
        out: list[tuple[bytes, bytes]] = []
        for part in _WRITE_ORDER:
            if part not in changed:
                continue
            value = encode_part(new, part)
            if part == "meta":
                value = pack_meta(partition, offset, spans_json, value)
            key = state_key(sid, part)
            self.table.data[key] = value
            out.append((key, value))
        self._remember(sid, out[-1][1], new)  # meta's value: written last
        return out

    def _remember(self, session_id: str, meta_value: bytes, state: SessionState) -> None:
        cache = self._decoded
        cache.pop(session_id, None)
        cache[session_id] = (meta_value, state)
        if len(cache) > STATE_CACHE_SESSIONS:
            del cache[next(iter(cache))]  # the least recently used

    def meta_keys(self) -> list[bytes]:
        """The ``meta`` keys held now (a snapshot: the sweep works through it in slices)."""
        return [k for k in list(self.table.data.keys()) if k.endswith(_META_SUFFIX)]

    def expirable(
        self, meta_key: bytes, partitions: set[int], now: datetime, idle_expiry_s: float
    ) -> Expirable | None:
        """The session behind ``meta_key`` if it lives in one of ``partitions`` (those this
        worker owns; standby copies are not ours to drop) and is ended or idle."""
        raw = self.table.data.get(meta_key)
        if raw is None:
            return None
        partition, _, _, meta_bytes = unpack_meta(raw)
        if partition not in partitions:
            return None
        meta = decode_part("meta", meta_bytes)
        assert isinstance(meta, Meta)
        if not is_idle(SessionState(meta=meta), now, idle_expiry_s):
            return None
        state, _ = self.load(meta.session_id)
        if state is None:
            return None
        return Expirable(state, partition, raw)

    async def delete(self, session_id: str, partition: int, meta_record: bytes) -> bool:
        """Drop every part of a session and write their tombstones (``meta`` last), unless its
        ``meta`` record is no longer ``meta_record`` (an event arrived since it was judged)."""
        topic = self.table.changelog_topic.get_topic_name()
        async with self._lock:
            if self.table.data.get(state_key(session_id, "meta")) != meta_record:
                return False
            keys = [state_key(session_id, part) for part in _WRITE_ORDER]
            for key in keys:
                self.table.data.pop(key, None)
            self._decoded.pop(session_id, None)
            for key in keys:
                await self.app.producer.send(topic, key, None, partition, None, None)
            return True

    def sessions(self) -> int:
        """Sessions held by this worker (a scan; for a periodic gauge, not per record)."""
        return sum(1 for k in self.table if k.endswith(_META_SUFFIX))
