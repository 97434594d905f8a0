"""Security and privacy: what the monitor stores, exports, exposes and logs.

* Evidence in Postgres and in ``monitor intake export`` files has secrets redacted and is cut.
* No session id, user id or free text in any metric label of a real worker's ``/metrics``, and
  every label's cardinality stays within its budget.
* The database password and the SASL password never appear in the worker's or the CLI's output.
* SQL goes through bound parameters: a hostile session id round-trips through replay and
  ``monitor flags --session``, and the tables survive it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from monitor.detect import DetectConfig
from monitor.events import Compaction, Event, Tool, encode
from monitor.metrics import MAX_AGENTS, MAX_COMPACTORS, MAX_LABEL_CHARS, MAX_REASONS
from monitor.stream.produce import produce_events
from monitor.testing import free_port, generate_events, start_worker, stop_pid, worker_env

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)  # Monday of ISO week 2026-W02
WEEK = "2026-W02"
DB_PASSWORD = "db-Pa55word-9f8e7d"
SASL_PASSWORD = "sasl-Pa55word-1a2b3c"
#: Secrets in the common forms redact.py covers; none may reach the store or an export.
SECRETS = {
    "openai": "sk-proj-Abcdefghijklmnop1234567890",
    "anthropic": "sk-ant-api03-ZyXwVuTsRqPoNmLk0987654321",
    "github": "ghp_0123456789abcdefghijABCDEFGHIJ",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXNpZw",
    "password": "hunter2-Very-Secret",
    "url": "s3cretUrlPw",
}
HOSTILE_ID = "x'); DROP TABLE flags;--"


def _psycopg(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def _with_password(url: str) -> str:
    return url.replace("postgres@", f"postgres:{DB_PASSWORD}@")


def _monitor(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MONITOR_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args],
        env=full, cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def secret_session(sid: str) -> list[Event]:
    """A session whose repeated call and restated instruction quote every secret, at length."""
    s = SECRETS
    args = {
        "cmd": f"curl -H 'Authorization: Bearer {s['bearer']}' https://api.example.com",
        "env": f"OPENAI_API_KEY={s['openai']} ANTHROPIC_API_KEY={s['anthropic']}",
        "more": f"token: {s['github']} aws {s['aws']} password={s['password']}",
        "db": f"postgresql://app:{s['url']}@db.internal:5432/prod",
        "padding": "z" * 5000,
    }
    said = f"Never commit the key {s['anthropic']}; use password={s['password']} only locally."

    def ev(turn: int, kind: Any, **kw: Any) -> Event:
        return Event(f"{sid}-{turn}", sid, turn, T0 + timedelta(minutes=turn), kind,
                     attrs={"agent": "claude_code", "user_id": "u-4711"}, **kw)  # fmt: skip

    return [
        ev(0, "user_message", text=said),
        ev(1, "tool_call", tool=Tool("Bash", args)),
        ev(2, "compaction", compaction=Compaction(compactor="c9")),
        ev(3, "tool_call", tool=Tool("Bash", args)),
        ev(4, "user_message", text=f"As I said: never commit the key {s['anthropic']}."),
        ev(5, "incident"),
    ]


def _write_jsonl(path: Path, events: list[Event]) -> Path:
    path.write_bytes(b"".join(encode(e) + b"\n" for e in events))
    return path


def _assert_clean(text: str, where: str) -> None:
    for name, secret in SECRETS.items():
        assert secret not in text, f"{name} secret leaked into {where}"


@pytest.mark.postgres
def test_evidence_is_redacted_and_cut_in_postgres_and_exports(pg_url: str, tmp_path: Path) -> None:
    env = {"MONITOR_DB_URL": pg_url}
    assert _monitor("db", "upgrade", env=env, cwd=tmp_path).returncode == 0
    log = _write_jsonl(tmp_path / "s.jsonl", secret_session("leaky") + secret_session("leaky2"))
    done = _monitor("replay", str(log), "--no-progress", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(_psycopg(pg_url)) as conn:
        rows = conn.execute("SELECT signal, evidence::text FROM flags").fetchall()
    assert {r[0] for r in rows} == {"repeated_tool_call", "restated_instruction"}
    limit = DetectConfig().evidence_chars
    for _, evidence in rows:
        _assert_clean(evidence, "flags.evidence")
        assert "[REDACTED]" in evidence
        for value in json.loads(evidence).values():
            assert not isinstance(value, str) or len(value) <= limit + 1
    done = _monitor("sample", "--week", WEEK, "--n", "5", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "export"
    done = _monitor("intake", "export", "--week", WEEK, "--status", "any", "--out", str(out),
                    env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = sorted(out.glob("*"))
    assert files, "nothing exported"
    for path in files:
        text = path.read_text()
        _assert_clean(text, str(path.name))
        assert "z" * 400 not in text  # long arguments are cut
    # With redaction off (a setting), the raw secret is stored: the test can tell the difference.
    off = {**env, "MONITOR_REDACT": "false"}
    raw = _write_jsonl(tmp_path / "raw.jsonl", secret_session("raw"))
    assert _monitor("replay", str(raw), "--no-progress", env=off, cwd=tmp_path).returncode == 0
    with psycopg.connect(_psycopg(pg_url)) as conn:
        (stored,) = conn.execute(
            "SELECT string_agg(evidence::text, ' ') FROM flags WHERE session_id = 'raw'"
        ).fetchone()  # type: ignore[misc]
    assert SECRETS["anthropic"] in stored


@pytest.mark.postgres
def test_sql_only_through_bound_parameters(pg_url: str, tmp_path: Path) -> None:
    env = {"MONITOR_DB_URL": pg_url}
    assert _monitor("db", "upgrade", env=env, cwd=tmp_path).returncode == 0
    events = [
        Event(f"{HOSTILE_ID}-{e.turn}", HOSTILE_ID, e.turn, e.ts, e.kind, e.text, e.tool,
              e.compaction, {"agent": "a'; DELETE FROM sessions;--"})
        for e in secret_session("ignored")
    ]  # fmt: skip
    log = _write_jsonl(tmp_path / "h.jsonl", events)
    done = _monitor("replay", str(log), "--no-progress", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = _monitor("flags", "--session", HOSTILE_ID, "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    flags = json.loads(done.stdout)["flags"]
    assert len(flags) == 2 and {f["session_id"] for f in flags} == {HOSTILE_ID}
    with psycopg.connect(_psycopg(pg_url)) as conn:
        assert conn.execute("SELECT count(*) FROM flags").fetchone() == (2,)
        assert conn.execute("SELECT session_id FROM sessions").fetchall() == [(HOSTILE_ID,)]
    none = _monitor("flags", "--session", "' OR '1'='1", "--json", env=env, cwd=tmp_path)
    assert json.loads(none.stdout)["flags"] == []


#: Label names the monitor's metrics may carry (``le`` is the histograms' bucket label).
ALLOWED_LABELS = {
    "kind", "compactor", "agent", "signal", "reason", "topic", "partition", "le",
    "class", "verdict",  # survival_items_total: fixed enums of four and five values
}  # fmt: skip


def _labels(page: str) -> dict[tuple[str, str], set[str]]:
    """(metric, label name) -> the distinct values on a text exposition page."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for line in page.splitlines():
        m = re.match(r"^(\w+)\{(.*)\} ", line)
        if m:
            for name, value in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)):
                out[(m.group(1), name)].add(value)
    return out


@pytest.mark.kafka
@pytest.mark.postgres
@pytest.mark.slow
def test_worker_metrics_and_logs_leak_nothing(
    tansu_broker: str, pg_schema_url: str, tmp_path: Path
) -> None:
    port = free_port()
    name = f"sec-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    secrets = {"sasl_username": "monitor", "sasl_password": SASL_PASSWORD}
    env = worker_env(tansu_broker, _with_password(pg_schema_url), name, web_port=str(port),
                     web_host="127.0.0.1", **secrets)  # fmt: skip
    # Many agents and compactors (beyond the label budgets), user ids and secrets in the events.
    events = generate_events(120, seed=71)
    events = [
        Event(e.event_id, e.session_id, e.turn, e.ts, e.kind, e.text, e.tool,
              Compaction(compactor=f"c-{i % 40}") if e.compaction else None,
              {"agent": f"agent-{i % 30}", "user_id": f"user-{i}"})
        for i, e in enumerate(events)
    ] + secret_session("leaky-worker")  # fmt: skip
    from monitor.config import load_settings

    proc = start_worker(env, tmp_path / "worker.log", cwd=tmp_path)
    try:
        produce_events(events, load_settings(env), batch=True)
        deadline = time.monotonic() + 90
        with psycopg.connect(_psycopg(pg_schema_url)) as conn:
            while conn.execute("SELECT count(*) FROM sessions WHERE session_id = 'leaky-worker'"
                               ).fetchone() != (1,):  # fmt: skip
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.5)
        base = f"http://127.0.0.1:{port}"
        page = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
        other: dict[str, str] = {}
        internals = ("/stats/", "/assignment/", "/router/", "/graph/", "/table/session-state/")
        for path in ("/", "/health", "/ready", *internals):
            try:
                other[path] = urllib.request.urlopen(base + path, timeout=5).read().decode()
            except urllib.error.HTTPError as exc:
                other[path] = f"HTTP {exc.code}"
    finally:
        stop_pid(proc, timeout_s=15.0)

    labels = _labels(page)
    assert labels, page[:500]
    assert {label for _, label in labels} <= ALLOWED_LABELS, sorted(labels)
    budgets = {"agent": MAX_AGENTS, "compactor": MAX_COMPACTORS, "reason": MAX_REASONS}
    texts = {e.text for e in events if e.text}
    ids = {e.session_id for e in events} | {e.event_id for e in events}
    users = {e.attrs.get("user_id") for e in events}
    for (metric, label), values in labels.items():
        if label in budgets:  # each budget plus the shared "other" and "unknown" values
            assert len(values) <= budgets[label] + 2, (metric, label, len(values))
        for value in values:
            assert len(value) <= MAX_LABEL_CHARS
            assert value not in ids and value not in users and value not in texts, (metric, value)
    assert "other" in labels[("compaction_monitor_flags_total", "agent")]
    # Only our pages are served: Faust's table, router, graph and stats views are off.
    assert all(other[path] == "HTTP 404" for path in internals), other
    # No page the worker serves shows a session or its text.
    for path, body in [("/metrics", page), *other.items()]:
        assert not any(sid in body for sid in ("leaky-worker", events[0].session_id)), path
        _assert_clean(body, path)
    # The passwords never reach the worker's log (its whole stdout and stderr).
    text = (tmp_path / "worker.log").read_text(errors="replace")
    assert "[^Worker]: Ready" in text
    # The settings are logged at start (so the check below reads them), secrets masked.
    assert "starting worker with settings" in text and "sasl_username" in text
    assert DB_PASSWORD not in text and SASL_PASSWORD not in text


@pytest.mark.postgres
def test_cli_never_prints_credentials(pg_url: str, tmp_path: Path) -> None:
    url = _with_password(pg_url)
    env = {"MONITOR_DB_URL": url, "MONITOR_SASL_USERNAME": "monitor",
           "MONITOR_SASL_PASSWORD": SASL_PASSWORD}  # fmt: skip
    log = _write_jsonl(tmp_path / "s.jsonl", secret_session("cli"))
    runs = [
        _monitor("db", "upgrade", env=env, cwd=tmp_path),
        _monitor("replay", str(log), "--no-progress", env=env, cwd=tmp_path),
        _monitor("flags", env=env, cwd=tmp_path),
        _monitor("sessions", "--json", env=env, cwd=tmp_path),
        # Failures print errors: a missing database, and an unreachable broker.
        _monitor("flags", env={**env, "MONITOR_DB_URL": url.rsplit("/", 1)[0] + "/nope_db"},
                 cwd=tmp_path),
        _monitor("produce", str(log), env={**env, "MONITOR_BROKER": f"127.0.0.1:{free_port()}",
                 "MONITOR_SECURITY_PROTOCOL": "SASL_PLAINTEXT"}, cwd=tmp_path),
    ]  # fmt: skip
    assert [r.returncode == 0 for r in runs] == [True] * 4 + [False] * 2
    assert "nope_db" in runs[4].stderr
    for r in runs:
        for stream in (r.stdout, r.stderr):
            assert DB_PASSWORD not in stream and SASL_PASSWORD not in stream, r.args
