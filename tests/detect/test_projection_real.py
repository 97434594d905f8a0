"""Argument projection and polls on the real transcripts (``../shared``; skipped when absent).

Claude Code's Bash carries ``description`` and ``timeout`` beside ``command``; re-run commands
after a compaction came with a fresh description and were missed. Codex's ``write_stdin`` with
no input polls a running command; its repeats are normal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from monitor.adapters import read_paths
from monitor.detect import DetectConfig, detect_all
from monitor.detect.canon import canonical, project
from monitor.events import Event
from monitor.flags import Flag

SHARED = Path(__file__).resolve().parents[3] / "shared"
REAL = [SHARED / "real_logs", SHARED / "real_logs_more"]
CODEX = SHARED / "real_logs_more" / "codex" / "EntityProcess__agentv__00_34f597b72d_1_full.jsonl"
#: Re-run after a compaction, each with a new description (Claude Code, marot/spotter).
SPOTTER_NEAR_REPEATS = {
    ("258c7280-ae70-4798-800f-63464d01a85d", 107, "mix compile --warnings-as-errors 2>&1"),
    (
        "258c7280-ae70-4798-800f-63464d01a85d",
        108,
        "mix test test/spotter_web/live/project_review_live_test.exs 2>&1",
    ),
    ("ae4a77f8-aedd-4bc1-888f-c94edc91af04", 142, "bd ready"),
}


def _events(paths: list[Path]) -> list[Event]:
    roots = [str(p) for p in paths if p.exists()]
    if not roots:
        pytest.skip("no real transcripts in ../shared")
    return [i for i in read_paths(roots) if isinstance(i, Event)]


def _bash_repeats(flags: list[Flag]) -> set[tuple[str, int, str]]:
    out = set()
    for f in flags:
        if f.signal == "repeated_tool_call" and f.evidence["tool"] == "Bash":
            command = json.loads(f.evidence["arguments"])["command"]
            out.add((f.session_id, f.turn, command))
    return out


def test_bash_re_runs_with_a_new_description_are_repeats() -> None:
    events = _events([SHARED / "real_logs" / "claude_code"])
    with_projection = _bash_repeats(detect_all(events, DetectConfig()))
    without = _bash_repeats(detect_all(events, DetectConfig(ignored_arguments={})))
    assert with_projection >= SPOTTER_NEAR_REPEATS
    assert not without & SPOTTER_NEAR_REPEATS  # the description alone hid them


def test_every_repeat_on_real_logs_differs_from_its_original_only_in_left_out_fields() -> None:
    events = _events(REAL)
    cfg = DetectConfig()
    calls: dict[tuple[str, int], list[Event]] = {}
    for e in events:
        if e.kind == "tool_call":
            calls.setdefault((e.session_id, e.turn), []).append(e)
    flags = [f for f in detect_all(events, cfg) if f.signal == "repeated_tool_call"]
    assert len(flags) >= len(SPOTTER_NEAR_REPEATS)
    for f in flags:
        (later,) = [e for e in calls[(f.session_id, f.turn)] if e.event_id == f.event_id]
        assert later.tool is not None
        left_out = cfg.left_out(later.tool.name)
        same = [
            e
            for e in calls[(f.session_id, f.original_turn)]
            if e.tool is not None and e.tool.name == later.tool.name
            and canonical(project(e.tool.arguments, left_out))
            == canonical(project(later.tool.arguments, left_out))
        ]  # fmt: skip
        assert same, (f.session_id, f.turn)
        assert not cfg.is_poll(later.tool.name, later.tool.arguments)


def _codex_record(ts: str, name: str, arguments: dict[str, Any], call_id: str) -> bytes:
    payload = {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": call_id,
    }
    return json.dumps({"timestamp": ts, "type": "response_item", "payload": payload}).encode()


def _codex_with_polls(tmp_path: Path, chars: str) -> Path:
    """The real Codex rollout with one write_stdin call just before its first compaction and
    the same call right after it (as a poll of a long-running command looks)."""
    if not CODEX.exists():
        pytest.skip("no real Codex transcript in ../shared/real_logs_more")
    lines = CODEX.read_bytes().splitlines()
    compacted = next(i for i, raw in enumerate(lines) if b'"type":"compacted"' in raw)
    mirror = next(i for i in range(compacted, len(lines)) if b"context_compacted" in lines[i])
    args = {"session_id": 41, "chars": chars, "yield_time_ms": 1000}
    before = _codex_record("2026-06-26T13:04:30.000Z", "write_stdin", args, "call_poll_before")
    after_args = {**args, "yield_time_ms": 5000, "max_output_tokens": 2000}
    after = _codex_record("2026-06-26T13:04:35.000Z", "write_stdin", after_args, "call_poll_after")
    out = [*lines[:compacted], before, *lines[compacted : mirror + 1], after, *lines[mirror + 1 :]]
    path = tmp_path / CODEX.name
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def _stdin_flags(path: Path, cfg: DetectConfig) -> list[Flag]:
    return [
        f
        for f in detect_all([i for i in read_paths([str(path)]) if isinstance(i, Event)], cfg)
        if f.signal == "repeated_tool_call" and f.evidence["tool"] == "write_stdin"
    ]


def test_a_write_stdin_poll_across_a_real_codex_compaction_is_not_flagged(tmp_path: Path) -> None:
    polls = _codex_with_polls(tmp_path, "")
    assert _stdin_flags(polls, DetectConfig()) == []
    # The same poll is flagged once polls are no longer ignored: the test can tell.
    assert len(_stdin_flags(polls, DetectConfig(ignored_calls=frozenset()))) == 1
    # Input typed again after the compaction is a repeat (yield time and output cap aside).
    typed = _codex_with_polls(tmp_path, "y\n")
    assert len(_stdin_flags(typed, DetectConfig())) == 1


def test_the_real_codex_transcript_flags_the_same_with_and_without_the_polls(
    tmp_path: Path,
) -> None:
    if not CODEX.exists():
        pytest.skip("no real Codex transcript in ../shared/real_logs_more")

    def keys(path: Path) -> set[tuple[str, int, str]]:
        events = [i for i in read_paths([str(path)]) if isinstance(i, Event)]
        return {(f.signal, f.turn, f.key) for f in detect_all(events, DetectConfig())}

    real = keys(CODEX)
    polled = keys(_codex_with_polls(tmp_path, ""))
    assert polled - real == set()  # the polls add no flag of any signal


def test_projection_defaults_are_read_from_the_settings() -> None:
    from monitor.config import load_settings

    cfg = load_settings(environ={}).detect_config()
    assert cfg.left_out("Bash") == frozenset({"description", "timeout", "_i"})
    assert "_i" in (cfg.left_out("some_pi_tool") or ())
    assert cfg.is_poll("write_stdin", {"session_id": 1, "chars": ""})
    assert cfg.is_poll("write_stdin", {"session_id": 1})
    assert not cfg.is_poll("write_stdin", {"session_id": 1, "chars": "q"})
    custom = load_settings(
        environ={"MONITOR_IGNORED_ARGUMENTS": "Read.limit", "MONITOR_IGNORED_TOOLS": "Glob"}
    ).detect_config()
    assert custom.left_out("Read") == frozenset({"limit"}) and custom.left_out("Bash") is None
    assert custom.is_poll("Glob", {}) and not custom.is_poll("write_stdin", {"chars": ""})
    with pytest.raises(ValueError, match=r"TOOL\.FIELD"):
        load_settings(environ={"MONITOR_IGNORED_ARGUMENTS": "description"})
    assert msgspec.structs.replace(cfg, ignored_arguments={}).left_out("Bash") is None
