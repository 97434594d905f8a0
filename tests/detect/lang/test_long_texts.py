"""The long-text paths of ``normalise`` do what the patterns they stand for do."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from hypothesis import example, given, settings
from hypothesis import strategies as st

from monitor.detect import survival as sv
from monitor.detect.lang import normalise as nm
from monitor.detect.lang import segment
from monitor.detect.lang.twins import FOLDED_APART

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
    """What ``spell`` makes of ``text``."""
    return spell(text)


def test_a_word_the_case_blind_pattern_takes_for_a_number_stays_as_written() -> None:
    """ "six" written with a dotless i matches the pattern's "six" but is no number word: it
    used to raise KeyError, in the middle of reading a user message."""
    dotless = "s\u0131x"
    for text in (
        f"twenty {dotless} twenty",
        f"{dotless}- year plan",
        f"two thousand and {dotless}",
    ):
        assert dotless in nm.normalise(text)


def test_lower_casing_keeps_the_places_of_what_the_patterns_match() -> None:
    """Every letter that matches an ASCII letter ignoring case lower-cases to it, in one
    character, unless it is one of ``FOLDED_APART`` (read by the pattern itself)."""
    letters = re.compile("[a-z]", re.IGNORECASE)
    for code in range(128, sys.maxunicode + 1):
        c = chr(code)
        if letters.fullmatch(c) and c not in FOLDED_APART:
            assert len(c.lower()) == 1 and c.lower().isascii(), hex(code)
        if len(c.lower()) != 1:
            assert c in FOLDED_APART, hex(code)


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


ABBREVIATIONS = st.sampled_from(
    [
        *segment._ABBREVIATED,
        "Dr",
        "E.G",
        "MRS",
        "Vs",
        "mrs",
        "xmr",
        "s\u0131t",
        "\u017ft",
        "U.S",
        "",
    ]
)
AFTER = st.sampled_from([".", ". ", ".\n", ".\u00a0", " ", "", ".x", "..", "_", "1. "])


@settings(max_examples=1000)
@given(st.lists(st.tuples(ABBREVIATIONS, AFTER), max_size=10))
def test_abbreviations_are_found_as_the_pattern_finds_them(pairs: list[tuple[str, str]]) -> None:
    text = "".join(w + b for w, b in pairs)
    want = segment._ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), text)
    assert segment._protect(text) == want


_DOTTED_LINE = st.lists(
    st.sampled_from(["1.", "01.", "2.", "3.", "\u0661.", "\u0662.", "x", "a.", " "])
)


@example("\u0661. one \u0662. two")
@given(_DOTTED_LINE.map(" ".join))
def test_a_line_without_a_first_item_is_left_as_it_is(line: str) -> None:
    numbers = [int(m.group(1)) for m in segment._DOTTED.finditer(line)]
    if segment._counts_up(numbers) and numbers[0] == 1:
        assert segment._numbered_inline(line) == segment._DOTTED.sub(
            lambda m: m.group(1) + ")", line
        )
    else:
        assert segment._numbered_inline(line) == line


def test_str_split_reads_as_spaces_what_the_pattern_does() -> None:
    """``survival.flat`` splits at runs of spaces where it substituted ``\\s+``: the same
    characters, every one of them."""
    space = re.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        assert (space.fullmatch(c) is not None) == c.isspace(), hex(code)


@given(st.text(alphabet=st.sampled_from("ab.`*_ \t\n\x1c\u00a0\u2028\u3000A"), max_size=40))
def test_a_text_is_flattened_as_by_the_pattern(text: str) -> None:
    t = text.lower().replace("`", "").replace("**", "").replace("__", "")
    assert sv._flattened(text) == re.sub(r"\s+", " ", t).strip().rstrip(".")
