"""Core throughput: the detector core against the cost of merely decoding the same lines.

Generates a log (default 1M events: mostly tool calls and results, user messages of realistic
length, a compaction every ~150 turns per session, thousands of sessions interleaved), then times
in the same run:

* floor: decoding every line with the fastest JSON decoder available (msgspec, untyped);
* core: ``monitor.events.decode`` (typed, validated) + ``detect.step`` for every line.

With ``--by-kind``, one more pass times every step on its own and reports the core's time by
event kind (each step then also pays for two clock reads, ~0.1 us).

    python bench/core.py [--events 1000000] [--sessions 5000] [--repeat 3] [--by-kind] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from monitor.detect import DetectConfig, step
from monitor.detect.session import SessionState
from monitor.events import decode

#: The core's share of the msgspec decode floor aimed at (issue 20; 1/3 before it).
TARGET_RATIO = 0.08
TOOLS = ["Read", "Bash", "Grep", "Edit", "Glob", "WebFetch"]
SENTENCES = [
    "Never modify anything under /repo/{m}/migrations.",
    "Run `pytest -q tests/{m}` before every commit.",
    "Looks good, thanks.",
    "Can you explain what the retry helper in {m} does?",
    "Now add pagination to the {m} list endpoint and keep the response shape unchanged.",
    "Stay on the feature/{m}-limits branch; I will merge it myself.",
    "Use port 8080 for the dev server, not 3000.",
    "Please add type hints to {m}/service.py and keep every function under 40 lines.",
]
MODULES = ["billing", "auth", "search", "ingest", "reports", "export"]


def generate(n_events: int, n_sessions: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    turns = [0] * n_sessions
    next_compaction = [rng.randint(100, 200) for _ in range(n_sessions)]
    history: list[list[dict[str, Any]]] = [[] for _ in range(n_sessions)]
    enc = msgspec.json.Encoder()
    lines: list[bytes] = []
    for i in range(n_events):
        s = rng.randrange(n_sessions)
        turns[s] += 1
        turn = turns[s]
        base = {
            "event_id": f"s{s}-{i}",
            "session_id": f"session-{s:06d}",
            "turn": turn,
            "ts": (t0 + timedelta(seconds=i // 50)).isoformat(),
        }
        roll = rng.random()
        if turn >= next_compaction[s]:
            next_compaction[s] = turn + rng.randint(100, 200)
            ev = {
                **base,
                "kind": "compaction",
                "compaction": {
                    "trigger": "auto",
                    "tokens_before": 170000,
                    "tokens_after": 20000,
                    "compactor": "sum-v1.4",
                },
            }
        elif roll < 0.45:
            if history[s] and rng.random() < 0.1:
                args = rng.choice(history[s])  # some repeats, some after compactions
            else:
                m = rng.choice(MODULES)
                args = {
                    "file_path": f"/repo/{m}/f{rng.randrange(500)}.py",
                    "offset": rng.randrange(1, 400),
                    "limit": 200,
                }
                history[s] = (history[s] + [args])[-50:]
            ev = {
                **base,
                "kind": "tool_call",
                "tool": {"name": rng.choice(TOOLS), "arguments": args, "call_id": f"c{i}"},
            }
        elif roll < 0.87:
            ev = {
                **base,
                "kind": "tool_result",
                "tool": {"name": "Read", "call_id": f"c{i - 1}"},
                "text": "x" * 200,
            }
        elif roll < 0.95:
            ev = {**base, "kind": "assistant_message", "text": "I will now update the handler."}
        else:
            m = rng.choice(MODULES)
            text = " ".join(rng.choice(SENTENCES).format(m=m) for _ in range(rng.randint(1, 3)))
            ev = {**base, "kind": "user_message", "text": text}
        lines.append(enc.encode(ev))
    return lines


def time_floor(lines: list[bytes]) -> float:
    dec = msgspec.json.Decoder()
    start = time.perf_counter()
    for line in lines:
        dec.decode(line)
    return time.perf_counter() - start


def time_core(lines: list[bytes], cfg: DetectConfig) -> tuple[float, int]:
    states: dict[str, SessionState] = {}
    flags = 0
    start = time.perf_counter()
    for line in lines:
        event = decode(line)
        state, raised = step(states.get(event.session_id), event, cfg)
        states[event.session_id] = state
        flags += len(raised)
    return time.perf_counter() - start, flags


def time_by_kind(lines: list[bytes], cfg: DetectConfig) -> dict[str, dict[str, float]]:
    """Events, share of events, us per event and share of the core's time, by event kind."""
    states: dict[str, SessionState] = {}
    spent: dict[str, float] = {}
    seen: Counter[str] = Counter()
    clock = time.perf_counter
    for line in lines:
        started = clock()
        event = decode(line)
        state, _ = step(states.get(event.session_id), event, cfg)
        states[event.session_id] = state
        spent[event.kind] = spent.get(event.kind, 0.0) + clock() - started
        seen[event.kind] += 1
    total_s, total_n = sum(spent.values()), sum(seen.values())
    return {
        kind: {
            "events": seen[kind],
            "event_share": round(seen[kind] / total_n, 4),
            "us_per_event": round(spent[kind] / seen[kind] * 1e6, 2),
            "time_share": round(spent[kind] / total_s, 4),
        }
        for kind in sorted(spent, key=spent.__getitem__, reverse=True)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N, alternating")
    parser.add_argument("--by-kind", action="store_true", help="also time the core by event kind")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    t = time.perf_counter()
    lines = generate(args.events, args.sessions)
    gen_s = time.perf_counter() - t
    cfg = DetectConfig()
    floors, cores, flags = [], [], 0
    for _ in range(args.repeat):  # alternate so drift on a noisy machine hits both alike
        floors.append(time_floor(lines))
        elapsed, flags = time_core(lines, cfg)
        cores.append(elapsed)
    n = len(lines)
    floor_eps, core_eps = n / min(floors), n / min(cores)
    result = {
        "events": n,
        "sessions": args.sessions,
        "flags": flags,
        "floor_events_per_s": round(floor_eps),
        "core_events_per_s": round(core_eps),
        "ratio": round(core_eps / floor_eps, 3),
        "target_ratio": TARGET_RATIO,
        "generate_s": round(gen_s, 1),
        "python": platform.python_version(),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
    }
    if args.by_kind:
        result["by_kind"] = time_by_kind(lines, cfg)
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    print(f"{n:,} events, {args.sessions:,} sessions, {flags:,} flags (best of {args.repeat})")
    print(f"{'':28}{'events/s':>14}")
    print(f"{'floor: msgspec decode':28}{floor_eps:>14,.0f}")
    print(f"{'core: decode + detect':28}{core_eps:>14,.0f}")
    print(f"ratio core/floor {core_eps / floor_eps:.3f} (target >= {TARGET_RATIO})")
    if args.by_kind:
        print(f"\n{'kind':20}{'events':>10}{'of events':>11}{'us/event':>10}{'of time':>9}")
        for kind, row in result["by_kind"].items():
            print(f"{kind:20}{row['events']:>10,}{row['event_share']:>11.1%}"
                  f"{row['us_per_event']:>10.2f}{row['time_share']:>9.1%}")  # fmt: skip


if __name__ == "__main__":
    main()
