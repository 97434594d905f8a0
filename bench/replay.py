"""Whole-process replay: ``monitor replay FILE`` into a fresh SQLite file, against a plain
stdlib pass over the same file, timed in one run.

Each repetition runs, as separate processes and alternating so drift on a noisy machine hits
both alike:

* replay: ``python -m monitor replay FILE --db sqlite:///<fresh file> --no-progress`` (start-up,
  imports, the schema migration, reading, detection and the writes: what a user waits for);
* stdlib: ``python -c`` reading the file with ``gzip`` and ``json.loads`` on every line, in text
  mode and in binary mode; the faster of the two is the reference.

The ratio is the reference's time over the replay's (best of ``--repeat`` each). Target (issue
20): the replay within 2x of the reference, i.e. a ratio >= 0.5. ``--phases`` also times the
replay's parts in this process, to say where its time goes.

    .venv/bin/python bench/replay.py [FILE] [--repeat 5] [--phases] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILE = ROOT / "examples" / "sessions.jsonl.gz"
TARGET_RATIO = 0.5

_STDLIB = """
import gzip, json, sys
with gzip.open(sys.argv[1], {mode!r}) as lines:
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            pass
"""


def _timed(args: list[str], ok: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    elapsed = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(args[:4])} … exited {done.returncode}")
    return elapsed


def run_replay(path: Path, tmp: Path, i: int) -> float:
    db = tmp / f"replay-{i}.db"
    command = [sys.executable, "-m", "monitor", "replay", str(path), "--no-progress"]
    # 3: finished with lines skipped (the examples hold two bad lines on purpose).
    return _timed([*command, "--db", f"sqlite:///{db}"], ok=(0, 3))


def run_stdlib(path: Path, mode: str) -> float:
    return _timed([sys.executable, "-c", _STDLIB.format(mode=mode), str(path)])


def phases(path: Path, tmp: Path) -> dict[str, float]:
    """The replay's parts as ``monitor replay`` runs them, timed in this process (imports count
    only if not yet loaded)."""
    out: dict[str, float] = {}
    started = time.perf_counter()
    from monitor.store.db import create_sqlite, make_engine, make_sessionmaker
    from monitor.store.sink import StoreSink

    out["import store (sqlalchemy)"] = time.perf_counter() - started
    from monitor.adapters import expand, read_located
    from monitor.config import load_settings
    from monitor.replay import Replay

    url = f"sqlite:///{tmp / 'phases.db'}"
    t = time.perf_counter()
    engine = make_engine(url)
    create_sqlite(engine)  # what replay does for a new SQLite file (an existing one is migrated)
    sink = StoreSink(make_sessionmaker(engine))
    out["schema (new SQLite file)"] = time.perf_counter() - t
    t = time.perf_counter()
    items = list(read_located(list(expand([str(path)]))))
    out["read + decode"] = time.perf_counter() - t
    t = time.perf_counter()
    replay = Replay(cfg=load_settings({}).detect_config(), on_flags=sink.add).run_located(items)
    out["detect"] = time.perf_counter() - t
    t = time.perf_counter()
    sink.close(
        replay.flagged_metas(), replay.flag_times, replay.session_sources(), replay.session_items()
    )
    out["writes"] = time.perf_counter() - t
    return {k: round(v, 3) for k, v in out.items()}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    path = Path(args.file).resolve()
    replays: list[float] = []
    texts: list[float] = []
    binaries: list[float] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for i in range(args.repeat):
            replays.append(run_replay(path, tmp, i))
            texts.append(run_stdlib(path, "rt"))
            binaries.append(run_stdlib(path, "rb"))
        extra = {"phases_s": phases(path, tmp)} if args.phases else {}
    reference = min(min(texts), min(binaries))
    replay = min(replays)
    return {
        "file": str(path),
        "bytes": os.path.getsize(path),
        "replay_s": round(replay, 3),
        "stdlib_text_s": round(min(texts), 3),
        "stdlib_binary_s": round(min(binaries), 3),
        "all_replay_s": [round(x, 3) for x in replays],
        "ratio": round(reference / replay, 3),
        "target_ratio": TARGET_RATIO,
        **extra,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT_FILE))
    parser.add_argument("--repeat", type=int, default=5, help="best of N, alternating")
    parser.add_argument("--phases", action="store_true", help="also time the replay's parts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = measure(args)
    if args.json:
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
        return
    print(f"{out['file']} ({out['bytes']:,} bytes), best of {args.repeat}")
    print(f"{'monitor replay (whole process)':36}{out['replay_s']:>8.3f} s")
    print(f"{'stdlib gzip + json.loads, text':36}{out['stdlib_text_s']:>8.3f} s")
    print(f"{'stdlib gzip + json.loads, binary':36}{out['stdlib_binary_s']:>8.3f} s")
    print(f"ratio stdlib/replay {out['ratio']:.3f} (target >= {TARGET_RATIO})")
    for name, seconds in out.get("phases_s", {}).items():
        print(f"  {name:34}{seconds:>8.3f} s")


if __name__ == "__main__":
    main()
