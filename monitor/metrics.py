"""Every Prometheus metric of the monitor, spelled once and built on a registry the caller gives.

The shells (Faust worker, ``monitor replay``) count what the pure core returns: they call the plain
``observe_*`` methods of ``Metrics`` after each step, so detectors never touch metrics and tests
pass a fresh ``CollectorRegistry``. Naming follows Prometheus practice: one prefix, base units
(seconds), ``_total`` on counters, and no session or user ids in labels (those live in Postgres).
Label values that come from producers (compactor version, agent, dead-letter reason) go through a
``LabelFolder`` so a misbehaving producer cannot blow up the series count.

The alerting rules in ``deploy/prometheus/rules.yml`` and the dashboard in ``deploy/grafana/`` use
these names; ``tests/deploy/`` checks they exist.
"""

from __future__ import annotations

import bisect
import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    push_to_gateway,
    write_to_textfile,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import INF, floatToGoString

from monitor.detect import CHECK_CELLS
from monitor.detect.session import Meta
from monitor.events import KINDS, Event
from monitor.flags import Flag

if TYPE_CHECKING:
    import faust

PREFIX: Final = "compaction_monitor_"

#: The metric names, without ``PREFIX``. Counters keep ``_total`` here as they are exposed.
MetricName = Literal[
    # Events decoded and handed to the core, by ``kind``.
    "events_consumed_total",
    # Compaction events, by compactor version and agent.
    "compactions_total",
    # Flags raised, by signal, compactor version and agent.
    "flags_total",
    "survival_items_total",
    # Records that could not be decoded and went to the dead-letter topic, by reason.
    "dead_letters_total",
    # Wall time of one core step (decode to flags) in the shell.
    "processing_duration_seconds",
    # Shell clock minus event timestamp when the event is processed.
    "event_lag_seconds",
    # Sessions currently held in detector state.
    "active_sessions",
    # Flag batches written to the store / failed write attempts / retried attempts.
    "sink_writes_total",
    "sink_write_errors_total",
    "sink_retries_total",
    # Flags written to the store (duplicates included: the store ignores them).
    "sink_flags_written_total",
    # Items put on the weekly review intake, and when the last sample ran (unix seconds).
    "intake_items_sampled_total",
    "intake_last_sample_timestamp_seconds",
    # Kafka consumer: end offset minus committed offset, per input partition.
    "consumer_lag_messages",
    # Kafka consumer group rebalances this worker took part in.
    "consumer_rebalances_total",
    # Time from commit start to commit done.
    "consumer_commit_duration_seconds",
]

#: Label values folded in when a label's budget of distinct values is spent.
OTHER: Final = "other"
#: Label value for a missing or empty attribute.
UNKNOWN: Final = "unknown"
#: Longest label value kept; longer ones are cut (then counted against the budget as cut).
MAX_LABEL_CHARS: Final = 64

#: Default budgets of distinct label values before folding into ``other``.
MAX_COMPACTORS: Final = 16
MAX_AGENTS: Final = 8
MAX_REASONS: Final = 16

#: Dead-letter reasons ``monitor.events`` raises; pre-created so their rate is 0, not absent.
KNOWN_REASONS: Final = ("oversized", "not_json", "schema")

PROCESSING_BUCKETS: Final = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip
LAG_BUCKETS: Final = (
    0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 14400.0, 86400.0,
)  # fmt: skip
COMMIT_BUCKETS: Final = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def metric_name(name: MetricName) -> str:
    """The full exposed name of a metric (with ``PREFIX``)."""
    return PREFIX + name


class LabelFolder:
    """Keep the first ``limit`` distinct values of a label; fold every later one into ``other``.

    First come, first kept: a version seen before the budget ran out keeps its own series for the
    life of the process, so its rate stays continuous. Shared by every metric that carries the
    label, so a value maps to the same series in numerator and denominator of a ratio.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._kept: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, value: str | None) -> str:
        if not value:
            return UNKNOWN
        value = value[:MAX_LABEL_CHARS]
        if value in self._kept or value in (UNKNOWN, OTHER):
            return value
        with self._lock:
            if value in self._kept:
                return value
            if len(self._kept) >= self.limit:
                return OTHER
            self._kept.add(value)
            return value

    @property
    def kept(self) -> frozenset[str]:
        return frozenset(self._kept)


class EventCounter(Collector):
    """A counter by one label whose values are all known up front (the event kinds), kept as
    plain ints and read by the registry at scrape time.

    The per-event series are updated once per event. prometheus_client's ``Counter.inc`` and
    ``Histogram.observe`` (which walks its buckets in Python) take a lock per update: with
    them, the metrics cost 5.3-6.6 us per event in the shell, about half of a detection step;
    as plain ints, 0.5-1.8 us. The shells update them from one thread (the event loop, or
    ``monitor replay``'s loop) and a scrape only reads, so plain ints stay exact.
    """

    def __init__(
        self, name: str, doc: str, label: str, values: Iterable[str], registry: CollectorRegistry
    ) -> None:
        self.name, self.doc, self.label = name, doc, label
        self.counts: dict[str, int] = dict.fromkeys(values, 0)
        registry.register(self)

    def inc(self, value: str) -> None:
        self.counts[value] += 1

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.doc, labels=[self.label])
        for value, count in list(self.counts.items()):
            family.add_metric([value], count)
        yield family


class EventHistogram(Collector):
    """A histogram kept as per-bucket plain ints (one bisect per observation), read by the
    registry at scrape time: a per-event series, observed from one thread (see
    ``EventCounter``)."""

    def __init__(
        self, name: str, doc: str, buckets: tuple[float, ...], registry: CollectorRegistry
    ) -> None:
        self.name, self.doc = name, doc
        self.bounds = tuple(float(b) for b in buckets)
        self.counts = [0] * (len(self.bounds) + 1)  # the last is +Inf
        self.sum = 0.0
        registry.register(self)

    def observe(self, value: float) -> None:
        # bisect_left: the first bound >= value, as "le" buckets count.
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def collect(self) -> Iterator[Metric]:
        counts, total = list(self.counts), self.sum
        cumulative, buckets = 0, []
        for bound, count in zip((*self.bounds, INF), counts, strict=True):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))  # type: ignore[no-untyped-call]
        yield HistogramMetricFamily(self.name, self.doc, buckets=buckets, sum_value=total)


def _compactor_of(flag: Flag, attrs: Mapping[str, str]) -> str | None:
    # The detector records the compactor it blames in the evidence; session attrs are a fallback.
    blamed = flag.evidence.get("compactor")
    if isinstance(blamed, str) and blamed:
        return blamed
    return flag.attrs.get("compactor") or attrs.get("compactor")


class Metrics:
    """The monitor's metrics on one registry, and the calls the shells make after each step."""

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        max_compactors: int = MAX_COMPACTORS,
        max_agents: int = MAX_AGENTS,
        max_reasons: int = MAX_REASONS,
    ) -> None:
        self.registry = registry
        self.compactors = LabelFolder(max_compactors)
        self.agents = LabelFolder(max_agents)
        self.reasons = LabelFolder(max_reasons)

        def counter(name: MetricName, doc: str, labels: Iterable[str] = ()) -> Counter:
            return Counter(metric_name(name), doc, tuple(labels), registry=registry)

        def gauge(name: MetricName, doc: str, labels: Iterable[str] = ()) -> Gauge:
            return Gauge(metric_name(name), doc, tuple(labels), registry=registry)

        def histogram(name: MetricName, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(metric_name(name), doc, registry=registry, buckets=buckets)

        self.events = EventCounter(
            metric_name("events_consumed_total"), "Events decoded and processed.", "kind", KINDS,
            registry,
        )  # fmt: skip
        self.compactions = counter(
            "compactions_total", "Compaction events.", ["compactor", "agent"]
        )
        self.flags = counter(
            "flags_total", "Flags raised by the detectors.", ["signal", "compactor", "agent"]
        )
        self.survival = counter(
            "survival_items_total",
            "Ledger items checked at compactions, by compactor, item class and verdict "
            "(verbatim, supported, absent, contradicted; unchecked: no summary text).",
            ["compactor", "class", "verdict"],
        )
        self.dead_letters = counter(
            "dead_letters_total", "Records dead-lettered because they could not be decoded.",
            ["reason"],
        )  # fmt: skip
        # The two per-event histograms: see ``EventHistogram``.
        self.processing = EventHistogram(
            metric_name("processing_duration_seconds"), "Wall time of one detection step.",
            PROCESSING_BUCKETS, registry,
        )  # fmt: skip
        self.event_lag = EventHistogram(
            metric_name("event_lag_seconds"), "Processing time minus event timestamp.",
            LAG_BUCKETS, registry,
        )  # fmt: skip
        self.active_sessions = gauge("active_sessions", "Sessions held in detector state.")
        self.sink_writes = counter("sink_writes_total", "Flag batches written to the store.")
        self.sink_errors = counter("sink_write_errors_total", "Failed flag batch writes.")
        self.sink_retries = counter("sink_retries_total", "Retried flag batch writes.")
        self.sink_flags = counter("sink_flags_written_total", "Flags written to the store.")
        self.intake_sampled = counter(
            "intake_items_sampled_total", "Sessions put on the weekly review intake."
        )
        self.intake_last = gauge(
            "intake_last_sample_timestamp_seconds",
            "Unix time of the newest intake sample known: run here or found in the store.",
        )
        self._intake_last_s = 0.0
        self.consumer_lag = gauge(
            "consumer_lag_messages", "End offset minus committed offset of an input partition.",
            ["topic", "partition"],
        )  # fmt: skip
        self.rebalances = counter("consumer_rebalances_total", "Consumer group rebalances.")
        self.commit_duration = histogram(
            "consumer_commit_duration_seconds", "Offset commit latency.", COMMIT_BUCKETS
        )
        # Pre-create bounded children so rates read 0 rather than "no data" before the first one.
        for reason in KNOWN_REASONS:
            self.dead_letters.labels(reason=self.reasons(reason))

    # --- detection shell --------------------------------------------------------------------

    def observe_event(self, event: Event, now: datetime | None = None) -> None:
        """Count one decoded event (and a compaction, if it is one); record its event-time lag."""
        self.events.inc(event.kind)  # a decoded event's kind is one of KINDS
        if event.kind == "compaction":
            compactor = (event.compaction.compactor if event.compaction else None) or (
                event.attrs.get("compactor")
            )
            self.compactions.labels(
                compactor=self.compactors(compactor), agent=self.agents(event.attrs.get("agent"))
            ).inc()
        now_s = now.timestamp() if now is not None else time.time()
        self.event_lag.observe(max(0.0, now_s - event.ts.timestamp()))

    def observe_flags(self, flags: Iterable[Flag], attrs: Mapping[str, str] | None = None) -> None:
        """Count flags by signal, compactor version and agent.

        ``attrs`` are the session's attributes as the shell knows them; they fill in a
        ``compactor`` or ``agent`` the flag itself does not carry.
        """
        attrs = attrs or {}
        for flag in flags:
            self.flags.labels(
                signal=flag.signal,
                compactor=self.compactors(_compactor_of(flag, attrs)),
                agent=self.agents(flag.attrs.get("agent") or attrs.get("agent")),
            ).inc()

    def observe_processing(self, seconds: float) -> None:
        self.processing.observe(max(0.0, seconds))

    def observe_check(self, meta: Meta) -> None:
        """Count the items the latest compaction checked (``Meta.last_check``): call after the
        step of a compaction event."""
        counts = meta.last_check
        if not counts:
            return
        compactor = self.compactors(meta.compactor)
        for (cls, verdict), at in CHECK_CELLS.items():
            if counts[at]:
                self.survival.labels(compactor=compactor, **{"class": cls}, verdict=verdict).inc(
                    counts[at]
                )

    def observe_step(self, event: Event, seconds: float) -> None:
        """``observe_event`` then ``observe_processing``, in the one call the detect agent
        makes per event (each Python call there costs as much as the update it makes)."""
        if event.kind == "compaction":
            self.observe_event(event)
        else:
            self.events.counts[event.kind] += 1
            lag = self.event_lag
            lag_s = max(0.0, time.time() - event.ts.timestamp())
            lag.counts[bisect.bisect_left(lag.bounds, lag_s)] += 1
            lag.sum += lag_s
        step = self.processing
        seconds = max(0.0, seconds)
        step.counts[bisect.bisect_left(step.bounds, seconds)] += 1
        step.sum += seconds

    def observe_dead_letter(self, reason: str) -> None:
        self.dead_letters.labels(reason=self.reasons(reason)).inc()

    def set_active_sessions(self, count: int) -> None:
        self.active_sessions.set(count)

    # --- sink and intake --------------------------------------------------------------------

    def observe_sink_write(self, flags_written: int) -> None:
        """One batch reached the store."""
        self.sink_writes.inc()
        self.sink_flags.inc(flags_written)

    def observe_sink_error(self) -> None:
        self.sink_errors.inc()

    def observe_sink_retry(self) -> None:
        self.sink_retries.inc()

    def observe_intake(self, sampled: int, now: datetime | None = None) -> None:
        self.intake_sampled.inc(sampled)
        self.note_intake_sample((now or datetime.now(UTC)).timestamp())

    def note_intake_sample(self, at: float) -> None:
        """A sample known to have run at ``at`` (unix seconds): the gauge shows the newest,
        so one read from the store after a restart never moves it back."""
        self._intake_last_s = max(self._intake_last_s, at)
        self.intake_last.set(self._intake_last_s)

    # --- Kafka consumer (called by the Faust sensor) -----------------------------------------

    def set_consumer_lag(self, topic: str, partition: int, messages: int) -> None:
        self.consumer_lag.labels(topic=topic, partition=str(partition)).set(max(0, messages))

    def clear_consumer_lag(self) -> None:
        """Forget per-partition lag: after a rebalance this worker may own other partitions."""
        self.consumer_lag.clear()

    def remove_consumer_lag(self, topic: str, partition: int) -> None:
        """Forget one partition's lag (the sink process's, after its group rebalanced)."""
        with contextlib.suppress(KeyError):
            self.consumer_lag.remove(topic, str(partition))

    def observe_rebalance(self) -> None:
        self.rebalances.inc()

    def observe_commit(self, seconds: float) -> None:
        self.commit_duration.observe(max(0.0, seconds))


def build_metrics(registry: CollectorRegistry | None = None, **budgets: int) -> Metrics:
    """Build every metric on ``registry`` (a fresh one if omitted); ``budgets`` as ``Metrics``."""
    return Metrics(registry if registry is not None else CollectorRegistry(), **budgets)


# --- exposition --------------------------------------------------------------------------------


def exposition(registry: CollectorRegistry) -> tuple[bytes, str]:
    """The registry in text exposition format and its content type, for a ``/metrics`` page."""
    return generate_latest(registry), CONTENT_TYPE_LATEST


def write_metrics_file(registry: CollectorRegistry, path: str | Path) -> None:
    """Write the registry to ``path`` (text format, replaced atomically) for batch runs.

    The file suits node_exporter's textfile collector or a later ``promtool`` check.
    """
    write_to_textfile(str(path), registry)


def push_metrics(
    registry: CollectorRegistry, gateway: str, job: str = "compaction_monitor_replay"
) -> None:
    """Push the registry to a Pushgateway (``host:port`` or URL), replacing ``job``'s group."""
    push_to_gateway(gateway, job=job, registry=registry)


# --- Faust sensor ------------------------------------------------------------------------------


def install_faust_sensor(app: faust.App, metrics: Metrics) -> None:
    """Make ``app``'s monitor also record consumer lag, rebalances and commit latency (seconds).

    Call before the app starts: Faust registers ``app.monitor`` as a sensor when it starts, and
    offsets reach only that monitor. Faust's own ``setup_prometheus_sensors`` is not used: it
    observes latencies in milliseconds and names metrics after the app, not our prefix.
    """
    from faust.sensors.monitor import Monitor

    class OnCallMonitor(Monitor):
        """Faust's in-memory monitor, plus the few series on-call needs.

        Its per-message, per-event and per-table-key statistics feed only Faust's own /stats
        pages, which the worker does not serve; Faust calls them for every record (about 3% of
        the worker's main thread on batch records, py-spy), so they do nothing here.
        """

        def on_message_in(self, tp: Any, offset: int, message: Any) -> None:
            pass

        def on_stream_event_in(self, tp: Any, offset: int, stream: Any, event: Any) -> None:
            return None

        def on_stream_event_out(
            self, tp: Any, offset: int, stream: Any, event: Any, state: Any = None
        ) -> None:
            pass

        def on_message_out(self, tp: Any, offset: int, message: Any) -> None:
            pass

        def on_table_get(self, table: Any, key: Any) -> None:
            pass

        def on_table_set(self, table: Any, key: Any, value: Any) -> None:
            pass

        def on_table_del(self, table: Any, key: Any) -> None:
            pass

        def track_tp_end_offset(self, tp: Any, offset: int) -> None:
            # Faust calls this for every record it hands on; the end moves once per fetch.
            # (Faust's own record of the ends is emptied on a rebalance, as the gauge is.)
            if self.tp_end_offsets.get(tp) == offset:
                return
            super().track_tp_end_offset(tp, offset)
            self._update_lag(tp)

        def on_tp_commit(self, tp_offsets: Any) -> None:
            super().on_tp_commit(tp_offsets)
            for tp in tp_offsets:
                self._update_lag(tp)

        def _update_lag(self, tp: Any) -> None:
            # Both are "next offset": the end offset to be written, the committed one to be read.
            end = self.tp_end_offsets.get(tp)
            committed = self.tp_committed_offsets.get(tp)
            if end is not None and committed is not None:
                metrics.set_consumer_lag(tp.topic, tp.partition, end - committed)

        def on_commit_completed(self, consumer: Any, state: Any) -> None:
            super().on_commit_completed(consumer, state)
            metrics.observe_commit(self.time() - float(state))

        def on_rebalance_start(self, app: Any) -> dict[Any, Any]:
            state: dict[Any, Any] = super().on_rebalance_start(app)
            metrics.observe_rebalance()
            metrics.clear_consumer_lag()
            return state

    app.monitor = OnCallMonitor()
