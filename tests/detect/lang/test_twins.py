"""Case-sensitive twins find what their case-insensitive patterns find, on ASCII text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.lang import segment
from monitor.detect.lang import units as un
from monitor.detect.lang.twins import lowercase_twin

#: Every pattern the detector reads through a twin, with it.
TWINNED = [
    *zip(un._CUES, un._CUES_LOWER, strict=True),
    (segment._ABBREVIATIONS, segment._ABBREVIATIONS_LOWER),
    (segment._LIST_HEAD, segment._LIST_HEAD_LOWER),
]
#: Words the patterns look for, in several cases, with the marks around them.
WORDS = [
    "again",
    "AS I SAID",
    "Still",
    "why are",
    "Ugh",
    "instead",
    "No Longer",
    "now",
    "e.g.",
    "Dr.",
    "NO.",
    "vs.",
    "Ground rules",
    "house style:",
    "Rules:",
    ":",
    ",",
    ".",
    "!",
    " ",
    "\n",
]
TEXT = st.lists(st.sampled_from(WORDS) | st.text(max_size=4), max_size=14).map(" ".join)


def test_the_patterns_read_through_twins_have_them() -> None:
    assert all(twin is not pattern for pattern, twin in TWINNED)


def test_a_pattern_that_may_differ_without_the_flag_is_its_own_twin() -> None:
    for source in (r"[@-\]]x", r"\x4ax", "Kx", r"\u212ax", r"\N{LATIN SMALL LETTER A}", "\u212a"):
        pattern = re.compile(source, re.IGNORECASE)
        assert lowercase_twin(pattern) is pattern


@given(TEXT)
def test_twins_match_lower_cased_ascii_text_where_the_patterns_match_it(text: str) -> None:
    if not text.isascii():
        return
    for pattern, twin in TWINNED:
        want = [(m.span(), m.regs) for m in pattern.finditer(text)]
        assert [(m.span(), m.regs) for m in twin.finditer(text.lower())] == want


@given(TEXT)
def test_sentences_are_cut_as_the_patterns_cut_them(text: str) -> None:
    protected = segment._ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), text)
    assert segment._protect(text) == protected
    head = segment._LIST_HEAD.match(text)
    if head is None:
        assert segment._items(text) == [text] or segment._INLINE_NUMBER.search(text)
    else:
        rest = [it for it in segment._LIST_COMMA.split(head.group("rest")) if it.strip()]
        if len(rest) >= 2 and not segment._INLINE_NUMBER.search(text):
            assert segment._items(text) == [head.group("head"), *rest]
