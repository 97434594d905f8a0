"""Restated instructions: a user saying again something they already told the agent.

A restatement after a compaction suggests the summary dropped the instruction. Similarity
alone cannot tell a restatement from its opposite ("don't push" / "push") or from an update
("port 8080" / "port 9090"), so a match must pass four tests:

* both sides instruct (questions, acknowledgements and status reports never match);
* the later sentence's content is covered by the earlier instruction (weighted: values and
  names count more than generic verbs), and enough of it to be specific;
* the predicates agree in polarity, unless the user flags a repeat ("as I said", shouting);
* no value changed: no new number or name in place of an old one, no "instead"/"actually".

Matching is on precomputed stems, so each earlier instruction costs a few set look-ups.
"""

from __future__ import annotations

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
#: Score added when a name or value (a path, a number, a proper noun) is shared.
_SALIENT_BONUS: Final = 5.0
#: Score added when the message itself says it repeats something.
_CUE_BONUS: Final = 15.0
#: Most messages are short; a whole cue-bearing message is also tried as one unit up to this size.
_MAX_MESSAGE_TOKENS: Final = 24


class Instruction(msgspec.Struct, frozen=True, array_like=True):
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
    keys: frozenset[str]
    head_set: frozenset[str]
    #: For each head: how many tokens have it and their weight (for the coverage bound).
    head_weights: dict[str, tuple[int, float]]
    total: float


def instructions_in(text: str, turn: int, cfg: DetectConfig) -> tuple[Instruction, ...]:
    """The sentences of a user message that instruct (not questions, acks, status talk)."""
    out: list[Instruction] = []
    for sentence in tx.sentences(text[: cfg.max_text_chars]):
        a = tx.analyse(sentence)
        if a.kind != "instruction" or not a.tokens:
            continue
        out.append(
            Instruction(
                turn=turn,
                sentence=sentence[: cfg.evidence_chars],
                stems=tuple(t.stem for t in a.tokens),
                weights=tuple(t.weight for t in a.tokens),
                polarity=a.polarity,
                update=a.update,
                heads=tuple(sorted({h for t in a.tokens for h in _heads(t.stem)})),
            )
        )
    return tuple(out)


def find_restatements(
    history: Sequence[Instruction], text: str, turn: int, cfg: DetectConfig
) -> list[Restatement]:
    """Earlier instructions (earlier.turn < turn) that this user message restates.

    At most one Restatement per earlier instruction (its best-scoring sentence), best first.
    """
    earlier = [ins for ins in history if ins.turn < turn and ins.stems]
    if not earlier:
        return []
    text = text[: cfg.max_text_chars]
    strong, weak = tx.reminder_cues(text)
    shouted = tx.emphatic(text)
    units = _units(text, strong or shouted)
    if not units:
        return []
    # Coverage of a unit is bounded by its words sharing a 4-letter head with the instruction;
    # pairs that cannot reach the threshold even with every bonus are skipped unscored.
    bonus = _SALIENT_BONUS + (_CUE_BONUS if strong or shouted else _CUE_BONUS / 3 if weak else 0)
    need = (cfg.restate_threshold - bonus - 100.0 * _E_SHARE) / (100.0 * (1 - _E_SHARE))
    found: list[Restatement] = []
    for ins in earlier:
        best: Restatement | None = None
        for unit in units:
            if unit.head_set.isdisjoint(ins.heads) or _coverage_bound(unit, ins) < need:
                continue
            hit = _score(ins, unit, strong, weak, shouted, cfg)
            if hit is not None and (best is None or hit.score > best.score):
                best = hit
        if best is not None:
            found.append(best)
    found.sort(key=lambda r: (-r.score, r.earlier.turn))
    return found


def _coverage_bound(unit: _Unit, ins: Instruction) -> float:
    """Most of ``unit`` that ``ins`` could cover: every word sharing a head, at top weight."""
    got = own = 0.0
    for h in unit.head_set.intersection(ins.heads):
        n, w = unit.head_weights[h]
        got += n * _WEIGHT[tx.VALUE]
        own += w
    return got / (got + unit.total - own) if got else 0.0


def _heads(stem: str) -> tuple[str, ...]:
    """Four-letter heads: any two stems that match share one (a file name counts too)."""
    if "/" in stem.strip("/"):
        return (stem[:_MIN_PREFIX], stem.rsplit("/", 1)[1][:_MIN_PREFIX])
    return (stem[:_MIN_PREFIX],)


def _units(text: str, flagged: bool) -> list[_Unit]:
    """Instructing sentences and their clauses, plus the whole message when it is short.

    Terse, angry restatements spread one instruction over fragments ("dev clone. DEV.");
    the whole message is then the unit that carries it. Questions and status sentences join
    that unit only when the message flags a repeat ("WHY is this hitting prod. I said don't").
    """
    units: list[_Unit] = []
    kept: list[str] = []
    for sentence in tx.sentences(text):
        a = tx.analyse(sentence)
        if a.kind == "instruction" or (flagged and a.kind in ("question", "status")):
            kept.append(sentence)
        if a.kind != "instruction":
            continue
        pieces = tx.clauses(sentence)
        for piece in (sentence, *pieces) if len(pieces) > 1 else (sentence,):
            unit = _unit(piece, a if piece is sentence else None)
            if unit.stems:
                units.append(unit)
    if len(kept) > 1:
        whole = _unit(" ".join(kept), None)
        if 0 < len(whole.stems) <= _MAX_MESSAGE_TOKENS:
            units.append(whole)
    return units


def _unit(sentence: str, a: tx.Sentence | None) -> _Unit:
    """A unit of ``sentence``; ``a`` is its analysis when it was classified as a sentence."""
    if a is not None:
        toks, pol, update = list(a.tokens), a.polarity, a.update
    else:  # a clause or the whole message: read as given, whatever its form
        toks, pol, update = tx.tokens(sentence), tx.polarity(sentence), tx.has_update_cue(sentence)
    stems = tuple(t.stem for t in toks)
    head_weights: dict[str, tuple[int, float]] = {}
    for t in toks:
        for h in _heads(t.stem):
            n, w = head_weights.get(h, (0, 0.0))
            head_weights[h] = (n + 1, w + _WEIGHT[t.weight])
    return _Unit(
        sentence=sentence,
        stems=stems,
        weights=tuple(t.weight for t in toks),
        polarity=pol,
        update=update,
        keys=frozenset(stems) | _prefixes(stems),
        head_set=frozenset(head_weights),
        head_weights=head_weights,
        total=sum(_WEIGHT[t.weight] for t in toks),
    )


def _prefixes(stems: Sequence[str]) -> frozenset[str]:
    """Look-up keys besides the stems: word prefixes, and the last part of a path."""
    keys = {
        s[:k]
        for s in stems
        if s.isalpha() and len(s) > _MIN_PREFIX
        for k in range(_MIN_PREFIX, len(s))
    }
    keys.update(s.rsplit("/", 1)[1] for s in stems if "/" in s.strip("/"))
    return frozenset(keys)


def _matches(stem: str, other: Collection[str], other_prefixes: frozenset[str]) -> bool:
    if stem in other or stem in other_prefixes:
        return True
    if "/" in stem.strip("/") and stem.rsplit("/", 1)[1] in other:
        return True  # a path and its file name
    if not stem.isalpha() or len(stem) < _MIN_PREFIX:
        return False
    return any(stem[:k] in other for k in range(_MIN_PREFIX, len(stem)))


def _fuzzy_match(stem: str, other: Sequence[str]) -> bool:
    if len(stem) < _MIN_FUZZY or not stem.isalpha():
        return False
    return process.extractOne(stem, other, scorer=fuzz.ratio, score_cutoff=_FUZZY_TOKEN) is not None


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
    ins_keys = _prefixes(ins.stems)
    got_l, all_l, _, miss_l = _cover(unit.stems, unit.weights, ins.stems, ins.weights, ins_keys)
    got_e, all_e, hit_e, miss_e = _cover(
        ins.stems, ins.weights, unit.stems, unit.weights, unit.keys
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
