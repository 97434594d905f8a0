"""Literals that every match of a pattern holds, for a substring test before the pattern runs.

A regular expression scans its text a character at a time, at a cost of a hundred or more
machine instructions per character; ``str.__contains__`` finds a literal at a few per character.
Most patterns of the reader need a word that most texts lack ("remind", "instead", "!"), so a
text that holds none of a pattern's literals cannot match it, and the scan is skipped.

The literals are read off the pattern's own parse (``re._parser``, the parser ``re.compile``
uses), so they follow the pattern when it is edited: a sequence needs what any one of its parts
needs (the longest run of plain characters, or a group, or a repetition of at least one), and
an alternation needs one of what each branch needs. Anything else (classes, look-arounds,
optional parts) needs nothing. Only case-sensitive patterns are read: a case-blind one (or a
part of one) gives ``None``, and is always run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from re import _constants as sre_c  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

#: Literals a pattern needs: a match holds at least one of them.
Needed = tuple[str, ...]


def needed(pattern: re.Pattern[str]) -> Needed | None:
    """Literals of which every match of ``pattern`` holds one, or ``None`` when none are known
    (then a text must always be scanned). Only for case-sensitive patterns."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # pragma: no cover - a pattern that compiled parses
        return None
    found = _sequence(list(parsed))
    if not found:
        return None
    # A literal holding another is redundant: a text holding it holds the other.
    return tuple(sorted(a for a in found if not any(b != a and b in a for b in found)))


def may_match(text: str, literals: Needed | None) -> bool:
    """Whether ``text`` holds one of ``literals`` (always, when they are unknown)."""
    if literals is None:
        return True
    # A plain loop: ``any`` over a generator costs a resumption per literal, as much as the test.
    for lit in literals:  # noqa: SIM110
        if lit in text:
            return True
    return False


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more telling of two sets of needed literals: the longer shortest literal, then the
    fewer literals."""
    if a is None:
        return b
    if b is None:
        return a
    ka = (min(map(len, a)), -len(a))
    kb = (min(map(len, b)), -len(b))
    return a if ka >= kb else b


def _sequence(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    """What a sequence needs: its best run of literal characters or best part."""
    best: frozenset[str] | None = None
    run: list[str] = []
    for op, av in items:
        if op is sre_c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            best = _better(best, frozenset({"".join(run)}))
            run = []
        best = _better(best, _item(op, av))
    if run:
        best = _better(best, frozenset({"".join(run)}))
    return best


def _item(op: Any, av: Any) -> frozenset[str] | None:
    """What one part of a sequence needs (``None``: nothing known)."""
    if op is sre_c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        if add_flags & re.IGNORECASE:
            return None
        return _sequence(list(sub))
    if op is sre_c.BRANCH:
        out: set[str] = set()
        for branch in av[1]:
            found = _sequence(list(branch))
            if not found:
                return None  # a branch that needs nothing: the alternation needs nothing
            out |= found
        return frozenset(out)
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        least, _most, sub = av
        return _sequence(list(sub)) if least >= 1 else None
    if op is sre_c.IN and av and all(o is sre_c.LITERAL for o, _ in av):
        return frozenset(chr(c) for _, c in av)  # a class of plain characters: one of them
    return None
