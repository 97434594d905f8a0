"""Restated instructions: what is remembered, and general properties of the verdicts.

The instructions here were written for these tests; the labelled corpora are read only by the
quality tests (``test_restatement_quality.py``).
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import restatements
from monitor.detect.config import DetectConfig
from monitor.detect.lang import units as un
from monitor.detect.lang.units import Unit
from monitor.detect.pairs import FEATURES, coverage, features
from monitor.detect.restatements import (
    MIN_OVERLAP,
    Instruction,
    candidates,
    find_restatements,
    instructions_in,
    judge,
    overlap,
    scored,
    turned_within,
)

CFG = DetectConfig()

INSTRUCTIONS = [
    "Include the beta customers in the announcement email.",
    "Attach the signed invoice to every expense report.",
    "Use British spelling in the newsletter.",
    "Run the migration on the staging database first.",
    "Cite the original study in the footnotes.",
    "Enable two-factor login for the admin accounts.",
    "Keep the legend below the chart.",
    "Round prices to the nearest euro in the catalogue.",
    "Send the weekly report to Amara every Friday.",
    "Store the raw sensor exports in the cold bucket.",
]
#: Reasons with a negation of their own, said beside an instruction.
NEGATED_REASONS = [
    "the printer can't handle anything else",
    "the client doesn't read the other version",
    "legal won't sign off otherwise",
    "we don't have budget for a second pass",
]


def restated(earlier: str, later: str) -> bool:
    return bool(find_restatements(instructions_in(earlier, 0, CFG), later, 1, CFG))


def test_questions_and_acknowledgements_are_not_remembered() -> None:
    text = "Is the replica count still 3? Thanks, that looks great. Keep the replica count at 3."
    got = instructions_in(text, 4, CFG)
    assert [i.text for i in got] == ["Keep the replica count at 3."]
    assert got[0].turn == 4


def test_polite_requests_are_instructions() -> None:
    got = instructions_in("Could you please bump the version in pyproject.toml?", 0, CFG)
    assert [i.text for i in got] == ["Could you please bump the version in pyproject.toml?"]


def test_instructions_are_cut_to_evidence_size_and_round_trip() -> None:
    cfg = DetectConfig(evidence_chars=12, max_text_chars=60)
    got = instructions_in("Rename the billing service to ledger. " * 5, 0, cfg)
    assert got and all(len(i.text) <= 12 for i in got)
    data = msgspec.msgpack.encode(got[0])
    assert msgspec.msgpack.decode(data, type=Instruction) == got[0]


@given(st.sampled_from(INSTRUCTIONS), st.sampled_from(["", "Again: ", "As I said, ", "REMINDER: "]))
@settings(max_examples=60)
def test_saying_an_instruction_again_restates_it(text: str, cue: str) -> None:
    assert restated(text, cue + text)


@given(
    st.sampled_from(INSTRUCTIONS),
    st.sampled_from(["Don't ", "Do not ", "Never ", "dont "]),
    st.sampled_from(["", "!", "!!", " now!"]),
    st.sampled_from(["", "As I said, ", "again, "]),
    st.booleans(),
)
@settings(max_examples=120)
def test_a_negation_in_the_matching_clause_is_never_a_restatement(
    text: str, negation: str, mark: str, cue: str, caps: bool
) -> None:
    later = cue + negation + text[0].lower() + text[1:].rstrip(".") + mark
    assert not restated(text, later.upper() if caps else later)


@given(st.sampled_from(INSTRUCTIONS), st.sampled_from(NEGATED_REASONS))
@settings(max_examples=60)
def test_a_negated_reason_in_another_clause_does_not_veto_a_restatement(
    text: str, reason: str
) -> None:
    earlier = f"{text.rstrip('.')}, {reason}."
    assert restated(earlier, text)


def test_only_earlier_turns_match_and_a_repeated_instruction_answers_once() -> None:
    text = INSTRUCTIONS[0]
    history = (*instructions_in(text, 0, CFG), *instructions_in(text, 3, CFG))
    got = find_restatements(history, text, 3, CFG)
    assert [r.earlier.turn for r in got] == [0]
    assert find_restatements(instructions_in(text, 5, CFG), text, 5, CFG) == []


def test_a_question_about_an_instruction_is_not_a_restatement() -> None:
    assert not restated(INSTRUCTIONS[3], "did you run the migration on the staging database first?")


def test_the_verdict_lists_contradictions_apart() -> None:
    v = judge(
        instructions_in("Use port 8080 for the admin service.", 0, CFG),
        "Use port 9090 for the admin service, not 8080.",
        1,
        CFG,
    )
    assert not v.restated
    assert [j.earlier.text for j in v.contradicted] == ["Use port 8080 for the admin service."]


@given(st.text(max_size=300), st.text(max_size=300))
@settings(max_examples=80)
def test_any_text_never_crashes(earlier: str, later: str) -> None:
    for r in find_restatements(instructions_in(earlier, 0, CFG), later, 1, CFG):
        assert 0.0 <= r.score <= 100.0 and r.earlier.turn == 0


@given(st.sampled_from(INSTRUCTIONS), st.sampled_from(NEGATED_REASONS))
@settings(max_examples=60)
def test_a_flip_with_its_reason_flipped_too_is_never_a_restatement(text: str, reason: str) -> None:
    # Each sentence holds two negations or none; the instructing clauses are opposite.
    body = text[0].lower() + text[1:].rstrip(".")
    earlier = f"Don't {body}, {reason}."
    later = f"{text.rstrip('.')}, that has changed now."
    assert not restated(earlier, later)


def test_a_clause_restated_beside_a_flipped_one_still_counts() -> None:
    earlier = "Use plain text for the posts and always add alt text to the images."
    later = "Stop using plain text for the posts, but always add alt text to the images."
    got = find_restatements(instructions_in(earlier, 0, CFG), later, 1, CFG)
    assert [r.earlier.text for r in got][:1] == ["always add alt text to the images."]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (
            "Keep the watermark on the proofs and send them to the printer on Monday.",
            "Remove the watermark from the proofs and send them to the printer on Monday.",
        ),
        (
            "Sort the invoices by supplier, and don't number them.",
            "Sort the invoices by supplier and number them.",
        ),
    ],
)
def test_a_sentence_rewritten_with_one_clause_turned_restates_none_of_it(
    earlier: str, later: str
) -> None:
    # The clause carried along unchanged is part of a revision, not said again.
    assert not restated(earlier, later)
    # Said for itself, against the turned clause, it still counts.
    contrasted = later.replace(" and ", ", but still ", 1)
    assert restated(earlier, contrasted)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (
            "Let the robot mow while the kids are at school, the neighbours dont care.",
            "dont let the robot mow while the kids are at school",
        ),
        (
            "keep the draft labels in the sidebar",
            "ditch the draft labels in the sidebar, they clutter it",
        ),
        ("Turn the volume down after midnight.", "turn the volume up after midnight"),
        ("Round the totals down to the nearest euro.", "round the totals up to the nearest euro"),
    ],
)
def test_common_verbs_and_particles_turn_an_instruction(earlier: str, later: str) -> None:
    assert not restated(earlier, later)


def test_a_run_on_reason_keeps_its_negation_to_itself() -> None:
    # Each message holds two negations or none, in two clauses no comma separates.
    earlier = "dont wire the doorbell to the hub we dont trust its firmware"
    assert not restated(earlier, "wire the doorbell to the hub we trust its firmware now")
    earlier = "don't schedule demos on mondays because there's no one at the front desk"
    assert restated(earlier, "dont schedule demos on mondays theres no one at the front desk")


def test_a_reminder_typed_with_a_slip_is_still_a_reminder() -> None:
    earlier = "Write the release notes in the past tense."
    for later in ("like i mentoined, past tense for the release notes", "AGIAN: past tense notes"):
        got = judge(instructions_in(earlier, 0, CFG), later, 1, CFG).restated
        assert got and "reminder_cue" in got[0].cues


def test_a_change_the_instruction_itself_words_is_no_news_when_told_again() -> None:
    earlier = "Switch the staff rota to the winter template until the clocks change."
    again = (
        "the rota is still on summer so switch it to the winter template until the clocks change"
    )
    assert restated(earlier, again)
    assert not restated(earlier, "actually switch the staff rota to the spring template")


@pytest.mark.parametrize(
    "echo",
    [
        "ok got it, no client names in the file names. does that cover the archive too?",
        "no client names in the file names, understood. what about the archive?",
        "no client names in the file names — got it. does that cover the archive too?",
    ],
)
def test_an_instruction_echoed_as_understood_is_no_restatement(echo: str) -> None:
    earlier = "Don't put client names in the file names."
    assert not restated(earlier, echo)
    # Asked, "got it?" is no acknowledgement: the user is insisting, and still tells.
    asked = un.read("NO client names in the file names, got it?").sentences[0]
    assert asked.form & un.NEGATED_START and not asked.form & un.ACK


def test_up_to_a_number_is_a_bound() -> None:
    assert restated("Show at most 20 rows per page.", "show up to 20 rows per page")


def test_one_item_of_an_inline_list_is_restated() -> None:
    earlier = (
        "Rules for the gallery: 1) no stock photos 2) credit the photographer 3) no watermarks"
    )
    got = find_restatements(instructions_in(earlier, 0, CFG), "Credit the photographer!", 1, CFG)
    assert [r.earlier.text for r in got] == ["credit the photographer"]


def test_a_turned_pair_is_vetoed_however_little_of_it_aligns() -> None:
    from monitor.detect.lang.units import read

    ins = instructions_in("Don't add a changelog to the repository.", 0, CFG)[0]
    m = read("Having talked it over, add a changelog to the repository, and tag the release too.")
    u = m.units[0]
    assert turned_within([(ins, u, True, 0.2, 0.1)], m) == [True]
    assert turned_within([(ins, u, False, 0.2, 0.1)], m) == [False]


def _scored_plainly(
    history: list[Instruction], m: un.Message, turn: int, limit: int
) -> list[tuple[Instruction, Unit, int]]:
    """``scored`` as its docstring says: ``candidates`` filtered and ranked by ``overlap``."""
    found = [
        (o, n, c)
        for n, c in enumerate(candidates(history, m, turn))
        if (o := overlap(c[0].unit, c[1])) >= MIN_OVERLAP
    ]
    if len(found) > limit:
        found.sort(key=lambda t: (-t[0], -t[2][0].turn, t[1]))
    return [c for _, _, c in found[:limit]]


#: The instructions again in other words that share every key: ties for ``overlap``.
POLITE_TOO = [*INSTRUCTIONS, *(f"Please {t[0].lower()}{t[1:]}" for t in INSTRUCTIONS)]


@given(
    st.lists(st.sampled_from(POLITE_TOO), min_size=1, max_size=8),
    st.lists(st.sampled_from([*INSTRUCTIONS, "the legend", "Amara", "ok thanks"]), max_size=3),
    st.integers(1, 9),
    st.integers(1, 4),
)
@settings(max_examples=100)
def test_scored_pairs_are_the_most_overlapping_candidates(
    said: list[str], later: list[str], turn: int, limit: int
) -> None:
    """The one-pass ``scored`` picks what ``candidates`` and ``overlap`` pick, in that order."""
    history = [i for t, text in enumerate(said) for i in instructions_in(text, t, CFG)]
    m = un.read(" ".join(later))
    got = scored(history, m, turn, limit)
    want = _scored_plainly(history, m, turn, limit)
    assert [(id(i), id(u), k) for i, u, k in got] == [(id(i), id(u), k) for i, u, k in want]


@given(
    st.lists(st.sampled_from(POLITE_TOO), min_size=1, max_size=6),
    st.lists(st.lists(st.sampled_from([*INSTRUCTIONS, "again!!", "no"]), max_size=3), max_size=4),
)
@settings(max_examples=40)
def test_remembered_pair_readings_judge_as_fresh_ones(
    said: list[str], later: list[list[str]]
) -> None:
    """A pair read before (features, gates, probabilities) is judged as a pair read afresh."""
    history = [i for t, text in enumerate(said) for i in instructions_in(text, t, CFG)]
    texts = [" ".join(words) for words in later]
    remembered = [judge(history, text, 9, CFG) for text in texts]
    fresh = []
    for text in texts:
        restatements.cache_clear()
        fresh.append(judge(history, text, 9, CFG))
    assert remembered == fresh


@pytest.mark.parametrize(
    "heading",
    ["For the quarterly stock take", "Rules for the staging cluster", "About the loyalty mailer"],
)
def test_a_heading_names_no_instruction_and_restates_none(heading: str) -> None:
    cfg = DetectConfig()
    earlier = instructions_in(f"{heading}: count every shelf twice.", 0, cfg)
    assert heading not in [i.text for i in earlier]
    later = f"{heading.upper()}: ADD THE BACK ROOM TO THE LIST."
    assert not find_restatements(instructions_in(heading, 0, cfg), later, 2, cfg)
    # The heading's own instruction is still read, and still restated.
    again = find_restatements(earlier, f"{heading}: count every shelf twice, please.", 2, cfg)
    assert again


def test_a_change_announced_in_another_sentence_changes_nothing_in_this_one() -> None:
    cfg = DetectConfig()
    earlier = "Please send the supplier invoices to the finance inbox rather than to Dana directly."
    later = (
        "Dana got two more supplier invoices this week. I did ask that supplier invoices go to "
        "the finance inbox and not to her personally. Please make sure they do from now on."
    )
    m = un.read(later)
    changed = {
        g.unit.text: g.changed
        for g in restatements.gated_pairs(restatements.instructions_in(earlier, 0, cfg), m, 2, cfg)
    }
    assert changed[m.sentences[1].text] is False
    assert changed[m.units[-1].text] is True  # the whole message holds the announcement


@pytest.mark.parametrize(
    "permission",
    [
        "It's not a problem to cache the map tiles.",
        "I don't mind if you cache the map tiles.",
        "cache the map tiles",
    ],
)
def test_a_permission_put_as_a_negated_objection_never_restates_a_prohibition(
    permission: str,
) -> None:
    cfg = DetectConfig()
    history = restatements.instructions_in("Don't cache the map tiles.", 0, cfg)
    assert not restatements.find_restatements(history, permission, 2, cfg)


def test_cc_is_told_like_any_verb() -> None:
    cfg = DetectConfig()
    history = restatements.instructions_in("Don't cc the auditors on status mails.", 0, cfg)
    assert not restatements.find_restatements(history, "cc the auditors on status mails", 2, cfg)


@given(
    st.lists(st.sampled_from([*INSTRUCTIONS, *POLITE_TOO]), min_size=1, max_size=6),
    st.lists(
        st.lists(
            st.sampled_from(
                [*INSTRUCTIONS, "again!!", "no", "never", "instead", "not", "as I said", "don't"]
            ),
            max_size=4,
        ),
        max_size=4,
    ),
    st.sampled_from([None, 0, 20, 60]),
)
@settings(max_examples=60)
def test_restatements_alone_are_those_of_the_full_verdict(
    said: list[str], later: list[list[str]], threshold: int | None
) -> None:
    """``find_restatements`` (gated pairs never scored) lists what ``judge`` restates."""
    cfg = DetectConfig(restate_threshold=threshold)
    history = [i for t, text in enumerate(said) for i in instructions_in(text, t, cfg)]
    texts = [" ".join(words) for words in later]
    for text in [*texts, ". ".join(texts)]:  # and as sentences of one message
        assert find_restatements(history, text, 9, cfg) == list(
            judge(history, text, 9, cfg).restated
        )


def test_restatements_alone_read_a_change_announced_in_another_sentence_as_judge_does() -> None:
    cfg = DetectConfig()
    history = instructions_in(
        "When you book the venue calls, please log them in the shared sheet rather than in "
        "your own notes.",
        0,
        cfg,
    )
    text = (
        "Sorry to raise this again, but two more calls ended up in your notes this week. I did "
        "ask that venue calls get logged in the shared sheet and not in personal notes. Please "
        "make sure they are from now on."
    )
    found = find_restatements(history, text, 2, cfg)
    assert found and found == list(judge(history, text, 2, cfg).restated)


@pytest.mark.parametrize("later", [*INSTRUCTIONS, "Don't use British spelling, use US spelling."])
def test_coverage_is_the_features_coverage(later: str) -> None:
    for earlier in INSTRUCTIONS:
        e, l_ = un.unit(earlier), un.unit(later)
        x = features(e, l_, un.read(later).cues, un.SENTENCE)
        assert coverage(e, l_) == (x[FEATURES.index("cov_e")], x[FEATURES.index("cov_l")])


@given(
    st.sampled_from(
        [
            ("don't book any session before 7am", "no sessions before 7am"),
            ("never run the export during office hours", "no export runs during office hours"),
        ]
    ),
    st.sampled_from(["the building opens at 7", "the office network is busy then"]),
)
def test_a_reason_clause_beside_a_rule_turns_no_restatement(
    pair: tuple[str, str], why: str
) -> None:
    """The earlier message's reason is remembered as a clause of its own; the later message
    says the rule in its negated form with the reason beside it. The reason, which tells
    nothing, is not a turned version of the later rule that vetoes the whole sentence."""
    rule, again = pair
    history = instructions_in(f"{rule}, {why}", 0, CFG)
    m = un.read(f"i know i said this but {again}, {why.removeprefix('the ')}.")
    gated = restatements.gated_pairs(history, m, 1, CFG)
    of_rule = [g for g in gated if g.ins.unit.text.startswith(rule)]
    assert of_rule and any(not g.gated and not g.turned for g in of_rule)
