"""Worker throughput on the local Tansu broker, against the cost of reading the same topic.

Pre-fills an input topic (default 200k events, 4 partitions), once with single-event records and
once with batch records (``monitor produce``'s default), then times in the same run:

* floor: a bare aiokafka consumer draining the topic and decoding every record with
  ``monitor.events.decode_record`` (the unavoidable cost of reading);
* faust: a Faust agent that only decodes (``async for value in stream``): Faust's own ceiling;
* worker: the worker (``monitor.stream.app``, one process), until every event's session row and
  every flag is in Postgres;
* worker x2: two workers in one group on the same partitions (batch records; the scale-out factor);
* core: ``monitor.events.decode`` + ``detect.step`` over the same events, one JSON line each, in
  this process (as ``bench/core.py`` times it; the best of three passes, taken between the
  stream runs), so ``batch_worker_vs_core`` says how much the shell costs on top of the work;
* with ``--compare-ref REF...``: the worker again for each ``REF``, with
  ``monitor/stream/{batches,records,kafka,tables,agents,app}.py`` taken from git ``REF`` (the
  rest of the package is the tree's), so before/after figures come from one run on one noisy
  machine.

Every Faust run is timed from its first input record (a sensor notes it) to done, so group joins
and start-up are left out alike; the floor is timed from its first fetched record. Each run also
reports the CPU time it cost per event (from ``/proc``): its own process(es), the broker's, and
Postgres' (the worker's sinks write there), so a run shows where the machine's cpus went. Each
worker run gets its own consumer group, state and output topics; Postgres tables are emptied
between runs.

    .venv/bin/python bench/stream_throughput.py [--events 200000] [--partitions 4]
        [--compare-ref REF...] [--json]
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
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from monitor.config import load_settings
from monitor.detect import DetectConfig, step
from monitor.detect.session import SessionState
from monitor.events import Event, decode, decode_record, encode
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
#: Modules a ``--compare-ref`` worker takes from git (the files this bench's fixes touch), in
#: import order; a module missing at the ref stays as in the tree.
SWAPPABLE = ("batches", "records", "kafka", "tables", "agents", "app")
#: Longest any one run may take (seconds).
RUN_LIMIT_S = 900.0
#: Passes of the core alone (the fastest counts).
CORE_REPEAT = 3


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


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads); 0.0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the worker's sink process, for one)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
        for child in children:
            out += [child, *descendants(child)]
    return out


def descendants_cpu(pid: int) -> dict[int, float]:
    return {child: cpu_seconds(child) for child in descendants(pid)}


def postgres_pids() -> list[int]:
    """Every postgres server process on this machine (backends come and go with connections)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@dataclass
class CpuClock:
    """CPU time the broker and Postgres spend from ``start`` on (a backend that exits before
    ``used`` is read takes its time with it; the worker's pooled connections stay)."""

    broker_pid: int
    at_start: dict[int, float] = field(default_factory=dict)
    #: Whether the clock was restarted at the current run's first record.
    at_first_record: bool = False

    def start(self) -> None:
        """Start at a run's start (counts start-up only if the run ends before its first mark
        is seen); ``start_at_first_record`` starts it again when the mark appears."""
        self.at_start = {pid: cpu_seconds(pid) for pid in (self.broker_pid, *postgres_pids())}
        self.at_first_record = False

    def start_at_first_record(self, marks: list[Path]) -> None:
        """Start again, once per run, when one of the run's first-record marks exists."""
        if not self.at_first_record and any(m.exists() for m in marks):
            self.start()
            self.at_first_record = True

    def used(self) -> dict[str, float]:
        def since(pid: int) -> float:
            return cpu_seconds(pid) - self.at_start.get(pid, 0.0)

        return {
            "broker": since(self.broker_pid),
            "postgres": sum(since(pid) for pid in postgres_pids()),
        }


def _mark(path: Path) -> None:
    """Note the wall time and this process's CPU time (the first input record's moment)."""
    path.write_text(f"{time.time()!r} {time.process_time()!r}")


def _read_mark(path: Path) -> tuple[float, float] | None:
    try:
        wall, cpu = path.read_text().split()
        return float(wall), float(cpu)
    except (OSError, ValueError):
        return None


# --- child processes: a worker with a first-record sensor, a decode-only Faust agent -----------


def _first_record_sensor(app: Any, topic: str, mark: Path) -> None:
    """Note the wall time of the first input record this process sees."""
    from faust.sensors import Sensor

    class FirstRecord(Sensor):
        seen = False

        def on_message_in(self, tp: Any, offset: int, message: Any) -> None:
            if not self.seen and tp.topic == topic:
                self.seen = True
                _mark(mark)

    app.sensors.add(FirstRecord())


def _swap_in(ref_dir: Path) -> None:
    """Import ``monitor.stream``'s swappable modules from ``ref_dir`` instead of the tree."""
    import monitor.stream as package

    for name in SWAPPABLE:
        if not (ref_dir / f"{name}.py").exists():
            continue
        full = f"monitor.stream.{name}"
        spec = importlib.util.spec_from_file_location(full, ref_dir / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
        setattr(package, name, module)


def child_worker(mark: Path, ref_dir: Path | None) -> None:
    """``monitor worker`` itself (``run_worker``), with the first-record sensor on its app."""
    if ref_dir is not None:
        _swap_in(ref_dir)
    from monitor.stream import app as app_module

    create = app_module.create_app

    def create_with_sensor(*args: Any, **kwargs: Any) -> Any:
        worker = create(*args, **kwargs)
        _first_record_sensor(worker.app, load_settings().input_topic, mark)
        return worker

    app_module.create_app = create_with_sensor  # type: ignore[assignment]
    app_module.run_worker(load_settings())


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
                _mark(done)

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


# --- the three measurements ---------------------------------------------------------------------


@dataclass
class Result:
    label: str
    encoding: str
    events: int
    records: int
    seconds: float
    #: CPU seconds over the run: "own" (the run's process or processes), "broker", "postgres".
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


async def _drain(
    bootstrap: str, topic: str, expected: int, clock: CpuClock
) -> tuple[float, float, int]:
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
                    first, first_cpu = time.perf_counter(), time.process_time()
                    clock.start()
                for message in messages:
                    events += len(decode_record(message.value or b""))
                    records += 1
        assert first is not None and events >= expected, f"floor saw {events} of {expected}"
        return time.perf_counter() - first, time.process_time() - first_cpu, records
    finally:
        await consumer.stop()


def time_core(lines: list[bytes], cfg: DetectConfig) -> tuple[float, float]:
    """Wall and CPU seconds of decode + ``detect.step`` over ``lines`` (as ``bench/core.py``)."""
    states: dict[str, SessionState] = {}
    started, started_cpu = time.perf_counter(), time.process_time()
    for line in lines:
        event = decode(line)
        states[event.session_id] = step(states.get(event.session_id), event, cfg)[0]
    return time.perf_counter() - started, time.process_time() - started_cpu


def run_core(lines: list[bytes], encoding: str, records: int) -> Result:
    """The core alone: the fastest of ``CORE_REPEAT`` passes."""
    cfg = DetectConfig()
    best = min(time_core(lines, cfg) for _ in range(CORE_REPEAT))
    return Result("core: decode + step", encoding, len(lines), records, best[0], {"own": best[1]})


def run_floor(bootstrap: str, topic: str, expected: int, encoding: str, clock: CpuClock) -> Result:
    seconds, cpu, records = asyncio.run(_drain(bootstrap, topic, expected, clock))
    cpus = {"own": cpu, **clock.used()}
    return Result("floor: aiokafka + decode", encoding, expected, records, seconds, cpus)


def run_decoder(
    bootstrap: str,
    topic: str,
    expected: int,
    records: int,
    encoding: str,
    tmp: Path,
    clock: CpuClock,
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
        clock.start()
        while (end := _read_mark(done)) is None:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"decode-only agent did not finish; see {tmp / name}.log")
            clock.start_at_first_record([mark])
            time.sleep(0.05)
        cpus = clock.used()
        start = _read_mark(mark)
        assert start is not None
    finally:
        stop_pid(proc, timeout_s=15)
    cpus["own"] = end[1] - start[1]
    return Result("faust: decode-only agent", encoding, expected, records, end[0] - start[0], cpus)


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
    clock: CpuClock,
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
        clock.start()
        # The workers' child processes (their sinks), counted from the first record on.
        children_at_first: dict[int, float] | None = None
        with psycopg.connect(dsn, autocommit=True) as conn:
            while events < target.events or flags < target.flags:
                clock.start_at_first_record(marks)
                if children_at_first is None and clock.at_first_record:
                    children_at_first = {
                        c: t for p in procs for c, t in descendants_cpu(p.pid).items()
                    }
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
        cpus = clock.used()
        ends = [cpu_seconds(p.pid) for p in procs]
        children = {c: t for p in procs for c, t in descendants_cpu(p.pid).items()}
        firsts = [_read_mark(m) for m in marks]
    finally:
        for proc in procs:
            stop_pid(proc, timeout_s=15)
    # A worker's CPU counts from its first record (start-up and the group join are left out).
    cpus["own"] = sum(e - (f[1] if f else 0.0) for e, f in zip(ends, firsts, strict=True))
    at_first = children_at_first or {}
    cpus["sinks"] = sum(t - at_first.get(c, 0.0) for c, t in children.items())
    cpus["own"] += cpus["sinks"]
    wall = end - min(f[0] for f in firsts if f is not None)
    return Result(label, encoding, target.events, target.records, wall, cpus)


# --- the run ------------------------------------------------------------------------------------


def _git_files(ref: str, into: Path) -> Path:
    root = HERE.parent.parent
    for name in SWAPPABLE:
        shown = subprocess.run(
            ["git", "show", f"{ref}:monitor/stream/{name}.py"], cwd=root, capture_output=True
        )
        if shown.returncode == 0:
            (into / f"{name}.py").write_bytes(shown.stdout)
    return into


def _flag_count(events: list[Event]) -> int:
    _, flags = collect(events, DetectConfig())
    return len({(f.session_id, f.signal, f.turn, f.key) for f in flags})


def measure(args: argparse.Namespace) -> dict[str, Any]:
    sessions = max(1, args.events // 31)  # generate_events: ~30 events a session, + incident
    events = with_incidents(generate_events(sessions, seed=7, turns=40, prefix="t"))
    target_flags = _flag_count(events)
    lines = [encode(e) for e in events]
    broker = start_tansu()
    clock = CpuClock(broker.process.pid)
    results: list[Result] = []
    try:
        with scratch_database("bench_") as db, tempfile.TemporaryDirectory() as tmpdir:
            upgrade(database_url(db))
            tmp = Path(tmpdir)
            ref_dirs = {}
            for ref in args.compare_ref:
                into = tmp / f"ref-{ref.replace('/', '_')}"
                into.mkdir()
                ref_dirs[ref] = _git_files(ref, into)
            for encoding in args.encodings:
                topic = f"bench-{encoding}-{uuid.uuid4().hex[:6]}"
                env = worker_env(broker.bootstrap, "sqlite://", "p", args.partitions,
                                 input_topic=topic)  # fmt: skip
                stats = produce_events(events, load_settings(env), batch=encoding == "batch")
                target = Target(db, len(events), stats.records, target_flags)
                print(f"# {encoding}: {len(events):,} events in {stats.records:,} records,"
                      f" {target_flags:,} flags expected", file=sys.stderr)  # fmt: skip
                n = len(events)
                results.append(run_floor(broker.bootstrap, topic, n, encoding, clock))
                results.append(run_core(lines, encoding, stats.records))
                results.append(
                    run_decoder(broker.bootstrap, topic, n, stats.records, encoding, tmp, clock)
                )
                results.append(run_workers(broker.bootstrap, topic, target, encoding, tmp,
                                           "worker", clock,
                                           partitions=args.partitions))  # fmt: skip
                for ref, ref_dir in ref_dirs.items():
                    results.append(run_workers(
                        broker.bootstrap, topic, target, encoding, tmp, f"worker @ {ref}",
                        clock, partitions=args.partitions, ref_dir=ref_dir,
                    ))  # fmt: skip
                if encoding in args.scale:
                    results.append(run_workers(broker.bootstrap, topic, target, encoding, tmp,
                                               "worker x2", clock, workers=2,
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
        ratios[f"{enc}_worker_vs_core"] = round(worker / by[(enc, "core: decode + step")], 3)
        if (enc, "worker x2") in by:
            ratios[f"{enc}_scale_out_x2"] = round(by[(enc, "worker x2")] / worker, 3)
        for ref in args.compare_ref:
            ratios[f"{enc}_worker_vs_{ref}"] = round(worker / by[(enc, f"worker @ {ref}")], 3)
    main_ratio = ratios.get("batch_worker_vs_core", next(iter(ratios.values())))
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
                "cpu_us_per_event": {k: round(v / r.events * 1e6, 1) for k, v in r.cpu.items()},
            }
            for r in results
        ],
        "ratios": ratios,
        "ratio": main_ratio,
        "targets": {"single_worker_vs_faust": 0.65, "batch_worker_vs_core": 0.5},
        "machine": machine(),
    }


def print_table(out: dict[str, Any]) -> None:
    print(f"{out['events']:,} events, {out['partitions']} partitions; {out['machine']}")
    print(f"{'':66}{'cpu us per event':^24}")
    print(f"{'records':8} {'run':26} {'records':>9} {'seconds':>8} {'events/s':>10}"
          f" {'own':>7} {'broker':>7} {'pg':>7}")  # fmt: skip
    for r in out["results"]:
        cpu = r["cpu_us_per_event"]
        print(f"{r['encoding']:8} {r['run']:26} {r['records']:>9,} {r['seconds']:>8.1f}"
              f" {r['events_per_s']:>10,} {cpu['own']:>7.1f} {cpu.get('broker', 0):>7.1f}"
              f" {cpu.get('postgres', 0):>7.1f}")  # fmt: skip
    for key, value in out["ratios"].items():
        print(f"{key:34} {value:.3f}")
    print("targets: single worker/faust >= 0.65, batch worker/core >= 0.5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--encodings", nargs="+", default=["single", "batch"],
                        choices=["single", "batch"])  # fmt: skip
    parser.add_argument("--scale", nargs="*", default=["batch"], choices=["single", "batch"],
                        help="encodings to also run with two workers")  # fmt: skip
    parser.add_argument(
        "--compare-ref", nargs="*", default=[], metavar="REF",
        help="also run the worker's stream modules from each of these git refs",
    )  # fmt: skip
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
