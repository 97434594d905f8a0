"""The weekly fixture intake the worker schedules, against real Postgres.

``run_intake`` is what the leader's crontab runs; here it is called directly, with the clock as an
argument, on a store filled by replaying generated sessions into the week before.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import Settings
from monitor.flags import Flag
from monitor.metrics import build_metrics, metric_name
from monitor.replay import Replay
from monitor.sampling import parse_week, previous_week
from monitor.store.db import make_engine, make_sessionmaker
from monitor.store.intake import get_item
from monitor.store.models import IntakeItem
from monitor.store.writes import upsert_sessions, write_flags
from monitor.stream.app import create_app, intake_publisher
from monitor.stream.schedule import INTAKE_SIZE, check_cron, intake_trigger, run_intake
from monitor.testing import free_port, generate_events, read_topic

pytestmark = [pytest.mark.postgres]

NOW = datetime(2026, 12, 7, 0, 10, tzinfo=UTC)  # a Monday, ten past midnight (the default cron)


@pytest.fixture
def maker(pg_schema_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(pg_schema_url)
    m = make_sessionmaker(engine)
    with m.begin() as s:
        s.execute(text("TRUNCATE flags, sessions, intake_items"))
    yield m
    engine.dispose()


def _store_week(maker: sessionmaker[Session], start: datetime, sessions: int, prefix: str) -> int:
    """Replay generated sessions moved into the week starting ``start``; store their flags and
    flagged sessions as the sink would; return how many sessions were flagged."""
    events = generate_events(sessions, seed=21, prefix=prefix)
    base = min(e.ts for e in events)
    moved = [msgspec.structs.replace(e, ts=start + (e.ts - base) / 30) for e in events]
    flags: list[Flag] = []
    replay = Replay(on_flags=flags.extend).run(moved)
    metas = replay.flagged_metas()
    with maker.begin() as s:
        write_flags(s, flags)
        upsert_sessions(s, metas, replay.flag_times)
    assert all(start <= f.ts < start + timedelta(days=7) for f in flags)
    return len(metas)


def _queued(maker: sessionmaker[Session]) -> list[tuple[str, str]]:
    with maker() as s:
        rows = s.execute(select(IntakeItem.week, IntakeItem.session_id))
        return sorted((week, sid) for week, sid in rows)


def test_run_intake_queues_last_week_once(maker: sessionmaker[Session]) -> None:
    week = previous_week(NOW)
    lo, _ = parse_week(week)
    flagged = _store_week(maker, lo, 80, "last")
    _store_week(maker, lo - timedelta(days=7), 40, "older")  # not last week: never a candidate
    assert flagged > INTAKE_SIZE
    metrics = build_metrics()

    ids = run_intake(maker, metrics, now=NOW)

    queued = _queued(maker)
    assert len(ids) == len(queued) == INTAKE_SIZE
    assert {w for w, _ in queued} == {week}
    assert all(sid.startswith("last") for _, sid in queued)
    sampled = metrics.registry.get_sample_value(metric_name("intake_items_sampled_total"))
    last = metrics.registry.get_sample_value(metric_name("intake_last_sample_timestamp_seconds"))
    assert (sampled, last) == (INTAKE_SIZE, NOW.timestamp())
    # A second run (a restarted leader, a rerun) adds nothing.
    assert run_intake(maker, metrics, now=NOW + timedelta(hours=1)) == []
    assert _queued(maker) == queued


def test_run_intake_captures_the_new_items_transcripts(
    maker: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    from monitor.store.models import TranscriptRow
    from monitor.stream.schedule import intake_capture

    lo, _ = parse_week(previous_week(NOW))
    _store_week(maker, lo, 30, "cap")
    ids = run_intake(maker, now=NOW, n=5, capture=intake_capture(maker, Settings()))
    with maker() as s:
        stored = {r.item_id: r for r in s.scalars(select(TranscriptRow))}
    assert len(ids) == 5 and set(ids) <= set(stored)
    # Stored without provenance here, so nothing can be read back, and the page will say so.
    assert {stored[i].status for i in ids} == {"not_recorded"}

    def broken(week: str) -> object:
        raise RuntimeError("broker down")

    with caplog.at_level(logging.ERROR, logger="monitor.stream.schedule"):
        more = run_intake(maker, now=NOW, n=8, capture=broken)
    assert len(more) == 3  # queued all the same
    assert "capturing the transcripts" in caplog.text


def test_a_failing_intake_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    engine = make_engine(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/test")
    try:
        with caplog.at_level(logging.ERROR, logger="monitor.stream.schedule"):
            asyncio.run(intake_trigger(make_sessionmaker(engine))())
    finally:
        engine.dispose()
    assert "fixture intake failed" in caplog.text


@pytest.mark.kafka
def test_new_items_are_published_to_the_intake_topic(
    maker: sessionmaker[Session], tansu_broker: str, unique_name: Callable[[str], str]
) -> None:
    import faust

    lo, _ = parse_week(previous_week(NOW))
    _store_week(maker, lo, 80, "pub")
    topic = unique_name("intake")
    settings = Settings(broker=f"kafka://{tansu_broker}", intake_topic=topic, partitions=2)

    async def run() -> None:
        app = faust.App(unique_name("intake-app"), broker=settings.broker, store="memory://")
        publish = intake_publisher(app, settings)
        assert publish is not None
        await app.producer.start()
        try:
            for _ in range(2):  # the rerun queues nothing, so it publishes nothing
                await intake_trigger(maker, None, publish, now=lambda: NOW)()
        finally:
            await app.producer.stop()

    asyncio.run(run())
    records = read_topic(tansu_broker, topic, INTAKE_SIZE + 1, timeout_s=10)
    assert len(records) == INTAKE_SIZE
    with maker() as session:
        for r in records:
            doc = json.loads(r.value)
            assert r.key == doc["session_id"].encode()
            assert doc == get_item(session, doc["id"])  # what `monitor intake show` prints
            assert doc["status"] == "queued"
            assert doc["draft"]["conversation_id"] == doc["session_id"]
    assert {json.loads(r.value)["session_id"] for r in records} == {
        sid for _, sid in _queued(maker)
    }


def test_no_intake_topic_publishes_nothing() -> None:
    import faust

    app = faust.App("no-intake", broker="kafka://127.0.0.1:1", store="memory://")
    assert intake_publisher(app, Settings(intake_topic="")) is None


def test_the_cron_expression_is_checked_at_start() -> None:
    check_cron(Settings().intake_cron)
    for bad in ("every monday", "10 0 * *", "61 0 * * mon"):
        with pytest.raises(ValueError, match="intake_cron"):
            check_cron(bad)
    settings = Settings(intake_cron="10 0 * * someday", web_port=0, db_url="sqlite://")
    engine = make_engine("sqlite://")
    try:
        with pytest.raises(ValueError, match="intake_cron"):
            create_app(settings, make_sessionmaker(engine))
    finally:
        engine.dispose()


def test_every_worker_reads_the_newest_sample_from_the_store(
    maker: sessionmaker[Session],
) -> None:
    """After a restart (or a hand-run ``monitor sample``) the stale-intake gauge shows the store's
    newest item, and never moves back."""
    from monitor.sampling import Pick
    from monitor.store.intake import add_items
    from monitor.stream.schedule import intake_freshness

    metrics = build_metrics()
    gauge = metric_name("intake_last_sample_timestamp_seconds")
    read = intake_freshness(maker, metrics)
    asyncio.run(read())
    assert metrics.registry.get_sample_value(gauge) == 0.0  # nothing sampled yet
    with maker.begin() as s:
        add_items(s, "2026-W48", [Pick("sampled-by-hand", 1.0, {})], {})
    with maker() as s:
        (created,) = s.execute(select(IntakeItem.created_at)).scalars()
    asyncio.run(read())
    assert metrics.registry.get_sample_value(gauge) == pytest.approx(created.timestamp())
    metrics.note_intake_sample(created.timestamp() - 3600)  # older news changes nothing
    assert metrics.registry.get_sample_value(gauge) == pytest.approx(created.timestamp())
