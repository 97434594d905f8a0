"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) to events.

One assistant API response is one turn even though Claude Code writes it as several records (one
content block each, same ``message.id``); a human prompt is its own turn; tool results take the
turn of the step that called them; a ``compact_boundary`` is its own turn. Sub-agent transcripts
(records carrying ``agentId``, or inline ``isSidechain`` chains of older versions) are separate
sessions linked by ``attrs["parent_session"]``. See schemas/adapters.md for what this cannot see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

import msgspec

from monitor.adapters.base import (
    MAX_RESULT_CHARS,
    Item,
    Located,
    Problem,
    as_arguments,
    cap,
    clip_id,
    content_blocks,
    json_lines,
    parse_ts,
    string,
    text_of,
    without_lines,
)
from monitor.events import Compaction, Event, Kind, Tool

AGENT: Final = "claude_code"

#: Record types that carry nothing the detectors read; dropped without a Problem.
IGNORED_TYPES: Final = frozenset(
    {"summary", "progress", "file-history-snapshot", "queue-operation", "custom-title", "tag"}
)
#: User text that the client wrote, not the human: slash commands, their output, reminders.
NOT_HUMAN_PREFIXES: Final = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<task-notification>",
    "[Request interrupted by user",
)
#: Versions before compact_boundary existed (about 1.0.x) mark a compaction only by this text.
CONTINUATION_PREFIX: Final = "This session is being continued from a previous conversation"
#: ``agent-<id>.jsonl``, also when flattened as ``<session>__subagents__agent-<id>.jsonl``.
_AGENT_FILE: Final = re.compile(r"(?:^|[/\\_])agent-([A-Za-z0-9_-]+)\.jsonl(?:\.gz)?$")


@dataclass
class _Session:
    """Per-session counters while one file is read (local to one ``parse`` call)."""

    turn: int = 0
    #: ``message.id`` of the assistant response whose blocks are still arriving.
    open_step: str | None = None
    #: tool_use id -> tool name, so results (which carry only the id) can be named.
    calls: dict[str, str] = field(default_factory=dict)


@dataclass
class _File:
    source: str
    file_agent: str | None
    sessions: dict[str, _Session] = field(default_factory=dict)
    #: uuid -> root uuid of its chain, to split inline sidechains into their own sessions.
    roots: dict[str, str] = field(default_factory=dict)
    last_session: str | None = None

    def session(self, sid: str) -> _Session:
        return self.sessions.setdefault(sid, _Session())


def agent_id_from_path(source: str) -> str | None:
    """The sub-agent id a file name implies (``agent-a881341.jsonl`` -> ``a881341``)."""
    found = _AGENT_FILE.search(source)
    return found.group(1) if found else None


def parse(lines: Iterable[bytes], source: str) -> Iterator[Item]:
    """Events of one Claude Code transcript, in file order; Problems for unusable lines."""
    return without_lines(parse_located(lines, source))


def parse_located(lines: Iterable[bytes], source: str) -> Iterator[Located]:
    """``parse``'s items, each with its line (a compaction keeps its boundary's line, though it
    is emitted once its summary record has been read)."""
    state = _File(source=source, file_agent=agent_id_from_path(source))
    pending: Located | None = None  # a compaction waiting for its summary record
    for line in json_lines(lines, source):
        if line.problem is not None:
            yield Located(line.number, line.problem)
            continue
        record = line.record
        assert record is not None
        if pending is not None:
            summary = _summary_text(record)
            event = pending.item
            assert isinstance(event, Event)
            if summary is not None and _session_of(state, record)[0] == event.session_id:
                yield Located(pending.line, msgspec.structs.replace(event, text=cap(summary)))
                pending = None
                continue
            yield pending
            pending = None
        for item in _record(state, record, line.number):
            if isinstance(item, Event) and item.kind == "compaction" and item.text is None:
                pending = Located(line.number, item)
            else:
                yield Located(line.number, item)
    if pending is not None:
        yield pending


def _summary_text(record: dict[str, Any]) -> str | None:
    if record.get("type") != "user" or record.get("isCompactSummary") is not True:
        return None
    message = record.get("message")
    return text_of(message.get("content")) if isinstance(message, dict) else ""


def _session_of(state: _File, record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(session id, parent session id) of a record; sub-agents get ``<parent>/agent-<id>``."""
    sid = string(record.get("sessionId")) or state.last_session
    uuid = string(record.get("uuid"))
    parent_uuid = string(record.get("parentUuid"))
    if uuid is not None:
        root = state.roots.get(parent_uuid, parent_uuid) if parent_uuid else uuid
        state.roots[uuid] = root or uuid
    if sid is None:
        return None, None
    agent = string(record.get("agentId")) or state.file_agent
    if agent is not None:
        return clip_id(f"{sid}/agent-{agent}"), sid
    if record.get("isSidechain") is True and uuid is not None:
        return clip_id(f"{sid}/sidechain-{state.roots[uuid]}"), sid
    return sid, None


def _record(state: _File, record: dict[str, Any], number: int) -> Iterator[Item]:
    rtype = record.get("type")
    if not isinstance(rtype, str):
        yield Problem(state.source, number, "schema", "record without a string `type`")
        return
    if rtype in IGNORED_TYPES:
        return
    if rtype == "system" and record.get("subtype") != "compact_boundary":
        return
    if rtype not in ("user", "assistant", "system"):
        yield Problem(state.source, number, f"unknown_record:{rtype[:40]}", severity="skipped")
        return
    sid, parent = _session_of(state, record)
    ts = parse_ts(record.get("timestamp"))
    if sid is None or ts is None:
        what = "sessionId" if sid is None else "timestamp"
        yield Problem(state.source, number, "schema", f"{rtype} record without a valid {what}")
        return
    state.last_session = string(record.get("sessionId")) or state.last_session
    ctx = _Ctx(state.source, sid, state.session(sid), ts, _attrs(record, parent), record, number)
    if rtype == "assistant":
        yield from _assistant(ctx)
    elif rtype == "user":
        yield from _user(ctx)
    else:
        yield _compaction(ctx, None)


@dataclass
class _Ctx:
    source: str
    sid: str
    session: _Session
    ts: datetime
    attrs: dict[str, str]
    record: dict[str, Any]
    number: int

    def event_id(self, suffix: str = "") -> str:
        base = string(self.record.get("uuid")) or f"{self.sid}:L{self.number}"
        return clip_id(base + suffix)

    def event(self, kind: Kind, suffix: str = "", **fields: Any) -> Event:
        """An event of this record at the session's current turn (``attrs`` default to the
        record's); ``suffix`` tells apart the events of one record's content blocks."""
        fields.setdefault("attrs", self.attrs)
        return Event(
            event_id=self.event_id(suffix),
            session_id=self.sid,
            turn=self.session.turn,
            ts=self.ts,
            kind=kind,
            **fields,
        )


def _attrs(record: dict[str, Any], parent: str | None) -> dict[str, str]:
    attrs = {"agent": AGENT}
    version = string(record.get("version"))
    if version is not None:
        attrs["agent_version"] = version
    if parent is not None:
        attrs["parent_session"] = parent
    return attrs


def _assistant(ctx: _Ctx) -> Iterator[Item]:
    message = ctx.record.get("message")
    if not isinstance(message, dict):
        yield Problem(ctx.source, ctx.number, "schema", "assistant record without `message`")
        return
    model = string(message.get("model"))
    if model == "<synthetic>":  # client-written API error notices, not a model step
        return
    step = string(message.get("id")) or string(ctx.record.get("requestId")) or ctx.event_id()
    s = ctx.session
    if s.open_step != step:
        s.turn += 1
        s.open_step = step
    attrs = {**ctx.attrs, "model": model} if model else ctx.attrs
    for index, block in content_blocks(message):
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            yield ctx.event("assistant_message", f":{index}", text=cap(block["text"]), attrs=attrs)
        elif btype == "tool_use":
            name = string(block.get("name")) or "unknown"
            call_id = string(block.get("id"))
            if call_id is not None:
                s.calls[call_id] = name
            arguments = as_arguments(block.get("input"))
            tool = Tool(name=name[:256], arguments=arguments, call_id=call_id)
            yield ctx.event("tool_call", f":{index}", tool=tool, attrs=attrs)


def _user(ctx: _Ctx) -> Iterator[Item]:
    record = ctx.record
    message = record.get("message")
    if not isinstance(message, dict):
        yield Problem(ctx.source, ctx.number, "schema", "user record without `message`")
        return
    content = message.get("content")
    if record.get("isCompactSummary") is True:
        # Reached only when no boundary precedes it (the boundary case is joined in ``parse``).
        yield _compaction(ctx, text_of(content))
        return
    if record.get("isMeta") is True:
        # Written into the user role by the client (caveats, expanded skill bodies).
        meta_text = text_of(content).strip()
        if meta_text:
            yield ctx.event("user_message", ":meta", text=cap(meta_text), origin="harness")
        return
    s = ctx.session
    for index, block in content_blocks(message):
        if block.get("type") == "tool_result":
            call_id = string(block.get("tool_use_id"))
            name = s.calls.get(call_id, "unknown") if call_id else "unknown"
            is_error = block.get("is_error")
            yield ctx.event(
                "tool_result",
                f":{index}",
                text=cap(_result_text(block.get("content")), MAX_RESULT_CHARS),
                tool=Tool(
                    name=name[:256],
                    call_id=call_id,
                    is_error=is_error if isinstance(is_error, bool) else None,
                ),
            )
    for index, (origin, injected) in enumerate(_injected_parts(content)):
        yield ctx.event("user_message", f":inj{index}", text=cap(injected), origin=origin)
    text = _human_text(content)
    if not text:
        return
    if text.startswith(CONTINUATION_PREFIX):
        yield _compaction(ctx, text)
        return
    s.turn += 1
    s.open_step = None
    yield ctx.event("user_message", text=cap(text))


def _result_text(content: object) -> str:
    return content if isinstance(content, str) else text_of(content)


def _human_text(content: object) -> str:
    """What the human typed: string content or text blocks, minus client-written wrappers."""
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    else:
        return ""
    kept = [p for p in parts if p.strip() and not p.lstrip().startswith(NOT_HUMAN_PREFIXES)]
    return "\n".join(kept).strip()


#: Wrappers of a local command's own output (the rest are the client's context or hooks).
_COMMAND_OUTPUT: Final = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<bash-input>",
)
_INTERRUPT: Final = "[Request interrupted by user"


def _injected_parts(
    content: object,
) -> list[tuple[Literal["harness", "command", "interrupt"], str]]:
    """The client-written parts of a user record, with their origin: what the human did not
    type, kept as events so the detectors can count them, and a retry after an interrupt be
    told from a restatement."""
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    else:
        return []
    out: list[tuple[Literal["harness", "command", "interrupt"], str]] = []
    for part in parts:
        head = part.lstrip()
        if not head.startswith(NOT_HUMAN_PREFIXES):
            continue
        if head.startswith(_INTERRUPT):
            out.append(("interrupt", head))
        elif head.startswith(_COMMAND_OUTPUT):
            out.append(("command", head))
        else:
            out.append(("harness", head))
    return out


def _compaction(ctx: _Ctx, text: str | None) -> Event:
    """A compaction turn. ``text`` None means "summary expected on the next record"."""
    record = ctx.record
    meta = record.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    trigger: Literal["auto", "manual"] = "manual" if meta.get("trigger") == "manual" else "auto"
    version = string(record.get("version"))
    compactor = f"{AGENT}/{version}" if version else AGENT
    s = ctx.session
    s.turn += 1
    s.open_step = None
    return ctx.event(
        "compaction",
        text=cap(text) if text is not None else None,
        compaction=Compaction(
            trigger=trigger,
            tokens_before=_tokens(meta.get("preTokens")),
            tokens_after=_tokens(meta.get("postTokens")),
            compactor=compactor,
        ),
        attrs={**ctx.attrs, "compactor": compactor},
    )


def _tokens(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
