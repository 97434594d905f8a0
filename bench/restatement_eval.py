"""Precision and recall of the restatement detector on labelled message pairs, through the core.

Each pair becomes a session of three events, as ``monitor replay`` would see it: the earlier
user message (turn 0), a compaction (turn 1) and the later user message (turn 2). The pair is
predicted to restate when ``detect.step`` raises a ``restated_instruction`` flag on the later
message.

    .venv/bin/python bench/restatement_eval.py [PATH ...] [--json] [--markdown]
    .venv/bin/python bench/restatement_eval.py --split validation   # a split of bench/corpus
    .venv/bin/python bench/restatement_eval.py --semantic           # with the semantic stage

With no PATH, the shared dev set (``../shared/data/restatements_dev.jsonl``) is read: an external
check that was never fitted on and never used to choose a threshold.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

from monitor.detect import detect_all
from monitor.detect.config import DetectConfig
from monitor.events import Compaction, Event

_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def events_of(n: int, row: Mapping[str, Any]) -> list[Event]:
    sid = f"pair-{n}"
    return [
        Event(
            event_id=f"{sid}-0",
            session_id=sid,
            turn=0,
            ts=_T0,
            kind="user_message",
            text=str(row["earlier"]),
        ),
        Event(
            event_id=f"{sid}-1",
            session_id=sid,
            turn=1,
            ts=_T0 + timedelta(seconds=1),
            kind="compaction",
            compaction=Compaction(compactor="eval"),
        ),
        Event(
            event_id=f"{sid}-2",
            session_id=sid,
            turn=2,
            ts=_T0 + timedelta(seconds=2),
            kind="user_message",
            text=str(row["later"]),
        ),
    ]


def evaluate(rows: list[Mapping[str, Any]], cfg: DetectConfig | None = None) -> dict[str, Any]:
    """Overall precision/recall, negation flips flagged, and per-category counts."""
    events = [e for n, row in enumerate(rows) for e in events_of(n, row)]
    flagged = {
        int(f.session_id.split("-")[1])
        for f in detect_all(events, cfg)
        if f.signal == "restated_instruction"
    }
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for n, row in enumerate(rows):
        label = bool(row["label"])
        pred = n in flagged
        per[str(row.get("category", "all"))][
            ("tp" if label else "fp") if pred else ("fn" if label else "tn")
        ] += 1
    total: Counter[str] = Counter()
    for c in per.values():
        total.update(c)
    predicted = total["tp"] + total["fp"]
    actual = total["tp"] + total["fn"]
    return {
        "n": len(rows),
        "precision": total["tp"] / predicted if predicted else 1.0,
        "recall": total["tp"] / actual if actual else 1.0,
        "flips_flagged": per["negation_flip"]["fp"],
        "updates_flagged": per["update"]["fp"],
        "categories": {
            cat: {
                "n": sum(c.values()),
                "label": bool(c["tp"] + c["fn"]),
                "right": c["tp"] + c["tn"],
                "wrong": c["fp"] + c["fn"],
            }
            for cat, c in sorted(per.items(), key=lambda kv: _order(kv[0]))
        },
    }


def _order(cat: str) -> tuple[int, str]:
    return (corpus.CATEGORIES.index(cat) if cat in corpus.CATEGORIES else 99, cat)


def markdown(name: str, r: Mapping[str, Any]) -> str:
    lines = [f"| {name} | n | right | wrong | metric |", "|---|---|---|---|---|"]
    for cat, c in r["categories"].items():
        share = c["right"] / c["n"] if c["n"] else 0.0
        metric = f"recall {share:.2f}" if c["label"] else f"false-positive rate {1 - share:.2f}"
        lines.append(f"| {cat} | {c['n']} | {c['right']} | {c['wrong']} | {metric} |")
    lines.append(
        f"| **overall** | {r['n']} | | | **precision {r['precision']:.3f}, recall "
        f"{r['recall']:.3f}, flips flagged {r['flips_flagged']}** |"
    )
    return "\n".join(lines)


def load(paths: Iterable[Path]) -> list[dict[str, Any]]:
    return corpus.read_jsonl(paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--split", choices=("train", "validation", "test"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--semantic", action="store_true", help="with the semantic stage (needs the extra)"
    )
    args = parser.parse_args(argv)
    if args.split:
        rows = [r for r in corpus.restatement_pairs() if corpus.split_of(r["domain"]) == args.split]
        name = f"corpus {args.split}"
    else:
        paths = args.paths or [corpus.DEV_SET]
        missing = [p for p in paths if not p.exists()]
        if missing:
            print(f"error: no such file: {missing[0]}", file=sys.stderr)
            return 1
        rows = load(paths)
        name = ", ".join(p.name for p in paths)
    result = evaluate(rows, DetectConfig(semantic=args.semantic))
    if args.json:
        print(json.dumps(result, indent=1))
    elif args.markdown:
        print(markdown(name, result))
    else:
        print(markdown(name, result).replace("|", " ").replace("---", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
