"""The file-level shell of the adapters: expand paths, open (gzip transparently), sniff, parse.

Everything here is I/O; the adapters it feeds are pure functions of lines. A path that cannot be
read becomes a Problem with line 0, so one bad file never stops a replay over a whole tree.
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
from monitor.adapters.base import Item, Parser, Problem
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
FORMATS: Final = tuple(PARSERS)
_GLOB_CHARS: Final = frozenset("*?[")


def expand(paths: Sequence[str]) -> Iterator[str | Problem]:
    """Files named by ``paths``: files as given, directories walked recursively (sorted) for
    ``*.jsonl``/``*.jsonl.gz``, glob patterns expanded, ``-`` for stdin."""
    for path in paths:
        if path == "-":
            yield path
        elif os.path.isdir(path):
            yield from _walk(path)
        elif os.path.exists(path):
            yield path
        elif _GLOB_CHARS & set(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                yield Problem(path, 0, "not_found", "no file matches the pattern")
            for match in matches:
                if os.path.isdir(match):
                    yield from _walk(match)
                elif match.endswith(SUFFIXES):
                    yield match
        else:
            yield Problem(path, 0, "not_found")


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
    source = STDIN if path == "-" else path
    with ExitStack() as stack:
        try:
            stream = _Lines(_open(path, stack))
            lines = iter(stream)
            head = list(itertools.islice(lines, SNIFF_LINES))
        except OSError as exc:
            yield Problem(source, 0, "unreadable", str(exc))
            return
        name = fmt or sniff(head)
        if name is None:
            if stream.error is not None:
                yield Problem(source, 0, "unreadable", stream.error)
            elif any(line.strip() for line in head):
                yield Problem(source, 0, "unknown_format", "first lines match no known format")
            return
        yield from PARSERS[name](itertools.chain(head, lines), source)
        if stream.error is not None:
            yield Problem(source, 0, "unreadable", stream.error)


def read_paths(paths: Sequence[str], fmt: str | None = None) -> Iterator[Item]:
    """Every event of every file, format sniffed per file unless ``fmt`` is given."""
    if fmt is not None and fmt not in PARSERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    for path in expand(paths):
        if isinstance(path, Problem):
            yield path
        else:
            yield from read_file(path, fmt)
