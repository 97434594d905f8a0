"""Exit statuses and one-line errors: what scripts and cron jobs read from a ``monitor`` run.

Every foreseeable failure (a missing path, a bad or unreachable database, an unsupported Faust)
ends as one line on stderr that names what to fix, and an exit status that says how the run
went. Tracebacks are for ``--debug``: ``describe`` turns the exceptions the shells can meet
into that line, so the commands themselves only raise.
"""

from __future__ import annotations

from typing import Final

#: Everything was read and processed.
OK: Final = 0
#: Fatal: nothing, or not everything, could be processed (bad database, missing path, ...).
FATAL: Final = 1
#: Usage: a bad option or argument, or a bad configuration file (argparse uses 2 as well).
USAGE: Final = 2
#: Finished, but some lines or files were skipped (counts and reasons on stderr).
SKIPPED: Final = 3
#: ``monitor report --against``: the candidate compactor is worse than the incumbent beyond noise.
BLOCKED: Final = 4

#: The text ``monitor --help`` and the README show for the statuses above.
EXIT_STATUS_HELP: Final = """\
exit status:
  0  everything was read and processed
  1  fatal: nothing, or not everything, could be processed (a missing path, a glob that
     matches nothing, a directory without logs, a bad or unreachable database)
  2  usage: a bad option or argument, or a bad configuration file
  3  finished, but some lines or files were skipped (counts and reasons on stderr)
  4  monitor report --against: the candidate compactor is worse than the incumbent beyond
     noise in some class (the rows marked BLOCKS)"""


class Fatal(Exception):
    """A foreseeable failure with the one line that explains it (exit status ``FATAL``)."""

    def __init__(self, message: str, status: int = FATAL) -> None:
        super().__init__(message)
        self.status = status


def first_line(text: str, limit: int = 240) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    for line in text.strip().splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def describe_database_error(exc: BaseException, where: str) -> str:
    """One line for a SQLAlchemy error met while using the database at ``where`` (masked)."""
    from sqlalchemy import exc as sa

    if isinstance(exc, sa.NoSuchModuleError):
        return (
            f"unsupported database URL {where}: use sqlite:///FILE or postgresql://USER@HOST/DB "
            "(--db or MONITOR_DB_URL)"
        )
    if isinstance(exc, sa.ArgumentError):
        return (
            f"{where} is not a database URL: use sqlite:///FILE or postgresql://USER@HOST/DB "
            "(--db or MONITOR_DB_URL)"
        )
    orig = getattr(exc, "orig", None)
    detail = first_line(str(orig if orig is not None else exc))
    if isinstance(exc, sa.OperationalError | sa.InterfaceError):
        return (
            f"cannot use the database {where}: {detail}; check --db / MONITOR_DB_URL and "
            "that the server is running"
        )
    return f"database error on {where}: {detail}"


def describe(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit status for an exception that reached the command line."""
    from sqlalchemy.exc import SQLAlchemyError

    from monitor.stream.versions import UnsupportedVersion

    if isinstance(exc, Fatal):
        return str(exc), exc.status
    if isinstance(exc, UnsupportedVersion):
        return str(exc), FATAL
    if isinstance(exc, SQLAlchemyError):
        return describe_database_error(exc, "the database"), FATAL
    kafka = _kafka_message(exc)
    if kafka is not None:
        return kafka, FATAL
    if isinstance(exc, OSError):
        name = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or first_line(str(exc))}{name}", FATAL
    return (
        f"unexpected {type(exc).__name__}: {first_line(str(exc))} (run with --debug for the "
        "traceback)",
        FATAL,
    )


def _kafka_message(exc: BaseException) -> str | None:
    """A line for the Kafka client errors ``monitor produce`` meets, else None."""
    module = type(exc).__module__ or ""
    if not module.startswith("kafka"):
        return None
    detail = first_line(str(exc))
    if type(exc).__name__ == "NoBrokersAvailable" or "bootstrap" in detail.lower():
        return "no Kafka broker answers: check --broker / MONITOR_BROKER and that it is running"
    name = type(exc).__name__
    return f"Kafka error: {detail}" if detail.startswith(name) else f"Kafka error: {name}: {detail}"
