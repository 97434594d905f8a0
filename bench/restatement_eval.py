"""Precision and recall of the restatement detector on a labelled set of message pairs.

Each line of the input is ``{"earlier", "later", "label", "category"}``. A pair is predicted
positive when ``later`` (turn 1) restates an instruction of ``earlier`` (turn 0).

    .venv/bin/python bench/restatement_eval.py [PATH] [--json] [--misses]

``--snapshot FILE`` writes every output of the detector (instructions and restatements, with
scores and cues) on the dev set, the held-out set and a few hundred generated session messages;
``--compare FILE`` checks the current code gives exactly the same: the regression check for
changes meant to be speed-only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from monitor.detect.config import DetectConfig
from monitor.detect.restatements import find_restatements, instructions_in

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PATH = REPO / ".." / "shared" / "data" / "restatements_dev.jsonl"
HELD_OUT = REPO / "tests" / "detect" / "heldout_restatements.jsonl"


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


def outputs(cfg: DetectConfig, sessions: int = 4, messages: int = 150) -> dict[str, Any]:
    """Everything the detector says on the labelled sets and on generated sessions."""
    sys.path.insert(0, str(REPO / "bench"))
    import random

    import restate_cost  # the generator of varied session messages

    def run(history: tuple[Any, ...], text: str, turn: int) -> tuple[Any, Any]:
        found = find_restatements(history, text, turn, cfg)
        return msgspec.to_builtins(found), msgspec.to_builtins(instructions_in(text, turn, cfg))

    out: dict[str, Any] = {}
    for name, path in (("dev", DEFAULT_PATH), ("held_out", HELD_OUT)):
        if path.exists():
            out[name] = [
                run(instructions_in(r["earlier"], 0, cfg), r["later"], 1) for r in load(path)
            ]
    for s in range(sessions):
        rng, said = random.Random(s), list[str]()
        history: tuple[Any, ...] = ()
        got = []
        for turn in range(messages):
            text = restate_cost._message(rng, said)
            found, new = run(history, text, turn)
            got.append((text, found, new))
            history = (*history, *instructions_in(text, turn, cfg))[-cfg.max_instructions :]
        out[f"session{s}"] = got
    return out


def compare(path: Path, cfg: DetectConfig) -> int:
    """Print where the current outputs differ from a snapshot; 0 when identical."""
    want = json.loads(path.read_text(encoding="utf-8"))
    got = json.loads(json.dumps(outputs(cfg)))
    diffs = 0
    for name in sorted(want.keys() | got.keys()):
        a, b = want.get(name, []), got.get(name, [])
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                diffs += 1
                if diffs <= 10:
                    print(f"{name}[{i}]\n  was: {x}\n  now: {y}")
        if len(a) != len(b):
            diffs += 1
            print(f"{name}: {len(a)} items, now {len(b)}")
    total = sum(len(v) for v in got.values())
    print(f"{diffs} of {total} outputs differ")
    return 1 if diffs else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--misses", action="store_true", help="list misclassified pairs")
    parser.add_argument("--snapshot", type=Path, help="write all outputs to this file")
    parser.add_argument("--compare", type=Path, help="compare all outputs with this snapshot")
    args = parser.parse_args(argv)
    if args.snapshot:
        args.snapshot.write_text(json.dumps(outputs(DetectConfig())), encoding="utf-8")
        return 0
    if args.compare:
        return compare(args.compare, DetectConfig())
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
