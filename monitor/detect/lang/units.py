"""What the pair scorer reads off a span of text, computed once per span.

A ``Unit`` is a sentence, a clause of one, or a short whole message, with its content words
(stem, concept key, salience), values, polarity, antonym poles, the alternatives it rejects
("B, not A") and its grammatical form as bits. Units of remembered instructions live in the
per-session state, so everything here is a plain frozen value that msgpack can carry.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

import msgspec

from monitor.detect.lang import lexicon as lx
from monitor.detect.lang import segment
from monitor.detect.lang.literals import may_match, needed
from monitor.detect.lang.normalise import is_value, key, raw_words, slips_mended, stem, value
from monitor.detect.lang.twins import lowercase_twin, sub_as_written

#: Salience of a word: its weight when measuring overlap.
GENERIC: Final = 0  # verbs almost every instruction has ("keep", "use", "make")
PLAIN: Final = 1  # ordinary content words
NAME: Final = 2  # proper nouns, all-caps words
VALUE: Final = 3  # numbers, paths, identifiers, anything in backticks

#: Form bits.
QUESTION: Final = 1
ACK: Final = 2
REPORT: Final = 4
IMPERATIVE: Final = 8
OBLIGATION: Final = 16
POLITE: Final = 32
FIRST_PERSON: Final = 64
PAST: Final = 128
NEGATED_START: Final = 256
WANT: Final = 512
#: Cut from a sentence that asks ("Rule 3, no gradients - does that cover print too?").
IN_QUESTION: Final = 1024
#: An obligation addressed to the agent or the team: "you need to", "we should", "you must".
DIRECTED: Final = 4096
#: The speaker's own plan: "I'll merge it myself", "I am going to test it".
OWN_PLAN: Final = 8192
#: Quotes someone's words ("Marco wrote: 'never full-refresh on weekdays'").
QUOTES: Final = 2048
#: Asks whether something is so ("did you keep the filenames lowercase", "the names are kept
#: out, right?"): a check, not a request. Not one of ``FORM_BITS`` (not a scorer feature).
CHECKS: Final = 16384
FORM_BITS: Final = (
    ("question", QUESTION),
    ("ack", ACK),
    ("report", REPORT),
    ("imperative", IMPERATIVE),
    ("obligation", OBLIGATION),
    ("polite", POLITE),
    ("first_person", FIRST_PERSON),
    ("past", PAST),
    ("negated_start", NEGATED_START),
    ("want", WANT),
    ("in_question", IN_QUESTION),
    ("quotes", QUOTES),
    ("directed", DIRECTED),
    ("own_plan", OWN_PLAN),
)

#: Longest span read (words): the rest of a very long sentence says little more, and a
#: longer piece said without a comma is cut at its joining words (``segment.clauses``).
MAX_WORDS: Final = segment.SPAN_WORDS
#: Shortest stem that may match as a prefix of a longer one ("prod" ~ "production").
HEAD: Final = 4

#: Antonym poles by concept key (``normalise.key``), so every inflection and synonym of a word
#: carries its pole ("removing", "deleted" and "drop" are all on the "remove" side).
_ANTONYMS: Final[dict[str, tuple[tuple[str, int], ...]]] = {}
for _pair in lx.ANTONYM_PAIRS:
    _a, _b = sorted(key(w) for w in _pair)
    for _w, _sign in ((_a, 1), (_b, -1)):
        if (f"{_a}/{_b}", _sign) not in _ANTONYMS.get(_w, ()):
            _ANTONYMS[_w] = (*_ANTONYMS.get(_w, ()), (f"{_a}/{_b}", _sign))
_POLITE_AUX: Final = frozenset({"can", "could", "would", "will"})
#: A polite request anywhere in a sentence: "could you (please) bump …", "would you mind …".
_POLITE_REQUEST: Final = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|kindly\s+|also\s+|just\s+)?(\w+)"
    r"|\bplease\b|\bwould you mind\b|\bi(?:'d| would) (?:like|prefer|appreciate)\b"
)
_WANT: Final = re.compile(
    r"^(?:i|we)\s+(?:would like|would prefer|want|need|prefer|expect|wish)\b|^let us\b|"
    r"^(?:i|we)\s+(?:would|will|do not|did not|never)\s+(?:like|want|need)\b",
)
_PAST_REPORT: Final = re.compile(r"^(?:i|we|you|they|he|she|it)\s+(?:\w+\s+)?\w+[^e\W]ed\b")
_EXCLAIM: Final = re.compile(r"!{2,}|\?!|!\?")
#: "right?", "…, yes", "correct?" closing a statement: it asks for confirmation.
_PRAISE: Final = re.compile(
    r"^(?:that|this|it|these|those|everything|all)\s+(?:\w+\s+)?(?:looks|look|is|are|was|were|seems|"
    r"reads|sounds|works|worked)\s+(?:\w+\s+)?(?:great|good|perfect|fine|nice|better|right|correct|"
    r"awesome|amazing|excellent|lovely|clean|clear|wonderful|much better)\b"
)
_INTERJECTIONS: Final = lx.word_set("""
fuck fucking fuckin damn dammit shit hell wtf omg ugh argh lol lmao rofl jeez god geez whoa wow
yikes oops hmm huh meh ah oh bruh dude man sigh nope yep
""")
#: Read on a span's words past its fillers, which drop "to" ("i am going merge it").
_OWN_PLAN: Final = re.compile(
    r"^i\s+(?:will|would|am going(?: to)?|am gonna|can|could|shall|might|plan|am planning|intend)\b"
)
_PRAISE_WORDS: Final = frozenset(
    {
        "good",
        "great",
        "fine",
        "sense",
        "perfect",
        "nice",
        "thanks",
        "awesome",
        "excellent",
        "lovely",
        "brilliant",
        "cool",
        "works",
    }
)
#: Longest acknowledgement opening with "ok", "great" … (words).
_ACK_WORDS: Final = 6
#: Auxiliaries that open only a question, whatever follows ("did", "is"); "do", "can",
#: "would" also open requests ("do not …", "can you …").
_YES_NO_AUX: Final = frozenset(
    {
        "did",
        "does",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "am",
        "isnt",
        "arent",
        "didnt",
        "doesnt",
        "wasnt",
        "werent",
        "hasnt",
        "havent",
        "should",
        "shall",
    }
)
#: What follows "have" in a request rather than a question: an object ("have them wrapped",
#: "have it checked") or an article ("have a look"); a question needs a subject ("have they").
_AFTER_CAUSATIVE: Final = frozenset({"them", "it", "him", "her", "me", "us", "a", "an"})


def _causative(first: str, second: str) -> bool:
    """Whether a span opening with ``first``, ``second`` asks for something done ("have them
    wrapped in the ribbon") rather than asks whether it was."""
    return first == "have" and second in _AFTER_CAUSATIVE


#: "How I told you before, …": "as I told you" in a non-native speaker's words, no question.
_AS_SAID: Final = re.compile(r"how (?:i|we) (?:told you|said|mentioned|wrote|asked)\b")
_ASKING_OPENERS: Final = (
    "quick question",
    "question",
    "just curious",
    "curious",
    "i wonder",
    "wondering",
    "any idea",
    "do you know",
    "do we know",
)
_TAG_QUESTION: Final = frozenset({"right", "yes", "correct", "yeah", "eh", "innit", "no", "ok"})
_DETERMINERS: Final = frozenset(
    {
        "the",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "his",
        "her",
        "their",
        "its",
        "all",
        "everything",
        "any",
    }
)
_DIRECTED: Final = re.compile(
    r"\b(?:you|we|u)\s+(?:will\s+|would\s+)?(?:must|should|need to|needs to|have to|has to|"
    r"got to|gotta|ought to|are to|are going to)\b"
)
#: Someone else's words reported: "Marco wrote …", "the client says …".
_REPORTED: Final = re.compile(
    r"^(?:\w+\s+){1,3}(?:said|says|wrote|writes|mentioned|mentions|told|asked|asks|thinks|"
    r"suggested|suggests|wants|wanted|noted|commented|replied|claims|claimed)\b"
)
_QUOTED_WORDS: Final = re.compile(r"[\"\u201c']([^\"\u201d']{12,})[\"\u201d']|:\s*'[^']{12,}")


class Unit(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A span with its features; ``text`` is the span as written (for evidence)."""

    text: str
    #: Lower-case words joined by single spaces (fuzzy comparisons read this).
    norm: str
    #: Content words in order: stem, concept key, salience.
    stems: tuple[str, ...]
    keys: tuple[str, ...]
    weights: tuple[int, ...]
    #: Canonical values (numbers, paths, identifiers, code).
    values: tuple[str, ...]
    #: Antonym poles present: "enable/disable" with +1 for "enable", -1 for "disable".
    poles: tuple[tuple[str, int], ...]
    #: Keys of alternatives the span rejects ("use B, not A" rejects A).
    rejected: tuple[str, ...]
    #: 1 when the predicate is negated an odd number of times, and how many negations.
    polarity: int
    negations: int
    #: The same, also counting words negative in themselves ("disabled", "off limits").
    polarity_loose: int
    #: Form bits (QUESTION, ACK, …).
    form: int
    #: Words in the span (before stopwords are dropped).
    n_words: int


def heads(u: Unit) -> frozenset[str]:
    """Look-up keys of a unit's content words: any two units that share a matchable word share
    one (a 4-letter prefix of its stem or concept, a value, a file name)."""
    return _heads(u.stems, u.keys, u.weights)


@functools.lru_cache(maxsize=8192)
def _heads(
    stems: tuple[str, ...], keys: tuple[str, ...], weights: tuple[int, ...]
) -> frozenset[str]:
    out: set[str] = set()
    for s, k, w in zip(stems, keys, weights, strict=True):
        if w == GENERIC:
            continue
        out.add(s[:HEAD])
        out.add(k[:HEAD])
        if "/" in s and "/" in s.strip("/"):
            out.update(seg[:HEAD] for seg in s.split("/") if seg and not seg.endswith(":"))
    return frozenset(out)


@functools.lru_cache(maxsize=16384)
def _salience(raw: str, first: bool) -> int:
    low = raw.lower()
    if is_value(raw):
        return VALUE
    if low in lx.GENERIC_VERBS:
        return GENERIC
    if len(raw) >= 2 and raw.isupper() and raw.isalpha():
        # Capitals: an acronym, or a common word shouted ("NEVER", "MAIN").
        return PLAIN if low in lx.VERBS or low in lx.STOPWORDS else NAME
    if raw[:1].isupper() and not first:
        return NAME
    return PLAIN


#: Every word ``_bound`` can give a side (the others are skipped without a call).
_BOUND_WORDS: Final = (
    lx.BOUND_AT_MOST | lx.BOUND_AT_LEAST | lx.COMPARATIVE_AT_MOST | lx.COMPARATIVE_AT_LEAST
)


def _bound(ws: tuple[str, ...], i: int) -> int:
    """+1 when word i sets a lower bound ("over 20", "more than 20"), -1 an upper one, else 0."""
    w = ws[i]
    if w in lx.BOUND_AT_MOST:
        return -1
    if w in lx.BOUND_AT_LEAST:
        return 1
    if i + 1 < len(ws) and ws[i + 1] == "than":
        if w in lx.COMPARATIVE_AT_MOST:
            return -1
        if w in lx.COMPARATIVE_AT_LEAST:
            return 1
    return 0


#: Every word ``_negations`` may count.
_NEGATING: Final = lx.NEGATORS | lx.NEGATIVE_VERBS | {"forget"}


#: Words that a negator turns into a permission ("not a problem", "don't mind", "no objection").
_PERMITTING: Final = frozenset({"problem", "issue", "mind", "objection", "objections", "harm"})
#: Negators that open each item of a list of things forbidden ("no X, no Y", "never X or Y").
_LIST_NEGATORS: Final = frozenset({"no", "never"})


def _negations(ws: tuple[str, ...]) -> tuple[int, dict[int, int]]:
    """Negations of the predicate, and the bound words with their (turned) sides.

    "No more than 20" sets the same bound as "under 20": a negator within three words before a
    bound word turns the bound, not the instruction. "Don't forget to X" is X. A "not" after a
    content word names the rejected alternative ("tabs not spaces") and negates nothing.
    """
    if _BOUND_WORDS.isdisjoint(ws):
        if _NEGATING.isdisjoint(ws):
            return 0, {}  # most spans: one set test in C for each question
        bounds: dict[int, int] = {}
    else:
        bounds = {i: b for i, w in enumerate(ws) if w in _BOUND_WORDS and (b := _bound(ws, i))}
    count = 0
    listed = False  # a "no" or "never" counted: another one is the next item of a list
    for i, w in enumerate(ws):
        if w == "not" and _contrastive(ws, i):
            continue
        if w in lx.NEGATORS or w in lx.NEGATIVE_VERBS or w == "forget":
            near = next((j for j in range(i + 1, min(i + 4, len(ws))) if j in bounds), None)
            if near is not None and w not in lx.NEGATIVE_VERBS:
                bounds[near] = -bounds[near]
                continue
            if w in lx.NEGATORS and not _PERMITTING.isdisjoint(ws[i + 1 : i + 3]):
                continue  # "not a problem to X", "I don't mind if you X" permit X
            if w in _LIST_NEGATORS:
                if listed:
                    # "no tabs and no trailing spaces" forbids two things; it does not cancel out
                    continue
                listed = True
            count += 1
    return count, bounds


def _contrastive(ws: Sequence[str], i: int) -> bool:
    """Whether the "not" at ``i`` names a rejected alternative: it follows a content word
    ("tabs not spaces"), or a filler after one ("the small set first not the full one"); after
    an auxiliary or a filler alone it negates the predicate ("still not", "please not")."""
    if i == 0:
        return False
    prev = ws[i - 1]
    if prev in lx.AUXILIARIES:
        return False
    if prev not in lx.FILLERS:
        return True
    return i > 1 and ws[i - 2] not in lx.STOPWORDS and ws[i - 2] not in lx.FILLERS


def _contrasted(ws: tuple[str, ...]) -> tuple[str, ...]:
    """Keys of the words a contrastive "not" rejects ("tabs not spaces" rejects "spaces")."""
    out: list[str] = []
    for i, w in enumerate(ws):
        if w == "not" and _contrastive(ws, i):
            after = [x for x in ws[i + 1 : i + 5] if x not in lx.STOPWORDS][:2]
            out.extend(key(x) for x in after)
    return tuple(out)


#: First words of the phrasal verbs: a word that opens none needs no look-up.
_PHRASE_STARTS: Final = frozenset(p.split()[0] for p in lx.PHRASES)
#: Their second words: a phrase of two or three words is looked up only before one.
_PHRASE_SECONDS: Final = frozenset(p.split()[1] for p in lx.PHRASES if len(p.split()) > 1)


def _phrased(ws: list[str], raw: list[str]) -> tuple[list[str], list[str]]:
    """Phrasal verbs as the one word they mean ("leave out" -> "omit")."""
    if _PHRASE_STARTS.isdisjoint(ws):
        return ws, raw
    # Words hold no space, so a phrase's words are words of the span: most spans have no
    # particle left after an object, and most openers no phrase's second word after them.
    particles = not _SPLIT_PARTICLES.isdisjoint(ws)
    out_w: list[str] = []
    out_r: list[str] = []
    i = 0
    while i < len(ws):
        if ws[i] not in _PHRASE_STARTS:
            out_w.append(ws[i])
            out_r.append(raw[i])
            i += 1
            continue
        for n in (3, 2) if i + 1 < len(ws) and ws[i + 1] in _PHRASE_SECONDS else ():
            phrase = " ".join(ws[i : i + n])
            if len(ws) - i >= n and phrase in lx.PHRASES and _phrase_holds(phrase, ws, i + n):
                out_w.append(lx.PHRASES[phrase])
                out_r.append(lx.PHRASES[phrase])
                i += n
                break
        else:
            j = _split_particle(ws, i) if particles else 0
            if j:
                # "leave the phone number out of it": the verb's meaning, the object, no particle
                meaning = lx.PHRASES[f"{ws[i]} {ws[j]}"]
                out_w.extend((meaning, *ws[i + 1 : j]))
                out_r.extend((meaning, *raw[i + 1 : j]))
                i = j + 1
                continue
            out_w.append(ws[i])
            out_r.append(raw[i])
            i += 1
    return out_w, out_r


def _phrase_holds(phrase: str, ws: list[str], after: int) -> bool:
    """Whether ``phrase`` means what ``lx.PHRASES`` says where it stands: "up to" is a bound
    before a number ("up to 20 rows") and a particle elsewhere ("round it up to the nearest
    euro", the opposite of rounding down)."""
    if phrase != "up to":
        return True
    nxt = ws[after] if after < len(ws) else ""
    return nxt[:1].isdigit() or nxt[:1] == "$" or nxt in lx.NUMBER_WORDS


#: Particles a phrasal verb may leave after its object ("leave X out", "turn X off"); "in",
#: "up" and "on" are left alone: after a noun they are mostly prepositions ("put X in the box").
_SPLIT_PARTICLES: Final = frozenset({"out", "off", "back"})
#: Words the object of a split phrasal verb does not run across.
_OBJECT_ENDS: Final = frozenset({"and", "or", "but", "then", "to", "from", "that", "so", "if"})
#: Longest object between a phrasal verb and its particle (words).
_SPLIT_GAP: Final = 5


def _split_particle(ws: list[str], i: int) -> int:
    """The index of the particle completing the phrasal verb at ``i`` after its object, or 0."""
    for j in range(i + 2, min(i + 2 + _SPLIT_GAP, len(ws))):
        w = ws[j]
        if w in _OBJECT_ENDS:
            return 0
        if w in _SPLIT_PARTICLES and f"{ws[i]} {w}" in lx.PHRASES:
            return j
    return 0


#: A negator that names a rejected alternative ("B, not A", "not A but B") negates nothing.
_CONTRAST_NOT: Final = re.compile(r"(,|\band)\s*not\b|\bnot\b(?=[^,.;!?]+?\s+but\b)", re.I)


def spoken(ws: Sequence[str]) -> list[str]:
    """A span's words past its fillers ("also", "please", "ok so"): its first is the verb an
    instruction opens with. All of them when every word is one."""
    return [w for w in ws if w not in lx.FILLERS] or list(ws)


def opening(ws: Sequence[str]) -> str:
    """The word a span opens with past its fillers ("" for no words)."""
    body = spoken(ws)
    return body[0] if body else ""


def obliges(ws: Sequence[str], text: str, please: bool = True) -> bool:
    """Whether words oblige: an obligation word ("must", "always", "should"), "make sure" or
    "have to" in ``text``. With ``please=False`` a "please" alone does not: it asks once."""
    if "make sure" in text or "have to" in text:
        return True
    if please:
        return not lx.OBLIGATION.isdisjoint(ws)
    return any(w in lx.OBLIGATION and w != "please" for w in ws)


#: Literals every match of a pattern of ``_form`` holds (``literals.needed``; the prefix, for an
#: anchored one): the pattern is run only on a text that holds one, as most texts hold none.
_POLITE_LITERALS: Final = needed(_POLITE_REQUEST)
_QUOTED_LITERALS: Final = needed(_QUOTED_WORDS)
_DIRECTED_LITERALS: Final = needed(_DIRECTED)
_PRAISE_OPENERS: Final = ("that", "this", "it", "these", "those", "everything", "all")
_PAST_SUBJECTS: Final = ("i", "we", "you", "they", "he", "she")
_WANT_OPENERS: Final = ("i", "we", "let us")
#: ``lx.REPORT_OPENERS`` without its case fold (``twins``), for the words of a span: they are
#: lower case, and then, when ASCII, the twin finds what the pattern finds.
_REPORT_OPENERS_LOWER: Final = lowercase_twin(lx.REPORT_OPENERS)
#: Words of an outburst ("omg", "fucking hell"): interjections and stopwords.
_OUTBURST_WORDS: Final = _INTERJECTIONS | lx.STOPWORDS


def _form(ws: tuple[str, ...], text: str) -> int:
    if not ws:
        return 0
    body = spoken(ws)
    first = body[0]
    second = body[1] if len(body) > 1 else ""
    joined = " ".join(body)
    form = 0
    stripped = text.rstrip(" .!)\"'*")
    if stripped.endswith("?"):
        form |= QUESTION
    if first in lx.WH_WORDS and second in lx.QUESTION_AUX:
        form |= QUESTION  # "what is …", "how do …"; "when you write X, do Y" is a condition
    if (first in ("why", "how") and not _AS_SAID.match(joined)) or joined.startswith(
        _ASKING_OPENERS
    ):
        form |= QUESTION
    if first in _YES_NO_AUX and second not in ("not", "n't") and not _causative(first, second):
        # "did finance sign off yet", "is the summary still under 150 words"
        form |= QUESTION | CHECKS
    third = body[2] if len(body) > 2 else ""
    if (
        first in _POLITE_AUX
        and (second in ("you", "u") or (second in _DETERMINERS and "be" in body))
        and third not in lx.ASKING_VERBS
    ):
        form |= POLITE  # "could you …", "could the p-values be reported?" ("can we …?" asks)
    elif first == "do" and (second in lx.SUBJECTS or second in _DETERMINERS):
        form |= QUESTION | CHECKS
    if len(ws) > 3 and ws[-1] in _TAG_QUESTION and (first in lx.SUBJECTS or stripped.endswith("?")):
        form |= QUESTION | CHECKS  # "you're leaving the opening line as it is, right"
    spaced = " ".join(ws)
    polite = (
        _POLITE_REQUEST.search(spaced)
        if not form & POLITE and may_match(spaced, _POLITE_LITERALS)
        else None
    )
    if polite and (polite.group(1) is None or polite.group(1) not in lx.ASKING_VERBS):
        form |= POLITE
    if (ws[0] in lx.ACK_OPENERS and (len(ws) <= _ACK_WORDS or ws[1] in lx.ACK_OPENERS)) or (
        joined.startswith(("got it", "sounds good", "makes sense", "thank you", "thanks"))
    ):
        form |= ACK  # "ok, thanks", "great work": not "ok so from now on …"
    if joined.startswith(_PRAISE_OPENERS) and _PRAISE.match(joined):
        form |= ACK  # "that looks great", "this is perfect"
    if (
        (_REPORT_OPENERS_LOWER if joined.isascii() else lx.REPORT_OPENERS).match(joined)
        or (first in lx.SUBJECT_OPENERS and not lx.FINITE.isdisjoint(body[1:6]))
        or _REPORTED.match(joined)
    ):
        form |= REPORT
    if may_match(text, _QUOTED_LITERALS) and _QUOTED_WORDS.search(text):
        form |= QUOTES
    if may_match(spaced, _DIRECTED_LITERALS) and _DIRECTED.search(spaced):
        form |= DIRECTED
    if joined.startswith("i") and _OWN_PLAN.match(joined):
        form |= OWN_PLAN
    if (
        len(ws) <= _ACK_WORDS
        and not _PRAISE_WORDS.isdisjoint(ws)
        and not (form & (OBLIGATION | NEGATED_START | DIRECTED))
    ):
        form |= ACK  # "that output makes sense", "looks good, carry on"
    if (
        first in lx.VERBS
        or (first in lx.NEGATORS and second)
        or first == "do"
        or (first == "always" and second in lx.VERBS)
        or _reversed_verb(first)
    ):
        form |= IMPERATIVE  # "always set --mem", "unfreeze the encoder" tell as a verb does
    if first in lx.NEGATORS or (first == "do" and second == "not"):
        form |= NEGATED_START
    if obliges(ws, joined):
        form |= OBLIGATION
    if first in ("i", "we", "my", "our"):
        form |= FIRST_PERSON
    if joined.startswith(_PAST_SUBJECTS) and _PAST_REPORT.match(joined):
        form |= PAST
    if joined.startswith(_WANT_OPENERS) and _WANT.match(joined):
        form |= WANT
    if _OUTBURST_WORDS.issuperset(ws):
        form |= ACK  # "fucking hell", "omg", "ugh lol": an outburst, not an instruction
    return form


#: Prefixes that reverse a verb ("unfreeze", "unpin", "nonblock"): the prefixed verb tells.
REVERSING_PREFIXES: Final = ("un", "non")


def _reversed_verb(word: str) -> bool:
    return word.startswith(REVERSING_PREFIXES) and any(
        word.startswith(p) and word[len(p) :] in lx.VERBS for p in REVERSING_PREFIXES
    )


#: Literals every match of ``lx.CONTRAST`` holds, in lower case (those of its twin).
_CONTRAST_LITERALS: Final = needed(lowercase_twin(lx.CONTRAST))


def _rejected(text: str) -> tuple[str, ...]:
    if text.isascii() and not may_match(text.lower(), _CONTRAST_LITERALS):
        # Most spans hold none of the contrast's literals: a few substring tests in C spare a
        # case-blind scan of the span (ASCII only: there a case-blind literal is its lower case).
        return ()
    out: list[str] = []
    for m in lx.CONTRAST.finditer(text):
        span = next(g for g in m.groups() if g)
        out.extend(key(w.lower()) for w in raw_words(span) if w.lower() not in lx.STOPWORDS)
    return tuple(dict.fromkeys(out))


def _negative_words(ws: tuple[str, ...]) -> int:
    """Words negative in themselves ("disabled", "off limits"); most spans have none."""
    if lx.NEGATIVE_WORDS.isdisjoint(ws):
        return 0
    return sum(1 for w in ws if w in lx.NEGATIVE_WORDS)


#: Words that are never content: they name no instruction's subject.
_NOT_CONTENT: Final = lx.STOPWORDS | lx.NEGATORS | lx.NEGATIVE_VERBS | {"than"}


@functools.lru_cache(maxsize=16384)
def _word(
    w: str, low: str, first: bool
) -> tuple[tuple[tuple[str, int], ...], tuple[str, str, int] | None]:
    """A word's antonym poles, and its (stem, concept key, salience) when it is content: what
    ``unit`` reads of each word, pure, so remembered once for every span it occurs in.

    A value (a number, in digits or a word, a path, code) is its own canonical spelling as
    both stem and key; "avoid", "skip" count once, as negations, so they carry no pole.
    """
    if len(w) > 2 and w[-1] == "s" and w[:-1].isupper() and w[:-1].isalpha():
        low = low[:-1]  # "PDFs", "IPs": an acronym's plural is the acronym, as stemmed
    k = key(low)
    poles = () if low in lx.NEGATIVE_VERBS else _ANTONYMS.get(k, ())
    if low in _NOT_CONTENT:
        return poles, None
    if low in lx.NUMBER_WORDS:
        s = str(lx.NUMBER_WORDS[low])
        return poles, (s, s, VALUE)
    weight = _salience(w, first)
    if weight == VALUE:
        s = value(w)
        return poles, (s, s, VALUE)
    return poles, (stem(low), k, weight)


@functools.lru_cache(maxsize=4096)
def unit(span: str, rejected: tuple[str, ...] | None = None, asks: bool = False) -> Unit:
    """The features of a span. ``rejected`` overrides the span's own contrast reading (a
    clause inherits its sentence's "…, not A").

    Reminder phrases ("as I said", "again") are cues of the message, not content, and are read
    apart (``read``); the negator of a contrast names an alternative and negates nothing.
    """
    own_rejected = _rejected(span) if rejected is None else rejected
    body = _unreminded(span)
    if "not" in body.lower():
        body = _CONTRAST_NOT.sub(lambda m: m.group(1) or " ", body)
    raw_t = raw_words(body)[:MAX_WORDS]
    ws_l, raw_l = _phrased([w.lower() for w in raw_t], list(raw_t))
    ws = tuple(ws_l)
    count, bounds = _negations(ws)
    if rejected is None and "not" in ws:
        own_rejected = own_rejected + _contrasted(ws)
    stems: list[str] = []
    keys: list[str] = []
    weights: list[int] = []
    values: list[str] = []
    poles: list[tuple[str, int]] = []
    first_alpha = next((i for i, w in enumerate(raw_l) if w[:1].isalpha()), 0)
    for i, (w, low) in enumerate(zip(raw_l, ws, strict=True)):
        if i in bounds:
            poles.append(("bound", bounds[i]))
            continue  # a limit's side lives in its pole, not in its words
        word_poles, content = _word(w, low, i == first_alpha)
        if word_poles:
            poles.extend(word_poles)
        if content is None:
            continue
        s, k, weight = content
        if weight == VALUE:
            values.append(s)
        stems.append(s)
        keys.append(k)
        weights.append(weight)
    return Unit(
        text=span,
        norm=" ".join(ws),
        stems=tuple(stems),
        keys=tuple(keys),
        weights=tuple(weights),
        values=tuple(values),
        poles=tuple(dict.fromkeys(poles)),
        rejected=own_rejected,
        polarity=count % 2,
        negations=count,
        polarity_loose=(count + _negative_words(ws)) % 2,
        form=_form(ws, span) | (IN_QUESTION if asks else 0),
        n_words=len(ws),
    )


class Cues(msgspec.Struct, frozen=True, gc=False):
    """What a whole message says about itself: a repeat, annoyance, a change."""

    reminder: int
    frustration: int
    #: Sentences that ask (a question, or cut from one).
    questions: int
    caps: float
    exclaim: bool
    update: int
    update_weak: int
    sentences: int
    words: int


class Message(msgspec.Struct, frozen=True, gc=False):
    """A user message read once: its units (sentences, their clauses, and the whole message
    when it is short and has several sentences) and its cues.

    ``sentences`` are the sentence units alone (what is remembered as instructions).
    """

    units: tuple[Unit, ...]
    #: Where each unit sits: SENTENCE, CLAUSE or WHOLE (parallel to ``units``).
    kinds: tuple[int, ...]
    sentences: tuple[Unit, ...]
    #: The clauses of each sentence when it has several (parallel to ``sentences``).
    parts: tuple[tuple[Unit, ...], ...]
    cues: Cues


#: Where a unit sits in its message.
SENTENCE: Final = 0
CLAUSE: Final = 1
WHOLE: Final = 2

#: A whole message is also one unit when it has several sentences and at most this many words:
#: terse restatements spread one instruction over fragments ("No emojis. Ever.").
WHOLE_MESSAGE_WORDS: Final = 30


#: Two capitals in a row: a text without them has no word in capitals.
_CAPS_PAIR: Final = re.compile(r"[A-Z]{2}")


#: A run of two letters or more (a word, for the share in capitals).
_LETTER_RUN: Final = re.compile(r"[A-Za-z]{2,}")


def _caps_share(text: str) -> float:
    if _CAPS_PAIR.search(text) is None:
        return 0.0  # most messages: no word in capitals, so none of their words
    letters = _LETTER_RUN.findall(text)
    if not letters:
        return 0.0
    return sum(1 for w in letters if w.isupper() and len(w) > 1) / len(letters)


#: The message cues' patterns, and their twins for a message that is ASCII once lower-cased.
_CUES: Final = (lx.REMINDER, lx.FRUSTRATION, lx.UPDATE, lx.UPDATE_WEAK)
_CUES_LOWER: Final = tuple(lowercase_twin(p) for p in _CUES)
_REMINDER_LOWER: Final = _CUES_LOWER[0]
#: The literals each twin needs (``literals.needed``): a message holding none of them has no
#: match, and is not scanned.
_CUE_LITERALS: Final = tuple(needed(p) for p in _CUES_LOWER)
_REMINDER_LITERALS: Final = _CUE_LITERALS[0]
_EXCLAIM_LITERALS: Final = needed(_EXCLAIM)


def _unreminded(span: str) -> str:
    """``lx.REMINDER.sub(" ", span)``; an ASCII span is searched lower-cased by the twin (same
    length, so the same places), and cut where it matched."""
    if not span.isascii() or _REMINDER_LOWER is lx.REMINDER:
        return lx.REMINDER.sub(" ", span)
    low = span.lower()
    if not may_match(low, _REMINDER_LITERALS):
        return span
    return sub_as_written(_REMINDER_LOWER, span, low, _cut)


def announces(span: str) -> bool:
    """Whether ``span`` itself announces a change (``lexicon.UPDATE``)."""
    low = span.lower()
    if low.isascii():
        return may_match(low, _CUE_LITERALS[2]) and _CUES_LOWER[2].search(low) is not None
    return lx.UPDATE.search(span) is not None


def _cut(_m: re.Match[str], _text: str) -> str:
    return " "


def _cue_counts(
    low: str,
    patterns: tuple[re.Pattern[str], ...],
    literals: tuple[tuple[str, ...] | None, ...] = (None, None, None, None),
) -> tuple[int, ...]:
    """Matches of each cue pattern in ``low``; none, without a scan, where the text lacks every
    literal the pattern needs."""
    return tuple(
        len(p.findall(low)) if may_match(low, lits) else 0
        for p, lits in zip(patterns, literals, strict=True)
    )


#: Saying that one has understood: a sentence holding it echoes what was understood ("ok got
#: it, no pings after midnight", "laminate the outdoor ones, understood") and tells nothing. Not
#: when asked ("no emojis, got it?").
_UNDERSTOOD: Final = re.compile(r"\b(?:got it|understood|gotcha)\b(?!\s*\?)")
#: What a span no longer tells when it echoes.
_TELLING: Final = IMPERATIVE | OBLIGATION | NEGATED_START | POLITE | DIRECTED | WANT


def _as_echo(u: Unit) -> Unit:
    return msgspec.structs.replace(u, form=(u.form | ACK) & ~_TELLING)


@functools.lru_cache(maxsize=256)
def read(text: str) -> Message:
    """Read a (capped) user message: pasted material dropped, sentences, clauses, cues."""
    body = slips_mended(segment.prose(text))
    low = body.lower()
    understood = "got it" in low or "understood" in low or "gotcha" in low
    sents = segment.pieces(body)
    units: list[Unit] = []
    kinds: list[int] = []
    sentence_units: list[Unit] = []
    parts: list[tuple[Unit, ...]] = []
    joined_texts: list[str] = []  # the whole message's sentences
    last = -1  # where the units of the sentence just read begin
    for s, asks in sents:
        whole = unit(s, None, asks)
        echoes = understood and _UNDERSTOOD.search(s.lower()) is not None
        if echoes:
            whole = _as_echo(whole)
            if not whole.stems and last >= 0:
                # "insulin in the ward fridge — got it.": the piece before a bare
                # acknowledgement is what was understood
                units[last:] = [_as_echo(u) for u in units[last:]]
                sentence_units[-1] = units[last]
                parts[-1] = tuple(units[last + 1 :])
                last = -1
        if not whole.stems:
            last = -1  # only the piece just before an acknowledgement is what it understood
            if whole.negations and whole.norm.partition(" ")[0] != "no":
                # "Never." negates the fragments beside it; "No." answers a question
                joined_texts.append(s)
            continue
        sentence_units.append(whole)
        joined_texts.append(whole.text)
        last = len(units)
        units.append(whole)
        kinds.append(SENTENCE)
        pieces = segment.clauses(s)
        own: list[Unit] = []
        if len(pieces) > 1:
            for p in pieces:
                u = unit(p, whole.rejected, asks)
                if whole.form & CHECKS and not u.form & CHECKS:
                    u = msgspec.structs.replace(u, form=u.form | CHECKS)  # "…, or are we still …"
                if echoes:
                    u = _as_echo(u)
                if u.stems:
                    own.append(u)
                    units.append(u)
                    kinds.append(CLAUSE)
        parts.append(tuple(own))
    n_words = sum(u.n_words for u in sentence_units)
    if len(sentence_units) > 1 and n_words <= WHOLE_MESSAGE_WORDS:
        asks_any = any(asks for _, asks in sents)
        joined = unit(" ".join(joined_texts), None, asks_any)
        if any(u.form & CHECKS for u in sentence_units) and all(
            u.form & (QUESTION | IN_QUESTION) for u in sentence_units
        ):
            joined = msgspec.structs.replace(joined, form=joined.form | CHECKS)
        if joined.stems:
            units.append(joined)
            kinds.append(WHOLE)
    reminder, frustration, update, update_weak = (
        _cue_counts(low, _CUES_LOWER, _CUE_LITERALS) if low.isascii() else _cue_counts(low, _CUES)
    )
    cues = Cues(
        reminder=reminder,
        frustration=frustration,
        questions=sum(1 for u in sentence_units if u.form & (QUESTION | IN_QUESTION)),
        caps=round(_caps_share(body), 3),
        exclaim=may_match(body, _EXCLAIM_LITERALS) and _EXCLAIM.search(body) is not None,
        update=update,
        update_weak=update_weak,
        sentences=len(sentence_units),
        words=n_words,
    )
    return Message(tuple(units), tuple(kinds), tuple(sentence_units), tuple(parts), cues)


def cache_clear() -> None:
    for fn in (unit, read, _heads, _salience, _word):
        fn.cache_clear()
