"""Cost of the survival check: one compaction with many live items and a long summary.

    .venv/bin/python bench/survival_cost.py [--items 64] [--chars 12000] [--repeat 20] [--json]

Items and summary are built from the survival corpus (its items, and its summaries joined to
the length asked), so the text is the kind the check reads. Prints the median and the worst of
``--repeat`` checks of every item, with every text memo cleared before each run (``cold``: a
new summary, whose sentences and their words have never been read) and kept (``warm``, as when
one summary is checked for many sessions' items). Only the items' own readings stay, as they
do in a session's ledger.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

from monitor.detect import survival as sv
from monitor.detect.lang import units as un
from monitor.detect.ledger import Item, item_id
from monitor.detect.restatements import cache_clear


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=64)
    p.add_argument("--chars", type=int, default=12_000)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    cases = corpus.survival_cases()
    if not cases:
        print(f"no survival corpus at {corpus.SURVIVAL}", file=sys.stderr)
        return 1
    literals = [(it["class"], it["literal"]) for c in cases for it in c["items"]][: args.items]
    items = [
        Item(item_id(k, n, t), k, n, "user", t[:300], un.unit(t[:300]))
        for n, (k, t) in enumerate(literals)
    ]
    text = ""
    for c in cases:
        for s in c["summaries"]:
            text += s["text"] + "\n\n"
            if len(text) >= args.chars:
                break
        if len(text) >= args.chars:
            break
    text = text[: args.chars]
    out = {}
    for mode in ("cold", "warm"):
        times = []
        for _ in range(args.repeat):
            if mode == "cold":
                sv.read_summary.cache_clear()
                cache_clear()  # the sentences' pieces and words, as for a summary never read
            started = time.perf_counter()
            checks = sv.check_all(items, text)
            times.append((time.perf_counter() - started) * 1000)
        out[mode] = {
            "median_ms": round(statistics.median(times), 2),
            "max_ms": round(max(times), 2),
        }
    result = {
        "items": len(items),
        "summary_chars": len(text),
        **out,
        "verdicts": {v: sum(1 for c in checks if c.verdict == v) for v in sv.VERDICTS},
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{len(items)} items against a {len(text)}-character summary: "
            f"cold median {out['cold']['median_ms']} ms (max {out['cold']['max_ms']}), "
            f"warm median {out['warm']['median_ms']} ms (max {out['warm']['max_ms']})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
