"""Provenance (PROVENANCE.md): every flag names the file and line of its event, every stored
session the spans of its input; the store keeps both, and neither changes a flag's key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import text

from monitor.adapters import expand, read_located
from monitor.detect import DetectConfig
from monitor.events import Compaction, Event, Tool, encode
from monitor.provenance import MAX_SPANS, Held, Spans, merge_spans
from monitor.replay import Replay
from monitor.store.db import make_engine, make_sessionmaker, upgrade
from monitor.store.queries import list_flags, list_sessions
from monitor.store.sink import StoreSink

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


# --- spans -------------------------------------------------------------------------------------


def test_one_file_is_one_span_widening_as_lines_arrive() -> None:
    spans = Spans()
    for line in (3, 4, 9, 7):
        spans.add(("file", "/a.jsonl"), line)
    assert spans.to_json() == [{"file": "/a.jsonl", "first_line": 3, "last_line": 9}]


def test_spans_keep_the_oldest_first_and_fold_the_rest_into_the_last() -> None:
    spans = Spans()
    for p in range(20):
        spans.add(("topic", "in", p), 100 + p)
    out = spans.to_json()
    assert len(out) == MAX_SPANS
    assert [s["partition"] for s in out] == list(range(MAX_SPANS))
    assert out[-1] == {"topic": "in", "partition": 15, "first_offset": 115, "last_offset": 119}


_keys = st.sampled_from(
    [("file", "/a"), ("file", "-"), ("topic", "t", 0), ("topic", "t", 1), ("topic", "u", 0)]
)


@given(st.lists(st.tuples(_keys, st.integers(0, 10**9)), max_size=60))
def test_spans_cover_every_position_of_every_key_kept(adds: list[tuple[Any, int]]) -> None:
    spans = Spans()
    for key, pos in adds:
        spans.add(key, pos)
    items = spans.items()
    assert len(items) <= MAX_SPANS
    for key, pos in adds:
        mine = [(f, last) for k, f, last in items if k == key]
        assert mine and any(f <= pos <= last for f, last in mine)
    assert Spans.from_json(spans.to_json()).to_json() == spans.to_json()


def test_merging_widens_stored_spans_and_keeps_unknown_unknown() -> None:
    stored = [{"file": "/a", "first_line": 5, "last_line": 9}]
    new = [
        {"file": "/a", "first_line": 2, "last_line": 6},
        {"file": "/b", "first_line": 1, "last_line": 1},
    ]
    assert merge_spans(stored, new) == [
        {"file": "/a", "first_line": 2, "last_line": 9},
        {"file": "/b", "first_line": 1, "last_line": 1},
    ]
    assert merge_spans(None, None) is None
    assert merge_spans(None, new) == new


def test_held_forgets_events_that_no_longer_wait() -> None:
    held: Held[int] = Held()
    held.note("s", "e1", 1)
    held.note("s", "e2", 2)
    held.keep("s", ["e2"])
    assert (held.origin("s", "e1"), held.origin("s", "e2"), len(held)) == (None, 2, 1)
    held.keep("s", [])
    assert not held.holds("s")


# --- replay ------------------------------------------------------------------------------------


def _event(turn: int, kind: str, sid: str = "s1", **kw: Any) -> Event:
    return Event(f"{sid}-{turn}", sid, turn, T0 + timedelta(minutes=turn), kind, **kw)  # type: ignore[arg-type]


def _session(sid: str = "s1") -> list[Event]:
    read = Tool(name="Read", arguments={"file_path": "/repo/app.py"})
    return [
        _event(1, "user_message", sid, text="Never push to main; open a pull request."),
        _event(2, "tool_call", sid, tool=read),
        _event(3, "compaction", sid, compaction=Compaction(compactor="sum-v1")),
        _event(4, "tool_call", sid, tool=read),
        _event(5, "user_message", sid, text="Again: never push to main, open a pull request."),
    ]


def _write(path: Path, events: list[Event], blank_first: bool = False) -> Path:
    lines = [encode(e).decode() for e in events]
    path.write_text(("\n" if blank_first else "") + "\n".join(lines) + "\n")
    return path


def test_replayed_flags_name_the_file_and_line_of_their_event(tmp_path: Path) -> None:
    path = _write(tmp_path / "log.jsonl", _session(), blank_first=True)
    flags: list[Any] = []
    replay = Replay(cfg=DetectConfig(), on_flags=flags.extend)
    replay.run_located(read_located(expand([str(path)])))
    lines = path.read_text().splitlines()
    assert {f.signal for f in flags} == {"repeated_tool_call", "restated_instruction"}
    for f in flags:
        assert f.source["file"] == str(path.resolve())
        assert json.loads(lines[f.source["line"] - 1])["event_id"] == f.event_id
    assert replay.session_sources() == {
        "s1": [{"file": str(path.resolve()), "first_line": 2, "last_line": 6}]
    }


def test_a_flag_released_from_reordering_names_its_own_line(tmp_path: Path) -> None:
    events = _session()
    shuffled = [events[0], events[1], events[2], events[4], events[3]]  # the repeat arrives late
    later = _event(9, "assistant_message", text="done")
    path = _write(tmp_path / "late.jsonl", [*shuffled, later])
    flags: list[Any] = []
    replay = Replay(cfg=DetectConfig(reorder_turns=3), on_flags=flags.extend)
    replay.run_located(read_located(expand([str(path)])))
    lines = path.read_text().splitlines()
    assert flags
    for f in flags:
        assert json.loads(lines[f.source["line"] - 1])["event_id"] == f.event_id


def test_stdin_is_named_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = "\n".join(encode(e).decode() for e in _session()) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    flags: list[Any] = []
    Replay(on_flags=flags.extend).run_located(read_located(expand(["-"])))
    assert flags and {f.source["file"] for f in flags} == {"-"}


# --- the store ---------------------------------------------------------------------------------


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "postgres":
        url: str = request.getfixturevalue("pg_url")
    else:
        url = f"sqlite:///{tmp_path}/store.db"
    upgrade(url)
    yield url


def _replay_into(url: str, *paths: Path) -> Replay:
    maker = make_sessionmaker(make_engine(url))
    sink = StoreSink(maker)
    replay = Replay(on_flags=sink.add).run_located(read_located(expand([str(p) for p in paths])))
    sink.close(replay.flagged_metas(), replay.flag_times, replay.session_sources())
    return replay


def test_the_store_keeps_sources_and_widens_a_session_read_from_two_files(
    store_url: str, tmp_path: Path
) -> None:
    events = _session()
    first = _write(tmp_path / "one.jsonl", events[:3])
    second = _write(tmp_path / "two.jsonl", events[3:])
    _replay_into(store_url, first)
    _replay_into(store_url, first, second)  # the first file again: nothing new, spans kept
    maker = make_sessionmaker(make_engine(store_url))
    with maker() as s:
        flags = list_flags(s)
        (session,) = list_sessions(s)
    assert {f["source"]["file"] for f in flags} == {str(second.resolve())}
    assert session["sources"] == [
        {"file": str(first.resolve()), "first_line": 1, "last_line": 3},
        {"file": str(second.resolve()), "first_line": 1, "last_line": 2},
    ]
    # Re-reading the same events from elsewhere adds no flag: the source is not in the key.
    moved = _write(tmp_path / "moved.jsonl", events)
    _replay_into(store_url, moved)
    with maker() as s:
        assert len(list_flags(s)) == len(flags)


@pytest.mark.postgres
def test_the_migration_adds_nullable_columns_to_existing_rows(pg_url: str) -> None:
    upgrade(pg_url, "2ce848fdcafa")
    engine = make_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO flags (session_id, signal, turn, original_turn, key, event_id, ts,"
                " evidence) VALUES ('old', 'repeated_tool_call', 4, 2, 'k', 'e', now(), '{}')"
            )
        )
    upgrade(pg_url)
    with make_sessionmaker(engine)() as s:
        (row,) = list_flags(s)
    assert row["session_id"] == "old" and row["source"] is None
    with engine.connect() as conn:
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    from monitor.store.db import revisions

    assert version in revisions(engine)[1]
    from alembic import command

    from monitor.store.db import alembic_config

    command.downgrade(alembic_config(pg_url), "2ce848fdcafa")
    with engine.connect() as conn:
        columns = {
            r[0]
            for r in conn.execute(
                text("SELECT column_name FROM information_schema.columns WHERE table_name='flags'")
            )
        }
    assert "source" not in columns and "evidence" in columns
    engine.dispose()
