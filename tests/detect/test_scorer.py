"""The committed models load, and compiled trees give what the trees say."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from monitor.detect import scorer as sc
from monitor.detect.pairs import FEATURES

#: A two-tree model over one feature, written by hand: class "same" gains 1.5 when x0 > 0.5.
TINY = sc.Model(
    kind="gbt",
    features=("x0",),
    classes=("unrelated", "same", "contradicts"),
    threshold_same=0.5,
    threshold_contradicts=0.5,
    init=(0.0, 0.0, 0.0),
    learning_rate=1.0,
    trees=(
        (1, ((0, 0.5, 1, 2, 0.0), (-1, 0.0, -1, -1, -1.0), (-1, 0.0, -1, -1, 1.5))),
        (2, ((-1, 0.0, -1, -1, 0.25),)),
    ),
)


def _reference(model: sc.Model, x: list[float]) -> list[float]:
    raw = list(model.init)
    for k, nodes in model.trees:
        at = 0
        while nodes[at][0] >= 0:
            f, t, left, right, _ = nodes[at]
            at = left if x[f] <= t else right
        raw[k] += model.learning_rate * nodes[at][4]
    top = max(raw)
    ex = [math.exp(r - top) for r in raw]
    return [e / sum(ex) for e in ex]


@given(st.floats(min_value=-2, max_value=2))
def test_compiled_trees_equal_a_plain_walk(x0: float) -> None:
    want = _reference(TINY, [x0])
    got = sc.Scorer(TINY).probabilities([x0])
    assert math.isclose(got[0], want[1]) and math.isclose(got[1], want[2])


def test_verdicts_follow_the_thresholds() -> None:
    scorer = sc.Scorer(TINY)
    assert scorer.verdict([1.0]).label == "same"
    assert scorer.verdict([0.0]).label == "unrelated"


def test_a_model_round_trips_through_its_file_form() -> None:
    assert sc.decode_model(sc.dump_model(TINY).encode()) == TINY


def test_the_shipped_model_reads_todays_features() -> None:
    model = sc.load().model
    assert model.features == FEATURES
    assert 0.0 < model.threshold_same < 1.0
    assert model.trained["validation"]["precision"] >= 0.95


@given(st.data())
def test_the_shipped_models_compiled_equal_a_plain_walk(data: st.DataObject) -> None:
    for name in (sc.RESTATEMENT, sc.SURVIVAL):
        scorer = sc.load(name)
        width = len(scorer.model.features)
        x = data.draw(st.lists(st.floats(-1.0, 400.0), min_size=width, max_size=width))
        want = _reference(scorer.model, x)
        got = scorer.probabilities(x)
        same, contra = scorer.model.classes.index("same"), scorer.model.classes.index("contradicts")
        assert math.isclose(got[0], want[same], abs_tol=1e-12)
        assert math.isclose(got[1], want[contra], abs_tol=1e-12)


def _raw_walk(model: sc.Model, x: list[float | int]) -> tuple[float, ...]:
    """Raw class scores by walking each tree, summed per class in tree order (as compiled)."""
    sums = [0.0] * len(model.classes)
    for k, nodes in model.trees:
        at = 0
        while nodes[at][0] >= 0:
            f, t, left, right, _ = nodes[at]
            at = left if x[f] <= t else right
        sums[k] += nodes[at][4]
    return tuple(b + model.learning_rate * s for b, s in zip(model.init, sums, strict=True))


def _near_thresholds(model: sc.Model, data: st.DataObject) -> list[float | int]:
    """A feature vector whose values sit on, just beside or between the model's own thresholds,
    some as ints (counts and flags are ints in ``pairs.features``)."""
    cuts: dict[int, list[float]] = {}
    for _, nodes in model.trees:
        for f, t, *_ in nodes:
            if f >= 0:
                cuts.setdefault(f, []).append(t)
    x: list[float | int] = []
    for f in range(len(model.features)):
        t = data.draw(st.sampled_from(cuts.get(f, [0.0])))
        v = data.draw(
            st.sampled_from(
                [t, math.nextafter(t, -math.inf), math.nextafter(t, math.inf), math.floor(t)]
            )
        )
        x.append(int(v) if data.draw(st.booleans()) and v == int(v) else v)
    return x


@given(st.data())
def test_the_shipped_models_compiled_equal_a_plain_walk_to_the_bit(data: st.DataObject) -> None:
    """The compiled ensemble (features read as floats) gives the walk's raw scores exactly, on
    vectors at the thresholds' boundaries and with int features."""
    for name in (sc.RESTATEMENT, sc.SURVIVAL):
        scorer = sc.load(name)
        x = _near_thresholds(scorer.model, data)
        assert scorer._raw(x) == _raw_walk(scorer.model, x)


def test_warm_loads_the_models_a_config_reads_with() -> None:
    from monitor.detect import DetectConfig, warm

    sc.load.cache_clear()
    warm(DetectConfig())
    assert sc.load.cache_info().currsize == 1  # the restatement scorer
    warm(DetectConfig(survival=True))
    assert sc.load.cache_info().currsize == 2  # and the survival scorer
    warm(DetectConfig(survival=True))
    assert sc.load.cache_info().misses == 2  # loaded once each
