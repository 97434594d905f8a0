"""Weekly fixture intake: which flagged sessions a person should turn into fixtures.

``choose`` is the pure policy; ``run_week`` is the shell that reads the store, calls it and queues
the result. The policy, in order:

1. Sessions that reported a compaction incident come first (tier 1): they are the cases someone
   already saw go wrong.
2. The rest is a weighted sample without replacement (A-Res, Efraimidis-Spirakis): each session
   gets the key ``ln(u) / weight`` with ``u`` in (0, 1) and the highest keys win. The weight
   grows with evidence density (flags that span a compaction, compactions, length, both signals)
   so dense sessions are likely but not certain, and the queue is not always one kind of session.
   Within the incident tier the same keys order the sessions.
3. Both signals stay represented when both exist: if the picks lack one, the lowest-ranked
   non-incident pick gives way to the best-ranked session carrying it.

``u`` is a hash of (seed, session id) where the seed defaults to the week, so a week's choice is
a function of the week and the data alone, and does not depend on the order rows arrive in.
The same key is computed in SQL (``_top``), which lets Postgres keep only the best few hundred
of a million candidates; Python then re-ranks those exactly (see ``_select``).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

from sqlalchemy import Row, func, select, text
from sqlalchemy.orm import Session

from monitor.flags import CONSEQUENCE_SIGNALS as SIGNALS

#: Weights of the evidence-density components (each applied to ``ln(1 + x)``).
W_SPANNING: Final = 2.0
W_COMPACTIONS: Final = 1.0
W_LENGTH: Final = 0.5
#: Turns counted as one unit of length, so length matters less than compactions.
LENGTH_UNIT: Final = 50.0
#: Added when a session raised both signals.
W_BOTH: Final = 1.5
#: Smallest candidate pool Postgres hands to Python per query.
MIN_POOL: Final = 64
#: Low bits of the 64-bit hash that make ``u``: exact in a float, the same in SQL and Python.
_U_BITS: Final = 52
_U_MASK: Final = (1 << _U_BITS) - 1
_U_SPAN: Final = float(1 << _U_BITS)

_WEEK_RE: Final = re.compile(r"^(\d{4})-W(\d{2})$")


@dataclass(frozen=True)
class Candidate:
    """A session flagged in the week, with what the policy weighs."""

    session_id: str
    incident: bool = False
    compactions: int = 0
    turns: int = 0
    repeat_flags: int = 0
    restate_flags: int = 0
    #: Flags whose evidence spans a compaction (every repeat; restatements across one).
    spanning_flags: int = 0
    #: Restatement flags with a compaction between the two turns.
    restate_spanning: int = 0

    @property
    def spans(self) -> bool:
        """Whether any of its evidence spans a compaction: a repeated call always does, a
        restatement only with a compaction between the two turns (the weaker tier without)."""
        return self.repeat_flags > 0 or self.restate_spanning > 0

    @property
    def signals(self) -> frozenset[str]:
        found = set()
        if self.repeat_flags > 0:
            found.add("repeated_tool_call")
        if self.restate_flags > 0:
            found.add("restated_instruction")
        return frozenset(found)


@dataclass(frozen=True)
class Pick:
    """A chosen session: ``score`` is its evidence-density weight, ``reason`` says why."""

    session_id: str
    score: float
    reason: dict[str, Any] = field(default_factory=dict)


# --- weeks ----------------------------------------------------------------------------------


def parse_week(week: str) -> tuple[datetime, datetime]:
    """``2026-W49`` -> [Monday 00:00 UTC, next Monday 00:00 UTC). Raises ValueError."""
    m = _WEEK_RE.match(week)
    if not m:
        raise ValueError(f"week must look like 2026-W49, not {week!r}")
    start = date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
    lo = datetime(start.year, start.month, start.day, tzinfo=UTC)
    return lo, lo + timedelta(days=7)


def iso_week(when: datetime) -> str:
    """The ISO week (UTC) a time falls in, as ``2026-W49``."""
    year, week, _ = when.astimezone(UTC).isocalendar()
    return f"{year}-W{week:02d}"


def previous_week(now: datetime) -> str:
    """The last complete ISO week before ``now``: what a Monday-morning schedule samples."""
    return iso_week(now.astimezone(UTC) - timedelta(days=7))


# --- the pure policy -------------------------------------------------------------------------


def _parts(c: Candidate) -> tuple[float, float, float, float]:
    """The weight's parts, in float operations SQL's ``ln(1 + x)`` repeats bit for bit."""
    return (
        W_SPANNING * math.log(1.0 + float(c.spanning_flags)),
        W_COMPACTIONS * math.log(1.0 + float(c.compactions)),
        W_LENGTH * math.log(1.0 + float(c.turns) / LENGTH_UNIT),
        W_BOTH if len(c.signals) == 2 else 0.0,
    )


def components(c: Candidate) -> dict[str, float]:
    """The weight's parts by name, rounded for the record."""
    names = ("spanning_flags", "compactions", "length", "both_signals")
    return {k: round(v, 6) for k, v in zip(names, _parts(c), strict=True)}


def weight(c: Candidate) -> float:
    """Evidence density: 1 plus the parts (summed in the order the SQL sums them)."""
    spanning, compactions, length, both = _parts(c)
    return 1.0 + spanning + compactions + length + both


def seed_value(seed: str) -> int:
    """The signed 64-bit seed a seed string (by default the week) stands for."""
    digest = hashlib.blake2b(seed.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def uniform(seed: str, session_id: str) -> float:
    """A value in (0, 1) fixed by (seed, session id).

    Postgres computes the same value as ``hashtextextended(session_id, seed)``, which is why the
    hash is PostgreSQL's own (``_pg_hash``): Postgres can then rank a million rows without
    shipping them, at a fraction of the cost of md5.
    """
    h = _pg_hash(session_id.encode("utf-8", "surrogatepass"), seed_value(seed))
    return (float(h & _U_MASK) + 0.5) / _U_SPAN


_M32: Final = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def _mix(a: int, b: int, c: int) -> tuple[int, int, int]:
    a = (a - c) & _M32 ^ _rot(c, 4)
    c = (c + b) & _M32
    b = (b - a) & _M32 ^ _rot(a, 6)
    a = (a + c) & _M32
    c = (c - b) & _M32 ^ _rot(b, 8)
    b = (b + a) & _M32
    a = (a - c) & _M32 ^ _rot(c, 16)
    c = (c + b) & _M32
    b = (b - a) & _M32 ^ _rot(a, 19)
    a = (a + c) & _M32
    c = (c - b) & _M32 ^ _rot(b, 4)
    b = (b + a) & _M32
    return a, b, c


def _final(a: int, b: int, c: int) -> tuple[int, int, int]:
    c = (c ^ b) - _rot(b, 14) & _M32
    a = (a ^ c) - _rot(c, 11) & _M32
    b = (b ^ a) - _rot(a, 25) & _M32
    c = (c ^ b) - _rot(b, 16) & _M32
    a = (a ^ c) - _rot(c, 4) & _M32
    b = (b ^ a) - _rot(a, 14) & _M32
    c = (c ^ b) - _rot(b, 24) & _M32
    return a, b, c


def _pg_hash(data: bytes, seed: int) -> int:
    """PostgreSQL's ``hash_bytes_extended`` (Jenkins lookup3, little-endian), unsigned 64-bit."""
    n = len(data)
    a = b = c = (0x9E3779B9 + n + 3923095) & _M32
    seed &= 0xFFFFFFFFFFFFFFFF
    if seed:
        a = (a + (seed >> 32)) & _M32
        b = (b + (seed & _M32)) & _M32
        a, b, c = _mix(a, b, c)
    i = 0
    while n - i >= 12:
        a = (a + int.from_bytes(data[i : i + 4], "little")) & _M32
        b = (b + int.from_bytes(data[i + 4 : i + 8], "little")) & _M32
        c = (c + int.from_bytes(data[i + 8 : i + 12], "little")) & _M32
        a, b, c = _mix(a, b, c)
        i += 12
    rest = data[i:]
    if len(rest) >= 9:  # the lowest byte of c is reserved (for the length, in lookup2)
        c = (c + (int.from_bytes(rest[8:], "little") << 8)) & _M32
    if len(rest) >= 5:
        b = (b + int.from_bytes(rest[4:8], "little")) & _M32
    if rest:
        a = (a + int.from_bytes(rest[:4], "little")) & _M32
    a, b, c = _final(a, b, c)
    return (b << 32) | c


def rank(c: Candidate, seed: str, w: float | None = None) -> tuple[bool, bool, float, str]:
    """Sort key, highest first: incident tier, then evidence that spans a compaction ahead of
    restatements without one, then the A-Res key ``ln(u) / weight``.

    The session id breaks exact ties (descending), so the order is total.
    """
    key = math.log(uniform(seed, c.session_id)) / (w or weight(c))
    return (c.incident, c.spans, key, c.session_id)


def choose(
    candidates: Iterable[Candidate],
    week: str,
    n: int,
    seed: str | None = None,
    *,
    present: Iterable[str] = (),
) -> list[Pick]:
    """Pick up to ``n`` sessions, best first (see the module docstring for the policy).

    ``present`` names signals already represented in the week's queue (by an earlier run), so
    a top-up does not force a signal the queue already has.
    """
    seed = week if seed is None else seed
    pool = {c.session_id: c for c in candidates}
    ranked = sorted(pool.values(), key=lambda c: rank(c, seed), reverse=True)
    picks = ranked[: max(n, 0)]
    swapped: set[str] = set()
    have = set(present)
    for c in picks:
        have |= c.signals
    for signal in SIGNALS:
        if signal in have or not picks:
            continue
        chosen = {c.session_id for c in picks}
        carrier = next(
            (c for c in ranked if signal in c.signals and c.session_id not in chosen), None
        )
        if carrier is None:
            continue
        victim = _victim(picks, present)
        if victim is None:
            continue
        picks[victim] = carrier
        swapped.add(carrier.session_id)
        have |= carrier.signals
        picks.sort(key=lambda c: rank(c, seed), reverse=True)
    return [_pick(c, seed, c.session_id in swapped) for c in picks]


def _victim(picks: Sequence[Candidate], present: Iterable[str]) -> int | None:
    """Index of the lowest-ranked non-incident pick whose loss drops no signal's last carrier."""
    base = set(present)
    for i in range(len(picks) - 1, -1, -1):
        if picks[i].incident:
            continue
        rest: set[str] = set(base)
        for j, c in enumerate(picks):
            if j != i:
                rest |= c.signals
        if picks[i].signals <= rest:
            return i
    return None


def _pick(c: Candidate, seed: str, swapped: bool) -> Pick:
    parts = components(c)
    w = weight(c)
    reason: dict[str, Any] = {
        "tier": "incident" if c.incident else "evidence" if c.spans else "unspanned",
        "key": round(rank(c, seed, w)[2], 9),
        "weight": round(w, 6),
        "components": parts,
        "signals": sorted(c.signals),
        "counts": {
            "spanning_flags": c.spanning_flags,
            "compactions": c.compactions,
            "turns": c.turns,
            "repeat_flags": c.repeat_flags,
            "restate_flags": c.restate_flags,
        },
    }
    if swapped:
        reason["representation"] = True  # taken to keep both signals in the week's queue
    return Pick(session_id=c.session_id, score=round(w, 6), reason=reason)


# --- the shell: store -> choose -> queue -----------------------------------------------------


def run_week(session: Session, week: str, n: int = 20, *, seed: str | None = None) -> list[int]:
    """Queue up to ``n`` of the week's flagged sessions; return the ids of new intake items.

    Idempotent: items already queued for the week count toward ``n``, so a second run adds
    nothing, and a run after more sessions were flagged tops the week up to ``n``. A session
    already queued in any week is never a candidate again. The caller owns the transaction;
    on Postgres the week is locked for it, so two concurrent runs cannot both top up.
    """
    from monitor.store import intake
    from monitor.store.models import SessionRow

    seed = week if seed is None else seed
    lo, hi = parse_week(week)
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(func.hashtext("intake:" + week))))
    existing = intake.week_items(session, week)
    need = n - len(existing)
    if need <= 0:
        return []
    present: set[str] = set()
    for item in existing:
        present.update(item.reason.get("signals", ()))
    picks = _select(session, lo, hi, week, need, seed, present)
    if not picks:
        return []
    ids = [p.session_id for p in picks]
    rows = {
        r.session_id: r
        for r in session.scalars(select(SessionRow).where(SessionRow.session_id.in_(ids)))
    }
    flags = intake.flags_of(session, ids)
    from monitor.fixtures import build_draft

    drafts = {
        sid: build_draft(
            sid, rows[sid].turns, rows[sid].compactions, flags.get(sid, []), rows[sid].items
        )
        for sid in ids
    }
    return intake.add_items(session, week, picks, drafts)


_COLUMNS: Final = (
    "session_id, incident, compactions, turns, repeat_flags, restate_flags, restate_spanning"
)
#: Extra condition when only carriers of one signal are wanted.
_CARRIES: Final = {
    "": "",
    "repeated_tool_call": "AND s.repeat_flags > 0",
    "restated_instruction": "AND s.restate_flags > 0",
}

#: The A-Res key with the *upper-bound* weight (every flag counted as spanning), for Postgres.
_PG_TOP: Final = f"""
    SELECT {_COLUMNS}
    FROM sessions s
    WHERE s.last_flagged_at >= :lo AND s.first_flagged_at < :hi
      {{signal}}
      AND s.session_id NOT IN (SELECT i.session_id FROM intake_items i)
    ORDER BY s.incident DESC,
      (s.repeat_flags > 0 OR s.restate_spanning > 0) DESC,
      ln(((hashtextextended(s.session_id COLLATE "C", CAST(:seed AS bigint)) & {_U_MASK})::float8
          + 0.5::float8) / {_U_SPAN!r}::float8)
      / (1.0::float8
         + {W_SPANNING!r}::float8 * ln(1.0::float8 + (s.repeat_flags + s.restate_flags)::float8)
         + {W_COMPACTIONS!r}::float8 * ln(1.0::float8 + s.compactions::float8)
         + {W_LENGTH!r}::float8 * ln(1.0::float8 + s.turns::float8 / {LENGTH_UNIT!r}::float8)
         + CASE WHEN s.repeat_flags > 0 AND s.restate_flags > 0
                THEN {W_BOTH!r}::float8 ELSE 0.0::float8 END)
      DESC,
      s.session_id COLLATE "C" DESC
    LIMIT :size
    """

#: Portable fallback (the embedded SQLite store): the week's candidates, ranked in Python.
_ANY_TOP: Final = f"""
    SELECT {_COLUMNS}
    FROM sessions s
    WHERE s.last_flagged_at >= :lo AND s.first_flagged_at < :hi
      {{signal}}
      AND NOT EXISTS (SELECT 1 FROM intake_items i WHERE i.session_id = s.session_id)
    """


def _bound(row: Row[Any]) -> Candidate:
    """A row as a candidate with the upper bound of its spanning flags (all of its flags)."""
    return Candidate(
        session_id=row.session_id,
        incident=bool(row.incident),
        compactions=row.compactions,
        turns=row.turns,
        repeat_flags=row.repeat_flags,
        restate_flags=row.restate_flags,
        spanning_flags=row.repeat_flags + row.restate_flags,
        restate_spanning=row.restate_spanning,
    )


def _top(
    session: Session,
    lo: datetime,
    hi: datetime,
    seed: str,
    size: int,
    signal: str = "",
) -> tuple[list[Candidate], tuple[bool, bool, float, str] | None]:
    """The best ``size`` candidates by upper-bound rank, and the rank of the last one when the
    query was cut (every candidate left out ranks at most that), else None."""
    params: dict[str, Any] = {"lo": lo, "hi": hi, "seed": seed_value(seed), "size": size}
    if session.get_bind().dialect.name == "postgresql":
        stmt = text(_PG_TOP.format(signal=_CARRIES[signal]))
        rows = [_bound(r) for r in session.execute(stmt, params)]
    else:
        stmt = text(_ANY_TOP.format(signal=_CARRIES[signal]))
        every = [_bound(r) for r in session.execute(stmt, {"lo": lo, "hi": hi})]
        rows = sorted(every, key=lambda c: rank(c, seed), reverse=True)[:size]
    edge = rank(rows[-1], seed) if len(rows) == size else None
    return rows, edge


def _exact(session: Session, bounds: Sequence[Candidate]) -> dict[str, Candidate]:
    """Replace upper bounds by the stored count of flags that span a compaction."""
    from monitor.store import intake

    spanning = intake.spanning_counts(session, [c.session_id for c in bounds])
    return {
        c.session_id: Candidate(
            session_id=c.session_id,
            incident=c.incident,
            compactions=c.compactions,
            turns=c.turns,
            repeat_flags=c.repeat_flags,
            restate_flags=c.restate_flags,
            spanning_flags=spanning.get(c.session_id, 0),
            restate_spanning=c.restate_spanning,
        )
        for c in bounds
    }


def _select(
    session: Session,
    lo: datetime,
    hi: datetime,
    week: str,
    need: int,
    seed: str,
    present: set[str],
) -> list[Pick]:
    """``choose`` over every candidate of the week, reading only a small pool of them.

    Exact weights can only lower a key (spanning flags <= all flags), so a pool cut at upper-bound
    rank ``edge`` holds the true top ``need`` once the ``need``-th exact rank beats ``edge``; the
    same holds for the best carrier of a signal the top lacks. Otherwise the pool grows.
    """
    size = max(4 * need, MIN_POOL)
    while True:
        bounds, edge = _top(session, lo, hi, seed, size)
        pool = _exact(session, bounds)
        ranked = sorted(pool.values(), key=lambda c: rank(c, seed), reverse=True)
        if edge is not None and rank(ranked[need - 1], seed) <= edge:
            size *= 4
            continue
        have = set(present).union(*(c.signals for c in ranked[:need]))
        grow = False
        for signal in SIGNALS:
            if signal in have:
                continue
            best = next((c for c in ranked[need:] if signal in c.signals), None)
            if edge is None or (best is not None and rank(best, seed) > edge):
                continue
            extra, extra_edge = _top(session, lo, hi, seed, size, signal)
            exact = _exact(session, [c for c in extra if c.session_id not in pool])
            pool.update(exact)
            carriers = sorted(
                (c for c in pool.values() if signal in c.signals),
                key=lambda c: rank(c, seed),
                reverse=True,
            )
            top = {c.session_id for c in ranked[:need]}
            best = next((c for c in carriers if c.session_id not in top), None)
            if extra_edge is not None and (best is None or rank(best, seed) <= extra_edge):
                grow = True
                break
        if grow:
            size *= 4
            continue
        return choose(pool.values(), week, need, seed, present=present)
