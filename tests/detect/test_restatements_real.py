"""Restatement flags on real transcripts (../shared/real_logs; skipped when absent).

The labelled sets are written pairs; real messages also carry pasted stack traces, logs and
terminal sessions, and terse fragments. These tests read the real logs through the adapters
and the core, and check what the flags quote, with predicates written independently of the
detector's own rules.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from monitor.adapters import read_paths
from monitor.detect import detect_all
from monitor.detect.lang import lexicon as lx
from monitor.events import Event
from monitor.flags import Flag

REAL_LOGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "real_logs"

#: Shapes of machine output: a source position ("file.ts:393:9", "(B.java:12)"), a stack
#: frame opener, a diff or listing gutter ("+ 9"), a "[tag]" or "Error:" log prefix, a
#: terminal prompt, a progress line ending in an ellipsis.
_MACHINE = re.compile(
    r"\S:\d+(?::\d+)?\)?\s*$|^\s*at\s+\S+\s+\(|^\s*[+\-]\s*\d+\b|^\s*\[[\w.-]+\]\s|"
    r"^\s*\w*(?:Error|Exception):|^\s*(?:\$|\u279c|>>>)\s|(?:\.\.\.|\u2026)\s*$"
)
_WORD = re.compile(r"[A-Za-z]{3,}")


def _machine(line: str) -> bool:
    return bool(_MACHINE.search(line)) or len(_WORD.findall(line)) * 2 < len(line.split())


def _content_words(text: str) -> set[str]:
    """Lower-case words of three or more letters that are not stopwords, cut to 5 letters."""
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in lx.STOPWORDS}


@pytest.fixture(scope="module")
def flags() -> list[Flag]:
    if not REAL_LOGS.is_dir():
        pytest.skip("no real logs at ../shared/real_logs")
    events = [e for e in read_paths([str(REAL_LOGS)]) if isinstance(e, Event)]
    if not any(e.kind == "user_message" for e in events):
        pytest.skip("the real logs hold no user messages")
    got = [f for f in detect_all(events) if f.signal == "restated_instruction"]
    for f in got:  # shown with -s: the flags a reader should judge
        ev = f.evidence
        print(f"{f.session_id[:8]} t{f.turn}<-t{f.original_turn} {ev['score']} {ev['cues']}")
        print(f"   earlier: {ev['earlier']!r}\n   later:   {ev['later']!r}")
    return got


def test_no_flag_quotes_machine_output(flags: list[Flag]) -> None:
    for f in flags:
        for side in ("earlier", "later"):
            quoted = str(f.evidence[side])
            assert not any(_machine(line) for line in quoted.splitlines()), (side, quoted)


def test_no_flag_rests_on_a_fragment(flags: list[Flag]) -> None:
    """Each side has two content words, unless the later message says it repeats itself."""
    for f in flags:
        cued = {"reminder_cue", "emphasis"} & set(f.evidence["cues"])
        for side in ("earlier", "later"):
            words = _content_words(str(f.evidence[side]))
            assert cued or len(words) >= 2, (side, f.evidence[side])


def test_flags_that_remain_share_content(flags: list[Flag]) -> None:
    """A plausible restatement repeats at least two content words of what it restates."""
    for f in flags:
        shared = _content_words(str(f.evidence["earlier"])) & _content_words(
            str(f.evidence["later"])
        )
        assert len(shared) >= 2, (f.evidence["earlier"], f.evidence["later"])


def test_restatement_flags_are_rare(flags: list[Flag]) -> None:
    """Users seldom repeat themselves: at most one flag per fifty user messages."""
    users = sum(
        1 for e in read_paths([str(REAL_LOGS)]) if isinstance(e, Event) and e.kind == "user_message"
    )
    assert len(flags) * 50 <= users, (len(flags), users)
