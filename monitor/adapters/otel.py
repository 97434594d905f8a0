"""OpenTelemetry GenAI telemetry exported as OTLP/JSON lines to events.

Each line is one ``ExportTraceServiceRequest`` (``resourceSpans``) or ``ExportLogsServiceRequest``
(``resourceLogs``), as the Collector's file exporter writes them. The session is
``gen_ai.conversation.id`` (else ``session.id``, else the trace id). A ``chat`` span is one model
step: one turn, holding the tool calls of its ``gen_ai.output.messages``; the new user messages
at the tail of its ``gen_ai.input.messages`` come first, each its own turn. An ``execute_tool``
span gives the call's result (same turn as the call) and, when the chat span's content was not
captured, the call itself (its own turn).

The GenAI conventions define no compaction event, so this module defines one:
``COMPACTION_EVENT`` as a span event or a log record, with the ``COMPACTION_*`` attributes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

import msgspec

from monitor.adapters.base import (
    DETAIL_CHARS,
    MAX_RESULT_CHARS,
    Item,
    Located,
    Problem,
    cap,
    clip_id,
    from_unix_nano,
    json_lines,
    parse_arguments,
    string,
    without_lines,
)
from monitor.events import Compaction, Event, Kind, Tool

AGENT: Final = "otel"

#: Our compaction event (span event or log record event name); the conventions define none.
COMPACTION_EVENT: Final = "compaction_monitor.compaction"
COMPACTION_TRIGGER: Final = "compaction_monitor.compaction.trigger"  # "auto" | "manual"
COMPACTION_TOKENS_BEFORE: Final = "compaction_monitor.compaction.tokens_before"
COMPACTION_TOKENS_AFTER: Final = "compaction_monitor.compaction.tokens_after"
COMPACTION_COMPACTOR: Final = "compaction_monitor.compaction.compactor"
COMPACTION_SUMMARY: Final = "compaction_monitor.compaction.summary"
#: Gemini CLI's own compression log event (attributes ``tokens_before``/``tokens_after``).
GEMINI_COMPRESSION: Final = "gemini_cli.chat_compression"

CHAT_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content"})
SESSION_KEYS: Final = ("gen_ai.conversation.id", "session.id")
_STATUS_ERROR: Final = 2

_decoder: Final = msgspec.json.Decoder()


def any_value(value: object) -> Any:
    """The plain value of an OTLP/JSON ``AnyValue`` (int64 arrives as a decimal string)."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        values = (
            value["arrayValue"].get("values") if isinstance(value["arrayValue"], dict) else None
        )
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        kv = value["kvlistValue"]
        return attributes(kv.get("values") if isinstance(kv, dict) else None)
    return None


def attributes(items: object) -> dict[str, Any]:
    """An OTLP ``KeyValue`` list as a dict."""
    if not isinstance(items, list):
        return {}
    return {
        item["key"]: any_value(item.get("value"))
        for item in items
        if isinstance(item, dict) and isinstance(item.get("key"), str)
    }


@dataclass
class _Session:
    turn: int = 0
    calls: set[str] = field(default_factory=set)
    #: (position, digest) of input messages already emitted, so a retried request with the same
    #: history does not read as the user saying it again.
    inputs: set[tuple[int, str]] = field(default_factory=set)


@dataclass
class _State:
    source: str
    sessions: dict[str, _Session] = field(default_factory=dict)

    def session(self, sid: str) -> _Session:
        return self.sessions.setdefault(sid, _Session())


@dataclass(frozen=True)
class _Span:
    sid: str
    ids: str
    op: str
    attrs: dict[str, Any]
    start: datetime
    end: datetime
    error: bool
    events: list[dict[str, Any]]
    resource: dict[str, Any]


def parse(lines: Iterable[bytes], source: str) -> Iterator[Item]:
    """Events of an OTLP/JSON file, in file order (spans within a line by start time)."""
    return without_lines(parse_located(lines, source))


def parse_located(lines: Iterable[bytes], source: str) -> Iterator[Located]:
    """``parse``'s items, each with the line of the export request it came from."""
    state = _State(source=source)
    for line in json_lines(lines, source):
        if line.problem is not None:
            yield Located(line.number, line.problem)
            continue
        record = line.record
        assert record is not None
        number = line.number
        if "resourceSpans" not in record and "resourceLogs" not in record:
            detail = ",".join(sorted(record)[:5])[:DETAIL_CHARS]
            problem = Problem(source, number, "unknown_record:not_otlp", detail, "skipped")
            yield Located(number, problem)
            continue
        spans = sorted(_spans(record.get("resourceSpans")), key=lambda s: (s.start, s.ids))
        for span in spans:
            for event in _span(state, span):
                yield Located(number, event)
        for index, log in enumerate(_logs(record.get("resourceLogs"))):
            for item in _log(state, log, number, index):
                yield Located(number, item)


def _dicts(value: object) -> list[dict[str, Any]]:
    """The dict items of ``value`` if it is a list (malformed exports yield nothing)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _resource(container: dict[str, Any]) -> dict[str, Any]:
    resource = container.get("resource")
    return attributes(resource.get("attributes")) if isinstance(resource, dict) else {}


def _spans(resource_spans: object) -> Iterator[_Span]:
    for rs in _dicts(resource_spans):
        resource = _resource(rs)
        for ss in _dicts(rs.get("scopeSpans")):
            for raw in _dicts(ss.get("spans")):
                span = _to_span(raw, resource)
                if span is not None:
                    yield span


def _to_span(raw: dict[str, Any], resource: dict[str, Any]) -> _Span | None:
    attrs = attributes(raw.get("attributes"))
    start = from_unix_nano(raw.get("startTimeUnixNano"))
    end = from_unix_nano(raw.get("endTimeUnixNano")) or start
    trace, span_id = string(raw.get("traceId")) or "", string(raw.get("spanId")) or ""
    sid = _session_id(attrs, resource, trace)
    if start is None or end is None or sid is None:
        return None
    name = string(raw.get("name")) or ""
    op = string(attrs.get("gen_ai.operation.name")) or name.split(" ", 1)[0]
    status = raw.get("status")
    error = isinstance(status, dict) and status.get("code") in (_STATUS_ERROR, "STATUS_CODE_ERROR")
    events = _dicts(raw.get("events"))
    return _Span(sid, f"{trace}:{span_id}", op, attrs, start, end, error, events, resource)


def _session_id(attrs: dict[str, Any], resource: dict[str, Any], trace: str) -> str | None:
    for source in (attrs, resource):
        for key in SESSION_KEYS:
            value = source.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return clip_id(str(value))
    return clip_id(trace) if trace else None


def _agent_attrs(span_attrs: dict[str, Any], resource: dict[str, Any]) -> dict[str, str]:
    out = {"agent": string(resource.get("service.name")) or AGENT}
    version = string(resource.get("service.version"))
    if version:
        out["agent_version"] = version
    model = string(span_attrs.get("gen_ai.response.model")) or string(
        span_attrs.get("gen_ai.request.model")
    )
    if model:
        out["model"] = model
    tenant = string(resource.get("tenant.id"))
    if tenant:
        out["tenant"] = tenant
    return out


def _event(
    sid: str,
    session: _Session,
    event_id: str,
    ts: datetime,
    kind: Kind,
    attrs: dict[str, str],
    **fields: Any,
) -> Event:
    return Event(
        event_id=clip_id(event_id),
        session_id=sid,
        turn=session.turn,
        ts=ts,
        kind=kind,
        attrs=attrs,
        **fields,
    )


def _span(state: _State, span: _Span) -> Iterator[Event]:
    session = state.session(span.sid)
    attrs = _agent_attrs(span.attrs, span.resource)
    if span.op in CHAT_OPERATIONS:
        yield from _chat(span, session, attrs)
    elif span.op == "execute_tool":
        yield from _tool(span, session, attrs)
    for index, raw in enumerate(span.events):
        if raw.get("name") in (COMPACTION_EVENT, GEMINI_COMPRESSION):
            ev_attrs = attributes(raw.get("attributes"))
            ts = from_unix_nano(raw.get("timeUnixNano")) or span.end
            sid = _session_id(ev_attrs, {}, "") or span.sid
            yield _compaction(state.session(sid), sid, f"{span.ids}:ev{index}", ts, ev_attrs, attrs)


def _messages(value: object) -> list[Any]:
    """``gen_ai.*.messages``: a JSON string (span attributes) or an already structured list."""
    if isinstance(value, str):
        try:
            value = _decoder.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return []
    return value if isinstance(value, list) else []


def _parts_text(message: dict[str, Any]) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [
            p["content"]
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
        ]
        return "\n".join(texts)
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _chat(span: _Span, session: _Session, attrs: dict[str, str]) -> Iterator[Event]:
    inputs = [m for m in _messages(span.attrs.get("gen_ai.input.messages")) if isinstance(m, dict)]
    tail = len(inputs)
    while tail > 0 and inputs[tail - 1].get("role") == "user":
        tail -= 1
    for position in range(tail, len(inputs)):
        text = _parts_text(inputs[position]).strip()
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        if not text or (position, digest) in session.inputs:
            continue
        session.inputs.add((position, digest))
        session.turn += 1
        event_id = f"{span.ids}:in{position}"
        yield _event(span.sid, session, event_id, span.start, "user_message", attrs, text=cap(text))
    session.turn += 1
    outputs = _messages(span.attrs.get("gen_ai.output.messages"))
    for m_index, message in enumerate(outputs):
        parts = message.get("parts") if isinstance(message, dict) else None
        for p_index, part in enumerate(parts if isinstance(parts, list) else []):
            if not isinstance(part, dict):
                continue
            event_id = f"{span.ids}:out{m_index}.{p_index}"
            if part.get("type") == "text" and isinstance(part.get("content"), str):
                if part["content"].strip():
                    text = cap(part["content"])
                    yield _event(
                        span.sid, session, event_id, span.end, "assistant_message", attrs, text=text
                    )
            elif part.get("type") == "tool_call":
                call_id = string(part.get("id"))
                if call_id is not None:
                    session.calls.add(call_id)
                tool = Tool(
                    name=(string(part.get("name")) or "unknown")[:256],
                    arguments=parse_arguments(part.get("arguments")),
                    call_id=call_id,
                )
                yield _event(span.sid, session, event_id, span.end, "tool_call", attrs, tool=tool)


def _tool(span: _Span, session: _Session, attrs: dict[str, str]) -> Iterator[Event]:
    name = (string(span.attrs.get("gen_ai.tool.name")) or "unknown")[:256]
    call_id = string(span.attrs.get("gen_ai.tool.call.id"))
    if call_id is None or call_id not in session.calls:
        # The chat span did not capture this call: the tool span is our only sight of it.
        session.turn += 1
        if call_id is not None:
            session.calls.add(call_id)
        arguments = parse_arguments(span.attrs.get("gen_ai.tool.call.arguments"))
        tool = Tool(name=name, arguments=arguments, call_id=call_id)
        yield _event(
            span.sid, session, f"{span.ids}:call", span.start, "tool_call", attrs, tool=tool
        )
    result = span.attrs.get("gen_ai.tool.call.result")
    text = result if isinstance(result, str) else (None if result is None else str(result))
    error = span.error or span.attrs.get("error.type") is not None
    tool = Tool(name=name, call_id=call_id, is_error=error)
    yield _event(
        span.sid,
        session,
        f"{span.ids}:result",
        span.end,
        "tool_result",
        attrs,
        text=cap(text, MAX_RESULT_CHARS) if text is not None else None,
        tool=tool,
    )


def _logs(resource_logs: object) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for rl in _dicts(resource_logs):
        resource = _resource(rl)
        for sl in _dicts(rl.get("scopeLogs")):
            for raw in _dicts(sl.get("logRecords")):
                yield raw, resource


def _log(
    state: _State, log: tuple[dict[str, Any], dict[str, Any]], number: int, index: int
) -> Iterator[Item]:
    raw, resource = log
    attrs = attributes(raw.get("attributes"))
    name = string(raw.get("eventName")) or string(attrs.get("event.name"))
    if name not in (COMPACTION_EVENT, GEMINI_COMPRESSION, "gen_ai.user.message"):
        return  # an export holds every log of the process; only these mean anything here
    ts = from_unix_nano(raw.get("timeUnixNano")) or from_unix_nano(raw.get("observedTimeUnixNano"))
    sid = _session_id(attrs, resource, string(raw.get("traceId")) or "")
    if ts is None or sid is None:
        yield Problem(state.source, number, "schema", f"{name} log without time or session")
        return
    session = state.session(sid)
    event_id = f"{sid}:L{number}:r{index}"
    agent_attrs = _agent_attrs(attrs, resource)
    if name == "gen_ai.user.message":
        body = any_value(raw.get("body"))
        text = body.get("content") if isinstance(body, dict) else body
        if isinstance(text, str) and text.strip():
            session.turn += 1
            yield _event(sid, session, event_id, ts, "user_message", agent_attrs, text=cap(text))
        return
    yield _compaction(session, sid, event_id, ts, attrs, agent_attrs)


def _compaction(
    session: _Session,
    sid: str,
    event_id: str,
    ts: datetime,
    ev_attrs: dict[str, Any],
    attrs: dict[str, str],
) -> Event:
    def tokens(*keys: str) -> int | None:
        for key in keys:
            value = ev_attrs.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return None

    trigger: Literal["auto", "manual"] = (
        "manual" if ev_attrs.get(COMPACTION_TRIGGER) == "manual" else "auto"
    )
    compactor = string(ev_attrs.get(COMPACTION_COMPACTOR)) or attrs.get("agent", AGENT)
    summary = ev_attrs.get(COMPACTION_SUMMARY)
    session.turn += 1
    return _event(
        sid,
        session,
        event_id,
        ts,
        "compaction",
        {**attrs, "compactor": compactor},
        text=cap(summary) if isinstance(summary, str) else None,
        compaction=Compaction(
            trigger=trigger,
            tokens_before=tokens(COMPACTION_TOKENS_BEFORE, "tokens_before"),
            tokens_after=tokens(COMPACTION_TOKENS_AFTER, "tokens_after"),
            compactor=compactor,
        ),
    )
