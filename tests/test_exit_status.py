"""Exit statuses and errors as scripts see them: ``python -m monitor`` in a scratch directory.

0 everything read, 1 fatal, 2 usage, 3 finished with lines or files skipped; every foreseeable
error is one line on stderr with no traceback (``--debug`` shows it).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from monitor.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions.jsonl.gz"
EVENT = {
    "event_id": "e1",
    "session_id": "s1",
    "turn": 1,
    "ts": "2026-12-01T10:00:00Z",
    "kind": "user_message",
    "text": "Never push to main.",
}


def monitor(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MONITOR_")}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
    )


def one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    """stderr is exactly one ``error:`` line naming each needle, and no traceback."""
    err = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in err if line.startswith("error:")]
    assert errors, done.stderr
    for needle in needles:
        assert needle in done.stderr, (needle, done.stderr)


def good_log(path: Path) -> Path:
    path.write_text(json.dumps(EVENT) + "\n")
    return path


def test_a_clean_read_exits_0(tmp_path: Path) -> None:
    done = monitor("replay", str(good_log(tmp_path / "ok.jsonl")), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "events 1" in done.stdout and done.stderr == ""


def test_missing_path_is_fatal_and_creates_no_database(tmp_path: Path) -> None:
    done = monitor("replay", "missing.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    one_line_error(done, "missing.jsonl", "no such file")
    assert not (tmp_path / "monitor.db").exists()


def test_a_missing_path_beside_a_good_one_still_fails_the_run(tmp_path: Path) -> None:
    done = monitor("replay", str(good_log(tmp_path / "ok.jsonl")), "missing.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "events 1" in done.stdout  # the good input was processed and stored
    assert "missing.jsonl" in done.stderr and "Traceback" not in done.stderr


def test_glob_matching_nothing_is_fatal(tmp_path: Path) -> None:
    done = monitor("replay", str(tmp_path / "logs" / "*.jsonl.gz"), cwd=tmp_path)
    assert done.returncode == 1
    one_line_error(done, "no file matches the pattern")


def test_empty_directory_is_fatal(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a log\n")
    done = monitor("replay", "empty", cwd=tmp_path)
    assert done.returncode == 1
    one_line_error(done, "empty", "no *.jsonl")
    assert not (tmp_path / "monitor.db").exists()


def test_unknown_format_skips_the_file(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": "world"}\n')
    alone = monitor("replay", str(odd), cwd=tmp_path)
    assert alone.returncode == 1  # nothing at all could be processed
    assert "unknown_format" in alone.stderr and "Traceback" not in alone.stderr
    mixed = monitor("replay", str(odd), str(good_log(tmp_path / "ok.jsonl")), cwd=tmp_path)
    assert mixed.returncode == 3, mixed.stderr
    assert "odd.jsonl: unknown_format" in mixed.stderr


def test_truncated_gzip_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    lines = [json.dumps({**EVENT, "event_id": f"e{i}", "turn": i}) for i in range(1, 2001)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    done = monitor("replay", str(cut), "--json", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "cut.jsonl.gz: cut_short" in done.stderr and "Traceback" not in done.stderr
    assert 0 < json.loads(done.stdout)["events"] < 2000


def test_bad_lines_exit_3_with_counts_on_stderr(tmp_path: Path) -> None:
    log = good_log(tmp_path / "ok.jsonl")
    with log.open("a") as fh:
        fh.write("{broken\n")
    done = monitor("replay", str(log), cwd=tmp_path)
    assert done.returncode == 3
    assert "problems: 1 skipped {'not_json': 1}" in done.stderr
    assert f"{log}:2: not_json" in done.stderr
    assert "problems" not in done.stdout


@pytest.mark.parametrize(
    ("url", "needles"),
    [
        ("notaurl", ["'notaurl' is not a database URL", "--db"]),
        ("mysqlx://h/db", ["unsupported database URL", "--db"]),
    ],
)
def test_malformed_database_url_is_one_line(tmp_path: Path, url: str, needles: list[str]) -> None:
    for args in (("flags",), ("sessions",), ("db", "upgrade"), ("replay", "-")):
        done = monitor(*args, "--db", url, cwd=tmp_path, stdin="")
        assert done.returncode == 1, (args, done.stderr)
        one_line_error(done, *needles)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_refused_postgres_is_one_line_without_the_password(tmp_path: Path) -> None:
    url = "postgresql://monitor:hunter2@127.0.0.1:1/monitor"
    for args in (("flags",), ("db", "upgrade"), ("replay", "-")):
        done = monitor(*args, "--db", url, cwd=tmp_path, stdin=json.dumps(EVENT) + "\n")
        assert done.returncode == 1, done.stderr
        one_line_error(done, "cannot use the database", "127.0.0.1:1", "MONITOR_DB_URL")
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "hunter2" not in done.stderr


def test_produce_checks_its_inputs_before_the_broker(tmp_path: Path) -> None:
    done = monitor("produce", "missing.jsonl", "--broker", "127.0.0.1:1", cwd=tmp_path)
    assert done.returncode == 1
    one_line_error(done, "missing.jsonl", "nothing to read")
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_unreachable_broker_is_named() -> None:
    from kafka.errors import KafkaTimeoutError

    from monitor.errors import describe

    for exc in (KafkaTimeoutError("Unable to bootstrap from ['h:1']"),):
        message, status = describe(exc)
        assert status == 1 and message.startswith("no Kafka broker answers"), message


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    done = monitor("flags", "--db", "postgresql://x@127.0.0.1:1/x", "--debug", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" in done.stderr


def test_reading_commands_never_create_a_database(tmp_path: Path) -> None:
    for args in (("sessions",), ("flags",), ("intake", "list"), ("sample", "--week", "2026-W49")):
        done = monitor(*args, cwd=tmp_path)
        assert done.returncode == 1, (args, done.stderr)
        one_line_error(done, "no database at monitor.db", "monitor replay")
        assert not (tmp_path / "monitor.db").exists(), args


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["flags", "--since", "yesterday"], "--since: expected an ISO date or time"),
        (["sessions", "--since", "3 fortnights"], "duration (24h, 7d)"),
        (["replay", "-", "--window", "0"], "--window: must be at least 1"),
        (["replay", "-", "--window", "x"], "--window: expected a whole number"),
        (["flags", "--limit", "0"], "--limit: must be at least 1"),
        (["sample", "--n", "-1"], "--n: must be at least 1"),
        (["sample", "--week", "last"], "week must look like 2026-W49"),
        (["flags", "--signal", "nope"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    good_log(tmp_path / "ok.jsonl")
    assert monitor("replay", "ok.jsonl", cwd=tmp_path).returncode == 0
    done = monitor(*args, cwd=tmp_path, stdin="")
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr and "Traceback" not in done.stderr


def test_since_takes_dates_times_and_durations(tmp_path: Path) -> None:
    good_log(tmp_path / "ok.jsonl")
    replay = monitor("replay", "ok.jsonl", cwd=tmp_path)
    assert replay.returncode == 0
    for since in ("2026-11-30", "2026-12-01T09:00:00Z", "2026-12-01T09:00", "3650d", "100000h"):
        done = monitor("sessions", "--since", since, "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    later = monitor("flags", "--since", "2026-12-02", cwd=tmp_path)
    assert later.returncode == 0 and later.stdout == ""
    assert "no flags match (since=2026-12-02T00:00:00+00:00)" in later.stderr


def test_unknown_config_key_is_an_error_naming_it(tmp_path: Path) -> None:
    conf = tmp_path / "monitor.toml"
    conf.write_text('windw = 3\ndb_url = "sqlite:///x.db"\n')
    done = monitor("--config", str(conf), "sessions", cwd=tmp_path)
    assert done.returncode == 2
    one_line_error(done, "unknown setting 'windw'", "did you mean 'window'?")
    via_env = monitor("sessions", cwd=tmp_path, env={"MONITOR_CONFIG": str(conf)})
    assert via_env.returncode == 2 and "'windw'" in via_env.stderr
    conf.write_text("window = 0\n")
    zero = monitor("--config", str(conf), "sessions", cwd=tmp_path)
    assert zero.returncode == 2 and "window must be at least 1" in zero.stderr
    missing = monitor("--config", str(tmp_path / "nope.toml"), "sessions", cwd=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``monitor sample | head`` and ``monitor flags | head``: no BrokenPipeError traceback."""
    done = monitor("replay", str(EXAMPLES), cwd=tmp_path)
    assert done.returncode == 3
    for args in (("flags",), ("sample", "--week", "2026-W48"), ("replay", str(EXAMPLES))):
        proc = subprocess.Popen(
            [sys.executable, "-m", "monitor", *args, "--db", f"sqlite:///{tmp_path}/monitor.db"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first line is written
        err = proc.stderr.read().decode()
        code = proc.wait(120)
        assert "Traceback" not in err and "BrokenPipe" not in err, (args, err)
        assert code in (0, 3), (args, code, err)
    shell = subprocess.run(
        f"{sys.executable} -m monitor flags --db sqlite:///{tmp_path}/monitor.db | head -n 1",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shell.stdout.count("\n") == 1 and "Traceback" not in shell.stderr


def test_version(tmp_path: Path) -> None:
    from monitor import __version__

    done = monitor("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"monitor {__version__}"


def _commands(parser: object, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    out: list[tuple[tuple[str, ...], object]] = [(prefix, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.extend(_commands(sub, (*prefix, name)))
    return out


def test_every_option_has_help_with_its_default() -> None:
    import argparse

    for path, parser in _commands(build_parser()):
        assert isinstance(parser, argparse.ArgumentParser)
        for action in parser._actions:
            if isinstance(
                action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction
            ):
                continue
            if not action.option_strings:  # a positional
                assert action.help, (path, action.dest)
                continue
            assert action.help, (path, action.option_strings)
            takes_value = action.nargs != 0
            if takes_value and not action.required:
                assert "default" in action.help, (path, action.option_strings, action.help)


def test_every_command_has_examples_and_the_top_level_lists_exit_statuses() -> None:
    import argparse

    commands = _commands(build_parser())
    for path, parser in commands:
        assert isinstance(parser, argparse.ArgumentParser)
        has_actions = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        if path and not has_actions:
            assert parser.epilog and "examples:" in parser.epilog, path
    top = build_parser().format_help()
    for status in ("0  everything", "1  fatal", "2  usage", "3  finished"):
        assert status in top
    replay = dict(commands)[("replay",)]
    assert isinstance(replay, argparse.ArgumentParser)
    assert "exit status:" in replay.format_help()
