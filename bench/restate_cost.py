"""Per-user-message cost of restatement detection, on messages that are all different.

Simulates the core: every user message is checked with ``find_restatements`` against the
history, then its instructions are appended and the history is capped at
``cfg.max_instructions`` (oldest dropped). Messages are generated from a wide vocabulary with
random ids, numbers, paths and names, and mix instructions, questions, acknowledgements and
status talk; about one in ten restates an earlier instruction of the session (verbatim, with a
reminder cue, or as a fragment), so the matching path is exercised too.

Two timings per history size:

* ``warm``: as the core runs, with every memo in place (the per-message analysis shared by
  ``find_restatements`` and ``instructions_in``, and the per-word memos);
* ``cold``: every memo cleared before each message (outside the timed span), so each message
  pays for the analysis of every one of its words, twice (find, then extract).

    .venv/bin/python bench/restate_cost.py [--json] [--messages N] [--seed S] [--semantic]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import time
from typing import Any

from monitor.detect.config import DetectConfig
from monitor.detect.restatements import (
    Instruction,
    cache_clear,
    find_restatements,
    instructions_in,
)

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
    "build",
    "test",
    "lint",
    "format",
    "merge",
    "rebase",
    "review",
    "document",
    "profile",
    "index",
    "migrate",
    "archive",
    "compress",
    "encrypt",
    "sign",
    "tag",
    "publish",
    "render",
    "export",
    "import",
    "validate",
    "refactor",
    "split",
    "pin",
    "bump",
    "retry",
    "log",
    "trace",
    "schedule",
    "backup",
    "restore",
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
    "endpoint",
    "handler",
    "worker",
    "migration",
    "fixture",
    "snapshot",
    "dashboard",
    "pipeline",
    "manifest",
    "changelog",
    "readme",
    "chart",
    "palette",
    "font",
    "thumbnail",
    "caption",
    "footnote",
    "abstract",
    "chapter",
    "bibliography",
    "itinerary",
    "recipe",
    "invoice",
    "ledger",
    "contract",
    "memo",
    "newsletter",
    "campaign",
    "subject",
    "banner",
    "tooltip",
    "modal",
    "sidebar",
    "navbar",
    "checkout",
    "cart",
    "session",
    "token",
    "cookie",
    "header",
    "payload",
    "webhook",
    "cron",
    "job",
    "daemon",
    "container",
    "image",
    "volume",
    "secret",
    "certificate",
    "replica",
    "shard",
    "partition",
    "topic",
    "consumer",
    "producer",
    "broker",
    "table",
    "column",
    "view",
    "trigger",
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
    "sandbox",
    "preview",
    "canary",
    "release",
    "hotfix",
    "vendor",
    "tools",
    "infra",
    "eu-west-1",
    "us-east-2",
    "ap-south-1",
]
_ADJ = [
    "short",
    "plain",
    "formal",
    "neutral",
    "stable",
    "small",
    "fast",
    "strict",
    "quiet",
    "private",
    "public",
    "readonly",
    "sorted",
    "typed",
    "lazy",
    "atomic",
    "idempotent",
]
_UNITS = ["lines", "MB", "ms", "seconds", "words", "pages", "characters", "requests", "%"]
_NAMES = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Ferreira",
    "Kowalski",
    "Haddad",
    "Novak",
    "Brennan",
    "Ito",
]
_EXT = ["py", "ts", "go", "rs", "sql", "yaml", "md", "json", "toml"]


def _ident(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8)))


def _path(rng: random.Random) -> str:
    parts = [rng.choice(_PLACES), rng.choice(_NOUNS), f"{_ident(rng)}_{rng.randint(1, 999)}"]
    return "/".join(parts[: rng.randint(2, 3)]) + "." + rng.choice(_EXT)


def _instruction(rng: random.Random) -> str:
    v, n, n2, p = rng.choice(_VERBS), rng.choice(_NOUNS), rng.choice(_NOUNS), rng.choice(_PLACES)
    num, unit = rng.randint(2, 5000), rng.choice(_UNITS)
    shape = rng.randrange(9)
    if shape == 0:
        return f"{v.capitalize()} the {n} in `{_path(rng)}` before the {n2} ships."
    if shape == 1:
        return f"Don't {v} the {n} on {p} until ticket {rng.choice('ABCDEFGH')}-{num} is closed."
    if shape == 2:
        return f"Keep every {n} under {num} {unit}."
    if shape == 3:
        return f"Never {v} anything under {_path(rng).rsplit('.', 1)[0]}/."
    if shape == 4:
        return (
            f"Use the {rng.choice(_ADJ)} {n} for the {n2} on {p}, not the {rng.choice(_ADJ)} one."
        )
    if shape == 5:
        return f"Always {v} the {n} with `{_ident(rng)} --{_ident(rng)}` first."
    if shape == 6:
        return f"Ask {rng.choice(_NAMES)} before you {v} the {n} {rng.choice(['today', 'again'])}."
    if shape == 7:
        return f"Please {v} the {n} and the {n2} on port {rng.randint(1024, 65535)}."
    return f"Make the {n} {rng.choice(_ADJ)} and {rng.choice(_ADJ)} in {p}."


def _other(rng: random.Random) -> str:
    n, p, num = rng.choice(_NOUNS), rng.choice(_PLACES), rng.randint(1, 100_000)
    shape = rng.randrange(6)
    if shape == 0:
        return f"Did the {n} {rng.choice(_VERBS)} finish on {p} for run {num}?"
    if shape == 1:
        return f"The {n} on {p} looks fine after build {num}."
    if shape == 2:
        return rng.choice(["Thanks!", "Looks good, carry on.", "ok", "Nice, that works."])
    if shape == 3:
        return f"What does {_ident(rng)}() in `{_path(rng)}` return?"
    if shape == 4:
        return f"Can you explain why the {n} test {num} failed?"
    return f"FYI {rng.choice(_NAMES)} merged {num} changes into {p} yesterday."


def _restated(rng: random.Random, earlier: str) -> str:
    shape = rng.randrange(3)
    if shape == 0:
        return earlier
    if shape == 1:
        return f"As I said, {earlier[0].lower()}{earlier[1:]}"
    return earlier.rstrip(".").lower() + " again!!"


def _message(rng: random.Random, said: list[str]) -> str:
    """1-3 sentences; about one message in ten restates something said earlier."""
    out: list[str] = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if said and roll < 0.04:
            out.append(_restated(rng, rng.choice(said)))
        elif roll < 0.6:
            out.append(_instruction(rng))
            said.append(out[-1])
        else:
            out.append(_other(rng))
    del said[:-200]
    return " ".join(out)


def measure(
    sizes: list[int], messages: int, seed: int, cfg: DetectConfig, cold: bool
) -> dict[str, Any]:
    """Time ``messages`` user messages once the session has seen ``size`` instructions.

    Each timed message is "the next one" at that size: it is checked against the history and
    its instructions extracted (both timed, as the core does), and the history is kept at the
    snapshot so every timed message sees the same number of earlier instructions.
    """
    rng = random.Random(seed)
    rows = []
    for size in sizes:
        history: tuple[Instruction, ...] = ()
        said: list[str] = []
        seen = turn = 0
        while seen < size:  # grow the session the way the core does
            turn += 1
            new = instructions_in(_message(rng, said), turn, cfg)
            seen += len(new)
            history = (*history, *new)[-cfg.max_instructions :]
        times: list[float] = []
        found = chars = 0
        for _ in range(messages):
            turn += 1
            text = _message(rng, said)
            chars += len(text)
            if cold:
                cache_clear()
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
                "mean_chars": chars / messages,
                "mean_us": statistics.fmean(times) * 1e6,
                "p50_us": times[len(times) // 2] * 1e6,
                "p95_us": times[int(len(times) * 0.95)] * 1e6,
                "max_us": times[-1] * 1e6,
                "restatements_found": found,
            }
        )
    return {
        "max_instructions": cfg.max_instructions,
        "memos": "cold" if cold else "warm",
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--messages", type=int, default=2000, help="timed messages per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="with the semantic stage (the extra): warm only, the history's vectors memoised "
        "as in a running worker",
    )
    args = parser.parse_args(argv)
    cfg = DetectConfig(semantic=args.semantic)
    results = [
        measure([10, 64, 1000], args.messages, args.seed, cfg, cold)
        for cold in ((False,) if args.semantic else (False, True))
    ]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        f"history capped at max_instructions={cfg.max_instructions}; "
        "cost = find_restatements + instructions_in per user message"
    )
    print(
        f"{'memos':>5} {'earlier':>8} {'kept':>5} {'msgs':>6} {'chars':>6} {'mean µs':>8} "
        f"{'p50 µs':>7} {'p95 µs':>7} {'max µs':>8} {'found':>6}"
    )
    for result in results:
        for r in result["rows"]:
            print(
                f"{result['memos']:>5} {r['earlier_instructions']:>8} {r['history_len']:>5} "
                f"{r['messages']:>6} {r['mean_chars']:>6.0f} {r['mean_us']:>8.1f} "
                f"{r['p50_us']:>7.1f} {r['p95_us']:>7.1f} {r['max_us']:>8.1f} "
                f"{r['restatements_found']:>6}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
