"""What the scorer reads off a span: content, values, polarity, poles, form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.lang import lexicon as lx
from monitor.detect.lang import units as un
from monitor.detect.lang.units import read, unit


def test_polarity_counts_negations_of_the_predicate() -> None:
    assert unit("Push to main").polarity == 0
    assert unit("Don't push to main").polarity == 1
    assert unit("dont push to main").polarity == 1
    assert unit("Never push to main").polarity == 1
    assert unit("Don't skip the tests").polarity == 0  # two negations
    assert unit("don't forget to run the tests").polarity == 0


def test_a_list_of_things_forbidden_is_one_negation() -> None:
    assert unit("no tabs and no trailing spaces").polarity == 1
    assert unit("never squash, never rebase").negations == 1
    assert unit("No, never squash the history.").polarity == 1


def test_a_negated_objection_permits() -> None:
    for permits in (
        "It's not a problem to cache the tiles.",
        "I don't mind if you cache the tiles.",
        "No objection to caching the tiles.",
    ):
        assert unit(permits).polarity == 0, permits
    assert unit("Don't cache the tiles.").polarity == 1


def test_a_contrastive_not_names_an_alternative_and_negates_nothing() -> None:
    u = unit("Use pnpm, not yarn")
    assert u.polarity == 0 and "yarn" in u.rejected
    v = unit("tabs not spaces")
    assert v.polarity == 0 and "space" in v.rejected


def test_a_negated_bound_is_the_same_bound() -> None:
    sides = {
        unit(t).poles
        for t in (
            "under 20 rows",
            "no more than 20 rows",
            "don't go over 20 rows",
            "never exceed 20 rows",
            "at most 20 rows",
        )
    }
    assert sides == {(("bound", -1),)}
    assert unit("at least 3 reviewers").poles == (("bound", 1),)


def test_antonyms_share_a_pole_with_opposite_signs() -> None:
    a, b = dict(unit("enable dark mode").poles), dict(unit("disable dark mode").poles)
    turned = [p for p in a.keys() & b.keys() if a[p] == -b[p]]
    kept = [p for p in a.keys() & b.keys() if a[p] == b[p]]
    assert len(turned) == 1 and len(kept) == 1  # enable/disable turns, dark stays dark
    # A phrasal verb is read as its verb; "omit", like "avoid", is a negation, not a pole.
    left_out = unit("leave out the appendix")
    assert left_out.polarity == unit("do not include the appendix").polarity == 1
    assert left_out.poles == () and left_out.stems == unit("the appendix").stems


def test_loose_polarity_reads_words_negative_in_themselves() -> None:
    u = unit("main.tex is off limits")
    assert u.polarity == 0 and u.polarity_loose == 1


def test_form_tells_questions_requests_acknowledgements_and_reports() -> None:
    assert unit("did you keep the cat alive?").form & un.QUESTION
    assert unit("is the summary still under 150 words").form & un.QUESTION
    assert unit("you're leaving the opening line as it is, right").form & un.QUESTION
    polite = unit("could you please bump the version?").form
    assert polite & un.POLITE
    assert unit("thanks, looks great").form & un.ACK
    assert not unit("ok so from now on always rebase before you push").form & un.ACK
    assert unit("Marco wrote that we should never deploy on Fridays").form & un.REPORT
    assert unit("Don't push to main").form & un.NEGATED_START
    assert not unit("when you write the handler, return 202").form & un.QUESTION
    assert unit("make sure the logs rotate").form & un.OBLIGATION
    assert not unit("make the title shorter").form & un.OBLIGATION  # "make" alone obliges no one


def test_a_message_is_read_into_sentences_clauses_and_a_short_whole() -> None:
    m = read("No emojis. Ever. As I said, keep it under 200 words, the app cuts it off.")
    texts = [u.text for u in m.units]
    assert "No emojis." in texts and "keep it under 200 words" in texts
    assert m.kinds[-1] == un.WHOLE
    assert m.cues.reminder == 1


def test_content_words_that_can_announce_a_change_announce_none_as_content() -> None:
    for rule in (
        "Every change to the parser needs a test.",
        "The pump must never switch more than twice an hour.",
        "The importer should ignore rows without an id.",
    ):
        assert read(rule).cues.update == 0, rule
    for change in (
        "Change it to 30 days.",
        "Switch the queue over to Redis.",
        "Ignore the old cap.",
    ):
        assert read(change).cues.update == 1, change


def test_a_speaker_saying_how_they_said_it_before_is_a_reminder() -> None:
    for said in (
        "i clearly said the exports stay in UTF-8",
        "Like I just mentioned, two reviewers.",
    ):
        assert read(said).cues.reminder == 1, said
    assert read("I just want the exports in UTF-8").cues.reminder == 0
    for said in (
        "Ive said it: exports in UTF-8.",
        "We've been over this, UTF-8.",
        "To reiterate: UTF-8.",
        "Per my note this morning, exports in UTF-8.",
        "UTF-8 exports, like before.",
        "Same note as last time: UTF-8.",
        "I've asked 3 times now, UTF-8 exports.",
        "ICYMI: exports in UTF-8.",
        "Bumping this: UTF-8 exports.",
        "What I asked originally: UTF-8 exports.",
        "Per my initial brief, exports in UTF-8.",
        "From the original list, UTF-8 exports.",
        "UTF-8, that's the rule I set on day one.",
        "As I pointed out last week, exports in UTF-8.",
        "like i flagged before, utf-8",
        "UTF-8 exports. I did mention this.",
        "Per the original message: UTF-8 exports.",
        "As specified earlier, exports in UTF-8.",
        "as explained before, utf-8 exports",
        "Same as last time: UTF-8.",
    ):
        assert read(said).cues.reminder == 1, said
    assert read("Bump the exporter to 2.1 and set UTF-8.").cues.reminder == 0
    assert read("Per the spec, exports in UTF-8.").cues.reminder == 0


@pytest.mark.parametrize(
    ("said", "reminder", "annoyed"),
    [
        ("For what is now the fifth time: the exports stay in UTF-8.", 1, 0),
        ("this is the third time im saying it, UTF-8", 1, 0),
        ("we literally talked about this, UTF-8 exports", 1, 0),
        ("The export is in Latin-1 after we agreed on UTF-8.", 1, 0),
        ("Run the export the second time with UTF-8.", 0, 0),
        ("I don't know how else to put it: UTF-8 exports.", 0, 1),
        ("utf-8 exports, how many ways can i say it", 0, 1),
        ("I do not know how else to say it, UTF-8.", 0, 1),
        ("Tell me how else to export it.", 0, 0),
    ],
)
def test_saying_it_for_the_nth_time_or_not_knowing_how_else_to_say_it(
    said: str, reminder: int, annoyed: int
) -> None:
    cues = read(said).cues
    assert (cues.reminder, cues.frustration) == (reminder, annoyed)


def test_a_negating_fragment_stays_in_the_whole_message() -> None:
    m = read("You pushed to prod. Never. Push. To prod.")
    assert m.kinds[-1] == un.WHOLE and m.units[-1].polarity == 1
    assert read("You pushed to prod. Push. To prod.").units[-1].polarity == 0


def test_a_reminder_not_to_forget_announces_no_change() -> None:
    for reminder in ("Don't forget that the invoices go to Ines.", "never ignore the lint errors"):
        assert read(reminder).cues.update == 0, reminder
    for change in ("Forget the old invoice address.", "Ignore the lint errors for now."):
        assert read(change).cues.update == 1, change


@given(st.text(max_size=200))
def test_any_text_reads_without_error(text: str) -> None:
    m = read(text)
    assert len(m.units) == len(m.kinds)
    for u in m.units:
        assert len(u.stems) == len(u.keys) == len(u.weights)
        assert u.polarity in (0, 1) and u.polarity_loose in (0, 1)


def test_a_unit_is_the_same_in_every_process() -> None:
    # Units live in the session state that the worker's changelog and replay both encode: they
    # must not depend on the interpreter's string-hash seed ("keep" has several antonym poles).
    import os
    import subprocess
    import sys

    code = (
        "import msgspec; from monitor.detect.lang.units import unit; "
        "print(msgspec.json.encode(unit('Keep the odd rows, allow uploads and show the legend.'))"
        ".decode())"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(seen) == 1, seen


@given(
    st.lists(
        st.sampled_from(
            [
                "Keep",
                "the",
                "README",
                "under",
                "two",
                "hundred",
                "`make lint`",
                "not",
                "Avoid",
                "enable",
                "disable",
                "src/app.py",
                "Okafor",
                "never",
                "10k",
                "than",
                "more",
                "tabs",
            ]
        ),
        max_size=12,
    )
)
def test_words_remembered_across_spans_read_as_fresh_ones(words: list[str]) -> None:
    """``unit`` reads each word once for every span (``_word``'s memo): a span read after others
    that share its words is the span read with every memo empty."""
    warm = [unit(" ".join(words[i:] + words[:i])) for i in range(len(words))]
    un.cache_clear()
    assert [unit(" ".join(words[i:] + words[:i])) for i in range(len(words))] == warm


#: Words the cue patterns look for, with the spaces and marks around them.
_CUE_WORDS = [
    "again",
    "don't forget the",
    "never ignore",
    "forget that",
    "AS I SAID",
    "Once Again",
    "as i said",
    "still",
    "why are",
    "ugh",
    "instead",
    "no longer",
    "now",
    "change it to",
    "REMIND",
    "Don't forget",
    "never mind",
    "the fourth time",
    "after we agreed",
    "how else to say",
    ",",
    "!",
    " ",
    "\u0130",
    "\u017f",
]


@given(st.lists(st.sampled_from(_CUE_WORDS) | st.text(max_size=4), max_size=12))
def test_the_cue_patterns_twins_find_what_they_find_in_lower_case_ascii(parts: list[str]) -> None:
    low = " ".join(parts).lower()
    for pattern, twin in zip(un._CUES, un._CUES_LOWER, strict=True):
        assert twin is not pattern  # the patterns are written in lower case: the twin runs
        if low.isascii():
            assert twin.findall(low) == pattern.findall(low)


@given(st.lists(st.sampled_from(_CUE_WORDS) | st.text(max_size=4), max_size=12))
def test_reminders_are_cut_from_a_span_as_the_pattern_cuts_them(parts: list[str]) -> None:
    span = " ".join(parts)
    assert un._unreminded(span) == lx.REMINDER.sub(" ", span)


@given(st.sampled_from(["PDF", "IP", "API", "SKU", "TIFF", "GPU"]))
def test_an_acronyms_plural_is_the_acronym(acronym: str) -> None:
    one = un.unit(f"attach the {acronym} to the ticket")
    many = un.unit(f"attach the {acronym}s to the ticket")
    assert one.stems == many.stems and one.keys == many.keys


def test_a_not_after_a_filler_after_a_content_word_names_the_alternative() -> None:
    u = unit("run the migration on the replica first not the primary")
    assert u.polarity == 0 and "primary" in u.rejected
    # After an auxiliary and a filler it negates: "is still not".
    assert unit("the cache is still not warm").polarity == 1


def test_excl_reads_as_excluding() -> None:
    assert (
        unit("Max 12 slides excl. the title slide").norm
        == unit("Max 12 slides excluding the title slide").norm
    )


def test_w_slash_reads_as_with_and_w_slash_o_as_without() -> None:
    assert unit("pack each box w/ two labels").norm == unit("pack each box with two labels").norm
    shipped = unit("ship the build w/o the debug symbols")
    assert shipped.norm == unit("ship the build without the debug symbols").norm
    assert shipped.polarity == 1  # "without" negates, so "w/o" does


def test_have_with_an_object_asks_for_something_done() -> None:
    assert not unit("have them wrapped in the blue paper").form & un.QUESTION
    assert not unit("have a look at the failing job").form & un.QUESTION
    assert unit("have they wrapped the gifts").form & un.QUESTION


@given(st.sampled_from(["goes", "went", "gone", "go"]))
def test_every_form_of_go_is_generic(form: str) -> None:
    u = unit(f"the invoice {form} under kitchen equipment")
    assert sum(1 for w in u.weights if w > un.GENERIC) == 3  # invoice, kitchen, equipment


def test_how_i_told_you_is_a_reminder_not_a_question() -> None:
    m = read("How I told you before, every deploy goes through the staging gate.")
    assert m.cues.reminder and not m.sentences[0].form & un.QUESTION
    assert read("How do I deploy through the staging gate").sentences[0].form & un.QUESTION


@pytest.mark.parametrize(
    "plan",
    [
        "I am going to rename the branches tomorrow.",
        "I plan to rename the branches tomorrow.",
        "I intend to rename the branches tomorrow.",
        "i am planning to rename the branches tomorrow",
    ],
)
def test_the_users_own_plan_is_no_instruction(plan: str) -> None:
    u = un.unit(plan)
    assert u.form & un.OWN_PLAN
    assert not un.unit("Rename the branches tomorrow.").form & un.OWN_PLAN


def test_a_request_verb_typed_with_two_letters_swapped_still_tells() -> None:
    m = un.read("exlcude the garage lights from the night scene")
    assert m.sentences[0].form & un.IMPERATIVE
    assert "exclude" in m.sentences[0].norm
