"""Numbers with what they measure, and when a later span gives one another value."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect.lang.quantities import moved, other_value, quantities
from monitor.detect.lang.units import unit

#: Rules written for these tests, each with one number in a slot ("{n}").
RULES = [
    "Keep the lookback at {n} days.",
    "Retry failed uploads {n} times.",
    "Set the request timeout to {n} seconds.",
    "Run {n} workers per node.",
    "Pay invoices {n} days after receipt.",
]
#: Sentences with numbers measuring other things than any of the rules'.
ASIDES = [
    "The export has 2,297 rows.",
    "Build 418 passed on the second try.",
    "We met 3 customers last week.",
]


def _norm(text: str) -> str:
    return unit(text).norm


def test_a_number_is_read_with_its_unit_kind_and_bound() -> None:
    (q,) = quantities(_norm("Keep it under 150 words."))
    assert (q.value, q.bound) == (150.0, -1) and "word" in q.anchors
    (q,) = quantities(_norm("Total budget $12,000."))
    assert (q.value, q.kind) == (12000.0, "$") and "budget" in q.anchors
    (q,) = quantities(_norm("import 5k rows per batch"))
    assert q.value == 5000.0 and "row" in q.anchors
    (q,) = quantities(_norm("no more than 20 requests per minute"))
    assert q.bound == -1, "a negated 'more than' is an upper bound"
    assert quantities(_norm("Use release/2.15 and ticket #4")) == ()


@given(st.sampled_from(RULES), st.integers(2, 500), st.integers(2, 500))
@settings(max_examples=80)
def test_the_same_rule_with_another_number_gives_another_value(rule: str, n: int, m: int) -> None:
    earlier, later = _norm(rule.format(n=n)), _norm(rule.format(n=m))
    assert other_value(earlier, later) is (n != m)


@given(st.sampled_from(RULES), st.integers(2, 500), st.sampled_from(ASIDES))
@settings(max_examples=60)
def test_numbers_measuring_other_things_change_nothing(rule: str, n: int, aside: str) -> None:
    assert not other_value(_norm(rule.format(n=n)), _norm(aside))


@given(st.integers(10, 500), st.integers(1, 9))
def test_a_value_the_bound_allows_keeps_the_rule(limit: int, less: int) -> None:
    rule = _norm(f"Keep the abstract under {limit} words.")
    assert not other_value(rule, _norm(f"The abstract is {limit - less} words."))
    assert other_value(rule, _norm(f"The abstract is {limit + less} words."))


def test_the_rules_own_numbers_are_not_another_value() -> None:
    rule = _norm("Price is $169, not $179.")
    assert not other_value(rule, _norm("Price: $169 everywhere."))
    assert not other_value(_norm("Stay on Node 18, nothing that needs Node 20."), "node 18")


def test_a_different_currency_is_not_the_same_slot() -> None:
    assert not other_value(_norm("The fee is 5% of the total."), _norm("The fee total is $7."))


@given(st.sampled_from(RULES), st.integers(2, 500), st.integers(2, 500))
def test_a_value_set_anew_is_moved_whatever_the_bound(rule: str, n: int, m: int) -> None:
    earlier = _norm(rule.format(n=n))
    later = _norm(rule.format(n=m))
    assert moved(earlier, later) is (n != m)
    for aside in ASIDES:
        assert not moved(earlier, _norm(aside))


@given(st.integers(1, 64), st.integers(1, 64))
def test_a_number_linked_to_its_subject_measures_it(n: int, m: int) -> None:
    earlier = _norm(f"And worker_pool_size stays at {n} on this host.")
    later = _norm(f"To finish sooner worker_pool_size is {m} for the rebuild.")
    assert other_value(earlier, later) is (n != m)
    assert not other_value(earlier, _norm(f"The rebuild took {m + n} minutes."))


@given(st.integers(2, 900), st.integers(2, 900))
def test_a_limit_that_names_nothing_sets_the_bound_on_its_side(n: int, m: int) -> None:
    rule = _norm(f"Keep each changelog entry under {n} words.")
    assert other_value(rule, _norm(f"For the release notes the limit is {m}.")) is (m > n)
    assert moved(rule, _norm(f"Make the cap {m}.")) is (m != n)
    # A bound on the other side is another matter ("at least 3 reviewers").
    assert not other_value(rule, _norm(f"For the release notes we need at least {m}."))
