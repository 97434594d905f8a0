"""Codex CLI / Codex Desktop rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) to events.

Every line is ``{"timestamp", "type", "payload"}``. The conversation is written twice (model-facing
``response_item`` and UI ``event_msg``); we read user text from ``event_msg/user_message`` (what the
human typed, without injected context) and everything else from ``response_item``.

Rollouts carry no response id, so a model step is delimited by what surrounds it: consecutive
model outputs (reasoning, assistant message, tool calls) form one turn, which ends at the next tool
output, user message or compaction. A tool output takes the turn of its call; a user message and a
``compacted`` record are each their own turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Any, Final, Literal

from monitor.adapters.base import (
    MAX_RESULT_CHARS,
    Item,
    Located,
    Problem,
    as_arguments,
    cap,
    clip_id,
    each_record,
    parse_arguments,
    parse_ts,
    string,
    text_of,
    without_lines,
)
from monitor.events import Compaction, Event, Kind, Tool

AGENT: Final = "codex"
#: Envelope types with nothing for the detectors beyond the metadata read from them.
IGNORED_TYPES: Final = frozenset({"session_meta", "turn_context"})
#: ``response_item`` types that are model output: a run of them is one model step.
MODEL_OUTPUT: Final = frozenset(
    {
        "reasoning",
        "message",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
    }
)
#: Openings of the context Codex writes into the user role itself.
INJECTED_PREFIXES: Final = (
    "# AGENTS.md",
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "<user_shell_command>",
)
#: ``response_item`` types that return a tool's output to the model.
TOOL_OUTPUT: Final = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
#: ``event_msg`` types read; every other ``event_msg`` is a UI mirror and dropped silently.
EVENT_MSGS: Final = frozenset({"user_message", "context_compacted"})
#: Envelope types that exist and are deliberately not read (no Problem).
KNOWN_TYPES: Final = frozenset({"response_item", "event_msg", "compacted"}) | IGNORED_TYPES


@dataclass
class _State:
    source: str
    session_id: str
    attrs: dict[str, str] = field(default_factory=lambda: {"agent": AGENT})
    turn: int = 0
    in_step: bool = False
    #: a ``compacted`` was just emitted, so the ``context_compacted`` mirror that follows is not new
    compacted: bool = False
    calls: dict[str, str] = field(default_factory=dict)

    def event(
        self,
        event_id: str,
        ts: datetime,
        kind: Kind,
        *,
        text: str | None = None,
        tool: Tool | None = None,
        compaction: Compaction | None = None,
        attrs: dict[str, str] | None = None,
        origin: Literal["harness"] | None = None,
    ) -> Event:
        return Event(
            origin=origin,
            event_id=clip_id(event_id),
            session_id=self.session_id,
            turn=self.turn,
            ts=ts,
            kind=kind,
            text=text,
            tool=tool,
            compaction=compaction,
            attrs=dict(attrs if attrs is not None else self.attrs),
        )


def _fallback_session(source: str) -> str:
    """``rollout-<ISO>-<uuid>.jsonl`` -> ``<uuid>`` (the id is the last five dash groups)."""
    stem = PurePath(source).name.split(".", 1)[0]
    parts = stem.split("-")
    return clip_id("-".join(parts[-5:]) if len(parts) >= 6 else stem or source)


def parse(lines: Iterable[bytes], source: str) -> Iterator[Item]:
    """Events of one Codex rollout, in file order; Problems for unusable lines."""
    return without_lines(parse_located(lines, source))


def parse_located(lines: Iterable[bytes], source: str) -> Iterator[Located]:
    """``parse``'s items, each with the line of the record it came from."""
    state = _State(source=source, session_id=_fallback_session(source))
    yield from each_record(lines, source, lambda record, number: _record(state, record, number))


def _record(state: _State, record: dict[str, Any], number: int) -> Iterator[Item]:
    rtype = record.get("type")
    payload = record.get("payload")
    if not isinstance(rtype, str) or not isinstance(payload, dict):
        yield Problem(state.source, number, "schema", "line without string `type` and `payload`")
        return
    if rtype not in KNOWN_TYPES:
        yield Problem(state.source, number, f"unknown_record:{rtype[:40]}", severity="skipped")
        return
    if rtype in IGNORED_TYPES:
        _metadata(state, rtype, payload)
        return
    ptype = string(payload.get("type"))
    if rtype == "event_msg" and ptype not in EVENT_MSGS:
        return
    ts = parse_ts(record.get("timestamp"))
    if ts is None:
        yield Problem(state.source, number, "schema", f"{rtype} line without a valid timestamp")
        return
    base = f"{state.session_id}:L{number}"
    if rtype == "compacted":
        yield _compaction(state, ts, base, payload.get("message"))
        state.compacted = True
        return
    if rtype == "event_msg":
        if ptype == "context_compacted":
            if not state.compacted:  # builds that write only the UI mirror
                yield _compaction(state, ts, base, None)
            state.compacted = False
            return
        state.compacted = False
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            state.turn += 1
            state.in_step = False
            yield state.event(base, ts, "user_message", text=cap(text))
        return
    state.compacted = False
    if ptype in MODEL_OUTPUT:
        yield from _model_output(state, payload, ts, base)
    elif ptype in TOOL_OUTPUT:
        state.in_step = False
        yield _tool_output(state, payload, ts, base)
    elif ptype is None:
        yield Problem(state.source, number, "schema", "response_item without a string `type`")
    else:
        reason = f"unknown_record:response_item/{ptype[:32]}"
        yield Problem(state.source, number, reason, severity="skipped")


def _metadata(state: _State, rtype: str, payload: dict[str, Any]) -> None:
    if rtype == "session_meta":
        sid = string(payload.get("id"))
        if sid is not None:
            state.session_id = clip_id(sid)
        version = string(payload.get("cli_version"))
        if version is not None:
            state.attrs["agent_version"] = version
    model = string(payload.get("model"))
    if model is not None:
        state.attrs["model"] = model


def _model_output(
    state: _State, payload: dict[str, Any], ts: datetime, base: str
) -> Iterator[Event]:
    ptype = payload["type"]
    if ptype == "message" and payload.get("role") != "assistant":
        # User text comes from event_msg; these items repeat it, or carry context the
        # harness injected (AGENTS.md, the environment), which is kept, marked as such.
        injected = text_of(payload.get("content"), "input_text").strip()
        if injected.startswith(INJECTED_PREFIXES):
            yield state.event(base, ts, "user_message", text=cap(injected), origin="harness")
        return
    if not state.in_step:
        state.turn += 1
        state.in_step = True
    if ptype == "message":
        text = text_of(payload.get("content"), "output_text").strip()
        if text:
            yield state.event(base, ts, "assistant_message", text=cap(text))
        return
    if ptype == "reasoning":
        return
    name, arguments = _call(payload)
    call_id = string(payload.get("call_id")) or string(payload.get("id"))
    if call_id is not None:
        state.calls[call_id] = name
    tool = Tool(name=name[:256], arguments=arguments, call_id=call_id)
    event_id = f"{state.session_id}:{call_id}:call" if call_id else base
    yield state.event(event_id, ts, "tool_call", tool=tool)


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments object) of a call item; ``arguments`` JSON strings are decoded."""
    ptype = payload["type"]
    if ptype == "function_call":
        return string(payload.get("name")) or "unknown", parse_arguments(payload.get("arguments"))
    if ptype == "custom_tool_call":
        return string(payload.get("name")) or "unknown", as_arguments(payload.get("input"))
    if ptype == "local_shell_call":
        return "local_shell", as_arguments(payload.get("action"))
    return "web_search", as_arguments(payload.get("action"))


def _tool_output(state: _State, payload: dict[str, Any], ts: datetime, base: str) -> Event:
    call_id = string(payload.get("call_id"))
    name = state.calls.get(call_id, "unknown") if call_id else "unknown"
    output = payload.get("output")
    if isinstance(output, dict):  # older builds: {"output": "...", "metadata": {...}}
        output = output.get("output", output.get("content"))
    text = output if isinstance(output, str) else text_of(output, "input_text")
    tool = Tool(name=name[:256], call_id=call_id)
    event_id = f"{state.session_id}:{call_id}:result" if call_id else base
    return state.event(event_id, ts, "tool_result", text=cap(text, MAX_RESULT_CHARS), tool=tool)


def _compaction(state: _State, ts: datetime, base: str, summary: object) -> Event:
    state.turn += 1
    state.in_step = False
    version = state.attrs.get("agent_version")
    compactor = f"{AGENT}/{version}" if version else AGENT
    return state.event(
        base,
        ts,
        "compaction",
        text=cap(summary) if isinstance(summary, str) and summary else None,
        compaction=Compaction(trigger="auto", compactor=compactor),
        attrs={**state.attrs, "compactor": compactor},
    )
