"""A user message cut into what the user typed: pasted material out, then sentences and clauses.

Users paste stack traces, logs, terminal sessions, diffs, code, review-bot comments and status
blocks into their messages. None of it is something they tell the agent, and the same trace
pasted twice is no restated instruction, so ``prose`` drops it before sentences are read:

* a line is machine output by its own shape (``output_line``): a stack frame, a log line, a
  prompt, a diff gutter, code, a line mostly of paths and numbers;
* output comes in blocks: every line of a paragraph between two output lines is output too, and
  so are a short caption just above a block and short or progress lines just below it;
* headings ("## Plan", "=== Step 3 ===", a bold line alone), quoted lines ("> …") and list
  markers standing alone are not instructions, and neither is a block of ``key: value`` status
  lines ("Branch: main" / "env: staging" / "tests: 412 passed": a report or a hand-off brief);
* a paragraph carrying the marks of a pasted review comment (a severity line, "Fix in …",
  HTML tags of a bot) goes whole.

A paragraph is a run of lines without a blank line; prose the user types after a paste is
nearly always set off by one.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from typing import Final

from monitor.detect.lang import lexicon as lx
from monitor.detect.lang.normalise import normalise
from monitor.detect.lang.twins import lowercase_twin, lowers_in_place

#: A stack frame: JavaScript/Java "at f (path:12:3)", Python "File …, line 12", a traceback.
_STACK_FRAME: Final = re.compile(
    r"^\s*(?:at\s+\S.*(?::\d+:\d+\)?|\(\S+:\d+\)|\((?:Native Method|Unknown Source)\))\s*$|"
    r'File "[^"]+", line \d+|Traceback \(most recent call last\))'
)
#: A log line: a timestamp, an upper-case level, a "[tag]", or "XError:" first.
_LOG_LINE: Final = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}\b|"
    r"\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)(?:\]|:)|"
    r"\[[a-z0-9][\w.:/-]{0,39}\]\s|(?:[A-Z]\w*)?(?:Error|Exception)\b:|npm (?:ERR|WARN)!|"
    r"(?:remote|fatal|error|warning|hint):\s|unknown (?:command|flag|option|shorthand flag)\b|"
    r"command not found\b|no such file or directory\b|permission denied\b|did you mean this\?)"
)
#: A terminal prompt ("➜ repo git:(main)", "$ npm test", "user@host:~$ ", ">>> ").
_PROMPT: Final = re.compile(
    r"^\s*(?:[\u279c\u276f\u03bb]\s|\$\s+\S|>>>\s|PS [A-Z]:\\|[\w.-]+@[\w.-]+(?::\S*)?\s*[$%#]\s)"
)
#: A diff or a listing with line numbers ("+ 9 …", "12 | …", "@@ -1,3 +1,4 @@").
_GUTTER: Final = re.compile(
    r"^\s*(?:\+\s*\d+(?:\s|$)|\d+\s*[|\u2502]\s|@@ .* @@|(?:\+\+\+|---) [ab]/|"
    r"(?:create|delete) mode \d{6}\s|\d+ files? changed)"
)
#: Code: brackets alone, a definition or an import, an assignment.
_CODE_LINE: Final = re.compile(
    r"^\s*(?:[}\])]+[;,)]*\s*$|(?:from\s+[\w.]+\s+)?import\s+[\w.{}*, ]+;?\s*$|"
    r"(?:def|class|fn|func|function|const|let|var|pub)\s+[\w$]+\s*[(=:<{]|"
    r"#(?:include|define|!/)|[\w.$\[\]]+\s*:?=\s*[\w\"'(\[{-])"
)
#: Box drawing, block elements and braille (terminal user interfaces and spinners). The
#: bullet "•" is not among them: people type it (or paste it from a document) to list rules, and
#: a terminal's bullets come in blocks that the other lines' shapes give away.
_TUI_FIRST: Final = re.compile(
    r"^\s*[\u2500-\u259f\u2800-\u28ff\u2713-\u2718\u274c\u274e\u26a0\u2192\u21b3\u25b6\u25cf]"
)
_OUTPUT_START: Final = re.compile(
    "|".join(
        f"(?:{p.pattern})"
        for p in (_STACK_FRAME, _LOG_LINE, _PROMPT, _GUTTER, _CODE_LINE, _TUI_FIRST)
    )
)
_BACKTICKS: Final = re.compile(r"`[^`\n]*`")
_FENCE: Final = re.compile(r"^\s*(?:```|~~~)")
_LIST_MARKER: Final = re.compile(r"^\s*(?:[-*+\u2022]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\[[ xX]\])\s+")
_PLAIN_CHUNK: Final = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")
_CHUNK_EDGES: Final = "\"'`()[]{}<>.,;:!?*_"
#: "## Plan", "=== Step 3 ===", "**Summary**", "Step 4:" alone, "---".
_HEADING: Final = re.compile(
    r"^\s*(?:#{1,6}\s+\S|={2,}|-{3,}\s*$|\*{2}[^*]{1,80}\*{2}:?\s*$|_{2}[^_]{1,80}_{2}\s*$|"
    r"(?:step|phase|part|section|stage)\s+\d+\s*[:.)]?\s*$)",
    re.IGNORECASE,
)
#: "Branch: main", "- env: staging", "Status - green": a short label, a colon, a value.
_KEY_VALUE: Final = re.compile(r"^\s*(?:[-*\u2022]\s*)?([A-Za-z][\w ./()-]{0,30}?)\s*:\s+(\S.*)$")
#: Labels whose value is an instruction ("Reminder: keep it short", "Rule: no emojis").
_INSTRUCTING_LABELS: Final = lx.word_set(
    """
reminder note important rule rules please again also ps nb instruction instructions requirement
requirements constraint constraints todo ask request update correction warning caution remember
"""
)
#: Marks of a pasted review or bot comment.
_REVIEW_MARK: Final = re.compile(
    r"^\s*(?:(?:low|medium|high|critical)\s+severity\b|severity\s*:|fix in (?:cursor|web)\b|"
    r"<(?:/?(?:details|summary|sub|sup|p|br|img|a|div|table|tr|td)\b|!--)|"
    r"(?:bugbot|coderabbit|copilot|sourcery|codecov|dependabot|sonar\w*)\b)",
    re.IGNORECASE,
)
_QUOTED: Final = re.compile(r"^\s*>")

#: Context a harness or an editor wraps in tags inside a typed message
#: ("<ide_selection>…</ide_selection>", "<system-reminder>…"): nobody typed it.
_TAGGED: Final = re.compile(r"<([a-z][a-z0-9]*(?:[_-][a-z0-9]+)+)>.*?</\1>\s*", re.DOTALL)
#: A paragraph is a pasted block when at least this share of its lines are output (and at
#: least ``_BLOCK_LINES`` are): a script's log interleaves headings, output and messages.
_BLOCK_SHARE: Final = 0.4
_BLOCK_LINES: Final = 3

#: A caption above a block or a trailing line below it has at most this many chunks.
_CAPTION_CHUNKS: Final = 3
#: Longest value of a status line (words): longer is prose with a colon in it.
_STATUS_VALUE_WORDS: Final = 12

#: Abbreviations whose stop ends no sentence ("Dr.", "e.g."), and those that abbreviate only
#: before a number ("No. 5", "Fig. 3", "max. 20"): elsewhere "no." and "max." end one ("No.
#: Keep it.", "250 words max. Then …").
_ALWAYS_ABBREVIATED: Final = (
    *("dr", "mr", "mrs", "ms", "prof", "st", "vs", "etc", "inc", "ltd", "incl", "excl"),
    *("e.g", "i.e", "cf"),
)
_BEFORE_A_NUMBER: Final = ("no", "fig", "min", "max", "approx", "ca")
_ABBREVIATED: Final = (*_ALWAYS_ABBREVIATED, *_BEFORE_A_NUMBER)
_ABBREVIATIONS: Final = re.compile(
    r"\b(?:" + "|".join(map(re.escape, _ALWAYS_ABBREVIATED)) + r")\.(?=\s)|"
    r"\b(?:" + "|".join(map(re.escape, _BEFORE_A_NUMBER)) + r")\.(?=\s+[\d#])",
    re.IGNORECASE,
)
#: What follows the stop of an abbreviation of ``_BEFORE_A_NUMBER``.
_NUMBER_NEXT: Final = re.compile(r"\s+[\d#]")
_BEFORE_A_NUMBER_SET: Final = frozenset(_BEFORE_A_NUMBER)
#: A stop before a space: where an abbreviation's stop may be (``_protect``).
_STOP_SPACE: Final = re.compile(r"\.(?=\s)")
#: The abbreviations as a set, and their lengths, longest first (the earliest start first).
_ABBREVIATED_SET: Final = frozenset(_ABBREVIATED)
_ABBREVIATED_LENGTHS: Final = sorted({len(a) for a in _ABBREVIATED}, reverse=True)
#: Emoji and pictographs: in chat, one before a space ends a sentence as a stop does ("works
#: now 🎉 next the docs"). One inside a sentence ("the 🔑 goes in the vault") cuts it too.
_EMOJI: Final = "\u2600-\u27bf\ufe0f\U0001f300-\U0001faff"
_SENTENCE_END: Final = re.compile(rf"(?<=[.!?{_EMOJI}])[\"')\]]*\s+|\n+")
_CLAUSE_END: Final = re.compile(r"\s*;\s*|\s+-{1,2}\s+|\s*:\s+(?=[A-Za-z])")
#: An item number inside a line ("rules: 1) US spelling 2) no adverbs"): a list typed inline.
_INLINE_NUMBER: Final = re.compile(r"(?:^|(?<=\s))\(?(\d{1,2})[.)](?=\s)")
#: What every match of ``_INLINE_NUMBER`` holds: a search for it skips to each digit, where
#: that pattern tries its look-behind at every character.
_ITEM_NUMBER: Final = re.compile(r"\d[.)]\s")
#: A label that announces a list of rules ("Ground rules for the docs:", "house style:",
#: "a few things:"): after its colon, commas separate items rather than clauses.
_LIST_HEAD: Final = re.compile(
    r"^(?P<head>[^:]{0,80}?\b(?:rules?|guidelines?|conventions?|standards?|checklist|"
    r"requirements?|constraints?|etiquette|instructions?|preferences?|polic(?:y|ies)|specs?|"
    r"things|points|criteria|limits|defaults|style|dos and don'?ts)\b[^:]{0,40})"
    r":\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_ABBREVIATIONS_LOWER: Final = lowercase_twin(_ABBREVIATIONS)
_LIST_HEAD_LOWER: Final = lowercase_twin(_LIST_HEAD)
_LIST_COMMA: Final = re.compile(r"\s*[,;]\s*(?:(?:and|or)\s+)?|\s+and\s+(?=(?:no|never|always)\b)")
#: Commas that open a clause of its own: a contrast ("…, not X"), a reason ("…, because …"),
#: a new subject ("…, the client doesn't read it", "…, I'll merge it"), a second request
#: ("…, and don't merge it"), "but".
_CLAUSE_COMMA: Final = re.compile(
    r",\s*(?=(?:not|no|never|nothing|none)\b)|"
    r",?\s+(?:because|since|so that|otherwise|or else)\s+(?=\w)|"
    r",?\s+so\s+(?=(?:i|we|you|they|he|she|it|that|the|this|there)\b)|"
    r",\s+(?:and\s+|but\s+)?(?=(?:i|we|you|they|he|she|it)'(?:ll|d|m|re|ve|s)\b|"
    r"(?:i|we|you|they|he|she|it|this|that|the|our|my|their|its)\b"
    r"(?:\s+\w+){0,3}?\s+(?:is|are|was|were|will|would|can|could|should|must|need|needs|have|has"
    r"|had|do|does|did|am|not|keeps?|reads?|breaks?|fails?|uses?|wants?|runs?|looks?|\w+n't"
    r"|broke|went|came|took|got|ran|sent|lost|forgot|left|kept"
    r"|doesnt|dont|isnt|wont|cant|didnt|arent|wasnt|werent|hasnt|havent)\b)|"
    r",?\s+but\s+|"
    r",\s+(?=(?:the|this|that|our|my|their|its|it|they|he|she)\s+(?:\w+\s+)?\w+(?:s|ed)\s)|"
    r",\s+(?=\w+(?:\s+\w+)?\s+(?:is|are|was|were|will|would|can|could|should|must|does|do|did"
    r"|has|have|had|\w+n't|doesnt|dont|cant|wont|isnt|arent|didnt|wasnt|shouldnt)\b)|"
    # A longer subject ("…, fig 2 and 4 dont have it"), not a relative clause ("…, where
    # each item would …"), which belongs to what it follows.
    r",\s+(?!(?:where|which|who|whose|whom|when|whether|that|if|as)\b)"
    r"(?=\w+(?:\s+\w+){2,3}\s+(?:\w+n't|doesnt|dont|cant|wont|isnt|arent|didnt|wasnt"
    r"|shouldnt)\b)|"
    # A first-person subject opens its own clause whatever its verb ("…, I see two without").
    r",\s+(?=(?:i|we|they)\s+[a-z]\w*\b)|"
    r",\s+and\s+(?=(?:do not|don't|dont|never|please|also|then)\b)|"
    # Unpunctuated, a second request still opens with its own marker ("… and also can you …").
    r"\s+and\s+(?=(?:also|can you|could you|can u|pls|please)\b)|"
    r",\s+(?=(?:do not|don't|dont|never|always|please)\b)",
    re.IGNORECASE,
)
#: Any of these may open a clause: a cheap test before the clause expressions run.
_MAY_SPLIT: Final = re.compile(r",|\s(?:but|because|since|so|otherwise|or else|and)\s", re.I)
#: The two without ``re.IGNORECASE``, for an ASCII sentence lower-cased (``twins``).
_CLAUSE_COMMA_LOWER: Final = lowercase_twin(_CLAUSE_COMMA)
_MAY_SPLIT_LOWER: Final = lowercase_twin(_MAY_SPLIT)
_FRAME_OPENERS: Final = lx.word_set(
    """
for in on at with when if while during before after unless until once whenever whether
"""
)

_TEXT_MEMO: Final = 2048
_CHUNK_MEMO: Final = 16384


def output_line(line: str) -> bool:
    """Whether one line is, by its own shape, machine output rather than something typed.

    Beside the patterns above: a line with no letter or digit (rules, carets), and a line whose
    whitespace-separated chunks are mostly not words (paths, numbers, hashes, flags): fewer than
    half words when it has two or more, none when it has one. A list marker is no chunk, and code
    in backticks counts as a word: people type backticks, programs do not.
    """
    if not line.strip():
        return False
    if not any(ch.isalnum() for ch in line):
        return True
    code = _BACKTICKS.sub("x", line) if "`" in line else line
    stripped = code.rstrip()
    if (
        _OUTPUT_START.match(code)
        or stripped.endswith((";", "{", "=>", "->", "\\"))
        or "${" in code
        or ("git:(" in code)
    ):
        return True
    if "`" in line:
        line = _BACKTICKS.sub("code", line)
    chunks = _LIST_MARKER.sub("", line, count=1).split()
    if not chunks:
        return False
    if len(chunks) == 1:
        return not _plain_chunk(chunks[0])
    plain = 0
    for c in chunks:
        if _plain_chunk(c):
            plain += 1
            if 2 * plain >= len(chunks):
                return False  # half are words already: typed, whatever the rest are
    return True


@functools.lru_cache(maxsize=_CHUNK_MEMO)
def _plain_chunk(chunk: str) -> bool:
    """Whether a whitespace-separated chunk is a word once its brackets and stops are off: a
    pure function of the chunk, remembered for every line it occurs in."""
    return _PLAIN_CHUNK.fullmatch(chunk.strip(_CHUNK_EDGES)) is not None


def heading_line(line: str) -> bool:
    """A heading, a quoted line, or a list marker standing alone: never an instruction."""
    if _HEADING.match(line) or _QUOTED.match(line):
        return True
    return _LIST_MARKER.sub("", line, count=1).strip(" .):-") == ""


def key_value_line(line: str) -> bool:
    """A ``label: value`` line ("Branch: main", "tests: 412 passed"): a short label of names and
    a short value that does not instruct. One alone may still be a rule ("Tone: friendly"); a
    block of them is a status report or a hand-off brief (see ``prose``)."""
    m = _KEY_VALUE.match(line)
    if m is None:
        return False
    label, rest = m.group(1).lower().strip(), m.group(2)
    names = label.split()
    if names[0] in _INSTRUCTING_LABELS or len(names) > 4:
        return False
    if any(w in lx.STOPWORDS for w in names) or lx.REMINDER.search(label):
        return False  # "Like I said: …", "I write it again: …" introduce a sentence
    first = rest.split()[0].lower().strip("`*\"'.,;:!") if rest.split() else ""
    if first in lx.VERBS or first in lx.NEGATORS or first in ("dont", "do", "please", "always"):
        return False  # "Tests: run them before every push" instructs
    return len(rest.split()) <= _STATUS_VALUE_WORDS


#: Label lines a paragraph needs to be a status block.
_STATUS_BLOCK: Final = 3


def _trailing(line: str) -> bool:
    s = line.rstrip()
    return len(s.split()) <= _CAPTION_CHUNKS or s.endswith(("...", "\u2026"))


@functools.lru_cache(maxsize=_TEXT_MEMO)
def prose(text: str) -> str:
    """The text without pasted material (see the module docstring). Kept lines keep their order
    and paragraph breaks."""
    if "</" in text:
        text = _TAGGED.sub("", text)
    lines = text.splitlines()
    if len(lines) <= 1:
        if output_line(text) or heading_line(text) or _REVIEW_MARK.match(text):
            return ""
        return _without_announced_quotes(text)
    out = [False] * len(lines)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            out[i] = True
            fenced = not fenced
        elif fenced or output_line(line):
            out[i] = True
    paragraphs: list[range] = []
    start = 0
    for end in [*(i for i, s in enumerate(lines) if not s.strip()), len(lines)]:
        if end > start:
            paragraphs.append(range(start, end))
        start = end + 1
    reviewed = False
    for n, para in enumerate(paragraphs):
        marked = any(_REVIEW_MARK.match(lines[i]) for i in para)
        if marked and not reviewed:
            reviewed = True  # a pasted review comment: its title above and all below go
            if n and len(paragraphs[n - 1]) == 1 and len(lines[paragraphs[n - 1][0]].split()) <= 12:
                out[paragraphs[n - 1][0]] = True
        if reviewed:
            for i in para:
                out[i] = True
            continue
        shaped = [i for i in para if out[i] or heading_line(lines[i])]
        if len(shaped) >= _BLOCK_LINES and len(shaped) >= _BLOCK_SHARE * len(para):
            for i in para:
                out[i] = True
            continue
        labels = [i for i in para if not out[i] and key_value_line(lines[i])]
        if len(labels) >= _STATUS_BLOCK and 2 * len(labels) >= len(para):
            for i in labels:
                out[i] = True
        hits = [i for i in para if out[i]]
        if hits:
            first, last = hits[0], hits[-1]
            for i in range(first, last + 1):
                out[i] = True
            if first > para.start and len(lines[first - 1].split()) <= _CAPTION_CHUNKS:
                out[first - 1] = True
            i = last + 1
            while i < para.stop and (_trailing(lines[i]) or lines[i][:1].isspace()):
                out[i] = True
                i += 1
    _quoted_after_colon(lines, paragraphs, out)
    _mostly_pasted(lines, out)
    kept = [line for line, o in zip(lines, out, strict=True) if not o]
    return _without_announced_quotes("\n".join("" if heading_line(line) else line for line in kept))


#: Words that announce a paste ("here is your summary from before:", "pasting the excerpt for
#: reference:"): a long quotation after one is the pasted text, not the user's own words.
_ANNOUNCES_PASTE: Final = re.compile(
    r"\b(?:here(?:'s| is|s)|pasting|pasted|copied|copying|excerpt|for reference|"
    r"(?:this|that) (?:was|is) (?:your|the|their|his|her))\b",
    re.IGNORECASE,
)
_ANNOUNCES_PASTE_LOWER: Final = lowercase_twin(_ANNOUNCES_PASTE)
#: Literals one of which every match of ``_ANNOUNCES_PASTE`` holds, in lower case.
_ANNOUNCING_WORDS: Final = (
    "here",
    "past",
    "copi",
    "copy",
    "excerpt",
    "reference",
    "s you",
    "s the",
)
#: Marks one of which every quotation ``_QUOTATION`` finds holds.
_QUOTE_MARKS: Final = ('"', "\u201c", ": '", ":'", "\n'")
#: A quotation of this many words or more: long enough to be a pasted text, not a quoted rule.
QUOTED_PASTE_WORDS: Final = 8
_QUOTATION: Final = re.compile(
    r"[\"\u201c]([^\"\u201c\u201d]+)[\"\u201d]|(?:(?<=:)|(?<=^))\s*'([^\n]+?)'(?=\s*$)",
    re.MULTILINE,
)


def _without_announced_quotes(text: str) -> str:
    """``text`` without the long quotations that follow a phrase announcing a paste. Said with
    a single quote, only a quotation set off after a colon or alone on its line (a single
    quote is most often an apostrophe)."""
    if not any(q in text for q in _QUOTE_MARKS) and not text.startswith("'"):
        return text
    low = text.lower()
    if not any(w in low for w in _ANNOUNCING_WORDS):
        return text
    announced = (
        _ANNOUNCES_PASTE_LOWER.search(low) if low.isascii() else _ANNOUNCES_PASTE.search(text)
    )
    if announced is None:
        return text
    head, tail = text[: announced.end()], text[announced.end() :]
    return head + _QUOTATION.sub(_quoted_paste, tail)


def _quoted_paste(m: re.Match[str]) -> str:
    quoted = m.group(1) or m.group(2) or ""
    return " " if len(quoted.split()) >= QUOTED_PASTE_WORDS else m.group(0)


#: A message is a paste with an introduction when this many of its lines, and this share of
#: them, are output or headings: only what comes before the first of them was typed.
_PASTE_LINES: Final = 8
_PASTE_SHARE: Final = 0.4


def _mostly_pasted(lines: list[str], out: list[bool]) -> None:
    shaped = [i for i, line in enumerate(lines) if line.strip() and (out[i] or heading_line(line))]
    filled = sum(1 for line in lines if line.strip())
    if len(shaped) >= _PASTE_LINES and len(shaped) >= _PASTE_SHARE * filled:
        for i in range(shaped[0], len(lines)):
            out[i] = True


#: The end of a line that introduces pasted material ("fix this:", "here's the error:").
_INTRODUCES: Final = re.compile(
    r"\b(?:this|these|following|below|here|error|errors|output|log|logs|trace|traceback|says|"
    r"said|comment|comments|message|got|returns|shows|result|results|report|review|feedback|"
    r"bug|issue|diff|snippet|code)\s*:$",
    re.IGNORECASE,
)


def _quoted_after_colon(lines: list[str], paragraphs: list[range], out: list[bool]) -> None:
    """A typed line ending in ":" ("fix this:", "here is the error:") introduces material set
    off below it: later paragraphs that are not lists are pasted, not typed instructions."""
    for n, para in enumerate(paragraphs[:-1]):
        last = lines[para[-1]].rstrip()
        if out[para[-1]] or not _INTRODUCES.search(last):
            continue
        for later in paragraphs[n + 1 :]:
            if all(_LIST_MARKER.match(lines[i]) for i in later):
                break  # "Ground rules:" then a list of them
            for i in later:
                out[i] = True
        return


def _protect(text: str) -> str:
    """The stops of abbreviations hidden (``\\x00``), so that they end no sentence: as
    ``_ABBREVIATIONS`` finds them, looked for only before the stops followed by a space (a scan
    of the pattern tries its alternation at every character of a long text, a summary). A text
    that does not lower-case in place (``twins.lowers_in_place``) is searched by the pattern."""
    if not lowers_in_place(text):
        return _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), text)
    low = text.lower()
    out: list[str] = []
    at = 0
    for m in _STOP_SPACE.finditer(text):
        start = _abbreviated_before(text, low, m.start(), at)
        if start >= 0:
            out.append(text[at:start])
            out.append(text[start : m.end()].replace(".", "\x00"))
            at = m.end()
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


def _abbreviated_before(text: str, low: str, stop: int, since: int) -> int:
    """Where an abbreviation ending at ``stop`` begins, at a word's start and not before
    ``since`` (the earliest, as a scan finds it), or -1."""
    for n in _ABBREVIATED_LENGTHS:
        start = stop - n
        if start < since or low[start:stop] not in _ABBREVIATED_SET:
            continue
        if low[start:stop] in _BEFORE_A_NUMBER_SET and not _NUMBER_NEXT.match(text, stop + 1):
            continue
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            return start
    return -1


@functools.lru_cache(maxsize=_TEXT_MEMO)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences and list items, then clauses at ``;``, dashes and a colon before lower case.

    Abbreviations (``Dr.``, ``e.g.``) do not end a sentence; dotted names (``a.b``) and decimals
    never do, because a split needs whitespace after the stop.
    """
    return tuple(piece for piece, _ in pieces(text))


@functools.lru_cache(maxsize=_TEXT_MEMO)
def pieces(text: str) -> tuple[tuple[str, bool], ...]:
    """``sentences`` with, for each, whether the sentence it was cut from asks a question
    ("Rule 3, no gradients - does that cover print too?")."""
    return pieces_of_normalised(normalise(text))


def _clause_ends(item: str) -> list[str]:
    """``_CLAUSE_END.split(item)``; each of its cuts needs a ";", a ":" or a "-" just after
    whitespace, which most items lack (a hyphen inside a word is none), and then the item is one
    piece with no scan."""
    if ";" in item or ":" in item or ("-" in item and _dash_after_space(item)):
        return _CLAUSE_END.split(item)
    return [item]


def _dash_after_space(item: str) -> bool:
    """Whether a "-" of ``item`` follows a whitespace character, as ``_CLAUSE_END``'s dash does."""
    if " -" in item:
        return True
    at = item.find("-")
    while at >= 0:
        if at and item[at - 1].isspace():
            return True
        at = item.find("-", at + 1)
    return False


#: "How many times do I have to say it", "is it really that hard to": a question that asks
#: nothing, so it is a sentence of its own even unpunctuated, and what follows it is not asked
#: ("how many times do I have to say this the API goes through the breaker").
_RHETORICAL: Final = re.compile(
    r"\b(how many (?:more )?times (?:(?:do|does|must|will|should|did) (?:i|we) (?:have to |need to "
    r"|got to |gotta )?(?:say|tell you|tell|ask(?: you)?(?: for)?|repeat|explain|mention)|have "
    r"(?:i|we) (?:told you|said|asked(?: you)?(?: for)?|mentioned))(?: (?:it|this|that))?|"
    # "Is it really that hard to …": the demand follows.
    r"(?:is it|how) (?:really |so |that |actually )*hard (?:is it )?to)"
    r"[\s,:;.!?-]*(?=\w)",
    re.IGNORECASE,
)


def pieces_of_normalised(body: str) -> tuple[tuple[str, bool], ...]:
    """``pieces`` of a text already through ``normalise`` (a long summary is normalised once
    for its pieces and its flat form)."""
    out: list[tuple[str, bool]] = []
    if "1." in body and _DOTTED_NUMBER.search(body):  # every match holds "1."
        body = "\n".join(_numbered_inline(line) for line in body.split("\n"))
    if "many times" in body or "hard" in body or "MANY TIMES" in body or "HARD" in body:
        body = _RHETORICAL.sub(r"\1? ", body)
    for part in _sentence_split(_protect(body)):
        part = _LIST_MARKER.sub("", part, count=1)
        asks = part.rstrip(" \"')*").endswith("?")
        for item in _items(part):
            for piece in _clause_ends(item):
                piece = piece.replace("\x00", ".").strip().strip("\"'-:,*_").strip()
                if piece and any(ch.isalpha() for ch in piece):
                    out.append((piece, asks))
    return tuple(out)


#: Where a match of ``_SENTENCE_END`` may start: after a stop, or at a line break.
_STOP_OR_BREAK: Final = re.compile(rf"[.!?\n{_EMOJI}]")


def _sentence_split(text: str) -> list[str]:
    """``_SENTENCE_END.split(text)``, the pattern tried only where a match can start: just
    after a stop (its look-behind) or at a line break. A scan tries the look-behind at every
    character; a text has few stops, and a search for them skips to each."""
    out: list[str] = []
    inline: list[bool] = []  # no line break in the cut after each part
    at, tried = 0, -1
    run = one_before = False  # a run of one-word sentences; the last part one, cut inline
    for stop in _STOP_OR_BREAK.finditer(text):
        start = stop.start() if stop.group() == "\n" else stop.end()
        if start < at or start == tried:
            continue  # inside the last match, or tried already
        tried = start
        m = _SENTENCE_END.match(text, start)
        if m is not None:
            part = text[at : m.start()]
            out.append(part)
            inline.append("\n" not in m.group())
            one = _one_word(part)
            run = run or (one and one_before)
            one_before = one and inline[-1]
            at = m.end()
    last = text[at:]
    out.append(last)
    if (run or (one_before and _one_word(last))) and len(out) > 2:
        return _unstressed(out, inline)
    return out


#: Stops between single words that stress each one ("Do. Not. Push."): this many in a row.
STRESSED_RUN: Final = 2
#: Words of the sentence that may close such a run ("Never. Rebase. On a Friday.").
STRESSED_TAIL_WORDS: Final = 4


def _unstressed(parts: list[str], inline: list[bool]) -> list[str]:
    """``parts`` with each run of one-word sentences on one line ("NEVER. MERGE. ON FRIDAYS.",
    "under. 100. words.") joined into the sentence the stops cut for stress, with a short
    sentence that closes it. Read apart, the words are fragments: "NEVER." says nothing of
    what, and the rest reads as told without it (``inline[i]``: no line break after part i).
    Called for texts of three sentences or more: two one-word sentences alone ("OK. Thanks.")
    stay two."""
    out: list[str] = []
    i, n = 0, len(parts)
    while i < n:
        j = i
        while j < n and _one_word(parts[j]) and (j == i or inline[j - 1]):
            j += 1
        if j - i < STRESSED_RUN:
            out.append(parts[i])
            i += 1
            continue
        if j < n and inline[j - 1] and len(parts[j].split()) <= STRESSED_TAIL_WORDS:
            j += 1
        out.append(" ".join(p.rstrip(".") for p in parts[i:j]) + ".")
        i = j
    return out


def _one_word(part: str) -> bool:
    """A sentence of one word ended by one stop (not an ellipsis)."""
    return part.endswith(".") and not part.endswith("..") and " " not in part.strip()


#: "1. " inside a line, as in "rules: 1. no logos 2. no emojis".
_DOTTED_NUMBER: Final = re.compile(r"(?:^|\s)1\.\s")
_DOTTED: Final = re.compile(r"(?:^|(?<=\s))(\d{1,2})\.(?=\s)")


def _counts_up(numbers: list[int]) -> bool:
    """Whether item numbers found in a line are a list: two or more, each one more than the last."""
    return len(numbers) >= 2 and numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def _numbered_inline(line: str) -> str:
    """A line numbering its items "1. … 2. …" with them written "1) … 2) …", so that the
    numbers' stops do not end sentences. Only numbers counting up from one are items; "set it
    to 3. Then …" ends a sentence."""
    if "1." not in line and line.isascii():
        return line  # no list starts at one here, and a summary has many such lines
    numbers = [int(m.group(1)) for m in _DOTTED.finditer(line)]
    if not _counts_up(numbers) or numbers[0] != 1:
        return line
    return _DOTTED.sub(lambda m: m.group(1) + ")", line)


def _items(part: str) -> list[str]:
    """A line that lists rules inline, cut into its items: at item numbers that count up
    ("1) … 2) …", or "4) … 5) …" continuing a list), and at commas after a label that
    announces a list ("seasonal rules: halloween out by nov 1, xmas in by nov 3"). Each item
    binds on its own, and a later message restates one of them, not the line."""
    # Every item number is a digit and a stop or bracket before a space: most lines have none.
    numbers = list(_INLINE_NUMBER.finditer(part)) if _ITEM_NUMBER.search(part) else []
    if _counts_up([int(m.group(1)) for m in numbers]):
        cuts = [0, *(m.start() for m in numbers), len(part)]
        items = [part[a:b] for a, b in itertools.pairwise(cuts)]
        return [_INLINE_NUMBER.sub("", it, count=1).strip(" ,;") for it in items]
    if ":" not in part:
        return [part]  # no label announces a list: its colon is missing
    ascii_ = part.isascii()
    head = (_LIST_HEAD_LOWER if ascii_ else _LIST_HEAD).match(part.lower() if ascii_ else part)
    if head is None:
        return [part]
    rest = [
        it for it in _LIST_COMMA.split(part[head.start("rest") : head.end("rest")]) if it.strip()
    ]
    if len(rest) < 2:
        return [part]
    return [part[head.start("head") : head.end("head")], *rest]


#: Unpunctuated, a second subject with a negated verb opens a clause of its own: "dont add
#: the camera we dont want it recorded", "dont book repairs on fridays theres no one in". Its
#: negation is not the request's.
_NEGATED_VERB: Final = (
    r"don'?t|do not|never|can'?t|cannot|won'?t|didn'?t|doesn'?t|aren'?t|isn'?t|wasn'?t"
)
_RUN_ON: Final = re.compile(
    rf"(?<=\w)\s+(?=(?:(?:we|i|they|he|she)\s+(?:{_NEGATED_VERB})|"
    r"there(?:'?s| is) (?:no|not))\b)",
    re.IGNORECASE,
)
#: What every cut of ``_RUN_ON`` is followed by: searched first, without the look-behind that
#: would run at every character, and only in a sentence holding "nt", "n't", " no", "never" or
#: "cannot", one of which each of its negations holds.
_RUN_ON_MARK: Final = re.compile(
    rf"\b(?:we|i|they|he|she|there)(?:\s+|'?s\s+)(?:{_NEGATED_VERB}|is no|is not|no|not)\b",
    re.IGNORECASE,
)
_RUN_ON_MARK_LOWER: Final = lowercase_twin(_RUN_ON_MARK)


def _run_on(sentence: str) -> list[str]:
    """``sentence`` cut before each unpunctuated negated clause of a new subject (``_RUN_ON``),
    after a request of three words or more; not after a frame ("when the dog is home we don't
    …"), which the clause it frames keeps."""
    out: list[str] = []
    start = 0
    for m in _RUN_ON.finditer(sentence):
        before = sentence[start : m.start()].split()
        if len(before) < _NEGATED_AFTER or before[-1].lower() in _JOINED_BEFORE:
            continue
        if not out and before[0].lower() in _FRAME_OPENERS:
            return [sentence]
        out.append(sentence[start : m.start()])
        start = m.end()
    out.append(sentence[start:])
    return out


@functools.lru_cache(maxsize=_TEXT_MEMO)
def clauses(sentence: str) -> tuple[str, ...]:
    """A sentence's clauses when it has several (a contrast, a reason, a second subject or
    request); the sentence alone otherwise. A leading frame ("For the app, never …") stays on."""
    ascii_ = sentence.isascii()
    low = sentence.lower()
    if ("nt" in low or "n't" in low or " no" in low or "never" in low or "cannot" in low) and (
        _RUN_ON_MARK_LOWER.search(low) if ascii_ else _RUN_ON_MARK.search(sentence)
    ) is not None:
        runs = _run_on(sentence)
        if len(runs) > 1:
            return tuple(c for r in runs for c in clauses(r))
    if ascii_:
        if _MAY_SPLIT_LOWER.search(low) is None:
            return (sentence,)
        split = _cut_at(sentence, _CLAUSE_COMMA_LOWER.finditer(low))
    else:
        if _MAY_SPLIT.search(sentence) is None:
            return (sentence,)
        split = _CLAUSE_COMMA.split(sentence)
    pieces = [q for p in split for q in _second_requests(p.strip(" ,"))]
    pieces = [r for p in pieces for r in _dictated(p)]
    pieces = [p for p in pieces if any(ch.isalpha() for ch in p)]
    if len(pieces) < 2:
        return (sentence,)
    first = pieces[0].split()[0].lower() if pieces[0].split() else ""
    if first in _FRAME_OPENERS and len(pieces) == 2:
        return (sentence,)
    return tuple(pieces)


#: The words of a span that are read (``units.MAX_WORDS``).
SPAN_WORDS: Final = 48
#: A piece longer than a span, with no comma to cut it, was said in one breath (dictated, or
#: typed as speech): it is cut at each joining word, so that a request in its tail is read as
#: a span of its own rather than lost past the span's last word.
_JOINS: Final = re.compile(r"\s+(?:and|so|but|then|which|because)\s+(?=\w)", re.IGNORECASE)


def _dictated(piece: str) -> list[str]:
    """``piece`` cut at its joining words when it holds more words than a span reads."""
    if piece.count(" ") < SPAN_WORDS - 1:
        return [piece]
    return [p for p in _JOINS.split(piece) if p]


_AND_TEXT: Final = (
    r",\s+(?:and\s+)?(?:then\s+|also\s+)?(?=(\w+))|\s+and\s+(?=(?:always|never)\s+(\w+))|"
    r"\s+(?:and|so)\s+(?:then\s+|also\s+)?(?=(\w+))"
)
_AND: Final = re.compile(_AND_TEXT, re.IGNORECASE)
_AND_LOWER: Final = lowercase_twin(_AND)
#: The same, and unpunctuated, a negated request after a noun opens its own ("… should be v2
#: don't use …"): only for pieces that hold a negator (``_NEGATED_MARKS``).
_AND_NEGATED: Final = re.compile(
    _AND_TEXT + r"|\s+(?=(?:do not|don't|dont|never)\s+(\w+))", re.IGNORECASE
)
_AND_NEGATED_LOWER: Final = lowercase_twin(_AND_NEGATED)
_NEGATED_MARKS: Final = ("do not", "don't", "dont", "never")
#: Words before which a negator negates their own clause: a subject ("we never", "it doesn't").
_NOT_NEW: Final = lx.STOPWORDS | lx.SUBJECT_OPENERS | lx.AUXILIARIES
#: Words after which a subject is already joined to what it follows ("so we don't", "the one
#: we don't use", "because there's no …"): no run-on clause opens there (``_run_on``).
_JOINED_BEFORE: Final = (
    _NOT_NEW
    | lx.word_set("because since unless though although whether cause cuz coz cos bc")
    # words that take a clause without "that" ("no reason we can't", "I think we don't")
    | lx.word_set("reason need way why fact think guess hope mean say said know knew believe feel")
)


def _cut_at(text: str, matches: Iterator[re.Match[str]]) -> list[str]:
    """``text`` cut at ``matches`` (of a pattern without groups, none empty) as ``re.split``
    cuts it: the matches of a twin in the lower-cased text (same places) cut the text as
    written."""
    out: list[str] = []
    at = 0
    for m in matches:
        out.append(text[at : m.start()])
        at = m.end()
    out.append(text[at:])
    return out


#: Verbs that are mostly adjectives in a list ("short, clear and friendly").
_ADJECTIVE_VERBS: Final = frozenset(
    {
        "clear",
        "clean",
        "close",
        "open",
        "round",
        "double",
        "free",
        "light",
        "mark",
        "plan",
        "sort",
        "end",
        "point",
        "order",
    }
)


def _second_requests(piece: str) -> list[str]:
    """A piece split before "and <verb>": "book the slots and leave 15 minutes between them"
    holds two requests. So does a comma before the piece's own opening verb, told again
    (``_opening_verb``), whether or not the lexicon knows it."""
    out: list[str] = []
    start = 0
    ascii_ = piece.isascii()  # then searched lower-cased by the twin: the same places
    own = _opening_verb(piece)
    low = piece.lower()
    if any(n in low for n in _NEGATED_MARKS):
        pattern = _AND_NEGATED_LOWER if ascii_ else _AND_NEGATED
    else:
        pattern = _AND_LOWER if ascii_ else _AND
    for m in pattern.finditer(low if ascii_ else piece):
        negated = m.group(4) if m.re.groups > 3 else None
        if negated:
            before = piece[start : m.start()].split()
            if len(before) < _NEGATED_AFTER or before[-1].lower() in _NOT_NEW:
                continue
        word = str(m.group(1) or m.group(2) or m.group(3) or negated).lower()
        if (
            (word in lx.VERBS and word not in _ADJECTIVE_VERBS) or word == own
        ) and m.start() > start:
            out.append(piece[start : m.start()])
            start = m.end()
    out.append(piece[start:])
    return [p.strip(" ,") for p in out]


#: Words a piece needs before an unpunctuated negated request to be cut from it.
_NEGATED_AFTER: Final = 3

#: Words a request may open with before its verb ("don't", "never", "please").
_BEFORE_THE_VERB: Final = lx.NEGATING_OPENERS | {"please", "pls", "always"}


def _opening_verb(piece: str) -> str:
    """The word a request opens with, past "don't", "never", "please": told again after a
    comma it opens a second request ("don't cache X, cache Y instead"), whatever the verb."""
    for w in piece.split()[:3]:
        low = w.lower()
        if low not in _BEFORE_THE_VERB:
            # A subject ("I will …, I will …") or a function word opens no request.
            if low in lx.SUBJECT_OPENERS or low in lx.STOPWORDS or not low.isalpha():
                return ""
            return low
    return ""


def cache_clear() -> None:
    for fn in (prose, sentences, pieces, clauses, _plain_chunk):
        fn.cache_clear()
