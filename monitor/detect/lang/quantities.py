"""Numbers with what they measure: "7 days", "$12,000 total", "Node 18", "under 150 words".

A summary that gives an item's number with another one in the same slot ("lookback 3 days" for
"lookback 7 days") states a different rule; a summary that merely mentions other numbers
("2,297 collisions within 15 m") does not. So a number is compared only with a number that
measures the same thing: one that shares an anchor word with it (the content word just before
or after it, or a unit written onto it, "5k", "2mb"), of the same kind (a currency, a share),
and whose value the bound around the first one does not allow ("under 150 words" is kept by
"132 words").

Read off a unit's ``norm`` (lower case, single spaces, thousands separators gone), so the
reading costs one pass over a few dozen words and needs no state.
"""

from __future__ import annotations

import functools
import re
from typing import Final, NamedTuple

from monitor.detect.lang import lexicon as lx

#: A number as a word of its own: an optional currency, digits, an optional unit written on.
#: Not part of a path, a version, a time, a date or a "#3" list marker (those are values
#: compared whole by the pair features).
_NUMBER: Final = re.compile(r"(?<![\w.#/:-])([$€£]?)(\d+(?:\.\d+)?)(%|[a-z]+)?(?![\w./:-])")
#: Words that stand before a number and set its bound besides ``lexicon``'s bound words.
_AT_MOST: Final = frozenset({"most", "less", "fewer", "up"})
_AT_LEAST: Final = frozenset({"least", "more"})
#: How many words before a number may set its bound ("no more than 20").
_BOUND_REACH: Final = 3
_PUNCT: Final = ".,;:()[]\"'"


class Quantity(NamedTuple):
    """A number, the words it measures, its kind ("$", "%", "" for a count) and its bound
    (-1 at most, +1 at least, 0 exactly)."""

    value: float
    anchors: frozenset[str]
    kind: str
    bound: int


#: One-letter units, read as anchors when written after a number ("15 m", "30 s").
_LETTER_UNITS: Final = frozenset("msghlbkx")


def _anchor(word: str) -> str | None:
    """A word that can say what a number measures: alphabetic, not a stopword nor a bound
    word ("max 2 retries" measures retries), singular."""
    w = word.strip(_PUNCT)
    if w in _LETTER_UNITS:
        return w
    if len(w) < 2 or not w.replace("_", "").isalpha() or w in lx.STOPWORDS or _side(w):
        return None
    return w[:-1] if w.endswith("s") and len(w) > 3 else w


def _side(word: str) -> int:
    if word in lx.BOUND_AT_MOST or word in _AT_MOST:
        return -1
    if word in lx.BOUND_AT_LEAST or word in _AT_LEAST:
        return 1
    return 0


def _bound(before: list[str]) -> int:
    """The bound the words before a number set: the nearest bound word's side, turned by a
    negator before it ("no more than 20" is at most 20)."""
    for i in range(len(before) - 1, -1, -1):
        side = _side(before[i])
        if side:
            return -side if any(w in lx.NEGATORS for w in before[:i]) else side
    return 0


#: Words that link a number to its subject ("max_runs stays at 1", "the cap is 3"): the
#: anchor is the word before them.
_LINKS: Final = frozenset(
    {"is", "are", "was", "were", "be", "stays", "stay", "remains", "remain", "at", "now", "="}
)
#: Link words skipped before a number ("stays at").
_LINK_REACH: Final = 2


def _before(words: list[str], i: int) -> int:
    """Where the word a number at ``i`` measures stands before it: just before, or before the
    link words between them."""
    j = i - 1
    while j >= 0 and i - j <= _LINK_REACH and words[j] in _LINKS:
        j -= 1
    return j


@functools.lru_cache(maxsize=4096)
def quantities(norm: str) -> tuple[Quantity, ...]:
    """The numbers of a normalised span, each with what it measures. "One" and "zero" are
    left out: as words they are more often articles and idioms than counts."""
    words = norm.split()
    out: list[Quantity] = []
    for i, w in enumerate(words):
        m = _NUMBER.fullmatch(w)
        if m:
            currency, digits, unit = m.groups()
            value = float(digits)
        elif w in lx.NUMBER_WORDS and w not in ("one", "zero"):
            currency, unit, value = "", None, float(lx.NUMBER_WORDS[w])
        else:
            continue
        if unit in lx.SUFFIX_MULTIPLIERS:
            value *= lx.SUFFIX_MULTIPLIERS[unit]
            unit = None
        anchors = set()
        if unit and unit != "%":
            anchors.add(_anchor(unit) or unit)
        for j in (_before(words, i), i + 1):
            if 0 <= j < len(words) and (a := _anchor(words[j])):
                anchors.add(a)
        kind = currency or ("%" if unit == "%" else "")
        out.append(
            Quantity(value, frozenset(anchors), kind, _bound(words[max(0, i - _BOUND_REACH) : i]))
        )
    return tuple(out)


def other_value(earlier: str, later: str) -> bool:
    """Whether ``later`` (a normalised span) gives one of ``earlier``'s numbers with another
    value in the same slot: the earlier number is absent from the later span, a later number
    measures the same thing, is of the same kind, is not one of the earlier span's own numbers
    ("Node 18, nothing that needs Node 20" is kept by "stays on Node 18") and breaks the
    earlier bound."""
    mine = quantities(earlier)
    if not mine:
        return False
    theirs = quantities(later)
    if not theirs:
        return False
    own = {q.value for q in mine}
    said = {q.value for q in theirs}
    for q in mine:
        if q.value in said:
            continue
        for o in theirs:
            if o.value in own or not (q.anchors & o.anchors or _bound_alike(q, o)):
                continue
            if q.kind and o.kind and q.kind != o.kind:
                continue
            if (q.bound < 0 and o.value <= q.value) or (q.bound > 0 and o.value >= q.value):
                continue
            return True
    return False


def moved(earlier: str, later: str) -> bool:
    """Whether ``later`` sets one of ``earlier``'s numbers to another value: a later number
    measures the same thing, is of the same kind and is none of the earlier's numbers, whatever
    the earlier bound ("make the limit 2 MB" moves "cap the download at 5 MB", which a summary
    saying "2 MB" would keep). A share or a price that names nothing is the same thing as
    another that names nothing (``_bare_alike``)."""
    mine = quantities(earlier)
    theirs = quantities(later) if mine else ()
    own = {q.value for q in mine}
    return any(
        o.value not in own
        and (bool(q.anchors & o.anchors) or _bare_alike(q, o) or _bound_alike(q, o))
        and not (q.kind and o.kind and q.kind != o.kind)
        for q in mine
        for o in theirs
    )


def _bare_alike(q: Quantity, o: Quantity) -> bool:
    """Two numbers that name nothing but are of one marked kind ("more than 3% of the lines"
    and "raise it to 8%"): under an announced change, the share or the price it sets anew."""
    return not q.anchors and not o.anchors and bool(q.kind) and q.kind == o.kind


def _bound_alike(q: Quantity, o: Quantity) -> bool:
    """A later limit that names nothing ("the cap is 800", "cap it at 3") and an earlier one
    on the same side ("under 600 words"): the same bound set anew."""
    return not o.anchors and o.bound != 0 and o.bound == q.bound and q.kind == o.kind


__all__ = ["Quantity", "moved", "other_value", "quantities"]
