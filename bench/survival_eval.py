"""The survival check end to end, through the core, on the survival corpus.

    .venv/bin/python bench/survival_eval.py [--split test] [--json]

Each (case, summary) becomes a session, as ``monitor replay`` would see it: the case's messages
up to the summary's point, then a compaction event carrying the summary text. ``detect.step``
builds the ledger from the messages and checks it at the compaction; a ``dropped_item`` flag
should stand for each item the corpus marks absent, an ``inverted_item`` flag for each one it
marks contradicted, matched on (session, compaction turn, item turn), as the review checks it.
Extraction errors count: an item the ledger missed is a miss, an item it made up and then
found absent is a false flag.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

from monitor.detect import DetectConfig, detect_all
from monitor.events import Compaction, Event

_T0 = datetime(2026, 11, 30, tzinfo=UTC)


def events(case: dict[str, Any], summary: dict[str, Any]) -> list[Event]:
    sid = f"{case['id']}/{summary['id']}"
    out = []
    for m in case["messages"]:
        if m["turn"] > summary["after_turn"]:
            break
        kind = "user_message" if m["role"] == "user" else "assistant_message"
        out.append(
            Event(
                event_id=f"{sid}:{m['turn']}",
                session_id=sid,
                turn=m["turn"],
                ts=_T0 + timedelta(minutes=m["turn"]),
                kind=kind,
                text=m["text"],
            )
        )
    turn = summary["after_turn"] + 1
    out.append(
        Event(
            event_id=f"{sid}:c",
            session_id=sid,
            turn=turn,
            ts=_T0 + timedelta(minutes=turn),
            kind="compaction",
            text=summary["text"],
            compaction=Compaction(compactor=summary["style"]),
        )
    )
    return out


def evaluate(cases: list[dict[str, Any]]) -> dict[str, Any]:
    want: dict[str, set[tuple[str, int, int]]] = {"dropped_item": set(), "inverted_item": set()}
    evs: list[Event] = []
    for case in cases:
        items = {it["id"]: it for it in case["items"]}
        for s in case["summaries"]:
            sid = f"{case['id']}/{s['id']}"
            turn = s["after_turn"] + 1
            evs.extend(events(case, s))
            for iid, v in s["verdicts"].items():
                signal = {"absent": "dropped_item", "contradicted": "inverted_item"}.get(
                    v["verdict"]
                )
                if signal:
                    want[signal].add((sid, turn, items[iid]["turn"]))
    got: dict[str, set[tuple[str, int, int]]] = {"dropped_item": set(), "inverted_item": set()}
    for f in detect_all(evs, DetectConfig(survival=True)):
        if f.signal in got:
            got[f.signal].add((f.session_id, f.turn, f.original_turn))
    out: dict[str, Any] = {"sessions": sum(len(c["summaries"]) for c in cases)}
    for signal in got:
        tp = len(got[signal] & want[signal])
        out[signal] = {
            "flags": len(got[signal]),
            "expected": len(want[signal]),
            "precision": round(tp / len(got[signal]), 3) if got[signal] else 1.0,
            "recall": round(tp / len(want[signal]), 3) if want[signal] else 1.0,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=("train", "validation", "test", "all"), default="test")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    cases = [
        c
        for c in corpus.survival_cases()
        if args.split == "all" or corpus.split_of(c["domain"], survival=True) == args.split
    ]
    if not cases:
        print(f"no survival cases for {args.split}", file=sys.stderr)
        return 1
    result = evaluate(cases)
    if args.json:
        print(json.dumps(result))
    else:
        for signal in ("dropped_item", "inverted_item"):
            r = result[signal]
            print(
                f"{args.split}: {signal} precision {r['precision']} recall {r['recall']} "
                f"({r['flags']} flags, {r['expected']} expected)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
