"""Features of an (earlier instruction, later span) pair: what the learned scorer reads.

Each feature is a general property of two English spans: how much of each the other covers
(exactly, by concept, by a typo), whether values changed, whether the polarities agree clause
by clause, whether an antonym turned, whether one side names the other's value as the rejected
alternative ("B, not A"), the grammatical form of each side and the cues of the later message.
None is a rule about a particular wording; how much each counts is learned
(``bench/train_restatements.py``), and the verdict is ``scorer.verdict``.
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
import re
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from monitor.detect.lang import lexicon as lx
from monitor.detect.lang import units as un
from monitor.detect.lang.literals import may_match
from monitor.detect.lang.normalise import clock24, stem, without_thousands
from monitor.detect.lang.segment import clauses
from monitor.detect.lang.units import Cues, Unit

#: Weight of a word by salience class (GENERIC .. VALUE) when measuring coverage.
WEIGHT: Final = (0.3, 1.0, 1.5, 2.0)
#: Credit of a match by how it was made.
EXACT: Final = 1.0
CONCEPT: Final = 0.9
TYPO: Final = 0.8
#: Shortest stems compared by edit distance (typos).
_MIN_TYPO: Final = 5
#: Shortest folder or file name of a path that names it on its own ("src", "dl-curated").
_MIN_SEGMENT: Final = 3

FEATURES: Final[tuple[str, ...]] = (
    "ratio",
    "token_set",
    "partial",
    "stem_ratio",
    "cov_e",
    "cov_l",
    "cov_e_exact",
    "cov_l_exact",
    "cov_e_concept",
    "miss_e",
    "miss_l",
    "miss_e_content",
    "miss_l_content",
    "n_e",
    "n_l",
    "shared_values",
    "values_e_only",
    "values_l_only",
    "number_changed",
    "name_changed",
    "single_swap",
    "content_replaced",
    "values_changed",
    "prefix_antonyms",
    "descents",
    "pol_e",
    "pol_l",
    "pol_differs",
    "loose_pol_differs",
    "neg_e",
    "neg_l",
    "poles_clash",
    "poles_agree",
    "poles_unpaired",
    "flip",
    "rejects_earlier",
    "earlier_rejects",
    "order_inversions",
    "swapped_roles",
    *(f"e_{name}" for name, _ in un.FORM_BITS),
    *(f"l_{name}" for name, _ in un.FORM_BITS),
    "reminder",
    "frustration",
    "questions",
    "caps",
    "exclaim",
    "update",
    "update_weak",
    "l_sentences",
    "l_message_words",
    "l_whole",
    "l_clause",
    "e_words",
    "l_words",
)
N_FEATURES: Final = len(FEATURES)
#: The features that read word order (``features``).
_ORDER_FEATURES: Final = tuple(
    FEATURES.index(f) for f in ("ratio", "partial", "stem_ratio", "descents", "order_inversions")
)


def _swapped_letters(a: str, b: str) -> bool:
    """Two neighbouring letters after the first typed in the wrong order ("wrod")."""
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return (
        len(diff) == 2
        and diff[0] > 0
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


def _typo(a: str, b: str) -> bool:
    """A slip of the keyboard: one edit in a word of up to eight letters, two in a longer one.
    Two neighbouring letters typed in the wrong order are one slip, not two ("recieve"), so
    edits are counted with transpositions (optimal string alignment). A four-letter word
    takes a swap of two letters after its first only: any other edit of one makes another word
    too often ("cost" / "cast")."""
    if not (a.isalpha() and b.isalpha()):
        return False
    if len(a) < _MIN_TYPO or len(b) < _MIN_TYPO:
        return len(a) == len(b) == _MIN_TYPO - 1 and _swapped_letters(a, b)
    if abs(len(a) - len(b)) > 2:
        return False
    return OSA.distance(a, b, score_cutoff=2) <= (1 if max(len(a), len(b)) <= 8 else 2)


class _Index(msgspec.Struct, frozen=True, gc=False):
    """Look-up sets of a unit, built once per distinct unit (``_index``). A struct rather than a
    named tuple: a pair reads its fields tens of times, and a struct's field is a plain slot
    where a named tuple's is a descriptor looked up on every read. Not tracked by the garbage
    collector (it holds no cycle), like the units."""

    stems: frozenset[str]
    keys: frozenset[str]
    #: Adjacent words written as one ("docker compose" ~ "docker-compose"), hyphens dropped.
    joined: frozenset[str]
    weights: dict[str, int]
    #: Alphabetic stems by their first ``un.HEAD`` letters (prefix matches) and by their first
    #: letter (typo candidates).
    by_head: dict[str, tuple[str, ...]]
    by_initial: dict[str, tuple[str, ...]]
    #: The parts of hyphenated words ("lsoa", "level" of "lsoa-level").
    parts: frozenset[str]
    #: The file and folder names of paths and URLs: "dl-curated" is named by
    #: "s3://dl-curated/clickstream/", "app.py" by "src/app.py".
    basenames: frozenset[str]
    #: Stems with a negating prefix, without it ("unfreeze" -> "freeze").
    unprefixed: frozenset[str]
    #: Stems with a reversing prefix (``un.REVERSING_PREFIXES``), without it, one per stem
    #: (see ``_reversals``).
    reversed_: tuple[str, ...]
    #: Each word with the word before it that is not an article (see ``_swapped``).
    slots: dict[str, str]
    #: Position of each stem (first occurrence).
    positions: dict[str, int]


_INDEX_MEMO: Final = 8192
#: Keyed by everything the index reads: two units with the same words but another salience
#: ("collect" in backticks or not) index differently, and a memo that mixed them would make a
#: pair's features depend on what was read before it, so a replay and a stream could differ.
_indexes: dict[tuple[str, tuple[str, ...], tuple[int, ...]], _Index] = {}


def _index(u: Unit) -> _Index:
    memo_key = (u.norm, u.stems, u.weights)
    found = _indexes.get(memo_key)
    if found is not None:
        return found
    by_head: dict[str, list[str]] = {}
    by_initial: dict[str, list[str]] = {}
    for st in u.stems:
        if st.isalpha():
            if len(st) >= un.HEAD:
                by_head.setdefault(st[: un.HEAD], []).append(st)
            by_initial.setdefault(st[:1], []).append(st)
    unprefixed = set()
    for st in [st for st in u.stems if st.startswith(_NEGATING_PREFIXES)]:  # most have none
        for p in _NEGATING_PREFIXES:
            if st.startswith(p) and len(st) - len(p) >= un.HEAD:
                unprefixed.add(st[len(p) :])
    # The stems in one string: a mark none of them holds is not looked for stem by stem (most
    # units have no hyphen, no path and no reversing prefix).
    flat = " ".join(u.stems)
    hyphens = "-" in flat
    idx = _Index(
        stems=frozenset(u.stems),
        keys=frozenset(u.keys),
        joined=_joined(u.stems, hyphens),
        weights=dict(zip(u.stems, u.weights, strict=True)),
        by_head={h: tuple(v) for h, v in by_head.items()},
        by_initial={h: tuple(v) for h, v in by_initial.items()},
        basenames=_basenames(u.stems) if "/" in flat else frozenset(),
        parts=_parts(u.stems) if hyphens else frozenset(),
        unprefixed=frozenset(unprefixed),
        reversed_=_reversed(u.stems) if "un" in flat or "non" in flat else (),
        slots=_slots(u.norm),
        # Each stem's first position: the later (smaller) index of a repeated stem wins.
        positions=dict(zip(reversed(u.stems), range(len(u.stems) - 1, -1, -1), strict=True)),
    )
    if len(_indexes) >= _INDEX_MEMO:
        _indexes.clear()  # a bound on memory; entries are pure functions of the unit
    _indexes[memo_key] = idx
    return idx


def _joined(stems: tuple[str, ...], hyphens: bool) -> frozenset[str]:
    """Adjacent stems written as one, and hyphenated stems without their hyphens."""
    pairs = frozenset(map(operator.add, stems, stems[1:]))
    if not hyphens:
        return pairs
    return pairs | frozenset(st.replace("-", "") for st in stems if "-" in st)


def _basenames(stems: tuple[str, ...]) -> frozenset[str]:
    """The file and folder names of the paths and URLs among ``stems`` (and their stems)."""
    return frozenset(
        form
        for st in stems
        if "/" in st and "/" in st.strip("/")
        for seg in st.split("/")
        if len(seg) >= _MIN_SEGMENT and not seg.endswith(":")
        for form in (seg, stem(seg))
    )


def _parts(stems: tuple[str, ...]) -> frozenset[str]:
    """The alphabetic parts of the hyphenated words among ``stems``."""
    return frozenset(
        p
        for st in stems
        if "-" in st and st.isascii() and "/" not in st
        for p in st.split("-")
        if len(p) >= _MIN_SEGMENT and p.isalpha()
    )


def _reversed(stems: tuple[str, ...]) -> tuple[str, ...]:
    """The stems with a reversing prefix (``un.REVERSING_PREFIXES``), without it."""
    return tuple(
        st[len(p) :]
        for st in stems
        if st.startswith(un.REVERSING_PREFIXES)
        for p in un.REVERSING_PREFIXES
        if st.startswith(p) and len(st) - len(p) >= 3
    )


def _credit(s: str, k: str, weight: int, other: _Index) -> float:
    """How well a word (stem ``s``, concept ``k``) is matched anywhere in ``other``."""
    if s in other.stems:
        return EXACT
    if k in other.keys or s in other.joined:
        return CONCEPT
    if "-" in s and s.replace("-", "") in other.stems:
        return CONCEPT  # "e-mail" ~ "email"
    if "/" in s and "/" in s.strip("/") and s.rsplit("/", 1)[1] in other.stems:
        return CONCEPT  # a path and its file name
    if s in other.basenames or s in other.parts:
        return CONCEPT  # "lsoa" in "lsoa-level", "dl-curated" in "s3://dl-curated/x"
    if "-" in s and s.replace("-", "") in other.joined:
        return CONCEPT  # "lsoa-level" for "lsoa level"
    if not s.isalpha():
        return 0.0
    if len(s) >= un.HEAD:
        for o in other.by_head.get(s[: un.HEAD], ()):
            if o.startswith(s) or s.startswith(o):
                return CONCEPT  # "prod" ~ "production", "config" ~ "configuration"
    if weight <= un.PLAIN and len(s) >= _MIN_TYPO - 1:  # names and values are exact: no typos
        for o in other.by_initial.get(s[:1], ()):
            if _typo_lengths(len(s), len(o)) and _typo(s, o):
                return TYPO
    return 0.0


def _typo_lengths(a: int, b: int) -> bool:
    """Whether words of these lengths can be ``_typo`` of each other (a test without a call to
    it for most candidates): both four letters, or both five or more and at most two apart."""
    if a < _MIN_TYPO or b < _MIN_TYPO:
        return a == b == _MIN_TYPO - 1
    return abs(a - b) <= 2


_Cover = tuple[float, float, float, float, float, list[int]]
#: Recent ``_cover`` results by the identity of the two units (held, so no id is reused while
#: its entry lives): ``changes_value`` reads the same two covers ``features`` just read.
_COVER_MEMO: Final = 64
_covers: dict[tuple[int, int], tuple[Unit, Unit, _Cover]] = {}


def _cover(mine: Unit, other: Unit) -> _Cover:
    """(matched weight, total weight, exactly matched weight, concept-only weight,
    unmatched content weight, indices unmatched; not to be mutated).

    A word counts at the higher salience either side gave it: "collect" is code on one side
    because it was in backticks, and the other side need not quote it again."""
    memo_key = (id(mine), id(other))
    found = _covers.get(memo_key)
    if found is not None:
        return found[2]
    if len(_covers) >= _COVER_MEMO:
        _covers.clear()
    got = _covers[memo_key] = (mine, other, _cover_of(mine, other))
    return got[2]


def _cover_of(mine: Unit, other: Unit) -> _Cover:
    idx = _index(other)
    other_w, stems, keys, joined = idx.weights, idx.stems, idx.keys, idx.joined
    got = total = exact = concept = miss_content = 0.0
    missed: list[int] = []
    for i, (s, k, w) in enumerate(zip(mine.stems, mine.keys, mine.weights, strict=True)):
        ow = other_w.get(s, 0)
        weight = WEIGHT[w if w >= ow else ow]  # the higher salience, without a call to max
        total += weight
        # ``_credit``'s first two tests inline: most words match exactly or by concept.
        if s in stems:
            c = EXACT
        elif k in keys or s in joined:
            c = CONCEPT
        else:
            c = _credit(s, k, w, idx)
        if c:
            got += weight * c
            if c == EXACT:
                exact += weight
            else:
                concept += weight
        else:
            missed.append(i)
            if w > un.GENERIC:
                miss_content += weight
    return got, total, exact, concept, miss_content, missed


def coverage(e: Unit, l_: Unit) -> tuple[float, float]:
    """``features``' ``cov_e`` and ``cov_l`` alone (the same divisions of the same covers), for a
    gate that reads how much each side covers of the other without the rest of the vector."""
    got_e, all_e, _, _, _, _ = _cover(e, l_)
    got_l, all_l, _, _, _, _ = _cover(l_, e)
    return got_e / (all_e or 1.0), got_l / (all_l or 1.0)


def _inversions(e: Unit, il: _Index) -> float:
    """Share of pairs of shared content words that appear in opposite orders (swapped roles:
    "from staging to prod" / "from prod to staging"); ``il`` is the later span's index."""
    pos = il.positions
    order = [pos[s] for s, w in zip(e.stems, e.weights, strict=True) if w > un.GENERIC and s in pos]
    n = len(order)
    if n < 2:
        return 0.0
    return _inverted(order) / (n * (n - 1) // 2)


def _inverted(order: Sequence[int]) -> int:
    """Pairs of ``order`` whose earlier number is the greater: each number counted against
    those after it, kept sorted, by a binary search (two calls in C a number, where testing
    every pair runs a generator step a pair)."""
    after: list[int] = []
    inv = 0
    for a in reversed(order):
        inv += bisect.bisect_left(after, a)
        bisect.insort(after, a)
    return inv


_ARTICLES: Final = frozenset({"the", "a", "an", "this", "that", "our", "my", "your", "its"})
#: Pronouns stand for a word said elsewhere, so taking its slot swaps no roles: "when you reply
#: to new contributors, thank them" / "thank new contributors when you reply to them".
_PRONOUNS: Final = frozenset(
    {"it", "them", "they", "these", "those", "he", "him", "she", "her", "we", "us", "you", "me"}
)
#: Words whose two sides are interchangeable: trading places across them swaps nothing.
_SYMMETRIC: Final = frozenset({"and", "or", "nor", "&", "plus", "then", "vs", "with", ","})


def _slots(norm: str) -> dict[str, str]:
    """Each word with the nearest word before it that is not an article: its slot in the
    sentence ("from the prod bucket" puts "prod" after "from")."""
    out: dict[str, str] = {}
    prev = ""
    for w in norm.split():
        out.setdefault(w, prev)
        if w not in _ARTICLES:
            prev = _SAME_SLOT.get(w, w)
    return out


#: Words that open one slot: "into savings" and "to savings" say where the money goes.
_SAME_SLOT: Final = {"into": "to", "onto": "to", "towards": "to", "toward": "to"}


def _swapped(ie: _Index, il: _Index) -> float:
    """Whether two shared words took each other's slots: "copy from prod into dev" /
    "copy from dev into prod", "A as master and B as slave" / "B as master and A as slave"."""
    se, sl = ie.slots, il.slots
    shared = [w for w in se if w in sl and w not in _ARTICLES and w not in _PRONOUNS and len(w) > 1]
    for i, a in enumerate(shared):
        for b in shared[i + 1 :]:
            if (
                se[a]
                and se[a] == sl[b]
                and se[b] == sl[a]
                and se[a] != se[b]
                and se[a] not in _SYMMETRIC
                and se[b] not in _SYMMETRIC
            ):
                return 1.0
    return 0.0


_NEGATING_PREFIXES: Final = ("un", "dis", "non", "de", "in", "im", "il", "ir", "anti")


def _prefix_antonyms(ie: _Index, il: _Index) -> int:
    """Words of one side that are words of the other with a negating prefix ("freeze" /
    "unfreeze", "cite" / "uncited", "able" / "disable")."""
    return len(ie.unprefixed & il.stems) + len(il.unprefixed & ie.stems)


def _descents(ie: _Index, l_: Unit) -> int:
    """Descents in the order the later span gives the shared content words, numbered by their
    order in the earlier one (``ie``, its index): a moved clause makes one ("for X, use Y" /
    "use Y for X"), two values trading places make more. A request's opening verb is left out:
    told before its object ("print the hymn sheets") or after it ("hymn sheets printed"), the
    verb moves but no value does."""
    pos = ie.positions
    seq = [pos[s] for s, w in zip(l_.stems, l_.weights, strict=True) if w > un.GENERIC and s in pos]
    if seq and l_.form & un.IMPERATIVE and seq[0] == pos.get(l_.stems[0]):
        seq = seq[1:]
    descents: int = sum(map(operator.gt, seq, seq[1:]))  # each neighbour pair compared in C
    return min(descents, 3)


def _same_frame(a: Sequence[str], i: int, b: Sequence[str], j: int) -> bool:
    """Whether a[i] and b[j] stand between the same neighbours ("the X session")."""
    before = (i == 0 and j == 0) or (i > 0 and j > 0 and a[i - 1] == b[j - 1])
    after = (i == len(a) - 1 and j == len(b) - 1) or (
        i + 1 < len(a) and j + 1 < len(b) and a[i + 1] == b[j + 1]
    )
    return before and after


def _numeric(values: Iterable[str]) -> set[str]:
    return set(filter(_has_digit, values))


@functools.lru_cache(maxsize=8192)
def _has_digit(value: str) -> bool:
    """Whether a value holds a digit: a pure function of it, remembered, so ``_numeric`` runs
    its filter in C (the same values meet every later span)."""
    return any(c.isdigit() for c in value)


_TELLS: Final = un.IMPERATIVE | un.NEGATED_START | un.POLITE | un.DIRECTED | un.OBLIGATION
_DESCRIBES: Final = un.REPORT | un.QUESTION | un.IN_QUESTION | un.PAST


def opposite(e: Unit, l_: Unit) -> bool:
    """Whether ``l_`` tells the opposite of ``e``: said as an instruction (not a report or a
    question), with the predicate turned (by both polarity readings) or an antonym turned, but
    not both ("don't enable it" is "disable it").

    A hard gate, because this is how English negation works, not a fitted rule: an instruction
    with its predicate negated is the opposite instruction, however loudly it is said. Reports
    and questions are left to the scorer: annoyed users restate by describing the breach ("the
    price is STILL in the headline").
    """
    pol, loose = l_.polarity, l_.polarity_loose
    licensed = _licensing(l_.norm)
    if licensed:
        # "there is no reason we should not have X" tells to have X: the opener turns the rest
        rest = un.unit(l_.norm[licensed.end() :])
        pol, loose = 1 - rest.polarity, 1 - rest.polarity_loose
    else:
        describes = l_.form & _DESCRIBES
        if l_.form & un.POLITE:
            describes &= ~(un.QUESTION | un.IN_QUESTION)  # "could you leave it out?" asks for it
        if (not l_.form & _TELLS or describes) and not _tells_as(e, l_):
            return False
    turned = e.polarity != pol and e.polarity_loose != loose
    return turned != ((_clashes(e, l_) + _reversals(e, l_)) % 2 == 1)


def _tells_as(e: Unit, l_: Unit) -> bool:
    """Whether a span read as neither telling nor describing opens with the verb the
    instruction ``e`` tells, past its negation ("cache the map tiles" for "don't cache the map
    tiles"): told in the same form, whether or not the verb is one the lexicon knows."""
    if l_.form or l_.n_words < _TOLD_WORDS or not e.form & (un.IMPERATIVE | un.NEGATED_START):
        return False  # a fragment ("PUSH.") tells with the words beside it
    told = [w for w in un.spoken(e.norm.split()) if w not in lx.NEGATING_OPENERS]
    return bool(told) and un.opening(l_.norm.split()) == told[0]


#: Words a span needs to tell on its own.
_TOLD_WORDS: Final = 3


#: Openers that negate the clause after them as a whole ("there is no reason not to close it",
#: "it is not like we can not give her a chapter", "it would not be right to leave it
#: uncited", "there is no need to ask"): the span tells the reverse of the rest's polarity,
#: wherever in it the opener stands. Read on the normalised text.
_LICENSING: Final = re.compile(
    r"\b(?:there is (?:really |just |simply )?no (?:reason|need|way)(?: why)?|"
    r"(?:it is|its) not (?:like|the case that)|it (?:would|is) not be right to|"
    r"it is not (?:right|possible|ok|okay|acceptable) to)\s+(?=\w)"
)


def _licensing(norm: str) -> re.Match[str] | None:
    """``_LICENSING.search(norm)``; every opener holds "there is" or "not", which most spans
    lack, and then there is no scan."""
    if "there is" in norm or "not" in norm:
        return _LICENSING.search(norm)
    return None


def _reversals(e: Unit, l_: Unit) -> int:
    """Content words of one side that the other says with a reversing prefix ("freeze" /
    "unfreeze", "pin" / "unpin"). Only "un" and "non": the other negating prefixes also begin
    unrelated words ("display" / "play", "index" / "dex")."""
    ie, il = _index(e), _index(l_)
    return sum(
        1
        for mine, other in ((ie, il), (il, ie))
        for rest in mine.reversed_
        if other.weights.get(rest, 0) > un.GENERIC
    )


def thin(e: Unit, l_: Unit) -> bool:
    """Whether the later span is too thin to restate the earlier one: a single plain word
    ("investigate") can name an instruction's topic but not the instruction, unless the
    instruction itself is one word of content ("No emojis"). A name or a value is specific
    enough alone ("Stay on release/4.2"). Likewise a span that shares one plain word of an
    instruction of three or more ("write the plan" / "this plan is too long for the meeting")
    names its topic, not the instruction."""
    if any(w >= un.NAME for w in l_.weights):
        return False
    content_l = sum(1 for w in l_.weights if w > un.GENERIC)
    content_e = sum(1 for w in e.weights if w > un.GENERIC)
    if content_l < 2 and content_e >= 2:
        # "No prints." forbids what "No print statements" forbids: a word the rule names,
        # forbidden again, is the rule, not its topic.
        return not (content_l == 1 and e.polarity == l_.polarity == 1 and _held_by(l_, e))
    if content_e < _TOPIC_ONLY or any(w >= un.NAME for w in e.weights):
        return False
    return _held_by(e, l_) < 2


def _held_by(a: Unit, b: Unit) -> int:
    """How many content words of ``a`` span ``b`` holds (by ``_credit``)."""
    idx = _index(b)
    return sum(
        1
        for s, k, w in zip(a.stems, a.keys, a.weights, strict=True)
        if w > un.GENERIC and _credit(s, k, w, idx)
    )


#: Content words an instruction needs before one of them shared is its topic only.
_TOPIC_ONLY: Final = 3


def checks(l_: Unit, cues: Cues) -> bool:
    """Whether the later span only asks whether something is so ("did you keep the filenames
    lowercase like I asked", "Priyanka is off on Wednesdays, right?"): a check restates no
    instruction, because a question is not an instruction. A request put as a question ("could
    you keep it short?") is one, and so is an annoyed one ("is it really that hard to …",
    in capitals, with "!"): those are left to the scorer."""
    if not l_.form & un.CHECKS or l_.form & un.POLITE:
        return False
    return not (cues.frustration or cues.exclaim or cues.caps >= 0.5)


def changes_value(e: Unit, l_: Unit, cues: Cues) -> bool:
    """Whether ``l_`` gives ``e`` with a value changed: a number of one that the other lacks on
    both sides, a name or value of one replaced by another ("use Postgres" / "use MySQL"), one
    content word swapped in the same frame ("the staging session" / "the prod session"), or a
    change announced ("instead", "actually", "switch to") beside new content.

    A hard gate at run time: the same instruction with another value is an update, not a repeat,
    and an aligned pair it holds for is marked a contradiction. It also reads some spellings of
    one value as two ("512Mi" / "512 MiB"), so the trainer does not drop a labelled
    restatement's span for it (``bench/train_restatements.featurise``); without the gate the
    value features alone let updates by other writers through.
    """
    _, _, _, _, _, missed_e = _cover(e, l_)
    _, _, _, _, _, missed_l = _cover(l_, e)
    old = {e.stems[i] for i in missed_e if e.weights[i] >= un.NAME}
    new = {l_.stems[i] for i in missed_l if l_.weights[i] >= un.NAME}
    # One name written inside the other ("checkout v4" for "actions/checkout@v4") is kept.
    old, new = _uncontained(old, new), _uncontained(new, old)
    if old and new and numbers(e.text) == numbers(l_.text):
        # "300dpi" and "300 dpi", "6 pm" and "18:00": the same numbers spelled otherwise.
        old, new = old - _numeric(old), new - _numeric(new)
    if _numeric(old) and _numeric(new):
        return True
    if old and new:
        return True
    content_e = [i for i in missed_e if e.weights[i] > un.GENERIC and e.stems[i] not in _MARKERS]
    content_l = [i for i in missed_l if l_.weights[i] > un.GENERIC and l_.stems[i] not in _MARKERS]
    if len(content_e) == 1 and len(content_l) == 1:
        a, b = e.stems[content_e[0]], l_.stems[content_l[0]]
        if (
            abbreviates(a, b)
            or _typo(a, b)
            or _LEMMA.get(a, a) == _LEMMA.get(b, b)
            or _parts_of(a) == _parts_of(b)
        ):
            return False  # one word, spelled otherwise ("col", "tabel", "goes", "IPs")
        if _same_frame(e.stems, content_e[0], l_.stems, content_l[0]):
            return True
    return bool(cues.update) and bool(content_l) and bool(content_e)


#: Words that mark a contrast or stress rather than name anything ("X rather than Y" is "X
#: instead of Y"; "seriously, no more …").
_MARKERS: Final = frozenset(
    {"instead", "rather", "seriously", "really", "literally", "honestly", "again", "still"}
)
#: Forms of the commonest irregular verbs, which stemming leaves apart.
_LEMMA: Final = {
    **dict.fromkeys(("goes", "going", "went", "gone"), "go"),
    **dict.fromkeys(("does", "doing", "did", "done"), "do"),
    **dict.fromkeys(("has", "having", "had"), "have"),
    **dict.fromkeys(("makes", "making", "made"), "make"),
    **dict.fromkeys(("takes", "taking", "took", "taken"), "take"),
    **dict.fromkeys(("gets", "getting", "got", "gotten"), "get"),
}


_NUMBER: Final = re.compile(r"\d+(?:\.\d+)?|\.\d+")
_CLOCK: Final = re.compile(r"\b(\d{1,2})(?::(\d\d))?\s*([ap])\.?m\b\.?")


def _clock24(m: re.Match[str]) -> str:
    return clock24(m.group(1), m.group(2), m.group(3))


#: A time of ``_CLOCK`` holds one of these: most spans hold none, and are not scanned for one.
_CLOCK_LITERALS: Final = ("am", "pm", "a.m", "p.m")


@functools.lru_cache(maxsize=4096)
def numbers(text: str) -> frozenset[float]:
    """The numbers a span gives, whatever their spelling: "300dpi" and "300 dpi", "0.50" and
    ".50", "6 pm" and "18:00", "TLSv1.2" and "TLS 1.2". Read off the text, which keeps a
    version's point that the span's ``norm`` splits off."""
    flat = without_thousands(text.lower())
    if may_match(flat, _CLOCK_LITERALS):
        flat = _CLOCK.sub(_clock24, flat)
    return frozenset(float(n) for n in _NUMBER.findall(flat))


#: A name's parts: its words and numbers ("actions/checkout@v4": actions, checkout, v, 4;
#: "300dpi": 300, dpi).
_PARTS: Final = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


@functools.lru_cache(maxsize=8192)
def _parts_of(name: str) -> frozenset[str]:
    """A name's parts, each without a plural "s" ("IPs" is the plural of "IP"; stemming
    leaves names as written): a pure function of the name, remembered, as the names of
    remembered instructions meet every later span."""
    return frozenset(p[:-1] if len(p) > 2 and p[-1] == "s" else p for p in _PARTS.findall(name))


def _uncontained(mine: set[str], theirs: set[str]) -> set[str]:
    """``mine`` without the names whose parts hold all of one of ``theirs``' ("checkout v4" is
    in "actions/checkout@v4") or are all held by one ("v4" in it)."""
    if not mine or not theirs:
        return mine
    split = list(map(_parts_of, theirs))
    out = set()
    for n in mine:
        parts = _parts_of(n)
        if not any(p and (p <= parts or parts <= p) for p in split):
            out.add(n)
    return out


def abbreviates(a: str, b: str) -> bool:
    """Whether the shorter word is an abbreviation of the longer: its start, three letters or
    more ("eur"/"euro"), or the same first letter and its letters in order in the longer, two
    or more fewer ("col"/"column", "qts"/"quart", "stmt"/"statement")."""
    short, long_ = sorted((a, b), key=len)
    if len(short) > 2 and short.endswith("s") and not long_.endswith("s"):
        short = short[:-1]  # "qts" for "quart" (stems are singular)
    if len(short) >= 3 and long_.startswith(short) and short != long_:
        return True  # "eur" for "euro", "min" for "minimum"
    if len(short) < 2 or len(long_) - len(short) < 2 or short[0] != long_[0]:
        return False
    it = iter(long_)
    return all(c in it for c in short)


def _clashes(e: Unit, l_: Unit) -> int:
    """Poles the two spans hold with opposite signs only ("enable" / "disable"); a pole a span
    holds both ways ("under the figures, above the tables") clashes with nothing."""
    mine, theirs = set(e.poles), set(l_.poles)
    return sum(
        1
        for p, sign in mine
        if (p, -sign) in theirs and (p, sign) not in theirs and (p, -sign) not in mine
    )


@functools.lru_cache(maxsize=4096)
def _form_vector(form: int) -> tuple[float, ...]:
    return tuple(float(bool(form & bit)) for _, bit in un.FORM_BITS)


def features(e: Unit, l_: Unit, cues: Cues, where: int) -> list[float]:
    """The feature vector (in ``FEATURES`` order) of earlier unit ``e`` against later ``l_``.

    Where the two give the same clauses in another order (``_in_their_order``), the features
    that read word order are read with ``l_``'s clauses in ``e``'s order: two requests joined
    by "and" say the same in either order, and read as written they look like a change."""
    row = _features(e, l_, cues, where)
    if e.n_words >= _REORDER_WORDS and l_.n_words >= _REORDER_WORDS:
        ordered = _in_their_order(e, l_)
        if ordered is not None:
            again = _features(e, ordered, cues, where)
            for i in _ORDER_FEATURES:
                row[i] = again[i]
    return row


#: Words a span needs before its clauses are compared for order.
_REORDER_WORDS: Final = 6
#: Words that make clauses steps in order: told in another order, they are another instruction.
_SEQUENCE: Final = frozenset(
    {"then", "first", "before", "after", "next", "finally", "until", "once", "afterwards", "later"}
)


def _in_their_order(e: Unit, l_: Unit) -> Unit | None:
    """``l_`` with its clauses put in the order of ``e``'s, when the two give as many clauses
    (two or more), each of ``l_``'s the best match of a different one of ``e``'s, in another
    order, and neither says the order matters ("then", "before"); else None."""
    if not ("," in e.text or " and " in e.text) or not ("," in l_.text or " and " in l_.text):
        return None
    ce, cl = clauses(e.text), clauses(l_.text)
    if len(ce) < 2 or len(ce) != len(cl):
        return None
    if not _SEQUENCE.isdisjoint(e.norm.split()) or not _SEQUENCE.isdisjoint(l_.norm.split()):
        return None
    he = [un.heads(un.unit(c)) for c in ce]
    hl = [un.heads(un.unit(c)) for c in cl]
    order = []
    for h in he:
        best = max(range(len(hl)), key=lambda j: len(h & hl[j]))
        if h.isdisjoint(hl[best]):
            return None
        order.append(best)
    if sorted(order) != list(range(len(cl))) or order == sorted(order):
        return None
    return un.unit(", ".join(cl[j].strip(" ,.;!?") for j in order))


def _features(e: Unit, l_: Unit, cues: Cues, where: int) -> list[float]:
    got_e, all_e, exact_e, concept_e, miss_ce, missed_e = _cover(e, l_)
    got_l, all_l, exact_l, _concept_l, miss_cl, missed_l = _cover(l_, e)
    ie, il = _index(e), _index(l_)
    all_e = all_e or 1.0
    all_l = all_l or 1.0
    shared_values = set(e.values) & set(l_.values)
    e_only = [v for v in e.values if v not in shared_values]
    l_only = [v for v in l_.values if v not in shared_values]
    num_e, num_l = _numeric(e.values), _numeric(l_.values)
    name_e = [i for i in missed_e if e.weights[i] >= un.NAME]
    name_l = [i for i in missed_l if l_.weights[i] >= un.NAME]
    content_e = [i for i in missed_e if e.weights[i] > un.GENERIC]
    content_l = [i for i in missed_l if l_.weights[i] > un.GENERIC]
    single_swap = (
        len(content_e) == 1
        and len(content_l) == 1
        and _same_frame(e.stems, content_e[0], l_.stems, content_l[0])
    )
    if e.poles or l_.poles:
        clash = _clashes(e, l_)
        agree = len(set(e.poles) & set(l_.poles))
        unpaired = len({p for p, _ in e.poles} ^ {p for p, _ in l_.poles})
    else:
        clash = agree = unpaired = 0  # most pairs: no pole on either side
    pol_differs = int(e.polarity != l_.polarity)
    short, long_ = (e.norm, l_.norm) if len(e.norm) <= len(l_.norm) else (l_.norm, e.norm)
    row = [
        fuzz.ratio(e.norm, l_.norm) / 100.0,
        fuzz.token_set_ratio(e.norm, l_.norm) / 100.0,
        fuzz.partial_ratio(short, long_) / 100.0 if short else 0.0,
        fuzz.ratio(" ".join(e.stems), " ".join(l_.stems)) / 100.0,
        got_e / all_e,
        got_l / all_l,
        exact_e / all_e,
        exact_l / all_l,
        concept_e / all_e,
        len(missed_e),
        len(missed_l),
        miss_ce,
        miss_cl,
        min(len(e.stems), 20),
        min(len(l_.stems), 40),
        len(shared_values),
        len(e_only),
        len(l_only),
        float(bool(num_e) and bool(num_l) and num_e != num_l),
        float(bool(name_e) and bool(name_l)),
        float(single_swap),
        min(miss_ce, miss_cl),
        float(bool(e_only) and bool(l_only)),
        float(_prefix_antonyms(ie, il)),
        _descents(ie, l_),
        e.polarity,
        l_.polarity,
        pol_differs,
        int(e.polarity_loose != l_.polarity_loose),
        min(e.negations, 3),
        min(l_.negations, 3),
        clash,
        agree,
        unpaired,
        float(pol_differs != clash % 2),
        # Most spans reject nothing: their keys are not read.
        float(bool(l_.rejected) and not set(e.keys).isdisjoint(l_.rejected)),
        float(bool(e.rejected) and not set(l_.keys).isdisjoint(e.rejected)),
        _inversions(e, il),
        _swapped(ie, il),
        *_form_vector(e.form),
        *_form_vector(l_.form),
        min(cues.reminder, 3),
        min(cues.frustration, 3),
        min(cues.questions, 3),
        cues.caps,
        float(cues.exclaim),
        min(cues.update, 3),
        min(cues.update_weak, 3),
        min(cues.sentences, 10),
        math.log1p(cues.words),
        float(where == un.WHOLE),
        float(where == un.CLAUSE),
        math.log1p(e.n_words),
        math.log1p(l_.n_words),
    ]
    return row
