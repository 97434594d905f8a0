"""Flag latency: time from producing a repeating call to its flag's row in Postgres.

Starts a Tansu broker, a fresh Postgres database and one worker (``python -m monitor.stream``),
then produces at a steady rate (default 2,000 events/s) from many live sessions. Like a log
shipper, the producer flushes every ``--tick`` seconds, one batch record per session holding that
session's events of the tick (``--single``: one record per event). Every session compacts every
40 turns and repeats, right after, a call it issued just before: that call is flagged.

The producer notes when it sent each repeated call (the core flags exactly those: the bench
reports any that never got a row); a flag's latency is its row's ``created_at`` (the sink
transaction's start, Postgres clock, same host) minus the send time of the record that carried
its event. Flags of events sent during the warm-up are left out.

``--fetch-wait-ms N`` runs the worker with ``MONITOR_FETCH_MAX_WAIT_MS=N`` (default: the worker's
own, 500; Faust on its own fixes 1500). Tansu answers a fetch only when that wait is over, even
when records arrived meanwhile, so on Tansu every consumer hop (input -> detect, flags -> sink)
adds up to that long; Apache Kafka answers as soon as ``fetch_min_bytes`` (1) are there.

    .venv/bin/python bench/latency.py [--rate 2000] [--seconds 30] [--sessions 100]
        [--tick 0.25] [--single] [--fetch-wait-ms N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from monitor.config import load_settings
from monitor.events import Compaction as CompactionInfo
from monitor.events import Event, Tool, encode
from monitor.store.db import upgrade
from monitor.stream.produce import make_producer
from monitor.stream.topics import ensure_topics
from monitor.testing import (
    database_url,
    scratch_database,
    start_tansu,
    start_worker,
    stop_pid,
    worker_env,
)

TARGET_P99_S = 2.0
#: Turns between compactions in every generated session.
PERIOD = 40


def next_event(sid: str, turn: int) -> Event:
    """Turn ``turn`` of a session: mostly fresh tool calls and results, a compaction every
    ``PERIOD`` turns and, right after it, the call from just before it again."""
    common: dict[str, Any] = {
        "event_id": f"{sid}-{turn}",
        "session_id": sid,
        "turn": turn,
        "ts": datetime.now(UTC),
        "attrs": {"agent": "claude_code"},
    }
    phase = turn % PERIOD
    if phase == PERIOD - 2:
        info = CompactionInfo(tokens_before=170_000, tokens_after=20_000, compactor="sum-v1")
        return Event(kind="compaction", compaction=info, **common)
    if phase == PERIOD - 1:  # the call of turn - 3 (a tool call, below), again
        args = {"file_path": f"/repo/{sid}/f{turn - 3}.py", "limit": 200}
        return Event(kind="tool_call", tool=Tool(name="Read", arguments=args), **common)
    if phase % 2 == 0:
        args = {"file_path": f"/repo/{sid}/f{turn}.py", "limit": 200}
        return Event(kind="tool_call", tool=Tool(name="Read", arguments=args), **common)
    return Event(kind="tool_result", tool=Tool(name="Read"), text="x" * 200, **common)


def produce_steadily(
    settings: Any, rate: float, seconds: float, sessions: int, tick: float, single: bool
) -> tuple[dict[str, float], int, float]:
    """Produce for ``seconds``; return send time by flagged event id, events sent, and the
    achieved rate."""
    producer = make_producer(settings)
    topic = settings.input_topic
    turns = [0] * sessions
    sids = [f"lat-{uuid.uuid4().hex[:6]}-{s:04d}" for s in range(sessions)]
    sent_at: dict[str, float] = {}
    per_tick = max(1, round(rate * tick))
    cursor = sent = 0
    started = time.perf_counter()
    next_tick = started
    try:
        while time.perf_counter() - started < seconds:
            by_session: dict[int, list[Event]] = {}
            flagged: list[tuple[int, str]] = []
            for _ in range(per_tick):
                s = cursor % sessions
                cursor += 1
                event = next_event(sids[s], turns[s])
                if turns[s] % PERIOD == PERIOD - 1:
                    flagged.append((s, event.event_id))
                turns[s] += 1
                by_session.setdefault(s, []).append(event)
            now = time.time()
            for s, events in by_session.items():
                key = sids[s].encode()
                if single:
                    for event in events:
                        producer.send(topic, key=key, value=encode(event))
                else:
                    value = b"[" + b",".join(encode(e) for e in events) + b"]"
                    producer.send(topic, key=key, value=value)
                sent += len(events)
            for _s, event_id in flagged:
                sent_at[event_id] = now
            next_tick += tick
            delay = next_tick - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        producer.flush()
    finally:
        producer.close()
    return sent_at, sent, sent / (time.perf_counter() - started)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    broker = start_tansu()
    try:
        return _run(args, broker.bootstrap)
    finally:
        broker.stop()


def _run(args: argparse.Namespace, bootstrap: str) -> dict[str, Any]:
    with scratch_database("bench_") as db:
        dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={db}"
        url = database_url(db)
        upgrade(url)
        name = f"lat-{uuid.uuid4().hex[:6]}"
        extra = {} if args.fetch_wait_ms is None else {"fetch_max_wait_ms": str(args.fetch_wait_ms)}
        env = worker_env(bootstrap, url, name, partitions=args.partitions, **extra)
        settings = load_settings(env)
        ensure_topics(settings, [settings.input_topic])
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "worker.log"
            proc = start_worker(env, log, cwd=log.parent)
            try:
                deadline = time.monotonic() + 120
                while "[^Worker]: Ready" not in log.read_text(errors="replace"):
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise SystemExit(f"worker did not start; see {log}")
                    time.sleep(0.05)
                warm_from = time.time() + args.warmup
                sent_at, sent, achieved = produce_steadily(
                    settings, args.rate, args.warmup + args.seconds, args.sessions, args.tick,
                    args.single,
                )  # fmt: skip
                measured = {e: t for e, t in sent_at.items() if t >= warm_from}
                rows: dict[str, float] = {}
                with psycopg.connect(dsn, autocommit=True) as conn:
                    deadline = time.monotonic() + 60
                    while len(rows) < len(sent_at) and time.monotonic() < deadline:
                        time.sleep(0.2)
                        rows = {
                            e: t.timestamp()
                            for e, t in conn.execute(
                                "SELECT event_id, min(created_at) FROM flags GROUP BY event_id"
                            ).fetchall()
                        }
            finally:
                stop_pid(proc, timeout_s=15)
    latencies = [rows[e] - t for e, t in measured.items() if e in rows]
    missing = len(measured) - len(latencies)
    unexpected = len(set(rows) - set(sent_at))
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    return {
        "rate_target": args.rate,
        "rate_achieved": round(achieved),
        "events_sent": sent,
        "records": "single" if args.single else f"batch per session per {args.tick}s tick",
        "sessions": args.sessions,
        "fetch_max_wait_ms": settings.fetch_max_wait_ms,
        "flags_measured": len(latencies),
        "flags_missing": missing,
        "flags_unexpected": unexpected,
        "p50_s": round(p50, 3),
        "p99_s": round(p99, 3),
        "max_s": round(max(latencies), 3),
        "target_p99_s": TARGET_P99_S,
        "ratio": round(p99 / TARGET_P99_S, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=2000.0, help="events per second")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured time")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--tick", type=float, default=0.25, help="producer flush interval (s)")
    parser.add_argument("--single", action="store_true", help="one record per event")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--fetch-wait-ms", type=int, help="worker's MONITOR_FETCH_MAX_WAIT_MS")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = run(args)
    if args.json:
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
        return
    print(f"{out['events_sent']:,} events at {out['rate_achieved']:,}/s (target {args.rate:,.0f}),"
          f" {out['records']}, {args.sessions} sessions,"
          f" fetch_max_wait_ms {out['fetch_max_wait_ms']}")  # fmt: skip
    print(f"flags measured {out['flags_measured']:,}, missing {out['flags_missing']},"
          f" unexpected {out['flags_unexpected']}")  # fmt: skip
    print(f"{'p50':6}{out['p50_s']:>8.3f} s")
    print(f"{'p99':6}{out['p99_s']:>8.3f} s   (target <= {TARGET_P99_S} s)")
    print(f"{'max':6}{out['max_s']:>8.3f} s")


if __name__ == "__main__":
    main()
