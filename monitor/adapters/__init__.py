"""Adapters: the logs people already have (Claude Code, Codex, pi, OpenTelemetry, our own JSONL)
read into normalised ``Event``s. Each source module is pure (``parse(lines, source)``); the file
shell is ``files.py``. Field mappings and turn conventions: schemas/adapters.md.
"""

from __future__ import annotations

from monitor.adapters.base import Item, Located, Parser, Problem
from monitor.adapters.files import (
    FATAL_REASONS,
    FORMATS,
    PARSERS,
    expand,
    read_file,
    read_file_located,
    read_located,
    read_paths,
)
from monitor.adapters.sniff import sniff

__all__ = [
    "FATAL_REASONS",
    "FORMATS",
    "PARSERS",
    "Item",
    "Located",
    "Parser",
    "Problem",
    "expand",
    "read_file",
    "read_file_located",
    "read_located",
    "read_paths",
    "sniff",
]
