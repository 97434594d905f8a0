"""The worker's weekly fixture intake: a crontab on the leader around ``sampling.run_week``.

``run_intake`` is the ordinary function (the same one ``monitor sample`` runs, for the previous
ISO week); ``register_intake`` only schedules it. It runs on the leader alone, so a group of
workers queues one sample; ``run_week`` is idempotent and locks the week on Postgres, so a
leader change mid-run or a hand-run ``monitor sample`` still adds nothing twice.

After queueing, the week's items get their transcripts captured from the input topic
(``monitor.capture``); a capture that fails is logged, and the next run tries again.

With ``intake_topic`` set, the worker also publishes each new item (its ``monitor intake show``
document, draft included) to that topic, keyed by session id, for downstream tools. The database
queue stays the record: a failed publication is logged and not retried, and items queued by a
hand-run ``monitor sample`` are not published.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import faust
    from sqlalchemy.orm import Session, sessionmaker

    from monitor.config import Settings
    from monitor.metrics import Metrics

log = logging.getLogger(__name__)

#: Sessions queued per week.
INTAKE_SIZE: Final = 20
#: How often every worker reads the newest intake sample from the store (seconds).
FRESHNESS_EVERY_S: Final = 600.0


def check_cron(expression: str) -> None:
    """Raise ``ValueError`` for a crontab expression the scheduler cannot run (at start-up,
    not a week later)."""
    from croniter import croniter

    if not croniter.is_valid(expression):
        raise ValueError(f"invalid crontab expression for intake_cron: {expression!r}")


Capture = Callable[[str], object]


def intake_capture(maker: sessionmaker[Session], settings: Settings) -> Capture:
    """Captures the transcripts of a week's items that have none yet (``monitor.capture``)."""
    from monitor.capture import capture_pending, readers_for

    readers = readers_for(settings)

    def capture(week: str) -> object:
        return capture_pending(maker, readers, week=week, redact=settings.redact)

    return capture


def run_intake(
    maker: sessionmaker[Session],
    metrics: Metrics | None = None,
    now: datetime | None = None,
    n: int = INTAKE_SIZE,
    capture: Capture | None = None,
) -> list[int]:
    """Queue the previous ISO week's sample (one transaction), then capture its transcripts;
    return the new item ids."""
    from monitor.sampling import previous_week, run_week

    now = now or datetime.now(UTC)
    week = previous_week(now)
    with maker.begin() as session:
        ids = run_week(session, week, n)
    if metrics is not None:
        metrics.observe_intake(len(ids), now)
    log.info("fixture intake for %s: %d new item(s)", week, len(ids))
    if capture is not None:
        try:
            log.info("transcripts for %s: %s", week, capture(week))
        except Exception:
            log.exception("capturing the transcripts of %s failed; the next run tries again", week)
    return ids


Publish = Callable[[list[dict[str, Any]]], Awaitable[None]]


def intake_documents(maker: sessionmaker[Session], ids: list[int]) -> list[dict[str, Any]]:
    """The published form of new items: what ``monitor intake show`` prints for each."""
    from monitor.store.intake import get_item

    with maker() as session:
        return [doc for i in ids if (doc := get_item(session, i)) is not None]


def intake_trigger(
    maker: sessionmaker[Session],
    metrics: Metrics | None = None,
    publish: Publish | None = None,
    now: Callable[[], datetime] | None = None,
    capture: Capture | None = None,
) -> Any:
    """The scheduled coroutine: ``run_intake`` off the event loop, then ``publish`` the new
    items. A failure is logged, not raised (a crashed timer would stop the worker); ``monitor
    sample`` can fill the week in. ``now`` is the clock (tests set it)."""

    async def weekly_intake() -> None:
        try:
            at = now() if now is not None else None
            ids = await asyncio.to_thread(run_intake, maker, metrics, at, INTAKE_SIZE, capture)
        except Exception:
            log.exception("fixture intake failed; run `monitor sample` for the previous week")
            return
        if publish is None or not ids:
            return
        try:
            await publish(await asyncio.to_thread(intake_documents, maker, ids))
        except Exception:
            log.exception("publishing %d new intake item(s) failed; they are queued", len(ids))

    return weekly_intake


def register_intake(
    app: faust.App,
    maker: sessionmaker[Session],
    cron: str,
    metrics: Metrics | None = None,
    publish: Publish | None = None,
    capture: Capture | None = None,
) -> Any:
    """Schedule the intake on the leader at ``cron`` (UTC); an empty ``cron`` schedules none."""
    if not cron:
        return None
    check_cron(cron)
    trigger = intake_trigger(maker, metrics, publish, capture=capture)
    return app.crontab(cron, timezone=UTC, on_leader=True)(trigger)


def intake_freshness(maker: sessionmaker[Session], metrics: Metrics) -> Any:
    """A coroutine that reads when the newest intake item was queued into the
    ``intake_last_sample_timestamp_seconds`` gauge (which keeps the newest it saw).

    Every worker runs it, at start and every ``FRESHNESS_EVERY_S``: only the leader samples, a
    restart empties its gauge, and ``monitor sample`` run by hand queues without any worker,
    so the stale-intake alert reads the store's word too. A failure is logged, not raised.
    """
    from monitor.store.intake import newest_item_time

    def newest() -> datetime | None:
        with maker() as session:
            return newest_item_time(session)

    async def read_intake_freshness() -> None:
        try:
            at = await asyncio.to_thread(newest)
        except Exception:
            log.warning("could not read the newest intake item", exc_info=True)
            return
        if at is not None:
            metrics.note_intake_sample(at.timestamp())

    return read_intake_freshness


def register_intake_freshness(
    app: faust.App, maker: sessionmaker[Session], metrics: Metrics | None
) -> Any:
    """Run ``intake_freshness`` at start and then every ``FRESHNESS_EVERY_S`` on every worker."""
    if metrics is None:
        return None
    read = intake_freshness(maker, metrics)
    app.task(read)
    return app.timer(FRESHNESS_EVERY_S)(read)
