"""Argument canonicalisation: two calls are "identical" when their canonical forms are equal.

Models spell the same call differently: key order, JSON whitespace, ``1`` vs ``1.0`` vs ``1e0``.
None of that changes what the tool does, so none of it may hide a repeat. String contents are kept
exactly (``"ls "`` and ``"ls"`` may be different commands), and ``true`` never equals ``1``.
"""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec
from xxhash import xxh3_64_intdigest

_encoder: Final = msgspec.json.Encoder(order="sorted")
_encode: Final = _encoder.encode
#: What the fast path cannot encode or re-read; the slow path (``_normalise``) spells it.
_UNENCODABLE: Final = (TypeError, ValueError, RecursionError, OverflowError, msgspec.DecodeError)
#: Deeper structures are fingerprinted on their encoded text rather than walked (bounds recursion).
MAX_DEPTH: Final = 64


class _Token(str):
    """Structural text pushed on the stack, told apart from string values by its type."""


def _deep_text(value: Any) -> str:
    """An exact text form of an over-deep structure, built without recursion."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            out.append(item)
        elif isinstance(item, dict):
            out.append("{")
            stack.append(_Token("}"))
            for k in sorted(item, key=str, reverse=True):
                stack.extend((item[k], _Token(f"{k!r}:")))
        elif isinstance(item, list | tuple):
            out.append("[")
            stack.append(_Token("]"))
            stack.extend(reversed(item))
        else:
            out.append(repr(item) + ",")
    return "".join(out)


def _normalise(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return _deep_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) <= 2**53:
            return int(value)
        return value
    if isinstance(value, dict):
        return {str(k): _normalise(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v, depth + 1) for v in value]
    return str(value)


def _float_hook(text: str) -> float | int:
    value = float(text)
    if value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value


#: Re-reading the encoded arguments through this decoder spells every integral float as an int;
#: the hook runs only for float tokens, so float-free arguments pay one extra decode (~0.5 us).
_float_normaliser: Final = msgspec.json.Decoder(float_hook=_float_hook)


#: Argument value types whose JSON spelling is already canonical.
_PLAIN: Final = frozenset({str, int, bool, type(None)})


def canonical(arguments: dict[str, Any]) -> bytes:
    """Canonical JSON bytes of a call's arguments: sorted keys, compact, integral floats as ints.

    JSON has no NaN or infinity: msgspec spells them ``null``, and the slow path (for values
    msgspec cannot encode) spells them as strings and compares over-deep structures on their text.
    """
    try:
        body = _encode(arguments)
    except _UNENCODABLE:
        return _encode(_normalise(arguments, 0))
    for value in arguments.values():
        if type(value) not in _PLAIN:
            return _numbers_normalised(arguments, body)  # a float, or a container that may hold one
    return body  # most calls: flat strings and integers, already canonical


def _numbers_normalised(arguments: dict[str, Any], body: bytes) -> bytes:
    """``body`` (``arguments`` encoded) with every integral float spelled as an int."""
    try:
        if b"." in body or b"e" in body or b"E" in body:
            body = _encode(_float_normaliser.decode(body))
        return body
    except _UNENCODABLE:
        return _encode(_normalise(arguments, 0))


def project(arguments: dict[str, Any], left_out: frozenset[str] | None) -> dict[str, Any]:
    """The arguments that say what a call does: ``arguments`` without the fields ``left_out``
    (``DetectConfig.ignored_arguments``). Unchanged, and not copied, when none is present."""
    if not left_out or left_out.isdisjoint(arguments):
        return arguments
    return {k: v for k, v in arguments.items() if k not in left_out}


#: Tool name -> its encoded name and separator, the head of every fingerprinted text. Tool
#: names are few; past the cap (a producer inventing names), the others are encoded per call.
_heads: dict[str, bytes] = {}
_MAX_HEADS: Final = 1024


def _head(tool: str) -> bytes:
    head = tool.encode("utf-8", "surrogatepass") + b"\x00"
    if len(_heads) < _MAX_HEADS:
        _heads[tool] = head
    return head


def fingerprint(tool: str, arguments: dict[str, Any], max_bytes: int = 65_536) -> int:
    """A 63-bit fingerprint of (tool name, canonical arguments): XXH3-64 of both.

    Arguments longer than ``max_bytes`` are fingerprinted on their prefix plus their full length,
    which bounds the hashing cost of pathological payloads while keeping distinct lengths distinct.
    XXH3 is not cryptographic; fingerprints only tell apart one session's calls.
    """
    # ``canonical``, inlined: a tool call runs this, and the call cost a tenth of it.
    try:
        body = _encode(arguments)
    except _UNENCODABLE:
        body = _encode(_normalise(arguments, 0))
    else:
        for value in arguments.values():
            if type(value) not in _PLAIN:
                body = _numbers_normalised(arguments, body)
                break
    if len(body) > max_bytes:
        body = body[:max_bytes] + b"#" + str(len(body)).encode()
    head = _heads.get(tool)
    if head is None:
        head = _head(tool)
    return xxh3_64_intdigest(head + body) >> 1


def fingerprint_hex(fp: int) -> str:
    return f"{fp:016x}"
