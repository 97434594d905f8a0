"""The survival check: every live ledger item against a compaction's summary text.

Each item gets one verdict:

* ``verbatim``: its literal (normalised: case, spacing, quotes, a final stop) is a substring of
  the summary, not under a negation just before it: deterministic and free;
* else the pair verdict of the item against each summary sentence that shares a word with it
  (``survival_model.json``: the restatement features, fitted on item / summary-sentence pairs):
  ``contradicted`` when a sentence says its opposite or another value (the gates of
  ``pairs.opposite`` and ``pairs.changes_value`` count too), ``supported`` when one says it again;
* ``absent`` otherwise: the summary dropped it.

A reference is checked by its name: present is verbatim; the same name with another version or
revision ("report.md rev 12" for "rev 14") is contradicted.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from monitor.detect import scorer as sc
from monitor.detect.lang import units as un
from monitor.detect.lang.normalise import normalise
from monitor.detect.lang.segment import pieces
from monitor.detect.lang.units import Cues, Unit
from monitor.detect.ledger import Item
from monitor.detect.pairs import FEATURES, changes_value, features, opposite

Verdict = Literal["verbatim", "supported", "absent", "contradicted"]
VERDICTS: Final[tuple[Verdict, ...]] = ("verbatim", "supported", "absent", "contradicted")
#: What a compaction counts per class: the verdicts, and items with no summary to check.
COUNTED: Final[tuple[str, ...]] = (*VERDICTS, "unchecked")

#: Summary sentences scored per item, the most overlapping first.
MAX_SENTENCES: Final = 6
#: How much of an item a gated summary sentence must cover to contradict it.
ALIGNED_TURNED: Final = 0.5
ALIGNED_CHANGED: Final = 0.25
#: Characters of a summary read (longer summaries are cut).
MAX_SUMMARY_CHARS: Final = 65_536
#: A summary sentence carries no message cues.
_NO_CUES: Final = Cues(
    reminder=0,
    frustration=0,
    questions=0,
    caps=0.0,
    exclaim=False,
    update=0,
    update_weak=0,
    sentences=1,
    words=0,
)
_COV_E: Final = FEATURES.index("cov_e")
_SPACE: Final = re.compile(r"\s+")
_VERSION: Final = re.compile(r"\b(?:rev(?:ision)?|v|version)\s*\.?\s*(\d+(?:\.\d+)*)", re.I)


class Check(msgspec.Struct, frozen=True, gc=False):
    """An item's verdict at one compaction, with the summary sentence behind it."""

    item: Item
    verdict: Verdict
    sentence: str = ""
    score: float = 0.0


def flat(text: str) -> str:
    """The form literals are compared in: NFKC, straight quotes, lower case, single spaces,
    no markdown emphasis or backticks, no final stop."""
    t = normalise(text).lower().replace("`", "").replace("**", "").replace("__", "")
    return _SPACE.sub(" ", t).strip().rstrip(".")


class Summary(msgspec.Struct, frozen=True, gc=False):
    """A compaction's summary, read once for all of its checks."""

    flat: str
    units: tuple[Unit, ...]
    heads: tuple[frozenset[str], ...]


@functools.lru_cache(maxsize=16)
def read_summary(text: str) -> Summary:
    text = text[:MAX_SUMMARY_CHARS]
    units = tuple(u for s, _ in pieces(text) if (u := un.unit(s)).stems)
    return Summary(flat(text), units, tuple(un.heads(u) for u in units))


_NEGATED_BEFORE: Final = re.compile(
    r"(?:\b(?:not|no|never|don't|do not|dont|without|stop|avoid|isn't|aren't|won't|cannot|can't)"
    r"(?:\s+\S+){0,2}\s*)$"
)


def contains(summary_flat: str, literal: str) -> bool:
    """Whether the literal stands in the summary as said: found, and not under a negation
    just before it ("do not keep X" does not keep X)."""
    needle = flat(literal)
    if not needle:
        return False
    at = summary_flat.find(needle)
    while at >= 0:
        if not _NEGATED_BEFORE.search(summary_flat[max(0, at - 40) : at]):
            return True
        at = summary_flat.find(needle, at + 1)
    return False


def _names(u: Unit) -> set[str]:
    return {s for s, w in zip(u.stems, u.weights, strict=True) if w >= un.NAME}


def _reference(item: Item, summary: Summary, model: sc.Scorer) -> Check:
    name = item.current_literal
    if contains(summary.flat, name):
        return Check(item, "verbatim", name, 100.0)
    if " " in name.strip():  # a reference said in words ("the run from 2024-03-02 to …")
        return _judged(item, summary, model)
    version = _VERSION.search(name)
    if version:
        base = flat(name[: version.start()])
        for u in summary.units:
            if base and base in flat(u.text):
                other = _VERSION.search(u.text)
                if other and other.group(1) != version.group(1):
                    return Check(item, "contradicted", u.text, 100.0)
                return Check(item, "supported", u.text, 100.0)
    return Check(item, "absent")


def check(item: Item, summary: Summary, model: sc.Scorer | None = None) -> Check:
    """The verdict of ``item`` (in its current, possibly revised, form) against ``summary``."""
    model = model or sc.load(sc.SURVIVAL)
    if item.cls == "reference":
        return _reference(item, summary, model)
    if contains(summary.flat, item.current_literal):
        return Check(item, "verbatim", item.current_literal, 100.0)
    return _judged(item, summary, model)


def _judged(item: Item, summary: Summary, model: sc.Scorer) -> Check:
    """The pair scorer's verdict over the summary sentences sharing a word with the item.

    A sentence that holds every name and value of the item (a path, a number, an identifier:
    at least one), covers half of it and is not gated also supports it: summaries keep the
    values of a rule while rewording the rest ("random_state=42 for every split")."""
    current = item.current
    names = _names(current)
    eh = un.heads(current)
    ranked = sorted(
        (i for i, h in enumerate(summary.heads) if not eh.isdisjoint(h)),
        key=lambda i: -len(eh & summary.heads[i]),
    )[:MAX_SENTENCES]
    best_same = (0.0, "")
    best_contra = (0.0, "")
    t_same, t_contra = model.model.threshold_same, model.model.threshold_contradicts
    for i in ranked:
        u = summary.units[i]
        x = features(current, u, _NO_CUES, un.SENTENCE)
        p_same, p_contra = model.probabilities(x)
        turned = opposite(current, u)
        changed = not turned and changes_value(current, u, _NO_CUES)
        if turned or changed:
            p_same = 0.0
            # The same item turned, or given with another value: aligned on most of it when
            # turned, on part of it (the rest is the value) when changed.
            if x[_COV_E] >= (ALIGNED_TURNED if turned else ALIGNED_CHANGED):
                p_contra = max(p_contra, t_contra)
        elif names and names <= _names(u) | set(u.stems) and x[_COV_E] >= 0.5:
            p_same = max(p_same, t_same)
        if p_contra > best_contra[0]:
            best_contra = (p_contra, u.text)
        if p_same > best_same[0]:
            best_same = (p_same, u.text)
    if best_contra[0] >= t_contra and best_contra[0] >= best_same[0]:
        return Check(item, "contradicted", best_contra[1], round(100 * best_contra[0], 1))
    if best_same[0] >= t_same:
        return Check(item, "supported", best_same[1], round(100 * best_same[0], 1))
    return Check(item, "absent")


def check_all(items: Sequence[Item], text: str, model: sc.Scorer | None = None) -> list[Check]:
    """Every item against one summary text."""
    summary = read_summary(text)
    model = model or sc.load(sc.SURVIVAL)
    return [check(i, summary, model) for i in items]
