"""Command line: wiring only. Settings -> engine -> the shell a command runs.

Heavy imports (Faust, Kafka clients) happen inside the command that needs them, so
``monitor replay`` starts fast and runs with no servers at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, TextIO

import msgspec

from monitor.adapters import FORMATS
from monitor.config import Settings, load_settings, mask_url

PROGRESS_MIN_BYTES = 5_000_000


def _add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help="SQLAlchemy database URL (default: MONITOR_DB_URL or sqlite:///monitor.db)",
    )


def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, help="force the input format (default: sniffed)")


def _db_url(args: argparse.Namespace, settings: Settings) -> str:
    return str(args.db or settings.db_url)


def _engine_for(url: str, *, migrate_sqlite: bool) -> Any:
    from sqlalchemy import inspect

    from monitor.store.db import make_engine, upgrade

    if migrate_sqlite and url.startswith("sqlite"):
        upgrade(url)  # the embedded default sets itself up
    engine = make_engine(url)
    if not inspect(engine).has_table("flags"):
        raise SystemExit(
            f"error: no monitor schema in {mask_url(url)}; run `monitor db upgrade --db URL` first"
        )
    return engine


def _dump(obj: Any, out: TextIO) -> None:
    json.dump(obj, out, ensure_ascii=False, default=str)
    out.write("\n")


# --- replay -------------------------------------------------------------------------------------


def _with_progress(items: Iterable[Any], paths: Sequence[str], enabled: bool) -> Iterator[Any]:
    import os

    size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
    if not enabled or not sys.stderr.isatty() or size < PROGRESS_MIN_BYTES:
        yield from items
        return
    from tqdm import tqdm

    with tqdm(unit=" events", file=sys.stderr, mininterval=0.5) as bar:
        for item in items:
            bar.update(1)
            yield item


def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.adapters import read_paths
    from monitor.replay import Replay, sorted_flags
    from monitor.store.db import make_sessionmaker
    from monitor.store.sink import StoreSink

    cfg = settings.detect_config()
    if args.window is not None:
        cfg = msgspec.structs.replace(cfg, window=args.window)
    if args.ignore_tool:
        ignored = cfg.ignored_tools | frozenset(args.ignore_tool)
        cfg = msgspec.structs.replace(cfg, ignored_tools=ignored)
    kept: list[Any] = []
    sink = None
    if not args.dry_run:
        url = _db_url(args, settings)
        sink = StoreSink(make_sessionmaker(_engine_for(url, migrate_sqlite=True)))
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
            if flags:
                observe.observe_flags(flags, replay.states[event.session_id].meta.attrs)

        replay.on_event = on_event
    items = read_paths(args.paths, args.format)
    replay.run(_with_progress(items, args.paths, not args.no_progress))
    if sink is not None:
        sink.close(replay.flagged_metas(), replay.flag_times)
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
    return 0


def _print_summary(summary: dict[str, Any], inserted: int | None) -> None:
    out = sys.stdout
    flags = summary["flags_by_signal"]
    out.write(
        f"sessions {summary['sessions']}  events {summary['events']}  "
        f"compactions {summary['compactions']}  flagged sessions {summary['flagged_sessions']}\n"
        f"flags: repeated_tool_call {flags['repeated_tool_call']}  "
        f"restated_instruction {flags['restated_instruction']}"
        + (f"  (new in store: {inserted})" if inserted is not None else "")
        + "\n"
    )
    if summary["problems"]:
        total = sum(summary["problems"].values())
        out.write(f"problems: {total} lines skipped {summary['problems']}\n")
        for p in summary["problem_samples"][:5]:
            out.write(f"  {p['source']}:{p['line']}: {p['reason']} {p['detail']}\n")
    if summary["skipped_records"]:
        out.write(f"unknown records skipped: {summary['skipped_records']}\n")
    if summary["top_sessions"]:
        out.write("top flagged sessions:\n")
        for s in summary["top_sessions"]:
            out.write(
                f"  {s['session_id']}  flags {s['flags']} (repeat {s['repeated_tool_call']}, "
                f"restate {s['restated_instruction']})  compactions {s['compactions']}  "
                f"turns {s['turns']}\n"
            )


# --- store read side -----------------------------------------------------------------------------


def cmd_flags(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.db import make_sessionmaker
    from monitor.store.queries import list_flags

    since = datetime.fromisoformat(args.since) if args.since else None
    if since is not None and since.tzinfo is None:
        raise SystemExit("error: --since needs a time zone, e.g. 2026-12-01T00:00:00Z")
    maker = make_sessionmaker(_engine_for(_db_url(args, settings), migrate_sqlite=False))
    with maker() as session:
        rows = list_flags(
            session, session_id=args.session, signal=args.signal, since=since, limit=args.limit
        )
    if args.json:
        _dump({"flags": rows}, sys.stdout)
        return 0
    for r in rows:
        ev = r["evidence"]
        what = ev.get("tool") or ev.get("later", "")
        sys.stdout.write(
            f"{r['session_id']}  turn {r['turn']}  {r['signal']}  original {r['original_turn']}"
            f"  compaction {r['compaction_turn']}  {str(what)[:80]}\n"
        )
    return 0


def cmd_sessions(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.db import make_sessionmaker
    from monitor.store.queries import list_sessions

    maker = make_sessionmaker(_engine_for(_db_url(args, settings), migrate_sqlite=False))
    with maker() as session:
        rows = list_sessions(session, limit=args.limit)
    if args.json:
        _dump({"sessions": rows}, sys.stdout)
        return 0
    for r in rows:
        sys.stdout.write(
            f"{r['session_id']}  flags {r['flags']} (repeat {r['repeat_flags']}, restate "
            f"{r['restate_flags']})  compactions {r['compactions']}  turns {r['turns']}"
            f"{'  INCIDENT' if r['incident'] else ''}\n"
        )
    return 0


def cmd_db_upgrade(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.db import upgrade

    url = _db_url(args, settings)
    upgrade(url, args.revision)
    sys.stderr.write(f"database {mask_url(url)} is at revision {args.revision}\n")
    return 0


# --- fixture intake ------------------------------------------------------------------------------


def _maker_for(args: argparse.Namespace, settings: Settings) -> Any:
    from monitor.store.db import make_sessionmaker

    return make_sessionmaker(_engine_for(_db_url(args, settings), migrate_sqlite=True))


def _week_arg(week: str | None) -> str:
    from datetime import UTC

    from monitor.sampling import iso_week, parse_week

    week = week or iso_week(datetime.now(UTC))
    try:
        parse_week(week)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    return week


def cmd_sample(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.sampling import run_week
    from monitor.store.intake import list_items

    week = _week_arg(args.week)
    maker = _maker_for(args, settings)
    with maker.begin() as session:
        new = run_week(session, week, args.n)
    _capture_transcripts(maker, settings, week)
    with maker() as session:
        items = list_items(session, week=week)
    if args.json:
        keys = ("id", "session_id", "score", "reason", "status")
        rows = [{k: i[k] for k in keys} for i in items]
        _dump({"week": week, "new": len(new), "items": rows}, sys.stdout)
        return 0
    sys.stdout.write(f"week {week}: {len(new)} new, {len(items)} in the queue for the week\n")
    for i in items:
        r = i["reason"]
        sys.stdout.write(
            f"  #{i['id']}  {i['session_id']}  {i['status']}  score {i['score']:.2f}  "
            f"{r.get('tier')}  {','.join(r.get('signals', []))}\n"
        )
    return 0


def _capture_transcripts(maker: Any, settings: Settings, week: str) -> None:
    """Read back the conversations of the week's items that have none yet (stderr says how
    it went, so ``--json`` output stays one object)."""
    from monitor.capture import STATUSES, capture_pending, readers_for

    counts = capture_pending(maker, readers_for(settings), week=week, redact=settings.redact)
    if counts:
        told = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if counts[s])
        sys.stderr.write(f"transcripts: {told}\n")


def cmd_intake_list(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.intake import list_items

    with _maker_for(args, settings)() as session:
        items = list_items(session, week=args.week, status=args.status, limit=args.limit)
    if args.json:
        _dump({"items": items}, sys.stdout)
        return 0
    for i in items:
        who = i["resolved_by"] or i["claimed_by"] or ""
        sys.stdout.write(
            f"#{i['id']}  {i['week']}  {i['status']:<9}  {i['session_id']}  "
            f"score {i['score']:.2f}  {who}\n"
        )
    return 0


def cmd_intake_show(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.store.intake import get_item

    with _maker_for(args, settings)() as session:
        item = get_item(session, args.id)
    if item is None:
        sys.stderr.write(f"error: no intake item {args.id}\n")
        return 1
    _dump(item, sys.stdout)
    return 0


def _reviewer(name: str | None) -> str:
    import getpass

    return name or getpass.getuser()


def cmd_intake_claim(args: argparse.Namespace, settings: Settings) -> int:
    from datetime import UTC

    from monitor.store.intake import claim

    with _maker_for(args, settings).begin() as session:
        item = claim(session, _reviewer(args.reviewer), datetime.now(UTC), week=args.week)
    if item is None:
        sys.stderr.write("nothing queued\n")
        return 1
    _dump(item, sys.stdout)
    return 0


def cmd_intake_resolve(args: argparse.Namespace, settings: Settings) -> int:
    from datetime import UTC

    from monitor.store.intake import IntakeError, resolve

    try:
        with _maker_for(args, settings).begin() as session:
            item = resolve(
                session,
                args.id,
                accept=args.accept,
                reviewer=_reviewer(args.reviewer),
                now=datetime.now(UTC),
                note=args.note,
            )
    except IntakeError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    _dump(item, sys.stdout)
    return 0


def cmd_intake_export(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from monitor.fixtures import file_name
    from monitor.store.intake import IntakeError, export_items

    if (args.id is None) == (args.week is None):
        raise SystemExit("error: give an item ID or --week W")
    if args.fixture:
        return _export_fixtures(args, settings)
    status = None if args.status == "any" else args.status
    try:
        with _maker_for(args, settings)() as session:
            docs = export_items(session, item_id=args.id, week=args.week, status=status)
    except IntakeError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        path = out / file_name(doc)
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        sys.stdout.write(f"{path}\n")
    return 0


def _export_fixtures(args: argparse.Namespace, settings: Settings) -> int:
    """Finished fixtures, byte for byte what the review page's download gives."""
    from pathlib import Path

    from monitor.review import fixture
    from monitor.review.decisions import ReviewError
    from monitor.store.intake import list_items

    out = Path(args.out)
    with _maker_for(args, settings)() as session:
        if args.id is not None:
            ids = [args.id]
        else:
            ids = [i["id"] for i in list_items(session, week=args.week, status="accepted")]
        try:
            docs = [fixture.document(session, i) for i in ids]
        except ReviewError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 1
    out.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        path = out / fixture.file_name(doc)
        path.write_bytes(fixture.dumps(doc))
        sys.stdout.write(f"{path}\n")
    return 0


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
        raise SystemExit(f"error: {exc}") from None
    if not reviewers.names:
        raise SystemExit(
            "error: no reviewers configured; set MONITOR_REVIEW_TOKENS=alice:TOKEN,bob:TOKEN "
            "or review_tokens in the config file"
        )
    url = _db_url(args, settings)
    engine = _engine_for(url, migrate_sqlite=True)
    if not inspect(engine).has_table("intake_actions"):
        raise SystemExit(
            f"error: {mask_url(url)} predates the review tables; run `monitor db upgrade --db URL`"
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
    run_worker(settings, loglevel=args.loglevel)
    return 0


def cmd_produce(args: argparse.Namespace, settings: Settings) -> int:
    from monitor.stream.produce import produce_paths

    settings = _override(settings, broker=args.broker, input_topic=args.topic)
    stats = produce_paths(args.paths, settings, fmt=args.format, batch=not args.single)
    sys.stderr.write(
        f"produced {stats.events} events in {stats.records} records to {settings.input_topic} "
        f"({stats.events_per_second:,.0f} events/s)\n"
    )
    if stats.problems:
        sys.stderr.write(f"problems: {dict(stats.problems)} lines skipped\n")
    return 0


# --- parser --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="monitor",
        description="Find agent sessions where context compaction lost something that mattered.",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML settings file (MONITOR_CONFIG)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "replay",
        help="run the detectors over log files and store the flags",
        description="Read JSONL logs (our event schema, Claude Code, Codex, pi or OTLP JSON; "
        ".gz too; '-' for stdin), run the detectors, store the flags, print a summary.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, globs or -")
    _add_db(p)
    _add_format(p)
    p.add_argument("--json", action="store_true", help="print one JSON object with every flag")
    p.add_argument("--window", type=int, help="repeat window in turns after a compaction")
    p.add_argument("--ignore-tool", action="append", metavar="NAME", help="never flag this tool")
    p.add_argument("--dry-run", action="store_true", help="do not write to the store")
    p.add_argument("--top", type=int, default=10, help="flagged sessions listed in the summary")
    p.add_argument("--metrics-out", metavar="FILE", help="write Prometheus metrics to FILE")
    p.add_argument("--push-gateway", metavar="ADDR", help="push the run's metrics to a Pushgateway")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("flags", help="list stored flags", description="List stored flags.")
    _add_db(p)
    p.add_argument("--session", metavar="ID")
    p.add_argument("--signal", choices=("repeated_tool_call", "restated_instruction"))
    p.add_argument("--since", metavar="TIME", help="RFC 3339 time, e.g. 2026-12-01T00:00:00Z")
    p.add_argument("--limit", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_flags)

    p = sub.add_parser(
        "sessions",
        help="list flagged sessions with their counters",
        description="List flagged sessions, most flags first.",
    )
    _add_db(p)
    p.add_argument("--limit", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sessions)

    p = sub.add_parser(
        "sample",
        help="queue the week's flagged sessions for fixture intake",
        description="Sample flagged sessions of an ISO week into the fixture-intake queue: "
        "incident sessions first, then weighted by evidence density. Running again adds "
        "nothing; a later run tops the week up to N.",
    )
    _add_db(p)
    p.add_argument(
        "--week", metavar="WEEK", help="ISO week, e.g. 2026-W49 (default: this week, UTC)"
    )
    p.add_argument("--n", type=int, default=20, help="items per week (default 20)")
    p.add_argument("--json", action="store_true", help="print the week's items as one JSON object")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser(
        "intake",
        help="review the fixture-intake queue",
        description="Review the fixture-intake queue: queued -> in_review -> accepted | rejected.",
    )
    isub = p.add_subparsers(dest="intake_command", required=True, metavar="ACTION")
    q = isub.add_parser("list", help="list items", description="List intake items, oldest first.")
    _add_db(q)
    q.add_argument("--week", metavar="WEEK")
    q.add_argument("--status", choices=("queued", "in_review", "accepted", "rejected"))
    q.add_argument("--limit", type=int)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_intake_list)
    q = isub.add_parser("show", help="show one item", description="Print one item as JSON.")
    _add_db(q)
    q.add_argument("id", type=int, metavar="ID")
    q.set_defaults(func=cmd_intake_show)
    q = isub.add_parser(
        "claim",
        help="take the oldest queued item",
        description="Move the oldest queued item to in_review and print it (exit 1: none queued).",
    )
    _add_db(q)
    q.add_argument("--reviewer", metavar="NAME", help="who reviews (default: the login name)")
    q.add_argument("--week", metavar="WEEK", help="only items of this week")
    q.set_defaults(func=cmd_intake_claim)
    q = isub.add_parser(
        "resolve",
        help="accept or reject an item",
        description="Accept or reject an item in review.",
    )
    _add_db(q)
    q.add_argument("id", type=int, metavar="ID")
    verdict = q.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--accept", dest="accept", action="store_true")
    verdict.add_argument("--reject", dest="accept", action="store_false")
    q.add_argument("--note", help="why")
    q.add_argument("--reviewer", metavar="NAME", help="who decides (default: the login name)")
    q.set_defaults(func=cmd_intake_resolve)
    q = isub.add_parser(
        "export",
        help="write fixture drafts as JSON files",
        description="Write one item's fixture draft, or a week's, to DIR (one JSON file each).",
    )
    _add_db(q)
    q.add_argument("id", type=int, nargs="?", metavar="ID")
    q.add_argument("--week", metavar="WEEK")
    q.add_argument(
        "--status",
        choices=("queued", "in_review", "accepted", "rejected", "any"),
        default="accepted",
        help="with --week: items in this status (default accepted)",
    )
    q.add_argument("--out", required=True, metavar="DIR")
    q.add_argument(
        "--fixture",
        action="store_true",
        help="write finished fixtures (schemas/fixture.v1.json) of accepted items: only "
        "confirmed entries, no annotations; the same file as the review page's download",
    )
    q.set_defaults(func=cmd_intake_export)

    p = sub.add_parser(
        "serve",
        help="the intake review page (web)",
        description="Serve the review page for the fixture-intake queue. Reviewers and their "
        "tokens come from MONITOR_REVIEW_TOKENS (alice:TOKEN,bob:TOKEN) or the config file. "
        "Binds to 127.0.0.1 unless told otherwise; put a TLS proxy in front of any other "
        "address.",
    )
    _add_db(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("db", help="database maintenance", description="Database maintenance.")
    dbsub = p.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    q = dbsub.add_parser("upgrade", help="run the migrations", description="Run the migrations.")
    _add_db(q)
    q.add_argument("--revision", default="head")
    q.set_defaults(func=cmd_db_upgrade)

    p = sub.add_parser(
        "worker",
        help="run the streaming worker (Kafka -> detectors -> Postgres)",
        description="Run the Faust worker. Settings come from MONITOR_* variables or --config; "
        "the options below override them.",
    )
    p.add_argument("--broker", help="Kafka bootstrap servers (MONITOR_BROKER)")
    _add_db(p)
    p.add_argument("--web-port", type=int, help="port of /metrics, /health, /ready")
    p.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser(
        "produce",
        help="publish log files to the input topic, keyed by session",
        description="Read logs (any replay format) and publish their events to Kafka, keyed by "
        "session id, batched per session unless --single.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, globs or -")
    p.add_argument("--broker", help="Kafka bootstrap servers (MONITOR_BROKER)")
    p.add_argument("--topic", help="input topic (MONITOR_INPUT_TOPIC)")
    _add_format(p)
    p.add_argument("--single", action="store_true", help="one event per record, no batching")
    p.set_defaults(func=cmd_produce)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(config_file=args.config)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    result: int = args.func(args, settings)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
