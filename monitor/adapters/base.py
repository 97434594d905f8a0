"""Shared vocabulary of the adapters: the ``Problem`` value and the small pure helpers every
source format needs (decode one line, read a timestamp, cap a text, build a deterministic id).

Adapters never raise on input: a line that cannot be used becomes a ``Problem`` carrying the
file, the 1-based line number and a short reason slug, so the shell can count it and move on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final, Literal, NamedTuple, Protocol

import msgspec

from monitor.events import Event


class Problem(msgspec.Struct, frozen=True):
    """A line (or file) an adapter could not turn into events.

    ``severity="skipped"`` marks known-harmless input (a record type this adapter does not know);
    ``"error"`` is malformed input. Reasons are short slugs suitable as metric labels.
    """

    source: str
    line: int
    reason: str
    detail: str = ""
    severity: Literal["error", "skipped"] = "error"


Item = Event | Problem


class Parser(Protocol):
    """The one signature every adapter module's ``parse`` has."""

    def __call__(self, lines: Iterable[bytes], source: str) -> Iterator[Item]: ...


class Located(NamedTuple):
    """An adapter's item with the 1-based line of the record it was read from (0 for a
    Problem about the whole file): what replay's provenance records."""

    line: int
    item: Item


class LocatedParser(Protocol):
    """``parse_located``: the same items as ``parse``, each with its line."""

    def __call__(self, lines: Iterable[bytes], source: str) -> Iterator[Located]: ...


def without_lines(located: Iterator[Located]) -> Iterator[Item]:
    """The items of a located stream (each adapter's ``parse`` is its ``parse_located`` so)."""
    for _, item in located:
        yield item


#: Longest text copied into an event (characters). Transcripts hold whole files in tool results;
#: the detectors read user text and call arguments, so results and summaries are cut.
MAX_TEXT_CHARS: Final = 16_384
#: Longest tool-result text copied into an event (characters).
MAX_RESULT_CHARS: Final = 2_048
#: Characters of an offending line quoted in a Problem's detail.
DETAIL_CHARS: Final = 120

_decoder: Final = msgspec.json.Decoder()


class Line(msgspec.Struct, frozen=True):
    """One decoded JSON object line, or why it is not one."""

    number: int
    record: dict[str, Any] | None
    problem: Problem | None = None


def json_lines(lines: Iterable[bytes], source: str) -> Iterator[Line]:
    """Number and decode lines; blank lines are skipped silently.

    Only the last line of a file can lack its newline, so a line without one that fails to decode
    is reported as ``truncated_last_line`` (a writer was cut off), not as garbage.
    """
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            value = _decoder.decode(stripped)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            reason = "not_json" if raw.endswith(b"\n") else "truncated_last_line"
            yield Line(number, None, Problem(source, number, reason, _quote(stripped)))
            continue
        if not isinstance(value, dict):
            detail = f"a JSON {type(value).__name__}, not an object"
            yield Line(number, None, Problem(source, number, "schema", detail))
            continue
        yield Line(number, value)


def each_record(
    lines: Iterable[bytes], source: str, handle: Callable[[dict[str, Any], int], Iterable[Item]]
) -> Iterator[Located]:
    """The Problems of undecodable lines, and what ``handle`` makes of each decoded record
    (given the record and its 1-based line number), each with that line number."""
    for line in json_lines(lines, source):
        if line.problem is not None:
            yield Located(line.number, line.problem)
        elif line.record is not None:
            for item in handle(line.record, line.number):
                yield Located(line.number, item)


def _quote(raw: bytes) -> str:
    return raw[:DETAIL_CHARS].decode("utf-8", "replace")


def parse_ts(value: object) -> datetime | None:
    """An aware datetime from an ISO-8601 string or epoch milliseconds; naive means UTC."""
    try:
        if isinstance(value, str) and value:
            ts = datetime.fromisoformat(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            ts = datetime.fromtimestamp(value / 1000.0, tz=UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def from_unix_nano(value: object) -> datetime | None:
    """An aware datetime from OTLP's ``timeUnixNano`` (a decimal string or an int)."""
    try:
        nanos = int(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
        return None if nanos is None or nanos <= 0 else datetime.fromtimestamp(nanos / 1e9, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def cap(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters, saying how much was dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[+{len(text) - limit} chars]"


def as_arguments(value: object) -> dict[str, Any]:
    """A call's arguments as a JSON object: objects pass unchanged, anything else is wrapped as
    ``{"input": value}`` so a raw string still fingerprints stably."""
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    return {} if value is None else {"input": value}


def parse_arguments(value: object) -> dict[str, Any]:
    """Arguments sent as a JSON *string* (Codex, OTel): decode it first, then ``as_arguments``.

    A string that is not JSON is kept as ``{"input": <string>}``: the call still happened.
    """
    if isinstance(value, str):
        try:
            return as_arguments(_decoder.decode(value))
        except (msgspec.DecodeError, RecursionError):
            return {"input": value}
    return as_arguments(value)


def text_of(content: object, block_type: str = "text", key: str = "text") -> str:
    """Join the text of a string or a list of ``{"type": block_type, key: ...}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b[key]
            for b in content
            if isinstance(b, dict) and b.get("type") == block_type and isinstance(b.get(key), str)
        ]
        return "\n".join(parts)
    return ""


def string(value: object) -> str | None:
    """``value`` if it is a non-empty string, else None (for ids and names read from records)."""
    return value if isinstance(value, str) and value else None


def clip_id(value: str) -> str:
    """Ids are at most 256 characters in the event schema; longer ones keep a prefix plus a hash
    of the whole, so two long ids that share a prefix stay distinct."""
    if len(value) <= 256:
        return value
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{value[:239]}#{digest}"


def content_blocks(message: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index, block) for each object block of a chat message's ``content``.

    Both Anthropic-style transcripts spell content either as a plain string (one text block) or
    as a list of typed blocks; anything else has no blocks.
    """
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return []
    return [(i, b) for i, b in enumerate(blocks) if isinstance(b, dict)]
