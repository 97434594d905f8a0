"""Case-sensitive twins of case-insensitive patterns, for text that is ASCII and lower case.

``re.IGNORECASE`` costs the matcher a case fold at every comparison. On ASCII text lower-cased
(same length as the text, so a match there is a match at the same places in the text) a pattern
whose every literal is lower case, and whose classes hold no range, finds the same matches
without the flag, in a third of the time or less.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

#: Letters ``re.IGNORECASE`` matches with an ASCII letter that they do not lower-case to (the
#: long s, U+017F, is "s"; the dotless i, U+0131, and the dotted capital I, U+0130, are "i", and
#: the last lower-cases to two characters). Lower-casing turns every other letter such a pattern
#: matches with an ASCII one into that letter, in the same place (``lowers_in_place``).
FOLDED_APART: Final = ("\u0130", "\u0131", "\u017f")


def lowers_in_place(text: str) -> bool:
    """Whether ``text.lower()`` keeps every character's place and turns each letter that a
    case-insensitive pattern matches with an ASCII letter into that letter: a search for ASCII
    words in it finds where such a pattern can match in the text, whatever else it holds."""
    return not any(c in text for c in FOLDED_APART)


#: Escapes that name no character, or a class that is the same in either case.
_CASELESS_ESCAPES: Final = frozenset("bBsSwWdDAZ")


def _caseless(source: str) -> bool:
    """Whether a pattern's source is safe for a twin: ASCII, no upper-case literal, no escape
    that names a character by number or name (``\\x4A``), no range in a class (``[@-Z]``)."""
    if not source.isascii():
        return False
    source = source.replace("(?P<", "(?<").replace("(?P=", "(?=")  # group syntax, not text
    in_class = False
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            nxt = source[i + 1 : i + 2]
            if nxt.isalnum() and nxt.lower() not in "bswd" and nxt not in _CASELESS_ESCAPES:
                return False  # \x, \u, \N, \0, back-references…: refused, to stay simple
            i += 2
            continue
        if ch.isupper():
            return False
        if in_class:
            if ch == "-" and source[i - 1] != "[" and source[i + 1 : i + 2] != "]":
                return False
            if ch == "]" and source[i - 1] not in "[^":
                in_class = False
        elif ch == "[":
            in_class = True
            if source[i + 1 : i + 2] == "^":
                i += 1
            if source[i + 1 : i + 2] == "]":
                i += 1  # "[]…]" and "[^]…]": the first "]" is a member
        i += 1
    return True


def lowercase_twin(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` without ``re.IGNORECASE`` when its source is safe (``_caseless``): on ASCII
    lower-case text the two find the same matches. Any other pattern is its own twin, and
    searching lower-cased ASCII text with it still finds what it finds in the text."""
    if not pattern.flags & re.IGNORECASE or not _caseless(pattern.pattern):
        return pattern
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


def sub_as_written(
    twin: re.Pattern[str], text: str, low: str, replace: Callable[[re.Match[str], str], str]
) -> str:
    """``text`` with each match of ``twin`` in ``low`` (``text.lower()``, the same length, so
    the same places) replaced by ``replace(match, text)``, which reads what it needs of the
    text as written: a pattern's ``sub`` without its case fold at every step."""
    out: list[str] = []
    at = 0
    for m in twin.finditer(low):
        out.append(text[at : m.start()])
        out.append(replace(m, text))
        at = m.end()
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)
