"""The long-text paths of ``normalise`` do what the patterns they stand for do."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect.lang import normalise as nm

#: Words a text is built from: number words in several cases, words holding one, the "a"
#: before one, joiners, and the letters lower-casing moves; and what stands between them.
WORDS = st.sampled_from(
    [
        *sorted(nm._NUMBER_WORDS),
        "Twenty",
        "FIVE",
        "Hundred",
        "someone",
        "often",
        "first",
        "a",
        "A",
        "an",
        "An",
        "and",
        "x7",
        "_",
        "s\u0131x",
        "\u017fix",
        "S\u0130X",
        "\u212aeep",
    ]
)
BETWEEN = st.sampled_from([" ", " ", "  ", "-", "", "\t", "\n", "\u00a0", ".", ",", "_", "7"])


@settings(max_examples=1000)
@given(st.lists(st.tuples(WORDS, BETWEEN), max_size=12))
def test_numbers_are_spelled_as_the_pattern_spells_them(pairs: list[tuple[str, str]]) -> None:
    text = "".join(w + b for w, b in pairs)
    assert _outcome(nm._spell_numbers, text) == _outcome(
        lambda t: nm._SPELLED.sub(nm._spelled, t), text
    )


def _outcome(spell: Callable[[str], str], text: str) -> str:
    """What ``spell`` makes of ``text``, or the error it raises (with a dotless i, "six" is
    matched but is no number word for ``_spelled``)."""
    try:
        return spell(text)
    except KeyError as e:
        return f"KeyError {e}"


def test_lower_casing_keeps_the_places_of_what_the_patterns_match() -> None:
    """Every letter that matches an ASCII letter ignoring case lower-cases to it, in one
    character, unless it is one of ``_FOLDED_APART`` (read by the pattern itself)."""
    letters = re.compile("[a-z]", re.IGNORECASE)
    for code in range(128, sys.maxunicode + 1):
        c = chr(code)
        if letters.fullmatch(c) and c not in nm._FOLDED_APART:
            assert len(c.lower()) == 1 and c.lower().isascii(), hex(code)
        if len(c.lower()) != 1:
            assert c in nm._FOLDED_APART, hex(code)


#: The patterns as first written, each scanning from the character before its mark.
_THOUSANDS_FIRST = re.compile(r"(?<=\d),(?=\d{3}\b)")
_BARE_DECIMAL_FIRST = re.compile(r"(?<![\w.])\.(?=\d)")
NUMERALS = st.text(alphabet="0123456789.,_ aZ-\u00e9", max_size=40)


@given(NUMERALS)
def test_marks_first_find_what_the_patterns_found(text: str) -> None:
    assert nm._THOUSANDS.sub("", text) == _THOUSANDS_FIRST.sub("", text)
    assert nm._BARE_DECIMAL.sub("0.", text) == _BARE_DECIMAL_FIRST.sub("0.", text)


MARKS = "ab \u2018\u2019\u201c\u201d\u2013\u2014\u00a0\u2009\u2026.'\"-"


@given(st.text(alphabet=MARKS, max_size=40))
def test_marks_straightened_one_by_one_as_by_the_table(text: str) -> None:
    assert nm._straightened(text) == text.translate(nm._QUOTES)


ABBREVIATED = st.sampled_from(
    ["no.", "No.", "NO.", "nr.", "Nr", "no", "version", "item", "percent", "Per Cent", "PCT"]
)


@given(st.lists(st.tuples(ABBREVIATED, st.sampled_from([" ", "", "3", " 12 ", "."])), max_size=8))
def test_a_pattern_is_skipped_only_where_it_finds_nothing(pairs: list[tuple[str, str]]) -> None:
    text = "".join(w + b for w, b in pairs)
    if not nm._holds(text, nm._PERCENT_WORDS):
        assert nm._PERCENT.sub(r"\1%", text) == text
    if not nm._holds(text, nm._ABBREVIATED_NUMBER):
        assert nm._NUMBER_ABBREVIATION.sub("number", text) == text
