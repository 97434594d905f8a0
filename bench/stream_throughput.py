"""Worker throughput on the local Tansu broker: single-event records vs batch records.

Starts a Tansu broker, a fresh Postgres database and one worker (``python -m monitor.stream``),
pre-loads the input topic, then times from the worker's "Ready" to the moment the session sink
has stored every event's effect. Every generated session ends with an ``incident`` event, so
every session gets a row and the summed ``events`` column says how far the worker has got.

    .venv/bin/python bench/stream_throughput.py [--sessions 600] [--turns 40]

Prints events/s and records/s for each encoding. Figures include the sink (Postgres) and
Faust's commit machinery; they are for comparing encodings, not a capacity plan.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

import psycopg

from monitor.config import load_settings
from monitor.events import Event
from monitor.store.db import upgrade
from monitor.stream.produce import produce_events
from monitor.testing import generate_events, start_tansu, start_worker, stop_pid, worker_env

ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"


def with_incidents(events: list[Event]) -> list[Event]:
    last: dict[str, Event] = {}
    for e in events:
        last[e.session_id] = e
    tail = [
        Event(
            event_id=f"{e.session_id}-incident",
            session_id=e.session_id,
            turn=e.turn + 1,
            ts=e.ts + timedelta(seconds=1),
            kind="incident",
        )
        for e in last.values()
    ]
    return events + tail


def run(bootstrap: str, db: str, events: list[Event], batch: bool, tmp: Path) -> None:
    name = f"bench-{uuid.uuid4().hex[:6]}"
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
    env = worker_env(bootstrap, url, name)
    settings = load_settings(env)
    stats = produce_events(events, settings, batch=batch)
    log = tmp / f"{name}.log"
    proc = start_worker(env, log, cwd=tmp)
    try:
        deadline = time.monotonic() + 120
        while "[^Worker]: Ready" not in log.read_text(errors="replace"):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"worker did not start; see {log}")
            time.sleep(0.05)
        started = time.monotonic()
        done = 0
        with psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={db}") as conn:
            conn.autocommit = True
            while done < len(events) and time.monotonic() < started + 600:
                row = conn.execute(
                    "SELECT coalesce(sum(events), 0) FROM sessions WHERE session_id LIKE %s",
                    (events[0].session_id.split("-")[0] + "%",),
                ).fetchone()
                done = int(row[0]) if row else 0
                time.sleep(0.1)
        seconds = time.monotonic() - started
    finally:
        stop_pid(proc, timeout_s=15)
    kind = "batch records " if batch else "single records"
    print(
        f"{kind}: {len(events)} events in {stats.records} records, processed in {seconds:.1f}s:"
        f" {len(events) / seconds:,.0f} events/s, {stats.records / seconds:,.0f} records/s"
        f" (produce: {stats.events_per_second:,.0f} events/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    broker = start_tansu()
    db = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{db}"')
    try:
        upgrade(f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}")
        with tempfile.TemporaryDirectory() as tmp:
            for seed, batch in ((1, False), (2, True)):
                events = with_incidents(
                    generate_events(args.sessions, seed=seed, turns=args.turns, prefix=f"b{seed}x")
                )
                run(broker.bootstrap, db, events, batch, Path(tmp))
    finally:
        broker.stop()
        with psycopg.connect(ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


if __name__ == "__main__":
    main()
