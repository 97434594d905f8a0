"""The optional semantic stage: the encoder, its candidates, and its own model.

The extra is installed by ``make test`` (the development lock includes it), so these run in CI.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.detect import scorer as sc
from monitor.detect import semantic
from monitor.detect.config import DetectConfig
from monitor.detect.lang import units as un
from monitor.detect.restatements import (
    SEMANTIC_FEATURES,
    SEMANTIC_MIN,
    instructions_in,
    judge,
    model_for,
    pairs_to_score,
    scored,
    semantic_scored,
)


@pytest.fixture(scope="module")
def enc() -> semantic.Encoder:
    return semantic.encoder()


def test_vectors_are_unit_length_and_memoised(enc: semantic.Encoder) -> None:
    first, again = enc.vectors(["Run the linter before every commit."] * 2)
    assert first is again
    assert math.isclose(float((first * first).sum()), 1.0, rel_tol=1e-4)


def test_a_paraphrase_is_closer_than_another_topic(enc: semantic.Encoder) -> None:
    sims = enc.similarities(
        ["Write the changelog entry in the past tense."],
        [
            "Changelog entries should be phrased in past tense.",
            "The staging cluster restarts every night at two.",
        ],
    )[0]
    assert sims[0] > sims[1] + 0.3


@settings(max_examples=15, deadline=None)
@given(st.text(min_size=1, max_size=60), st.text(min_size=1, max_size=60))
def test_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    e = semantic.encoder()
    ab = e.similarities([a], [b])[0][0]
    ba = e.similarities([b], [a])[0][0]
    assert -1.0001 <= ab <= 1.0001
    assert math.isclose(ab, ba, abs_tol=1e-5)


def test_no_earlier_span_gives_no_pairs() -> None:
    m = un.read("Keep the report under two pages.")
    assert semantic_scored((), m, 5) == []


def test_a_paraphrase_sharing_no_word_becomes_a_candidate() -> None:
    cfg = DetectConfig(semantic=True)
    history = instructions_in("Use metric units throughout.", 1, cfg)
    m = un.read("Kilograms and metres everywhere, please.")
    assert scored(history, m, 3) == []  # no word in common: the lexical stage scores nothing
    found = semantic_scored(history, m, 3)
    assert found and all(c >= SEMANTIC_MIN for *_, c in found)


def test_lexical_candidates_keep_their_place_and_carry_a_cosine() -> None:
    cfg = DetectConfig(semantic=True)
    history = instructions_in("Never force-push to the release branch.", 1, cfg)
    m = un.read("As I said, never force-push to the release branch.")
    lexical = scored(history, m, 3)
    with_cos = semantic_scored(history, m, 3)
    assert [(i, u) for i, u, *_ in with_cos[: len(lexical)]] == [(i, u) for i, u, _ in lexical]
    assert with_cos[0][3] > 0.8


def test_the_semantic_model_reads_one_more_feature() -> None:
    model = model_for(DetectConfig(semantic=True)).model
    assert model.features == SEMANTIC_FEATURES
    assert model.trained["semantic"] is True
    assert model_for(DetectConfig()).model.features == SEMANTIC_FEATURES[:-1]
    assert sc.load(sc.RESTATEMENT_SEMANTIC) is model_for(DetectConfig(semantic=True))


def test_pairs_to_score_adds_the_cosine_only_when_on() -> None:
    history = instructions_in("Pin every dependency to an exact version.", 1, DetectConfig())
    m = un.read("Again: pin every dependency to an exact version.")
    assert all(extra == () for *_, extra in pairs_to_score(history, m, 3, DetectConfig()))
    on = pairs_to_score(history, m, 3, DetectConfig(semantic=True))
    assert on and all(len(extra) == 1 for *_, extra in on)


def test_judge_with_the_stage_on_still_vetoes_a_flip() -> None:
    cfg = DetectConfig(semantic=True)
    history = instructions_in("Don't delete the audit logs.", 1, cfg)
    verdict = judge(history, "Delete the audit logs.", 3, cfg)
    assert not verdict.restated
    same = judge(history, "Like I said before, do not delete the audit logs.", 3, cfg)
    assert same.restated


def test_a_missing_extra_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from monitor import cli

    def missing() -> semantic.Encoder:
        raise semantic.Unavailable("the semantic stage needs the semantic extra")

    monkeypatch.setattr(semantic, "encoder", missing)
    with pytest.raises(cli.Fatal, match="semantic extra"):
        cli._check_semantic(True)
    cli._check_semantic(False)  # off: nothing is loaded


def test_a_vector_does_not_depend_on_its_batch(enc: semantic.Encoder) -> None:
    # Stream and replay memoise different texts, so a span is encoded in different batches;
    # equal flags need equal vectors, bit for bit.
    texts = [
        "Squash the commits before merging.",
        "ok",
        "Put every secret in the vault and rotate the database password each quarter, "
        "starting with the reporting replica.",
    ]
    together = enc._encode(texts)
    for text, vector in zip(texts, together, strict=True):
        assert (enc._encode([text])[0] == vector).all()


def test_replay_with_the_stage_flags_a_restatement_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from monitor.cli import main

    def event(turn: int, kind: str, **fields: object) -> str:
        return json.dumps(
            {
                "event_id": f"sem-{turn}",
                "session_id": "sem",
                "turn": turn,
                "ts": f"2026-11-23T00:00:{turn:02d}Z",
                "kind": kind,
                **fields,
            }
        )

    log = tmp_path / "s.jsonl"
    log.write_text(
        "\n".join(
            [
                event(1, "user_message", text="Never edit anything under db/migrations."),
                event(2, "compaction", compactor="sum-test"),
                event(
                    3, "user_message", text="Like I said, never edit anything under db/migrations!"
                ),
            ]
        )
        + "\n"
    )
    capsys.readouterr()
    assert main(["replay", str(log), "--semantic", "--dry-run", "--json"]) == 0
    flags = json.loads(capsys.readouterr().out)["flags"]
    assert [(f["signal"], f["turn"], f["original_turn"]) for f in flags] == [
        ("restated_instruction", 3, 1)
    ]
