"""Precision and recall of the restatement detector on a labelled set of message pairs.

Each line of the input is ``{"earlier", "later", "label", "category"}``. A pair is predicted
positive when ``later`` (turn 1) restates an instruction of ``earlier`` (turn 0).

    .venv/bin/python bench/restatement_eval.py [PATH] [--json] [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from monitor.detect.config import DetectConfig
from monitor.detect.restatements import find_restatements, instructions_in

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PATH = REPO / ".." / "shared" / "data" / "restatements_dev.jsonl"


def predict(earlier: str, later: str, cfg: DetectConfig) -> bool:
    return bool(find_restatements(instructions_in(earlier, 0, cfg), later, 1, cfg))


def evaluate(rows: Iterable[Mapping[str, Any]], cfg: DetectConfig) -> dict[str, Any]:
    """Overall precision/recall and per-category counts for labelled pairs."""
    per: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "tn": 0, "fn": 0})
    labels: dict[str, bool] = {}
    misses: list[dict[str, Any]] = []
    for row in rows:
        pred = predict(row["earlier"], row["later"], cfg)
        label = bool(row["label"])
        cat = str(row.get("category", "all"))
        labels[cat] = label
        outcome = ("tp" if label else "fp") if pred else ("fn" if label else "tn")
        per[cat][outcome] += 1
        if pred != label:
            misses.append(
                {
                    "id": row.get("id"),
                    "category": cat,
                    "outcome": outcome,
                    "earlier": row["earlier"],
                    "later": row["later"],
                }
            )
    total = {k: sum(c[k] for c in per.values()) for k in ("tp", "fp", "tn", "fn")}
    categories = {}
    for cat, c in sorted(per.items()):
        n = sum(c.values())
        entry: dict[str, Any] = {"label": labels[cat], "n": n, **c}
        if labels[cat]:
            entry["recall"] = c["tp"] / n
        else:
            entry["false_positive_rate"] = c["fp"] / n
            entry["accuracy"] = c["tn"] / n
        categories[cat] = entry
    predicted = total["tp"] + total["fp"]
    actual = total["tp"] + total["fn"]
    return {
        "n": sum(total.values()),
        **total,
        "precision": total["tp"] / predicted if predicted else 1.0,
        "recall": total["tp"] / actual if actual else 1.0,
        "categories": categories,
        "misses": misses,
    }


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def table(result: Mapping[str, Any]) -> str:
    lines = [f"{'category':<28} {'label':<5} {'n':>3} {'tp/tn':>5} {'fp/fn':>5}  metric"]
    for cat, c in result["categories"].items():
        if c["label"]:
            good, bad, metric = c["tp"], c["fn"], f"recall {c['recall']:.2f}"
        else:
            good, bad = c["tn"], c["fp"]
            metric = f"fp-rate {c['false_positive_rate']:.2f}  accuracy {c['accuracy']:.2f}"
        lines.append(f"{cat:<28} {c['label']!s:<5} {c['n']:>3} {good:>5} {bad:>5}  {metric}")
    lines.append(
        f"overall: n={result['n']} tp={result['tp']} fp={result['fp']} tn={result['tn']} "
        f"fn={result['fn']}  precision {result['precision']:.3f}  recall {result['recall']:.3f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--misses", action="store_true", help="list misclassified pairs")
    args = parser.parse_args(argv)
    result = evaluate(load(args.path), DetectConfig())
    if args.json:
        if not args.misses:
            result = {k: v for k, v in result.items() if k != "misses"}
        print(json.dumps(result, indent=2))
        return 0
    print(table(result))
    if args.misses:
        for m in result["misses"]:
            print(
                f"\n[{m['outcome']}] {m['category']} {m['id']}\n  E: {m['earlier']}\n"
                f"  L: {m['later']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
