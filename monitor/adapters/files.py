"""The file-level shell of the adapters: expand paths, open (gzip transparently), sniff, parse.

Everything here is I/O; the adapters it feeds are pure functions of lines. A path that cannot be
read becomes a Problem with line 0, so one bad file never stops a replay over a whole tree.
Problems whose reason is in ``FATAL_REASONS`` mean an input the caller named could not be read
at all (a missing path, a glob or a directory without logs, a file that does not open); the
others (``unknown_format``, ``cut_short``, bad lines) mean it was read in part.
"""

from __future__ import annotations

import glob
import gzip
import itertools
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from typing import IO, Final

from monitor.adapters import claude_code, codex, native, otel, pi
from monitor.adapters.base import Item, Located, LocatedParser, Parser, Problem, without_lines
from monitor.adapters.sniff import SNIFF_LINES, sniff

STDIN: Final = "<stdin>"
SUFFIXES: Final = (".jsonl", ".jsonl.gz")
PARSERS: Final[dict[str, Parser]] = {
    "events": native.parse,
    "claude_code": claude_code.parse,
    "codex": codex.parse,
    "pi": pi.parse,
    "otel": otel.parse,
}
LOCATED_PARSERS: Final[dict[str, LocatedParser]] = {
    "events": native.parse_located,
    "claude_code": claude_code.parse_located,
    "codex": codex.parse_located,
    "pi": pi.parse_located,
    "otel": otel.parse_located,
}
FORMATS: Final = tuple(PARSERS)
_GLOB_CHARS: Final = frozenset("*?[")
#: File-level reasons meaning a named input could not be read at all.
FATAL_REASONS: Final = frozenset({"not_found", "no_logs", "unreadable"})
_NO_LOGS: Final = "no *.jsonl or *.jsonl.gz file"


def expand(paths: Sequence[str]) -> Iterator[str | Problem]:
    """Files named by ``paths``: files as given, directories walked recursively (sorted) for
    ``*.jsonl``/``*.jsonl.gz``, glob patterns expanded, ``-`` for stdin. A path that names
    nothing, or nothing readable as a log, is a Problem (``not_found``, ``no_logs``)."""
    for path in paths:
        if path == "-":
            yield path
        elif os.path.isdir(path):
            yield from _some(_walk(path), Problem(path, 0, "no_logs", f"{_NO_LOGS} in it"))
        elif os.path.exists(path):
            yield path
        elif _GLOB_CHARS & set(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                yield Problem(path, 0, "not_found", "no file matches the pattern")
                continue
            found = _matched(matches)
            yield from _some(found, Problem(path, 0, "no_logs", f"the pattern matches {_NO_LOGS}"))
        else:
            yield Problem(path, 0, "not_found", "no such file or directory")


def _matched(matches: list[str]) -> Iterator[str]:
    for match in matches:
        if os.path.isdir(match):
            yield from _walk(match)
        elif match.endswith(SUFFIXES):
            yield match


def _some(files: Iterator[str], otherwise: Problem) -> Iterator[str | Problem]:
    """``files``, or ``otherwise`` when there are none."""
    empty = True
    for f in files:
        empty = False
        yield f
    if empty:
        yield otherwise


def _walk(root: str) -> Iterator[str]:
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(SUFFIXES):
                yield os.path.join(directory, name)


def _open(path: str, stack: ExitStack) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    handle: IO[bytes] = stack.enter_context(open(path, "rb"))  # noqa: SIM115
    if path.endswith(".gz"):
        unzipped: IO[bytes] = stack.enter_context(gzip.GzipFile(fileobj=handle, mode="rb"))  # type: ignore[arg-type]
        return unzipped
    return handle


class _Lines:
    """Iterate a stream's lines, remembering (instead of raising) a read error mid-file."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream
        self.error: str | None = None

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            self.error = f"{type(exc).__name__}: {exc}"


def read_file(path: str, fmt: str | None = None) -> Iterator[Item]:
    """Every event of one file (``-`` = stdin), its format sniffed unless ``fmt`` is given."""
    return without_lines(read_file_located(path, fmt))


def read_file_located(path: str, fmt: str | None = None) -> Iterator[Located]:
    """``read_file``'s items, each with the line of the record it came from (0 for a Problem
    about the whole file: ``unreadable`` when it does not open, ``unknown_format``, or
    ``cut_short`` when reading stops early, as a truncated gzip does)."""
    for _, line, item in _read_named(path, fmt, ""):
        yield Located(line, item)


def _read_named(path: str, fmt: str | None, name: str) -> Iterator[tuple[str, int, Item]]:
    """``read_file_located``'s items as (``name``, line, item): what ``read_located`` yields,
    made here so that a replay's every line passes through one generator less."""
    source = STDIN if path == "-" else path
    with ExitStack() as stack:
        try:
            stream = _Lines(_open(path, stack))
            lines = iter(stream)
            head = list(itertools.islice(lines, SNIFF_LINES))
        except OSError as exc:
            yield name, 0, Problem(source, 0, "unreadable", exc.strerror or str(exc))
            return
        kind = fmt or sniff(head)
        if kind is None:
            if stream.error is not None:
                yield name, 0, Problem(source, 0, "cut_short", stream.error)
            elif any(line.strip() for line in head):
                problem = Problem(source, 0, "unknown_format", "first lines match no known format")
                yield name, 0, problem
            return
        if kind == "events":
            # Our own format, most of what is replayed: its parser yields the triples itself.
            yield from native.parse_named(itertools.chain(head, lines), source, name)
        else:
            for line, item in LOCATED_PARSERS[kind](itertools.chain(head, lines), source):
                yield name, line, item
        if stream.error is not None:
            yield name, 0, Problem(source, 0, "cut_short", stream.error)


def read_paths(paths: Sequence[str], fmt: str | None = None) -> Iterator[Item]:
    """Every event of every file, format sniffed per file unless ``fmt`` is given."""
    for _, _, item in read_located(expand(paths), fmt):
        yield item


def read_located(
    inputs: Iterable[str | Problem], fmt: str | None = None
) -> Iterator[tuple[str, int, Item]]:
    """(file, line, item) for every item of ``inputs`` (``expand``'s output): ``file`` is the
    absolute path, or ``-`` for stdin, as provenance records it."""
    if fmt is not None and fmt not in PARSERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    for path in inputs:
        if isinstance(path, Problem):
            yield path.source, 0, path
            continue
        yield from _read_named(path, fmt, "-" if path == "-" else os.path.abspath(path))
