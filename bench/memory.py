"""State memory: RSS growth per active session, through the pure core.

Runs ``monitor.detect.step`` over N sessions of ~50 events each (default 100k sessions, 5M
events), interleaved round by round so every session is live at the end, with the states kept in
a dict as ``monitor replay`` keeps them. Events are built on the fly and dropped, so what stays
is the states (and the dict). Reports, per session:

* RSS growth (``/proc/self/statm``) from before the first event to after the last, after a GC;
* the encoded state size (``encode_state``, msgpack: what a changelog holds per session, summed
  over the parts), measured on all states after the run.

Each session sees tool calls (some repeated), tool results, user messages of realistic length
(instructions among them), assistant messages and one compaction.

    .venv/bin/python bench/memory.py [--sessions 100000] [--events-per-session 50] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from monitor.detect import DetectConfig, step
from monitor.detect.session import PARTS, SessionState, encode_part
from monitor.events import Compaction, Event, Tool

TARGET_BYTES = 10 * 1024
TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob")
MODULES = ("billing", "auth", "search", "ingest", "reports", "export")
SENTENCES = (
    "Never modify anything under /repo/{m}/migrations.",
    "Run `pytest -q tests/{m}` before every commit.",
    "Looks good, thanks.",
    "Can you explain what the retry helper in {m} does?",
    "Now add pagination to the {m} list endpoint and keep the response shape unchanged.",
    "Stay on the feature/{m}-limits branch; I will merge it myself.",
    "Please add type hints to {m}/service.py and keep every function under 40 lines.",
)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_event(rng: random.Random, s: int, turn: int, t0: datetime, n: int) -> Event:
    sid = f"session-{s:07d}"
    common: dict[str, Any] = {
        "event_id": f"{sid}-{turn}",
        "session_id": sid,
        "turn": turn,
        "ts": t0 + timedelta(seconds=turn),
        "attrs": {"agent": "claude_code", "model": "m1"},
    }
    if turn == n // 2:
        compaction = Compaction(tokens_before=170_000, tokens_after=20_000, compactor="sum-v1")
        return Event(kind="compaction", compaction=compaction, **common)
    roll = rng.random()
    if roll < 0.45:
        m = rng.choice(MODULES)
        args = {"file_path": f"/repo/{m}/f{rng.randrange(40)}.py", "limit": 200}
        tool = Tool(name=rng.choice(TOOLS), arguments=args, call_id=f"c{turn}")
        return Event(kind="tool_call", tool=tool, **common)
    if roll < 0.85:
        tool = Tool(name="Read", call_id=f"c{turn - 1}")
        return Event(kind="tool_result", tool=tool, text="x" * 200, **common)
    if roll < 0.93:
        return Event(kind="assistant_message", text="I will now update the handler.", **common)
    m = rng.choice(MODULES)
    text = " ".join(rng.choice(SENTENCES).format(m=m) for _ in range(rng.randint(1, 3)))
    return Event(kind="user_message", text=text, **common)


def run(sessions: int, per_session: int, seed: int = 1) -> dict[str, Any]:
    cfg = DetectConfig()
    rng = random.Random(seed)
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    states: dict[str, SessionState] = {}
    flags = 0
    gc.collect()
    before = rss_bytes()
    started = time.perf_counter()
    for turn in range(per_session):  # round by round: all sessions stay live
        for s in range(sessions):
            event = make_event(rng, s, turn, t0, per_session)
            state, raised = step(states.get(event.session_id), event, cfg)
            states[event.session_id] = state
            flags += len(raised)
    seconds = time.perf_counter() - started
    gc.collect()
    after = rss_bytes()
    encoded = {p: sum(len(encode_part(st, p)) for st in states.values()) for p in PARTS}
    total_encoded = sum(encoded.values())
    growth = after - before
    return {
        "sessions": len(states),
        "events": sessions * per_session,
        "flags": flags,
        "seconds": round(seconds, 1),
        "rss_before_mb": round(before / 2**20, 1),
        "rss_after_mb": round(after / 2**20, 1),
        "rss_bytes_per_session": round(growth / len(states)),
        "encoded_bytes_per_session": round(total_encoded / len(states)),
        "encoded_bytes_per_session_by_part": {
            p: round(v / len(states)) for p, v in encoded.items()
        },
        "target_bytes_per_session": TARGET_BYTES,
        "ratio": round(growth / len(states) / TARGET_BYTES, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--events-per-session", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = run(args.sessions, args.events_per_session)
    if args.json:
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
        return
    print(f"{out['sessions']:,} sessions x {args.events_per_session} events"
          f" ({out['events']:,} events, {out['flags']:,} flags, {out['seconds']}s)")  # fmt: skip
    print(f"RSS {out['rss_before_mb']} MB -> {out['rss_after_mb']} MB")
    print(f"{'RSS growth per session':32}{out['rss_bytes_per_session']:>10,} B")
    print(f"{'encoded state per session':32}{out['encoded_bytes_per_session']:>10,} B")
    for part, size in out["encoded_bytes_per_session_by_part"].items():
        print(f"{'  ' + part:32}{size:>10,} B")
    print(f"ratio RSS/target {out['ratio']:.3f} (target: <= 10 KB per session, ratio <= 1)")


if __name__ == "__main__":
    main()
