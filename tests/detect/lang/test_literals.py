"""A text that a pattern matches holds one of the literals ``literals.needed`` reads off it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from monitor.detect import pairs
from monitor.detect.lang import lexicon as lx
from monitor.detect.lang import normalise, segment
from monitor.detect.lang import units as un
from monitor.detect.lang.literals import may_match, needed
from monitor.detect.lang.twins import lowercase_twin


def _case_sensitive(pattern: re.Pattern[str]) -> re.Pattern[str]:
    return lowercase_twin(pattern) if pattern.flags & re.IGNORECASE else pattern


#: Every pattern of the reader, case-sensitive (a twin where there is one).
PATTERNS = [
    _case_sensitive(p)
    for module in (lx, un, segment, normalise, pairs)
    for p in vars(module).values()
    if isinstance(p, re.Pattern)
]
#: The words the patterns are made of, and marks, so that generated texts match them often.
WORDS = sorted(
    {w for p in PATTERNS for w in re.findall(r"[a-z']{2,}", p.pattern)}
    | {",", ".", ":", ";", "!", "?", "-", "'", '"', "1.", "2)", "`x`", "\n", "  "}
)
TEXT = st.lists(st.sampled_from(WORDS) | st.text(max_size=3), max_size=12).map(" ".join)


def test_the_literals_are_those_of_every_branch() -> None:
    assert needed(re.compile(r"\bagain\b|\bonce more\b|(?:as|like)\s+(?:said|told)\b")) == (
        "again",
        "once more",
        "said",
        "told",
    )
    assert needed(re.compile(r"!{2,}|\?!|!\?")) == ("!",)  # "?!" and "!?" hold "!"
    assert needed(re.compile(r"[ab]x?")) == ("a", "b")


def test_a_pattern_with_a_branch_or_part_that_needs_nothing_needs_nothing() -> None:
    for source in (r"again|\d+", r"x*", r"(?=again)", r"[a-z]+", r"(?i:again)", r"a?"):
        assert needed(re.compile(source)) is None
    assert needed(re.compile("again", re.IGNORECASE)) is None
    assert may_match("", None)


@given(TEXT)
def test_a_matched_text_holds_a_needed_literal(text: str) -> None:
    for pattern in PATTERNS:
        if pattern.search(text) is not None:
            assert may_match(text, needed(pattern)), pattern.pattern
