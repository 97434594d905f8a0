"""The configuration reference in deploy/README.md is exactly what ``monitor.settings_doc``
generates from ``Settings``, documents every field, and its defaults read back as the defaults.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from monitor.config import Settings, load_settings
from monitor.settings_doc import (
    HEADING,
    describe,
    extract_section,
    field_comments,
    main,
    markdown,
    replace_section,
)

README = Path(__file__).resolve().parents[2] / "deploy" / "README.md"


def test_readme_reference_is_the_generated_one() -> None:
    section = extract_section(README.read_text(encoding="utf-8"))
    assert section is not None, f"no {HEADING!r} section in deploy/README.md"
    assert section == markdown(describe()), (
        "stale: run `python -m monitor.settings_doc --update deploy/README.md`"
    )


def test_update_leaves_a_current_readme_unchanged(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["--update", str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == README.read_text(encoding="utf-8")


def test_every_field_is_documented_with_its_env_var() -> None:
    docs = describe()
    assert [d.name for d in docs] == list(Settings.__struct_fields__)
    for d in docs:
        assert d.env == "MONITOR_" + d.name.upper()
        assert d.description, f"Settings.{d.name} has no `#:` comment in monitor/config.py"
        assert d.type


def test_documented_defaults_read_back_as_the_defaults() -> None:
    """Setting each env var to the documented default changes nothing."""
    defaults = Settings()
    for d in describe():
        if d.default == "(secret)":
            continue
        raw = "" if d.default == '""' else d.default
        loaded = load_settings(environ={d.env: raw})
        assert getattr(loaded, d.name) == getattr(defaults, d.name), d.name


def test_field_comments_reads_only_hash_colon_lines_directly_above() -> None:
    source = '''
class Settings:
    """Doc."""

    #: First line
    #: second line.
    a: int = 1
    # an ordinary comment
    b: str = ""
    #: Detached by a blank line.

    c: float = 0.5
    d: bool = True  #: trailing comments are not descriptions
    #: Last.
    e: int = 2


class Other:
    #: Not a setting.
    z: int = 0
'''
    assert field_comments(source) == {
        "a": "First line second line.",
        "b": "",
        "c": "",
        "d": "",
        "e": "Last.",
    }


def test_the_table_has_one_row_per_setting() -> None:
    docs = describe()
    table = markdown(docs)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(docs)
    for d in docs:
        assert f"| `{d.name}` | `{d.env}` |" in table
    assert table.startswith(HEADING + "\n")


#: Characters str.splitlines() treats as line ends, kept out of generated lines.
_LINE_ENDS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_line = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters=_LINE_ENDS),
    max_size=30,
).filter(lambda s: not s.startswith("## "))
_block = st.lists(_line, max_size=6).map(lambda ls: "".join(line + "\n" for line in ls))


@given(before=_block, after=_block, old=_block, new=_block)
def test_replace_section_swaps_only_the_section(
    before: str, after: str, old: str, new: str
) -> None:
    section = HEADING + "\n" + new
    tail = "## Next\n" + after
    doc = before + HEADING + "\n" + old + tail
    out = replace_section(doc, section)
    assert out.startswith(before)
    assert out.endswith(tail)
    assert extract_section(out) == section.rstrip("\n") + "\n"
    assert replace_section(out, section) == out


@given(before=_block, new=_block)
def test_replace_section_appends_when_absent(before: str, new: str) -> None:
    section = HEADING + "\n" + new
    out = replace_section(before, section)
    assert out.startswith(before)
    assert extract_section(out) == section.rstrip("\n") + "\n"
