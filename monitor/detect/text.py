"""Plain-text analysis of user messages: sentences, tokens, and what kind of sentence each is.

Everything here is a pure function of a string. The restatement detector builds on it; nothing
here knows about sessions or scores. The rules are general English cues (question form,
acknowledgements, reports of state, negation, reminders), not vocabulary of any one domain.

Paraphrases share few words, so tokens pass through a small general lexicon (``_LEXICON``):
synonyms of instruction verbs, software nouns and units become one concept, and a narrower
word ("Saturday") may match its broader one ("weekends"). Measured on the dev set it lifts
paraphrase recall only from 0/15 to 2/15: most paraphrases share no concept either.

``prose`` drops what users paste (stack frames, log lines, terminal prompts and output, diffs,
code, lines mostly of paths and numbers) before a message is read: pasted output is not an
instruction, and the same trace pasted twice is not a restatement. A line is output by its own
shape (``output_line``) or by standing in a block of such lines; the thresholds (half of a
line's chunks not words; captions and trailing lines of at most three chunks) are at the end
of the module. On the labelled dev and held-out sets it changes no message.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Final, Literal

import msgspec


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


Kind = Literal["instruction", "question", "ack", "status", "empty"]

#: Salience of a token, used as its weight when measuring overlap.
GENERIC: Final = 0  # verbs and fillers that almost every instruction has ("keep", "use", "make")
PLAIN: Final = 1  # ordinary content words
NAME: Final = 2  # proper nouns, all-caps words
VALUE: Final = 3  # numbers, paths, identifiers, anything in backticks

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
    }
)
_ABBREVIATIONS: Final = re.compile(
    r"\b(?:dr|mr|mrs|ms|prof|st|vs|etc|approx|no|fig|inc|ltd|e\.g|i\.e|cf)\.(?=\s)", re.IGNORECASE
)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+|(?<=[.!?])(?=[A-Z])(?<![A-Z]\.)")
_CLAUSE_END: Final = re.compile(r"\s*;\s*|\s+-\s+")
#: Finer breaks: a contrastive tail (", not X"), a reason (", so ..."), and a second clause
#: with its own subject ("Stay on main, I'll merge it myself"), which often restates a
#: separate earlier instruction.
_TAIL: Final = re.compile(
    r",\s*(?=(?:not|no|never|nothing|none)\b)|,\s+(?:so|because|since)\s+|"
    r",\s+(?:and\s+|but\s+)?(?=(?:i|we|you|they)(?:'|\s+(?:will|would|can|should|must|"
    r"need|want|have|am|are)\b))",
    re.IGNORECASE,
)
#: A piece opening with one of these frames what follows ("For the app, never ..."): not a clause.
_FRAME_OPENERS: Final = _set("""
for in on at with when if while during before after unless until once whenever on
""")
_THOUSANDS: Final = re.compile(r"(\d),(?=\d{3}\b)")
_CONTRACTION: Final = re.compile(
    r"\b(can)'t\b|\b(can)not\b|\b(wo)n't\b|\b(sha)n't\b|(\w)n't\b|"
    r"\b(it|that|what|there|here|where|who|how|let)'s\b|'(re|ve|ll|d|m|s)\b",
    re.IGNORECASE,
)
_EXPANDED: Final = {"re": " are", "ve": " have", "ll": " will", "d": " would", "m": " am", "s": ""}


def _expand(m: re.Match[str]) -> str:
    """One pass over all contractions: "don't" -> "do not", "it's" -> "it is", "'s" -> ""."""
    g = m.groups()
    if g[0] or g[1]:
        return (g[0] or g[1]) + " not"
    if g[2]:
        return "will not"
    if g[3]:
        return "shall not"
    if g[4]:
        return g[4] + " not"
    if g[5]:
        return g[5] + " is"
    return _EXPANDED[g[6].lower()]


_TOKEN: Final = re.compile(r"`[^`]{1,80}`|[A-Za-z0-9$%][\w$%./+#\-]*[\w%+#]|[A-Za-z0-9]")
_SPLIT_NUMBER_UNIT: Final = re.compile(r"^(\d+(?:\.\d+)?)([a-z]{1,4})$")
_COMPOUND: Final = re.compile(r"[A-Za-z]+(?:[-/][A-Za-z]+)+")
_CODE_CHARS: Final = re.compile(r"[\d_/.#+]|[a-z][A-Z]")

_ORDERED_NUMBERS: Final = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_NUMBER_WORDS: Final = {w: i for i, w in enumerate(_ORDERED_NUMBERS)} | {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "dozen": 12,
    "half": 0,
}

STOPWORDS: Final = _set("""
a an the and or but nor of to in on at for with by from as into onto over under about than then
so if when while until till before after during per via up down out off again also just only even
is are was were be been being am do does did done doing have has had having will would shall
should must can could may might need needs ought
i me my mine we us our ours you your yours he him his she her they them their it its this that
these those there here what which who whom whose why how where all any each every some no not
never none nothing other such own same too very more most much many few both either neither
please pls thanks thank ok okay yes yeah yep sure now still already really actually right
one thing things way lot bit kind sort like through across within between against
free without alone untouched unchanged avoid refrain nobody
said told mentioned noted earlier previously already before reminder remember again once
""")

#: Verbs nearly every instruction carries; they say little about *which* instruction it is.
GENERIC_WORDS: Final = _set("""
keep use make set put let get go goes stay stays remain leave give take want need do write
run add have try ensure sure note always everything anything something stuff
""")

#: General synonyms, each group read as one concept so that a paraphrase shares tokens with
#: what it restates: instruction verbs ("stay"/"remain" ~ "keep"), software nouns
#: ("folder" ~ "dir"), units ("megs" ~ "mb"). One line per concept: the canonical stem, then
#: the words (or their stems) that stand for it. Not applied to code in backticks.
_LEXICON: Final = """
keep: keep keeps kept stay stays stayed remain remains retain retains preserve preserves
  maintain maintains leave leaves
use: use uses used utilise utilize employ
remove: remove delete deletes deleted deleting erase erased purge purged drop dropped
access: access call calls called calling reach reaches reached contact connect ping
happen: happen happens happened occur occurs occurred
approv: approval approve approved approves permission consent go-ahead sign-off signoff
repo: repo repos repository repositories
dir: dir dirs directory directories folder folders
config: config configs configuration configurations settings conf cfg
doc: doc docs documentation
db: db dbs database databases
env: env envs environment environments
dep: dep deps dependency dependencies
app: app apps application applications
func: func funcs function functions fn
pkg: pkg pkgs package packages
param: param params parameter parameters arg args argument arguments
network: network networks networking internet online
ad: ad ads advert adverts advertisement advertisements
id: id ids identifier identifiers
mb: mb meg megs megabyte megabytes
gb: gb gig gigs gigabyte gigabytes
kb: kb kilobyte kilobytes
ms: ms msec millisecond milliseconds
weekday: weekday weekdays workday workdays
am: morning mornings
pm: afternoon afternoons evening evenings
"""
_CANON: Final = {
    w: line.split(":", 1)[0]
    for line in re.sub(r"\n\s+", " ", _LEXICON).strip().splitlines()
    for w in line.split(":", 1)[1].split()
}
#: Concepts that, like the verbs of ``GENERIC_WORDS``, say little about which instruction it is.
_GENERIC_CONCEPTS: Final = frozenset({"keep", "use", "happen"})
#: A narrower word matches its broader one ("Saturday" restates "weekends"), not a sibling.
BROADER: Final = {
    **dict.fromkeys(("monday", "tuesday", "wednesday", "thursday", "friday"), "weekday"),
    **dict.fromkeys(("saturday", "sunday"), "weekend"),
}
#: Nouns that stand for "everything else" ("like the rest"): no content of their own. Only
#: in lower case, so "REST" stays a name.
_FILLER_NOUNS: Final = frozenset({"rest", "others", "remainder"})

#: Words that negate the predicate when they open a clause ("don't", "never", "no", "stop").
_CLAUSE_NEGATORS: Final = _set("not no never stop avoid nothing none without quit")
#: Words whose meaning carries a negation wherever they stand ("keep it disabled").
_NEGATIVE_WORDS: Final = _set("""
never disable disabled disabling hide hidden hiding exclude excluded excluding omit omitted
forbid forbidden prevent prohibit skip skipped avoid avoiding without alone untouched unchanged
off free stop stopped stopping refrain drop ban banned block blocked remove removed
""")
_NEGATING_AUX: Final = _set("""
do does did is are was were be can could will would should shall must may might need have has
""")

_WH: Final = _set("what how why when where which who whom whose")
_INVERTED_AUX: Final = _set("""
is are was were am do does did has have had can could would will shall should may might isn
""")
_POLITE: Final = re.compile(r"^(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(\w+)", re.I)
_ACK_OPENERS: Final = _set("""
ok okay k kk cool great nice thanks thank thx ty perfect awesome lgtm good excellent wonderful
yes yep yeah yup sure got sounds love amazing fantastic brilliant neat sweet hmm hm ah oh wow
fyi btw interesting noted understood right alright fine
""")
_PRAISE: Final = _set("""
good great nice perfect fantastic lovely awesome excellent amazing wonderful better best fine
right works working worked work readable faster cleaner tighter approved correct beautiful
brilliant helpful useful done ready close
""")
#: Words and word pairs that make a statement a rule ("X must ...", "X goes through review").
_OBLIGATION_WORDS: Final = _set("""
must should shall ought need needs please pls ensure remember always never only goes go belong
belongs stay stays remain remains require requires
""")
_OBLIGATION_PAIRS: Final = frozenset(
    {
        ("has", "to"),
        ("have", "to"),
        ("got", "to"),
        ("can", "not"),
        ("may", "not"),
        ("make", "sure"),
        ("want", "you"),
        ("all", "the"),
        ("i", "want"),
        ("we", "want"),
    }
)
_REPORT_OPENERS: Final = re.compile(
    r"^(?:fyi|btw|hmm+|looks like|seems|it seems|apparently|i think|i guess|i noticed|"
    r"i see|i wonder|not sure|just noticed|so far)\b",
    re.IGNORECASE,
)
_SUBJECT_OPENERS: Final = _set("""
the a an this that these those it its there they he she we i our my their his her your you
someone somebody everyone nobody
""")
#: Finite verbs that mark a report of how things are: copulas and common irregular pasts.
_FINITE: Final = _set("""
is are was were has had looks look seem seems appears spent took went ran got made broke grew
fell found saw came became began wrote built sent felt lost paid hit gave told thought kept
""")
_FILLERS: Final = _set("""
please pls also and then now next just so ok okay but oh hey finally first lastly plus
still again reminder
""")

_REMINDER: Final = re.compile(
    r"\bagain\b|\bonce more\b|\bone more time\b|\breminder\b|\bremember\b|\bhow many times\b|"
    r"\b(?:as|like)\s+(?:i|we)\s*(?:'ve|have)?\s+(?:already\s+)?(?:said|mentioned|noted|told you|"
    r"asked|wrote|explained|agreed)|"
    r"\b(?:i|we)\s*(?:'ve|have)?\s+(?:already\s+)?(?:said|told you|asked you|mentioned|"
    r"explained)\b|\btold you\b|"
    r"\bas\s+(?:noted|mentioned|discussed|agreed|requested|stated|said)\b|"
    r"\bper my (?:earlier|previous|last)\b|"
    r"\b(?:twice|three times|for the (?:second|third|last) time)\b|"
    r"\bi keep (?:saying|telling|asking)\b|\bstill\b",
    re.IGNORECASE,
)
#: A reminder phrase opening a sentence ("As I said, ...", "Reminder:") is not its content.
_REMINDER_OPENER: Final = re.compile(
    r"^\W*(?:(?:as|like)\s+(?:i|we)\s*(?:'ve|have)?\s+(?:already\s+)?\w+"
    r"(?:\s+(?:you|earlier|before|already))*|"
    r"(?:i|we)\s*(?:'ve|have)?\s+(?:already\s+)?(?:said|told you)(?:\s+(?:this|that|it))?"
    r"(?:\s+(?:before|already|earlier))*|"
    r"told you(?:\s+(?:this|that|so))?(?:\s+(?:before|already))*|"
    r"as\s+(?:noted|mentioned|discussed|agreed|said)(?:\s+(?:earlier|before|above))?|"
    r"per my (?:earlier|previous|last) (?:note|message|comment)|reminder|again|once more)"
    r"\s*[,:;.!-]*\s*",
    re.IGNORECASE,
)
_WEAK_REMINDER: Final = frozenset({"still"})
#: Substrings one of which every match of the cue patterns contains: a cheap pre-check.
_REMINDER_HINTS: Final = (
    "again",
    "once more",
    "one more",
    "remind",
    "remember",
    "times",
    "said",
    "told",
    "mention",
    "noted",
    "wrote",
    "explained",
    "asked",
    "agreed",
    "discussed",
    "requested",
    "stated",
    "per my",
    "twice",
    "keep ",
    "still",
)
_UPDATE_HINTS: Final = (
    "instead",
    "actual",
    "rather",
    "switch",
    "change",
    "from now",
    "no longer",
    "anymore",
    "replace",
    "scratch",
    "correction",
    "second thought",
    "new plan",
)
_OPENER_WORDS: Final = _set("as like i we told per reminder again once")
_UPDATE: Final = re.compile(
    r"\binstead\b|\bactually\b|\brather\b|\bswitch(?:ed|ing)?\b|"
    r"\bchange[sd]? (?:it |that |this )?to\b|"
    r"\bfrom now on\b|\bno longer\b|\banymore\b|\breplace\b|\bscratch that\b|\bcorrection\b|"
    r"\bchanged (?:my|his|her|their|our) mind\b|\bon second thought\b|\bnew plan\b",
    re.IGNORECASE,
)
_EMPHASIS: Final = re.compile(r"[!?]{2,}|!\s*$")


class Token(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A normalised word: ``stem`` for matching and ``weight`` for how much it identifies."""

    stem: str
    weight: int


#: "am"/"pm" after a number: a time of day (elsewhere "am" is a verb and a stopword).
_TIME_OF_DAY: Final = {"am": Token("am", PLAIN), "pm": Token("pm", PLAIN)}


class Sentence(msgspec.Struct, frozen=True):
    """Everything the detector reads off one sentence, computed in one pass."""

    text: str
    kind: Kind
    tokens: tuple[Token, ...]
    polarity: int
    update: bool


#: Memo sizes. Every memo here caches a pure function of its string argument (no state, no
#: order effects), so a hit and a miss return equal values; the bounds only cap memory.
_SENTENCE_MEMO: Final = 1024
_WORD_MEMO: Final = 16384

#: Words any of which a sentence must contain for its polarity to be odd (a pre-check).
_ANY_NEGATION: Final = frozenset({"not", "no", "clear"}) | _NEGATIVE_WORDS | _CLAUSE_NEGATORS
_POLITE_AUX: Final = frozenset({"can", "could", "would", "will"})
#: Verbs of a polite request that ask for information, not for work ("can you explain ...?"):
#: such a request is a question, and asking it twice is no restated instruction. A polite
#: request for work or a constraint ("can you keep every function under 40 lines?") still
#: instructs: it sets something the agent should honour from then on.
_ASKING_VERBS: Final = _set("""
explain tell show describe clarify summarise summarize remind confirm say walk elaborate recap
""")
#: Comparatives of a limit: "no more than 20", "can't go past 250", "not over budget" set the
#: same bound as "under 20" / "at most 250", so a negation governing one does not flip the
#: predicate, and the words themselves carry no content (like "under", a stopword).
_BOUND_WORDS: Final = _set(
    "past exceed exceeds exceeding beyond above over more longer larger bigger"
)
_BOUND_TOKENS: Final = _set("below beneath past exceed exceeds exceeding beyond above less fewer")
_REPORT_FIRST: Final = (
    "fyi",
    "btw",
    "hmm",
    "looks",
    "seems",
    "it",
    "apparently",
    "i",
    "not",
    "just",
    "so",
)
_CAPS_RUN: Final = re.compile(r"[A-Z]{2,}")
_COMPOUND_SEP: Final = re.compile(r"[-/]")
_STOP_OR_NEWLINE: Final = re.compile(r"[.!?\n]")
#: The abbreviations of ``_ABBREVIATIONS``, without their final stop.
_ABBREVIATION_WORDS: Final = (
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "st",
    "vs",
    "etc",
    "approx",
    "no",
    "fig",
    "inc",
    "ltd",
    "e.g",
    "i.e",
    "cf",
)


def _has_any(low: str, hints: tuple[str, ...]) -> bool:
    """``any(h in low for h in hints)``, as a plain loop: no generator, a few µs less."""
    for h in hints:  # noqa: SIM110
        if h in low:
            return True
    return False


def _wordish(ch: str) -> bool:
    """A character of a contraction run: ``\\w`` or an apostrophe."""
    return ch.isalnum() or ch == "_" or ch == "'"


def _expand_contractions(text: str) -> str:
    """``_CONTRACTION.sub(_expand, text)``, applied only to the runs of word characters and
    apostrophes that can hold a match (every match lies inside one such run, and a run's
    edges are word boundaries either way), which spares a slow scan of the whole text."""
    if not text.isascii():
        return _CONTRACTION.sub(_expand, text)
    low = text.lower()
    if "'" not in text and "cannot" not in low:
        return text
    marks: list[int] = []
    for needle in ("'", "cannot"):
        start = low.find(needle)
        while start >= 0:
            marks.append(start)
            start = low.find(needle, start + 1)
    out: list[str] = []
    last = 0
    n = len(text)
    for i in sorted(marks):
        if i < last:
            continue
        a = i
        while a > last and _wordish(text[a - 1]):
            a -= 1
        b = i
        while b < n and _wordish(text[b]):
            b += 1
        out.append(text[last:a])
        out.append(_CONTRACTION.sub(_expand, text[a:b]))
        last = b
    out.append(text[last:])
    return "".join(out)


def _protect_abbreviations(text: str) -> str:
    """``_ABBREVIATIONS`` with its stops replaced by NULs, found from the stops (fast)."""
    if "." not in text:
        return text
    if not text.isascii():  # lower() may change lengths: let the regex do it
        return _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), text)
    low = text.lower()
    out: list[str] = []
    last = 0
    j = low.find(".")
    while j >= 0:
        if j + 1 < len(low) and low[j + 1].isspace():
            for a in _ABBREVIATION_WORDS:
                k = j - len(a)
                if k >= last and low.startswith(a, k) and (k == 0 or not _is_word(low[k - 1])):
                    out.append(text[last:k])
                    out.append(text[k:j].replace(".", "\x00") + "\x00")
                    last = j + 1
                    break
        j = low.find(".", j + 1)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _split_sentences(text: str) -> list[str]:
    """``_SENTENCE_END.split(text)``, scanning only the stops and newlines."""
    out: list[str] = []
    prev = 0
    last_end = 0
    n = len(text)
    for m in _STOP_OR_NEWLINE.finditer(text):
        c = m.start()
        if c < last_end:
            continue
        if text[c] == "\n":
            e = m.end()
            while e < n and text[e] == "\n":
                e += 1
            out.append(text[prev:c])
            prev = last_end = e
            continue
        p = c + 1
        j = p
        while j < n and text[j] in "\"')]":
            j += 1
        k = j
        while k < n and text[k].isspace():
            k += 1
        if k > j:
            out.append(text[prev:p])
            prev = last_end = k
        elif (
            p < n
            and "A" <= text[p] <= "Z"
            and not (text[c] == "." and c >= 1 and "A" <= text[c - 1] <= "Z")
        ):
            out.append(text[prev:p])
            prev = last_end = p
    out.append(text[prev:])
    return out


@functools.lru_cache(maxsize=_SENTENCE_MEMO)
def analyse(sentence: str) -> Sentence:
    """Kind, tokens, polarity and update cue of a sentence.

    Memoised: sessions repeat sentences; the cache holds no state, only results.
    """
    norm, raw_t, ws_t = scan(sentence)
    raw, ws = list(raw_t), list(ws_t)
    stripped = _strip_opener(norm, ws)
    pol = _polarity(ws)
    k = _kind(stripped, words(stripped)) if stripped != norm.strip() else _kind(stripped, ws, pol)
    return Sentence(
        text=sentence,
        kind=k,
        tokens=tuple(_tokens(raw)) if k == "instruction" else (),
        polarity=pol,
        update=_has_update(norm),
    )


@functools.lru_cache(maxsize=_SENTENCE_MEMO)
def scan(sentence: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Normalised text, raw tokens (contractions expanded) and their lower-case words."""
    norm = normalise(sentence)
    raw, ws = _scan(norm)
    return norm, tuple(raw), tuple(ws)


def features(span: str) -> tuple[list[Token], int, bool]:
    """Tokens, polarity and update cue of any span, read as given (no sentence kind)."""
    norm = normalise(span)
    raw, ws = _scan(norm)
    return _tokens(raw), _polarity(ws), _has_update(norm)


def joined_features(parts: list[str]) -> tuple[list[Token], int, bool]:
    """``features(" ".join(parts))`` for sentences as ``sentences`` returns them.

    When every part is plain ASCII without backticks, no token, contraction or number unit
    can span the joining space, so the scans of the parts (memoised) are reused.
    """
    text = " ".join(parts)
    if not text.isascii() or "`" in text:
        return features(text)
    raw: list[str] = []
    ws: list[str] = []
    for p in parts:
        _, r, w = scan(p)
        raw.extend(r)
        ws.extend(w)
    return _tokens(raw), _polarity(ws), _has_update(text)


def cache_clear() -> None:
    """Empty every memo of this module (benchmarks measure the cost without them)."""
    for fn in (analyse, scan, stem, _pieces, _word_tokens):
        fn.cache_clear()


def _scan(norm: str) -> tuple[list[str], list[str]]:
    """Raw tokens and their lower-case words (backticks dropped) of normalised text."""
    norm = _expand_contractions(norm)
    raw = _TOKEN.findall(norm)
    if norm.isascii() and "\x01" not in norm:  # lower-case every token in one call
        ws = "\x01".join(raw).lower().split("\x01") if raw else []
        return raw, ([w.strip("`") for w in ws] if "`" in norm else ws)
    return raw, [w.strip("`").lower() for w in raw]


def _strip_opener(norm: str, ws: list[str]) -> str:
    if ws and ws[0] in _OPENER_WORDS:
        return _REMINDER_OPENER.sub("", norm).strip()
    return norm.strip()


def _has_update(norm: str) -> bool:
    low = norm.lower()
    return _has_any(low, _UPDATE_HINTS) and _UPDATE.search(norm) is not None


def normalise(text: str) -> str:
    """NFKC, straight quotes, no thousands separators: the form every other function reads."""
    if not text.isascii():  # ASCII is NFKC-stable and has no curly quotes
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return _THOUSANDS.sub(r"\1", text) if _has_thousands(text) else text


def _has_thousands(text: str) -> bool:
    """Whether ``_THOUSANDS`` can match: a comma between a digit and three more."""
    i = text.find(",")
    while i >= 0:
        if (
            i
            and text[i - 1].isdecimal()
            and text[i + 1 : i + 4].isdecimal()
            and len(text[i + 1 : i + 4]) == 3
        ):
            return True
        i = text.find(",", i + 1)
    return False


def sentences(text: str) -> list[str]:
    """Split a message into sentences, then clauses at ``;`` and dashes.

    Abbreviations (``Dr.``, ``e.g.``) do not end a sentence; dotted names (``a.b``) and
    decimals never do because a split needs whitespace after the stop.
    """
    protected = _protect_abbreviations(normalise(text))
    out: list[str] = []
    for part in _split_sentences(protected):
        for clause in _CLAUSE_END.split(part) if ";" in part or "-" in part else (part,):
            clause = clause.replace("\x00", ".").strip().strip("\"'-:,").strip()
            if clause and any(ch.isalnum() for ch in clause):
                out.append(clause)
    return out


def clauses(sentence: str) -> list[str]:
    """The main clause and its contrastive or causal tail, when a sentence has both.

    "Any logging goes through the macros, no bare printf" -> the two halves, so that each
    can be compared on its own. A leading frame ("For the newsletter, never ...") is kept whole.
    """
    if "," not in sentence:
        return [sentence]
    pieces = [p.strip(" ,") for p in _TAIL.split(sentence)]
    pieces = [p for p in pieces if any(ch.isalnum() for ch in p)]
    if len(pieces) < 2:
        return [sentence]
    first = words(pieces[0])
    if not first or first[0] in _FRAME_OPENERS:
        return [sentence]
    return pieces


def words(sentence: str) -> list[str]:
    """Lower-case words with contractions expanded ("don't" -> "do", "not")."""
    return _scan(normalise(sentence))[1]


@functools.lru_cache(maxsize=_WORD_MEMO)
def stem(word: str) -> str:
    """A crude suffix stripper; matching also accepts prefixes, so it only has to be consistent."""
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if not word.endswith(suffix):
            continue
        if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            return word
        base = word[: -len(suffix)] + repl
        if len(base) >= 3:
            if len(base) > 4 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # stopped -> stopp -> stop
            return base
        return word
    return word


def _numbers(raw: list[str]) -> list[str]:
    """Spell-out numbers become digits ("a hundred and fifty" -> "150", "twenty" -> "20")."""
    out: list[str] = []
    total: int | None = None
    for w in raw:
        if w in _NUMBER_WORDS and w != "half":
            n = _NUMBER_WORDS[w]
            total = (total or 1) * n if n in (100, 1000) else (total or 0) + n
            continue
        if w == "and" and total is not None:
            continue
        if total is not None:
            out.append(str(total))
            total = None
        out.append(w)
    if total is not None:
        out.append(str(total))
    return out


def tokens(sentence: str) -> list[Token]:
    """Content tokens of a sentence with their salience; stopwords and cue words dropped."""
    return _tokens(_scan(normalise(sentence))[0])


#: One piece of a raw token: its lower-case form, its weight when the token opens the
#: sentence and when it does not, and the final token for each (None: a stopword).
_Piece = tuple[str, int, int, Token | None, Token | None]


@functools.lru_cache(maxsize=_WORD_MEMO)
def _pieces(w: str) -> tuple[_Piece, ...]:
    """The words a raw token stands for (code in backticks, compounds split) and their salience.

    A capitalised word is a name unless it opens the sentence, hence two weights.
    """
    words_in: list[tuple[str, bool]] = []
    if w.startswith("`"):
        for part in _TOKEN.findall(w.strip("`")):
            if _COMPOUND.fullmatch(part):
                words_in.extend((p, True) for p in _COMPOUND_SEP.split(part))
            else:
                words_in.append((part, True))
    elif _COMPOUND.fullmatch(w) and w.lower() not in _CANON:
        words_in.extend((part, False) for part in _COMPOUND_SEP.split(w))  # compounds: parts
    else:
        words_in.append((w, False))
    out: list[_Piece] = []
    for part, quoted in words_in:
        part = part.strip(".-/()!")
        if not part:
            continue
        low = part.lower()
        if low in _FILLER_NOUNS and part.islower():
            continue
        unit = _SPLIT_NUMBER_UNIT.match(low)
        if unit:
            for p, wt in ((unit.group(1), VALUE), (unit.group(2), PLAIN)):
                tok = _TIME_OF_DAY.get(p) or _final(p, wt)
                out.append((p, wt, wt, tok, tok))
            continue
        if (quoted and len(low) > 2) or _CODE_CHARS.search(part) or "%" in part or "$" in part:
            first = other = VALUE
        elif low not in STOPWORDS and (len(part) >= 2 and part.isupper() and part.isalpha()):
            first = other = NAME
        elif low not in STOPWORDS and part[:1].isupper():
            first, other = PLAIN, NAME
        else:
            first = other = PLAIN
        out.append((low, other, first, _final(low, other), _final(low, first)))
    return tuple(out)


def _final(low: str, weight: int) -> Token | None:
    if low in STOPWORDS or low in _BOUND_TOKENS or (len(low) == 1 and not low.isdigit()):
        return None
    if weight != VALUE:
        canon = _CANON.get(low) or _CANON.get(stem(low))
        if canon is not None:
            if weight == PLAIN and canon in _GENERIC_CONCEPTS:
                weight = GENERIC
            return Token(canon, weight)
    if low in GENERIC_WORDS and weight == PLAIN:
        weight = GENERIC
    return Token(stem(low), weight)


@functools.lru_cache(maxsize=_WORD_MEMO)
def _word_tokens(w: str) -> tuple[tuple[Token, ...], tuple[Token, ...], int]:
    """The tokens of a raw token elsewhere in a sentence and when it opens it, and a mark:
    1 if it holds a spelled-out number, 2 if a time-of-day word depends on its neighbour."""
    pieces = _pieces(w)
    mark = 0
    for low, _other, _first, tok_other, _tok_first in pieces:
        if low in _NUMBER_WORDS:
            return (), (), 1
        if tok_other is None and low in _TIME_OF_DAY:
            mark = 2
    other = tuple(p[3] for p in pieces if p[3] is not None)
    first = tuple(p[4] for p in pieces if p[4] is not None)
    return other, first, mark


def _tokens(raw: list[str]) -> list[Token]:
    """Tokens of a sentence's raw tokens: one memo look-up and one extend per raw token."""
    first_alpha = 0 if raw and raw[0][:1].isalpha() else _first_alpha(raw)
    out: list[Token] = []
    for i, w in enumerate(raw):
        other, first, mark = _word_tokens(w)
        if mark == 1:
            return _spelled_tokens(raw, first_alpha)
        if mark == 2:
            for low, _other, _first, tok_other, tok_first in _pieces(w):
                tok = tok_first if i == first_alpha else tok_other
                if tok is not None:
                    out.append(tok)
                elif low in _TIME_OF_DAY and i and raw[i - 1][-1:].isdigit():
                    out.append(_TIME_OF_DAY[low])  # "11 am": a time, not the verb
            continue
        out.extend(first if i == first_alpha else other)
    return out


def _first_alpha(raw: list[str]) -> int:
    """Index of the first raw token that starts with a letter (a capital there is no name)."""
    return next((i for i, w in enumerate(raw) if w[:1].isalpha()), 0)


def _spelled_tokens(raw: list[str], first_alpha: int) -> list[Token]:
    """Tokens of a sentence with spelled-out numbers: they become digits and values."""
    pieces = [
        (p[0], p[2] if i == first_alpha else p[1]) for i, w in enumerate(raw) for p in _pieces(w)
    ]
    spelled = _numbers([p for p, _ in pieces])
    if spelled != [p for p, _ in pieces]:  # numbers were spelled out: re-derive salience
        weights = {p: wt for p, wt in pieces}
        pieces = [(p, VALUE if p.isdigit() else weights.get(p, PLAIN)) for p in spelled]
    out: list[Token] = []
    for low, weight in pieces:
        tok = _final(low, weight)
        if tok is not None:
            out.append(tok)
    return out


def polarity(sentence: str) -> int:
    """1 if the sentence's predicate is negated an odd number of times, else 0.

    Counts clause-opening negators ("don't", "never", "no", "stop"), negated auxiliaries
    ("should not") and words negative in themselves ("disabled", "hidden", "without").
    A contrastive tail ("use X, not Y") names the alternative and does not flip the clause.
    """
    return _polarity(words(sentence))


def _polarity(ws: list[str]) -> int:
    if _ANY_NEGATION.isdisjoint(ws):
        return 0
    count = 0
    clause_start = True
    skip_fillers = True
    prev = ""
    for i, w in enumerate(ws):
        if skip_fillers and w in _FILLERS:
            prev = w
            continue
        skip_fillers = False
        if (
            (w in ("not", "no") and (clause_start or prev in _NEGATING_AUX))
            or w in _NEGATIVE_WORDS
            or (clause_start and w in _CLAUSE_NEGATORS)
            or (w == "clear" and i + 1 < len(ws) and ws[i + 1] in ("of", "from"))
        ) and (w == "never" or _BOUND_WORDS.isdisjoint(ws[i + 1 : i + 4])):
            count += 1
        clause_start = prev == "do" and w == "not"
        prev = w
    return count % 2


def reminder_cues(text: str) -> tuple[bool, bool]:
    """(strong, weak) reminder cues: "as I said", "again", "told you" vs a bare "still"."""
    strong = weak = False
    norm = normalise(text)
    low = norm.lower()
    if not _has_any(low, _REMINDER_HINTS):
        return False, False
    for m in _REMINDER.finditer(norm):
        if m.group(0).lower() in _WEAK_REMINDER:
            weak = True
        else:
            strong = True
    return strong, weak


def emphatic(text: str) -> bool:
    """Shouting: runs of ``!``/``?`` or a common word in capitals ("NOT", "EVERY")."""
    if ("!" in text or "?" in text) and (
        "!!" in text or "!?" in text or "?!" in text or "??" in text or text.rstrip().endswith("!")
    ):
        return True  # _EMPHASIS, without a regex scan
    n = len(text)
    for m in _CAPS_RUN.finditer(text):
        a, b = m.span()
        if (a and _is_word(text[a - 1])) or (b < n and _is_word(text[b])):
            continue  # not a whole word (\b on both sides)
        low = m.group(0).lower()
        if low in STOPWORDS or low in _CLAUSE_NEGATORS or low in ("stop", "again", "why"):
            return True
    return False


def has_update_cue(text: str) -> bool:
    """Words that announce a changed value: "instead", "actually", "switch to"."""
    return _has_update(normalise(text))


def kind(sentence: str) -> Kind:
    """What a sentence does: instructs, asks, acknowledges, or reports how things are.

    Fragments without a verb ("dev board only", "Italian markings") count as instructions:
    in a user message they are almost always elliptical commands.
    """
    norm = normalise(sentence)
    text = _strip_opener(norm, words(norm))
    return _kind(text, words(text))


def _kind(text: str, ws: list[str], pol: int | None = None) -> Kind:
    """``pol`` is ``_polarity(ws)`` when the caller has it already."""
    if not ws:
        return "empty"
    body = [w for w in ws if w not in _FILLERS] or ws
    first = body[0]
    if first in _POLITE_AUX:
        polite = _POLITE.match(" ".join(body))
        if (
            polite
            and polite.group(1) not in ("i", "we", "you", "it", "that", "this", "not")
            and polite.group(1) not in _ASKING_VERBS
        ):
            return "instruction"
    stripped = text.rstrip(" .!)\"'")
    if stripped.endswith("?") or stripped.endswith("?)"):
        return "question"
    if first in _WH and (len(body) == 1 or body[1] in _INVERTED_AUX or body[1] in ("not",)):
        return "question"
    if (
        first in _INVERTED_AUX
        and len(body) > 1
        and body[1] in _SUBJECT_OPENERS | {"anyone", "anything"}
    ):
        return "question"
    obligation = (
        not _OBLIGATION_WORDS.isdisjoint(ws)
        or not _OBLIGATION_PAIRS.isdisjoint(itertools.pairwise(ws))
        or ("every" in text.lower() and any(w.startswith("every") for w in ws))
    )
    if pol is None:
        pol = _polarity(ws)
    negated = pol == 1 or "not" in ws or "no" in ws
    if ws[0].startswith(_REPORT_FIRST) and _REPORT_OPENERS.match(" ".join(ws)):
        return "status"
    if ws[0] in _ACK_OPENERS and not (obligation or negated) and first not in GENERIC_WORDS:
        return "ack"
    if obligation or negated:
        return "instruction"
    praise = not _PRAISE.isdisjoint(ws)
    finite = not _FINITE.isdisjoint(ws[:6])
    if first in _SUBJECT_OPENERS or finite:
        return "status" if (finite or praise or _has_verb_after_subject(ws)) else "instruction"
    if praise and len(ws) <= 6:
        return "ack"
    if _has_past_verb(ws):
        return "status"
    return "instruction"


def _has_verb_after_subject(ws: list[str]) -> bool:
    """ "the parser now handles ...": a third-person or past verb after a noun-phrase subject."""
    for w in ws[1:6]:
        if w.endswith(("ed", "es")) or (w.endswith("s") and not w.endswith("ss") and len(w) > 3):
            return True
    return False


def _has_past_verb(ws: list[str]) -> bool:
    """A subject followed by a past-tense verb ("opposing counsel filed their reply")."""
    if len(ws) < 3 or ws[0].endswith("ed"):
        return False
    return any(w.endswith("ed") and len(w) > 4 for w in ws[1:3]) and ws[0] not in GENERIC_WORDS


# --- pasted machine output ---------------------------------------------------------------
#
# Users paste stack traces, logs, terminal sessions, diffs and code into their messages. None
# of it is something they tell the agent, and the same trace pasted twice is no restated
# instruction, so ``prose`` drops it before sentences are read. A line is output when its own
# shape says so (the patterns below); output lines come in blocks, so every line of a
# paragraph between two output lines is output too, as are a short caption just above a block
# ("vs code terminal:") and the short or progress lines ("truecolor", "Waiting ...") just
# below it. A paragraph is a run of lines without a blank line; prose the user types after a
# paste is nearly always set off by one.

#: A stack frame: JavaScript/Java "at f (path:12:3)", "at a.B(B.java:12)"; Python "File ..., line
#: 12"; the traceback header.
_STACK_FRAME: Final = re.compile(
    r"^\s*(?:at\s+\S.*(?::\d+:\d+\)?|\(\S+:\d+\)|\((?:Native Method|Unknown Source)\))\s*$|"
    r'File "[^"]+", line \d+|Traceback \(most recent call last\))'
)
#: A log line: a timestamp, an upper-case level, a lower-case "[tag]", or "XError:" first.
_LOG_LINE: Final = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}\b|"
    r"\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)(?:\]|:)|"
    r"\[[a-z0-9][\w.:/-]{0,39}\]\s|(?:[A-Z]\w*)?(?:Error|Exception)\b:|npm (?:ERR|WARN)!)"
)
#: A terminal prompt ("➜ repo git:(main)", "$ npm test", "user@host:~$ ", ">>> ").
_PROMPT: Final = re.compile(
    r"^\s*(?:[\u279c\u276f\u03bb]\s|\$\s+\S|>>>\s|PS [A-Z]:\\|[\w.-]+@[\w.-]+(?::\S*)?\s*[$%#]\s)"
)
_GIT_PROMPT: Final = re.compile(r"\bgit:\([^)\s]*\)")
#: A diff or a listing with line numbers ("+ 9 ...", "12 | ...", "@@ -1,3 +1,4 @@").
_GUTTER: Final = re.compile(
    r"^\s*(?:\+\s*\d+(?:\s|$)|\d+\s*[|\u2502]\s|@@ .* @@|(?:\+\+\+|---) [ab]/)"
)
#: Code: closing brackets alone, a definition or an import; and (checked apart, see
#: ``output_line``) a line ending in ";" or "{", an interpolation "${", an arrow "=>".
_CODE_LINE: Final = re.compile(
    r"^\s*(?:[}\])]+[;,)]*\s*$|(?:from\s+[\w.]+\s+)?import\s+[\w.{}*, ]+;?\s*$|"
    r"(?:def|class|fn|func|function|const|let|var)\s+[\w$]+\s*[(=:<{]|#(?:include|define|!/))"
)
_BACKTICKS: Final = re.compile(r"`[^`\n]*`")
_FENCE: Final = re.compile(r"^\s*(?:```|~~~)")
_LIST_MARKER: Final = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+")
#: Box drawing, block elements and braille (terminal user interfaces and spinners).
_TUI_FIRST: Final = re.compile(r"^\s*[\u2500-\u259f\u2800-\u28ff]")
_PLAIN_CHUNK: Final = re.compile(r"[A-Za-z]+(?:['\u2019-][A-Za-z]+)*")
_CHUNK_EDGES: Final = "\"'`()[]{}<>.,;:!?*_\u201c\u201d\u2018\u2019"
#: Every pattern above that looks at how a line starts, as one expression (one call per line).
_OUTPUT_START: Final = re.compile(
    "|".join(
        f"(?:{p.pattern})"
        for p in (_STACK_FRAME, _LOG_LINE, _PROMPT, _GUTTER, _CODE_LINE, _TUI_FIRST)
    )
)

#: A caption above a block or a trailing line below it has at most this many chunks.
_CAPTION_CHUNKS: Final = 3


def output_line(line: str) -> bool:
    """Whether one line is, by its own shape, machine output rather than something typed.

    Beside the patterns above: a line with no letter or digit (rules, carets), and a line
    whose whitespace-separated chunks are mostly not words (paths, numbers, hashes, flags):
    fewer than half words when it has two or more, none when it has one. A list marker is no
    chunk, and code in backticks counts as a word: people type backticks, programs do not.
    """
    if not line.strip():
        return False
    if not any(ch.isalnum() for ch in line):
        return True
    code = _BACKTICKS.sub("x", line) if "`" in line else line
    if (
        _OUTPUT_START.match(code)
        or code.rstrip().endswith((";", "{"))
        or "${" in code
        or "=>" in code
        or ("git:(" in code and _GIT_PROMPT.search(code) is not None)
    ):
        return True
    if "`" in line:
        line = _BACKTICKS.sub("code", line)
    chunks = _LIST_MARKER.sub("", line, count=1).split()
    if len(chunks) == 1:
        return _PLAIN_CHUNK.fullmatch(chunks[0].strip(_CHUNK_EDGES)) is None
    plain = 0
    for i, c in enumerate(chunks):
        if _PLAIN_CHUNK.fullmatch(c.strip(_CHUNK_EDGES)):
            plain += 1
            if 2 * plain >= len(chunks):
                return False
        elif 2 * (plain + len(chunks) - i - 1) < len(chunks):
            return True  # too few chunks left to make half
    return 2 * plain < len(chunks)


def _trailing(line: str) -> bool:
    """A line just below a block that still belongs to it: short, or a progress message."""
    s = line.rstrip()
    return len(s.split()) <= _CAPTION_CHUNKS or s.endswith(("...", "\u2026"))


def prose(text: str) -> str:
    """The text without pasted machine output (see ``output_line`` and the block rule above).

    Fenced code blocks go whole. Kept lines keep their order and paragraph breaks.
    """
    lines = text.splitlines()
    if len(lines) <= 1:
        return "" if output_line(text) else text
    out = [False] * len(lines)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            out[i] = True
            fenced = not fenced
        elif fenced or output_line(line):
            out[i] = True
    start = 0
    for end in [*(i for i, s in enumerate(lines) if not s.strip()), len(lines)]:
        hits = [i for i in range(start, end) if out[i]]
        if hits:
            first, last = hits[0], hits[-1]
            for i in range(first, last + 1):
                out[i] = True
            if first > start and len(lines[first - 1].split()) <= _CAPTION_CHUNKS:
                out[first - 1] = True
            i = last + 1
            while i < end and _trailing(lines[i]):
                out[i] = True
                i += 1
        start = end + 1
    return "\n".join(line for line, o in zip(lines, out, strict=True) if not o)
