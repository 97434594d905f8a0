"""The restatement detector on the shared dev set, held to the issue's aims, not a lowered bar.

The dev set (``../shared/data/restatements_dev.jsonl``) is external: never fitted on, never
used for a threshold. Each pair goes through ``detect.step`` as ``bench/restatement_eval.py``
replays it (earlier message, compaction, later message). Precision and flips are asserted at
the aims; recall is asserted at its aim too and marked as an expected failure while the aim
is missed (strict: once the detector reaches it the marker must go). Skipped where the shared
folder is absent.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DEV_SET = REPO / ".." / "shared" / "data" / "restatements_dev.jsonl"

#: The aims of the restatement issue.
PRECISION_AIM = 0.95
RECALL_AIM = 0.90


def _bench(name: str) -> ModuleType:
    """A script of ``bench/`` as a module (it puts its own folder on the path for its
    imports)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    if not DEV_SET.is_file():
        pytest.skip("the shared dev set is absent")
    evaluation = _bench("restatement_eval")
    return dict(evaluation.evaluate(evaluation.load([DEV_SET])))


def test_precision_and_flips_meet_the_aims(figures: dict[str, Any]) -> None:
    assert figures["n"] == 180
    assert figures["precision"] >= PRECISION_AIM
    assert figures["flips_flagged"] == 0


@pytest.mark.xfail(
    strict=True,
    reason="recall aim missed: 0.567 of 0.90 on 2026-12-04 (paraphrase, embedded, frustrated)",
)
def test_recall_meets_the_aim(figures: dict[str, Any]) -> None:
    assert figures["recall"] >= RECALL_AIM
