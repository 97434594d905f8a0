"""The survival check: general properties of its verdicts, and the ledger's extraction."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import ledger as lg
from monitor.detect.lang import units as un
from monitor.detect.restatements import remembered
from monitor.detect.survival import check, read_summary

#: Constraints written for these tests.
CONSTRAINTS = [
    "Never modify anything under /migrations.",
    "Keep the /v1/charges response shape the same.",
    "Use pnpm for every install.",
    "Run the contract tests before every push.",
    "Store all timestamps as UTC.",
    "Include the legal disclaimer in every email.",
]
FILLER = [
    "The session covered the billing refactor and two failing integration tests.",
    "Files touched: src/app.py, src/service.py.",
    "Next step: wire up the retry queue and rerun the suite.",
    "## Progress\n- parser rewritten\n- docs updated",
]


def _item(text: str) -> lg.Item:
    return lg.Item(lg.item_id("constraint", 3, text), "constraint", 3, "user", text, un.unit(text))


def _revises(rule: str, said: str) -> bool:
    """Whether a user message saying ``said`` revises a ledger holding ``rule`` alone."""
    return bool(lg.revisions(lg.Ledger(items=(_item(rule),)), un.read(said).sentences))


def _question(text: str, turn: int = 3, speaker: Literal["user", "assistant"] = "user") -> lg.Item:
    return lg.Item(
        lg.item_id("open_question", turn, text), "open_question", turn, speaker, text, un.unit(text)
    )


@given(st.sampled_from(CONSTRAINTS), st.lists(st.sampled_from(FILLER), max_size=4), st.booleans())
@settings(max_examples=60)
def test_a_literal_in_the_summary_is_never_flagged(
    text: str, filler: list[str], upper: bool
) -> None:
    literal = text.upper() if upper else text
    summary = "\n".join([*filler, f"- User rule: {literal}", *filler])
    assert check(_item(text), read_summary(summary)).verdict == "verbatim"


@given(st.sampled_from(CONSTRAINTS), st.lists(st.sampled_from(FILLER), min_size=1, max_size=4))
@settings(max_examples=60)
def test_a_summary_without_it_drops_it(text: str, filler: list[str]) -> None:
    assert check(_item(text), read_summary("\n".join(filler))).verdict == "absent"


@given(st.sampled_from(CONSTRAINTS[1:]), st.sampled_from(FILLER))
@settings(max_examples=40)
def test_a_summary_negating_it_inverts_it(text: str, filler: str) -> None:
    negated = "Do not " + text[0].lower() + text[1:]
    got = check(_item(text), read_summary(f"{filler}\n- {negated}"))
    assert got.verdict == "contradicted" and got.sentence


def test_a_revised_item_summarised_in_its_revised_form_is_not_inverted() -> None:
    item = _item("Use port 8080 for the admin service.")
    revised = lg.revise(
        lg.Ledger(items=(item,)), item.id, 9, "Use port 9090 for the admin service."
    )
    (current,) = revised.items
    summary = read_summary("Constraints:\n- Use port 9090 for the admin service.")
    assert check(current, summary).verdict in ("verbatim", "supported")
    stale = read_summary("Constraints:\n- The admin service listens on port 8080.")
    assert check(current, stale).verdict == "contradicted"


def test_a_revised_item_summarised_in_its_former_form_is_inverted() -> None:
    item = _item("Use tabs for indentation.")
    (current,) = lg.revise(
        lg.Ledger(items=(item,)), item.id, 9, "Use spaces for indentation instead."
    ).items
    got = check(current, read_summary("Code is indented with tabs throughout."))
    assert (got.verdict, got.reason) == ("contradicted", "stale")
    assert check(current, read_summary("Indentation uses spaces.")).verdict == "supported"
    # Naming the former rule's words in passing, far from stating it, contradicts nothing.
    weak = check(current, read_summary("- Indentation of the vendored tabs is untouched."))
    assert weak.verdict != "contradicted"


#: Rules with a number in a slot, and sentences that mention other numbers.
NUMBERED = [
    "Keep the lookback window at {n} days.",
    "Cap each batch at {n} rows.",
    "Run {n} workers per node.",
]
ASIDES = ["The export covers 2,297 customers.", "Build 418 passed on the second try."]


@given(
    st.sampled_from(NUMBERED),
    st.integers(2, 400),
    st.integers(2, 400),
    st.sampled_from(FILLER),
)
@settings(max_examples=60)
def test_a_summary_giving_its_number_another_value_inverts_it(
    rule: str, n: int, m: int, filler: str
) -> None:
    got = check(_item(rule.format(n=n)), read_summary(f"{filler}\n- {rule.format(n=m)}"))
    if n == m:
        assert got.verdict == "verbatim"
    else:
        assert (got.verdict, got.reason) == ("contradicted", "other_value")


@given(st.sampled_from(NUMBERED), st.integers(2, 400), st.sampled_from(ASIDES))
@settings(max_examples=40)
def test_numbers_about_other_things_invert_nothing(rule: str, n: int, aside: str) -> None:
    assert check(_item(rule.format(n=n)), read_summary(aside)).verdict != "contradicted"


def test_a_rule_summarised_in_its_own_words_is_not_inverted() -> None:
    item = _item("Don't add emojis to the release notes.")
    for said in ("No emojis in the release notes.", "Release notes: no emojis."):
        assert check(item, read_summary(said)).verdict == "supported", said


def test_an_open_question_reported_as_decided_is_inverted() -> None:
    text = "Should the nightly export include soft-deleted rows?"
    q = _question(text, 4)
    settled = check(
        q, read_summary("The user agreed the nightly export includes soft-deleted rows.")
    )
    assert (settled.verdict, settled.reason) == ("contradicted", "settled")
    still = read_summary("Open: whether the nightly export should include soft-deleted rows.")
    assert check(q, still).verdict == "supported"


def test_a_question_reported_kept_or_going_one_way_is_decided_unless_still_asked() -> None:
    text = "Should we also archive the audit tables after the move?"
    q = _question(text)
    for said in (
        "Audit tables: going with no archive; the move leaves them in place.",
        "The audit tables stay live after the move; archiving them was ruled out.",
    ):
        assert check(q, read_summary(said)).reason == "settled", said
    asking = read_summary("The user is asking the DBA whether the audit tables get archived.")
    assert check(q, asking).verdict != "contradicted"
    later = read_summary("After the move, archive the audit tables per whatever is decided.")
    assert check(q, later).verdict != "contradicted"


@pytest.mark.parametrize(
    ("rule", "said", "revises"),
    [
        ("Ticket price is $45.", "Ops just confirmed $39, not $45.", True),
        ("Total budget $8,000.", "The budget is now $6,500 total.", True),
        ("Keep the timeout at 30 seconds.", "The timeout is now 45 seconds.", True),
        ("Keep the timeout at 30 seconds.", "The timeout was 45 seconds last year.", False),
        ("Keep the timeout at 30 seconds.", "The build is slow today.", False),
    ],
)
def test_a_statement_giving_a_rule_a_new_value_revises_it(
    rule: str, said: str, revises: bool
) -> None:
    assert _revises(rule, said) is revises


def test_a_revision_stated_in_the_summary_is_not_stale_for_an_old_value_elsewhere() -> None:
    item = _item("Seat price is $45.")
    item = lg.revise(lg.Ledger(items=(item,)), item.id, 9, "Ops just confirmed $39, not $45.")
    revised = item.items[0]
    summary = read_summary(
        "- Seat price: $39 (ops correction; was $45).\n- Old banners still say $45, no fix yet."
    )
    assert check(revised, summary).verdict != "contradicted"
    stale = read_summary("- Seat price: $45 on every banner.")
    assert check(revised, stale).verdict == "contradicted"


def test_a_rule_revoked_by_a_short_name_goes() -> None:
    rule = _item(
        "Every chart in the quarterly deck must use the colour-blind safe palette from the "
        "brand kit, with a label on each bar."
    )
    other = _item("Keep the appendix tables in landscape.")
    ledger = lg.Ledger(items=(other, rule))
    said = un.read("Good news: forget the palette rule, design owns it now.")
    [(revoked, _)] = lg.revisions(ledger, said.sentences)
    assert revoked == rule.id
    assert lg.revisions(ledger, un.read("Forget the cover page, I'll do it.").sentences) == []
    # Called a rule, a nickname needs half of its words among the rule's.
    said = un.read("Scrap the bar-first rule, it clutters the slides.")
    assert lg.revisions(ledger, said.sentences) == [(rule.id, said.sentences[0].text)]
    said = un.read("Scrap the bar-first layout, it clutters the slides.")
    assert lg.revisions(ledger, said.sentences) == []


def test_a_change_announced_revises_the_rule_it_is_about() -> None:
    rule = _item("Keep the abstract under 250 words.")
    other = _item("Cite with author-year references.")
    ledger = lg.Ledger(items=(other, rule))
    changed = un.read("Thanks. Actually, make it 300 words.").sentences
    assert lg.revisions(ledger, changed) == [(rule.id, "Actually, make it 300 words.")]
    cite = un.read("Use numbered citations instead of author-year.").sentences
    assert lg.revisions(ledger, cite) == [(other.id, cite[0].text)]  # its own word rejected
    for unchanged in (
        "Should we make it 300 words instead?",  # a question revises nothing
        "The draft is 180 words now.",  # a value the bound allows, nothing announced
        "Actually, the figures look great.",  # announced, but about something else
    ):
        assert lg.revisions(ledger, un.read(unchanged).sentences) == [], unchanged


@pytest.mark.parametrize(
    ("rule", "said", "revises"),
    [
        ("Never email customers on a Sunday.", "Emails on Sunday are fine after noon.", True),
        ("Never email customers on a Sunday.", "You can email customers on Sunday now.", True),
        ("Charts in blue and grey only.", "Add orange charts too.", True),
        ("Charts in blue and grey only.", "Charts in orange are fine.", True),
        ("Charts in blue and grey only.", "We can only use blue charts.", False),
        ("Never email customers on a Sunday.", "Emails on Sunday are not fine.", False),
        ("Cite every source in the footnotes.", "Footnotes are fine.", False),  # forbids nothing
        # What a rule rejects, permitted ("A, not B" forbids B).
        (
            "Write release notes in English, not German.",
            "We can write German release notes for the Berlin office.",
            True,
        ),
        # A permission names the matter in a few words (``RELAXES_OVERLAP``).
        (
            "Post the launch clips on Mastodon and Bluesky only, no Threads.",
            "Threads is back in for the UK creators.",
            True,
        ),
    ],
)
def test_a_permission_revises_the_rule_that_forbids_or_closes_it(
    rule: str, said: str, revises: bool
) -> None:
    assert _revises(rule, said) is revises, said


def test_a_turned_rule_summarised_in_its_former_form_is_stale() -> None:
    item = _item("Never email customers on a Sunday.")
    ledger = lg.revise(lg.Ledger(items=(item,)), item.id, 9, "Emails on Sunday are fine now.")
    (current,) = ledger.items
    got = check(current, read_summary("- No customer emails on Sundays."))
    assert (got.verdict, got.reason) == ("contradicted", "stale")


def test_an_open_question_stated_as_fact_is_reported_settled() -> None:
    text = "Should the staging cluster keep its own database?"
    item = _question(text, 4)
    got = check(item, read_summary("- The staging cluster keeps its own database."))
    assert (got.verdict, got.reason) == ("contradicted", "settled")
    for still_open in (
        "- Open: whether the staging cluster keeps its own database.",
        "- Undecided: the staging cluster and its own database.",
    ):
        assert check(item, read_summary(still_open)).verdict != "contradicted", still_open
    passing = (
        "- Rebuilt the ingest workers, moved the cron jobs to the scheduler, rotated the "
        "service keys, cleaned the staging cluster logs and its old database snapshots, "
        "and wrote the runbook for the on-call rota."
    )
    assert check(item, read_summary(passing)).verdict != "contradicted"
    topic = "What about the retries?"
    raised = _question(topic, 4)
    assert check(raised, read_summary("- Retries: done.")).verdict != "contradicted"


def test_a_rule_that_points_back_is_judged_with_the_sentence_before_it() -> None:
    text = "The vendor exports land in shared/vendor_drops/. Never rename anything there."
    rules = [
        i for i in lg.user_items(text, 3, list(remembered(un.read(text)))) if i.cls == "constraint"
    ]
    assert [r.literal for r in rules] == ["Never rename anything there."]
    kept = "- Vendor drop files in shared/vendor_drops/ keep their original names."
    assert check(rules[0], read_summary(kept)).verdict == "supported"
    assert check(rules[0], read_summary("- Reports go out on Mondays.")).verdict == "absent"


def test_a_rule_not_to_forget_is_a_rule_and_revokes_nothing() -> None:
    text = "Don't forget to tag every release with its ticket number."
    (rule,) = lg.user_items(text, 2, list(remembered(un.read(text))))
    assert rule.cls == "constraint"
    old = _item("Tag every release with its ticket number.")
    said = "Don't forget: tag every release with its ticket number and the date."
    (kept,) = lg.revise(lg.Ledger(items=(old,)), old.id, 9, said).items
    assert kept.revised == said


def test_a_replacement_revises_the_rule_it_shares_a_little_with() -> None:
    rule = _item("Indent the YAML files with two spaces.")
    ledger = lg.Ledger(items=(rule,))
    said = "Indent them with tabs instead."
    assert lg.revisions(ledger, un.read(said).sentences) == [(rule.id, said)]
    for other in ("Actually, put the YAML checks in the nightly job.", "Tabs are nice."):
        assert lg.revisions(ledger, un.read(other).sentences) == [], other


def test_a_rejected_phrase_revises_a_rule_by_its_own_word_not_a_shared_noun() -> None:
    assert _revises("Hash passwords with bcrypt.", "Hash them with scrypt, not bcrypt.")
    assert _revises("Price the seats at $48.", "Seats at $42, not $48.")
    # "invoices" is the rule's noun too, but the sentence rejects "draft", not the rule.
    rule = "Send the monthly invoices on the first working day."
    assert not _revises(rule, "Count the cancelled ones as void, not as draft invoices.")


def test_a_revision_stated_in_the_former_words_with_its_new_value_is_kept() -> None:
    item = _item("Keep the request timeout at 30 seconds.")
    said = "And bump it to 45, 30 keeps failing the big exports."
    (current,) = lg.revise(lg.Ledger(items=(item,)), item.id, 9, said).items
    assert check(current, read_summary("- Request timeout: 45 seconds.")).verdict == "supported"
    assert check(current, read_summary("- Retries: 3.")).verdict == "absent"


def test_an_open_question_the_summary_marks_open_is_kept() -> None:
    text = "Should failed webhook deliveries be retried with backoff or dropped after one try?"
    item = _question(text, speaker="assistant")
    for kept in (
        "- Webhook retry policy: waiting on the platform team.",
        "- Retry policy for webhooks is still open.",
    ):
        assert check(item, read_summary(kept)).verdict == "supported", kept
    assert check(item, read_summary("- Deploys on Tuesdays.")).verdict == "absent"


def test_a_value_set_anew_revises_the_rule_whatever_its_bound() -> None:
    rule = _item("Cap every upload at 8 MB.")
    ledger = lg.Ledger(items=(rule,))
    for reset in ("Make the upload limit 3 MB.", "And lower the upload cap to 3 MB."):
        assert lg.revisions(ledger, un.read(reset).sentences) == [(rule.id, reset)], reset
    assert lg.revisions(ledger, un.read("The upload was 3 MB.").sentences) == []


def test_an_announced_change_sets_a_bare_share_anew() -> None:
    rule = _item("Fail the import when more than 3% of the lines are malformed.")
    ledger = lg.Ledger(items=(rule,))
    raised = "Raise the failure threshold to 8%."
    assert lg.revisions(ledger, un.read(raised).sentences) == [(rule.id, raised)]
    assert lg.revisions(ledger, un.read("The import took 8 minutes.").sentences) == []
    assert lg.revisions(ledger, un.read("Raise the failure threshold to $8.").sentences) == []


@pytest.mark.parametrize(
    ("span", "binds"),
    [
        ("Cap the thumbnail at 200 KB.", True),  # told
        ("Retention window: 30 days.", True),  # labelled
        ("Seat price is $49.", True),  # a setting's value
        ("The test suite takes 9 minutes.", False),  # a description
        ("Go ahead and tag it as rev 3.", False),  # a number that names
        ("Run batch 2 next.", False),  # last after its noun, it names
        ("Retry failed jobs 3 times.", True),
        ("Three things.", False),
        ("Fix the flaky test please.", False),  # asked once, politely
        ("Please always sign the commits.", True),
        ("Make sure the fixtures stay anonymised.", True),
        ("Venue budget £4,500 all in.", True),  # noted without a verb, as a brief does
        ("Rounding to 2 decimals on every invoice line.", True),
        ("Around 25 guests at the dinner yesterday.", False),  # what happened
        ("4 more questions.", False),  # what comes
        ("Shipped 3 fixes to staging.", False),  # a report without its subject
        ("Part 3 reads a little flat.", False),  # a verb before what it takes: a remark
        ("2 reviewers matches what the policy expects.", False),
        ("Limit: 100 requests per minute.", True),  # a plural noun, not a verb
        ("Our budget is €8,000 all in.", True),  # the brief's terms in the user's voice
        ("The word limit is 800 words.", True),
        ("Our budget was €8,000 last year.", False),  # what was
        ("Our ticket is 4512.", False),  # a number that names
    ],
)
def test_a_quantity_set_for_the_work_binds(span: str, binds: bool) -> None:
    assert lg.binds(un.unit(span)) is binds


def test_an_open_question_reported_decided_in_another_clause_is_inverted() -> None:
    q = lg.Item(
        "q",
        "open_question",
        3,
        "user",
        "Should the sync run hourly or daily?",
        un.unit("Should the sync run hourly or daily?"),
    )
    decided = read_summary("- The sync runs hourly - settled with the ops lead on Tuesday.")
    assert (check(q, decided).verdict, check(q, decided).reason) == ("contradicted", "settled")


def test_a_summary_label_is_read_with_what_it_labels() -> None:
    summary = read_summary("## Rules\n- Thumbnails: capped at 200 KB.\n- Seat price: $49.")
    assert [u.text for u in summary.units][-2:] == [
        "Thumbnails: capped at 200 KB.",
        "Seat price: $49.",
    ]
    rule = _item("Keep thumbnails under 120 KB.")
    assert check(rule, summary).verdict != "supported"


def test_a_revocation_takes_the_item_out() -> None:
    item = _item("Keep the abstract under 250 words.")
    gone = lg.revise(lg.Ledger(items=(item,)), item.id, 7, "forget the word limit")
    assert gone.items == ()


def test_references_are_checked_by_name_and_version() -> None:
    ref = lg.Item("r", "reference", 1, "user", "report.md rev 14", un.unit("report.md rev 14"))
    assert check(ref, read_summary("Working from report.md rev 14.")).verdict == "verbatim"
    assert check(ref, read_summary("The draft is report.md rev 12.")).verdict == "contradicted"
    assert check(ref, read_summary("Nothing about it.")).verdict == "absent"


def test_a_reference_is_kept_by_being_named_whatever_is_said_of_it() -> None:
    ref = lg.Item("r", "reference", 1, "user", "jobs/load.py", un.unit("jobs/load.py"))
    assert check(ref, read_summary("- No edits to `jobs/load.py` today.")).verdict == "verbatim"
    assert check(ref, read_summary("- Never run jobs/load.py by hand.")).verdict == "verbatim"


def test_a_path_named_as_its_file_beside_its_folder_is_kept() -> None:
    path = "internal/auth/token.go"
    ref = lg.Item("r", "reference", 1, "user", path, un.unit(path))
    kept = read_summary("- New package internal/auth (token.go + token_test.go), tested.")
    assert check(ref, kept).verdict == "supported"
    # the file under another folder, or the folder without the file, is not the path
    assert check(ref, read_summary("- Edited internal/api (token.py).")).verdict == "absent"
    assert check(ref, read_summary("- cmd/token.go built; internal/auth untouched.")).verdict == (
        "absent"
    )


def test_names_of_standards_are_not_tickets_and_ids_are_read_whole() -> None:
    text = "Write the export as UTF-8 with ISO-8601 dates, sign it with SHA-256. See OPS-71."
    assert lg.references(text, "user") == ["OPS-71"]
    assert lg.references("Patch CVE-2024-3094 before the release.", "user") == ["CVE-2024-3094"]


def test_references_are_names_not_word_pairs_or_tails() -> None:
    said = "Copy it to gs://team-bucket/exports/weekly/ and keep the old/new split; use the v2 API."
    assert lg.references(said, "user") == ["gs://team-bucket/exports/weekly/"]
    assert lg.references("Grades are pass/fail, dates are UTC/local, 40/hour.", "user") == []
    assert lg.references("Work on ops/q3-cleanup and data/interim/.", "user") == [
        "ops/q3-cleanup",
        "data/interim/",
    ]


def test_the_agent_names_what_it_made_not_what_it_read() -> None:
    said = (
        "Read src/loader.py and the scan of CVE-2021-1 at http://127.0.0.1:8080. Saved the notes "
        "as `notes/review_v2.md`, committed on branch ops/loader-fix and opened draft PR #77 "
        "for TIX-12."
    )
    assert lg.references(said, "assistant") == [
        "PR #77",
        "ops/loader-fix",
        "notes/review_v2.md",
    ]


def _binds(text: str) -> bool:
    """Whether a user message read alone leaves a constraint in the ledger."""
    from monitor.detect.restatements import remembered

    got = lg.user_items(text, 0, list(remembered(un.read(text))))
    return any(i.cls == "constraint" for i in got)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Start every changelog entry with the ticket number.", True),
        ("Dates in ISO format throughout.", True),
        ("Wrap each SQL keyword in upper case.", True),
        ("Every test passed on the first run.", False),
        # A change to a rule the ledger does not hold is no rule of its own ...
        ("Make it 6 weeks, with a week's grace on request.", False),
        ("Actually, signed builds only for the beta channel.", False),
        ("Bump the retry budget to 8.", False),
        # ... unless it forbids, says it is standing, or gives a first value.
        ("Actually, never ship the debug symbols.", True),
        ("From now on, always tag the release commit.", True),
        ("Set the retry budget to 8 and keep the logs verbose.", True),
    ],
)
def test_what_binds_a_rule_over_every_instance_and_a_change_to_one_not_held(
    text: str, rule: bool
) -> None:
    assert _binds(text) is rule


def test_what_the_agent_made_becomes_an_item() -> None:
    said = "Exported `out/q4/totals.csv`, and I opened it as draft PR #314 for review."
    got = [(i.cls, i.literal) for i in lg.assistant_items(said, 3)]
    assert ("reference", "PR #314") in got
    assert ("reference", "out/q4/totals.csv") in got


@pytest.mark.parametrize(
    "text",
    [
        "Keep it under v4 until the freeze.",
        "The spec is now v2 for everyone.",
        "Pinned 3.1.4. v5 breaks the loader.",
        "Thanks, Priya. Rev 6 goes out today.",
        "Hold the API until v3 ships.",
    ],
)
def test_a_version_after_a_function_word_or_a_full_stop_names_nothing(text: str) -> None:
    assert lg.references(text, "user") == []


def test_the_ledger_reads_rules_promises_and_names() -> None:
    from monitor.detect.restatements import remembered

    text = "Ground rules: never push to main. Open the PR now. Ticket is PAY-2231."
    got = list(lg.user_items(text, 0, list(remembered(un.read(text)))))
    assert [(i.cls, i.literal) for i in got] == [
        ("constraint", "never push to main."),
        ("reference", "PAY-2231"),
    ]
    said = list(
        lg.assistant_items("I'll open the PR against develop, not main. Reading the file.", 1)
    )
    assert [i.cls for i in said] == ["commitment"]
    assert lg.promises("I won't touch the lockfile until you confirm.")
    assert not lg.promises("I'll now read the parser.")


@pytest.mark.parametrize(
    ("sentence", "promise"),
    [
        ("For every table, I'll keep a backup until you sign off.", "I'll keep a backup until"),
        ("That costs $40, so I won't start it until you approve.", "I won't start it until"),
        ("Tests pass; then I'll rebase onto develop before merging.", "I'll rebase onto develop"),
        ("Then I'll run the tests.", None),  # the next step, narrated
        ("For now I'll read the parser.", None),
    ],
)
def test_a_promise_is_read_where_it_opens_in_a_sentence(sentence: str, promise: str | None) -> None:
    got = lg.promised(sentence)
    assert (got is None) if promise is None else (got is not None and got.startswith(promise))


def test_a_deferred_question_stays_open_and_an_answered_one_goes() -> None:
    asked = lg.questions("Should the retry limit be 3 or 5?", 4, "assistant")
    assert asked
    pending = lg.Ledger(asked=tuple(asked))
    assert lg.answered(pending, "Not sure yet, I'll ask Priya.").items == tuple(asked)
    assert lg.answered(pending, "Use 3.").items == ()
    assert lg.answered(pending, "Use 3 for now, we can raise it later.").items == ()


def test_the_user_decides_their_own_question_and_facts_are_settled_by_the_answer() -> None:
    asked = lg.questions("Should we move the archive bucket to cold storage?", 2, "user")
    advice = "Cold storage would save about 60% but adds a 12-hour restore delay."
    waiting = lg.answered(lg.Ledger(asked=tuple(asked)), advice, "assistant")
    assert waiting.asked == tuple(asked) and waiting.items == ()
    assert lg.answered(waiting, "Let me check with the finance team first.").items == tuple(asked)
    assert lg.answered(waiting, "Yes, move it.").items == ()
    facts = lg.questions("How long does the nightly export take?", 2, "user")
    assert lg.answered(lg.Ledger(asked=tuple(facts)), "About 14 minutes.", "assistant") == (
        lg.Ledger()
    )


def test_the_ledger_is_capped() -> None:
    items = [_item(f"Never touch file{i}.py.") for i in range(lg.MAX_ITEMS + 10)]
    assert len(lg.add(lg.Ledger(), items).items) == lg.MAX_ITEMS


def test_a_line_keeping_what_a_revision_rejected_is_stale() -> None:
    item = _item("Seat price is $48.")
    ledger = lg.revise(lg.Ledger(items=(item,)), item.id, 7, "Sales confirmed $42, not $48.")
    (current,) = ledger.items
    line = (
        '- Email 2 (June 3): opening story about the Lisbon meetup, "two days of hands-on '
        'labs with the core team", price $48, button "Save my seat".'
    )
    got = check(current, read_summary(line))
    assert (got.verdict, got.reason) == ("contradicted", "stale")
    kept = check(current, read_summary(line.replace("$48", "$42 (was $48)")))
    assert kept.verdict != "contradicted"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        # what someone does not know or has not decided is a fact about them ...
        ("Legal hasn't decided yet.", False),
        ("The reviewers don't know the acronym.", False),
        ("The client doesn't care about the footer colour.", False),
        # ... while a rule told, forbidden or owed stays one
        ("Don't decide on the colour without me.", True),
        ("Refunds don't stack with vouchers.", True),
        ("You must not assume the reviewers know the acronym.", True),
    ],
)
def test_a_negated_statement_of_someones_mind_binds_nothing(text: str, rule: bool) -> None:
    assert _binds(text) is rule
