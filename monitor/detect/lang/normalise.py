"""From raw text to comparable words: one normal form, contractions expanded, values canonical.

People type the same instruction many ways: curly or straight quotes, "don't" or "dont",
"10k" or "10,000", "02:30" or "2:30", "colour" or "color", "DB" or "database". Everything that
compares texts reads them through ``words`` and ``key``, so these spellings meet.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Final

from monitor.detect.lang import lexicon as lx
from monitor.detect.lang.literals import may_match
from monitor.detect.lang.twins import lowercase_twin, lowers_in_place, sub_as_written

_QUOTES: Final = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": " - ",
        "\u00a0": " ",
        "\u2009": " ",
        "\u2026": "...",
    }
)
#: A comma between digits before three more. The comma is matched first and the digit before it
#: looked back at, so a scan only stops at commas (a text has few) rather than at every digit.
_THOUSANDS: Final = re.compile(r",(?<=\d,)(?=\d{3}\b)")
_CONTRACTION: Final = re.compile(
    r"\b(can)'t\b|\b(can)not\b|\b(wo)n't\b|\b(sha)n't\b|(\w)n't\b|\b(ai)n't\b|"
    r"\b(it|that|what|there|here|where|who|how)'s\b|\b(let)'s\b|'(re|ve|ll|d|m|s)\b",
    re.IGNORECASE,
)
_EXPANDED: Final = {"re": " are", "ve": " have", "ll": " will", "d": " would", "m": " am", "s": ""}
#: ``_CONTRACTION`` without ``re.IGNORECASE``, for an ASCII text lower-cased (``twins``).
_CONTRACTION_LOWER: Final = lowercase_twin(_CONTRACTION)

#: The kinds of word, in the order they are tried: code in backticks, a URL, a tag, a path, an
#: option, a number with its unit, a run of letters.
_CODE: Final = r"`[^`\n]{1,80}`"
_URL: Final = r"(?:[A-Za-z][A-Za-z0-9+.-]{0,15}://|www\.)\S+?(?=[.,;:!?)\]]*(?:\s|$))"
_TAG: Final = r"[#@][A-Za-z0-9_]+"
_PATH: Final = r"[A-Za-z0-9_~.$%@#+-]*[/\\][\w./\\~$%@#+-]*\w"
_NUMBER: Final = r"\$?\d+(?:[.:]\d+)*(?:%|[a-zA-Z]{1,3}\b)?"
#: A command-line option ("--dry-run"): a name, read whole with its dashes.
_OPTION: Final = r"(?<![\w-])--[A-Za-z][\w-]*\w"
_LETTERS: Final = r"[A-Za-z][\w'+#-]*[\w+#]|[A-Za-z]"
#: A word: code in backticks, a path or URL, an option, a number with its unit, or a run of
#: letters.
_WORD: Final = re.compile("|".join((_CODE, _URL, _TAG, _PATH, _OPTION, _NUMBER, _LETTERS)))
#: ``_WORD`` for a text without "/", "\\" or "www.": a URL and a path need one of them, so there
#: the two find the same words, and this one does not try (and backtrack through) two branches
#: that fail at every word.
_WORD_PLAIN: Final = re.compile("|".join((_CODE, _TAG, _OPTION, _NUMBER, _LETTERS)))
_NUMBER_UNIT: Final = re.compile(r"^\$?(\d+(?:\.\d+)?)(%|[a-z]{1,3})?$")
_TIME: Final = re.compile(r"^(\d{1,2}):(\d{2})$")
#: A time of day on the 12-hour clock ("8pm", "8:30am"), read as the 24-hour one.
_CLOCK12: Final = re.compile(r"^(\d{1,2})(?::(\d{2}))?([ap])m$")
#: A 12-hour time written apart ("6 pm", "6:30 p.m."): joined into one word ("6pm"), which
#: ``value`` reads as "18:00" like the time written together. A stop after the "m" is left
#: where it is: it may end the sentence ("at 6 pm. Then …").
_SPACED_CLOCK: Final = re.compile(r"\b(\d{1,2}(?::\d{2})?)\s+([ap])\.?m\b", re.IGNORECASE)
#: What a time written apart holds: a space and "am" or "pm" in any case, dotted or not. Looked
#: for in the lower-cased text: no character but these and their capitals lower-cases to a
#: space, "a", "m", "p" or ".", so the lower case holds one exactly when the text holds one of
#: their spellings in any case (four tests where the spellings are sixteen).
_CLOCK_MARKS: Final = (" am", " a.m", " pm", " p.m")
#: Two plain words joined by a slash ("dev/test", "and/or"), not a path.
_WORD_PAIR: Final = re.compile(r"^[A-Za-z]{2,12}/[A-Za-z]{2,12}$")
#: "90 percent" is "90%"; "version no. 3" is "version number 3" (not a "no").
_PERCENT: Final = re.compile(r"(\d)\s*(?:percent|per cent|pct)\b", re.IGNORECASE)
_NUMBER_ABBREVIATION: Final = re.compile(
    r"\b(?:no|nr)\.(?=\s*\d)|\b(version|item|invoice|page|order|account|ticket|model|serial|"
    r"phone|issue|case|policy|claim|room|unit|lot|batch|part) no\.",
    re.IGNORECASE,
)
_CODE_SHAPE: Final = re.compile(r"[\d_/.#@\\]|[a-z][A-Z]")
#: A number in digits with its scale in words: "2 million" is "2m", as "2M" is read.
_SCALED: Final = re.compile(r"\b(\d+(?:\.\d+)?)\s*(thousand|million|billion)\b", re.IGNORECASE)
#: A number of minutes written short: "10 min" is "10 minutes" ("min" alone is a minimum).
_MINUTES: Final = re.compile(r"\b(\d+(?:\.\d+)?)\s*mins?\b", re.IGNORECASE)
_SCALE_SUFFIX: Final = {"thousand": "k", "million": "m", "billion": "bn"}
#: A decimal written without its leading zero: ".5" is "0.5". The stop comes first and the
#: character before it is tested behind it (the same matches as ``(?<![\w.])\.(?=\d)``), so
#: the search skips to each stop instead of trying a look-behind at every character.
_BARE_DECIMAL: Final = re.compile(r"\.(?<![\w.]\.)(?=\d)")

#: Memo sizes: pure functions of a string; the bounds only cap memory.
_WORD_MEMO: Final = 32768
_TEXT_MEMO: Final = 4096


_SMALL: Final = {w: n for w, n in lx.NUMBER_WORDS.items() if n < 20}
_TENS: Final = {w: n for w, n in lx.NUMBER_WORDS.items() if 20 <= n < 100 and n % 10 == 0}
_SCALES: Final = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMBER_WORD: Final = "|".join(sorted({*_SMALL, *_TENS, *_SCALES}, key=len, reverse=True))
#: Numbers spelled in several words ("twenty-five", "a hundred and twenty") and a number word
#: joined to its unit ("two-minute"). One word alone is read by ``units`` already.
_SPELLED: Final = re.compile(
    rf"\b(?:an?\s+)?(?:{_NUMBER_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_NUMBER_WORD}))+\b"
    rf"|\b(?:{_NUMBER_WORD})-(?!(?:first|second|third|[a-z]+th)\b)(?=[a-z]{{2,}}\b)",
    re.IGNORECASE,
)
_NUMBER_WORDS: Final = frozenset({*_SMALL, *_TENS, *_SCALES})


def _may_spell(text: str) -> bool:
    """A cheap test before ``_SPELLED`` runs: two number words, or one beside a hyphen."""
    low = text.lower()
    hyphen = "-" in low
    ws = (low.replace("-", " ") if hyphen else low).split()
    found = _NUMBER_WORDS.intersection(ws)  # one pass in C; most texts have none
    if not found:
        return False
    return hyphen or len(found) > 1 or ws.count(next(iter(found))) > 1


def _spelled(m: re.Match[str]) -> str:
    """The digits of a spelled number, or the text unchanged when the words do not make one
    number ("one two three", "two and three")."""
    text = m.group(0)
    if text.endswith("-"):
        word = text[:-1].lower()
        if word in _SCALES or word == "one" or word not in lx.NUMBER_WORDS:
            return text  # "one-off", "hundred-year" stay words
        return f"{lx.NUMBER_WORDS[word]} "
    tokens = re.split(r"\s+|-", text.lower())
    if tokens[0] in ("a", "an"):
        tokens[0] = "one"
    total = current = 0
    prev = ""
    for t in tokens:
        if t == "and":
            if prev not in ("hundred", "thousand"):
                return text
        elif t in _SMALL:
            if prev in _SMALL or (prev in _TENS and _SMALL[t] >= 10):
                return text
            current += _SMALL[t]
        elif t in _TENS:
            if prev in _SMALL or prev in _TENS:
                return text
            current += _TENS[t]
        elif t == "hundred":
            if prev not in _SMALL:
                return text
            current *= 100
        else:  # thousand, million
            if not prev or prev == "and" or t not in _SCALES:
                # A word the case-blind pattern took for a number word ("six" with a
                # dotless i matches it) is none: the text stays as written.
                return text
            total += current * _SCALES[t]
            current = 0
        prev = t
    return str(total + current)


def _spell_numbers(text: str) -> str:
    """``_SPELLED.sub(_spelled, text)``, the pattern tried only where a match can start.

    A scan tries the pattern's alternation of number words at every character, which in a long
    text (a summary) costs more than the rest of ``normalise``. A match starts at a number word
    or at the "a" or "an" just before one and its spaces, so the number words' places in the
    lower-cased text (``twins.lowers_in_place``) are the only starts to try, in order, each past
    the last match, as the scan takes them."""
    if not lowers_in_place(text):
        return _SPELLED.sub(_spelled, text)
    low = text.lower()
    starts: set[int] = set()
    for word in _NUMBER_WORDS:
        at = low.find(word)
        while at >= 0:
            starts.update(_starts_before(text, low, at))
            at = low.find(word, at + 1)
    out: list[str] = []
    done = 0
    for at in sorted(starts):
        m = _SPELLED.match(text, at) if at >= done else None
        if m is not None:
            out.append(text[done:at])
            out.append(_spelled(m))
            done = m.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _starts_before(text: str, low: str, at: int) -> tuple[int, ...]:
    """Where a ``_SPELLED`` match holding the number word at ``at`` may start: at the word,
    when no word character is before it, or at "a" or "an" before it and its spaces."""
    if at and (text[at - 1].isalnum() or text[at - 1] == "_"):
        return ()
    space = at
    while space and text[space - 1].isspace():
        space -= 1
    if space == at:
        return (at,)
    if low.endswith("an", 0, space):
        return (at, space - 2)
    return (at, space - 1) if low.endswith("a", 0, space) else (at,)


#: The quotes, dashes and spaces ``_QUOTES`` straightens, with what each becomes.
_STRAIGHT: Final = tuple((chr(c), str(to)) for c, to in _QUOTES.items())


def _straightened(text: str) -> str:
    """``text.translate(_QUOTES)``: each mark replaced in turn, a scan in C, where ``translate``
    looks every character of a text up in a table one at a time (a long summary's dominant cost
    in ``normalise``). The same text, since no replacement holds a mark."""
    for mark, to in _STRAIGHT:
        if mark in text:
            text = text.replace(mark, to)
    return text


#: Words one of which a match of ``_PERCENT`` holds, and of ``_NUMBER_ABBREVIATION``.
_PERCENT_WORDS: Final = ("percent", "per cent", "pct")
_ABBREVIATED_NUMBER: Final = ("no.", "nr.")


def _holds(text: str, needles: tuple[str, ...]) -> bool:
    """Whether the lower-cased text holds one of ``needles`` (lower case, none of the letters
    ``twins.FOLDED_APART`` stand for): a test before a pattern ignoring case scans a whole text
    for them. ``literals.may_match`` on the lower case: ``literals.needed`` reads no literals
    off a case-blind pattern, so these are written out."""
    return may_match(text.lower(), needles)


def without_thousands(text: str) -> str:
    """The text with no thousands separator in its numbers ("12,000" is "12000")."""
    return _THOUSANDS.sub("", text) if "," in text else text


def _swaps(word: str, last: bool = False) -> set[str]:
    """Two neighbouring letters swapped in ``word``; its last two only with ``last``: for a
    verb, "summarise" / "summaries", "centre" / "center" are words or spellings of their own."""
    ends = len(word) - (1 if last else 2)
    return {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(ends)} - {word}


def _slips(word: str) -> set[str]:
    """The common slips of the keyboard in ``word``: two neighbouring letters swapped, a letter
    typed twice, and in a word of six letters or more one letter after the first dropped (the
    edits ``pairs._typo`` allows, less substitutions, which too often make another word: "times"
    / "tiles")."""
    out = _swaps(word, last=True)
    if len(word) >= 5:
        out |= {word[:i] + word[i] + word[i:] for i in range(1, len(word))}
    if len(word) >= 6:
        out |= {word[:i] + word[i + 1 :] for i in range(1, len(word))}
    out.discard(word)
    return out


#: Each slip of a cue word, with the word.
CUE_SLIPS: Final = {
    slip: w
    for w in sorted(lx.CUE_WORDS)
    for slip in sorted(_slips(w))
    if slip not in lx.SLIPS_THAT_ARE_WORDS and slip not in lx.CUE_WORDS
}
#: Each slip of a request's verb of five letters or more, two letters swapped ("exlcude",
#: "scheudle"): its first word tells what the span does. Only swaps: a dropped or doubled
#: letter makes other words of verbs too often ("create" / "crate").
VERB_SLIPS: Final = {
    slip: w
    for w in sorted(lx.VERBS)
    if len(w) >= 5
    for slip in sorted(_swaps(w))
    if slip not in lx.SLIPS_THAT_ARE_WORDS and slip not in lx.VERBS and slip not in CUE_SLIPS
}
#: Every slip mended, with the word it stands for.
SLIPS: Final = {**VERB_SLIPS, **CUE_SLIPS}
#: The slips as bytes, and a table that turns every byte but a letter into a space: an ASCII
#: text's words, lower-cased, are found by ``bytes.translate`` and ``split`` in C.
_SLIPS_BYTES: Final = frozenset(k.encode() for k in SLIPS)
_LETTERS_ONLY: Final = bytes(
    c if chr(c).isascii() and chr(c).isalpha() else ord(" ") for c in range(256)
).lower()
_SLIPPED_WORD: Final = re.compile(r"[^\W\d_]+")


def slips_mended(text: str) -> str:
    """``text`` with each cue word or request verb typed with a slip spelled as it should be
    ("like i mentoined" as "like i mentioned", "exlcude" as "exclude"), so the reminder and
    annoyance phrases find it, a request is read as one, and the slip is not read as a content
    word. Most texts hold no slip: one set test tells."""
    if text.isascii():
        if _SLIPS_BYTES.isdisjoint(text.encode().translate(_LETTERS_ONLY).split()):
            return text
    elif SLIPS.keys().isdisjoint(w.lower() for w in _SLIPPED_WORD.findall(text)):
        return text
    return _SLIPPED_WORD.sub(_mended, text)


def _mended(m: re.Match[str]) -> str:
    typed = m.group()
    right = SLIPS.get(typed.lower())
    if right is None:
        return typed
    return right.upper() if typed.isupper() else right.capitalize() if typed[0].isupper() else right


def normalise(text: str) -> str:
    """NFKC, straight quotes and dashes, no thousands separators, spelled numbers in digits,
    a scale in words onto its number ("2 million" as "2m"), minutes written out ("10 min" as
    "10 minutes"), a leading zero on bare decimals."""
    if not text.isascii():
        if not unicodedata.is_normalized("NFKC", text):  # a quick check, most often enough
            text = unicodedata.normalize("NFKC", text)
        text = _straightened(text)
    text = without_thousands(text)
    if _may_spell(text):
        text = _spell_numbers(text)
    if ("per" in text or "pct" in text) and _holds(text, _PERCENT_WORDS):
        text = _PERCENT.sub(r"\1%", text)
    if "illion" in text or "housand" in text:
        text = _SCALED.sub(lambda m: m.group(1) + _SCALE_SUFFIX[m.group(2).lower()], text)
    if "min" in text or "MIN" in text:
        text = _MINUTES.sub(r"\1 minutes", text)
    if "." in text:
        text = _BARE_DECIMAL.sub("0.", text)
    if may_match(text.lower(), _CLOCK_MARKS):
        text = _SPACED_CLOCK.sub(lambda m: f"{m.group(1)}{m.group(2).lower()}m", text)
    if ("o." in text or "O." in text or "r." in text) and _holds(text, _ABBREVIATED_NUMBER):
        text = _NUMBER_ABBREVIATION.sub(lambda m: f"{m.group(1) or ''} number".lstrip(), text)
    return text


def _expanded(branch: int, written: str) -> str:
    """What a contraction stands for, by the branch of ``_CONTRACTION`` that matched it (each
    branch holds one group, so the last group matched names it) and that group as written."""
    if branch <= 2 or branch == 5:
        return written + " not"
    if branch == 3:
        return "will not"
    if branch == 4:
        return "shall not"
    if branch == 6:
        return "is not"
    if branch == 7:
        return written + " is"
    if branch == 8:
        return "let us"
    found = _EXPANDED.get(written.lower())
    if found is None:  # a letter the case-blind pattern matched that NFKC makes ASCII (long s)
        found = _EXPANDED[unicodedata.normalize("NFKC", written).lower()]
    return found


def _expand(m: re.Match[str]) -> str:
    branch = m.lastindex or 0
    return _expanded(branch, m.group(branch))


def expand_contractions(text: str) -> str:
    """``don't`` -> ``do not``, ``it's`` -> ``it is``; bare forms (``dont``) are words' work.

    An ASCII text is searched lower-cased by the pattern's twin (same length, so the same
    places), the groups read back as written: a case-blind scan costs a fold at every step."""
    if "'" not in text and "cannot" not in text.lower():
        return text
    if not text.isascii() or _CONTRACTION_LOWER is _CONTRACTION:
        return _CONTRACTION.sub(_expand, text)
    return sub_as_written(_CONTRACTION_LOWER, text, text.lower(), _expand_as_written)


def _expand_as_written(m: re.Match[str], text: str) -> str:
    """``_expand`` of a twin's match in the lower-cased text, its group read as written."""
    branch = m.lastindex or 0
    start, end = m.span(branch)
    return _expanded(branch, text[start:end])


@functools.lru_cache(maxsize=_TEXT_MEMO)
def raw_words(text: str) -> tuple[str, ...]:
    """The words of a text as written (case kept), contractions expanded, bare ones too."""
    body = expand_contractions(normalise(text))
    if "`" not in body:
        # No code, the one word that may hold a space: each whitespace-separated chunk is read
        # on its own (no word crosses one, and a space is no word character), and chunks recur
        # far more than texts.
        return tuple(itertools.chain.from_iterable(map(_chunk_words, body.split())))
    if "://" not in body and "www." not in body:
        return _around_code(body)  # code, but no URL: the same chunks between the code
    return _words_of(body)  # a URL may hold a backtick: the whole pattern decides


#: Code in backticks alone (``_WORD``'s first kind).
_CODE_ALONE: Final = re.compile(_CODE)


def _around_code(body: str) -> tuple[str, ...]:
    """``raw_words``' words of a text with code but no URL: each piece of code where
    ``_CODE_ALONE`` finds it, and the text between read chunk by chunk (``_chunk_words``).

    Without a URL no word but code holds a backtick, so the whole pattern tries code at every
    backtick it reaches, and reaches every one outside code; it finds the code a search for
    code alone finds. Between two pieces no word crosses a space, and a word that ends at a
    backtick ends there as at a text's end (a path's last letter, a number's unit)."""
    out: list[str] = []
    at = 0
    for m in _CODE_ALONE.finditer(body):
        out.extend(itertools.chain.from_iterable(map(_chunk_words, body[at : m.start()].split())))
        out.extend(_forms(m.group(0)))
        at = m.end()
    out.extend(itertools.chain.from_iterable(map(_chunk_words, body[at:].split())))
    return tuple(out)


def _words_of(body: str) -> tuple[str, ...]:
    """``raw_words``' words of a text already normalised, by the whole pattern."""
    out: list[str] = []
    for m in _WORD.finditer(body):
        w = m.group(0)
        if _WORD_PAIR.match(w) and not body.startswith("/", m.end()):
            out.extend(w.split("/"))  # "dev/test", "read/write": two words, not a path
        else:
            out.extend(_forms(w))
    return tuple(out)


@functools.lru_cache(maxsize=_WORD_MEMO)
def _chunk_words(chunk: str) -> tuple[str, ...]:
    """``raw_words``' words of one whitespace-separated chunk of a text without code, or
    between two pieces of code (a pure function of the chunk, remembered). A URL or a path
    ends where its chunk does (at a space, or the text's end, which its look-ahead reads
    alike), so a chunk is read as the whole text would read it there; one without "/", "\\"
    or "www." holds neither."""
    if "/" not in chunk and "\\" not in chunk and "www." not in chunk:
        return tuple(itertools.chain.from_iterable(map(_forms, _WORD_PLAIN.findall(chunk))))
    if chunk in _SHORT_SLASHED:  # "w/": read as a path, it would lose its slash
        return (lx.SHORT_WORDS[chunk.lower()],)
    return _words_of(chunk)


#: Shortened words that end in a slash, as a chunk may hold them.
_SHORT_SLASHED: Final = frozenset({"w/", "W/"})


@functools.lru_cache(maxsize=_WORD_MEMO)
def _forms(w: str) -> tuple[str, ...]:
    """The words one matched word stands for (none empty): a pure function of the word, so
    remembered once for every text it occurs in."""
    if w.startswith("`") and (" " in w or "=" in w):
        # Code of several words: each word on its own, still marked as code, so the
        # same command written without backticks meets it word by word ("seed=42" too).
        return tuple(f"`{part}`" for part in _WORD.findall(w.strip("`")))
    low = w.lower()
    bare = lx.BARE_CONTRACTIONS.get(low) or lx.SHORT_WORDS.get(low)
    if bare is not None:
        out = tuple(bare.split())
    elif low.endswith("'s") and len(low) > 2:
        out = (w[:-2],)  # a possessive: the owner is the content
    else:
        out = (w.strip("'"),)
    return tuple(x for x in out if x)


def words(text: str) -> tuple[str, ...]:
    """Lower-case words (see ``raw_words``)."""
    return tuple(w.lower() for w in raw_words(text))


def is_value(word: str) -> bool:
    """A number, path, identifier, URL or code: something that names exactly one thing."""
    return word.startswith(("`", "--")) or _CODE_SHAPE.search(word) is not None or "%" in word


def clock24(hour: str, minutes: str | None, half: str) -> str:
    """A 12-hour time as "H:MM" on the 24-hour clock ("6", None, "p" -> "18:00"): the one
    reading of "am"/"pm" (``value`` and ``pairs.numbers``)."""
    return f"{int(hour) % 12 + (12 if half.lower() == 'p' else 0)}:{minutes or '00'}"


#: A colour in three hex digits, the short form of six.
_HEX3: Final = re.compile(r"#[0-9a-f]{3}")


@functools.lru_cache(maxsize=_WORD_MEMO)
def value(word: str) -> str:
    """The canonical spelling of a value: ``10k`` -> ``10000``, ``02:30`` -> ``2:30``,
    ``8pm`` -> ``20:00``, ``$20`` -> ``20``, code without backticks, paths without a trailing
    slash."""
    low = word.lower().strip("`").rstrip("/.")
    if len(low) == 4 and _HEX3.fullmatch(low):
        return "#" + "".join(c * 2 for c in low[1:])  # "#fff" is "#ffffff"
    t = _TIME.match(low)
    if t:
        return f"{int(t.group(1))}:{t.group(2)}"
    c = _CLOCK12.match(low)
    if c and 1 <= int(c.group(1)) <= 12:
        return clock24(c.group(1), c.group(2), c.group(3))
    m = _NUMBER_UNIT.match(low)
    if m:
        number, unit = m.group(1), m.group(2) or ""
        mult = lx.SUFFIX_MULTIPLIERS.get(unit)
        if mult is not None:
            n = float(number) * mult
            return str(int(n)) if n == int(n) else str(n)
        if "." in number:
            number = number.rstrip("0").rstrip(".") or "0"
        return number + ("%" if unit == "%" else "")
    return low


def number_unit(word: str) -> str:
    """The unit written onto a number ("25mb" -> "mb"), or ""."""
    m = _NUMBER_UNIT.match(word.lower())
    unit = (m.group(2) or "") if m else ""
    return "" if unit in ("%", *lx.SUFFIX_MULTIPLIERS) else unit


#: Four-letter words ending in "s" (not "ss", "is", "us") that are no plural of a shorter word.
_FOUR_S: Final = frozenset({"news", "lens", "does", "goes"})


@functools.lru_cache(maxsize=_WORD_MEMO)
def stem(word: str) -> str:
    """A crude suffix stripper (plural, -ing, -ed), with British spellings made American.

    Matching also accepts shared prefixes, so it only has to be consistent, not correct.
    """
    w = lx.IRREGULAR.get(word) or lx.SPELLING.get(word, word)
    if len(w) > 5 and w.isalpha() and w not in lx.ISE_WORDS:
        for brit, amer in lx.BRITISH_ENDINGS:
            if w.endswith(brit):
                w = w[: -len(brit)] + amer
                break
    if len(w) == 4 and w[-1] == "s" and w[-2] not in "siu" and w.isalpha() and w not in _FOUR_S:
        return w[:-1]  # "runs", "jobs", "logs" meet "run", "job", "log"
    if len(w) <= 4:
        return w
    if not w.isalpha():
        joined = w.replace("-", "")
        if joined != w and joined.isalpha() and not w.startswith("-"):
            # "e-mails" and "fine-tuned" inflect as "emails" and "finetuned" do: the stem of the
            # word written as one, its hyphens kept, so the index's joined form meets both.
            base = stem(joined)
            for i, c in enumerate(w):
                if c == "-" and i < len(base):
                    base = base[:i] + "-" + base[i:]
            return base
        return w
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if not w.endswith(suffix):
            continue
        if suffix == "es" and not w[:-2].endswith(("s", "x", "z", "ch", "sh")):
            continue
        if suffix == "s" and w.endswith(("ss", "us", "is")):
            return w
        base = w[: -len(suffix)] + repl
        if len(base) >= 3:
            if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # stopped -> stopp -> stop, running -> runn -> run
            return base
        return w
    if w.endswith("e") and len(w) > 4:
        return w[:-1]  # "remove" meets "removing" and "removed" as "remov"
    return w


@functools.lru_cache(maxsize=_WORD_MEMO)
def key(word: str) -> str:
    """The concept a lower-case word stands for: its synonym group or full form, else its stem.

    Groups are looked up by stem, so every inflection of a word meets its synonyms."""
    full = lx.ABBREVIATIONS.get(word, word)
    s = stem(full)
    return _SYNONYM_STEMS.get(s) or lx.SYNONYMS.get(full) or s


_SYNONYM_STEMS: Final = {stem(w): stem(head) for w, head in lx.SYNONYMS.items()}


def cache_clear() -> None:
    """Empty the memos (benchmarks measure the cost without them)."""
    for fn in (raw_words, _chunk_words, _forms, value, stem, key):
        fn.cache_clear()
