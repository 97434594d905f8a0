"""The normalised agent event: the one shape every adapter emits and every detector reads.

Decoding and validation happen in one msgspec pass (``decode``); anything that is not a valid
event raises a single ``BadEvent`` carrying a short machine-readable reason, so the shells can
dead-letter it and move on. The JSON Schema twin lives in ``schemas/agent-event.v1.json``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal, get_args

import msgspec

SCHEMA_VERSION: Final = 1

#: Largest encoded event accepted (bytes). Larger records are dead-lettered as ``oversized``.
MAX_EVENT_BYTES: Final = 1_048_576
#: Largest batch record accepted (bytes): a batch holds many events of one session.
MAX_BATCH_BYTES: Final = 8 * MAX_EVENT_BYTES

Kind = Literal[
    "user_message",
    "assistant_message",
    "tool_call",
    "tool_result",
    "compaction",
    "incident",
    "session_end",
]
KINDS: Final[tuple[str, ...]] = get_args(Kind)
Origin = Literal["human", "harness", "command", "interrupt"]
ORIGINS: Final[tuple[str, ...]] = get_args(Origin)

Id = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Turn = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Tokens = Annotated[int, msgspec.Meta(ge=0)]
AwareDatetime = Annotated[datetime, msgspec.Meta(tz=True)]


class BadEvent(ValueError):
    """A record that is not a valid event. ``reason`` is a short slug used as a metric label."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class Tool(msgspec.Struct, frozen=True, forbid_unknown_fields=False, gc=False):
    """A tool call or its result. ``arguments`` is the call's JSON object, as the model sent it."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    call_id: str | None = None
    is_error: bool | None = None


class Compaction(msgspec.Struct, frozen=True, forbid_unknown_fields=False, gc=False):
    """What the summariser did. ``compactor`` is its version: the label releases are judged by."""

    trigger: Literal["auto", "manual"] = "auto"
    tokens_before: Tokens | None = None
    tokens_after: Tokens | None = None
    compactor: str | None = None


class Event(msgspec.Struct, frozen=True, forbid_unknown_fields=False, omit_defaults=True, gc=False):
    """One step of an agent session.

    ``turn`` is the producer's step counter (one per model step; a user message is its own turn);
    events of a session are processed in turn order. Unknown top-level fields are ignored, so
    producers may add fields without breaking older monitors.
    """

    event_id: Id
    session_id: Id
    turn: Turn
    ts: AwareDatetime
    kind: Kind
    text: str | None = None
    tool: Tool | None = None
    compaction: Compaction | None = None
    attrs: dict[str, str] = msgspec.field(default_factory=dict)
    #: Who wrote a user-role record: absent or "human" for what a person typed; the adapters set
    #: "harness" (injected context, command wrappers, skill bodies), "command" (local command
    #: output) or "interrupt" (an interrupt marker). Detectors read only human text.
    origin: Origin | None = None
    v: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        # Cross-field rules msgspec cannot express; raising here makes decode() fail cleanly.
        # Every decoded event runs this: the common events pass on the first test of each rule.
        if self.tool is None and self.kind in _NEEDS_TOOL:
            raise ValueError(f"a {self.kind} event needs `tool`")
        if self.text is None and self.kind in _NEEDS_TEXT:
            raise ValueError(f"a {self.kind} event needs `text`")
        if self.v != SCHEMA_VERSION:
            raise ValueError(f"unsupported schema version {self.v}")


_NEEDS_TOOL: Final = frozenset({"tool_call", "tool_result"})
_NEEDS_TEXT: Final = frozenset({"user_message", "assistant_message"})


_decoder: Final = msgspec.json.Decoder(Event)
_decode: Final = _decoder.decode
_batch_decoder: Final = msgspec.json.Decoder(list[msgspec.Raw])
_encoder: Final = msgspec.json.Encoder()


def _reason_for(exc: msgspec.DecodeError) -> str:
    # msgspec.ValidationError subclasses DecodeError: a schema problem, not a syntax one.
    return "schema" if isinstance(exc, msgspec.ValidationError) else "not_json"


def decode(data: bytes | str) -> Event:
    """Decode and validate one JSON event; raise ``BadEvent`` with reason
    ``oversized`` | ``not_json`` | ``schema`` otherwise."""
    if len(data) > MAX_EVENT_BYTES:
        raise BadEvent("oversized", f"{len(data)} bytes > {MAX_EVENT_BYTES}")
    try:
        return _decode(data)
    except msgspec.DecodeError as exc:
        raise BadEvent(_reason_for(exc), str(exc)) from None
    except RecursionError:
        raise BadEvent("not_json", "nesting too deep") from None


def decode_record(data: bytes) -> list[Event | BadEvent]:
    """Decode one Kafka record: a single event object, or a JSON array of events (a batch).

    Each element of a batch succeeds or fails on its own, so one bad event never costs its
    neighbours. A record that is not JSON at all yields one ``BadEvent``.
    """
    stripped = data.lstrip()
    if not stripped.startswith(b"["):
        try:
            return [decode(data)]
        except BadEvent as exc:
            return [exc]
    if len(data) > MAX_BATCH_BYTES:
        return [BadEvent("oversized", f"batch of {len(data)} bytes > {MAX_BATCH_BYTES}")]
    try:
        raws = _batch_decoder.decode(data)
    except msgspec.DecodeError as exc:
        return [BadEvent("not_json", str(exc))]
    except RecursionError:
        return [BadEvent("not_json", "nesting too deep")]
    out: list[Event | BadEvent] = []
    for raw in raws:
        try:
            out.append(decode(bytes(raw)))
        except BadEvent as exc:
            out.append(exc)
    return out


def encode(event: Event) -> bytes:
    """Encode an event as compact JSON (the wire and JSONL form)."""
    return _encoder.encode(event)


def encode_batch(events: list[Event]) -> bytes:
    """Encode events of one session as one batch record (a JSON array)."""
    return _encoder.encode(events)


def to_builtins(event: Event) -> dict[str, Any]:
    """The event as plain JSON-compatible builtins (for reports and tests)."""
    out: dict[str, Any] = msgspec.to_builtins(event)
    return out
