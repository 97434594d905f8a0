"""Fit the survival-check pair scorer on the survival corpus; print validation and test figures.

    .venv/bin/python bench/train_survival.py [--seed 0] [--out FILE]

The pairs are an item's literal (in its revised form where a revision precedes the summary)
against summary sentences: the sentence the corpus names for a ``supported`` or
``contradicted`` verdict is labelled so, every other sentence sharing a word with the item is
unrelated. Same features as the restatement scorer (``pairs.features``), fitted apart because a
summary reports ("The user wants …") where a user instructs. The thresholds are chosen on the
validation domains, end to end: the pair with the best mean F1 of dropped and inverted
items. Then every item of the held-out cases is checked end to end (``survival.check``) and
the table of verdicts is printed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import train_restatements as tr

from monitor.detect import scorer as sc
from monitor.detect import survival as sv
from monitor.detect.lang import units as un
from monitor.detect.ledger import Item, item_id
from monitor.detect.pairs import features

CLASS = {"same": 1, "contradicts": 2, "unrelated": 0}


def _item(it: dict[str, Any], after: int) -> Item:
    lit = it["literal"]
    base = Item(
        item_id(it["class"], it["turn"], lit),
        it["class"],
        it["turn"],
        it["speaker"],
        lit[:300],
        un.unit(lit[:300]),
    )
    rev = it.get("revised")
    if rev and rev["turn"] <= after and rev.get("form") != "revoked":
        cut = rev["literal"][:300]
        return Item(
            base.id,
            base.cls,
            base.turn,
            base.speaker,
            base.literal,
            base.unit,
            rev["turn"],
            cut,
            un.unit(cut),
        )
    return base


def pairs(cases: list[dict[str, Any]]) -> tuple[list[list[float]], list[int]]:
    X: list[list[float]] = []
    y: list[int] = []
    for case in cases:
        items = {it["id"]: it for it in case["items"]}
        for s in case["summaries"]:
            summary = sv.read_summary(s["text"])
            for iid, v in s["verdicts"].items():
                it = items[iid]
                if it["class"] == "reference":
                    continue
                item = _item(it, s["after_turn"])
                eh = un.heads(item.current)
                target = sv.flat(v["sentence"]) if v.get("sentence") else None
                for u, h in zip(summary.units, summary.heads, strict=True):
                    if eh.isdisjoint(h):
                        continue
                    label = "unrelated"
                    if target and (sv.flat(u.text) in target or target in sv.flat(u.text)):
                        label = "contradicts" if v["verdict"] == "contradicted" else "same"
                    X.append(features(item.current, u, sv._NO_CUES, un.SENTENCE))
                    y.append(CLASS[label])
    return X, y


def end_to_end(cases: list[dict[str, Any]], scorer: sc.Scorer) -> dict[str, Any]:
    """Every item of every summary checked as the core checks it, against the corpus verdict."""
    table: Counter[tuple[str, str]] = Counter()
    for case in cases:
        items = {it["id"]: it for it in case["items"]}
        for s in case["summaries"]:
            for iid, v in s["verdicts"].items():
                got = sv.check(
                    _item(items[iid], s["after_turn"]), sv.read_summary(s["text"]), scorer
                ).verdict
                want = v["verdict"]
                table[(want, got)] += 1
    out: dict[str, Any] = {"confusion": {f"{w}->{g}": n for (w, g), n in sorted(table.items())}}
    for verdict in ("absent", "contradicted"):
        tp = table[(verdict, verdict)]
        predicted = sum(n for (w, g), n in table.items() if g == verdict)
        actual = sum(n for (w, g), n in table.items() if w == verdict)
        out[verdict] = {
            "precision": round(tp / predicted, 3) if predicted else 1.0,
            "recall": round(tp / actual, 3) if actual else 1.0,
            "n": actual,
        }
    return out


def _f1(r: dict[str, float]) -> float:
    p, q = r["precision"], r["recall"]
    return 2 * p * q / (p + q) if p + q else 0.0


def choose_thresholds(model: sc.Model, cases: list[dict[str, Any]]) -> tuple[float, float]:
    """The thresholds with the best mean F1 of dropped and inverted items, end to end on the
    validation cases (the verdict of an item, not of a sentence pair, is what is flagged)."""
    import msgspec

    best = (-1.0, 0.5, 0.5)
    for t_same in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        for t_contra in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            scorer = sc.Scorer(
                msgspec.structs.replace(
                    model, threshold_same=t_same, threshold_contradicts=t_contra
                )
            )
            r = end_to_end(cases, scorer)
            score = (_f1(r["absent"]) + _f1(r["contradicted"])) / 2
            if score > best[0]:
                best = (score, t_same, t_contra)
    return best[1], best[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=corpus.REPO / "monitor" / "detect" / sc.SURVIVAL
    )
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    args = parser.parse_args(argv)
    cases = corpus.survival_cases()
    split = {
        k: [c for c in cases if corpus.split_of(c["domain"], survival=True) == k]
        for k in ("train", "validation", "test")
    }
    X, y = pairs(split["train"])
    clf = tr.fit(X, y, [1.0] * len(y), args.seed, args)
    provisional = sc.Scorer(tr.export(clf, X, 0.5, 0.5, {}))
    t_same, t_contra = choose_thresholds(provisional.model, split["validation"])
    meta = {
        "seed": args.seed,
        "corpus": corpus.digest(corpus.SURVIVAL),
        "cases": {k: len(v) for k, v in split.items()},
        "pairs": len(y),
        "validation": {"precision": None},
    }
    model = tr.export(clf, X, t_same, t_contra, meta)
    scorer = sc.Scorer(model)
    report = {k: end_to_end(v, scorer) for k, v in split.items()}
    meta["end_to_end"] = {k: {v: report[k][v] for v in ("absent", "contradicted")} for k in report}
    import msgspec

    args.out.write_text(
        sc.dump_model(msgspec.structs.replace(model, trained=meta)), encoding="utf-8"
    )
    print(f"pairs: train {len(y)}; thresholds same {t_same:.3f} contradicts {t_contra:.3f}")
    for k, r in report.items():
        print(
            f"{k}: dropped P {r['absent']['precision']} R {r['absent']['recall']} "
            f"(n {r['absent']['n']}); inverted P {r['contradicted']['precision']} "
            f"R {r['contradicted']['recall']} (n {r['contradicted']['n']})"
        )
        print(f"   {r['confusion']}")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
