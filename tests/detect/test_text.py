"""Sentence splitting, tokens, polarity and sentence kinds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.detect import text as tx


def test_sentences_split_on_stops_and_semicolons_not_on_abbreviations_or_dotted_names() -> None:
    got = tx.sentences("List Dr. Okafor as author. Keep board/pins.h as is; no edits! Done?")
    assert got == ["List Dr. Okafor as author.", "Keep board/pins.h as is", "no edits!", "Done?"]


def test_clauses_split_a_contrastive_tail_but_keep_a_leading_frame() -> None:
    assert tx.clauses("Logging goes through the macros, no bare printf") == [
        "Logging goes through the macros",
        "no bare printf",
    ]
    assert tx.clauses("For the newsletter, never mention prices") == [
        "For the newsletter, never mention prices"
    ]


def test_clauses_split_a_second_clause_with_its_own_subject() -> None:
    assert tx.clauses("Stay on fix/token-refresh, I'll merge it myself.") == [
        "Stay on fix/token-refresh",
        "I'll merge it myself.",
    ]
    assert tx.clauses("Keep it short, clear and friendly") == ["Keep it short, clear and friendly"]


def test_fast_paths_agree_with_the_plain_regexes() -> None:
    text = "Dr. Okafor can't sign, it's 1,250 pages.\nWe'd rather NOT wait!! e.g. now"
    norm = tx.normalise(text)
    assert norm == tx._THOUSANDS.sub(r"\1", text) and "1250" in norm
    assert tx._expand_contractions(norm) == tx._CONTRACTION.sub(tx._expand, norm)
    assert tx._protect_abbreviations(norm) == tx._ABBREVIATIONS.sub(
        lambda m: m.group(0).replace(".", "\x00"), norm
    )
    assert tx._split_sentences(norm) == tx._SENTENCE_END.split(norm)
    assert tx.emphatic(text)


@given(st.text(alphabet="aZ .!?'\n`,;-1İ\u2019", max_size=60))
def test_fast_paths_agree_on_any_text(text: str) -> None:
    assert tx._expand_contractions(text) == tx._CONTRACTION.sub(tx._expand, text)
    assert tx._protect_abbreviations(text) == tx._ABBREVIATIONS.sub(
        lambda m: m.group(0).replace(".", "\x00"), text
    )
    assert tx._split_sentences(text) == tx._SENTENCE_END.split(text)
    assert tx.emphatic(text) == (
        tx._EMPHASIS.search(text) is not None
        or any(
            w.lower() in tx.STOPWORDS
            or w.lower() in ("not", "no", "never", "stop", "again", "why")
            or w.lower() in tx._CLAUSE_NEGATORS
            for w in __import__("re").findall(r"\b[A-Z]{2,}\b", text)
        )
    )


def test_tokens_normalise_numbers_units_code_and_spelled_numbers() -> None:
    stems = {t.stem: t.weight for t in tx.tokens("Keep it under 4,000 chars in `src/app.py`")}
    assert stems["4000"] == tx.VALUE
    assert stems["src/app.py"] == tx.VALUE
    assert "char" in stems
    assert "twenty" not in {t.stem for t in tx.tokens("no more than twenty workers")}
    assert "150" in {t.stem for t in tx.tokens("below a hundred and fifty megs")}
    assert [t.stem for t in tx.tokens("240KB")] == ["240", "kb"]


def test_tokens_drop_stopwords_and_mark_generic_verbs() -> None:
    toks = {t.stem: t.weight for t in tx.tokens("Please keep the parser in the repo")}
    assert toks == {"keep": tx.GENERIC, "parser": tx.PLAIN, "repo": tx.PLAIN}


def test_lexicon_maps_synonyms_to_one_concept() -> None:
    def stems(text: str) -> list[str]:
        return [t.stem for t in tx.tokens(text)]

    assert stems("the repository directory") == stems("the repo folder") == ["repo", "dir"]
    assert stems("megs") == stems("MB") and stems("in the morning") == stems("at 9 am")[1:]
    assert {t.weight for t in tx.tokens("stay remain retain")} == {tx.GENERIC}
    assert stems("`settings`") == ["setting"]  # code is not reworded (only stemmed)
    assert stems("approve the go-ahead") == ["approv", "approv"]


def test_filler_nouns_are_dropped_but_names_kept() -> None:
    assert [t.stem for t in tx.tokens("docs like the rest")] == ["doc"]
    assert "rest" in {t.stem for t in tx.tokens("use REST for the API")}
    assert tx.tokens("she am") == [] and [t.stem for t in tx.tokens("11am")] == ["11", "am"]


def _tokens_reference(raw: list[str]) -> list[tx.Token]:
    """The per-piece loop ``_tokens`` replaces with one memo look-up per raw token."""
    first_alpha = next((i for i, w in enumerate(raw) if w[:1].isalpha()), 0)
    out: list[tx.Token] = []
    spelled = False
    for i, w in enumerate(raw):
        for low, _other, _first, tok_other, tok_first in tx._pieces(w):
            if low in tx._NUMBER_WORDS:
                spelled = True
            tok = tok_first if i == first_alpha else tok_other
            if tok is not None:
                out.append(tok)
            elif low in tx._TIME_OF_DAY and i and raw[i - 1][-1:].isdigit():
                out.append(tx._TIME_OF_DAY[low])
    return tx._spelled_tokens(raw, first_alpha) if spelled else out


@given(
    st.lists(
        st.sampled_from(
            [
                "Keep",
                "the",
                "11",
                "am",
                "pm",
                "one",
                "hundred",
                "`a-b`",
                "go-ahead",
                "Docs",
                "rest",
                "REST",
                "am-pm",
                "4KB",
                "folder",
                "x/y",
                "!",
                "Saturday",
                "twenty",
            ]
        ),
        max_size=12,
    )
)
def test_tokens_fast_path_agrees_with_the_per_piece_loop(raw: list[str]) -> None:
    assert tx._tokens(raw) == _tokens_reference(raw)


def test_stem_is_consistent_across_inflections() -> None:
    assert tx.stem("partitions") == tx.stem("partition")
    assert tx.stem("stopped") == tx.stem("stop")
    assert tx.stem("caches").startswith(tx.stem("cache")[:4])


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        ("Don't push to main", 1),
        ("Do not push to main", 1),
        ("Never push to main", 1),
        ("Push to main", 0),
        ("Keep the page hidden from search engines", 1),
        ("Stop hiding the page from search engines", 0),
        ("Use SwiftUI for new screens, not UIKit", 0),
        ("The build should not download anything", 1),
        ("Still no square footage", 1),
        ("Leave the save format alone", 1),
        ("The abstract can't go past 250 words", 0),
        ("No more than twenty workers", 0),
        ("Don't use more than 3 threads", 0),
        ("Never push more than once a day", 1),
        ("Keep the farm clear from 8 to 11", 1),
        ("Keep the code clear and simple", 0),
    ],
)
def test_polarity(sentence: str, negated: int) -> None:
    assert tx.polarity(sentence) == negated


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Use port 8080 for the dev server.", "instruction"),
        ("Don't touch the lockfile.", "instruction"),
        ("dev board only", "instruction"),
        ("Can you add a retry on timeout?", "instruction"),
        ("The recommendation belongs in the first paragraph.", "instruction"),
        ("Is the cache warm yet?", "question"),
        ("what did the diff show for sshd", "question"),
        ("Does the driver work on Linux", "question"),
        ("ok cool, the back label works", "ack"),
        ("Thanks!", "ack"),
        ("Great, got the report, reading it now.", "ack"),
        ("The nightly job spent 70% of its time in GC.", "status"),
        ("Looks like the queue grows under load.", "status"),
        ("FYI late events are about 2% of the stream.", "status"),
        ("Opposing counsel filed their reply yesterday.", "status"),
        ("As I said, lab inventory only.", "instruction"),
        ("Can you explain why the test failed?", "question"),
        ("Could you tell me what the retry helper does", "question"),
        ("Can you keep every function under 40 lines?", "instruction"),
    ],
)
def test_kind(sentence: str, kind: str) -> None:
    assert tx.kind(sentence) == kind
    assert tx.analyse(sentence).kind == kind


def test_reminder_and_update_cues() -> None:
    assert tx.reminder_cues("As I mentioned, keep it short") == (True, False)
    assert tx.reminder_cues("I told you this already") == (True, False)
    assert tx.reminder_cues("We still need tests") == (False, True)
    assert tx.reminder_cues("Keep it short") == (False, False)
    assert tx.has_update_cue("Use 9090 instead")
    assert tx.has_update_cue("Actually, switch to Postgres 16")
    assert not tx.has_update_cue("Use Postgres 16")


def test_emphasis() -> None:
    assert tx.emphatic("NOT the customer unit")
    assert tx.emphatic("where is it??")
    assert not tx.emphatic("Use the XS warehouse in AWS")


@given(st.text())
def test_text_functions_accept_any_unicode(text: str) -> None:
    for sentence in tx.sentences(text):
        assert sentence.strip() == sentence
        a = tx.analyse(sentence)
        assert a.kind in ("instruction", "question", "ack", "status", "empty")
        assert a.polarity in (0, 1)
    tx.tokens(text)
    tx.reminder_cues(text)
    tx.emphatic(text)


# --- pasted machine output ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "    at loadTheme (/home/u/app/src/theme.ts:393:9)",
        "\tat com.acme.Billing.run(Billing.java:88)",
        '  File "/srv/app/jobs.py", line 12, in run',
        "Traceback (most recent call last):",
        "2024-03-01 12:00:03,551 INFO worker started",
        "[vite] hmr update /src/App.tsx",
        "TypeError: Cannot read properties of undefined (reading 'map')",
        "\u279c  shop git:(main) \u2717 npm test",
        "$ cargo build --release",
        "dev@box:~/shop$ make",
        "+ 9 - **Fixed**: the parser",
        "@@ -12,7 +12,9 @@",
        "throw new Error(`not found: ${key}`);",
        "const total = items.reduce((a, b) => a + b, 0)",
        "\u2500\u2500\u2500\u2500\u2500\u2500",
        "\u2807 Working... (esc to interrupt)",
        "Node.js v23.4.0",
        "/Users/u/app/src/theme.ts:213",
        "\u2191880 \u219368k R29394k W3499k 22.966 73.5%",
        "^",
    ],
)
def test_output_lines_are_recognised_by_shape(line: str) -> None:
    assert tx.output_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "Keep board/pins.h as is; no edits!",
        "Keep timestamps in mm:ss.",
        "again, under 4000 chars for episode descriptions",
        "at 10:30 run the backup, not before",
        "Don't edit Assets/Scenes/Overworld.unity directly; use prefabs.",
        "1. Run `npx create-next-app@latest todo --typescript --eslint`",
        "Error handling goes through the `Result` type, no exceptions.",
        "[ ] keep the tests green",
        "Waiting for review is fine, just don't merge.",
        "No force unwrapping in the Swift code.",
    ],
)
def test_typed_lines_are_not_output(line: str) -> None:
    assert not tx.output_line(line)


def test_prose_drops_pasted_blocks_with_their_captions_and_trailing_lines() -> None:
    text = (
        "it crashed again, invalid themes must never crash the app\n"
        "\n"
        "vs code terminal:\n"
        "\u279c  app git:(main) \u2717 npx tsx src/cli.ts -r\n"
        "Debugger attached.\n"
        "Error: Invalid hex color: #000cc\n"
        "    at hexToRgb (/Users/u/app/src/theme.ts:148:9)\n"
        "    at main (/Users/u/app/src/main.ts:570:2)\n"
        "Waiting for the debugger to disconnect...\n"
        "truecolor\n"
        "\n"
        "```\n"
        "make all the things\n"
        "```\n"
        "please fall back to the dark theme instead"
    )
    assert tx.prose(text).split("\n") == [
        "it crashed again, invalid themes must never crash the app",
        "",
        "",
        "please fall back to the dark theme instead",
    ]


def test_prose_keeps_an_instruction_set_off_from_a_paste() -> None:
    text = "at f (/a/b.ts:1:2)\nat g (/a/b.ts:3:4)\n\nWaiting for the build to finish is fine."
    assert tx.prose(text) == "\nWaiting for the build to finish is fine."
    assert tx.sentences(tx.prose(text)) == ["Waiting for the build to finish is fine."]


_PROSE_WORDS = st.sampled_from(
    ("keep", "the", "parser", "under", "forty", "lines", "please", "never", "push", "to")
)
_PROSE_LINE = st.lists(_PROSE_WORDS, min_size=4, max_size=12).map(" ".join)


@given(st.lists(_PROSE_LINE, min_size=1, max_size=6))
def test_prose_leaves_typed_paragraphs_alone(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert tx.prose(text) == text


@given(st.text())
def test_prose_keeps_a_subsequence_of_lines_and_is_idempotent(text: str) -> None:
    got = tx.prose(text)
    kept = got.splitlines()
    source = iter(text.splitlines())
    assert all(any(line == s for s in source) for line in kept)  # in order, none invented
    assert tx.prose(got) == got
