"""The survival report: per compactor version and item class, what its summaries kept.

Pure functions over counts the store holds (``sessions.survival``: compactor -> class ->
verdict -> items, and the flags per compactor). For each compactor and class: items checked,
verbatim, supported, absent, contradicted; survival = (verbatim + supported) / checked against
the class's gate; any contradiction fails a compactor (contradictions have no budget).

Comparing a candidate compactor with an incumbent (``--against``), each row gets the
difference of the two proportions with a 95% interval (Newcombe's hybrid score interval, which
behaves at small counts and at 0 or 1), so that noise is not read as a regression: a row
*blocks* the candidate when the interval lies wholly on the worse side; a gate both miss,
without the candidate being worse, is a backlog (``unmet_by_both``), not a verdict on the change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

FORMAT: Final = "survival-report.v1"
CLASSES: Final = ("constraint", "commitment", "open_question", "reference")
VERDICTS: Final = ("verbatim", "supported", "absent", "contradicted", "unchecked")
#: Share of items of each class that must survive a compaction (the fixture gates).
GATES: Final = {"constraint": 0.95, "commitment": 0.90, "open_question": 0.95, "reference": 0.98}
#: Standard normal quantile of a two-sided 95% interval.
_Z: Final = 1.959963984540054

Counts = dict[str, dict[str, dict[str, int]]]


def merge(parts: Iterable[Mapping[str, Mapping[str, Mapping[str, int]]]]) -> Counts:
    """Sum per-session survival counts into compactor -> class -> verdict -> items."""
    out: Counts = {}
    for part in parts:
        for compactor, classes in (part or {}).items():
            c = out.setdefault(compactor, {})
            for cls, verdicts in classes.items():
                v = c.setdefault(cls, dict.fromkeys(VERDICTS, 0))
                for verdict, n in verdicts.items():
                    v[verdict] = v.get(verdict, 0) + int(n)
    return out


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (95%)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + _Z * _Z / n
    centre = (p + _Z * _Z / (2 * n)) / denom
    half = _Z * math.sqrt(p * (1 - p) / n + _Z * _Z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def difference(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float, float]:
    """p1 - p2 with Newcombe's 95% interval (method 10: hybrid of two Wilson intervals)."""
    p1 = k1 / n1 if n1 else 0.0
    p2 = k2 / n2 if n2 else 0.0
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (d, lo, hi)


def _row(cls: str, v: Mapping[str, int], gates: Mapping[str, float] = GATES) -> dict[str, Any]:
    checked = sum(v.get(k, 0) for k in ("verbatim", "supported", "absent", "contradicted"))
    kept = v.get("verbatim", 0) + v.get("supported", 0)
    survival = kept / checked if checked else None
    return {
        "class": cls,
        "checked": checked,
        **{k: int(v.get(k, 0)) for k in VERDICTS},
        "survival": round(survival, 4) if survival is not None else None,
        "gate": gates[cls],
        "meets_gate": survival is not None and survival >= gates[cls],
    }


def build(
    counts: Counts,
    downstream: Mapping[str, Mapping[str, int]],
    compactions: Mapping[str, int],
    *,
    compactor: str | None = None,
    against: str | None = None,
    since: str | None = None,
    gates: Mapping[str, float] = GATES,
) -> dict[str, Any]:
    """The report document (``schemas/survival-report.v1.json``); ``gates`` overrides the
    share of each class that must survive."""
    gates = {**GATES, **gates}
    names = sorted(set(counts) | set(compactions))
    if compactor is not None:
        names = [n for n in names if n in (compactor, against)]
    rows = []
    for name in names:
        classes = counts.get(name, {})
        n = compactions.get(name, 0)
        signals = dict(downstream.get(name, {}))
        rows.append(
            {
                "compactor": name,
                "compactions": n,
                "contradictions": sum(classes.get(c, {}).get("contradicted", 0) for c in CLASSES),
                "downstream": {
                    **signals,
                    "per_compaction": {k: round(v / n, 4) for k, v in signals.items()} if n else {},
                },
                "classes": [_row(c, classes.get(c, {}), gates) for c in CLASSES],
            }
        )
    doc: dict[str, Any] = {"format": FORMAT, "since": since, "compactors": rows, "comparison": None}
    if compactor is not None and against is not None:
        doc["comparison"] = compare(counts, compactor, against, gates)
    return doc


def compare(
    counts: Counts, candidate: str, incumbent: str, gates: Mapping[str, float] = GATES
) -> dict[str, Any]:
    """Which rows the candidate makes worse than the incumbent, beyond noise."""
    gates = {**GATES, **gates}
    rows = []
    for cls in CLASSES:
        a = _row(cls, counts.get(candidate, {}).get(cls, {}), gates)
        b = _row(cls, counts.get(incumbent, {}).get(cls, {}), gates)
        kept_a = a["verbatim"] + a["supported"]
        kept_b = b["verbatim"] + b["supported"]
        d, lo, hi = difference(kept_a, a["checked"], kept_b, b["checked"])
        worse = hi < 0  # survival fell, beyond noise
        rows.append(
            _comparison(cls, "survival", a, b, d, lo, hi, worse, a["checked"], b["checked"])
        )
        d, lo, hi = difference(a["contradicted"], a["checked"], b["contradicted"], b["checked"])
        worse = lo > 0  # contradictions rose, beyond noise
        rows.append(
            _comparison(
                cls, "contradiction_rate", a, b, d, lo, hi, worse, a["checked"], b["checked"]
            )
        )
    return {
        "candidate": candidate,
        "incumbent": incumbent,
        "rows": rows,
        "blocks": [f"{r['class']} {r['metric']}" for r in rows if r["blocks"]],
        "unmet_by_both": [f"{r['class']} {r['metric']}" for r in rows if r["unmet_by_both"]],
    }


def _comparison(
    cls: str,
    metric: str,
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    d: float,
    lo: float,
    hi: float,
    worse: bool,
    n_a: int,
    n_b: int,
) -> dict[str, Any]:
    if metric == "survival":
        value_a, value_b = a["survival"], b["survival"]
        missed = not a["meets_gate"] and not b["meets_gate"] and n_a > 0 and n_b > 0
    else:
        value_a = round(a["contradicted"] / n_a, 4) if n_a else None
        value_b = round(b["contradicted"] / n_b, 4) if n_b else None
        missed = a["contradicted"] > 0 and b["contradicted"] > 0
    # Worse beyond noise blocks, whatever the gate; a gate both miss without the candidate
    # being worse is the backlog the incumbent already had.
    unmet = missed and not worse
    return {
        "class": cls,
        "metric": metric,
        "candidate": value_a,
        "incumbent": value_b,
        "difference": round(d, 4),
        "interval": [round(lo, 4), round(hi, 4)],
        "verdict": "worse"
        if worse
        else ("better" if (hi < 0 if metric != "survival" else lo > 0) else "no_difference"),
        "blocks": worse,
        "unmet_by_both": unmet,
    }


def parse_gates(specs: Iterable[str]) -> dict[str, float]:
    """``CLASS=SHARE`` overrides (``constraint=0.97``); a bad one raises ValueError."""
    out: dict[str, float] = {}
    for spec in specs:
        cls, sep, value = spec.partition("=")
        if not sep or cls not in GATES:
            raise ValueError(f"--gate {spec!r}: use CLASS=SHARE, CLASS one of {', '.join(CLASSES)}")
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"--gate {spec!r}: the share must be a number from 0 to 1")
        out[cls] = share
    return out


def text_lines(doc: Mapping[str, Any]) -> list[str]:
    """The report as a terminal table."""
    out = []
    for c in doc["compactors"]:
        out.append(
            f"{c['compactor']}: {c['compactions']} compactions, {c['contradictions']} "
            f"contradictions, downstream {c['downstream']}"
        )
        for r in c["classes"]:
            surv = "-" if r["survival"] is None else f"{r['survival']:.3f}"
            mark = "ok" if r["meets_gate"] else ("-" if r["checked"] == 0 else "BELOW GATE")
            out.append(
                f"  {r['class']:<14} checked {r['checked']:>5}  verbatim {r['verbatim']:>5}  "
                f"supported {r['supported']:>5}  absent {r['absent']:>4}  contradicted "
                f"{r['contradicted']:>3}  survival {surv} / {r['gate']:.2f}  {mark}"
            )
    cmp = doc.get("comparison")
    if cmp:
        out.append(f"{cmp['candidate']} against {cmp['incumbent']}:")
        for r in cmp["rows"]:
            flag = "BLOCKS" if r["blocks"] else ("backlog" if r["unmet_by_both"] else "")
            out.append(
                f"  {r['class']:<14} {r['metric']:<18} {r['candidate']} vs {r['incumbent']}  "
                f"diff {r['difference']:+.3f} [{r['interval'][0]:+.3f}, {r['interval'][1]:+.3f}]  "
                f"{r['verdict']} {flag}".rstrip()
            )
    return out
