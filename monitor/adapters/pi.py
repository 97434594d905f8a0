"""pi coding-agent sessions (``~/.pi/agent/sessions/--<cwd>--/<ISO>_<uuid>.jsonl``) to events.

pi writes one record per message, so the convention is direct: each assistant message is one
turn (all its ``toolCall`` blocks share it), a user message is its own turn, a ``toolResult``
takes the turn of the step that called it, and a ``compaction`` record is its own turn.
"""

from __future__ import annotations

import re
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
    content_blocks,
    each_record,
    parse_ts,
    string,
    text_of,
    without_lines,
)
from monitor.events import Compaction, Event, Tool

AGENT: Final = "pi"
#: Records that change settings or mark the session; they carry no event of their own.
#: ``custom`` entries hold an extension's own state: nothing the model or the user said.
IGNORED_TYPES: Final = frozenset(
    {"session", "model_change", "thinking_level_change", "label", "custom"}
)
#: ``message`` roles with no detector meaning: ``bashExecution`` is the human running ``!cmd``.
IGNORED_ROLES: Final = frozenset({"bashExecution"})
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class _State:
    source: str
    session_id: str
    attrs: dict[str, str] = field(default_factory=lambda: {"agent": AGENT})
    turn: int = 0
    calls: dict[str, str] = field(default_factory=dict)


def _fallback_session(source: str) -> str:
    """Session id from the file name (``<ISO>_<uuid>.jsonl``) when no ``session`` line is seen."""
    name = PurePath(source).name
    found = _UUID.search(name)
    return found.group(0) if found else clip_id(name.split(".", 1)[0] or source)


def parse(lines: Iterable[bytes], source: str) -> Iterator[Item]:
    """Events of one pi session file, in file order; Problems for unusable lines."""
    return without_lines(parse_located(lines, source))


def parse_located(lines: Iterable[bytes], source: str) -> Iterator[Located]:
    """``parse``'s items, each with the line of the record it came from."""
    state = _State(source=source, session_id=_fallback_session(source))
    yield from each_record(lines, source, lambda record, number: _record(state, record, number))


def _record(state: _State, record: dict[str, Any], number: int) -> Iterator[Item]:
    rtype = record.get("type")
    if not isinstance(rtype, str):
        yield Problem(state.source, number, "schema", "record without a string `type`")
        return
    if rtype == "session":
        state.session_id = clip_id(string(record.get("id")) or state.session_id)
        version = string(record.get("version")) or _str_number(record.get("version"))
        if version:
            state.attrs["agent_version"] = version
    if rtype in ("session", "model_change"):
        model = string(record.get("modelId"))
        if model:
            state.attrs["model"] = model
    if rtype in IGNORED_TYPES:
        return
    if rtype == "custom_message":
        yield from _custom_message(state, record, number)
        return
    if rtype not in ("message", "compaction"):
        yield Problem(state.source, number, f"unknown_record:{rtype[:40]}", severity="skipped")
        return
    message = record.get("message") if rtype == "message" else {}
    if not isinstance(message, dict):
        yield Problem(state.source, number, "schema", "message record without `message`")
        return
    ts = parse_ts(record.get("timestamp")) or parse_ts(message.get("timestamp"))
    if ts is None:
        yield Problem(state.source, number, "schema", f"{rtype} record without a valid timestamp")
        return
    # Newer pi entry ids are short and per-file, so they are qualified by the session id.
    entry = string(record.get("id"))
    base = clip_id(f"{state.session_id}:{entry}" if entry else f"{state.session_id}:L{number}")
    if rtype == "compaction":
        yield _compaction(state, record, ts, base)
        return
    role = string(message.get("role"))
    if role == "user":
        text = text_of(message.get("content")).strip()
        if text:
            state.turn += 1
            yield _event(state, base, ts, "user_message", text=cap(text))
    elif role == "assistant":
        state.turn += 1  # one assistant message is one model step, even an empty, aborted one
        yield from _assistant(state, message, ts, base)
    elif role == "toolResult":
        yield _result(state, message, ts, base)
    elif role not in IGNORED_ROLES:
        reason = f"unknown_record:message/{str(role)[:32]}"
        yield Problem(state.source, number, reason, severity="skipped")


def _custom_message(state: _State, record: dict[str, Any], number: int) -> Iterator[Item]:
    """An extension's message into the conversation (context, reminders): in the user role
    but written by the harness, so it is kept marked as such."""
    ts = parse_ts(record.get("timestamp"))
    if ts is None:
        yield Problem(state.source, number, "schema", "custom_message without a valid timestamp")
        return
    text = text_of(record.get("content")).strip()
    if text:
        entry = string(record.get("id"))
        base = clip_id(f"{state.session_id}:{entry}" if entry else f"{state.session_id}:L{number}")
        yield _event(state, base, ts, "user_message", text=cap(text), origin="harness")


def _str_number(value: object) -> str | None:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _event(
    state: _State,
    event_id: str,
    ts: datetime,
    kind: str,
    *,
    text: str | None = None,
    tool: Tool | None = None,
    attrs: dict[str, str] | None = None,
    origin: Literal["harness"] | None = None,
) -> Event:
    return Event(
        event_id=event_id,
        session_id=state.session_id,
        turn=state.turn,
        ts=ts,
        kind=kind,  # type: ignore[arg-type]
        text=text,
        tool=tool,
        attrs=dict(attrs if attrs is not None else state.attrs),
        origin=origin,
    )


def _assistant(state: _State, message: dict[str, Any], ts: datetime, base: str) -> Iterator[Event]:
    model = string(message.get("model"))
    attrs = {**state.attrs, "model": model} if model else state.attrs
    for index, block in content_blocks(message):
        btype = block.get("type")
        event_id = clip_id(f"{base}:{index}")
        if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            text = cap(block["text"])
            yield _event(state, event_id, ts, "assistant_message", text=text, attrs=attrs)
        elif btype == "toolCall":
            name = (string(block.get("name")) or "unknown")[:256]
            call_id = string(block.get("id"))
            if call_id is not None:
                state.calls[call_id] = name
            tool = Tool(name=name, arguments=as_arguments(block.get("arguments")), call_id=call_id)
            yield _event(state, event_id, ts, "tool_call", tool=tool, attrs=attrs)


def _result(state: _State, message: dict[str, Any], ts: datetime, base: str) -> Event:
    call_id = string(message.get("toolCallId"))
    name = string(message.get("toolName")) or (state.calls.get(call_id, "") if call_id else "")
    is_error = message.get("isError")
    tool = Tool(
        name=(name or "unknown")[:256],
        call_id=call_id,
        is_error=is_error if isinstance(is_error, bool) else None,
    )
    text = cap(text_of(message.get("content")), MAX_RESULT_CHARS)
    return _event(state, base, ts, "tool_result", text=text, tool=tool)


def _compaction(state: _State, record: dict[str, Any], ts: datetime, base: str) -> Event:
    tokens = record.get("tokensBefore")
    before = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
    summary = record.get("summary")
    state.turn += 1
    return Event(
        event_id=base,
        session_id=state.session_id,
        turn=state.turn,
        ts=ts,
        kind="compaction",
        text=cap(summary) if isinstance(summary, str) else None,
        compaction=Compaction(
            trigger="auto",
            tokens_before=before if before is not None and before >= 0 else None,
            compactor=AGENT,
        ),
        attrs={**state.attrs, "compactor": AGENT},
    )
