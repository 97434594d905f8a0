"""One normal form for the many ways people type the same words."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.lang import normalise as nz
from monitor.detect.lang.normalise import is_value, key, normalise, stem, value, words


def test_contractions_expand_with_or_without_the_apostrophe() -> None:
    assert words("Don't push, it's broken") == ("do", "not", "push", "it", "is", "broken")
    assert words("dont push, cant wait, wont do") == (
        "do",
        "not",
        "push",
        "can",
        "not",
        "wait",
        "will",
        "not",
        "do",
    )
    assert words("we\u2019d rather not") == ("we", "would", "rather", "not")


@given(st.integers(1, 12), st.sampled_from(["", ":05", ":30"]), st.sampled_from("apAP"))
def test_a_12_hour_time_reads_the_same_written_apart_or_together(
    hour: int, minutes: str, half: str
) -> None:
    together = f"send it at {hour}{minutes}{half}m"
    for apart in (f"send it at {hour}{minutes} {half}m", f"send it at {hour}{minutes} {half}.m."):
        assert words(apart) == words(together), apart
    h24 = hour % 12 + (12 if half in "pP" else 0)
    assert value(f"{hour}{minutes}{half}m") == f"{h24}:{minutes[1:] or '00'}"
    for stop in (f"{half}m.", f"{half}.m."):  # a stop after the time still ends the sentence
        joined = normalise(f"Send it at {hour}{minutes} {stop} Then stop.")
        assert joined.startswith(f"Send it at {hour}{minutes}{half.lower()}m. Then"), joined


@given(st.sampled_from(["we", "you", "they", "it", "I"]), st.text(max_size=3))
def test_a_contraction_letter_any_case_blind_match_finds_expands(subject: str, tail: str) -> None:
    for letter in ("s", "S", "\u017f", "\u212a"):  # the long s and the Kelvin sign fold to ASCII
        nz.expand_contractions(f"{subject}'{letter}{tail}")


def test_values_have_one_spelling() -> None:
    assert [value(w) for w in ("10k", "02:30", "$20", "3.50", "1.5k", "25MB")] == [
        "10000",
        "2:30",
        "20",
        "3.5",
        "1500",
        "25",
    ]
    assert "2500" in words("cap it at 2,500 rows")
    assert "90%" in words("keep coverage above 90 percent")


@given(st.integers(min_value=1, max_value=12), st.sampled_from(["am", "pm"]))
def test_a_twelve_hour_time_is_its_twenty_four_hour_one(hour: int, half: str) -> None:
    h24 = hour % 12 + (12 if half == "pm" else 0)
    assert value(f"{hour}{half}") == value(f"{h24:02d}:00") == value(f"{hour}:00{half}")


def test_urls_code_and_word_pairs_are_read_as_written() -> None:
    assert "s3://logs-eu/raw/" in words("ship them to s3://logs-eu/raw/; not elsewhere")
    assert words("set `retries=3` for pass/fail jobs") == (
        "set",
        "`retries`",
        "`3`",
        "for",
        "pass",
        "fail",
        "jobs",
    )
    assert "src/app" in words("edit src/app/ only") and "db/seed.sql" in words("run db/seed.sql")


def test_a_scale_in_words_and_a_bare_decimal_read_as_their_numbers() -> None:
    assert value("3M") in [value(w) for w in words("a budget of 3 million")]
    assert value("1.5k") in [value(w) for w in words("up to 1.5 thousand rows")]
    assert "0.25" in words("round to the nearest .25") and "0.25" in words("round to 0.25")
    assert "5" in words("the end.5 rows")  # a full stop between words is no decimal point


def test_a_hyphenated_word_inflects_as_the_word_written_as_one() -> None:
    assert stem("e-mails").replace("-", "") == stem("emails")
    assert stem("re-running").replace("-", "") == stem("rerunning") == stem("rerun")
    assert stem("state-of-the-art") == "state-of-the-art"


def test_a_numbered_abbreviation_is_no_negation() -> None:
    assert "no" not in words("bump the version no. each round, see item No. 5")
    assert "no" in words("answer no")


def test_spelling_variants_and_inflections_meet() -> None:
    assert stem("colours") == stem("colors")
    assert stem("organising") == stem("organizing")
    assert stem("removing") == stem("remove") == stem("removed")
    assert stem("runs") == stem("running") == stem("run") and stem("jobs") == stem("job")
    assert stem("news") != stem("new") and stem("less") == "less"
    assert key("kept") == key("keep") == key("stays")
    assert key("db") == key("database") == key("databases")
    assert key("folders") == key("directory")
    assert key("chars") == key("characters") and key("params") == key("parameter")


def test_values_are_told_from_words() -> None:
    assert is_value("src/app.py") and is_value("v2.3") and is_value("`make`")
    assert not is_value("parser")
    assert words("use #TidepoolTuesday for @alice") == ("use", "#tidepooltuesday", "for", "@alice")


@given(st.text(max_size=200))
def test_any_text_reads_without_error(text: str) -> None:
    got = words(text)
    assert all(w == w.lower() and w for w in got)
    assert normalise(normalise(text)) == normalise(text)


@given(st.integers(min_value=21, max_value=999).filter(lambda n: n % 10 and n % 100 > 20))
def test_a_number_spelled_in_words_is_read_as_its_digits(n: int) -> None:
    small = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    tens = {
        2: "twenty",
        3: "thirty",
        4: "forty",
        5: "fifty",
        6: "sixty",
        7: "seventy",
        8: "eighty",
        9: "ninety",
    }
    spelled = f"{tens[n % 100 // 10]}-{small[n % 10]}"
    if n >= 100:
        spelled = f"{small[n // 100]} hundred and {spelled}"
    assert normalise(f"keep it under {spelled} words") == f"keep it under {n} words"


def test_number_words_that_make_no_one_number_stay_words() -> None:
    for text in (
        "one or two",
        "two and three",
        "one two three",
        "a one-off job",
        "the twenty-first",
    ):
        assert normalise(text) == text
    assert normalise("a seven-day lookback") == "a 7 day lookback"


#: Pieces of text that the word readers treat apart: marks, digits, spaces of several kinds.
_PIECES = st.sampled_from(
    [
        *("don't", "it's", "Bob's", "dont", "e-mail", "10k", "2:30", "$20", ".5", "a.5", "#tag"),
        *("@x", "dev/test", "`x y`", "www.x.io", " ", "\t", "\u2003", "\x1c", "\u00a0", "\n"),
        *(",", ".", "src/a.py", "https://x.io/a?b=1).", "C:\\d\\f.txt", "s3://b/x/", "/"),
        *("x`y z`w", "`a/b.py`", "`", "10ms`x`"),
    ]
)
#: The bare-decimal pattern as first written, with its look-behind first.
_BARE_DECIMAL_FIRST = re.compile(r"(?<![\w.])\.(?=\d)")


@given(st.lists(_PIECES | st.text(max_size=4), max_size=12).map(" ".join))
def test_words_are_read_alike_by_chunk_and_over_the_whole_text(text: str) -> None:
    """The readings that skip work (a text without slashes read by the plain pattern, one
    without code chunk by chunk, paths and URLs too, one without a URL around its code, the
    bare decimal found from its stop) read what the whole pattern reads over the whole text."""
    body = nz.expand_contractions(nz.normalise(text))
    whole: list[str] = []
    for m in nz._WORD.finditer(body):
        w = m.group(0)
        if nz._WORD_PAIR.match(w) and not body.startswith("/", m.end()):
            whole.extend(w.split("/"))
        else:
            whole.extend(nz._forms(w))
    assert nz.raw_words(text) == tuple(whole)
    if "`" not in body:
        assert tuple(itertools.chain.from_iterable(map(nz._chunk_words, body.split()))) == tuple(
            whole
        )
    if "://" not in body and "www." not in body:
        assert nz._around_code(body) == tuple(whole)
    assert nz._BARE_DECIMAL.sub("0.", text) == _BARE_DECIMAL_FIRST.sub("0.", text)


@given(st.text(alphabet=" aApPmM.:6x\u0130\u212a\u017f", max_size=16))
def test_the_clock_marks_are_found_lower_cased_in_any_case(text: str) -> None:
    """A time written apart is looked for in the lower case: it holds a mark exactly when the
    text holds one of its spellings in any case."""
    spellings = [f" {h}{d}{m}" for h in "aApP" for d in ("", ".") for m in "mM"]
    found = any(lit in text.lower() for lit in nz._CLOCK_MARKS)
    assert found == any(s in text for s in spellings)


@given(st.text(alphabet="0123456789abcdef", min_size=3, max_size=3))
def test_a_three_digit_hex_colour_is_its_six_digit_form(short: str) -> None:
    assert value(f"#{short}") == "#" + "".join(c * 2 for c in short)
    assert value(f"#{short.upper()}") == value("#" + "".join(c * 2 for c in short).upper())


def test_a_command_line_option_is_one_value() -> None:
    assert words("always pass --dry-run and --mem") == (
        "always",
        "pass",
        "--dry-run",
        "and",
        "--mem",
    )
    assert is_value("--dry-run")
    # A dash between words or before a space is no option.
    assert words("well -- maybe not-now") == ("well", "maybe", "not-now")


@given(st.integers(min_value=1, max_value=240), st.sampled_from(["min", "mins", " min", " mins"]))
def test_minutes_written_short_read_as_minutes(n: int, short: str) -> None:
    assert normalise(f"under {n}{short} to finish") == f"under {n} minutes to finish"
    # "min" before a number is a minimum.
    assert normalise(f"min {n} rows") == f"min {n} rows"


@given(st.sampled_from(sorted(nz.SLIPS)), st.sampled_from(["", ",", "!", "?"]))
def test_a_cue_word_or_verb_typed_with_a_slip_is_mended(slip: str, after: str) -> None:
    right = nz.SLIPS[slip]
    assert nz.slips_mended(f"like I {slip}{after} keep it short") == (
        f"like I {right}{after} keep it short"
    )
    assert nz.slips_mended(slip.capitalize()) == right.capitalize()


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_a_text_without_a_slip_is_left_as_it_is(text: str) -> None:
    if not any(w.lower() in nz.SLIPS for w in re.findall(r"[^\W\d_]+", text)):
        assert nz.slips_mended(text) == text


def test_a_slip_is_one_edit_and_never_a_cue_word_a_verb_or_a_listed_word() -> None:
    from rapidfuzz.distance import OSA

    from monitor.detect.lang import lexicon as lx

    for slip, right in nz.SLIPS.items():
        assert OSA.distance(slip, right) == 1
        assert slip not in lx.CUE_WORDS and slip not in lx.SLIPS_THAT_ARE_WORDS
        assert slip not in lx.VERBS
