"""``monitor`` end to end: replay the bundled examples into SQLite and Postgres, read them back."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from monitor.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions.jsonl.gz"
TRUTH = json.loads((ROOT / "examples" / "truth.json").read_text())


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.fixture(scope="module")
def example_replay(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("replay") / "m.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "monitor",
            "replay",
            str(EXAMPLES),
            "--db",
            f"sqlite:///{db}",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 3, out.stderr  # finished; the two bad example lines skipped
    assert "problems: 2 skipped" in out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    result["_db"] = f"sqlite:///{db}"
    return result


def test_replay_finds_every_injected_repeat_and_nothing_in_clean_sessions(
    example_replay: dict[str, Any],
) -> None:
    flags = example_replay["flags"]
    injected = {(t["session_id"], t["signal"], t["turn"]) for t in TRUTH["injected"]}
    repeats = {
        (f["session_id"], f["signal"], f["turn"])
        for f in flags
        if f["signal"] == "repeated_tool_call"
    }
    assert repeats == {t for t in injected if t[1] == "repeated_tool_call"}
    clean = {sid for sid, kind in TRUTH["kinds"].items() if kind in ("clean", "decoy")}
    assert [f for f in flags if f["session_id"] in clean] == []


def test_replay_finds_injected_restatements(example_replay: dict[str, Any]) -> None:
    got = {
        (f["session_id"], f["turn"], f["original_turn"], f["compaction_turn"])
        for f in example_replay["flags"]
        if f["signal"] == "restated_instruction"
    }
    want = {
        (t["session_id"], t["turn"], t["original_turn"], t["compaction_turn"])
        for t in TRUTH["injected"]
        if t["signal"] == "restated_instruction"
    }
    recall = len(got & want) / len(want)
    # The learned scorer finds 51 of the 58 (0.88); the misses are one near-verbatim shape
    # ("Stay on the X branch" / "Stay on X"), scored just under its threshold.
    assert recall >= 0.85, f"restatement recall on the examples {recall:.2f}"
    assert len(got - want) <= 0.05 * len(got), sorted(got - want)[:10]


def test_replay_summary_counts_and_reports_bad_lines(example_replay: dict[str, Any]) -> None:
    assert example_replay["sessions"] == TRUTH["sessions"]
    assert example_replay["problems"] == {"schema": 1, "not_json": 1}
    lines = [p["line"] for p in example_replay["problem_samples"]]
    assert lines == [example_replay["events"] + 1, example_replay["events"] + 2]
    assert sum(example_replay["flags_by_signal"].values()) == len(example_replay["flags"])
    for f in example_replay["flags"]:
        assert {
            "session_id",
            "signal",
            "turn",
            "original_turn",
            "compaction_turn",
            "evidence",
        } <= f.keys()


def test_stored_flags_equal_replayed_flags(
    example_replay: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    stored = run_json(capsys, "flags", "--db", example_replay["_db"], "--json")["flags"]
    assert stored == example_replay["flags"]
    sessions = run_json(capsys, "sessions", "--db", example_replay["_db"], "--json")["sessions"]
    assert {s["session_id"] for s in sessions} >= {f["session_id"] for f in stored}


@pytest.mark.postgres
def test_replay_into_postgres_is_idempotent(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a small slice of the examples, written twice, plus the same events from plain JSONL
    with gzip.open(EXAMPLES, "rt") as fh:
        lines = [next(fh) for _ in range(20000)]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(lines))
    assert main(["db", "upgrade", "--db", pg_url]) == 0
    first = run_json(capsys, "replay", str(part), "--db", pg_url, "--json")
    again = run_json(capsys, "replay", str(part), "--db", pg_url, "--json")
    assert first["flags"] == again["flags"]
    stored = run_json(capsys, "flags", "--db", pg_url, "--json")["flags"]
    assert stored == first["flags"] and stored
    one = stored[0]["session_id"]
    only = run_json(capsys, "flags", "--db", pg_url, "--session", one, "--json")["flags"]
    assert only and {f["session_id"] for f in only} == {one}


def test_replay_reads_stdin_and_plain_text_summary(tmp_path: Path) -> None:
    with gzip.open(EXAMPLES, "rt") as fh:
        data = "".join(next(fh) for _ in range(3000))
    out = subprocess.run(
        [sys.executable, "-m", "monitor", "replay", "-", "--db", f"sqlite:///{tmp_path}/x.db"],
        input=data + "{broken\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 3
    assert "events 3000" in out.stdout
    assert "<stdin>:3001: not_json" in out.stderr


def test_postgres_without_schema_says_how_to_fix(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["flags", "--db", pg_url]) == 1
    err = capsys.readouterr().err
    assert "monitor db upgrade" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["replay"],
        ["flags"],
        ["sessions"],
        ["db", "upgrade"],
        ["worker"],
        ["produce"],
        ["sample"],
        ["intake", "list"],
    ],
)
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0
    assert "usage: monitor" in capsys.readouterr().out


def test_replay_metrics_file_and_pushgateway(tmp_path: Path) -> None:
    """--metrics-out writes the run's counters; --push-gateway pushes the same registry."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    pushed: list[bytes] = []

    class Gateway(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            pushed.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with gzip.open(EXAMPLES, "rt") as fh:
            part = tmp_path / "part.jsonl"
            part.write_text("".join(next(fh) for _ in range(5000)))
        out = tmp_path / "m.prom"
        gateway = f"127.0.0.1:{server.server_address[1]}"
        argv = ["replay", str(part), "--dry-run", "--metrics-out", str(out)]
        assert main([*argv, "--push-gateway", gateway]) == 0
    finally:
        server.shutdown()
    text = out.read_text()
    consumed = sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("compaction_monitor_events_consumed_total{")
    )
    assert consumed == 5000
    assert len(pushed) == 1 and b"compaction_monitor_events_consumed_total" in pushed[0]
