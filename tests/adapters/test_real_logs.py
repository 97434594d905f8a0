"""The adapters on the real transcripts in ../shared/real_logs (see SOURCES.md there).

Skipped when the folder is absent. Expected counts come from SOURCES.md, which was tallied
independently of this code; repeat assertions use the detector under the documented turn
convention (schemas/adapters.md).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from monitor.adapters import Problem, read_paths
from monitor.detect import detect_all
from monitor.events import Event, decode, encode

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real_logs"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real_logs not present")

#: Main spotter sessions: (trigger, preTokens) of their single compact_boundary (SOURCES.md).
SPOTTER = {
    "4d5611e5-241a-462a-8d15-5122611a9569": ("auto", 170251),
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46": ("auto", 167117),
    "258c7280-ae70-4798-800f-63464d01a85d": ("auto", 167094),
    "8463c716-a2ea-4c14-9efa-87158ebd9f20": ("auto", 167731),
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04": ("manual", 142431),
}
#: "tool calls" column of SOURCES.md per saved file.
TOOL_CALLS = {
    "claude_code/marot__spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl": 186,
    "claude_code/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl": 150,
    "claude_code/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl": 33,  # noqa: E501
    "claude_code/marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl": 177,
    "claude_code/marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl": 242,
    "claude_code/marot__spotter__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl": 197,
    "claude_code/d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": 167,
    "claude_code/iansherr__claude-code-log__src-deep-manifest__a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl": 108,  # noqa: E501
    "pi/badlogic__pi-mono__before-compaction.jsonl": 454,
    "pi/badlogic__pi-mono__large-session.jsonl": 391,
}


@cache
def read(relative: str) -> tuple[list[Event], list[Problem]]:
    items = list(read_paths([str(REAL / relative)]))
    return [i for i in items if isinstance(i, Event)], [i for i in items if isinstance(i, Problem)]


def spotter(session: str) -> list[Event]:
    return read(f"claude_code/marot__spotter__{session}.jsonl")[0]


@pytest.mark.parametrize("session", sorted(SPOTTER))
def test_each_spotter_main_session_has_one_compaction(session: str) -> None:
    compactions = [e for e in spotter(session) if e.kind == "compaction"]
    assert len(compactions) == 1
    comp = compactions[0].compaction
    assert comp is not None
    assert (comp.trigger, comp.tokens_before) == SPOTTER[session]
    text = compactions[0].text
    assert text is not None and text.startswith("This session is being continued")


def test_fa812bfe_rereads_two_files_in_first_step_after_compaction() -> None:
    events = spotter("fa812bfe-b295-4cca-9c2f-fdf01028cb46")
    compaction = next(e for e in events if e.kind == "compaction")
    first_step = min(e.turn for e in events if e.kind == "tool_call" and e.turn > compaction.turn)
    flags = [f for f in detect_all(events) if f.signal == "repeated_tool_call"]
    in_first_step = [f for f in flags if f.turn == first_step]
    assert len(in_first_step) == 2
    assert {f.evidence["tool"] for f in in_first_step} == {"Read"}
    assert all(f.original_turn < compaction.turn == f.compaction_turn for f in in_first_step)
    paths = {str(f.evidence["arguments"]) for f in in_first_step}
    assert any("pane_list_live.ex" in p for p in paths)
    assert any("session_live.ex" in p for p in paths)


@pytest.mark.parametrize(
    ("session", "reruns"),
    [
        (
            "258c7280-ae70-4798-800f-63464d01a85d",
            {
                (107, "mix compile --warnings-as-errors 2>&1"),
                (108, "mix test test/spotter_web/live/project_review_live_test.exs 2>&1"),
            },
        ),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04", {(142, "bd ready")}),
    ],
)
def test_the_only_repeats_after_compaction_are_commands_run_again(
    session: str, reruns: set[tuple[int, str]]
) -> None:
    """Each re-run came with a new ``description``, which does not change what Bash runs
    (``ignored_arguments``); nothing else repeats within five turns of the compaction."""
    flags = [f for f in detect_all(spotter(session)) if f.signal == "repeated_tool_call"]
    assert {f.evidence["tool"] for f in flags} == {"Bash"}
    assert {(f.turn, json.loads(f.evidence["arguments"])["command"]) for f in flags} == reruns


def test_pi_before_compaction_has_two_compactions() -> None:
    events, problems = read("pi/badlogic__pi-mono__before-compaction.jsonl")
    compactions = [e for e in events if e.kind == "compaction"]
    assert [c.compaction.tokens_before for c in compactions if c.compaction] == [175004, 185014]
    assert not problems
    assert sum(e.kind == "user_message" for e in events) == 55  # SOURCES.md "user prompts"


@pytest.mark.parametrize("relative", sorted(TOOL_CALLS))
def test_tool_call_counts_match_sources(relative: str) -> None:
    events, _ = read(relative)
    assert sum(e.kind == "tool_call" for e in events) == TOOL_CALLS[relative]


def test_subagent_files_are_sessions_linked_to_their_parent() -> None:
    parent = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    events, _ = read(f"claude_code/marot__spotter__{parent}__subagents__agent-a93ccab.jsonl")
    assert {e.session_id for e in events} == {f"{parent}/agent-a93ccab"}
    assert {e.attrs.get("parent_session") for e in events} == {parent}


def test_whole_tree_reads_without_errors_in_turn_order() -> None:
    items = list(read_paths([str(REAL)]))
    errors = [i for i in items if isinstance(i, Problem) and i.severity == "error"]
    assert errors == []
    events = [i for i in items if isinstance(i, Event)]
    last: dict[str, int] = {}
    for event in events:
        assert event.turn >= last.get(event.session_id, 0)
        last[event.session_id] = event.turn
    # Every main session and sub-agent transcript is its own session (the 6c2214d7 main file is
    # absent from the snapshot; fe5e1c67 and 5c0375b4 hold inline sidechains).
    # 28 Claude files: 26 hold one session, 5c0375b4 three and fe5e1c67 six; plus 2 pi files.
    assert len({e.session_id for e in events}) == 26 + 3 + 6 + 2
    kinds = Counter(e.kind for e in events)
    assert kinds["compaction"] == 7
    sample = events[:: max(1, len(events) // 200)]
    assert all(decode(encode(e)) == e for e in sample)
    ids = Counter((e.session_id, e.event_id) for e in events)
    assert max(ids.values()) == 1


def test_rereading_is_identical() -> None:
    path = str(REAL / "claude_code" / "marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    assert list(read_paths([path])) == list(read_paths([path]))
