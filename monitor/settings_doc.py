"""The configuration reference, generated from ``Settings`` so it cannot drift from the code.

Names, types and defaults come from the ``Settings`` struct itself; descriptions come from the
``#:`` comments above each field in ``monitor/config.py`` (read with ``ast`` and ``tokenize``, so
the comments stay where a reader of the code sees them). ``python -m monitor.settings_doc``
prints the Markdown section; ``--update deploy/README.md`` rewrites that section in place.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import sys
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from monitor import config
from monitor.config import ENV_PREFIX, Secret, Settings

HEADING = "## Configuration reference"


@dataclass(frozen=True)
class FieldDoc:
    name: str
    env: str
    type: str
    default: str
    description: str


def field_comments(source: str, class_name: str = "Settings") -> dict[str, str]:
    """Field name -> the ``#:`` comment lines directly above it in ``class_name``, joined."""
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        own_line = tok.line.strip() == tok.string.strip()  # not a trailing comment
        if tok.type == tokenize.COMMENT and own_line and tok.string.startswith("#:"):
            comments[tok.start[0]] = tok.string[2:].strip()
    tree = ast.parse(source)
    cls = next(
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name
    )
    out: dict[str, str] = {}
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        lines: list[str] = []
        line = stmt.lineno - 1
        while line in comments:
            lines.insert(0, comments[line])
            line -= 1
        out[stmt.target.id] = " ".join(lines)
    return out


def _show_default(value: Any) -> str:
    if isinstance(value, Secret):
        return "(secret)" if value.reveal() else '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, str):
        return f'"{value}"' if value == "" else value
    return str(value)


def describe(source: str | None = None) -> list[FieldDoc]:
    """One entry per ``Settings`` field, in declaration order."""
    text = source if source is not None else inspect.getsource(config)
    comments = field_comments(text)
    hints = Settings.__annotations__
    docs = []
    for field in msgspec.structs.fields(Settings):
        docs.append(
            FieldDoc(
                name=field.name,
                env=ENV_PREFIX + field.name.upper(),
                type=str(hints[field.name]).replace("typing.", ""),
                default=_show_default(field.default),
                description=comments.get(field.name, ""),
            )
        )
    return docs


def _cell(text: str) -> str:
    return text.replace("``", "`").replace("|", "\\|").replace("\n", " ")


def markdown(docs: Sequence[FieldDoc]) -> str:
    """The README section: heading, how values are resolved, one table row per setting."""
    rows = [
        HEADING,
        "",
        "Generated from `monitor/config.py` by `python -m monitor.settings_doc`; do not edit by "
        "hand (`python -m monitor.settings_doc --update deploy/README.md` rewrites it, and a "
        "test fails when it is stale).",
        "",
        "Each setting is read from, in increasing priority: its default, the TOML file named by "
        f"`{ENV_PREFIX}CONFIG` (or `monitor --config FILE`; keys are the setting names), then its "
        "environment variable. Lists are comma-separated in the environment and TOML arrays in "
        "the file; booleans are `true`/`false`.",
        "",
        "| setting | environment variable | type | default | description |",
        "|---|---|---|---|---|",
    ]
    for d in docs:
        default = f"`{_cell(d.default)}`" if d.default else ""
        rows.append(
            f"| `{d.name}` | `{d.env}` | `{_cell(d.type)}` | {default} | {_cell(d.description)} |"
        )
    return "\n".join([*rows, *_ignores()]) + "\n"


def _ignores() -> list[str]:
    """The defaults of ``ignored_tools`` and ``ignored_arguments``, per agent, with why."""
    from monitor.detect.config import DEFAULT_IGNORES

    rows = [
        "",
        "### Default ignores per agent",
        "",
        "The defaults of `ignored_tools` and `ignored_arguments`, by the agent whose tools they "
        "name (they apply by tool name, whatever the agent). Setting either replaces its whole "
        "list, so copy the entries to keep.",
        "",
        "| agent | setting | entry | why |",
        "|---|---|---|---|",
    ]
    for agent, (tools, arguments) in DEFAULT_IGNORES.items():
        for setting, entries in (("ignored_tools", tools), ("ignored_arguments", arguments)):
            for entry, why in entries.items():
                rows.append(f"| {agent} | `{setting}` | `{_cell(entry)}` | {_cell(why)} |")
    return rows


def replace_section(document: str, section: str) -> str:
    """``document`` with its configuration-reference section replaced (or appended if absent).

    The section runs from its heading to the next level-2 heading or the end of the document.
    """
    lines = document.splitlines(keepends=True)
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip("\n") == HEADING)
    except StopIteration:
        sep = "" if document.endswith("\n\n") or not document else "\n"
        return document + sep + section
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = lines[end:]
    body = section if not tail else section + "\n"
    return "".join(lines[:start]) + body + "".join(tail)


def extract_section(document: str) -> str | None:
    """The configuration-reference section of ``document`` as ``markdown`` would write it."""
    lines = document.splitlines(keepends=True)
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip("\n") == HEADING)
    except StopIteration:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "".join(lines[start:end]).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m monitor.settings_doc",
        description="Print the configuration reference (Markdown) generated from Settings.",
    )
    parser.add_argument("--update", metavar="FILE", help="rewrite the section in FILE instead")
    args = parser.parse_args(argv)
    section = markdown(describe())
    if args.update is None:
        sys.stdout.write(section)
        return 0
    path = Path(args.update)
    path.write_text(replace_section(path.read_text(encoding="utf-8"), section), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
