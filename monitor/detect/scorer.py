"""The learned pair scorer: a small committed model, evaluated in plain Python.

``bench/train_restatements.py`` fits gradient-boosted trees (or a logistic regression) over
``pairs.FEATURES`` and writes them as JSON into this package; here they are loaded once and
compiled to Python source (nested comparisons), so a pair costs a few microseconds and inference
needs neither scikit-learn nor NumPy. The three classes are the pair verdicts:

* ``same``: the later span says the earlier instruction again;
* ``contradicts``: it says the opposite, or changes a value (a flip or an update);
* ``unrelated``: anything else.

Each model carries the thresholds chosen on its validation split; a pair is ``same`` when
P(same) reaches ``threshold_same``, else ``contradicts`` when P(contradicts) reaches
``threshold_contradicts``, else ``unrelated``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Final, Literal

import msgspec

Label = Literal["same", "contradicts", "unrelated"]
CLASSES: Final[tuple[Label, ...]] = ("unrelated", "same", "contradicts")

#: The models shipped with the package, by the register they were fitted on.
RESTATEMENT: Final = "restatement_model.json"
#: The restatement model of the optional semantic stage (one more feature: the cosine).
RESTATEMENT_SEMANTIC: Final = "restatement_model_semantic.json"
SURVIVAL: Final = "survival_model.json"


class Verdict(msgspec.Struct, frozen=True, gc=False):
    """A pair's verdict with its probabilities (0 to 1)."""

    label: Label
    p_same: float
    p_contradicts: float

    @property
    def score(self) -> float:
        """The probability behind the label, 0 to 100 (what evidence shows)."""
        p = self.p_same if self.label == "same" else self.p_contradicts
        if self.label == "unrelated":
            p = 1.0 - max(self.p_same, self.p_contradicts)
        return round(100.0 * p, 1)


class Model(msgspec.Struct, frozen=True):
    """A fitted model as stored: trees (``kind="gbt"``) or a logistic regression."""

    kind: Literal["gbt", "logistic"]
    features: tuple[str, ...]
    classes: tuple[str, ...]
    threshold_same: float
    threshold_contradicts: float
    #: gbt: per-class initial scores, learning rate, and trees as (class, nodes) where a node
    #: is [feature, threshold, left, right, value] (feature -1: a leaf holding ``value``).
    init: tuple[float, ...] = ()
    learning_rate: float = 0.1
    trees: tuple[tuple[int, tuple[tuple[int, float, int, int, float], ...]], ...] = ()
    #: logistic: per-class coefficients over standardised features.
    coef: tuple[tuple[float, ...], ...] = ()
    intercept: tuple[float, ...] = ()
    mean: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()
    #: How it was made (seed, corpus digest, validation figures): read by reports only.
    trained: dict[str, Any] = msgspec.field(default_factory=dict)


def _tree_source(nodes: Sequence[tuple[int, float, int, int, float]], at: int = 0) -> str:
    """A tree as one conditional expression: its leaf's value."""
    feature, threshold, left, right, value = nodes[at]
    if feature < 0:
        return repr(value)
    return (
        f"({_tree_source(nodes, left)} if x{feature} <= {threshold!r} "
        f"else {_tree_source(nodes, right)})"
    )


#: Trees added in one expression statement (a bound on the expression's depth).
_TREES_PER_SUM: Final = 32


def _compile_gbt(model: Model) -> Callable[[Sequence[float]], tuple[float, ...]]:
    """One Python function summing every tree (raw class scores), built from the model.

    Each class's trees are added to its score in the model's order, several to a statement
    (``s0 = s0 + (tree) + (tree) …``, each tree a conditional expression): the same additions in
    the same order as one ``s0 += value`` per tree, so the same floats, without a store and a
    load of the score for each tree."""
    n = len(model.classes)
    # Each feature is read once into a local, as a float: a local load is cheaper than an index,
    # the trees read each feature hundreds of times, and a float-to-float comparison takes
    # CPython's specialised path where an int (counts, flags) against a float threshold takes the
    # generic one (a third of the time per pair). ``float`` changes no comparison: the features
    # are small integers, exact as floats.
    width = len(model.features)
    lines = ["def raw(x):", "    " + ", ".join(f"x{i}" for i in range(width)) + ", = map(float, x)"]
    lines.extend(f"    s{k} = 0.0" for k in range(n))
    by_class: list[list[str]] = [[] for _ in range(n)]
    for k, nodes in model.trees:
        by_class[k].append(_tree_source(nodes))
    for k, trees in enumerate(by_class):
        for at in range(0, len(trees), _TREES_PER_SUM):
            terms = " + ".join(trees[at : at + _TREES_PER_SUM])
            lines.append(f"    s{k} = s{k} + {terms}")
    lr = model.learning_rate
    init = model.init
    lines.append(
        "    return (" + ", ".join(f"{init[k]!r} + {lr!r} * s{k}" for k in range(n)) + ",)"
    )
    scope: dict[str, Any] = {}
    exec(compile("\n".join(lines), f"<{model.kind} model>", "exec"), scope)
    fn: Callable[[Sequence[float]], tuple[float, ...]] = scope["raw"]
    return fn


def _compile_logistic(model: Model) -> Callable[[Sequence[float]], tuple[float, ...]]:
    coef, intercept, mean, scale = model.coef, model.intercept, model.mean, model.scale

    def raw(x: Sequence[float]) -> tuple[float, ...]:
        z = [(v - m) / s for v, m, s in zip(x, mean, scale, strict=True)]
        return tuple(
            b + sum(c * v for c, v in zip(row, z, strict=True))
            for row, b in zip(coef, intercept, strict=True)
        )

    return raw


def _softmax(raw: Sequence[float]) -> list[float]:
    top = max(raw)
    ex = [math.exp(r - top) for r in raw]
    total = sum(ex)
    return [e / total for e in ex]


class Scorer:
    """A loaded model: ``probabilities(x)`` and ``verdict(x)`` for a feature vector."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._raw = _compile_gbt(model) if model.kind == "gbt" else _compile_logistic(model)
        self._same = model.classes.index("same")
        self._contra = model.classes.index("contradicts")

    def probabilities(self, x: Sequence[float]) -> tuple[float, float]:
        """(P(same), P(contradicts))."""
        p = _softmax(self._raw(x))
        return p[self._same], p[self._contra]

    def verdict(self, x: Sequence[float]) -> Verdict:
        p_same, p_contra = self.probabilities(x)
        if p_same >= self.model.threshold_same:
            label: Label = "same"
        elif p_contra >= self.model.threshold_contradicts:
            label = "contradicts"
        else:
            label = "unrelated"
        return Verdict(label, p_same, p_contra)


def decode_model(data: bytes) -> Model:
    return msgspec.json.decode(data, type=Model)


@functools.lru_cache(maxsize=4)
def load(name: str = RESTATEMENT) -> Scorer:
    """The shipped model ``name`` (package data of ``monitor.detect``), compiled once."""
    data = resources.files("monitor.detect").joinpath(name).read_bytes()
    return Scorer(decode_model(data))


def dump_model(model: Model) -> str:
    """The JSON a model is committed as (stable, one tree per line for readable diffs)."""
    raw = msgspec.to_builtins(model)
    trees = raw.pop("trees")
    head = json.dumps(raw, indent=1, sort_keys=True)
    if not trees:
        return head + "\n"
    tree_lines = ",\n".join(json.dumps(t, separators=(",", ":")) for t in trees)
    return head[:-2] + ',\n "trees": [\n' + tree_lines + "\n ]\n}\n"
