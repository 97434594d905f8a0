"""The worker's weekly fixture intake: a crontab on the leader around ``sampling.run_week``.

``run_intake`` is the ordinary function (the same one ``monitor sample`` runs, for the previous
ISO week); ``register_intake`` only schedules it. It runs on the leader alone, so a group of
workers queues one sample; ``run_week`` is idempotent and locks the week on Postgres, so a
leader change mid-run or a hand-run ``monitor sample`` still adds nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import faust
    from sqlalchemy.orm import Session, sessionmaker

    from monitor.metrics import Metrics

log = logging.getLogger(__name__)

#: Sessions queued per week.
INTAKE_SIZE: Final = 20


def check_cron(expression: str) -> None:
    """Raise ``ValueError`` for a crontab expression the scheduler cannot run (at start-up,
    not a week later)."""
    from croniter import croniter

    if not croniter.is_valid(expression):
        raise ValueError(f"invalid crontab expression for intake_cron: {expression!r}")


def run_intake(
    maker: sessionmaker[Session],
    metrics: Metrics | None = None,
    now: datetime | None = None,
    n: int = INTAKE_SIZE,
) -> list[int]:
    """Queue the previous ISO week's sample (one transaction); return the new item ids."""
    from monitor.sampling import previous_week, run_week

    now = now or datetime.now(UTC)
    week = previous_week(now)
    with maker.begin() as session:
        ids = run_week(session, week, n)
    if metrics is not None:
        metrics.observe_intake(len(ids), now)
    log.info("fixture intake for %s: %d new item(s)", week, len(ids))
    return ids


def intake_trigger(maker: sessionmaker[Session], metrics: Metrics | None = None) -> Any:
    """The scheduled coroutine: ``run_intake`` off the event loop. A failure is logged, not
    raised (a crashed timer would stop the worker); ``monitor sample`` can fill the week in."""

    async def weekly_intake() -> None:
        try:
            await asyncio.to_thread(run_intake, maker, metrics)
        except Exception:
            log.exception("fixture intake failed; run `monitor sample` for the previous week")

    return weekly_intake


def register_intake(
    app: faust.App,
    maker: sessionmaker[Session],
    cron: str,
    metrics: Metrics | None = None,
) -> Any:
    """Schedule the intake on the leader at ``cron`` (UTC); an empty ``cron`` schedules none."""
    if not cron:
        return None
    check_cron(cron)
    return app.crontab(cron, timezone=UTC, on_leader=True)(intake_trigger(maker, metrics))
