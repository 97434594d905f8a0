"""monitor.metrics: names, bounded labels, observe_* calls, the text file, the Faust sensor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.parser import text_string_to_metric_families

from monitor.detect import DetectConfig, detect_all
from monitor.events import KINDS, Compaction, Event, Tool
from monitor.flags import Flag
from monitor.metrics import (
    LAG_BUCKETS,
    MAX_LABEL_CHARS,
    OTHER,
    PREFIX,
    PROCESSING_BUCKETS,
    UNKNOWN,
    EventCounter,
    EventHistogram,
    LabelFolder,
    Metrics,
    build_metrics,
    install_faust_sensor,
    write_metrics_file,
)

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
#: Unbounded identities never go into labels: they live in Postgres.
FORBIDDEN_LABELS = {"session_id", "session", "user", "user_id", "event_id"}


def _event(turn: int, kind: str = "tool_call", **kw: object) -> Event:
    fields: dict[str, object] = {
        "event_id": f"e{turn}",
        "session_id": "s1",
        "turn": turn,
        "ts": T0 + timedelta(seconds=turn),
        "kind": kind,
    }
    if kind == "tool_call":
        fields["tool"] = Tool(name="read", arguments={"path": "a.py"})
    fields.update(kw)
    return Event(**fields)  # type: ignore[arg-type]


def _session(compactor: str | None, agent: str = "claude_code") -> list[Event]:
    """A session whose tool call repeats right after a compaction: one repeat flag."""
    return [
        _event(1, attrs={"agent": agent}),
        _event(2, "compaction", compaction=Compaction(compactor=compactor)),
        _event(3),
    ]


def _checked_meta() -> Any:
    """The meta of a session whose compaction checked one constraint and dropped it."""
    from monitor.replay import replay_events

    ts = datetime(2026, 12, 1, tzinfo=UTC)
    events = [
        Event("u", "chk", 0, ts, "user_message", text="Never push to the release branch."),
        Event("c", "chk", 1, ts, "compaction", text="We fixed the parser.",
              compaction=Compaction(compactor="v1")),
    ]  # fmt: skip
    return replay_events(events, DetectConfig(survival=True)).states["chk"].meta


def test_a_compaction_counts_its_checked_items_by_class_and_verdict() -> None:
    m = build_metrics(CollectorRegistry())
    m.observe_check(_checked_meta())
    assert value(m, "survival_items_total", compactor="v1", verdict="absent",
                 **{"class": "constraint"}) == 1  # fmt: skip


def value(m: Metrics, name: str, **labels: str) -> float | None:
    return m.registry.get_sample_value(PREFIX + name, labels)


# --- LabelFolder ---------------------------------------------------------------------------------


def test_folder_keeps_first_values_and_folds_the_rest() -> None:
    fold = LabelFolder(2)
    assert [fold(v) for v in ("v1", "v2", "v3", "v1", "v4", "v2")] == [
        "v1", "v2", OTHER, "v1", OTHER, "v2",
    ]  # fmt: skip
    assert fold.kept == {"v1", "v2"}


def test_folder_maps_missing_to_unknown_and_cuts_long_values() -> None:
    fold = LabelFolder(4)
    assert fold(None) == UNKNOWN
    assert fold("") == UNKNOWN
    long = "x" * (MAX_LABEL_CHARS + 50)
    assert fold(long) == "x" * MAX_LABEL_CHARS
    assert fold.kept == {"x" * MAX_LABEL_CHARS}


def test_folder_rejects_an_empty_budget() -> None:
    with pytest.raises(ValueError):
        LabelFolder(0)


@given(st.lists(st.one_of(st.none(), st.text(max_size=80)), max_size=60), st.integers(1, 6))
def test_folder_is_bounded_and_stable(values: list[str | None], limit: int) -> None:
    fold = LabelFolder(limit)
    first: dict[str | None, str] = {}
    for v in values:
        out = fold(v)
        assert first.setdefault(v, out) == out  # a value never changes series
    assert len(set(first.values()) - {OTHER, UNKNOWN}) <= limit
    distinct = list(dict.fromkeys(v[:MAX_LABEL_CHARS] for v in values if v))
    assert fold.kept == set(distinct[:limit]) - {OTHER, UNKNOWN}


# --- metrics ------------------------------------------------------------------------------------


def test_every_metric_follows_the_naming_rules() -> None:
    m = build_metrics(CollectorRegistry())
    for event in _session("v1"):
        m.observe_event(event)
    m.observe_flags(detect_all(_session("v1")))
    m.set_consumer_lag("agent-events", 0, 3)
    m.observe_check(_checked_meta())
    families = list(m.registry.collect())
    assert len(families) >= 16
    for fam in families:
        assert fam.name.startswith(PREFIX), fam.name
        if fam.type == "histogram":
            assert fam.name.endswith("_seconds"), fam.name
        assert fam.samples, fam.name  # every family has a series here, so its labels are seen
        for sample in fam.samples:
            assert not FORBIDDEN_LABELS & set(sample.labels), sample


def test_registries_are_independent() -> None:
    a, b = build_metrics(CollectorRegistry()), build_metrics(CollectorRegistry())
    a.observe_dead_letter("schema")
    assert value(a, "dead_letters_total", reason="schema") == 1
    assert value(b, "dead_letters_total", reason="schema") == 0


def test_bounded_children_exist_before_the_first_increment() -> None:
    m = build_metrics()
    for kind in KINDS:
        assert value(m, "events_consumed_total", kind=kind) == 0
    for reason in ("oversized", "not_json", "schema"):
        assert value(m, "dead_letters_total", reason=reason) == 0


def test_events_compactions_and_flags_from_real_detection() -> None:
    m = build_metrics()
    events = _session("v2") + [e for e in _session(None, agent="pi")]
    now = T0 + timedelta(minutes=1)
    for event in events:
        m.observe_event(event, now=now)
    flags = detect_all(_session("v2"))
    assert [f.signal for f in flags] == ["repeated_tool_call"]
    m.observe_flags(flags)

    assert value(m, "events_consumed_total", kind="tool_call") == 4
    assert value(m, "events_consumed_total", kind="compaction") == 2
    assert value(m, "compactions_total", compactor="v2", agent=UNKNOWN) == 1
    assert value(m, "compactions_total", compactor=UNKNOWN, agent=UNKNOWN) == 1
    # The flag carries the session's agent and the compactor the detector blamed.
    assert (
        value(m, "flags_total", signal="repeated_tool_call", compactor="v2", agent="claude_code")
        == 1
    )
    lag_sum = value(m, "event_lag_seconds_sum")
    assert lag_sum == sum((now - e.ts).total_seconds() for e in events)


def test_event_lag_is_never_negative() -> None:
    m = build_metrics()
    m.observe_event(_event(1), now=T0 - timedelta(hours=1))
    assert value(m, "event_lag_seconds_sum") == 0
    assert value(m, "event_lag_seconds_count") == 1


def test_compactor_from_event_attrs_when_the_compaction_has_none() -> None:
    m = build_metrics()
    m.observe_event(
        _event(2, "compaction", compaction=Compaction(), attrs={"compactor": "c7", "agent": "pi"})
    )
    assert value(m, "compactions_total", compactor="c7", agent="pi") == 1


def _flag(**kw: object) -> Flag:
    fields: dict[str, object] = {
        "session_id": "s1",
        "signal": "restated_instruction",
        "turn": 9,
        "original_turn": 1,
        "compaction_turn": 5,
        "key": "k",
        "evidence": {},
        "event_id": "e9",
        "ts": T0,
    }
    fields.update(kw)
    return Flag(**fields)  # type: ignore[arg-type]


def test_flag_labels_fall_back_to_the_attrs_the_shell_passes() -> None:
    m = build_metrics()
    m.observe_flags([_flag()], {"compactor": "c3", "agent": "codex"})
    m.observe_flags([_flag(evidence={"compactor": "c4"}, attrs={"agent": "pi"})], {"agent": "x"})
    m.observe_flags([_flag()])
    sig = "restated_instruction"
    assert value(m, "flags_total", signal=sig, compactor="c3", agent="codex") == 1
    assert value(m, "flags_total", signal=sig, compactor="c4", agent="pi") == 1
    assert value(m, "flags_total", signal=sig, compactor=UNKNOWN, agent=UNKNOWN) == 1


def test_a_folded_version_lands_in_the_same_series_for_flags_and_compactions() -> None:
    """Ratios divide flags by compactions per version, so both must fold alike."""
    m = build_metrics(max_compactors=1)
    for compactor in ("v1", "v2"):
        for event in _session(compactor):
            m.observe_event(event)
        m.observe_flags(detect_all(_session(compactor)))
    assert value(m, "compactions_total", compactor="v1", agent=UNKNOWN) == 1
    assert value(m, "compactions_total", compactor=OTHER, agent=UNKNOWN) == 1
    sig = "repeated_tool_call"
    assert value(m, "flags_total", signal=sig, compactor="v1", agent="claude_code") == 1
    assert value(m, "flags_total", signal=sig, compactor=OTHER, agent="claude_code") == 1
    assert value(m, "compactions_total", compactor="v2", agent=UNKNOWN) is None


def test_dead_letter_reasons_are_bounded() -> None:
    m = build_metrics(max_reasons=4)  # three known reasons are pre-created
    for reason in ("schema", "weird", "odd", "schema"):
        m.observe_dead_letter(reason)
    assert value(m, "dead_letters_total", reason="schema") == 2
    assert value(m, "dead_letters_total", reason="weird") == 1
    assert value(m, "dead_letters_total", reason=OTHER) == 1


def test_shell_counters_and_gauges() -> None:
    m = build_metrics()
    m.observe_processing(0.003)
    m.observe_processing(-1.0)
    m.set_active_sessions(42)
    m.observe_sink_write(flags_written=7)
    m.observe_sink_error()
    m.observe_sink_retry()
    m.observe_sink_retry()
    m.observe_intake(5, now=T0)
    assert value(m, "processing_duration_seconds_count") == 2
    assert value(m, "processing_duration_seconds_sum") == pytest.approx(0.003)
    assert value(m, "processing_duration_seconds_bucket", le="0.005") == 2
    assert value(m, "active_sessions") == 42
    assert value(m, "sink_writes_total") == 1
    assert value(m, "sink_flags_written_total") == 7
    assert value(m, "sink_write_errors_total") == 1
    assert value(m, "sink_retries_total") == 2
    assert value(m, "intake_items_sampled_total") == 5
    assert value(m, "intake_last_sample_timestamp_seconds") == T0.timestamp()


def test_metrics_file_round_trips(tmp_path: Path) -> None:
    m = build_metrics()
    for event in _session("v9"):
        m.observe_event(event, now=T0)
    m.observe_flags(detect_all(_session("v9")))
    out = tmp_path / "replay.prom"
    write_metrics_file(m.registry, out)
    parsed = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(out.read_text())
        for s in fam.samples
    }
    assert parsed[(PREFIX + "events_consumed_total", (("kind", "tool_call"),))] == 2
    key = (
        PREFIX + "flags_total",
        (("agent", "claude_code"), ("compactor", "v9"), ("signal", "repeated_tool_call")),
    )
    assert parsed[key] == 1
    assert not list(tmp_path.glob("*.tmp*"))  # written atomically, nothing left behind


# --- Faust sensor -------------------------------------------------------------------------------


def test_faust_sensor_records_lag_commits_and_rebalances() -> None:
    faust = pytest.importorskip("faust")
    from faust.types import TP

    m = build_metrics()
    app = faust.App("test-metrics-sensor", broker="memory://", store="memory://")
    install_faust_sensor(app, m)
    monitor = app.monitor
    tp0, tp1 = TP("agent-events", 0), TP("agent-events", 1)

    monitor.track_tp_end_offset(tp0, 100)
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="0") is None
    monitor.on_tp_commit({tp0: 40, tp1: 5})
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="0") == 60
    monitor.track_tp_end_offset(tp0, 130)
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="0") == 90
    monitor.track_tp_end_offset(tp1, 5)
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="1") == 0
    monitor.on_tp_commit({tp0: 100})
    monitor.track_tp_end_offset(tp0, 130)  # every record of a fetch reports the same end
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="0") == 30

    state = monitor.on_commit_initiated(None)
    monitor.on_commit_completed(None, state)
    assert value(m, "consumer_commit_duration_seconds_count") == 1
    assert value(m, "consumer_commit_duration_seconds_sum") < 1.0  # seconds, not milliseconds

    monitor.on_rebalance_start(app)
    assert value(m, "consumer_rebalances_total") == 1
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="0") is None
    # Faust forgets offsets on a rebalance; the partition comes back at the same end, and its
    # first record after the next commit sets the lag again.
    monitor.on_tp_commit({tp0: 100})
    monitor.track_tp_end_offset(tp0, 130)
    assert value(m, "consumer_lag_messages", topic="agent-events", partition="0") == 30


# --- the per-event collectors ---------------------------------------------------------------------


def _samples(registry: CollectorRegistry) -> list[tuple[str, dict[str, str], float]]:
    return [
        (s.name, s.labels, s.value)
        for fam in registry.collect()
        for s in fam.samples
        if not s.name.endswith("_created")  # the plain-int collectors keep no creation time
    ]


@given(
    st.lists(
        st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
        | st.sampled_from([*PROCESSING_BUCKETS, *LAG_BUCKETS]),  # exactly on a bound
        max_size=50,
    )
)
def test_event_histogram_exposes_what_a_prometheus_histogram_does(values: list[float]) -> None:
    for buckets in (PROCESSING_BUCKETS, LAG_BUCKETS):
        ours, theirs = CollectorRegistry(), CollectorRegistry()
        fast = EventHistogram("h_seconds", "doc", buckets, ours)
        slow = Histogram("h_seconds", "doc", buckets=buckets, registry=theirs)
        for v in values:
            fast.observe(v)
            slow.observe(v)
        got, want = _samples(ours), _samples(theirs)
        assert [(n, lb) for n, lb, _ in got] == [(n, lb) for n, lb, _ in want]
        assert [v for *_, v in got] == pytest.approx([v for *_, v in want])


@given(st.lists(st.sampled_from(KINDS), max_size=50))
def test_event_counter_exposes_what_a_prometheus_counter_does(kinds: list[str]) -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    fast = EventCounter("c_total", "doc", "kind", KINDS, ours)
    slow = Counter("c_total", "doc", ["kind"], registry=theirs)
    for kind in KINDS:
        slow.labels(kind=kind)
    for kind in kinds:
        fast.inc(kind)
        slow.labels(kind=kind).inc()
    assert _samples(ours) == _samples(theirs)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(KINDS),
            st.integers(-3600, 10**6),
            st.floats(-1.0, 3.0, allow_nan=False),
        ),
        max_size=40,
    )
)
def test_observe_step_is_observe_event_then_observe_processing(
    steps: list[tuple[str, int, float]],
) -> None:
    now = T0 + timedelta(days=30)
    one, two = build_metrics(), build_metrics()
    for turn, (kind, age_s, seconds) in enumerate(steps):
        extra: dict[str, object] = {"text": "hi"} if kind.endswith("_message") else {}
        if kind == "tool_result":
            extra["tool"] = Tool(name="read")
        if kind == "compaction":
            extra["compaction"] = Compaction(compactor="v1")
        event = _event(turn, kind, ts=now - timedelta(seconds=age_s), **extra)
        one.observe_event(event, now=now)
        one.observe_processing(seconds)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("monitor.metrics.time.time", now.timestamp)
            two.observe_step(event, seconds)
    assert _samples(two.registry) == _samples(one.registry)
