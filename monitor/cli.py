"""Command line: wiring only. Settings -> engine -> the shell a command runs.

Heavy imports (Faust, Kafka clients) happen inside the command that needs them, so
``monitor replay`` starts fast and runs with no servers at all. Commands raise; ``main`` turns
what they raise into one line on stderr and an exit status (``monitor.errors``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn, TextIO

import msgspec

from monitor import __version__
from monitor.adapters import FORMATS
from monitor.config import Settings, load_settings, mask_url
from monitor.errors import BLOCKED, EXIT_STATUS_HELP, FATAL, OK, SKIPPED, USAGE, Fatal, describe
from monitor.flags import SIGNALS
from monitor.timespec import SINCE_FORMS, parse_since

PROGRESS_MIN_BYTES = 5_000_000
#: Characters of a flag's evidence shown per line by ``monitor flags``.
SHOWN_CHARS = 160


# --- argument types (a bad value is a usage error: exit status 2) ------------------------------


def _at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def _since(text: str) -> datetime:
    try:
        return parse_since(text, datetime.now(UTC))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_since.__name__ = "time"


# --- the store ---------------------------------------------------------------------------------


def _db_url(args: argparse.Namespace, settings: Settings) -> str:
    """The database URL to use, checked to be one (a malformed URL is fatal, not a traceback)."""
    from sqlalchemy.engine import make_url

    from monitor.errors import describe_database_error

    url = str(getattr(args, "db", None) or settings.db_url)
    try:
        make_url(url)
    except Exception as exc:
        raise Fatal(describe_database_error(exc, repr(url))) from None
    return url


def _sqlite_file(url: str) -> str | None:
    """The file an SQLite URL names (None for other databases and for in-memory SQLite)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    return None if database in ("", ":memory:") or database.startswith("file:") else database


def _open_store(url: str, *, create: bool) -> Any:
    """An engine on a database that holds the current schema.

    The embedded SQLite default sets itself up: a command that writes (``create``) makes the
    file, and an existing file is brought to the current schema. A command that only reads
    never creates one. Any other database must have been migrated (``monitor db upgrade``).
    """
    from sqlalchemy.exc import SQLAlchemyError

    from monitor.errors import describe_database_error
    from monitor.store.db import create_sqlite, make_engine, revisions, upgrade

    shown = mask_url(url)
    path = _sqlite_file(url)
    try:
        if path is not None:
            if not os.path.exists(path):
                if not create:
                    raise Fatal(
                        f"no database at {path}: run `monitor replay PATH` first to fill it, "
                        "or name another with --db (or MONITOR_DB_URL)"
                    )
                # A new file gets the schema the migrations build, built at once.
                engine = make_engine(url)
                create_sqlite(engine)
                return engine
            upgrade(url)
            return make_engine(url)
        if url.startswith("sqlite"):
            upgrade(url)
            return make_engine(url)
        engine = make_engine(url)
        current, heads = revisions(engine)
    except SQLAlchemyError as exc:
        raise Fatal(describe_database_error(exc, shown)) from None
    if not current:
        raise Fatal(f"no monitor schema in {shown}; run `monitor db upgrade --db URL` first")
    if current != heads:
        raise Fatal(
            f"the database {shown} is at revision {', '.join(sorted(current))} and this monitor "
            f"needs {', '.join(sorted(heads))}; run `monitor db upgrade --db URL`"
        )
    return engine


def _maker(args: argparse.Namespace, settings: Settings, *, create: bool = False) -> Any:
    from monitor.store.db import make_sessionmaker

    return make_sessionmaker(_open_store(_db_url(args, settings), create=create))


def _dump(obj: Any, out: TextIO) -> None:
    json.dump(obj, out, ensure_ascii=False, default=str)
    out.write("\n")


def _say(text: str) -> None:
    """A note for the person at the terminal (stderr: stdout stays the command's output)."""
    sys.stderr.write(text + "\n")


# --- replay and produce: reading inputs --------------------------------------------------------


def _inputs(paths: Sequence[str]) -> list[Any]:
    """``expand``'s files and problems; fatal when not one named input can be read."""
    from monitor.adapters import Problem, expand

    inputs = list(expand(paths))
    problems = [i for i in inputs if isinstance(i, Problem)]
    if len(problems) == len(inputs):
        said = [f"{p.source}: {p.detail or p.reason}" for p in problems]
        if len(said) == 1:
            raise Fatal(f"{said[0]}; nothing to read")
        for line in said:
            _say(f"error: {line}")
        raise Fatal("nothing to read: fix the paths above")
    return inputs


def _with_progress(items: Iterable[Any], files: Sequence[str], enabled: bool) -> Iterable[Any]:
    """``items``, counted on a progress bar when asked for on a terminal and the input is
    large; else ``items`` themselves (not re-yielded: a replay's every record would pay)."""
    if not enabled or not sys.stderr.isatty():
        return items
    size = sum(os.path.getsize(p) for p in files if os.path.isfile(p))
    if size < PROGRESS_MIN_BYTES:
        return items
    return _progress(items)


def _progress(items: Iterable[Any]) -> Iterator[Any]:
    from tqdm import tqdm

    with tqdm(unit=" records", file=sys.stderr, mininterval=0.5) as bar:
        for item in items:
            bar.update(1)
            yield item


def _report_problems(summary: dict[str, Any]) -> None:
    """Counts and reasons of what was skipped, on stderr."""
    for p in summary.get("file_problems", []):
        _say(f"error: {p['source']}: {p['reason']} {p['detail']}".rstrip())
    if summary["problems"]:
        total = sum(summary["problems"].values())
        _say(f"problems: {total} skipped {summary['problems']}")
        for p in [p for p in summary["problem_samples"] if p["line"]][:5]:
            _say(f"  {p['source']}:{p['line']}: {p['reason']} {p['detail']}")
    if summary["skipped_records"]:
        _say(f"records of types not read (not problems): {summary['skipped_records']}")


def _check_semantic(on: bool) -> None:
    """Load the semantic stage before any input is read: a missing extra stops the run at once,
    not at the first user message."""
    if not on:
        return
    from monitor.detect import semantic

    try:
        semantic.encoder()
    except semantic.Unavailable as exc:
        raise Fatal(str(exc), USAGE) from None


def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.adapters import Problem, read_located
    from monitor.replay import Replay, sorted_flags
    from monitor.store.db import make_sessionmaker
    from monitor.store.sink import StoreSink

    cfg = settings.detect_config()
    if args.window is not None:
        cfg = msgspec.structs.replace(cfg, window=args.window)
    if args.ignore_tool:
        from monitor.detect.config import parse_ignored_tools

        try:
            names, polls = parse_ignored_tools(args.ignore_tool)
        except ValueError as exc:
            raise Fatal(str(exc), USAGE) from None
        cfg = msgspec.structs.replace(
            cfg, ignored_tools=cfg.ignored_tools | names, ignored_calls=cfg.ignored_calls | polls
        )
    if args.survival:
        cfg = msgspec.structs.replace(cfg, survival=True)
    if args.semantic:
        cfg = msgspec.structs.replace(cfg, semantic=True)
    _check_semantic(cfg.semantic)
    inputs = _inputs(args.paths)  # before the store: a failed read creates no database
    kept: list[Any] = []
    sink = None
    if not args.dry_run:
        url = _db_url(args, settings)
        sink = StoreSink(make_sessionmaker(_open_store(url, create=True)))
    metrics = None
    if args.metrics_out or args.push_gateway:
        from monitor.metrics import build_metrics

        metrics = build_metrics()

    def on_flags(flags: list[Any]) -> None:
        if sink is not None:
            sink.add(flags)
        if args.json:
            kept.extend(flags)

    replay = Replay(cfg=cfg, on_flags=on_flags)
    if metrics is not None:
        observe = metrics

        def on_event(event: Any, flags: list[Any]) -> None:
            observe.observe_event(event)
            meta = replay.states[event.session_id].meta
            if flags:
                observe.observe_flags(flags, meta.attrs)
            if event.kind == "compaction":
                observe.observe_check(meta)

        replay.on_event = on_event
    files = [i for i in inputs if not isinstance(i, Problem)]
    replay.run_located(_with_progress(read_located(inputs, args.format), files, args.progress))
    if sink is not None:
        sink.close(
            replay.flagged_metas(),
            replay.flag_times,
            replay.session_sources(),
            replay.session_items(),
        )
    if metrics is not None:
        from monitor.metrics import write_metrics_file

        metrics.set_active_sessions(len(replay.states))
        if args.metrics_out:
            write_metrics_file(metrics.registry, args.metrics_out)
        if args.push_gateway:
            from monitor.metrics import push_metrics

            push_metrics(metrics.registry, args.push_gateway)
    summary = replay.summary(top=args.top)
    if args.json:
        _dump({**summary, "flags": [f.report() for f in sorted_flags(kept)]}, sys.stdout)
    else:
        _print_summary(summary, sink.inserted if sink is not None else None)
    _report_problems(summary)
    return replay.status()


def _print_summary(summary: dict[str, Any], inserted: int | None) -> None:
    from monitor.listing import summary_lines

    for line in summary_lines(summary, inserted):
        sys.stdout.write(line + "\n")


# --- store read side -----------------------------------------------------------------------------


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "signal": args.signal,
        "since": args.since,
        "compactor": args.compactor,
        "agent": args.agent,
        "limit": args.limit,
    }


def _no_match(what: str, filters: dict[str, Any]) -> None:
    given = [f"{k}={v.isoformat() if isinstance(v, datetime) else v}"
             for k, v in filters.items() if v is not None and k != "limit"]  # fmt: skip
    _say(f"no {what} match" + (f" ({', '.join(given)})" if given else " (the store has none)"))


def cmd_flags(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.listing import flag_lines
    from monitor.store.queries import list_flags

    filters = {"session_id": args.session, **_filters(args)}
    with _maker(args, settings)() as session:
        rows = list_flags(session, **filters)
    if args.json:
        _dump({"flags": rows}, sys.stdout)
    elif not rows:
        _no_match("flags", filters)
    for r in rows if not args.json else ():
        for line in flag_lines(r, SHOWN_CHARS):
            sys.stdout.write(line + "\n")
    return OK


def cmd_sessions(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.listing import session_line
    from monitor.store.queries import list_sessions

    filters = _filters(args)
    with _maker(args, settings)() as session:
        rows = list_sessions(session, **filters)
    if args.json:
        _dump({"sessions": rows}, sys.stdout)
        return OK
    if not rows:
        _no_match("sessions", filters)
    for r in rows:
        sys.stdout.write(session_line(r) + "\n")
    return OK


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    from monitor import report
    from monitor.store.queries import survival_inputs

    if args.against is not None and args.compactor is None:
        raise Fatal("--against needs --compactor: the candidate it is compared with", USAGE)
    try:
        gates = report.parse_gates(args.gate or ())
    except ValueError as exc:
        raise Fatal(str(exc), USAGE) from None
    with _maker(args, settings)() as session:
        counts, downstream, compactions = survival_inputs(session, since=args.since)
    doc = report.build(
        report.merge(counts),
        downstream,
        compactions,
        compactor=args.compactor,
        against=args.against,
        since=args.since.isoformat() if args.since else None,
        gates=gates,
    )
    if args.json:
        _dump(doc, sys.stdout)
    elif not doc["compactors"]:
        _say(
            "no survival checks stored"
            + (f" for {args.compactor}" if args.compactor else "")
            + " (replay --survival, or the worker with MONITOR_SURVIVAL=1)"
        )
    else:
        for line in report.text_lines(doc):
            sys.stdout.write(line + "\n")
    comparison = doc["comparison"]
    return BLOCKED if comparison and comparison["blocks"] else OK


def cmd_db_upgrade(args: argparse.Namespace, settings: Settings) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from monitor.errors import describe_database_error
    from monitor.store.db import upgrade

    url = _db_url(args, settings)
    try:
        upgrade(url, args.revision)
    except SQLAlchemyError as exc:
        raise Fatal(describe_database_error(exc, mask_url(url))) from None
    _say(f"database {mask_url(url)} is at revision {args.revision}")
    return OK


# --- fixture intake ------------------------------------------------------------------------------


def _week_arg(week: str | None, now: datetime) -> str:
    from monitor.sampling import parse_week, previous_week

    if week is None:
        week = previous_week(now)
        _say(f"sampling {week}, the last complete ISO week (UTC); --week WEEK for another")
    try:
        parse_week(week)
    except ValueError as exc:
        raise Fatal(str(exc), USAGE) from None
    return week


def cmd_sample(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.sampling import run_week
    from monitor.store.intake import list_items

    week = _week_arg(args.week, datetime.now(UTC))
    maker = _maker(args, settings)
    with maker.begin() as session:
        new = run_week(session, week, args.n)
    _capture_transcripts(maker, settings, week)
    with maker() as session:
        items = list_items(session, week=week)
    if args.json:
        keys = ("id", "rank", "session_id", "score", "reason", "status")
        rows = [{k: i[k] for k in keys} for i in items]
        _dump({"week": week, "new": len(new), "items": rows}, sys.stdout)
        return OK
    sys.stdout.write(f"week {week}: {len(new)} new, {len(items)} in the queue for the week\n")
    for i in items:
        r = i["reason"]
        sys.stdout.write(
            f"  {i['rank']:>3}  #{i['id']}  {i['session_id']}  {i['status']}  "
            f"score {i['score']:.2f}  {r.get('tier')}  {','.join(r.get('signals', []))}\n"
        )
    return OK


def _capture_transcripts(maker: Any, settings: Settings, week: str) -> None:
    """Read back the conversations of the week's items that have none yet (stderr says how
    it went, so ``--json`` output stays one object)."""
    from monitor.capture import STATUSES, capture_pending, readers_for

    counts = capture_pending(maker, readers_for(settings), week=week, redact=settings.redact)
    if counts:
        told = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if counts[s])
        sys.stderr.write(f"transcripts: {told}\n")


def cmd_intake_list(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.listing import intake_header, intake_line
    from monitor.store.intake import list_items

    with _maker(args, settings)() as session:
        items = list_items(session, week=args.week, status=args.status, limit=args.limit)
    if args.json:
        _dump({"items": items}, sys.stdout)
        return OK
    if not items:
        _say("no intake items match")
        return OK
    sys.stdout.write(intake_header() + "\n")
    for i in items:
        sys.stdout.write(intake_line(i) + "\n")
    return OK


def cmd_intake_show(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.intake import get_item

    with _maker(args, settings)() as session:
        item = get_item(session, args.id)
    if item is None:
        raise Fatal(f"no intake item {args.id}")
    _dump(item, sys.stdout)
    return OK


def _reviewer(name: str | None) -> str:
    import getpass

    return name or getpass.getuser()


def _intake_change(args: argparse.Namespace, settings: Settings, change: Any) -> int:
    """Run one review transition in a transaction; an IntakeError is a one-line refusal."""
    from monitor.store.intake import IntakeError

    try:
        with _maker(args, settings).begin() as session:
            item = change(session, _reviewer(args.reviewer), datetime.now(UTC))
    except IntakeError as exc:
        raise Fatal(str(exc)) from None
    if item is None:
        raise Fatal("nothing queued" + (f" for {args.week}" if args.week else ""))
    _dump(item, sys.stdout)
    return OK


def cmd_intake_claim(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.intake import claim

    return _intake_change(
        args,
        settings,
        lambda s, who, now: claim(s, who, now, week=args.week, item_id=args.id, force=args.force),
    )


def cmd_intake_reopen(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.intake import reopen

    args.week = None
    return _intake_change(
        args, settings, lambda s, who, now: reopen(s, args.id, reviewer=who, now=now,
                                                   force=args.force)
    )  # fmt: skip


def cmd_intake_resolve(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.intake import resolve

    args.week = None
    return _intake_change(
        args,
        settings,
        lambda s, who, now: resolve(
            s, args.id, accept=args.accept, reviewer=who, now=now, note=args.note,
            force=args.force,
        ),
    )  # fmt: skip


def cmd_intake_export(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from monitor.fixtures import file_name
    from monitor.store.intake import IntakeError, export_items

    if (args.id is None) == (args.week is None):
        raise Fatal("give an item ID or --week WEEK (one of them)", USAGE)
    if args.fixture:
        return _export_fixtures(args, settings)
    status = None if args.status == "any" else args.status
    try:
        with _maker(args, settings)() as session:
            docs = export_items(session, item_id=args.id, week=args.week, status=status)
    except IntakeError as exc:
        raise Fatal(str(exc)) from None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        path = out / file_name(doc)
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        sys.stdout.write(f"{path}\n")
    if not docs:
        _say("no intake items match")
    return OK


def _export_fixtures(args: argparse.Namespace, settings: Settings) -> int:
    """Finished fixtures, byte for byte what the review page's download gives."""
    from pathlib import Path

    from monitor.review import fixture
    from monitor.review.decisions import ReviewError
    from monitor.store.intake import list_items

    out = Path(args.out)
    with _maker(args, settings)() as session:
        if args.id is not None:
            ids = [args.id]
        else:
            ids = [i["id"] for i in list_items(session, week=args.week, status="accepted")]
        try:
            docs = [fixture.document(session, i) for i in ids]
        except ReviewError as exc:
            raise Fatal(str(exc)) from None
    out.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        path = out / fixture.file_name(doc)
        path.write_bytes(fixture.dumps(doc))
        sys.stdout.write(f"{path}\n")
    if not docs:
        _say("no accepted intake items match")
    return OK


# --- the review page ----------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from sqlalchemy import inspect

    from monitor.config import Secret
    from monitor.review.auth import parse_tokens
    from monitor.review.web import serve
    from monitor.store.db import make_sessionmaker

    secret = settings.review_tokens
    spec = secret.reveal() if isinstance(secret, Secret) else str(secret)
    try:
        reviewers = parse_tokens(spec)
    except ValueError as exc:
        raise Fatal(str(exc), USAGE) from None
    if not reviewers.names:
        raise Fatal(
            "no reviewers configured; set MONITOR_REVIEW_TOKENS=alice:TOKEN,bob:TOKEN "
            "or review_tokens in the config file",
            USAGE,
        )
    url = _db_url(args, settings)
    engine = _open_store(url, create=False)
    if not inspect(engine).has_table("intake_actions"):
        raise Fatal(
            f"{mask_url(url)} predates the review tables; run `monitor db upgrade --db URL`"
        )
    trust = settings.review_trust_proxy
    serve(make_sessionmaker(engine), reviewers, args.host, args.port, trust_proxy=trust)
    return 0


# --- streaming ----------------------------------------------------------------------------------


def _override(settings: Settings, **values: Any) -> Settings:
    given = {k: v for k, v in values.items() if v is not None}
    return msgspec.structs.replace(settings, **given) if given else settings


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.stream.app import run_worker

    settings = _override(settings, broker=args.broker, db_url=args.db, web_port=args.web_port)
    _db_url(args, settings)
    _check_semantic(settings.semantic)
    run_worker(settings, loglevel=args.loglevel)
    return OK


def cmd_produce(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.stream.produce import produce_inputs

    settings = _override(settings, broker=args.broker, input_topic=args.topic)
    inputs = _inputs(args.paths)
    stats = produce_inputs(inputs, settings, fmt=args.format, batch=not args.single)
    _say(
        f"produced {stats.events} events in {stats.records} records to {settings.input_topic} "
        f"({stats.events_per_second:,.0f} events/s)"
    )
    for p in stats.file_problems:
        _say(f"error: {p.source}: {p.reason} {p.detail}".rstrip())
    if stats.problems:
        _say(f"problems: {sum(stats.problems.values())} skipped {dict(stats.problems)}")
    if stats.fatal or (stats.problems and not stats.events):
        return FATAL
    return SKIPPED if stats.problems else OK


# --- parser --------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """A usage error is one line naming what to fix (argparse's usage banner is --help's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Help(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs keep their line breaks (the examples are laid out by hand)."""


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help="SQLAlchemy database URL (default: MONITOR_DB_URL, else sqlite:///monitor.db)",
    )


def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format", choices=FORMATS, help="read every file as this format (default: sniffed)"
    )


def _add_filters(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--signal", choices=SIGNALS, help=f"only {what} with this signal (default: any)")
    p.add_argument(
        "--compactor",
        metavar="VERSION",
        help=f"only {what} under this compactor version, e.g. sum-v1.4 (default: any)",
    )
    p.add_argument(
        "--agent", metavar="NAME", help=f"only {what} of this agent, e.g. codex (default: any)"
    )
    p.add_argument(
        "--since",
        metavar="TIME",
        type=_since,
        help=f"only {what} flagged since TIME: {SINCE_FORMS}; UTC unless an offset is given "
        "(default: all time)",
    )
    p.add_argument("--limit", type=_at_least(1), metavar="N", help="at most N rows (default: all)")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: text)")


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an error instead of one line (default: off)",
    )

    parser = _Parser(
        prog="monitor",
        description="Find agent sessions where context compaction lost something that mattered.",
        epilog=_examples(
            "monitor replay ~/.claude/projects          # flags into ./monitor.db",
            "monitor flags --signal repeated_tool_call --since 7d",
            "monitor db upgrade --db postgresql://monitor@db/monitor",
        )
        + "\n\n"
        + EXIT_STATUS_HELP
        + "\n\nEvery command has --help.",
        formatter_class=_Help,
    )
    parser.add_argument("--version", action="version", version=f"monitor {__version__}")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="TOML settings file (default: MONITOR_CONFIG, else none); keys are the setting "
        "names of deploy/README.md",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False,
        help="show the traceback of an error instead of one line (default: off)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, helptext: str, description: str, examples: str) -> Any:
        return sub.add_parser(
            name,
            help=helptext,
            description=description,
            epilog=examples,
            parents=[common],
            formatter_class=_Help,
        )

    p = command(
        "replay",
        "run the detectors over log files and store the flags",
        "Read JSONL logs (our event schema, Claude Code, Codex, pi or OTLP JSON; .gz too; '-' "
        "for stdin), run the detectors, store the flags with the file and line they came from, "
        "print a summary. Problems go to stderr; see the exit statuses below.",
        _examples(
            "monitor replay ~/.claude/projects",
            "monitor replay ~/.codex/sessions 'logs/*.jsonl.gz' --db postgresql://monitor@db/m",
            "monitor replay events.jsonl --json --dry-run",
            "cat events.jsonl | monitor replay -",
        )
        + "\n\n"
        + EXIT_STATUS_HELP,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, globs or -")
    _add_db(p)
    _add_format(p)
    p.add_argument(
        "--json", action="store_true", help="print one JSON object with every flag (default: text)"
    )
    p.add_argument(
        "--window",
        type=_at_least(1),
        metavar="TURNS",
        help="repeat window in turns after a compaction (default: MONITOR_WINDOW, else 5)",
    )
    p.add_argument(
        "--ignore-tool",
        action="append",
        metavar="NAME",
        help="never flag repeats of this tool (TOOL, or TOOL.FIELD=VALUE); repeatable, added to "
        "the configured ones (default: MONITOR_IGNORED_TOOLS)",
    )
    p.add_argument(
        "--survival",
        action="store_true",
        help="also check what must survive against each compaction summary: dropped_item and "
        "inverted_item flags, counts for monitor report (default: MONITOR_SURVIVAL, else off)",
    )
    p.add_argument(
        "--semantic",
        action="store_true",
        help="read restatements with sentence embeddings too (the semantic extra; "
        "default: MONITOR_SEMANTIC, else off)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="write nothing to the store (default: write)"
    )
    p.add_argument(
        "--top",
        type=_at_least(0),
        default=10,
        metavar="N",
        help="flagged sessions listed in the summary (default: 10)",
    )
    p.add_argument(
        "--metrics-out", metavar="FILE", help="write Prometheus metrics to FILE (default: none)"
    )
    p.add_argument(
        "--push-gateway",
        metavar="ADDR",
        help="push the run's metrics to a Pushgateway at ADDR (default: none)",
    )
    p.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (default: a bar on a terminal for inputs over 5 MB)",
    )
    p.set_defaults(func=cmd_replay)

    p = command(
        "flags",
        "list stored flags, with where each came from",
        "List stored flags: the call or sentences behind each (redacted and cut as stored) and "
        "the file:line or topic/partition/offset it was read from. Filters combine; an empty "
        "answer says so on stderr.",
        _examples(
            "monitor flags --session SESSION_ID",
            "monitor flags --compactor sum-v2.0-rc1 --signal repeated_tool_call --limit 5",
            "monitor flags --agent codex --since 24h --json",
            "monitor flags --since 2026-12-01",
        ),
    )
    _add_db(p)
    p.add_argument("--session", metavar="ID", help="only this session's flags (default: all)")
    _add_filters(p, "flags")
    p.set_defaults(func=cmd_flags)

    p = command(
        "sessions",
        "list flagged sessions with their counters",
        "List stored (flagged) sessions, most flags first. Filters combine; an empty answer "
        "says so on stderr.",
        _examples(
            "monitor sessions --limit 20",
            "monitor sessions --agent claude_code --signal restated_instruction",
            "monitor sessions --compactor sum-v1.4 --since 7d --json",
        ),
    )
    _add_db(p)
    _add_filters(p, "sessions")
    p.set_defaults(func=cmd_sessions)

    p = command(
        "report",
        "what each compactor's summaries kept, per item class, against its gate",
        "Sum the survival checks stored (MONITOR_SURVIVAL): per compactor version and item "
        "class, the items checked and how many the summaries kept verbatim, supported, dropped "
        "or contradicted, the survival rate against the class's gate, and the flags raised "
        "downstream per compaction. With --against, each class's difference from the "
        "incumbent gets a 95% interval; a candidate worse beyond noise blocks (exit 4).",
        _examples(
            "monitor report",
            "monitor report --compactor sum-v1.5 --against sum-v1.4 --since 14d",
            "monitor report --json",
        ),
    )
    _add_db(p)
    p.add_argument(
        "--compactor", metavar="VERSION", help="only this compactor version (default: every one)"
    )
    p.add_argument(
        "--against",
        metavar="VERSION",
        help="compare --compactor with this incumbent version (default: no comparison)",
    )
    p.add_argument(
        "--since",
        metavar="TIME",
        type=_since,
        help=f"only sessions seen and flags raised since TIME: {SINCE_FORMS} (default: all)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON, schemas/survival-report.v1.json (default: text)",
    )
    p.add_argument(
        "--gate",
        action="append",
        metavar="CLASS=SHARE",
        help="share of a class that must survive, repeatable (default: constraint=0.95, "
        "commitment=0.90, open_question=0.95, reference=0.98)",
    )
    p.set_defaults(func=cmd_report)

    p = command(
        "sample",
        "queue a week's flagged sessions for fixture intake",
        "Sample flagged sessions of an ISO week into the fixture-intake queue: incident "
        "sessions first, then weighted by evidence density. Without --week it samples the last "
        "complete ISO week (UTC), as the worker's schedule does, and says which. Running "
        "again adds nothing; a later run tops the week up to N.",
        _examples(
            "monitor sample",
            "monitor sample --week 2026-W49 --json",
            "monitor sample --n 40 --db postgresql://monitor@db/monitor",
        ),
    )
    _add_db(p)
    p.add_argument(
        "--week",
        metavar="WEEK",
        help="ISO week, e.g. 2026-W49 (default: the last complete week, UTC)",
    )
    p.add_argument(
        "--n", type=_at_least(1), default=20, metavar="N", help="items per week (default: 20)"
    )
    p.add_argument("--json", action="store_true", help="print the week's items as one JSON object")
    p.set_defaults(func=cmd_sample)

    p = command(
        "intake",
        "review the fixture-intake queue",
        "Review the fixture-intake queue: queued -> in_review -> accepted | rejected (reopen "
        "queues an item again). An item in review belongs to its reviewer: acting on it as "
        "someone else needs --force, which its history records.",
        _examples(
            "monitor intake list --status queued",
            "monitor intake claim --reviewer alice          # the first queued item",
            "monitor intake claim 42 --reviewer alice",
            "monitor intake resolve 42 --accept --note 'kept the constraint' --reviewer alice",
            "monitor intake export --week 2026-W49 --out fixtures/",
        ),
    )
    isub = p.add_subparsers(dest="intake_command", required=True, metavar="ACTION")

    def action(name: str, helptext: str, description: str, examples: str) -> Any:
        q = isub.add_parser(
            name,
            help=helptext,
            description=description,
            epilog=examples,
            parents=[common],
            formatter_class=_Help,
        )
        _add_db(q)
        return q

    q = action(
        "list",
        "list items in queue order",
        "List intake items. The order, and the rank shown, is the order `intake claim` takes "
        "them in: oldest week first; within a week, the order the sampler queued them (each "
        "run's picks best first: incident sessions, then its evidence-weighted draw; a later "
        "top-up's picks after the earlier ones).",
        _examples("monitor intake list --week 2026-W49", "monitor intake list --status in_review"),
    )
    q.add_argument("--week", metavar="WEEK", help="only this ISO week (default: all weeks)")
    q.add_argument(
        "--status",
        choices=("queued", "in_review", "accepted", "rejected"),
        help="only items in this status (default: any)",
    )
    q.add_argument("--limit", type=_at_least(1), metavar="N", help="at most N (default: all)")
    q.add_argument("--json", action="store_true", help="print one JSON object (default: text)")
    q.set_defaults(func=cmd_intake_list)

    q = action(
        "show",
        "show one item",
        "Print one item, with its fixture draft and review history, as JSON.",
        _examples("monitor intake show 42"),
    )
    q.add_argument("id", type=int, metavar="ID", help="the item's id (from `intake list`)")
    q.set_defaults(func=cmd_intake_show)

    reviewer_help = "who reviews (default: the login name)"
    q = action(
        "claim",
        "take an item for review",
        "Move item ID (or, without ID, the first queued item in `intake list` order) to "
        "in_review for the reviewer and print it. Exit status 1 when nothing is queued, or "
        "when another reviewer holds ID and --force is not given.",
        _examples("monitor intake claim --reviewer alice", "monitor intake claim 42 --force"),
    )
    q.add_argument("id", type=int, nargs="?", metavar="ID", help="the item (default: next queued)")
    q.add_argument("--reviewer", metavar="NAME", help=reviewer_help)
    q.add_argument(
        "--week", metavar="WEEK", help="without ID: only this week's items (default: any week)"
    )
    q.add_argument(
        "--force", action="store_true", help="take it over from another reviewer (recorded)"
    )
    q.set_defaults(func=cmd_intake_claim)

    q = action(
        "resolve",
        "accept or reject an item in review",
        "Accept or reject an item in review. Resolving an item another reviewer holds needs "
        "--force; its history records who was overridden.",
        _examples(
            "monitor intake resolve 42 --accept --note 'fixture written'",
            "monitor intake resolve 42 --reject --force --reviewer bo",
        ),
    )
    q.add_argument("id", type=int, metavar="ID", help="the item")
    verdict = q.add_mutually_exclusive_group(required=True)
    verdict.add_argument(
        "--accept", dest="accept", action="store_true", help="it becomes a fixture"
    )
    verdict.add_argument("--reject", dest="accept", action="store_false", help="it does not")
    q.add_argument("--note", help="why (default: none)")
    q.add_argument("--reviewer", metavar="NAME", help="who decides (default: the login name)")
    q.add_argument(
        "--force", action="store_true", help="resolve an item another reviewer holds (recorded)"
    )
    q.set_defaults(func=cmd_intake_resolve)

    q = action(
        "reopen",
        "queue a resolved (or claimed) item again",
        "Put item ID back in the queue: its verdict and claim are cleared, its history keeps "
        "them. Reopening an item another reviewer holds in review needs --force.",
        _examples("monitor intake reopen 42", "monitor intake reopen 42 --force --reviewer bo"),
    )
    q.add_argument("id", type=int, metavar="ID", help="the item")
    q.add_argument("--reviewer", metavar="NAME", help=reviewer_help)
    q.add_argument(
        "--force", action="store_true", help="reopen an item another reviewer holds (recorded)"
    )
    q.set_defaults(func=cmd_intake_reopen)

    q = action(
        "export",
        "write fixture drafts as JSON files",
        "Write one item's fixture draft, or a week's, to DIR (one JSON file each) and print "
        "the paths.",
        _examples(
            "monitor intake export 42 --out fixtures/",
            "monitor intake export --week 2026-W49 --status any --out drafts/",
        ),
    )
    q.add_argument("id", type=int, nargs="?", metavar="ID", help="one item (or give --week)")
    q.add_argument(
        "--week", metavar="WEEK", help="every item of this week in --status (default: none)"
    )
    q.add_argument(
        "--status",
        choices=("queued", "in_review", "accepted", "rejected", "any"),
        default="accepted",
        help="with --week: items in this status (default: accepted)",
    )
    q.add_argument("--out", required=True, metavar="DIR", help="where the files go (created)")
    q.add_argument(
        "--fixture",
        action="store_true",
        help="write finished fixtures (schemas/fixture.v1.json) of accepted items: only "
        "confirmed entries, no annotations; the same file as the review page's download",
    )
    q.set_defaults(func=cmd_intake_export)

    p = command(
        "serve",
        "the intake review page (web)",
        "Serve the review page for the fixture-intake queue. Reviewers and their tokens come "
        "from MONITOR_REVIEW_TOKENS (alice:TOKEN,bob:TOKEN) or the config file. Binds to "
        "127.0.0.1 unless told otherwise; put a TLS proxy in front of any other address.",
        _examples(
            "MONITOR_REVIEW_TOKENS=alice:SECRET monitor serve --db postgresql://monitor@db/monitor",
            "monitor serve --port 9000",
        ),
    )
    _add_db(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.set_defaults(func=cmd_serve)

    p = command(
        "db",
        "database maintenance",
        "Database maintenance.",
        _examples("monitor db upgrade --db postgresql://monitor@db/monitor"),
    )
    dbsub = p.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    q = dbsub.add_parser(
        "upgrade",
        help="run the migrations",
        description="Run the Alembic migrations (shipped in the package) up to REVISION: the "
        "only way the schema is made. Safe to run again.",
        epilog=_examples(
            "monitor db upgrade --db postgresql://monitor@db/monitor",
            "MONITOR_DB_URL=sqlite:///m.db monitor db upgrade",
        ),
        parents=[common],
        formatter_class=_Help,
    )
    _add_db(q)
    q.add_argument("--revision", default="head", help="Alembic revision to reach (default: head)")
    q.set_defaults(func=cmd_db_upgrade)

    p = command(
        "worker",
        "run the streaming worker (Kafka -> detectors -> Postgres)",
        "Run the Faust worker. Settings come from MONITOR_* variables or --config "
        "(deploy/README.md lists them); the options below override them. It refuses to start "
        "on an unsupported faust-streaming or a database without the current schema.",
        _examples(
            "MONITOR_BROKER=kafka://broker:9092 monitor worker --db postgresql://monitor@db/m",
            "monitor --config /etc/monitor.toml worker --web-port 6066",
        ),
    )
    p.add_argument(
        "--broker",
        metavar="SERVERS",
        help="Kafka bootstrap servers (default: MONITOR_BROKER, else kafka://127.0.0.1:9092)",
    )
    _add_db(p)
    p.add_argument(
        "--web-port",
        type=_at_least(0),
        metavar="PORT",
        help="port of /metrics, /health, /ready; 0 for none (default: MONITOR_WEB_PORT, else 6066)",
    )
    p.add_argument(
        "--loglevel",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="log level (default: info)",
    )
    p.set_defaults(func=cmd_worker)

    p = command(
        "produce",
        "publish log files to the input topic, keyed by session",
        "Read logs (any replay format) and publish their events to Kafka, keyed by session "
        "id, batched per session unless --single. Exit statuses as for replay.",
        _examples(
            "monitor produce ~/.claude/projects --broker broker:9092",
            "monitor produce events.jsonl --topic agent-events --single",
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, globs or -")
    p.add_argument(
        "--broker",
        metavar="SERVERS",
        help="Kafka bootstrap servers (default: MONITOR_BROKER, else kafka://127.0.0.1:9092)",
    )
    p.add_argument("--topic", help="input topic (default: MONITOR_INPUT_TOPIC, else agent-events)")
    _add_format(p)
    p.add_argument("--single", action="store_true", help="one event per record (default: batches)")
    p.set_defaults(func=cmd_produce)

    return parser


def _quiet_stdout() -> None:
    """After a closed pipe (``monitor sample | head``): send what is left to /dev/null, so the
    interpreter's final flush raises nothing either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (``monitor --help`` lists them)."""
    args = build_parser().parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        settings = load_settings(config_file=args.config)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return USAGE
    try:
        result: int = args.func(args, settings)
        sys.stdout.flush()
        return result
    except BrokenPipeError:
        _quiet_stdout()
        return OK
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception as exc:
        if debug:
            raise
        message, status = describe(exc)
        sys.stderr.write(f"error: {message}\n")
        return status


if __name__ == "__main__":
    raise SystemExit(main())
