"""Worker throughput on the local Tansu broker, against the cost of reading the same topic.

Pre-fills an input topic (default 200k events, 4 partitions), once with single-event records and
once with batch records (``monitor produce``'s default), then times in the same run:

* floor: a bare aiokafka consumer draining the topic and decoding every record with
  ``monitor.events.decode_record`` (the unavoidable cost of reading);
* faust: a Faust agent that only decodes (``async for value in stream``): Faust's own ceiling;
* worker: the worker (``monitor.stream.app``, one process), until every event's session row and
  every flag is in Postgres;
* worker x2: two workers in one group on the same partitions (batch records; the scale-out factor);
* with ``--compare-ref REF``: the worker again with
  ``monitor/stream/{agents,records,kafka,tables}.py`` taken from git ``REF``, so before/after
  figures come from one run on one noisy machine.

Every Faust run is timed from its first input record (a sensor notes it) to done, so group joins
and start-up are left out alike; the floor is timed from its first fetched record. Each worker run
gets its own consumer group, state and output topics; Postgres tables are emptied between runs.

    .venv/bin/python bench/stream_throughput.py [--events 200000] [--partitions 4]
        [--compare-ref HEAD] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from monitor.config import load_settings
from monitor.detect import DetectConfig
from monitor.events import Event, decode_record
from monitor.replay import collect
from monitor.store.db import upgrade
from monitor.stream.produce import produce_events
from monitor.testing import (
    database_url,
    generate_events,
    scratch_database,
    start_tansu,
    stop_pid,
    worker_env,
)

HERE = Path(__file__).resolve()
#: Modules a ``--compare-ref`` worker takes from git (the files this bench's fixes touch).
SWAPPABLE = ("records", "kafka", "tables", "agents")  # agents imports the others
#: Longest any one run may take (seconds).
RUN_LIMIT_S = 900.0


def with_incidents(events: list[Event]) -> list[Event]:
    """End every session with an incident, so every session gets a row in ``sessions`` and the
    summed ``events`` column says how far a worker has got."""
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


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    model = model or platform.processor()
    return f"{os.cpu_count()} cpus, {model}, python {platform.python_version()}"


# --- child processes: a worker with a first-record sensor, a decode-only Faust agent -----------


def _first_record_sensor(app: Any, topic: str, mark: Path) -> None:
    """Note the wall time of the first input record this process sees."""
    from faust.sensors import Sensor

    class FirstRecord(Sensor):
        seen = False

        def on_message_in(self, tp: Any, offset: int, message: Any) -> None:
            if not self.seen and tp.topic == topic:
                self.seen = True
                mark.write_text(repr(time.time()))

    app.sensors.add(FirstRecord())


def _swap_in(ref_dir: Path) -> None:
    """Import ``monitor.stream``'s swappable modules from ``ref_dir`` instead of the tree."""
    import monitor.stream as package

    for name in SWAPPABLE:
        full = f"monitor.stream.{name}"
        spec = importlib.util.spec_from_file_location(full, ref_dir / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
        setattr(package, name, module)


def child_worker(mark: Path, ref_dir: Path | None) -> None:
    """``monitor worker`` as ``run_worker`` builds it, plus the first-record sensor."""
    if ref_dir is not None:
        _swap_in(ref_dir)
    import faust

    from monitor.metrics import build_metrics
    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.stream.app import create_app

    settings = load_settings()
    maker = make_sessionmaker(make_engine(settings.db_url))
    worker = create_app(settings, maker, build_metrics())
    _first_record_sensor(worker.app, settings.input_topic, mark)
    faust.Worker(worker.app, loglevel="info").execute_from_commandline()


def child_decoder(mark: Path, done: Path, expected: int) -> None:
    """A Faust app whose one agent decodes each record and counts its events, nothing more."""
    import faust

    settings = load_settings()
    app = faust.App(
        settings.app_id,
        broker=settings.broker,
        store="memory://",
        key_serializer="raw",
        value_serializer="raw",
        topic_partitions=settings.partitions,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=settings.session_timeout_s,
        broker_heartbeat_interval=min(3.0, settings.session_timeout_s / 3),
        web_enabled=False,
    )
    topic = app.topic(settings.input_topic, key_type=bytes, value_type=bytes)

    async def decode_only(stream: Any) -> None:
        events = 0
        async for value in stream:
            events += len(decode_record(value))
            if events >= expected and not done.exists():
                done.write_text(repr(time.time()))

    app.agent(topic, name="decode-only")(decode_only)
    _first_record_sensor(app, settings.input_topic, mark)
    faust.Worker(app, loglevel="warning").execute_from_commandline()


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MONITOR_")}
    full.update(env)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, str(HERE), *args],
            env=full,
            cwd=str(log.parent),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _read_time(path: Path) -> float | None:
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return None


# --- the three measurements ---------------------------------------------------------------------


@dataclass
class Result:
    label: str
    encoding: str
    events: int
    records: int
    seconds: float

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


async def _drain(bootstrap: str, topic: str, expected: int) -> tuple[float, int]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        events = records = 0
        first: float | None = None
        deadline = time.monotonic() + RUN_LIMIT_S
        while events < expected and time.monotonic() < deadline:
            fetched = await consumer.getmany(timeout_ms=500)
            for messages in fetched.values():
                if first is None and messages:
                    first = time.perf_counter()
                for message in messages:
                    events += len(decode_record(message.value or b""))
                    records += 1
        assert first is not None and events >= expected, f"floor saw {events} of {expected}"
        return time.perf_counter() - first, records
    finally:
        await consumer.stop()


def run_floor(bootstrap: str, topic: str, expected: int, encoding: str) -> Result:
    seconds, records = asyncio.run(_drain(bootstrap, topic, expected))
    return Result("floor: aiokafka + decode", encoding, expected, records, seconds)


def run_decoder(
    bootstrap: str, topic: str, expected: int, records: int, encoding: str, tmp: Path
) -> Result:
    name = f"dec-{uuid.uuid4().hex[:6]}"
    env = worker_env(bootstrap, "sqlite://", name, input_topic=topic)
    mark, done = tmp / f"{name}.first", tmp / f"{name}.done"
    proc = _spawn(
        ["--child", "decoder", "--mark", str(mark), "--done", str(done), "--expected",
         str(expected)],
        env, tmp / f"{name}.log",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + RUN_LIMIT_S
        while (end := _read_time(done)) is None:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"decode-only agent did not finish; see {tmp / name}.log")
            time.sleep(0.05)
        start = _read_time(mark)
        assert start is not None
    finally:
        stop_pid(proc, timeout_s=15)
    return Result("faust: decode-only agent", encoding, expected, records, end - start)


@dataclass
class Target:
    """What a worker run must produce in Postgres before it counts as done."""

    db: str
    events: int
    records: int
    flags: int


def run_workers(
    bootstrap: str,
    topic: str,
    target: Target,
    encoding: str,
    tmp: Path,
    label: str,
    workers: int = 1,
    partitions: int = 4,
    ref_dir: Path | None = None,
) -> Result:
    name = f"w-{uuid.uuid4().hex[:6]}"
    url = database_url(target.db)
    dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={target.db}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE flags, sessions CASCADE")
    env = worker_env(bootstrap, url, name, partitions=partitions, input_topic=topic)
    marks = [tmp / f"{name}-{i}.first" for i in range(workers)]
    extra = ["--ref-dir", str(ref_dir)] if ref_dir is not None else []
    procs = [
        _spawn(["--child", "worker", "--mark", str(m), *extra], env, tmp / f"{name}-{i}.log")
        for i, m in enumerate(marks)
    ]
    try:
        deadline = time.monotonic() + RUN_LIMIT_S
        events = flags = 0
        with psycopg.connect(dsn, autocommit=True) as conn:
            while events < target.events or flags < target.flags:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise SystemExit(
                        f"{label}: {events}/{target.events} events, {flags}/{target.flags} flags;"
                        f" see {tmp}/{name}-*.log"
                    )
                time.sleep(0.1)
                row = conn.execute(
                    "SELECT (SELECT coalesce(sum(events), 0) FROM sessions),"
                    " (SELECT count(*) FROM flags)"
                ).fetchone()
                assert row is not None
                events, flags = int(row[0]), int(row[1])
        end = time.time()
        starts = [t for m in marks if (t := _read_time(m)) is not None]
    finally:
        for proc in procs:
            stop_pid(proc, timeout_s=15)
    return Result(label, encoding, target.events, target.records, end - min(starts))


# --- the run ------------------------------------------------------------------------------------


def _git_files(ref: str, into: Path) -> Path:
    root = HERE.parent.parent
    for name in SWAPPABLE:
        text = subprocess.run(
            ["git", "show", f"{ref}:monitor/stream/{name}.py"],
            cwd=root, check=True, capture_output=True,
        ).stdout  # fmt: skip
        (into / f"{name}.py").write_bytes(text)
    return into


def _flag_count(events: list[Event]) -> int:
    _, flags = collect(events, DetectConfig())
    return len({(f.session_id, f.signal, f.turn, f.key) for f in flags})


def measure(args: argparse.Namespace) -> dict[str, Any]:
    sessions = max(1, args.events // 31)  # generate_events: ~30 events a session, + incident
    events = with_incidents(generate_events(sessions, seed=7, turns=40, prefix="t"))
    target_flags = _flag_count(events)
    broker = start_tansu()
    results: list[Result] = []
    try:
        with scratch_database("bench_") as db, tempfile.TemporaryDirectory() as tmpdir:
            upgrade(database_url(db))
            tmp = Path(tmpdir)
            ref_dir = _git_files(args.compare_ref, tmp) if args.compare_ref else None
            for encoding in args.encodings:
                topic = f"bench-{encoding}-{uuid.uuid4().hex[:6]}"
                env = worker_env(broker.bootstrap, "sqlite://", "p", args.partitions,
                                 input_topic=topic)  # fmt: skip
                stats = produce_events(events, load_settings(env), batch=encoding == "batch")
                target = Target(db, len(events), stats.records, target_flags)
                print(f"# {encoding}: {len(events):,} events in {stats.records:,} records,"
                      f" {target_flags:,} flags expected", file=sys.stderr)  # fmt: skip
                n = len(events)
                results.append(run_floor(broker.bootstrap, topic, n, encoding))
                results.append(
                    run_decoder(broker.bootstrap, topic, n, stats.records, encoding, tmp)
                )
                results.append(run_workers(broker.bootstrap, topic, target, encoding, tmp,
                                           "worker", partitions=args.partitions))  # fmt: skip
                if ref_dir is not None:
                    results.append(run_workers(
                        broker.bootstrap, topic, target, encoding, tmp,
                        f"worker @ {args.compare_ref}", partitions=args.partitions,
                        ref_dir=ref_dir,
                    ))  # fmt: skip
                if encoding in args.scale:
                    results.append(run_workers(broker.bootstrap, topic, target, encoding, tmp,
                                               "worker x2", workers=2,
                                               partitions=args.partitions))  # fmt: skip
    finally:
        broker.stop()
    return summarise(results, args)


def summarise(results: list[Result], args: argparse.Namespace) -> dict[str, Any]:
    by = {(r.encoding, r.label): r.events_per_s for r in results}
    ratios: dict[str, float] = {}
    for enc in args.encodings:
        worker, floor, faust = by[(enc, "worker")], by[(enc, "floor: aiokafka + decode")], by[
            (enc, "faust: decode-only agent")]  # fmt: skip
        ratios[f"{enc}_worker_vs_floor"] = round(worker / floor, 3)
        ratios[f"{enc}_worker_vs_faust"] = round(worker / faust, 3)
        if (enc, "worker x2") in by:
            ratios[f"{enc}_scale_out_x2"] = round(by[(enc, "worker x2")] / worker, 3)
        if args.compare_ref:
            ratios[f"{enc}_worker_vs_{args.compare_ref}"] = round(
                worker / by[(enc, f"worker @ {args.compare_ref}")], 3
            )
    main_ratio = ratios.get("batch_worker_vs_floor", next(iter(ratios.values())))
    return {
        "events": results[0].events,
        "partitions": args.partitions,
        "results": [
            {
                "encoding": r.encoding,
                "run": r.label,
                "events": r.events,
                "records": r.records,
                "seconds": round(r.seconds, 2),
                "events_per_s": round(r.events_per_s),
                "records_per_s": round(r.records_per_s),
            }
            for r in results
        ],
        "ratios": ratios,
        "ratio": main_ratio,
        "targets": {"single_worker_vs_faust": 0.8, "batch_worker_vs_floor": 0.5},
        "machine": machine(),
    }


def print_table(out: dict[str, Any]) -> None:
    print(f"{out['events']:,} events, {out['partitions']} partitions; {out['machine']}")
    print(f"{'records':8} {'run':26} {'records':>9} {'seconds':>8} {'events/s':>10}"
          f" {'records/s':>10}")  # fmt: skip
    for r in out["results"]:
        print(f"{r['encoding']:8} {r['run']:26} {r['records']:>9,} {r['seconds']:>8.1f}"
              f" {r['events_per_s']:>10,} {r['records_per_s']:>10,}")  # fmt: skip
    for key, value in out["ratios"].items():
        print(f"{key:34} {value:.3f}")
    print("targets: single worker/faust >= 0.8, batch worker/floor >= 0.5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--encodings", nargs="+", default=["single", "batch"],
                        choices=["single", "batch"])  # fmt: skip
    parser.add_argument("--scale", nargs="*", default=["batch"], choices=["single", "batch"],
                        help="encodings to also run with two workers")  # fmt: skip
    parser.add_argument(
        "--compare-ref", help="also run the worker's stream modules from this git ref"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=["worker", "decoder"], help=argparse.SUPPRESS)
    parser.add_argument("--mark", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--done", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--expected", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ref-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "worker":
        sys.argv = sys.argv[:1]
        return child_worker(args.mark, args.ref_dir)
    if args.child == "decoder":
        sys.argv = sys.argv[:1]
        return child_decoder(args.mark, args.done, args.expected)
    out = measure(args)
    if args.json:
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_table(out)


if __name__ == "__main__":
    main()
