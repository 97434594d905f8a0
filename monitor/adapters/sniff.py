"""Which format a file is in, from its first lines.

Each source has an unmistakable envelope (OTLP's ``resourceSpans``, Codex's ``payload``, pi's
``session`` header, Claude Code's ``sessionId``/``uuid``), so the first decodable object decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec

#: Lines examined before giving up; a file whose first lines are all garbage is not guessed at.
SNIFF_LINES: Final = 8

_CODEX_TYPES: Final = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)
_CLAUDE_TYPES: Final = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "user",
        "assistant",
        "system",
    }
)
_decoder: Final = msgspec.json.Decoder()


def classify(record: dict[str, Any]) -> str | None:
    """The format one decoded record belongs to, or None when it says nothing decisive."""
    value = record.get("type")
    rtype = value if isinstance(value, str) else None
    if "resourceSpans" in record or "resourceLogs" in record:
        return "otel"
    if {"event_id", "session_id", "kind"} <= record.keys():
        return "events"
    if "payload" in record and rtype in _CODEX_TYPES:
        return "codex"
    if "sessionId" in record or "leafUuid" in record or "parentUuid" in record:
        return "claude_code"
    if rtype == "session" and ("modelId" in record or "provider" in record or "cwd" in record):
        return "pi"
    if rtype in ("message", "compaction", "model_change", "thinking_level_change"):
        return "pi"
    if rtype in _CLAUDE_TYPES and "uuid" in record:
        return "claude_code"
    return None


def sniff(lines: Iterable[bytes]) -> str | None:
    """The format of a file given its first lines (at most ``SNIFF_LINES`` are read)."""
    for count, raw in enumerate(lines):
        if count >= SNIFF_LINES:
            break
        try:
            record = _decoder.decode(raw.strip() or b"null")
        except (msgspec.DecodeError, RecursionError):
            continue
        if isinstance(record, dict):
            found = classify(record)
            if found is not None:
                return found
    return None
