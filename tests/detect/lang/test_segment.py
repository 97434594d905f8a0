"""Pasted material out, then sentences and clauses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.lang import segment
from monitor.detect.lang.segment import clauses, output_line, pieces, prose, sentences


@pytest.mark.parametrize(
    "line",
    [
        "    at Object.<anonymous> (/app/src/index.js:12:5)",
        'File "app.py", line 12, in <module>',
        "2026-12-01 10:22:01 ERROR worker crashed",
        "$ npm test",
        "@@ -1,3 +1,4 @@",
        "create mode 100644 main.py",
        "remote: error: GH006: Protected branch update failed",
        "│ GC Root: System class",
        "const retries = 3;",
        "a1b2c3d 4e5f6a7 src/x.py 120",
    ],
)
def test_machine_output_is_recognised_by_its_shape(line: str) -> None:
    assert output_line(line)


@pytest.mark.parametrize(
    "line",
    ["Keep the parser under 200 lines.", "please don't touch `config.yaml`", "Ship it on Friday"],
)
def test_typed_lines_are_not_output(line: str) -> None:
    assert not output_line(line)


def test_prose_drops_a_pasted_block_with_its_caption() -> None:
    text = (
        'here\'s the error:\nTraceback (most recent call last):\n  File "a.py", line 3\n'
        "KeyError: 'x'\n\nPlease fix the parser first."
    )
    assert prose(text).strip() == "Please fix the parser first."


def test_headings_and_status_blocks_are_not_instructions_but_a_single_label_line_may_be() -> None:
    brief = (
        "Handoff\nBranch: main\nmachine: build-03\ntests: 412 passed\nDont merge until CI is green."
    )
    assert prose(brief).strip() == "Dont merge until CI is green."
    assert prose("=== Step 3: Enable entire ===").strip() == ""
    assert prose("Tone: friendly, no jargon.") == "Tone: friendly, no jargon."


def test_sentences_keep_abbreviations_and_list_items() -> None:
    got = sentences("List Dr. Okafor as author. Rules:\n1. no emojis\n2. keep it short")
    assert got == ("List Dr. Okafor as author.", "Rules", "no emojis", "keep it short")


def test_pieces_cut_from_a_question_say_so() -> None:
    got = pieces("Rule 3, no gradients - does that cover print too?")
    assert [asks for _, asks in got] == [True, True]


def test_clauses_split_a_negated_reason_a_second_request_and_a_contrast() -> None:
    assert clauses("Use pnpm, the CI image doesn't have yarn.") == (
        "Use pnpm",
        "the CI image doesn't have yarn.",
    )
    assert clauses("Book the slots in 45 minutes and leave 15 minutes between them") == (
        "Book the slots in 45 minutes",
        "leave 15 minutes between them",
    )
    assert clauses("use B, not A") == ("use B", "not A")
    assert clauses("For the app, never mention prices") == ("For the app, never mention prices",)
    assert clauses("Keep it short, clear and friendly") == ("Keep it short, clear and friendly",)
    assert clauses("the backups run nightly and also can you rotate the keys") == (
        "the backups run nightly",
        "also can you rotate the keys",
    )


@given(st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=30), min_size=1, max_size=6))
def test_typed_paragraphs_are_left_alone(lines: list[str]) -> None:
    text = "\n".join(f"Please {line.strip(' ,.') or 'go'} now" for line in lines)
    assert prose(text) == text


@given(st.text(max_size=300))
def test_any_text_segments_without_error(text: str) -> None:
    for s in sentences(prose(text)):
        assert s.strip() == s and s
        assert all(c for c in clauses(s))


ITEMS = [
    "no stock photos",
    "captions under twenty words",
    "alt text on every image",
    "credit the photographer",
    "never crop the logo",
]


@given(st.lists(st.sampled_from(ITEMS), min_size=2, max_size=5, unique=True), st.booleans())
def test_a_list_typed_inline_is_cut_into_its_items(items: list[str], parens: bool) -> None:
    numbered = " ".join(f"{n}{')' if parens else '.'} {it}" for n, it in enumerate(items, 1))
    assert sentences(f"Rules for the gallery: {numbered}") == ("Rules for the gallery", *items)
    assert sentences(f"House style for the gallery: {', '.join(items)}") == (
        "House style for the gallery",
        *items,
    )


def test_numbers_that_do_not_count_up_and_commas_after_other_labels_stay() -> None:
    assert sentences("Set retries to 3) and the timeout to 5) seconds") == (
        "Set retries to 3) and the timeout to 5) seconds",
    )
    assert sentences("Note: keep it short, clear and friendly") == (
        "Note",
        "keep it short, clear and friendly",
    )


def test_bulleted_rules_are_typed_not_output() -> None:
    text = "Checklist for the report:\n\u2022 oil level in litres\n\u2022 battery voltage"
    assert prose(text) == text
    assert sentences(text)[1:] == ("oil level in litres", "battery voltage")


@given(
    st.lists(
        st.sampled_from(["a", "b c", ".", "!", "?", '"', ")", "]", " ", "\n", "\t"]), max_size=30
    ).map("".join)
)
def test_sentences_are_cut_where_the_whole_pattern_cuts(text: str) -> None:
    """The cut tried only after stops and at line breaks is the pattern's own split (with
    runs of one-word sentences joined, as ``_unstressed`` does)."""
    parts = segment._SENTENCE_END.split(text)
    if len(parts) > 2:
        inline = ["\n" not in m.group() for m in segment._SENTENCE_END.finditer(text)]
        parts = segment._unstressed(parts, inline)
    assert segment._sentence_split(text) == parts


def test_stops_between_single_words_stress_one_sentence() -> None:
    assert sentences("Do. Not. Push. To main.") == ("Do Not Push To main.",)
    # on an indented line too, and after a line of dots alone (its cut holds the break)
    assert segment._sentence_split("so\n DO. NOT. PUSH.") == ["so", " DO NOT PUSH."]
    assert segment._sentence_split(". .\n") == [" .", ""]
    got = sentences("the CI broke again. NEVER. SKIP. THE TESTS. thanks")
    assert got == ("the CI broke again.", "NEVER SKIP THE TESTS.", "thanks")
    # One-word sentences apart, or on lines of their own, are sentences.
    assert sentences("Done. Tests pass. Merged.") == ("Done.", "Tests pass.", "Merged.")
    assert sentences("Wait.\nStop.\nRead the logs first.") == (
        "Wait.",
        "Stop.",
        "Read the logs first.",
    )


@given(st.sampled_from(["cache", "vendor", "mute", "stub", "pin"]), st.booleans())
def test_a_request_told_again_after_a_comma_opens_a_clause(verb: str, negated: bool) -> None:
    """ "don't cache X, cache Y instead": the opening verb again opens a second request,
    whether or not the lexicon knows it as a verb."""
    first = f"{'dont ' if negated else ''}{verb} the build folder"
    assert clauses(f"{first}, {verb} the wheel directory instead") == (
        first,
        f"{verb} the wheel directory instead",
    )


def test_a_negated_remark_with_a_longer_subject_is_a_clause_of_its_own() -> None:
    got = clauses("put the unit in every column header, rows 3 and 7 dont have it")
    assert got == ("put the unit in every column header", "rows 3 and 7 dont have it")
    # A relative clause belongs to what it follows.
    one = "keep a checklist of steps, where each line doesn't repeat the last"
    assert clauses(one) == (one,)


def test_no_and_max_abbreviate_only_before_a_number() -> None:
    got = sentences("Can we skip the checks? No. Every form needs a certificate.")
    assert got == ("Can we skip the checks?", "No.", "Every form needs a certificate.")
    assert sentences("Summary: 200 words max. Then the body.") == (
        "Summary: 200 words max.",
        "Then the body.",
    )
    assert sentences("See Fig. 3 and keep max. 20 rows.") == ("See Fig. 3 and keep max. 20 rows.",)


def test_an_emoji_before_a_space_ends_a_sentence() -> None:
    got = sentences("lovely, the banner shows up twice now 🙄 ONE banner per page")
    assert got == ("lovely, the banner shows up twice now 🙄", "ONE banner per page")
    assert sentences("shipped ✅ next up the docs") == ("shipped ✅", "next up the docs")


@given(
    st.lists(st.sampled_from(["Keep", "the", "cache", "warm", "on", "Friday"]), min_size=3),
    st.booleans(),
)
def test_a_sentence_cut_word_by_word_reads_as_the_sentence(words: list[str], tail: bool) -> None:
    """ "Keep. The. Cache." is "Keep The Cache.": the same words, one sentence. (Two one-word
    sentences alone, "OK. Thanks.", stay two.)"""
    text = " ".join(w + "." for w in words) + (" after lunch." if tail else "")
    (one,) = sentences(text)
    assert one.rstrip(".").split() == [*words, *(["after", "lunch"] if tail else [])]


@given(st.text(alphabet="ab -;:\t\u2003\u00a0x-", max_size=24))
def test_clause_ends_cut_where_the_pattern_cuts(item: str) -> None:
    """The tests before the split (a ";", a ":", a dash after whitespace) skip only items the
    pattern would not cut."""
    assert segment._clause_ends(item) == segment._CLAUSE_END.split(item)


@given(
    st.sampled_from(
        [
            "how many times do I have to say it",
            "How many times do we need to tell you this",
            "how many times have I told you",
            "HOW MANY TIMES DO I HAVE TO SAY THIS",
            "is it really that hard to",
        ]
    ),
    st.sampled_from(["", ",", ":", "!!"]),
)
def test_a_rhetorical_question_asks_nothing_of_what_follows(opener: str, mark: str) -> None:
    text = f"{opener}{mark} send the invoices out on the first of the month"
    got = pieces(text)
    assert got[0][1] and got[0][0].lower().startswith(opener.lower()[:6])
    assert got[-1] == ("send the invoices out on the first of the month", False)


def test_a_first_person_subject_after_a_comma_opens_a_clause() -> None:
    got = clauses("Put the retries in the client config, I see two services without any")
    assert got == ("Put the retries in the client config", "I see two services without any")


def test_a_subject_with_an_irregular_past_after_a_comma_opens_a_clause() -> None:
    got = clauses("Rebuild the index before you deploy, the last two deploys broke search.")
    assert got == ("Rebuild the index before you deploy", "the last two deploys broke search.")
    # a list of nouns after a comma is not a clause
    assert len(clauses("Keep the header, the footer and the last page.")) == 1


def test_an_unpunctuated_negated_request_after_a_noun_opens_its_own() -> None:
    text = "the sample rate in every chart should be 48 kHz dont use 44.1 because it resamples"
    assert "dont use 44.1" in clauses(text)
    # After a subject or an auxiliary the negation is the clause's own.
    assert clauses("the two nightly jobs never finish before six") == (
        "the two nightly jobs never finish before six",
    )
    assert len(clauses("we never rebase the release branch")) == 1


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("dont wire the doorbell to the hub we dont trust its firmware", "we dont trust"),
        ("don't schedule demos on mondays there's no one at the front desk", "there's no one"),
        ("Skip the legacy exporter they never read its files", "they never read"),
    ],
)
def test_an_unpunctuated_negated_clause_of_a_new_subject_opens_its_own(text: str, cut: str) -> None:
    got = clauses(text)
    assert len(got) == 2 and got[1].startswith(cut)
    assert " ".join(got) == text


@pytest.mark.parametrize(
    "text",
    [
        "when the printer is busy we dont queue the labels",  # a frame keeps its clause
        "move it we dont",  # too short a request before it
        "the last batch of labels that we dont print",  # joined by "that"
        "there is no reason we can't merge the two lists",  # a clause the noun takes
    ],
)
def test_a_joined_negated_clause_is_not_cut_off(text: str) -> None:
    assert not any(c.lower().startswith(("we ", "there")) for c in clauses(text)[1:])


def test_so_before_a_request_opens_it_as_and_does() -> None:
    got = clauses("the minutes are drafted so send them to the board before noon")
    assert got == ("the minutes are drafted", "send them to the board before noon")
    # "so" before anything but a verb joins what follows
    assert len(clauses("keep the minutes so short that nobody skips them")) == 1


def test_a_piece_longer_than_a_span_is_cut_at_its_joining_words() -> None:
    said = (
        "ok so the caterer called this morning about the order and the tables will be late "
        "again because the van broke down on the ring road which is the second time this month "
        "and the florist wants to move the delivery to friday morning which is fine by me and "
        "the hall closes at six on friday so please send the florist the hall hours tonight"
    )
    got = clauses(said)
    assert "please send the florist the hall hours tonight" in got
    assert all(len(c.split()) < segment.SPAN_WORDS for c in got)
    # A shorter piece keeps its joins.
    shorter = "the caterer called and the tables will be late and the florist wants friday"
    assert clauses(shorter) == (shorter,)


@pytest.mark.parametrize(
    "text",
    [
        'here is your note from this morning: "Moved the stand-up to 9:30 and kept the retro on '
        'Friday afternoons as agreed." can you post it',
        "pasting the clause for reference:\n\u201cThe lender may recall any object on thirty "
        "days written notice to the borrower.\u201d\nwhat does it mean for us",
        "this was the label draft:\n'Oil on canvas, lent by a private collection, please do not "
        "touch'\nis the credit right",
    ],
)
def test_a_long_quotation_announced_as_pasted_is_not_typed(text: str) -> None:
    kept = prose(text)
    assert len(kept.split()) <= 12
    assert kept.split()[-1] in ("it", "us", "right")


@pytest.mark.parametrize(
    "text",
    [
        'I said "never push to main without a review from the platform team" and I meant it',
        'here is the thing: "no" means no',  # too short to be a paste
        "here's what I want: don't rename the columns in the export sheet again please",
    ],
)
def test_a_quoted_rule_or_an_unquoted_one_stays(text: str) -> None:
    assert prose(text) == text


def test_incl_and_excl_end_no_sentence() -> None:
    assert sentences("Quote 40 pages excl. appendices and cite every table.") == (
        "Quote 40 pages excl. appendices and cite every table.",
    )
