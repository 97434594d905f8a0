"""Fit the restatement pair scorer on the corpus; print the validation and test tables.

    .venv/bin/python bench/train_restatements.py [--seed 0] [--out FILE]
    .venv/bin/python bench/train_restatements.py --seeds 0 1 2 3 4   # the spread, writes nothing
    .venv/bin/python bench/train_restatements.py --semantic  # the semantic stage's model

Needs the ``train`` extra (scikit-learn, NumPy), and with ``--semantic`` the ``semantic`` one;
the fitted model is plain JSON and inference needs no scikit-learn. The pipeline is the
detector's own: each earlier message is read with ``restatements.instructions_in``, each later
message with ``lang.units.read``, the candidate pairs come from ``restatements.pairs_to_score``
and their features from ``pairs.features``, so the model sees exactly what it will score at run
time.

Labels are per message pair, the model scores span pairs: a pair that restates (or contradicts)
has at least one span pair that does, so training takes, for each such message pair, its best
span pair (first by plain word coverage, then, for a second round, by the first model's own
probability), and every span pair of an unrelated message pair as unrelated. The message's
verdict is then its best span pair's, as in the detector.

Thresholds are chosen on the validation domains only: the lowest P(same) threshold whose
message-level precision reaches ``--precision`` (the recall that precision allows), and for
``contradicts`` the lowest whose precision among contradicting pairs reaches
``--contradicts-precision``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

from monitor.detect import scorer as sc
from monitor.detect.config import DetectConfig
from monitor.detect.lang import units as un
from monitor.detect.pairs import FEATURES
from monitor.detect.restatements import SEMANTIC_FEATURES, gated_pairs, instructions_in

CLASS_INDEX = {c: i for i, c in enumerate(sc.CLASSES)}
#: Span pairs kept per unrelated message pair (by plain coverage): long messages would
#: otherwise outweigh everything else.
MAX_NEGATIVE_SPANS = 12
#: Cross pairs per message pair: the earlier message of one pair with the later message of
#: another pair of the same domain. In a session most remembered instructions have nothing to
#: do with a new message, yet share its topic and some of its words; the written pairs are all
#: about one instruction, so these natural negatives are what teach the scorer that.
CROSS_PAIRS = 2
#: Gate flags at the end of each featurised pair (see ``featurise``).
GATES = 2


#: Two earlier messages of one domain this alike (rapidfuzz token-set ratio) give the same
#: instruction: a pair's later message may well restate the other's, so the cross pair is no
#: negative (a domain's pairs were written one by one and some share an instruction).
SAME_SUBJECT = 60


def _same_subject(a: str, b: str) -> bool:
    from rapidfuzz import fuzz

    return a == b or fuzz.token_set_ratio(a.lower(), b.lower()) >= SAME_SUBJECT


def with_cross_pairs(rows: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """``rows`` plus ``CROSS_PAIRS`` cross pairs per row (category ``cross_pair``, unrelated)."""
    import random

    rng = random.Random(seed)
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_domain[r["domain"]].append(r)
    out = list(rows)
    for r in rows:
        pool = [o for o in by_domain[r["domain"]] if not _same_subject(o["earlier"], r["earlier"])]
        for other in rng.sample(pool, min(CROSS_PAIRS, len(pool))):
            out.append(
                {
                    "id": f"{other['id']}x{r['id']}",
                    "domain": r["domain"],
                    "category": "cross_pair",
                    "earlier": other["earlier"],
                    "later": r["later"],
                }
            )
    return out


def featurise(rows: list[dict[str, Any]], cfg: DetectConfig) -> list[list[list[float]]]:
    """Per message pair, the feature vectors of its candidate span pairs. Each ends in two more
    elements, cut off before the model sees them: ``restatements.gated_pairs``' ``changed`` and
    ``gated``, the hard gates the detector reads. Either makes its P(same) 0 at run time,
    whatever the model says.

    Only the second keeps a pair out of training as a restatement: the run-time gate on a
    changed value is a safety rule (the same instruction with another value is an update), but
    it also reads spellings of one value as two ("512Mi" / "512 MiB"), and a pair written as a
    restatement is one; the model learns from the labels, the gate guards its output."""
    out = []
    for row in rows:
        history = instructions_in(row["earlier"], 0, cfg)
        m = un.read(row["later"][: cfg.max_text_chars])
        out.append(
            [[*g.x, float(g.changed), float(g.gated)] for g in gated_pairs(history, m, 1, cfg)]
        )
    return out


def _coverage(x: list[float]) -> float:
    f = FEATURES
    return 0.5 * (x[f.index("cov_e")] + x[f.index("cov_l")]) + 0.2 * x[f.index("ratio")]


def instances(
    rows: list[dict[str, Any]], feats: list[list[list[float]]], model: Any = None
) -> tuple[list[list[float]], list[int], list[float]]:
    X: list[list[float]] = []
    y: list[int] = []
    w: list[float] = []
    for row, xs in zip(rows, feats, strict=True):
        if not xs:
            continue
        cls = CLASS_INDEX[corpus.verdict_of(row["category"])]
        if cls == CLASS_INDEX["unrelated"]:
            ranked = sorted(xs, key=_coverage, reverse=True)[:MAX_NEGATIVE_SPANS]
            for x in ranked:
                X.append(x[:-GATES])
                y.append(cls)
                w.append(1.0 / len(ranked) ** 0.5)
            continue
        if cls == CLASS_INDEX["same"]:
            xs = [x for x in xs if not x[-1]] or xs  # a pair turned or thin never restates
        if model is None:
            best = max(xs, key=_coverage)
        else:
            probs = model.predict_proba([x[:-GATES] for x in xs])
            best = xs[max(range(len(xs)), key=lambda i: probs[i][cls])]
        X.append(best[:-GATES])
        y.append(cls)
        w.append(1.0)
    return X, y, w


def fit(
    X: list[list[float]], y: list[int], w: list[float], seed: int, args: argparse.Namespace
) -> Any:
    from sklearn.ensemble import GradientBoostingClassifier

    clf = GradientBoostingClassifier(
        n_estimators=args.trees,
        max_depth=args.depth,
        learning_rate=args.learning_rate,
        subsample=0.8,
        min_samples_leaf=8,
        random_state=seed,
    )
    clf.fit(X, y, sample_weight=w)
    return clf


def export(
    clf: Any,
    X: list[list[float]],
    t_same: float,
    t_contra: float,
    meta: dict[str, Any],
    names: tuple[str, ...] = FEATURES,
) -> sc.Model:
    import numpy as np

    trees: list[tuple[int, tuple[tuple[int, float, int, int, float], ...]]] = []
    n_classes = clf.estimators_.shape[1]
    for stage in clf.estimators_:
        for k in range(n_classes):
            t = stage[k].tree_
            nodes = []
            for i in range(t.node_count):
                leaf = t.children_left[i] == -1
                nodes.append(
                    (
                        -1 if leaf else int(t.feature[i]),
                        0.0 if leaf else float(t.threshold[i]),
                        int(t.children_left[i]),
                        int(t.children_right[i]),
                        float(t.value[i].ravel()[0]) if leaf else 0.0,
                    )
                )
            trees.append((k, tuple(nodes)))
    sample = np.asarray(X[:1], dtype=float)
    raw = clf.decision_function(sample)[0]
    partial = np.zeros(n_classes)
    for stage in clf.estimators_:
        for k in range(n_classes):
            partial[k] += stage[k].predict(sample)[0]
    init = tuple(float(r - clf.learning_rate * p) for r, p in zip(raw, partial, strict=True))
    classes = tuple(sc.CLASSES[int(c)] for c in clf.classes_)
    model = sc.Model(
        kind="gbt",
        features=names,
        classes=classes,
        threshold_same=t_same,
        threshold_contradicts=t_contra,
        init=init,
        learning_rate=float(clf.learning_rate),
        trees=tuple(trees),
        trained=meta,
    )
    # The exported trees must give sklearn's own probabilities. sklearn compares features as
    # float32, so the check does too: a float64 value within rounding of a split may fall the
    # other way, a difference of no consequence that would fail an exact comparison.
    check = sc.Scorer(model)
    for x in X[:200]:
        want = clf.predict_proba([x])[0]
        got = check.probabilities([float(v) for v in np.asarray(x, dtype=np.float32)])
        assert abs(got[0] - want[classes.index("same")]) < 1e-6, (got, want)
    return model


def message_scores(model: sc.Scorer, feats: list[list[list[float]]]) -> list[tuple[float, float]]:
    """Per message pair: (best P(same), best P(contradicts)) over its span pairs."""
    out = []
    for xs in feats:
        ps = [model.probabilities(x[:-GATES]) for x in xs]
        same = [0.0 if x[-1] or x[-2] else p[0] for x, p in zip(xs, ps, strict=True)]
        out.append((max(same, default=0.0), max((p[1] for p in ps), default=0.0)))
    return out


def choose_threshold(scores: list[float], labels: list[bool], precision: float) -> float:
    """The lowest threshold whose precision reaches ``precision`` (most recall it allows)."""
    candidates_ = sorted(set(scores), reverse=True)
    best = 1.0
    tp = fp = 0
    order = sorted(zip(scores, labels, strict=True), key=lambda t: -t[0])
    i = 0
    for t in candidates_:
        while i < len(order) and order[i][0] >= t:
            tp += order[i][1]
            fp += not order[i][1]
            i += 1
        if tp and tp / (tp + fp) >= precision:
            best = t
    return best


def table(
    rows: list[dict[str, Any]], scores: list[tuple[float, float]], t_same: float
) -> dict[str, Any]:
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for row, (p_same, _) in zip(rows, scores, strict=True):
        pred = p_same >= t_same
        label = corpus.verdict_of(row["category"]) == "same"
        per[row["category"]][
            "tp" if pred and label else "fp" if pred else "fn" if label else "tn"
        ] += 1
    tot = Counter()
    for c in per.values():
        tot.update(c)
    flagged = tot["tp"] + tot["fp"]
    actual = tot["tp"] + tot["fn"]
    return {
        "precision": tot["tp"] / flagged if flagged else 1.0,
        "recall": tot["tp"] / actual if actual else 1.0,
        "n": sum(tot.values()),
        "flips_flagged": per["negation_flip"]["fp"],
        "updates_flagged": per["update"]["fp"],
        "categories": {
            cat: {
                "n": sum(per[cat].values()),
                "right": per[cat]["tp"] + per[cat]["tn"],
                "wrong": per[cat]["fp"] + per[cat]["fn"],
            }
            for cat in corpus.CATEGORIES
            if cat in per
        },
    }


def contradiction_figures(
    rows: list[dict[str, Any]], scores: list[tuple[float, float]], t_same: float, t_contra: float
) -> dict[str, float]:
    tp = fp = fn = 0
    for row, (p_same, p_contra) in zip(rows, scores, strict=True):
        pred = p_same < t_same and p_contra >= t_contra
        label = corpus.verdict_of(row["category"]) == "contradicts"
        tp += pred and label
        fp += pred and not label
        fn += label and not pred
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


def print_table(name: str, t: dict[str, Any]) -> None:
    print(
        f"\n{name}: n={t['n']} precision {t['precision']:.3f} recall {t['recall']:.3f} "
        f"flips flagged {t['flips_flagged']} updates flagged {t['updates_flagged']}"
    )
    for cat, c in t["categories"].items():
        print(f"  {cat:<28} {c['n']:>4} right {c['right']:>4} wrong {c['wrong']:>3}")


def train_once(
    seed: int, args: argparse.Namespace, data: dict[str, Any]
) -> tuple[sc.Model, dict[str, Any]]:
    train_rows, train_feats = data["train"]
    X, y, w = instances(train_rows, train_feats)
    clf = fit(X, y, w, seed, args)
    for _ in range(args.rounds - 1):
        X, y, w = instances(train_rows, train_feats, clf)
        clf = fit(X, y, w, seed, args)
    names = SEMANTIC_FEATURES if args.semantic else FEATURES
    provisional = export(clf, X, 0.5, 0.5, {}, names)
    scorer = sc.Scorer(provisional)
    val_rows, val_feats = data["validation"]
    val_scores = message_scores(scorer, val_feats)
    t_same = choose_threshold(
        [s[0] for s in val_scores],
        [corpus.verdict_of(r["category"]) == "same" for r in val_rows],
        args.precision,
    )
    contra_rows = [
        (s[1], corpus.verdict_of(r["category"]) == "contradicts")
        for r, s in zip(val_rows, val_scores, strict=True)
        if s[0] < t_same
    ]
    t_contra = choose_threshold(
        [c[0] for c in contra_rows], [c[1] for c in contra_rows], args.contradicts_precision
    )
    report: dict[str, Any] = {"seed": seed, "thresholds": {"same": t_same, "contradicts": t_contra}}
    for split in ("train", "validation", "test"):
        rows, feats = data[split]
        s = message_scores(scorer, feats)
        report[split] = table(rows, s, t_same)
        report[split]["contradicts"] = contradiction_figures(rows, s, t_same, t_contra)
        report[split]["no_candidate"] = sum(
            1
            for xs, r in zip(feats, rows, strict=True)
            if not xs and corpus.verdict_of(r["category"]) == "same"
        )
    meta = {
        "seed": seed,
        "corpus": corpus.digest(corpus.RESTATEMENTS),
        "pairs": {k: len(v[0]) for k, v in data.items()},
        "trees": args.trees,
        "depth": args.depth,
        "semantic": bool(args.semantic),
        "validation": {
            k: report["validation"][k] for k in ("precision", "recall", "flips_flagged")
        },
    }
    model = export(clf, X, t_same, t_contra, meta, names)
    return model, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--seeds", type=int, nargs="+", help="train once per seed, print the spread, write nothing"
    )
    parser.add_argument("--out", type=Path, help="default: the shipped model's file")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="fit the semantic stage's model (one more feature, the cosine; needs the extra)",
    )
    parser.add_argument("--trees", type=int, default=150)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--precision", type=float, default=0.97)
    parser.add_argument("--contradicts-precision", type=float, default=0.9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cfg = DetectConfig(semantic=args.semantic)
    if args.out is None:
        shipped = sc.RESTATEMENT_SEMANTIC if args.semantic else sc.RESTATEMENT
        args.out = corpus.REPO / "monitor" / "detect" / shipped
    if args.semantic:
        from monitor.detect import semantic

        semantic.encoder().limit = 1 << 20  # every span of the corpus, once
    rows = corpus.restatement_pairs()
    if not rows:
        print(f"no corpus at {corpus.RESTATEMENTS}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    data: dict[str, Any] = {}
    for split in ("train", "validation", "test"):
        part = with_cross_pairs([r for r in rows if corpus.split_of(r["domain"]) == split], 17)
        data[split] = (part, featurise(part, cfg))
    print(
        f"featurised {len(rows)} pairs in {time.perf_counter() - started:.1f} s "
        f"({', '.join(f'{k} {len(v[0])}' for k, v in data.items())})",
        file=sys.stderr,
    )
    if args.seeds:
        reports = [train_once(s, args, data)[1] for s in args.seeds]
        for split in ("validation", "test"):
            ps = [r[split]["precision"] for r in reports]
            rs = [r[split]["recall"] for r in reports]
            fl = [r[split]["flips_flagged"] for r in reports]
            print(
                f"{split}: precision {min(ps):.3f}-{max(ps):.3f} "
                f"recall {min(rs):.3f}-{max(rs):.3f} flips {min(fl)}-{max(fl)}"
            )
        if args.json:
            print(json.dumps(reports, indent=1))
        return 0
    model, report = train_once(args.seed, args, data)
    args.out.write_text(sc.dump_model(model), encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(
            f"thresholds: same {report['thresholds']['same']:.3f} "
            f"contradicts {report['thresholds']['contradicts']:.3f}"
        )
        for split in ("train", "validation", "test"):
            print_table(split, report[split])
            print(
                f"  contradicts: {report[split]['contradicts']}; "
                f"positives with no candidate: {report[split]['no_candidate']}"
            )
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
