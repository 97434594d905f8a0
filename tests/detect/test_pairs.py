"""Pair features and the opposite-instruction gate."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from monitor.detect import pairs
from monitor.detect.lang.units import read, unit
from monitor.detect.pairs import FEATURES, N_FEATURES, changes_value, features, opposite, thin

#: Instructions written for these tests (imperatives of ordinary work in several domains).
INSTRUCTIONS = [
    "Include the beta customers in the announcement email",
    "Push the release branch to origin",
    "Attach the signed invoice to every expense report",
    "Use British spelling in the newsletter",
    "Run the migration on the staging database first",
    "Cite the original study in the footnotes",
    "Enable two-factor login for the admin accounts",
    "Keep the legend below the chart",
    "Merge the two survey tabs into one sheet",
    "Round prices to the nearest euro",
]


def _x(e: str, later: str) -> dict[str, float]:
    m = read(later)
    return dict(zip(FEATURES, features(unit(e), m.units[0], m.cues, m.kinds[0]), strict=True))


def test_a_vector_has_every_feature() -> None:
    m = read("Keep the brief under 25 pages.")
    assert len(features(unit("Keep the brief short"), m.units[0], m.cues, 0)) == N_FEATURES


def test_the_same_words_cover_each_other() -> None:
    x = _x("Keep the brief under 25 pages", "keep the brief under 25 pages")
    assert x["cov_e"] == x["cov_l"] == 1.0 and x["pol_differs"] == 0


def test_a_name_inside_a_path_or_a_compound_is_matched() -> None:
    x = _x("never write to raw-events", "Jobs never write to gs://raw-events/daily/ at all.")
    assert x["cov_e"] > 0.9
    assert _x("keep the owner review", "owner-review stays on")["cov_e"] > 0.4
    assert _x("owner-review stays on", "keep the owner review on")["cov_e"] > 0.4


def test_slips_of_the_keyboard_and_hyphens_are_the_same_words() -> None:
    for later in (
        "attach the signed invocie to every expense report",  # two letters swapped
        "attach the signed invoice to every expense rpeort",
        "atach the signed invoice to every expense report",
    ):
        x = _x("Attach the signed invoice to every expense report", later)
        assert x["cov_e"] > 0.85 and x["values_changed"] == 0.0, later
    assert _x("Sort the list by date", "sort the lsit by date")["cov_e"] > 0.85
    assert _x("Sort the cost column", "sort the cast column")["cov_e"] < 0.85  # another word
    assert _x("Send the e-mails on Monday", "send the emails on monday")["cov_e"] > 0.85


def test_one_plain_word_shared_names_the_topic_not_the_instruction() -> None:
    e = unit("Write the release plan for the mobile team")
    assert thin(e, unit("this plan is far too long for the meeting"))
    assert not thin(e, unit("write the release plan for them first"))
    assert not thin(unit("Use the Orion bucket"), unit("the Orion bucket is full again"))


def test_a_hedging_verb_is_no_content() -> None:
    u = unit("I think we should archive the rows by date")
    assert u.weights[u.stems.index("think")] == 0 < u.weights[u.stems.index("row")]


def test_changed_values_and_swapped_roles_are_seen() -> None:
    assert _x("use port 8080", "use port 9090")["number_changed"] == 1.0
    assert (
        _x(
            "copy the files from the prod bucket into the dev bucket",
            "copy the files from the dev bucket into the prod bucket",
        )["swapped_roles"]
        == 1.0
    )
    assert (
        _x("build for linux/amd64 and linux/arm64", "build for linux/arm64 and linux/amd64")[
            "swapped_roles"
        ]
        == 0.0
    )
    assert _x("Freeze the encoder", "Unfreeze the encoder")["prefix_antonyms"] == 1.0


@given(
    st.sampled_from(INSTRUCTIONS),
    st.sampled_from(["Don't ", "Do not ", "Never ", "dont "]),
    st.sampled_from(["", "!", "!!", "."]),
    st.booleans(),
)
def test_a_negated_instruction_is_its_opposite_however_it_is_shouted(
    text: str, negation: str, mark: str, caps: bool
) -> None:
    later = negation + text[0].lower() + text[1:] + mark
    if caps:
        later = later.upper()
    assert opposite(unit(text), unit(later))
    assert not opposite(unit(text), unit(text + mark))


@given(st.sampled_from(INSTRUCTIONS))
def test_reports_and_questions_are_never_gated(text: str) -> None:
    assert not opposite(unit(text), unit("why did you not " + text.lower() + "?"))
    assert not opposite(unit(text), unit("the team did not " + text.lower()))


@given(st.sampled_from(INSTRUCTIONS))
def test_always_against_never_is_opposite(text: str) -> None:
    body = text[0].lower() + text[1:]
    assert opposite(unit("Never " + body), unit("ALWAYS " + body.upper()))
    assert not opposite(unit("Always " + body), unit("always " + body))


def test_a_verb_reversed_by_its_prefix_is_opposite_and_tells() -> None:
    assert opposite(unit("Freeze the base layers during warm-up"), unit("Unfreeze the base layers"))
    assert opposite(unit("Pin the provider version"), unit("unpin the provider version"))
    # Other negating prefixes begin unrelated words: no reversal read there.
    assert not opposite(unit("Play the intro video"), unit("Display the intro video"))


def test_a_phrasal_verb_split_by_its_object_is_read_as_one() -> None:
    asked = "Could you please leave the venue map out of the welcome pack?"
    assert opposite(unit("Please include the venue map in the welcome pack."), unit(asked))
    assert unit("leave the venue map out").polarity == 1
    assert unit("leave the venue map out").stems == unit("the venue map").stems
    # "in" after an object is a preposition: "put the invoice in the folder" is not "include".
    assert unit("put the invoice in the folder").stems[0] == unit("put").stems[0]


@given(
    st.sampled_from(INSTRUCTIONS),
    st.sampled_from(
        [
            "there's no reason we shouldn't ",
            "there is no reason not to ",
            "its not like we cant ",
        ]
    ),
)
def test_denying_a_denial_tells_the_instruction(text: str, opener: str) -> None:
    body = text[0].lower() + text[1:]
    assert opposite(unit("Don't " + body), unit(opener + body))
    assert not opposite(unit(text), unit(opener + body))


@given(
    st.lists(st.sampled_from(INSTRUCTIONS), min_size=2, max_size=6),
    st.sampled_from(["", "use MySQL instead: ", "as I said, ", "never "]),
)
def test_remembered_covers_give_what_a_fresh_reading_gives(said: list[str], lead: str) -> None:
    """``_cover``'s memo (by the units' identity) never answers for another pair: each pair's
    features and value change read the same with the memo full of other pairs and empty."""
    later = read(lead + " and ".join(said[1:]))
    pairs_ = [(unit(e), u) for e in said for u in later.units]
    memo = [(features(e, u, later.cues, 0), changes_value(e, u, later.cues)) for e, u in pairs_]
    fresh = []
    for e, u in pairs_:
        pairs._covers.clear()
        fresh.append((features(e, u, later.cues, 0), changes_value(e, u, later.cues)))
    assert memo == fresh


def test_a_pairs_features_do_not_depend_on_what_was_read_before() -> None:
    named, plain = unit("keep Main green"), unit("keep main green")
    assert (named.norm, named.stems) == (plain.norm, plain.stems) and named.weights != plain.weights
    m = read("keep main blue")
    later = m.units[0]
    pairs._indexes.clear()
    pairs._covers.clear()
    fresh = features(later, plain, m.cues, 0)
    pairs._indexes.clear()
    pairs._covers.clear()
    features(later, named, m.cues, 0)  # the capitalised name is indexed first
    assert features(later, plain, m.cues, 0) == fresh


def _changes(earlier: str, later: str) -> bool:
    return changes_value(unit(earlier), unit(later), read(later).cues)


def test_one_value_spelled_two_ways_is_no_change() -> None:
    assert not _changes(
        "Export every chart at 600 dpi and keep each file under 4 MB.",
        "export every chart at 600dpi, keep each file under 4MB",
    )
    assert not _changes(
        "Post the digest every Friday at 5 pm.", "Post the digest every Friday at 17:00."
    )
    assert not _changes(
        "Round the totals to the nearest 0.25.", "round the totals to the nearest .25"
    )
    assert not _changes(
        "Pin actions/setup-node@v4 in every workflow.", "pin setup-node v4 in every workflow"
    )
    assert not _changes(
        "Log the fuel in gallons on every leg.", "log the fuel in gals on every leg"
    )
    assert not _changes(  # a name's plural
        "Block the IP of any scraper in the edge config.",
        "block the IPs of scrapers in the edge config",
    )
    assert _changes(
        "Block the IP of any scraper in the edge config.",
        "block the ASN of scrapers in the edge config",
    )


def test_every_time_and_ever_name_no_value() -> None:
    # "every time" says when, as "always" does: no word of the rule swapped for "time"
    assert not _changes(
        "Print the order number and the parcel weight on the label, never just one.",
        "order number and parcel weight every time, never just one",
    )
    assert _changes(  # a word of the rule swapped in the same frame still is a change
        "Print the order number on the label, never the weight.",
        "print the order number on the box, never the weight",
    )
    # "Ever." said after a stop, capitalised, is no name
    assert not _changes("No stickers on boxes.", "Stickers again?! None. Ever.")


@given(st.integers(2, 900), st.integers(2, 900))
def test_another_number_is_still_a_change(n: int, m: int) -> None:
    earlier = f"Export every chart at {n} dpi for the printer."
    assert _changes(earlier, f"export every chart at {m}dpi for the printer") is (n != m)
    assert _changes(
        "Post the digest every Friday at 5 pm.", "Post the digest every Friday at 16:00."
    )


def test_a_word_spelled_short_slipped_or_inflected_is_no_swap() -> None:
    assert not _changes(
        "Never drop the _synced_at column from the raw tables.",
        "dont drop the _synced_at col from the raw tables",
    )
    assert not _changes(
        "Quote all prices in EUR on the invoices.", "quote all prices in euro on the invoices"
    )
    assert not _changes(
        "Send everything going to the lab by courier.",
        "send everything that goes to the lab by courier",
    )
    assert _changes(
        "Keep the staging bucket for the exports.", "Keep the archive bucket for the exports."
    )


@given(
    st.sampled_from(["geotag", "memoise", "shard", "gzip", "watermark", "upsert", "prefetch"]),
    st.sampled_from(["the nightly exports", "every thumbnail on the site", "the audit rows"]),
    st.sampled_from(["Don't ", "Never ", "dont "]),
)
def test_a_negated_rule_told_again_without_its_negation_is_opposite_whatever_its_verb(
    verb: str, thing: str, negation: str
) -> None:
    # Verbs the lexicon does not know: the later span opens with the rule's own verb.
    rule = unit(f"{negation}{verb} {thing}.")
    assert opposite(rule, unit(f"{verb} {thing}"))
    assert not opposite(rule, unit(f"{negation}{verb} {thing}"))
    assert not opposite(rule, unit(f"{verb.upper()}."))  # a fragment tells with its neighbours


def test_a_pronoun_taking_a_nouns_slot_swaps_no_roles() -> None:
    e = unit("When you answer new reviewers, credit them before asking for fixes.")
    later = unit("Credit new reviewers before asking for fixes when you answer them.")
    assert features(e, later, read(later.text).cues, 0)[FEATURES.index("swapped_roles")] == 0.0
    # Two names trading places still swap.
    e2, l2 = (
        unit("copy the rows from ledger into archive"),
        unit("copy the rows from archive into ledger"),
    )
    assert features(e2, l2, read(l2.text).cues, 0)[FEATURES.index("swapped_roles")] == 1.0


def test_word_term_and_phrase_name_one_slot_and_rather_than_announces_no_change() -> None:
    assert not _changes(
        "Never use the phrase 'quick win' in the board deck.",
        "never use the term quick win in the board deck",
    )
    assert not _changes(
        "Take the totals from the audited ledger, not from the draft.",
        "please take the totals from the audited ledger rather than the draft",
    )


@given(
    st.sampled_from(["Rotate the logs every night", "Copy the wiki to the backup host"]),
    st.sampled_from(["keep only the last five archives", "email the summary to the team lead"]),
)
def test_two_requests_told_in_the_other_order_read_as_in_order(first: str, second: str) -> None:
    e = unit(f"{first}, and {second}.")
    swapped = unit(f"{second[0].upper()}{second[1:]}, and {first[0].lower()}{first[1:]}.")
    same = unit(f"{first}, and {second}.")
    cues = read(swapped.text).cues
    for name in ("descents", "order_inversions"):
        i = FEATURES.index(name)
        assert features(e, swapped, cues, 0)[i] == features(e, same, cues, 0)[i] == 0
    # Steps in order are another instruction told the other way round: left as written.
    steps = unit(f"{first}, then {second}.")
    back = unit(f"{second[0].upper()}{second[1:]}, then {first[0].lower()}{first[1:]}.")
    assert features(steps, back, read(back.text).cues, 0)[FEATURES.index("descents")] > 0


def test_a_word_the_rule_forbids_forbidden_again_is_not_thin() -> None:
    assert not thin(unit("No inline styles in the templates."), unit("no styles."))
    # The same word not forbidden, or another word forbidden, stays thin.
    assert thin(unit("No inline styles in the templates."), unit("styles."))
    assert thin(unit("No inline styles in the templates."), unit("no comments."))


def test_a_request_told_verb_first_or_verb_last_moves_no_value() -> None:
    e = unit("Hymn sheets printed on both sides.")
    later = unit("Print the hymn sheets on both sides.")
    assert features(e, later, read(later.text).cues, 0)[FEATURES.index("descents")] == 0
    # Two values trading places still descend.
    e2, l2 = unit("Copy the ledger into the archive."), unit("Copy the archive into the ledger.")
    assert features(e2, l2, read(l2.text).cues, 0)[FEATURES.index("descents")] > 0


def test_into_and_to_open_one_slot_so_a_swap_across_them_is_read() -> None:
    from monitor.detect.lang import units as un
    from monitor.detect.pairs import _index, _swapped

    e = un.unit("Move 15k from the savings account to operating on the 1st.")
    swapped = un.unit("move 15k from operating into savings on the 1st")
    same = un.unit("move 15k from savings into operating on the 1st")
    assert _swapped(_index(e), _index(swapped)) == 1.0
    assert _swapped(_index(e), _index(same)) == 0.0
