"""Restated instructions: a user saying again something they already told the agent.

A restatement after a compaction suggests the summary dropped the instruction. Similarity
alone cannot tell a restatement from its opposite ("don't push" / "push") or from an update
("port 8080" / "port 9090"), so a match must pass five tests:

* both sides instruct (questions, acknowledgements and status reports never match);
* the later sentence's content is covered by the earlier instruction (weighted: values and
  names count more than generic verbs), and enough of it to be specific;
* the predicates agree in polarity, unless the user flags a repeat ("as I said", shouting);
* no value changed: no new number or name in place of an old one, no "instead"/"actually";
* neither side is a fragment: without a reminder cue or shouting, each span needs two words
  that are not generic verbs, or one beside a verb or a negation (``_specific``), so
  "should be 8ABeB7" restates nothing. Verbless spans with two content words stay: terse
  restatements ("No implicits in the new Scala modules please") are common.

Pasted machine output (stack traces, logs, terminal sessions, code) is dropped before a
message is read (``text.prose``): it is neither an instruction nor a restatement.

Matching is on precomputed stems, so each earlier instruction costs a few set look-ups.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import Final

import msgspec
from rapidfuzz import fuzz, process

from monitor.detect import text as tx
from monitor.detect.config import DetectConfig

#: Share of the score from how much of the earlier instruction is repeated; the rest is how
#: much of the new sentence the instruction covers (restatements are often shorter).
_E_SHARE: Final = 0.15
#: Weight of a token by salience class (tx.GENERIC .. tx.VALUE) when measuring coverage.
_WEIGHT: Final = (0.3, 1.0, 1.5, 2.0)
#: Shortest stem that may match as a prefix of a longer one ("prod" ~ "production").
_MIN_PREFIX: Final = 4
#: Shortest stems compared by edit similarity when nothing else matched (typos).
_MIN_FUZZY: Final = 5
_FUZZY_TOKEN: Final = 85.0
#: Matched weight below which a pair is too thin to call (one plain shared word).
_MIN_EVIDENCE: Final = 2.0
#: Fewest non-generic words a span of a message without a reminder cue or shouting needs to
#: restate anything (see ``_specific``).
_MIN_CONTENT: Final = 2
#: Score added when a name or value (a path, a number, a proper noun) is shared.
_SALIENT_BONUS: Final = 5.0
#: Score added when the message itself says it repeats something.
_CUE_BONUS: Final = 15.0
#: Most messages are short; a whole cue-bearing message is also tried as one unit up to this size.
_MAX_MESSAGE_TOKENS: Final = 24
#: Memo bounds (memory only: the memos cache pure functions of their arguments).
_MESSAGE_MEMO: Final = 64
_SENTENCE_MEMO: Final = 1024
_KEYS_MEMO: Final = 4096


class Instruction(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One instructing sentence, with the features matching needs precomputed."""

    turn: int
    sentence: str
    stems: tuple[str, ...] = ()
    weights: tuple[int, ...] = ()
    polarity: int = 0
    update: bool = False
    #: Four-letter heads of the stems (see ``_heads``): a cheap pre-filter for matching.
    heads: tuple[str, ...] = ()


class Restatement(msgspec.Struct, frozen=True):
    """A later sentence that restates ``earlier``; ``cues`` say why it was believed."""

    earlier: Instruction
    sentence: str
    score: float
    cues: tuple[str, ...]


class _Unit(msgspec.Struct, frozen=True):
    """A candidate restating span of the new message, with its look-up keys built once."""

    sentence: str
    stems: tuple[str, ...]
    weights: tuple[int, ...]
    polarity: int
    update: bool
    head_set: frozenset[str]
    #: Heads of its words that are not generic verbs.
    salient_heads: frozenset[str]
    #: For each head: how many tokens have it and their weight (for the coverage bound).
    head_weights: dict[str, tuple[int, float]]
    total: float


class _Message(msgspec.Struct, frozen=True):
    """Everything both entry points read off one user message, computed once."""

    #: Instructing sentences: (sentence, stems, weights, polarity, update, heads).
    instructions: tuple[
        tuple[str, tuple[str, ...], tuple[int, ...], int, bool, tuple[str, ...]], ...
    ]
    strong: bool
    weak: bool
    shouted: bool
    units: tuple[_Unit, ...]
    #: Heads of the units' words that are not generic verbs: an earlier instruction sharing
    #: none of them cannot be restated here (see ``find_restatements``).
    salient_heads: frozenset[str]
    #: Heads of every unit.
    heads: frozenset[str]


@functools.lru_cache(maxsize=_MESSAGE_MEMO)
def _read(text: str) -> _Message:
    """The analysis of a (capped) user message.

    Memoised because the core asks twice about each message: ``find_restatements`` then
    ``instructions_in``. A pure function of the text; the bound only caps memory.
    """
    body = tx.prose(text)
    analysed = [(s, tx.analyse(s)) for s in tx.sentences(body)]
    strong, weak = tx.reminder_cues(body)
    shouted = tx.emphatic(body)
    units, own = _units(analysed, strong or shouted)
    # An instructing sentence with tokens has its own unit (same tokens): reuse its heads.
    instructions = tuple(
        (u.sentence, u.stems, u.weights, u.polarity, u.update, tuple(sorted(u.head_set)))
        for u in own
    )
    salient = frozenset().union(*(u.salient_heads for u in units))
    heads = frozenset().union(*(u.head_set for u in units))
    return _Message(instructions, strong, weak, shouted, units, salient, heads)


def cache_clear() -> None:
    """Empty every memo of restatement matching, and of ``text`` (benchmarks measure the cost
    without them)."""
    for fn in (_read, _sentence_units, _keys, _heads, _specific):
        fn.cache_clear()
    tx.cache_clear()


def instructions_in(text: str, turn: int, cfg: DetectConfig) -> tuple[Instruction, ...]:
    """The sentences of a user message that instruct (not questions, acks, status talk)."""
    return tuple(
        Instruction(
            turn=turn,
            sentence=sentence[: cfg.evidence_chars],
            stems=stems,
            weights=weights,
            polarity=polarity,
            update=update,
            heads=heads,
        )
        for sentence, stems, weights, polarity, update, heads in _read(
            text[: cfg.max_text_chars]
        ).instructions
    )


def find_restatements(
    history: Sequence[Instruction], text: str, turn: int, cfg: DetectConfig
) -> list[Restatement]:
    """Earlier instructions (earlier.turn < turn) that this user message restates.

    At most one Restatement per earlier instruction (its best-scoring sentence), best first.
    An instruction given several times in the same words is judged once, as its earliest
    saying: users repeat themselves verbatim, and each copy would score the same.

    Only instructions sharing a head with a non-generic word of the message are scored: a
    match needs matched weight ``_MIN_EVIDENCE``, which generic verbs alone ("keep", "use")
    do not reach, so this skips most of the history with one set operation per instruction.
    """
    m = _read(text[: cfg.max_text_chars])
    if not m.units:
        return []
    strong, weak, shouted = m.strong, m.weak, m.shouted
    # Coverage of a unit is bounded by its words sharing a 4-letter head with the instruction;
    # pairs that cannot reach the threshold even with every bonus are skipped unscored.
    bonus = _SALIENT_BONUS + (_CUE_BONUS if strong or shouted else _CUE_BONUS / 3 if weak else 0)
    need = (cfg.restate_threshold - bonus - 100.0 * _E_SHARE) / (100.0 * (1 - _E_SHARE))
    flagged = strong or shouted
    units = m.units if flagged else tuple(u for u in m.units if _specific(u.weights, u.polarity))
    if not units:
        return []
    fewest = [_fewest_heads(u, need) for u in units]
    k_min = min(fewest)
    salient, all_heads = m.salient_heads, m.heads
    found: list[Restatement] = []
    judged: set[tuple[str, tuple[str, ...], tuple[int, ...], int, bool]] = set()
    for ins in history:
        if ins.turn >= turn or salient.isdisjoint(ins.heads):
            continue
        if not (flagged or _specific(ins.weights, ins.polarity)):
            continue
        shared = all_heads.intersection(ins.heads)
        if len(shared) < k_min:
            continue
        # Every feature the judgement reads (a sentence is kept cut to evidence_chars).
        same = (ins.sentence, ins.stems, ins.weights, ins.polarity, ins.update)
        if same in judged:
            continue  # said before in the same words: the earliest saying answers for it
        judged.add(same)
        best: Restatement | None = None
        for unit, k in zip(units, fewest, strict=True):
            if len(unit.head_set.intersection(shared)) < k or _coverage_bound(unit, ins) < need:
                continue
            hit = _score(ins, unit, strong, weak, shouted, cfg)
            if hit is not None and (best is None or hit.score > best.score):
                best = hit
        if best is not None:
            found.append(best)
    found.sort(key=lambda r: (-r.score, r.earlier.turn))
    return found


@functools.lru_cache(maxsize=_KEYS_MEMO)
def _specific(weights: tuple[int, ...], polarity: int) -> bool:
    """Whether a span says enough to restate, or be restated, without a cue: ``_MIN_CONTENT``
    words that are not generic verbs, or one beside a verb or a negation ("Leave LevelIO.cs
    alone", "No emojis").

    "should be 8ABeB7", "+ 9" or a lone "ghostty" is a fragment, whatever it matches.
    """
    content = sum(1 for w in weights if w > tx.GENERIC)
    return content >= _MIN_CONTENT or (content == 1 and (len(weights) > 1 or polarity == 1))


def _fewest_heads(unit: _Unit, need: float) -> int:
    """Fewest heads ``unit`` must share with an instruction for its coverage bound to reach
    ``need`` (at least 1).

    ``_coverage_bound >= need`` is ``sum(credit[h] for shared h) >= unit.total`` with
    ``credit[h] = 2 n_h (1 - need) / need + w_h``; the best case shares the top credits.
    """
    if need <= 0.0:
        return 1
    top = _WEIGHT[tx.VALUE] * (1.0 - need) / need
    credits = sorted((top * n + w for n, w in unit.head_weights.values()), reverse=True)
    acc = 0.0
    for k, c in enumerate(credits, 1):
        acc += c
        if acc >= unit.total - 1e-9:
            return k
    return len(credits) + 1  # unreachable: not even every head suffices


def _coverage_bound(unit: _Unit, ins: Instruction) -> float:
    """Most of ``unit`` that ``ins`` could cover: every word sharing a head, at top weight."""
    got = own = 0.0
    for h in unit.head_set.intersection(ins.heads):
        n, w = unit.head_weights[h]
        got += n * _WEIGHT[tx.VALUE]
        own += w
    return got / (got + unit.total - own) if got else 0.0


@functools.lru_cache(maxsize=_KEYS_MEMO)
def _heads(stem: str) -> tuple[str, ...]:
    """Four-letter heads: any two stems that match share one (a file name counts too).

    Memoised: a pure function of a word, called for every word of every message.
    """
    if "/" in stem.strip("/"):
        return (stem[:_MIN_PREFIX], stem.rsplit("/", 1)[1][:_MIN_PREFIX])
    broader = tx.BROADER.get(stem)
    if broader is not None:
        return (stem[:_MIN_PREFIX], broader[:_MIN_PREFIX])
    return (stem[:_MIN_PREFIX],)


def _units(
    analysed: list[tuple[str, tx.Sentence]], flagged: bool
) -> tuple[tuple[_Unit, ...], list[_Unit]]:
    """Instructing sentences and their clauses, plus the whole message when it is short.

    Terse, angry restatements spread one instruction over fragments ("dev clone. DEV.");
    the whole message is then the unit that carries it. Questions and status sentences join
    that unit only when the message flags a repeat ("WHY is this hitting prod. I said don't").
    Also returns the units of whole instructing sentences, in order (the instructions).
    """
    units: list[_Unit] = []
    own: list[_Unit] = []
    kept: list[str] = []
    for sentence, a in analysed:
        if a.kind == "instruction" or (flagged and a.kind in ("question", "status")):
            kept.append(sentence)
        if a.kind != "instruction":
            continue
        whole, pieces = _sentence_units(sentence)
        units.extend(pieces)
        if whole is not None:
            own.append(whole)
    if len(kept) > 1:
        whole = _unit(" ".join(kept), None, kept)
        if 0 < len(whole.stems) <= _MAX_MESSAGE_TOKENS:
            units.append(whole)
    return tuple(units), own


@functools.lru_cache(maxsize=_SENTENCE_MEMO)
def _sentence_units(sentence: str) -> tuple[_Unit | None, tuple[_Unit, ...]]:
    """The unit of an instructing sentence (None without tokens), and it with its clauses'.

    Memoised: a pure function of the sentence, and the costliest part of reading a message;
    sessions repeat sentences (that is what a restatement is), and boilerplate recurs.
    """
    pieces = tx.clauses(sentence)
    whole: _Unit | None = None
    units: list[_Unit] = []
    for piece in (sentence, *pieces) if len(pieces) > 1 else (sentence,):
        unit = _unit(piece, tx.analyse(sentence) if piece is sentence else None)
        if unit.stems:
            units.append(unit)
            if piece is sentence:
                whole = unit
    return whole, tuple(units)


def _unit(sentence: str, a: tx.Sentence | None, parts: list[str] | None = None) -> _Unit:
    """A unit of ``sentence``; ``a`` is its analysis when it was classified as a sentence,
    ``parts`` the sentences it joins when it is the whole message."""
    if a is not None:
        toks, pol, update = list(a.tokens), a.polarity, a.update
    elif parts is not None:
        toks, pol, update = tx.joined_features(parts)
    else:  # a clause or the whole message: read as given, whatever its form
        toks, pol, update = tx.features(sentence)
    stems = tuple(t.stem for t in toks)
    head_weights: dict[str, tuple[int, float]] = {}
    salient: set[str] = set()
    for t in toks:
        hs = _heads(t.stem)
        if t.weight > tx.GENERIC:
            salient.update(hs)
        for h in hs:
            n, w = head_weights.get(h, (0, 0.0))
            head_weights[h] = (n + 1, w + _WEIGHT[t.weight])
    return _Unit(
        sentence=sentence,
        stems=stems,
        weights=tuple(t.weight for t in toks),
        polarity=pol,
        update=update,
        head_set=frozenset(head_weights),
        salient_heads=frozenset(salient),
        head_weights=head_weights,
        total=sum(_WEIGHT[t.weight] for t in toks),
    )


@functools.lru_cache(maxsize=_KEYS_MEMO)
def _keys(stems: tuple[str, ...]) -> frozenset[str]:
    """Look-up keys of a token list: its stems, their prefixes, and the last part of a path.

    Memoised (a pure function): an earlier instruction is compared with many messages.
    """
    keys = set(stems)
    keys.update(
        s[:k]
        for s in stems
        if s.isalpha() and len(s) > _MIN_PREFIX
        for k in range(_MIN_PREFIX, len(s))
    )
    keys.update(s.rsplit("/", 1)[1] for s in stems if "/" in s.strip("/"))
    keys.update(tx.BROADER[s] for s in stems if s in tx.BROADER)
    return frozenset(keys)


def _matches(stem: str, other: Collection[str], other_prefixes: frozenset[str]) -> bool:
    if stem in other or stem in other_prefixes:
        return True
    if "/" in stem.strip("/") and stem.rsplit("/", 1)[1] in other:
        return True  # a path and its file name
    if stem in tx.BROADER and tx.BROADER[stem] in other:
        return True  # "saturday" restates "weekend"
    if not stem.isalpha() or len(stem) < _MIN_PREFIX:
        return False
    return any(stem[:k] in other for k in range(_MIN_PREFIX, len(stem)))


def _fuzzy_match(stem: str, other: Sequence[str]) -> bool:
    if len(stem) < _MIN_FUZZY or not stem.isalpha():
        return False
    # fuzz.ratio(a, b) <= 200 min(|a|, |b|) / (|a| + |b|): only stems of close length can reach
    # the cutoff, and most stems have none.
    n = len(stem)
    near = [o for o in other if 200.0 * min(n, len(o)) >= _FUZZY_TOKEN * (n + len(o)) - 1e-6]
    return bool(near) and (
        process.extractOne(stem, near, scorer=fuzz.ratio, score_cutoff=_FUZZY_TOKEN) is not None
    )


def _cover(
    stems: Sequence[str],
    weights: Sequence[int],
    other: Sequence[str],
    other_weights: Sequence[int],
    other_keys: frozenset[str],
) -> tuple[float, float, list[int], list[int]]:
    """Matched and total weight of ``stems`` against ``other``; indices matched / unmatched.

    A word counts at the higher salience either side gave it: "collect" is code on one side
    because it was in backticks, and the other side need not quote it again.
    """
    other_w = dict(zip(other, other_weights, strict=True))
    matched_w = total_w = 0.0
    hit: list[int] = []
    miss: list[int] = []
    for i, (s, w) in enumerate(zip(stems, weights, strict=True)):
        weight = _WEIGHT[max(w, other_w.get(s, 0))]
        total_w += weight
        if _matches(s, other_w.keys(), other_keys) or _fuzzy_match(s, other):
            matched_w += weight
            hit.append(i)
        else:
            miss.append(i)
    return matched_w, total_w, hit, miss


class _Judgement(msgspec.Struct, frozen=True):
    """Why a pair scored what it did; ``veto`` names the rule that rejected it."""

    score: float
    cues: tuple[str, ...]
    veto: str = ""


def _score(
    ins: Instruction,
    unit: _Unit,
    strong: bool,
    weak: bool,
    shouted: bool,
    cfg: DetectConfig,
) -> Restatement | None:
    if unit.polarity != ins.polarity and not (strong or shouted):
        return None  # ``_judge`` vetoes this whatever the overlap: skip the scoring
    j = _judge(ins, unit, strong, weak, shouted)
    if j.veto or j.score < cfg.restate_threshold:
        return None
    return Restatement(
        earlier=ins, sentence=unit.sentence[: cfg.evidence_chars], score=j.score, cues=j.cues
    )


def _judge(
    ins: Instruction,
    unit: _Unit,
    strong: bool,
    weak: bool,
    shouted: bool,
) -> _Judgement:
    got_l, all_l, _, miss_l = _cover(
        unit.stems, unit.weights, ins.stems, ins.weights, _keys(ins.stems)
    )
    got_e, all_e, hit_e, miss_e = _cover(
        ins.stems, ins.weights, unit.stems, unit.weights, _keys(unit.stems)
    )
    cov_l = got_l / all_l
    cov_e = got_e / all_e
    score = 100.0 * ((1 - _E_SHARE) * cov_l + _E_SHARE * cov_e)
    cues: list[str] = []
    flagged = strong or shouted
    if strong:
        cues.append("reminder_cue")
    elif shouted:
        cues.append("emphasis")
    if any(ins.weights[i] >= tx.NAME for i in hit_e):
        cues.append("salient_overlap")
        score += _SALIENT_BONUS
    ratio = fuzz.ratio(" ".join(unit.stems), " ".join(ins.stems))
    if ratio >= 90.0:
        cues.append("fuzzy")
        score = max(score, ratio)
    if flagged:
        score += _CUE_BONUS
    elif weak:
        score += _CUE_BONUS / 3
    score = round(min(score, 100.0), 1)

    def veto(reason: str) -> _Judgement:
        return _Judgement(score, tuple(cues), reason)

    if got_l < _MIN_EVIDENCE:
        return veto("thin")
    if unit.polarity != ins.polarity and not flagged:
        return veto("polarity")
    # A new value in place of an old one is an update, not a repeat.
    new_values = [unit.stems[i] for i in miss_l if unit.weights[i] >= tx.NAME]
    old_values = [ins.stems[i] for i in miss_e if ins.weights[i] >= tx.NAME]
    new_numbers = [s for s in new_values if any(c.isdigit() for c in s)]
    old_numbers = [s for s in old_values if any(c.isdigit() for c in s)]
    if new_numbers and old_numbers:
        return veto("changed_number")
    content_miss = [i for i in miss_l if unit.weights[i] > tx.GENERIC]
    if unit.update and not ins.update and content_miss:
        return veto("update_cue")
    old_content = [i for i in miss_e if ins.weights[i] > tx.GENERIC]
    if new_values and old_values and not flagged:
        return veto("changed_name")
    if (
        len(content_miss) == 1
        and len(old_content) == 1
        and not flagged
        and _same_frame(unit.stems, content_miss[0], ins.stems, old_content[0])
    ):
        return veto("swapped_word")  # one word replaced in the same frame: a changed value
    return _Judgement(score, tuple(cues))


def _same_frame(a: Sequence[str], i: int, b: Sequence[str], j: int) -> bool:
    """Whether a[i] and b[j] stand between the same neighbours ("the X session")."""
    before = (i == 0 and j == 0) or (i > 0 and j > 0 and a[i - 1] == b[j - 1])
    after = (i == len(a) - 1 and j == len(b) - 1) or (
        i + 1 < len(a) and j + 1 < len(b) and a[i + 1] == b[j + 1]
    )
    return before and after
