"""Per-user-message cost of restatement detection as a session's instruction history grows.

Simulates the core: every user message is checked with ``find_restatements`` against the
history, then its instructions are appended and the history is capped at
``cfg.max_instructions`` (oldest dropped). Reports the cost of the messages that arrive once a
session holds 10, 100 and 1000 earlier instructions (before the cap).

    .venv/bin/python bench/restate_cost.py [--json] [--messages N] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from typing import Any

from monitor.detect.config import DetectConfig
from monitor.detect.restatements import Instruction, find_restatements, instructions_in

_VERBS = [
    "keep",
    "use",
    "run",
    "set",
    "write",
    "add",
    "move",
    "rename",
    "deploy",
    "check",
    "limit",
    "store",
    "cache",
    "send",
]
_NOUNS = [
    "parser",
    "queue",
    "bucket",
    "report",
    "schema",
    "cluster",
    "invoice",
    "template",
    "branch",
    "service",
    "index",
    "playbook",
    "budget",
    "widget",
    "module",
    "sensor",
    "episode",
    "draft",
    "layout",
    "gateway",
]
_PLACES = [
    "staging",
    "main",
    "prod",
    "dev",
    "docs",
    "backend",
    "frontend",
    "mobile",
    "nightly",
    "archive",
]


def _sentence(rng: random.Random) -> str:
    """A random sentence; the number makes repeats rare, as in real sessions."""
    verb, noun, place = rng.choice(_VERBS), rng.choice(_NOUNS), rng.choice(_PLACES)
    n = rng.randint(1, 100_000)
    shape = rng.randrange(4)
    if shape == 0:
        return f"{verb.capitalize()} the {noun} in `{place}/{noun}_{n}` at {n % 97}."
    if shape == 1:
        return f"Don't {verb} the {noun} on {place} before build {n} is ready."
    if shape == 2:
        return f"The {noun} on {place} looks fine after run {n}."
    return f"Did the {noun} {verb} finish on {place} for ticket {n}?"


def _message(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(1, 4)))


def measure(sizes: list[int], messages: int, seed: int, cfg: DetectConfig) -> dict[str, Any]:
    """Time ``messages`` user messages once the session has seen ``size`` instructions.

    Each timed message is "the next one" at that size: it is checked against the history
    and its instructions extracted (both timed, as the core does), and the history is kept at
    the snapshot so every timed message sees the same number of earlier instructions.
    """
    rng = random.Random(seed)
    rows = []
    for size in sizes:
        history: tuple[Instruction, ...] = ()
        seen = turn = 0
        while seen < size:  # grow the session the way the core does
            turn += 1
            new = instructions_in(_message(rng), turn, cfg)
            seen += len(new)
            history = (*history, *new)[-cfg.max_instructions :]
        times: list[float] = []
        found = 0
        for _ in range(messages):
            turn += 1
            text = _message(rng)
            start = time.perf_counter()
            found += len(find_restatements(history, text, turn, cfg))
            new = instructions_in(text, turn, cfg)
            _ = (*history, *new)[-cfg.max_instructions :]  # the core's append, timed too
            times.append(time.perf_counter() - start)
        times.sort()
        rows.append(
            {
                "earlier_instructions": size,
                "history_len": len(history),
                "messages": messages,
                "mean_us": statistics.fmean(times) * 1e6,
                "p50_us": times[len(times) // 2] * 1e6,
                "p95_us": times[int(len(times) * 0.95)] * 1e6,
                "max_us": times[-1] * 1e6,
                "restatements_found": found,
            }
        )
    return {"max_instructions": cfg.max_instructions, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--messages", type=int, default=2000, help="timed messages per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    result = measure([10, 100, 1000], args.messages, args.seed, DetectConfig())
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"history capped at max_instructions={result['max_instructions']}; "
        "cost = find_restatements + instructions_in per user message"
    )
    print(
        f"{'earlier':>8} {'kept':>5} {'msgs':>6} {'mean µs':>9} {'p50 µs':>8} {'p95 µs':>8} "
        f"{'max µs':>8}"
    )
    for r in result["rows"]:
        print(
            f"{r['earlier_instructions']:>8} {r['history_len']:>5} {r['messages']:>6} "
            f"{r['mean_us']:>9.1f} {r['p50_us']:>8.1f} {r['p95_us']:>8.1f} {r['max_us']:>8.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
