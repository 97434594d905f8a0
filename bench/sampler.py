"""Sampler at scale: time ``run_week`` on a Postgres store with a million flagged sessions.

Builds a throwaway database (``bench_sampler_<random>``) with ``generate_series``: N flagged
sessions (by default all in the sampled week, the worst case for the candidate query), their
flags (~2 per session, repeats always spanning a compaction, half the restatements too) and
0.1 % incident sessions. Then it times, each ``--repeat`` times in a transaction that is rolled
back so every run samples from scratch:

* ``sample``: ``run_week(session, week, n)``, the whole weekly job (query, re-rank, drafts, insert);
* ``floor``: ``SELECT count(*)`` over the same candidate rows, the least any sampler must read;
* ``again``: a second ``run_week`` after a committed first one (the idempotent no-op).

    .venv/bin/python bench/sampler.py [--sessions 1000000] [--n 20] [--repeat 5] [--json]

Target (issue 7, item 6): sampling a week of a 1M-session store takes < 2 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from typing import Any

import psycopg
from sqlalchemy import text

from monitor.sampling import parse_week, run_week
from monitor.store.db import make_engine, make_sessionmaker, upgrade

TARGET_S = 2.0

_SESSIONS = """
WITH base AS (
    SELECT g, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5
    FROM generate_series(1, %(n)s) AS g
), shaped AS (
    SELECT g,
        %(lo)s::timestamptz + r1 * interval '6 days 23 hours' AS t,
        20 + floor(r2 * 2000)::int AS turns,
        CASE WHEN r3 < 0.7 THEN 1 + floor(r4 * 3)::int ELSE 0 END AS rep,
        r5
    FROM base
)
INSERT INTO sessions (session_id, first_seen, last_seen, first_flagged_at, last_flagged_at,
    turns, events, tool_calls, user_messages, compactions, repeat_flags, restate_flags,
    incident, compactor, agent, attrs, updated_at)
SELECT 'bench-' || lpad(g::text, 8, '0'), t, t + interval '1 hour', t, t + interval '30 minutes',
    turns, turns * 2, turns, turns / 4, turns / 150, rep,
    CASE WHEN rep = 0 OR r5 < 0.3 THEN 1 + floor(r5 * 2)::int ELSE 0 END,
    g %% 1000 = 0, 'v1', 'bench', '{}'::jsonb, now()
FROM shaped
"""

_FLAGS = """
INSERT INTO flags (session_id, signal, turn, original_turn, compaction_turn, key, event_id, ts,
    compactor, evidence, created_at)
SELECT s.session_id, 'repeated_tool_call', 200 + k, 40 + k, 180, 'call' || k,
    s.session_id || '-r' || k, s.last_flagged_at, 'v1',
    jsonb_build_object('tool', 'Read', 'arguments', '{"path":"src/app.py"}', 'first_turn', 12 + k,
        'original_turn', 40 + k, 'compaction_turn', 180, 'compactor', 'v1'), now()
FROM sessions s, generate_series(1, s.repeat_flags) AS k
UNION ALL
SELECT s.session_id, 'restated_instruction', 300 + k, 5 + k,
    CASE WHEN (right(s.session_id, 1)::int + k) % 2 = 0 THEN 250 END, 'ins' || k,
    s.session_id || '-s' || k, s.last_flagged_at, 'v1',
    jsonb_build_object('earlier', 'Never push to main.', 'later', 'As I said, do not push to main.',
        'original_turn', 5 + k, 'score', 91.5, 'cues', jsonb_build_array('reminder_cue')), now()
FROM sessions s, generate_series(1, s.restate_flags) AS k
"""


def _url(admin: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(admin)
    host, port, user = info.get("host", "127.0.0.1"), info.get("port", "5432"), info["user"]
    return f"postgresql+psycopg://{user}@{host}:{port}/{name}"


def build(admin: str, name: str, sessions: int, week: str) -> tuple[str, float]:
    """Create and fill the bench database; return its URL and the build time."""
    started = time.perf_counter()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = _url(admin, name)
    upgrade(url)
    lo, _ = parse_week(week)
    with psycopg.connect(psycopg.conninfo.make_conninfo(admin, dbname=name)) as conn:
        conn.execute("SELECT setseed(0.49)")
        conn.execute(_SESSIONS, {"n": sessions, "lo": lo})
        conn.execute(_FLAGS)
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE sessions")
        conn.execute("VACUUM ANALYZE flags")
        conn.execute("VACUUM ANALYZE intake_items")
    return url, time.perf_counter() - started


def measure(url: str, week: str, n: int, repeat: int) -> dict[str, Any]:
    engine = make_engine(url)
    maker = make_sessionmaker(engine)
    lo, hi = parse_week(week)
    floor = (
        "SELECT count(*) FROM sessions s"
        " WHERE s.last_flagged_at >= :lo AND s.first_flagged_at < :hi"
    )
    sample_s: list[float] = []
    floor_s: list[float] = []
    candidates = 0
    picked = 0
    for _ in range(repeat):
        with maker() as session:
            t = time.perf_counter()
            candidates = int(session.execute(text(floor), {"lo": lo, "hi": hi}).scalar_one())
            floor_s.append(time.perf_counter() - t)
        with maker() as session:
            t = time.perf_counter()
            picked = len(run_week(session, week, n))
            sample_s.append(time.perf_counter() - t)
            session.rollback()
    with maker.begin() as session:
        run_week(session, week, n)
    again_s: list[float] = []
    for _ in range(repeat):
        with maker.begin() as session:
            t = time.perf_counter()
            assert run_week(session, week, n) == []
            again_s.append(time.perf_counter() - t)
    engine.dispose()
    sample = statistics.median(sample_s)
    floor_med = statistics.median(floor_s)
    return {
        "week": week,
        "candidates": candidates,
        "n": n,
        "picked": picked,
        "repeat": repeat,
        "sample_s": {"median": sample, "min": min(sample_s), "max": max(sample_s)},
        "floor_s": {"median": floor_med, "min": min(floor_s), "max": max(floor_s)},
        "again_s": {"median": statistics.median(again_s), "max": max(again_s)},
        "ratio": sample / floor_med if floor_med > 0 else None,
        "target_s": TARGET_S,
        "meets_target": max(sample_s) < TARGET_S,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--admin", default="host=127.0.0.1 port=5432 user=postgres dbname=postgres")
    ap.add_argument("--sessions", type=int, default=1_000_000)
    ap.add_argument("--week", default="2026-W49")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="do not drop the bench database")
    ap.add_argument("--reuse", metavar="NAME", help="measure a kept bench database (no build)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    name = args.reuse or f"bench_sampler_{uuid.uuid4().hex[:10]}"
    try:
        if args.reuse:
            url, build_s = _url(args.admin, name), 0.0
            with psycopg.connect(psycopg.conninfo.make_conninfo(args.admin, dbname=name)) as conn:
                conn.execute("DELETE FROM intake_items")
                args.sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        else:
            url, build_s = build(args.admin, name, args.sessions, args.week)
        result = {"sessions": args.sessions, "build_s": build_s}
        result.update(measure(url, args.week, args.n, args.repeat))
    finally:
        if not (args.keep or args.reuse):
            with psycopg.connect(args.admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return 0
    s, f, a = result["sample_s"], result["floor_s"], result["again_s"]
    rows = [
        ("stored flagged sessions", f"{args.sessions:,}"),
        ("candidates in the week", f"{result['candidates']:,}"),
        ("picked", f"{result['picked']} of n={args.n}"),
        (
            "sample a week (median)",
            f"{s['median']:.3f} s  (min {s['min']:.3f}, max {s['max']:.3f})",
        ),
        ("floor: count the week (median)", f"{f['median']:.3f} s"),
        ("ratio sample / floor", f"{result['ratio']:.1f}"),
        ("second run, no-op (median)", f"{a['median'] * 1000:.1f} ms"),
        ("target", f"< {TARGET_S} s: {'met' if result['meets_target'] else 'NOT met'}"),
        ("database build", f"{build_s:.1f} s"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        sys.stdout.write(f"{k:<{width}}  {v}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
