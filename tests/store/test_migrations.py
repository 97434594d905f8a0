"""Data migrations: stores written by earlier versions read as the current code writes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from monitor.flags import text_key
from monitor.store.db import make_engine, upgrade

T0 = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store at the revision before restatements became one flag per message."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/old.db"
    else:
        url = request.getfixturevalue("pg_url")
    upgrade(url, "c18a0c0de002")
    yield url


def _flag(sid: str, turn: int, original: int, compaction: int | None, score: float) -> dict:
    return {
        "session_id": sid,
        "signal": "restated_instruction",
        "turn": turn,
        "original_turn": original,
        "compaction_turn": compaction,
        "key": text_key(f"instruction {original}"),
        "event_id": f"{sid}-{turn}",
        "ts": T0,
        "compactor": "v1",
        "evidence": {"earlier": f"instruction {original}", "later": "again", "score": score},
    }


def test_restatements_become_one_flag_per_message(old_store: str) -> None:
    engine = make_engine(old_store)
    meta = sa.MetaData()
    meta.reflect(engine, only=["flags", "sessions"])
    flags, sessions = meta.tables["flags"], meta.tables["sessions"]
    with engine.begin() as c:
        c.execute(
            flags.insert(),
            [
                _flag("s1", 9, 2, None, 95.0),
                _flag("s1", 9, 4, 6, 81.0),  # the one across a compaction comes first
                _flag("s1", 9, 5, 6, 88.0),
                _flag("s1", 12, 3, None, 90.0),
            ],
        )
        c.execute(
            sessions.insert(),
            [
                {
                    "session_id": "s1",
                    "first_seen": T0,
                    "last_seen": T0,
                    "turns": 13,
                    "events": 40,
                    "tool_calls": 10,
                    "user_messages": 5,
                    "compactions": 1,
                    "repeat_flags": 0,
                    "restate_flags": 4,
                    "incident": False,
                    "attrs": {},
                }
            ],
        )
    engine.dispose()
    upgrade(old_store)
    engine = make_engine(old_store)
    try:
        with engine.connect() as c:
            rows = c.execute(
                sa.text(
                    "SELECT turn, original_turn, compaction_turn, key, evidence FROM flags "
                    "WHERE signal = 'restated_instruction' ORDER BY turn"
                )
            ).all()
            counts = c.execute(
                sa.text("SELECT restate_flags, restate_spanning, retries FROM sessions")
            ).one()
    finally:
        engine.dispose()
    assert [(r.turn, r.original_turn, r.compaction_turn) for r in rows] == [
        (9, 5, 6),
        (12, 3, None),
    ]
    first = (
        rows[0].evidence
        if isinstance(rows[0].evidence, dict)
        else __import__("json").loads(rows[0].evidence)
    )
    assert [r["original_turn"] for r in first["restated"]] == [5, 4, 2]
    assert first["tier"] == "spanning" and first["restated_count"] == 3
    assert rows[0].key == text_key("message\x00s1-9")
    assert tuple(counts) == (2, 1, 0)
