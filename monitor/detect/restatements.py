"""Restated instructions: a user saying again something they already told the agent.

A restatement after a compaction suggests the summary dropped the instruction. Each user message
is read once (``lang.units.read``): pasted material out, sentences, their clauses, and the whole
message when it is short. Its instructing sentences and clauses are remembered; each later
message is compared with what was remembered, span against span, and a learned scorer
(``scorer``, over ``pairs.FEATURES``) gives each pair a verdict: ``same``, ``contradicts`` (a
flip or an update) or ``unrelated``.

Some rules stay hard gates because they are general English, not fitted to examples: what is
remembered as an instruction is never a question ("are we still keeping it short?" asks, it does
not tell) nor a bare acknowledgement ("thanks, short is good"); a polite request ("could you keep
it short?") is an instruction. A later span is never ``same`` when it tells the opposite, in
itself or in a clause (``pairs.opposite``, ``turned_within``), gives a value changed
(``pairs.changes_value``), is too thin (``pairs.thin``), only checks whether something is so
(``pairs.checks``), or is a remark with no sign of repetition (``remarks``). Otherwise form is
only a feature: annoyed users restate in questions ("why is random crop STILL on? I told you"),
and the scorer weighs form together with the cues.

Only earlier spans sharing a matchable word with the message are scored (``units.heads``): a
pair with no word in common (after synonyms, abbreviations and typos) is never ``same`` for a
scorer that reads word overlap, and this skips most of the history with one set operation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple

import msgspec

from monitor.detect import scorer as sc
from monitor.detect.config import DetectConfig
from monitor.detect.lang import units as un
from monitor.detect.lang.units import Message, Unit
from monitor.detect.pairs import (
    FEATURES,
    changes_value,
    checks,
    coverage,
    features,
    opposite,
    thin,
)

#: Restatements listed per message, best first (the flag's evidence).
MAX_LISTED: Final = 5
#: How much of each side the other must cover for a gated pair to count as the same
#: instruction turned (rather than a different one): most of the instruction, half the span.
ALIGNED_E: Final = 0.75
ALIGNED_L: Final = 0.5
#: With a changed value the value itself is unmatched: half the instruction suffices.
ALIGNED_CHANGED: Final = 0.5
_COV_E: Final = FEATURES.index("cov_e")
_COV_L: Final = FEATURES.index("cov_l")
#: Candidate pairs scored per message, the most overlapping first: on the corpus' training
#: split, the best-scoring restating pair of a message is among its 3 most overlapping
#: candidates 99.2% of the time, and each scored pair costs tens of microseconds.
MAX_SCORED: Final = 3
#: Least ``overlap`` a candidate needs to be scored at all: on the corpus' training split every
#: restating pair the scorer finds has at least 0.4 (1,096 of 1,096), while most pairs of a
#: session that share one incidental word fall below it.
MIN_OVERLAP: Final = 0.4
#: With the semantic stage (``DetectConfig.semantic``): pairs added by cosine alone, beside the
#: overlapping ones, the closest first, and the least cosine such a pair needs.
SEMANTIC_EXTRA: Final = 2
SEMANTIC_MIN: Final = 0.5
#: The feature the semantic stage adds to ``pairs.FEATURES`` (its model reads one more).
SEMANTIC_FEATURES: Final = (*FEATURES, "cosine")


class Instruction(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A remembered instructing span with its features; ``sentence`` is the sentence it is a
    clause of ("" when it is the whole sentence)."""

    turn: int
    unit: Unit
    sentence: str = ""

    @property
    def text(self) -> str:
        return self.unit.text


class Judged(msgspec.Struct, frozen=True):
    """An earlier instruction and the later span that said the same or the opposite."""

    earlier: Instruction
    sentence: str
    verdict: sc.Verdict
    cues: tuple[str, ...]

    @property
    def score(self) -> float:
        return self.verdict.score


#: ``find_restatements``' element type under its historical name.
Restatement = Judged


class MessageVerdict(msgspec.Struct, frozen=True):
    """What one user message does to the remembered instructions."""

    restated: tuple[Judged, ...] = ()
    contradicted: tuple[Judged, ...] = ()


#: A heading's opening ("For the budget report", "Rules for the payroll DAG", "About the
#: licence"): what follows it is the instruction.
_TOPIC: Final = re.compile(
    r"^(?:(?:some |a few |few |the |my |our |house |ground )*rules (?:for|on|about)|for|about|"
    r"regarding|re|as for|as to|concerning|with respect to)\b"
)
#: Words a heading has at most ("Rules for the nightly payroll DAG").
_TOPIC_WORDS: Final = 7
_TELLS: Final = un.IMPERATIVE | un.OBLIGATION | un.NEGATED_START | un.DIRECTED | un.WANT | un.POLITE


def topic_only(u: Unit) -> bool:
    """Whether a span only names the topic of what follows ("For the budget vs actual
    report", "Rules for the payroll DAG"): it opens like a heading, tells nothing and turns
    nothing. Such a span names no instruction to restate, nor restates one."""
    if u.form & _TELLS or u.polarity or u.rejected or u.n_words > _TOPIC_WORDS:
        return False
    return _TOPIC.match(u.norm) is not None and "," not in u.text


def instructs(u: Unit) -> bool:
    """Whether a span can be an instruction: not a question (a polite request is one), not a
    bare acknowledgement, not the user's own plan ("I'll merge it myself"), and it names
    something beyond generic verbs."""
    if u.form & (un.QUESTION | un.IN_QUESTION) and not u.form & un.POLITE:
        return False
    if u.form & un.ACK and not u.form & (un.IMPERATIVE | un.OBLIGATION | un.NEGATED_START):
        return False
    if u.form & un.OWN_PLAN and not u.form & (un.WANT | un.DIRECTED | un.OBLIGATION):
        return False
    return any(w > un.GENERIC for w in u.weights) and not topic_only(u)


def remarks(u: Unit, cues: un.Cues) -> bool:
    """Whether a later span is a remark that restates nothing: it does not instruct (``instructs``)
    and its message carries no sign that the user is saying something again or is annoyed (a
    reminder, frustration, capitals, "!", an announced change). "The price is STILL in the
    headline!" restates by describing the breach; "the cache may be stale after the rename" only
    talks about the work. A hard gate because telling is what a restatement
    does; on the corpus' training domains 4 of 1,164 restatements found are cue-less remarks."""
    if instructs(u):
        return False
    return not (
        cues.reminder or cues.frustration or cues.exclaim or cues.caps >= 0.5 or cues.update
    )


def remembered(m: Message) -> Iterator[tuple[Unit, str]]:
    """The spans of a message kept as instructions: instructing sentences, and the
    instructing clauses of sentences with several (with their sentence)."""
    for s, parts in zip(m.sentences, m.parts, strict=True):
        if instructs(s):
            yield s, ""
        for c in parts:
            if instructs(c):
                yield c, s.text


def instructions_in(text: str, turn: int, cfg: DetectConfig) -> tuple[Instruction, ...]:
    """The instructing spans of a user message (capped at ``cfg.max_text_chars``)."""
    m = un.read(text[: cfg.max_text_chars])
    return tuple(
        Instruction(turn, _cut(u, cfg), sentence[: cfg.evidence_chars])
        for u, sentence in remembered(m)
    )


def _cut(u: Unit, cfg: DetectConfig) -> Unit:
    if len(u.text) <= cfg.evidence_chars:
        return u
    return msgspec.structs.replace(u, text=u.text[: cfg.evidence_chars])


def candidates(
    history: Sequence[Instruction], m: Message, turn: int
) -> Iterator[tuple[Instruction, Unit, int]]:
    """Every (earlier instruction, later unit, unit kind) pair worth scoring.

    An instruction given several times in the same words is judged once, as its earliest saying:
    each copy would score the same.
    """
    unit_heads = [un.heads(u) for u in m.units]
    every = frozenset().union(*unit_heads) if unit_heads else frozenset()
    seen: set[str] = set()
    for ins in history:
        if ins.turn >= turn:
            continue
        eh = un.heads(ins.unit)
        if eh.isdisjoint(every) or ins.unit.norm in seen:
            continue
        seen.add(ins.unit.norm)
        for u, kind, uh in zip(m.units, m.kinds, unit_heads, strict=True):
            if not eh.isdisjoint(uh):
                yield ins, u, kind


def overlap(e: Unit, l_: Unit) -> float:
    """How much two spans share by their look-up keys alone (cheap): the share of the smaller
    side's keys, plus half the share of the larger's. Orders candidates for scoring."""
    return _overlap_of(un.heads(e), un.heads(l_))


def _overlap_of(he: frozenset[str], hl: frozenset[str]) -> float:
    """``overlap`` of two spans' look-up keys, read once by the caller."""
    shared = len(he & hl)
    small, large = (len(he), len(hl)) if len(he) <= len(hl) else (len(hl), len(he))
    return shared / small + 0.5 * shared / large if small else 0.0


#: The look-up keys of remembered instructions by the identity of their unit (held, so no id
#: is reused while its entry lives): each message reads the whole history's, and a unit's id
#: is cheaper to look up than its words (``units.heads``' memo key).
_HEADS_MEMO: Final = 8192
_heads_of: dict[int, tuple[Unit, frozenset[str]]] = {}


def scored(
    history: Sequence[Instruction], m: Message, turn: int, limit: int = MAX_SCORED
) -> list[tuple[Instruction, Unit, int]]:
    """The candidates worth the scorer's time: those overlapping at least ``MIN_OVERLAP``, the
    ``limit`` most overlapping of them, newest first among equals.

    ``candidates`` and ``overlap`` in one pass: each side's look-up keys are read once, where
    the two functions read them again for every pair (a message meets tens of candidates).
    """
    if not m.units:
        return []
    heads = [un.heads(u) for u in m.units]
    rows = [(u, kind, uh, len(uh)) for u, kind, uh in zip(m.units, m.kinds, heads, strict=True)]
    every = frozenset().union(*heads)
    seen: set[str] = set()
    # Each candidate behind its sort key: the most overlapping, then the newest, then the
    # first found (``n`` is unique, so the candidate itself is never compared).
    found: list[tuple[float, int, int, tuple[Instruction, Unit, int]]] = []
    n = 0  # the candidate's rank in ``candidates``' order
    for ins in history:
        if ins.turn >= turn:
            continue
        found_heads = _heads_of.get(id(ins.unit))
        if found_heads is None:
            if len(_heads_of) >= _HEADS_MEMO:
                _heads_of.clear()
            found_heads = _heads_of[id(ins.unit)] = (ins.unit, un.heads(ins.unit))
        eh = found_heads[1]
        if eh.isdisjoint(every) or ins.unit.norm in seen:
            continue
        seen.add(ins.unit.norm)
        ne = len(eh)
        for u, kind, uh, nl in rows:
            # ``_overlap_of`` inline, its keys shared counted once for both tests.
            shared = len(eh & uh)
            if not shared:
                continue
            small, large = (ne, nl) if ne <= nl else (nl, ne)
            o = shared / small + 0.5 * shared / large
            if o >= MIN_OVERLAP:
                found.append((-o, -ins.turn, n, (ins, u, kind)))
            n += 1
    if len(found) > limit:
        found.sort()  # by the key each row starts with, compared in C (no key function)
    return [c for _, _, _, c in found[:limit]]


def semantic_scored(
    history: Sequence[Instruction], m: Message, turn: int
) -> list[tuple[Instruction, Unit, int, float]]:
    """``scored`` with each pair's cosine, plus up to ``SEMANTIC_EXTRA`` pairs that share too few
    words to be scored but whose cosine reaches ``SEMANTIC_MIN`` (paraphrases)."""
    from monitor.detect import semantic

    lexical = scored(history, m, turn)
    earlier: dict[str, Instruction] = {}
    for ins in history:
        if ins.turn < turn:
            earlier.setdefault(ins.unit.norm, ins)
    if not earlier or not m.units:
        return [(ins, u, kind, 0.0) for ins, u, kind in lexical]
    rows = list(earlier.values())
    row_of = {ins.unit.norm: i for i, ins in enumerate(rows)}
    col_of = {id(u): j for j, u in enumerate(m.units)}
    sims = semantic.encoder().similarities([i.text for i in rows], [u.text for u in m.units])
    out = [(ins, u, kind, sims[row_of[ins.unit.norm]][col_of[id(u)]]) for ins, u, kind in lexical]
    taken = {(row_of[ins.unit.norm], col_of[id(u)]) for ins, u, _ in lexical}
    extra = sorted(
        (
            (-c, i, j)
            for i, row in enumerate(sims)
            for j, c in enumerate(row)
            if c >= SEMANTIC_MIN and (i, j) not in taken
        ),
    )[:SEMANTIC_EXTRA]
    out.extend((rows[i], m.units[j], m.kinds[j], -c) for c, i, j in extra)
    return out


def pairs_to_score(
    history: Sequence[Instruction], m: Message, turn: int, cfg: DetectConfig
) -> list[tuple[Instruction, Unit, int, tuple[float, ...]]]:
    """The pairs ``judge`` scores, each with the features it adds to ``pairs.features``: none by
    default, the cosine with the semantic stage on."""
    if cfg.semantic:
        return [(ins, u, kind, (c,)) for ins, u, kind, c in semantic_scored(history, m, turn)]
    return [(ins, u, kind, ()) for ins, u, kind in scored(history, m, turn)]


def _sentence_of(m: Message) -> dict[int, tuple[int, bool]]:
    """Each later unit's sentence (by ``id``) and whether it is that sentence itself; the whole
    message is absent (it holds every sentence)."""
    out: dict[int, tuple[int, bool]] = {}
    for n, (s, parts) in enumerate(zip(m.sentences, m.parts, strict=True)):
        for c in parts:
            out[id(c)] = (n, False)
        out[id(s)] = (n, True)
    return out


def turned_within(
    pairs: Sequence[tuple[Instruction, Unit, bool, float, float]], m: Message
) -> list[bool]:
    """For each scored pair (earlier, later, ``pairs.opposite`` of the two, cov_e, cov_l):
    whether the two spans hold an aligned pair that is turned, so that they cannot say the same.

    Polarity belongs to a clause: "don't publish the nightlies, we don't have the quota" and
    "publish the nightlies, they raised the quota" each hold two negations or none, yet their
    instructing clauses are opposite. A pair of sentences is vetoed when a clause of each (or
    the sentence itself) is a turned pair, one of the two mostly the other (``ALIGNED_E``) and
    the other at least half of the one ("send the invites now" for "don't send the invites until
    the replies are in"); the other clauses of the same sentences are not ("use
    plain text and add alt text" / "no more plain text, but keep adding alt text"); neither is
    a span that merely sits beside the turned one.

    Unless the sentence was rewritten whole: when two sentences of several clauses are a turned
    pair both as wholes and in a pair of their clauses, and the later one sets no clause
    against another ("but", "still"), it is the earlier sentence revised ("keep the tags and
    ship it" / "drop the tags and ship it"): a clause it carries along unchanged is not said
    again, so every pair of their clauses is vetoed.
    """
    turned = [
        (ins, u)
        for ins, u, opp, cov_e, cov_l in pairs
        if opp
        and (
            (cov_e >= ALIGNED_E and cov_l >= ALIGNED_L)
            or (cov_l >= ALIGNED_E and cov_e >= ALIGNED_L)
        )
        # A clause that tells nothing (a reason: "…, the gym opens at 6") turns no request.
        and (not ins.sentence or ins.unit.form & _TELLS)
    ]
    if not turned:
        return [opp for _, _, opp, _, _ in pairs]
    sentence = _sentence_of(m)

    # (earlier sentence, later sentence's number) of the turned pairs of clauses and of wholes
    clauses_turned = set()
    wholes_turned = set()
    for ti, tu in turned:
        n, whole = sentence.get(id(tu), (-1, False))
        if n < 0:
            continue
        if ti.sentence and not whole:
            clauses_turned.add((ti.sentence, n))
        elif not ti.sentence and whole and _CONTINUES.search(tu.norm) is None:
            wholes_turned.add((ti.text, n))
    revised = clauses_turned & wholes_turned

    def rewritten(ins: Instruction, u: Unit) -> bool:
        n, whole = sentence.get(id(u), (-1, True))
        return bool(ins.sentence) and not whole and (ins.sentence, n) in revised

    def holds_e(outer: Instruction, inner: Instruction) -> bool:
        return outer is inner or (not outer.sentence and outer.text == inner.sentence)

    def holds_l(outer: Unit, inner: Unit) -> bool:
        if outer is inner or id(outer) not in sentence:
            return True
        n, whole = sentence[id(outer)]
        return whole and sentence.get(id(inner), (-1, False))[0] == n

    return [
        opp
        or any(holds_e(ins, ti) and holds_l(u, tu) for ti, tu in turned)
        or (bool(revised) and rewritten(ins, u))
        for ins, u, opp, _, _ in pairs
    ]


#: Words that set one clause of a sentence against another: a clause after them is said for
#: itself ("stop using plain text, but still add alt text"), not carried along.
_CONTINUES: Final = re.compile(r"\b(?:but|still|however|though|although|yet)\b")


class Gated(NamedTuple):
    """A scored pair with its features and what the hard gates say of it."""

    ins: Instruction
    unit: Unit
    x: list[float]
    #: ``pairs.opposite`` of the two spans.
    turned: bool
    #: ``pairs.changes_value`` (and not turned): an update, never ``same`` at run time.
    changed: bool
    #: Another gate holds: turned in a clause (``turned_within``), thin, a check or a remark.
    gated: bool


def gated_pairs(
    history: Sequence[Instruction], m: Message, turn: int, cfg: DetectConfig
) -> list[Gated]:
    """The pairs ``judge`` scores, each with its features and the hard gates' reading. The
    trainer reads the same, so the model is fitted on what it will score at run time."""
    return [g for g, _ in _gated(history, m, turn, cfg)]


def _gated(
    history: Sequence[Instruction], m: Message, turn: int, cfg: DetectConfig
) -> list[tuple[Gated, _Reading | None]]:
    """``gated_pairs``, each with its pair's remembered reading when ``x`` is that reading's
    vector alone (no feature added by the semantic stage), for ``judge`` to keep its
    probabilities."""
    scored = []
    for ins, u, kind, extra in pairs_to_score(history, m, turn, cfg):
        r = _reading(ins.unit, u, m.cues, kind)
        scored.append((ins, u, [*r.x, *extra], r, not extra))
    vetoed = turned_within([(i, u, r.turned, x[_COV_E], x[_COV_L]) for i, u, x, r, _ in scored], m)
    return [
        (
            Gated(
                ins,
                u,
                x,
                r.turned,
                not r.turned and r.changes_value(),
                veto or _held(ins.unit, u, m.cues),
            ),
            r if plain else None,
        )
        for (ins, u, x, r, plain), veto in zip(scored, vetoed, strict=True)
    ]


def _held(e: Unit, u: Unit, cues: un.Cues) -> bool:
    """The gates read of the spans and the message alone: ``u`` too thin to restate ``e``, a
    check, a remark or a topic. One list for ``_gated`` (the trainer's reading) and
    ``_ungated`` (the run-time path), so the two cannot drift apart."""
    return thin(e, u) or checks(u, cues) or remarks(u, cues) or topic_only(u)


class _Reading(msgspec.Struct, gc=False):
    """What ``pairs`` reads of one (earlier unit, later unit, message cues, unit kind): the
    features, ``opposite`` and, when asked, ``changes_value``; all pure functions of the four.
    Not tracked by the garbage collector (it holds no cycle), like the units it holds."""

    e: Unit
    u: Unit
    cues: un.Cues
    x: tuple[float, ...]
    turned: bool
    kind: int = un.SENTENCE
    changed: bool | None = None
    #: The probabilities ``scorer`` gave ``x``, and which scorer.
    scorer: sc.Scorer | None = None
    p: tuple[float, float] = (0.0, 0.0)

    def changes_value(self) -> bool:
        if self.changed is None:
            self.changed = changes_value(
                self.e, self.u, _change_cues(self.cues, self.e, self.u, self.kind)
            )
        return self.changed

    def probabilities(self, scorer: sc.Scorer) -> tuple[float, float]:
        if self.scorer is not scorer:
            self.p, self.scorer = scorer.probabilities(self.x), scorer
        return self.p


def _change_cues(cues: un.Cues, e: Unit, u: Unit, kind: int) -> un.Cues:
    """The cues ``changes_value`` reads for span ``u`` against instruction ``e``: a change
    announced in another sentence ("they moved the call to 3 instead of 2") changes nothing a
    sentence says; nor does the wording of a change the instruction itself holds ("switch the
    special to pork" told again as "switch it to pork"), which is its content, not news."""
    if cues.update and ((kind == un.SENTENCE and not un.announces(u.text)) or un.announces(e.text)):
        return msgspec.structs.replace(cues, update=0)
    return cues


#: Pairs read recently, by the identity of the units (held by the entry, so no id is reused
#: while it lives) and the cues' value. The same instruction meets the same later span again
#: whenever a sentence recurs ("run the tests first") in a message of the same shape, the units
#: coming from ``units.unit``'s memo; the features and gates of such a pair are not read again.
_READ_MEMO: Final = 4096
_read: dict[tuple[int, int, un.Cues, int], _Reading] = {}


def _reading(e: Unit, u: Unit, cues: un.Cues, kind: int) -> _Reading:
    memo_key = (id(e), id(u), cues, kind)
    found = _read.get(memo_key)
    if found is None:
        if len(_read) >= _READ_MEMO:
            _read.clear()
        x = tuple(features(e, u, cues, kind))
        found = _read[memo_key] = _Reading(e, u, cues, x, opposite(e, u), kind)
    return found


def model_for(cfg: DetectConfig) -> sc.Scorer:
    """The shipped scorer ``cfg`` reads with: the semantic stage's own model when it is on."""
    return sc.load(sc.RESTATEMENT_SEMANTIC if cfg.semantic else sc.RESTATEMENT)


def _cue_names(m: Message) -> tuple[str, ...]:
    c = m.cues
    out = []
    if c.reminder:
        out.append("reminder_cue")
    if c.frustration or c.exclaim or c.caps >= 0.5:
        out.append("emphasis")
    if c.update:
        out.append("update_cue")
    return tuple(out)


def judge(
    history: Sequence[Instruction],
    text: str,
    turn: int,
    cfg: DetectConfig,
    model: sc.Scorer | None = None,
    contradictions: bool = True,
) -> MessageVerdict:
    """The verdict of a user message on each earlier instruction (earlier.turn < turn): those
    it restates and those it contradicts, best first, one per instruction (its best span).

    With ``contradictions=False`` only ``restated`` is filled, and a pair a gate holds is neither
    featurised nor scored: its P(same) is zero, below any positive threshold, and what it
    contradicts is not asked for (``find_restatements``)."""
    m = un.read(text[: cfg.max_text_chars])
    if not m.units or not history:
        return MessageVerdict()
    model = model or model_for(cfg)
    threshold = model.model.threshold_same
    if cfg.restate_threshold is not None:
        threshold = cfg.restate_threshold / 100.0
    if not contradictions and threshold > 0.0:
        return MessageVerdict(_restated(history, m, turn, cfg, model, threshold))
    best_same: dict[int, tuple[float, Unit, sc.Verdict, Instruction]] = {}
    best_contra: dict[int, tuple[float, Unit, sc.Verdict, Instruction]] = {}
    for (ins, u, x, turned, changed, gated), r in _gated(history, m, turn, cfg):
        p_same, p_contra = model.probabilities(x) if r is None else r.probabilities(model)
        if changed or gated:
            p_same = 0.0
        if (turned or changed) and (
            x[_COV_E] >= (ALIGNED_E if turned else ALIGNED_CHANGED) and x[_COV_L] >= ALIGNED_L
        ):
            # The same instruction, turned or with a changed value: a contradiction by the
            # gates' reading of English, whatever the model's estimate.
            p_contra = max(p_contra, model.model.threshold_contradicts)
        key = id(ins)
        if p_same >= threshold:
            if key not in best_same or p_same > best_same[key][0]:
                best_same[key] = (p_same, u, sc.Verdict("same", p_same, p_contra), ins)
        elif p_contra >= model.model.threshold_contradicts and (
            key not in best_contra or p_contra > best_contra[key][0]
        ):
            best_contra[key] = (p_contra, u, sc.Verdict("contradicts", p_same, p_contra), ins)
    cues = _cue_names(m)
    restated = _listed(best_same, cues, cfg)
    contradicted = tuple(
        j for j in _listed(best_contra, cues, cfg) if id(j.earlier) not in best_same
    )
    return MessageVerdict(restated, contradicted)


def _listed(
    found: dict[int, tuple[float, Unit, sc.Verdict, Instruction]],
    cues: tuple[str, ...],
    cfg: DetectConfig,
) -> tuple[Judged, ...]:
    """The best pair of each instruction, best first (the earliest among equals)."""
    ranked = sorted(found.values(), key=lambda t: (-t[0], t[3].turn))
    return tuple(
        Judged(ins, u.text[: cfg.evidence_chars], verdict, cues) for _, u, verdict, ins in ranked
    )


def _ungated(
    history: Sequence[Instruction], m: Message, turn: int, cfg: DetectConfig
) -> Iterator[tuple[Instruction, Unit, list[float], _Reading | None]]:
    """The pairs of ``_gated`` that no gate holds (not turned, no value changed, not vetoed,
    thin, a check, a remark or a topic), each with its features and its reading when ``x`` is
    that reading's vector alone.

    The gates are read first, and each needs less than the features: ``opposite`` and the
    cheap gates the spans alone, ``turned_within`` the coverage of the turned pairs only, and
    ``changes_value`` the two covers. Only the pairs left are featurised.
    """
    found = pairs_to_score(history, m, turn, cfg)
    turned = [opposite(ins.unit, u) for ins, u, _, _ in found]
    vetoed = turned_within(
        [
            (ins, u, t, *(coverage(ins.unit, u) if t else (0.0, 0.0)))
            for (ins, u, _, _), t in zip(found, turned, strict=True)
        ],
        m,
    )
    cues = m.cues
    for (ins, u, kind, extra), veto in zip(found, vetoed, strict=True):
        e = ins.unit
        if (
            veto  # every turned pair is vetoed (``turned_within``)
            or _held(e, u, cues)
            or changes_value(e, u, _change_cues(cues, e, u, kind))
        ):
            continue
        r = _reading(e, u, cues, kind)
        yield ins, u, [*r.x, *extra], None if extra else r


def _restated(
    history: Sequence[Instruction],
    m: Message,
    turn: int,
    cfg: DetectConfig,
    model: sc.Scorer,
    threshold: float,
) -> tuple[Judged, ...]:
    """``judge``'s ``restated`` for a positive ``threshold``, from the ungated pairs alone."""
    best_same: dict[int, tuple[float, Unit, sc.Verdict, Instruction]] = {}
    for ins, u, x, r in _ungated(history, m, turn, cfg):
        p_same, p_contra = model.probabilities(x) if r is None else r.probabilities(model)
        key = id(ins)
        if p_same >= threshold and (key not in best_same or p_same > best_same[key][0]):
            best_same[key] = (p_same, u, sc.Verdict("same", p_same, p_contra), ins)
    return _listed(best_same, _cue_names(m), cfg)


def find_restatements(
    history: Sequence[Instruction], text: str, turn: int, cfg: DetectConfig
) -> list[Judged]:
    """Earlier instructions this user message restates, best first."""
    return list(judge(history, text, turn, cfg, contradictions=False).restated)


def cache_clear() -> None:
    """Empty every memo of text analysis (benchmarks measure the cost without them)."""
    from monitor.detect.lang import normalise, segment

    un.cache_clear()
    _read.clear()
    _heads_of.clear()
    segment.cache_clear()
    normalise.cache_clear()


__all__ = [
    "MAX_LISTED",
    "Instruction",
    "Judged",
    "MessageVerdict",
    "Restatement",
    "candidates",
    "find_restatements",
    "gated_pairs",
    "instructions_in",
    "instructs",
    "judge",
    "model_for",
    "overlap",
    "pairs_to_score",
    "remarks",
    "remembered",
    "scored",
    "semantic_scored",
]
