"""The survival check: every live ledger item against a compaction's summary text.

Each item gets one verdict:

* ``verbatim``: its literal (normalised: case, spacing, quotes, a final stop) is a substring of
  the summary, not under a negation just before it: deterministic and free;
* else the pair verdict of the item against each summary sentence that shares a word with it
  (``survival_model.json``: the restatement features, fitted on item / summary-sentence pairs):
  ``supported`` when a sentence says it again, ``contradicted`` when one says otherwise: the
  scorer's verdict, or one of the contradictions English marks plainly (``_contradiction``:
  the item negated in nearly its own words, one of its numbers given another value in the same
  slot, a revised item stated in its former form, an open question reported as decided);
* ``absent`` otherwise: the summary dropped it.

The restatement detector's hard gates are not used here: a summary reports in its own words
("No views" for "don't put a view in front of it") and names neighbouring values, so a turned
polarity or a changed name alone is no evidence of a contradiction in a summary sentence.

A reference is checked by its name: present is verbatim; the same name with another version or
revision ("report.md rev 12" for "rev 14") is contradicted.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from monitor.detect import scorer as sc
from monitor.detect.lang import units as un
from monitor.detect.lang.normalise import normalise
from monitor.detect.lang.quantities import other_value
from monitor.detect.lang.segment import pieces_of_normalised
from monitor.detect.lang.units import Cues, Unit
from monitor.detect.ledger import Item, bare
from monitor.detect.pairs import FEATURES, features, opposite

Verdict = Literal["verbatim", "supported", "absent", "contradicted"]
#: Why a verdict is ``contradicted`` (``_contradiction``; ``scored``: the scorer alone).
Contradiction = Literal["negated", "other_value", "stale", "settled", "scored", "version"]
VERDICTS: Final[tuple[Verdict, ...]] = ("verbatim", "supported", "absent", "contradicted")
#: What a compaction counts per class: the verdicts, and items with no summary to check.
COUNTED: Final[tuple[str, ...]] = (*VERDICTS, "unchecked")

#: Summary sentences scored per item, the most overlapping first.
MAX_SENTENCES: Final = 6
#: How much of an item (and of the sentence) a turned sentence must cover to negate it:
#: nearly all of both, the item said again with its predicate turned.
ALIGNED_NEGATED: Final = 0.9
ALIGNED_NEGATED_L: Final = 0.75
#: How much of an item a sentence giving one of its numbers another value must cover.
ALIGNED_CHANGED: Final = 0.25
#: How surely a sentence must state a revised item's former form to call it stale: more than
#: the scorer's ``same`` threshold, since "stale" claims a contradiction. Chosen on the
#: validation domains (0.4 equal to the ``same`` threshold there, 0.5 lost a right inversion).
STALE_FORMER: Final = 0.4
#: How much of an open question a sentence reporting a decision must cover.
ALIGNED_SETTLED: Final = 0.25
#: How much of an open question a summary sentence must hold, and the question of the sentence,
#: to report it decided without saying so ("Staging keeps its own database" for "should
#: staging keep its own database?"); chosen on the validation domains (0.5 to 0.8 tried; 0.2
#: to 0.4 of the sentence gave the same figures there).
ALIGNED_DECLARED: Final = 0.7
DECLARED_SHARE: Final = 0.2
DECLARED_MIN_WORDS: Final = 4
#: How much of an open question a summary line that marks it open ("waiting on legal", "to
#: be decided", "A or B?") must hold to carry it: summaries name the matter in a few words.
#: The validation domains gave the same figures from 0.2 to 0.45 and lost a right flag below;
#: 0.25 was the best on the training domains.
ALIGNED_OPEN: Final = 0.25
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
_COV_L: Final = FEATURES.index("cov_l")
#: A decision reported, and the words that say a matter is still open despite one.
_SETTLED: Final = re.compile(
    r"\b(?:decided|decision made|agreed|confirmed|settled|chose|chosen|signed off|approved|"
    r"adopted|went with|picked|opted|resolved|going with|stays|kept as|left as|ruled out|"
    r"rejected|not being)\b",
    re.IGNORECASE,
)
_STILL_OPEN: Final = re.compile(
    r"\b(?:whether|waiting|waits|pending|open|undecided|tbd|to be decided|not yet|unresolved|"
    r"vs\.?|or|whatever|asking|ask|to check|checking)\b|\?",
    re.IGNORECASE,
)
_VERSION: Final = re.compile(r"\b(?:rev(?:ision)?|v|version)\s*\.?\s*(\d+(?:\.\d+)*)", re.I)


class Check(msgspec.Struct, frozen=True, gc=False):
    """An item's verdict at one compaction, with the summary sentence behind it."""

    item: Item
    verdict: Verdict
    sentence: str = ""
    score: float = 0.0
    #: For ``contradicted``: why (``Contradiction``); empty otherwise.
    reason: str = ""


def flat(text: str) -> str:
    """The form literals are compared in: NFKC, straight quotes, lower case, single spaces,
    no markdown emphasis or backticks, no final stop."""
    return _flattened(normalise(text))


def _flattened(body: str) -> str:
    """``flat`` of a normalised text. Its spaces are made single by splitting at each run of
    them and joining with one (the runs ``\\s+`` matches, as ``str.split`` reads the same
    characters as spaces): a regular expression's substitution over a long summary costs more
    than the rest."""
    t = body.lower().replace("`", "").replace("**", "").replace("__", "")
    return " ".join(t.split()).rstrip(".")


class Summary(msgspec.Struct, frozen=True, gc=False):
    """A compaction's summary, read once for all of its checks."""

    flat: str
    units: tuple[Unit, ...]
    heads: tuple[frozenset[str], ...]
    #: The line each unit was cut from (a bullet, a sentence): "they get a weight of 1 -
    #: settled with Hannah" reports a decision in a clause beside the answer.
    lines: tuple[str, ...] = ()
    #: Each look-up key with the units holding it, in order (``holders``): an item finds the
    #: units it shares a key with through its own few keys, not by testing every unit.
    holding: dict[str, tuple[int, ...]] = msgspec.field(default_factory=dict)


def holders(heads: Sequence[frozenset[str]]) -> dict[str, tuple[int, ...]]:
    """Each look-up key of ``heads`` with the indices of the sets holding it, ascending."""
    out: dict[str, list[int]] = {}
    for i, h in enumerate(heads):
        for k in h:
            out.setdefault(k, []).append(i)
    return {k: tuple(v) for k, v in out.items()}


#: Words a summary's label may have ("Speeders:", "Breach notification:", "Key decisions:").
LABEL_WORDS: Final = 3


@functools.lru_cache(maxsize=16)
def read_summary(text: str) -> Summary:
    """The summary's sentences and clauses. A short label before a colon is read with what
    follows it ("Speeders: drop anything under 3 minutes"): on its own, "Speeders" would
    match every item that names speeders, whatever the rule says."""
    text = text[:MAX_SUMMARY_CHARS]
    body = normalise(text)
    spans: list[str] = []
    label = ""
    for s, _ in pieces_of_normalised(body):
        if label:
            s, label = f"{label}: {s}", ""
        elif len(s.split()) <= LABEL_WORDS and _labels(body, s):
            label = s
            continue
        spans.append(s)
    if label:
        spans.append(label)
    units = tuple(u for s in spans if (u := un.unit(s)).stems)
    lines: list[str] = []
    at = 0  # the pieces come in order: each line is looked for from the last one found
    for u in units:
        line, at = _line_of(body, u.text, at)
        lines.append(line)
    heads = tuple(un.heads(u) for u in units)
    return Summary(_flattened(body), units, heads, tuple(lines), holders(heads))


_LABEL_END: Final = re.compile(r"[*_`]{0,2}:")


def _labels(body: str, span: str) -> bool:
    """Whether ``span`` stands in the summary as a label, before a colon."""
    at = body.find(span)
    while at >= 0:
        if _LABEL_END.match(body, at + len(span)):
            return True
        at = body.find(span, at + 1)
    return False


def _line_of(body: str, span: str, since: int) -> tuple[str, int]:
    """The line of ``body`` that holds ``span`` (looked for from ``since`` first), and where."""
    needle = span.split(": ", 1)[-1][:40]
    at = body.find(needle, since)
    if at < 0:
        at = body.find(needle)
        if at < 0:
            return span, since
    start = body.rfind("\n", 0, at) + 1
    end = body.find("\n", at)
    return body[start : end if end >= 0 else len(body)], at


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
    """A name is kept when the summary names it, whatever it says of it: "no edits to
    dags/load.py" keeps the file in view (what is said of it is a constraint's matter), and
    a path named as its file beside its folder ("internal/auth (token.go, …)") is kept in
    other words."""
    name = item.current_literal
    if (needle := flat(name)) and needle in summary.flat:
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
                    return Check(item, "contradicted", u.text, 100.0, "version")
                return Check(item, "supported", u.text, 100.0)
    if line := _path_in_parts(needle, summary):
        return Check(item, "supported", line, 100.0)
    return Check(item, "absent")


#: A path the summary may name in parts: a folder, then a file name with an extension.
_PATH: Final = re.compile(r"(?:[\w.-]+/)+([\w-]+\.[a-z0-9]{1,5})")


def _path_in_parts(needle: str, summary: Summary) -> str:
    """The summary line that names a path's file and, before it, its folder: the way a
    summary lists files under their package ("internal/ratelimit (limiter.go + …)")."""
    m = _PATH.fullmatch(needle)
    if not m:
        return ""
    folder = needle[: m.start(1)].rstrip("/")
    if m.group(1) not in summary.flat or folder not in summary.flat:
        return ""
    # the folder whole, then within 80 characters the file name whole
    pattern = re.compile(
        rf"(?<![\w/.-]){re.escape(folder)}/?(?![\w.-]).{{0,80}}?"
        rf"(?<![\w/.-]){re.escape(m.group(1))}(?![\w-])"
    )
    for line in summary.lines:
        if pattern.search(flat(line)):
            return line
    return ""


def check(item: Item, summary: Summary, model: sc.Scorer | None = None) -> Check:
    """The verdict of ``item`` (in its current, possibly revised, form) against ``summary``."""
    model = model or sc.load(sc.SURVIVAL)
    if item.cls == "reference":
        return _reference(item, summary, model)
    if contains(summary.flat, item.current_literal):
        return Check(item, "verbatim", item.current_literal, 100.0)
    return _judged(item, summary, model)


def _judged(item: Item, summary: Summary, model: sc.Scorer) -> Check:
    """The pair scorer's verdict over the summary sentences sharing a word with the item,
    with the contradictions English marks plainly (``_contradiction``) forced.

    A sentence that holds every name and value of the item (a path, a number, an identifier:
    at least one), covers half of it and is not turned also supports it: summaries keep the
    values of a rule while rewording the rest ("random_state=42 for every split"). So does a
    sentence that states a revised rule in its former words with the values the revision
    brought ("Timeout 45 s (was 30)" for "make it 45" of "keep the timeout at 30 s"), and a
    line that names an open question's matter and marks it open ("retry policy: waiting on
    ops")."""
    current = item.current
    names = _names(current)
    ranked = _ranked(un.heads(current), summary)
    fresh = _fresh_values(item)
    best_same = (0.0, "")
    best_contra = (0.0, "", "")
    t_same, t_contra = model.model.threshold_same, model.model.threshold_contradicts
    revised = _revision_stated(item, summary)
    for i in ranked:
        u = summary.units[i]
        x = features(current, u, _NO_CUES, un.SENTENCE)
        p_same, p_contra = model.probabilities(x)
        turned = opposite(current, u)
        line = summary.lines[i] if summary.lines else u.text
        why = _contradiction(item, u, x, turned, p_same, model, line, revised)
        if why:
            p_same = 0.0
            p_contra = max(p_contra, t_contra)
        elif not turned and (
            (names and names <= _names(u) | set(u.stems) and x[_COV_E] >= 0.5)
            or (fresh and fresh <= set(u.values) and _restates_former(item, u))
            or (
                item.cls == "open_question"
                and x[_COV_E] >= ALIGNED_OPEN
                and _STILL_OPEN.search(line) is not None
            )
        ):
            p_same = max(p_same, t_same)
        if p_contra > best_contra[0]:
            best_contra = (p_contra, u.text, why or "scored")
        if p_same > best_same[0]:
            best_same = (p_same, u.text)
    if best_contra[0] >= t_contra and best_contra[0] >= best_same[0]:
        score = round(100 * best_contra[0], 1)
        return Check(item, "contradicted", best_contra[1], score, best_contra[2])
    if best_same[0] >= t_same:
        return Check(item, "supported", best_same[1], round(100 * best_same[0], 1))
    return Check(item, "absent")


def _ranked(keys: frozenset[str], summary: Summary) -> list[int]:
    """The ``MAX_SENTENCES`` summary units sharing most look-up keys with ``keys`` (at least
    one), the earlier first among equals: each key's holders counted, so a unit sharing none
    costs nothing."""
    holding = summary.holding if summary.holding or not summary.heads else holders(summary.heads)
    shared = Counter(i for k in keys for i in holding.get(k, ()))
    return sorted(shared, key=lambda i: (-shared[i], i))[:MAX_SENTENCES]


def _contradiction(
    item: Item,
    u: Unit,
    x: Sequence[float],
    turned: bool,
    p_same: float,
    model: sc.Scorer,
    line: str = "",
    revised: bool = False,
) -> Contradiction | None:
    """Why summary sentence ``u`` contradicts the item, when English says so plainly
    (``x``: the pair's features; ``turned``: ``pairs.opposite`` of the pair).

    * ``negated``: the item said again with its predicate turned, in nearly the same words
      (a summary's own phrasing of a rule, "No views" for "don't add views", reads as turned
      too often to trust at less);
    * ``other_value``: one of its numbers given with another value in the same slot
      (``quantities.other_value``);
    * ``stale``: a revised item that the sentence states in its former form: nearer the
      former wording than the current, not the current, and without the revision's own values,
      which no other sentence gives either (``revised``: "Price: $169, was $179" states the
      revision, whatever a later line says of the old price); where the revision turned the
      rule ("emails on Sunday are fine" for "never email on a Sunday"), nearer the former
      form is enough, however close the current one reads; so is a line that keeps what the
      revision rejected ("$42, not $48": "seat price $48", ``_keeps_rejected``);
    * ``settled``: an open question that the sentence reports as decided, in itself or in
      the line it was cut from (``line``), or states as fact (``_declared``).

    Other contradictions are left to the scorer; a changed name or a swapped word alone is
    not one here (summaries reword and mention neighbouring names all the time)."""
    current = item.current
    if turned and x[_COV_E] >= ALIGNED_NEGATED and x[_COV_L] >= ALIGNED_NEGATED_L:
        return "negated"
    changed = other_value(current.norm, u.norm)
    if changed and x[_COV_E] >= ALIGNED_CHANGED:
        return "other_value"
    former = item.unit if item.revised_unit is not None else None
    if former is not None and not revised and _keeps_rejected(item, u):
        return "stale"
    if former is not None and not revised and not _fresh_values(item).intersection(u.values):
        xf = features(former, u, _NO_CUES, un.SENTENCE)
        if xf[_COV_E] > x[_COV_E]:
            t_same = model.model.threshold_same
            if p_same < t_same and changed:
                return "stale"
            p_former = model.probabilities(xf)[0]
            # A revision that turned the rule is stale however near its current form reads.
            turned_rule = former.polarity != current.polarity and p_former > p_same
            if p_former >= max(t_same, STALE_FORMER) and (p_same < t_same or turned_rule):
                return "stale"
    line = line or u.text
    if (
        item.cls == "open_question"
        and x[_COV_E] >= ALIGNED_SETTLED
        and (_SETTLED.search(line) or _declared(current, x))
        and not _STILL_OPEN.search(line)
    ):
        return "settled"
    return None


def _keeps_rejected(item: Item, u: Unit) -> bool:
    """Whether ``u`` states what the item's revision rejected of it ("$42, not $48": a line
    with "seat price $48"): the rejected words, the former rule's matter beside them, and none of
    the values the revision brought."""
    current = item.current
    rejected = {bare(r) for r in current.rejected}
    if not rejected or not rejected <= set(u.keys) | set(u.values):
        return False
    matter = set(item.unit.keys) - rejected
    return not matter.isdisjoint(u.keys) and not _fresh_values(item).intersection(u.values)


def _declared(question: Unit, x: Sequence[float]) -> bool:
    """Whether a sentence states an open question's matter as fact: it holds most of the
    question, and the question is a fair share of it (a long sentence that mentions the
    matter in passing decides nothing). A question of a few words ("what about retries?")
    raises a topic rather than asks for a decision, and any line on the topic would hold it."""
    return (
        len(question.keys) >= DECLARED_MIN_WORDS
        and x[_COV_E] >= ALIGNED_DECLARED
        and x[_COV_L] >= DECLARED_SHARE
    )


def _restates_former(item: Item, u: Unit) -> bool:
    """Whether ``u`` covers half of the item's former wording."""
    return features(item.unit, u, _NO_CUES, un.SENTENCE)[_COV_E] >= 0.5


def _fresh_values(item: Item) -> set[str]:
    """The values a revision brought ("9 months" for "make it 9 months", the rule said 6)."""
    if item.revised_unit is None:
        return set()
    return set(item.revised_unit.values) - set(item.unit.values)


def _revision_stated(item: Item, summary: Summary) -> bool:
    """Whether a summary sentence gives every value the revision brought ("make it 9 months"
    for "6 months": a sentence with "9 months")."""
    fresh = _fresh_values(item)
    return bool(fresh) and any(fresh <= set(u.values) for u in summary.units)


def check_all(items: Sequence[Item], text: str, model: sc.Scorer | None = None) -> list[Check]:
    """Every item against one summary text."""
    summary = read_summary(text)
    model = model or sc.load(sc.SURVIVAL)
    return [check(i, summary, model) for i in items]
