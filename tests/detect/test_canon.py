import json

from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.canon import canonical, fingerprint

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
arguments = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


def test_key_order_and_whitespace_do_not_matter() -> None:
    a = json.loads('{"file_path": "/a.py",  "limit": 10}')
    b = json.loads('{"limit":10,"file_path":"/a.py"}')
    assert canonical(a) == canonical(b)
    assert fingerprint("Read", a) == fingerprint("Read", b)


def test_equivalent_number_spellings_are_equal() -> None:
    spellings = [json.loads(s) for s in ('{"n": 1}', '{"n": 1.0}', '{"n": 1e0}', '{"n": 10E-1}')]
    assert len({canonical(s) for s in spellings}) == 1


def test_different_values_tools_and_types_differ() -> None:
    assert fingerprint("Read", {"n": 1}) != fingerprint("Read", {"n": 2})
    assert fingerprint("Read", {"n": 1}) != fingerprint("Grep", {"n": 1})
    assert canonical({"n": True}) != canonical({"n": 1})
    assert canonical({"n": 1.5}) != canonical({"n": 1})
    assert canonical({"cmd": "ls "}) != canonical({"cmd": "ls"})


def test_non_finite_and_unencodable_values_do_not_crash() -> None:
    assert canonical({"x": float("nan")}) == canonical({"x": float("nan")})
    assert fingerprint("T", {"x": float("inf")}) == fingerprint("T", {"x": float("inf")})
    assert canonical({"x": 2**80})  # beyond 64-bit: the slow path spells it
    deep: dict[str, object] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    assert isinstance(fingerprint("T", deep), int)


def test_long_arguments_are_fingerprinted_on_a_prefix_plus_length() -> None:
    base = "x" * 100
    assert fingerprint("T", {"a": base + "1"}, max_bytes=50) == fingerprint(
        "T", {"a": base + "2"}, max_bytes=50
    )
    assert fingerprint("T", {"a": base}, max_bytes=50) != fingerprint(
        "T", {"a": base + "2"}, max_bytes=50
    )


@given(arguments)
def test_canonical_is_stable_under_reordering(args: dict[str, object]) -> None:
    reordered = dict(reversed(list(args.items())))
    assert canonical(args) == canonical(reordered)
    assert json.loads(canonical(args)) == json.loads(canonical(reordered))


@given(arguments)
def test_canonical_survives_a_json_round_trip(args: dict[str, object]) -> None:
    again = json.loads(json.dumps(args, indent=2))
    assert canonical(again) == canonical(args)


@given(arguments, st.integers(-(2**40), 2**40))
def test_integral_floats_equal_ints(args: dict[str, object], n: int) -> None:
    assert fingerprint("T", {**args, "n": n}) == fingerprint("T", {**args, "n": float(n)})


@given(arguments)
def test_fingerprint_is_63_bit(args: dict[str, object]) -> None:
    assert 0 <= fingerprint("Tool", args) < 2**63
