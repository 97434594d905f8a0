"""A real Prometheus scrapes a real worker's ``/metrics`` while a flag spike flows through Kafka.

The worker (``python -m monitor.stream``, as ``monitor worker`` runs it) consumes from a local
Tansu broker and writes to a fresh Postgres database; its web port serves ``monitor.metrics`` on
loopback. Prometheus (the Debian binary, temp config and data dir) runs a copy of the shipped
rules with windows shortened from minutes and days to seconds. The test shows the recorded
flags-per-compaction ratio rising and FlagRateSpike going pending, then firing. The shipped rules
themselves are tested by promtool (tests/deploy/).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from monitor.config import load_settings
from monitor.events import Compaction, Event, Tool, encode_batch
from monitor.stream.topics import ensure_topics
from monitor.testing import free_port, start_worker, stop_pid, worker_env

pytestmark = [pytest.mark.prometheus, pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "rules.yml"
#: Shipped windows -> test windows. Every pattern must occur, so a rules change shows up here.
SHORTER = {
    "[1d] offset 1h)": "[25s] offset 10s)",
    "[5m]": "[10s]",
    "[10m]": "[10s]",
    "[15m]": "[10s]",
    "[30m]": "[10s]",
    "[1h]": "[20s]",
    "for: 15m": "for: 4s",
    "for: 30m": "for: 4s",
    "for: 10m": "for: 4s",
}
SESSIONS_PER_S = 10
NORMAL_S = 35.0  # long enough to fill the shortened baseline window
SPIKE_LIMIT_S = 60.0
WORKER_READY_S = 60.0


def shortened_rules() -> str:
    text = RULES.read_text()
    for old, new in SHORTER.items():
        assert old in text, f"{old!r} no longer in rules.yml: update the test windows"
        text = text.replace(old, new)
    return text


def session_record(n: int, repeat: bool) -> tuple[bytes, bytes]:
    """One session as a batch record: a call, a compaction, then the same call again or not."""
    sid, now = f"it-{n}", datetime.now(UTC)
    again = {"path": f"src/{n}.py"} if repeat else {"path": f"src/{n}-other.py"}

    def event(turn: int, kind: str, **kw: Any) -> Event:
        return Event(
            event_id=f"{sid}-{turn}", session_id=sid, turn=turn, ts=now, kind=kind,  # type: ignore[arg-type]
            attrs={"agent": "claude_code"}, **kw,
        )  # fmt: skip

    events = [
        event(1, "tool_call", tool=Tool(name="read", arguments={"path": f"src/{n}.py"})),
        event(2, "compaction", compaction=Compaction(compactor="v1")),
        event(3, "tool_call", tool=Tool(name="read", arguments=again)),
    ]
    return sid.encode(), encode_batch(events)


def produce(bootstrap: str, topic: str, spike_at: float, stop: threading.Event) -> None:
    """Ten sessions a second; one in ten repeats a call, all of them once the spike starts."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    n, start = 0, time.monotonic()
    try:
        while not stop.is_set() and time.monotonic() - start < NORMAL_S + SPIKE_LIMIT_S:
            spiking = time.monotonic() >= spike_at
            for _ in range(SESSIONS_PER_S // 2):
                key, value = session_record(n, repeat=spiking or n % 10 == 0)
                producer.send(topic, key=key, value=value)
                n += 1
            producer.flush(timeout=10)
            stop.wait(0.5)
    finally:
        producer.close(timeout=5)


class Prometheus:
    def __init__(self, binary: str, workdir: Path, target: str) -> None:
        (workdir / "rules.yml").write_text(shortened_rules())
        (workdir / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "rule_files: [rules.yml]\n"
            "scrape_configs:\n"
            "  - job_name: compaction-monitor\n"
            f"    static_configs: [{{targets: ['{target}']}}]\n"
        )
        self.port = free_port()
        self.log = workdir / "prometheus.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    binary,
                    f"--config.file={workdir / 'prometheus.yml'}",
                    f"--storage.tsdb.path={workdir / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--storage.tsdb.retention.time=1h",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def get(self, path: str) -> Any:
        url = f"http://127.0.0.1:{self.port}{path}"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response) if path.startswith("/api") else response.read()

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited:\n{self.log.read_text()[-2000:]}")
            try:
                self.get("/-/ready")
                return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("prometheus not ready")

    def query(self, expr: str) -> list[dict[str, Any]]:
        body = self.get("/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def stop(self) -> None:
        stop_pid(self.process)  # type: ignore[arg-type]


def wait_for_metrics(port: int, worker: subprocess.Popen[bytes], log: Path) -> None:
    """Until the worker serves /metrics with our metrics (it joins its group first)."""
    deadline = time.monotonic() + WORKER_READY_S
    while time.monotonic() < deadline:
        assert worker.poll() is None, log.read_text(errors="replace")[-3000:]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                if b"compaction_monitor_events_consumed_total" in resp.read():
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail("worker did not serve /metrics:\n" + log.read_text(errors="replace")[-3000:])


def test_spike_raises_the_recorded_ratio_and_fires_the_alert(
    tansu_broker: str, pg_schema_url: str, unique_name: Callable[[str], str], tmp_path: Path
) -> None:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus not installed (Debian package `prometheus`)")
    web_port = free_port()
    env = worker_env(
        tansu_broker, pg_schema_url, unique_name("prom"), partitions=2,
        web_port=str(web_port), web_host="127.0.0.1",
    )  # fmt: skip
    settings = load_settings(env)
    ensure_topics(settings, [settings.input_topic])
    worker_log = tmp_path / "worker.log"
    worker = start_worker(env, worker_log, cwd=tmp_path)
    prometheus: Prometheus | None = None
    stop = threading.Event()
    producer: threading.Thread | None = None
    ratio = (
        'signal:compaction_monitor_flags_per_compaction:ratio_rate5m{signal="repeated_tool_call"}'
    )
    alert = 'ALERTS{alertname="FlagRateSpike"}'
    before: list[float] = []
    after: list[float] = []
    states_seen: list[str] = []
    try:
        wait_for_metrics(web_port, worker, worker_log)
        prometheus = Prometheus(binary, tmp_path, f"127.0.0.1:{web_port}")
        prometheus.wait_ready()
        spike_at = time.monotonic() + NORMAL_S
        producer = threading.Thread(
            target=produce, args=(tansu_broker, settings.input_topic, spike_at, stop), daemon=True
        )
        producer.start()
        while time.monotonic() < spike_at:
            before += [float(s["value"][1]) for s in prometheus.query(ratio)]
            assert not prometheus.query(alert), "alert fired before the spike"
            time.sleep(1.0)
        deadline = time.monotonic() + SPIKE_LIMIT_S
        while time.monotonic() < deadline and "firing" not in states_seen:
            after += [float(s["value"][1]) for s in prometheus.query(ratio)]
            for sample in prometheus.query(alert):
                assert sample["metric"]["signal"] == "repeated_tool_call"
                state = sample["metric"]["alertstate"]
                if not states_seen or states_seen[-1] != state:
                    states_seen.append(state)
            time.sleep(0.5)
        lag = prometheus.query(
            f'compaction_monitor_consumer_lag_messages{{topic="{settings.input_topic}"}}'
        )
        compactions = prometheus.query("sum(compaction_monitor_compactions_total)")
    finally:
        stop.set()
        if producer is not None:
            producer.join(timeout=15)
        if prometheus is not None:
            prometheus.stop()
        stop_pid(worker, timeout_s=15.0)

    print(
        f"compactions counted: {compactions[0]['value'][1] if compactions else None};"
        f" ratio before spike: max {max(before, default=0):.3f} ({len(before)} samples);"
        f" after: max {max(after, default=0):.3f}; alert: {states_seen};"
        f" lag series: {len(lag)}"
    )
    assert before and after, "Prometheus recorded no ratio"
    assert 0.05 <= max(before) <= 0.2  # one session in ten repeats a call
    assert max(after) >= 3 * max(before)  # heading for 1.0: every session repeats
    assert states_seen == ["pending", "firing"]
    # The Faust sensor's series reach Prometheus too, one per input partition.
    assert {s["metric"]["partition"] for s in lag} == {"0", "1"}
