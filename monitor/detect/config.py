"""Detector settings: a small frozen value the shells build once and pass to ``detect.step``.

Two lists tell the repeat detector what a call *is*:

* ignored tools: tools whose repeats are normal (polling, todo lists), never flagged. An entry
  is a tool name, or ``TOOL.FIELD=VALUE`` for only the calls whose ``FIELD`` argument is
  ``VALUE`` (an empty VALUE also matches a missing or null field): Codex's ``write_stdin`` with
  no input is a poll of a running command, with input it is not.
* ignored arguments (``TOOL.FIELD``, ``*`` for any tool): fields that do not change what a call
  does (a label, a timeout, an output cap), left out of the call's fingerprint, so the same
  command with a new description is still the same call.

The defaults are per agent the adapters read (``DEFAULT_IGNORES``); the configuration reference
in deploy/README.md lists them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

#: Per agent: (ignored tools, ignored arguments), each entry with why.
DEFAULT_IGNORES: Final[dict[str, tuple[dict[str, str], dict[str, str]]]] = {
    "claude_code": (
        {
            "TodoWrite": "the todo list is rewritten as work goes",
            "TodoRead": "reads the todo list",
            "BashOutput": "polls a background shell for its new output",
        },
        {
            "Bash.description": "a label for the person watching",
            "Bash.timeout": "how long to wait, not what runs",
            "Task.description": "a label; the prompt is the task",
        },
    ),
    "codex": (
        {
            "update_plan": "the plan is rewritten as work goes",
            "write_stdin.chars=": "no input: a poll of a running command's output",
        },
        {
            "exec_command.yield_time_ms": "how long to wait for output",
            "exec_command.max_output_tokens": "how much output to return",
            "exec_command.justification": "the reason shown when asking for approval",
            "write_stdin.yield_time_ms": "how long to wait for output",
            "write_stdin.max_output_tokens": "how much output to return",
            "shell.timeout_ms": "how long to wait, not what runs",
        },
    ),
    "pi": (
        {"todo_write": "the todo list is rewritten as work goes"},
        {
            "bash.timeout": "how long to wait, not what runs",
            "*._i": "the intent line pi v3 adds to every call",
        },
    ),
}

DEFAULT_IGNORED_TOOLS: Final = tuple(
    sorted({t for tools, _ in DEFAULT_IGNORES.values() for t in tools})
)
DEFAULT_IGNORED_ARGUMENTS: Final = tuple(
    sorted({a for _, args in DEFAULT_IGNORES.values() for a in args})
)
#: Any tool, in an ignored-argument entry.
ANY_TOOL: Final = "*"

Poll = tuple[str, str, str]  # tool, field, value


def parse_ignored_tools(entries: Iterable[str]) -> tuple[frozenset[str], frozenset[Poll]]:
    """(tool names ignored whole, (tool, field, value) polls); ``ValueError`` for a bad entry."""
    names: set[str] = set()
    polls: set[Poll] = set()
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        if "=" not in entry:
            names.add(entry)
            continue
        target, _, value = entry.partition("=")
        tool, dot, field = target.rpartition(".")
        if not dot or not tool or not field:
            raise ValueError(f"ignored tool {entry!r}: expected TOOL or TOOL.FIELD=VALUE")
        polls.add((tool, field, value))
    return frozenset(names), frozenset(polls)


def parse_ignored_arguments(entries: Iterable[str]) -> dict[str, frozenset[str]]:
    """Tool -> fields left out of its fingerprint; the ``*`` fields are added to every tool's
    (and kept under ``*`` for tools not named)."""
    by_tool: dict[str, set[str]] = {}
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        tool, dot, field = entry.rpartition(".")
        if not dot or not tool or not field:
            raise ValueError(f"ignored argument {entry!r}: expected TOOL.FIELD (or *.FIELD)")
        by_tool.setdefault(tool, set()).add(field)
    every = by_tool.get(ANY_TOOL, set())
    return {tool: frozenset(fields | every) for tool, fields in by_tool.items()}


_DEFAULT_NAMES, _DEFAULT_POLLS = parse_ignored_tools(DEFAULT_IGNORED_TOOLS)


def _default_arguments() -> dict[str, frozenset[str]]:
    return parse_ignored_arguments(DEFAULT_IGNORED_ARGUMENTS)


class DetectConfig(msgspec.Struct, frozen=True):
    """Knobs of the pure core. Every cap bounds per-session state; see schemas/README.md."""

    #: A repeat counts when it comes at most this many turns after the latest compaction.
    window: int = 5
    #: Tool names never flagged as repeats.
    ignored_tools: frozenset[str] = _DEFAULT_NAMES
    #: (tool, field, value): calls of the tool whose field has that value are polls, never
    #: flagged (an empty value matches a missing, null or empty field).
    ignored_calls: frozenset[Poll] = _DEFAULT_POLLS
    #: Tool -> argument fields left out of its fingerprint (``*``: for tools not named).
    ignored_arguments: dict[str, frozenset[str]] = msgspec.field(default_factory=_default_arguments)
    #: Distinct call fingerprints remembered per session (oldest dropped first).
    max_calls: int = 256
    #: Instructions remembered per session for restatement matching (oldest dropped first).
    max_instructions: int = 64
    #: Event ids remembered per session to recognise redelivered copies.
    max_seen_ids: int = 32
    #: Argument bytes fingerprinted; longer canonical arguments are hashed on a prefix + length.
    max_argument_bytes: int = 65_536
    #: Characters of a user message examined for instructions.
    max_text_chars: int = 4_000
    #: Characters of arguments / sentences copied into evidence.
    evidence_chars: int = 300
    #: Minimum restatement score (100 P(same)) to flag; None: the model's own threshold,
    #: chosen on its validation split.
    restate_threshold: float | None = None
    #: Turns an event may arrive late by (events are held and processed in turn order; 0: off).
    reorder_turns: int = 0
    #: Mask secrets (API keys, tokens, passwords) in evidence excerpts.
    redact: bool = True
    #: Sessions idle longer than this (seconds, by the shell's clock) are dropped from state.
    idle_expiry_s: float = 7 * 24 * 3600.0
    #: Keep a ledger of what must survive and check it against every compaction's summary
    #: (``dropped_item`` and ``inverted_item`` flags). Off unless configured (``Settings``).
    survival: bool = False
    #: Read restatements with the optional semantic stage too (sentence embeddings; needs the
    #: ``semantic`` extra): a cosine feature and paraphrase candidates sharing no word.
    semantic: bool = False

    def left_out(self, tool: str) -> frozenset[str] | None:
        """The argument fields the fingerprint of ``tool``'s calls leaves out, if any."""
        table = self.ignored_arguments
        return table.get(tool) or table.get(ANY_TOOL)

    def is_poll(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this call is one the configuration says repeats normally."""
        if tool in self.ignored_tools:
            return True
        for name, field, value in self.ignored_calls:
            if name == tool:
                got = arguments.get(field)
                if (got in (None, "") and value == "") or (got is not None and str(got) == value):
                    return True
        return False
