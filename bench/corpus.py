"""The labelled corpora the learned scorers are fitted on, and how they are split.

``bench/corpus/restatements/<domain>.jsonl``: pairs of user messages, written by hand for this
corpus, one domain per file: ``{"id", "domain", "category", "label", "verdict", "register",
"shape", "earlier", "later", "note"}``.

The split is by domain, fixed here before any model was fitted, so validation and test domains
are unseen in training: thresholds are chosen on ``VALIDATION``, and ``TEST`` is read only to
report. The shared dev set (``../shared/data/restatements_dev.jsonl``) is external: never fitted
on, never used for a threshold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Literal

REPO: Final = Path(__file__).resolve().parent.parent
RESTATEMENTS: Final = REPO / "bench" / "corpus" / "restatements"
SURVIVAL: Final = REPO / "bench" / "corpus" / "survival"
DEV_SET: Final = REPO / ".." / "shared" / "data" / "restatements_dev.jsonl"

POSITIVE: Final = (
    "verbatim",
    "near_verbatim",
    "reminder_cue",
    "frustrated",
    "embedded",
    "paraphrase",
)
CONTRADICTING: Final = ("negation_flip", "update")
UNRELATED: Final = (
    "question_or_ack",
    "earlier_not_instruction",
    "same_topic_new_instruction",
    "unrelated",
    "pasted_or_status",
)
CATEGORIES: Final = (*POSITIVE, *CONTRADICTING, *UNRELATED, "cross_pair")

Split = Literal["train", "validation", "test"]

#: Domains held out of training, chosen by name before the corpus was read.
VALIDATION: Final = frozenset(
    {
        "frontend-ui",
        "databases-sql",
        "dashboards-viz",
        "tax-prep",
        "journalism",
        "lesson-plans",
        "ux-research",
        "event-travel",
        "insurance-claims",
        "sports-analytics",
    }
)
TEST: Final = frozenset(
    {
        "api-design",
        "game-dev",
        "bioinformatics",
        "healthcare-admin",
        "grant-writing",
        "localisation",
        "logistics",
        "audio-video",
        "construction-projects",
        "pharma-regulatory",
    }
)
#: Survival cases held out by domain in the same way.
SURVIVAL_VALIDATION: Final = frozenset({"mobile-app", "research-paper", "game-project"})
SURVIVAL_TEST: Final = frozenset({"infra-ops", "finance-report", "grant-proposal"})


def split_of(domain: str, survival: bool = False) -> Split:
    if domain in (SURVIVAL_VALIDATION if survival else VALIDATION):
        return "validation"
    if domain in (SURVIVAL_TEST if survival else TEST):
        return "test"
    return "train"


def verdict_of(category: str) -> str:
    """The pair verdict a category stands for (``cross_pair``: another pair's earlier message,
    built by the trainer, is unrelated)."""
    if category in POSITIVE:
        return "same"
    return "contradicts" if category in CONTRADICTING else "unrelated"


def read_jsonl(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(paths):
        with path.open(encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def restatement_pairs(folder: Path = RESTATEMENTS) -> list[dict[str, Any]]:
    return read_jsonl(folder.glob("*.jsonl"))


def survival_cases(folder: Path = SURVIVAL) -> list[dict[str, Any]]:
    return read_jsonl(folder.glob("*.jsonl"))


def digest(folder: Path) -> str:
    """SHA-256 over the corpus files (names and bytes): which corpus a model was fitted on."""
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.jsonl")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]
