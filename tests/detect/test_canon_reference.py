"""``fingerprint`` and ``canonical`` against the implementation they replaced, kept here verbatim
as the reference: the faster code must give the same bytes and the same fingerprint for every
input, so every documented equivalence (key order, JSON whitespace, number spellings, the
prefix rule for long arguments) and every stored fingerprint carry over unchanged."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from xxhash import xxh3_64_intdigest

from monitor.detect.canon import _normalise, canonical, fingerprint

_encoder = msgspec.json.Encoder(order="sorted")


def _float_hook(text: str) -> float | int:
    value = float(text)
    if value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value


_float_normaliser = msgspec.json.Decoder(float_hook=_float_hook)
_PLAIN = frozenset({str, int, bool, type(None)})


def reference_canonical(arguments: dict[str, Any]) -> bytes:
    try:
        body = _encoder.encode(arguments)
        for value in arguments.values():
            if type(value) not in _PLAIN:
                break
        else:
            return body
        if b"." in body or b"e" in body or b"E" in body:
            body = _encoder.encode(_float_normaliser.decode(body))
        return body
    except (TypeError, ValueError, RecursionError, OverflowError, msgspec.DecodeError):
        return _encoder.encode(_normalise(arguments, 0))


def reference_fingerprint(tool: str, arguments: dict[str, Any], max_bytes: int = 65_536) -> int:
    body = reference_canonical(arguments)
    if len(body) > max_bytes:
        body = body[:max_bytes] + b"#" + str(len(body)).encode()
    return xxh3_64_intdigest(tool.encode("utf-8", "surrogatepass") + b"\x00" + body) >> 1


numbers = (
    st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(2**60), 2**60).map(float)
    | st.sampled_from([0.0, -0.0, 1.0, 1e0, 10e-1, 2.5, 1e300, 2.0**53, 2.0**53 + 2, 1e22])
)
leaves = st.none() | st.booleans() | numbers | st.text(max_size=24)
json_values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=24,
)
arguments = st.dictionaries(st.text(max_size=10), json_values, max_size=6)
tools = st.text(min_size=1, max_size=12) | st.sampled_from(["Read", "Bash", "\ud800x", "é"])


@given(tools, arguments, st.sampled_from([8, 40, 65_536]))
def test_fingerprint_and_canonical_equal_the_reference(
    tool: str, args: dict[str, Any], max_bytes: int
) -> None:
    assert canonical(args) == reference_canonical(args)
    assert fingerprint(tool, args, max_bytes) == reference_fingerprint(tool, args, max_bytes)
    assert fingerprint(tool, args) == reference_fingerprint(tool, args)  # cached head


def _respell(value: Any) -> Any:
    """The same JSON value as another model might send it: integral floats for ints."""
    if isinstance(value, dict):
        return {k: _respell(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [_respell(v) for v in value]
    if type(value) is int and abs(value) <= 2**53:
        return float(value)
    return value


finite = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=16,
)


@given(tools, st.dictionaries(st.text(max_size=8), finite, max_size=5))
def test_documented_equivalences_hold(tool: str, args: dict[str, Any]) -> None:
    """Key order, whitespace and number spelling do not move the fingerprint; neither does a
    JSON round trip with indentation. Strings are kept as they are."""
    spaced = json.loads(json.dumps(args, indent=3))
    respelled = _respell(args)
    fp = fingerprint(tool, args)
    assert fingerprint(tool, spaced) == fp
    assert fingerprint(tool, respelled) == fp
    assert fp == reference_fingerprint(tool, respelled)


@given(tools, st.text(min_size=1, max_size=40), st.text(max_size=3), st.integers(1, 30))
def test_long_arguments_keep_the_prefix_rule(
    tool: str, text: str, tail: str, max_bytes: int
) -> None:
    """Past ``max_bytes``, arguments that share the prefix and the length share the fingerprint;
    a different length never does."""
    one, other = {"a": text + "1" + tail}, {"a": text + "2" + tail}
    for args in (one, other):
        assert fingerprint(tool, args, max_bytes) == reference_fingerprint(tool, args, max_bytes)
    body = canonical(one)
    if len(canonical(other)) == len(body) and canonical(other)[:max_bytes] == body[:max_bytes]:
        assert fingerprint(tool, one, max_bytes) == fingerprint(tool, other, max_bytes)
    longer = {"a": text + "1" + tail + "x"}
    assert fingerprint(tool, longer, max_bytes) != fingerprint(tool, one, max_bytes)


def test_non_finite_and_deep_values_equal_the_reference() -> None:
    for args in ({"x": math.nan}, {"x": -math.inf}, {"x": 2**80}, {"x": [1.0, {"y": 2e0}]}):
        assert fingerprint("T", args) == reference_fingerprint("T", args)
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(500):
        node["a"] = {"b": 1.0}
        node = node["a"]
    assert fingerprint("T", deep) == reference_fingerprint("T", deep)
