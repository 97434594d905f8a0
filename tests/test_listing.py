"""How stored flags read in the terminal."""

from __future__ import annotations

from monitor.listing import flag_lines


def _row(evidence: dict[str, object]) -> dict[str, object]:
    return {
        "session_id": "s-1",
        "turn": 12,
        "signal": "inverted_item",
        "original_turn": 3,
        "compaction_turn": 12,
        "evidence": evidence,
        "source": None,
    }


def test_an_inverted_item_reads_as_the_item_its_verdict_why_and_the_sentence() -> None:
    ev = {
        "class": "constraint",
        "literal": "Keep the lookback at 7 days.",
        "verdict": "contradicted",
        "reason": "other_value",
        "sentence": "Lookback is 3 days.",
        "compactor": "sum-v2",
    }
    head, what, _ = flag_lines(_row(ev), 200)
    assert "inverted_item" in head and "sum-v2" in head
    assert what.strip() == (
        "constraint 'Keep the lookback at 7 days.' contradicted in the summary (other value): "
        "'Lookback is 3 days.'"
    )


def test_a_flag_stored_before_reasons_were_recorded_reads_without_one() -> None:
    ev = {"class": "constraint", "literal": "No emojis.", "verdict": "absent"}
    _, what, _ = flag_lines(_row(ev), 200)
    assert what.strip() == "constraint 'No emojis.' absent in the summary"
