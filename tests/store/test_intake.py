"""The intake queue: lifecycle, atomic claims under concurrency, export against the schema."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from monitor.cli import main
from monitor.sampling import Pick, run_week
from monitor.store.db import make_engine, make_sessionmaker, upgrade
from monitor.store.intake import (
    IntakeError,
    add_items,
    claim,
    export_items,
    get_item,
    list_items,
    resolve,
)
from monitor.store.models import FlagRow, SessionRow

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "fixture-draft.v1.json").read_text()
)
T0 = datetime(2026, 12, 2, 9, tzinfo=UTC)
WEEK = "2026-W49"


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    url = (
        request.getfixturevalue("pg_url")
        if request.param == "postgres"
        else f"sqlite:///{tmp_path}/store.db"
    )
    upgrade(url)
    engine = make_engine(url)
    yield url, make_sessionmaker(engine)
    engine.dispose()


def queue(maker: sessionmaker[Session], count: int, week: str = WEEK) -> list[int]:
    picks = [Pick(f"{week}-s{i:03d}", 1.0 + i, {"tier": "evidence"}) for i in range(count)]
    with maker.begin() as s:
        return add_items(s, week, picks, {})


def test_lifecycle_records_who_when_and_why(store: tuple[str, Any]) -> None:
    _, maker = store
    first, second = queue(maker, 2)
    with maker.begin() as s:
        got = claim(s, "ana", T0)
    assert got is not None and got["id"] == first
    assert (got["status"], got["claimed_by"]) == ("in_review", "ana")
    assert datetime.fromisoformat(got["claimed_at"]) == T0
    with maker.begin() as s:
        done = resolve(
            s, first, accept=True, reviewer="ana", now=T0 + timedelta(hours=1), note="ok"
        )
    assert (done["status"], done["resolved_by"], done["note"]) == ("accepted", "ana", "ok")
    assert datetime.fromisoformat(done["resolved_at"]) == T0 + timedelta(hours=1)
    with maker.begin() as s, pytest.raises(IntakeError, match="accepted"):
        resolve(s, first, accept=False, reviewer="bo", now=T0)
    with maker.begin() as s, pytest.raises(IntakeError, match="queued"):
        resolve(s, second, accept=True, reviewer="bo", now=T0)  # not claimed yet
    with maker.begin() as s, pytest.raises(IntakeError, match="no intake item"):
        resolve(s, 999, accept=True, reviewer="bo", now=T0)
    with maker.begin() as s:
        assert claim(s, "bo", T0)["id"] == second  # type: ignore[index]
        resolve(s, second, accept=False, reviewer="bo", now=T0, note="duplicate")
    with maker.begin() as s:
        assert claim(s, "bo", T0) is None
    with maker() as s:
        assert [i["status"] for i in list_items(s, week=WEEK)] == ["accepted", "rejected"]
        assert list_items(s, status="rejected")[0]["note"] == "duplicate"


def test_a_session_is_queued_once(store: tuple[str, Any]) -> None:
    _, maker = store
    assert len(queue(maker, 3)) == 3
    with maker.begin() as s:
        again = add_items(s, "2026-W50", [Pick(f"{WEEK}-s001", 1.0, {})], {})
    assert again == []
    with maker() as s:
        assert len(list_items(s)) == 3


@pytest.mark.postgres
def test_concurrent_reviewers_never_get_the_same_item(pg_url: str) -> None:
    upgrade(pg_url)
    engine = make_engine(pg_url)
    maker = make_sessionmaker(engine)
    ids = queue(maker, 60)
    start = threading.Barrier(4, timeout=30)
    got: dict[str, list[int]] = {}

    def reviewer(name: str) -> None:
        mine: list[int] = []
        start.wait()
        for _ in range(len(ids) + 1):  # bounded: at most every item, then one empty claim
            with maker.begin() as s:
                item = claim(s, name, datetime.now(UTC))
            if item is None:
                break
            mine.append(item["id"])
        got[name] = mine

    threads = [threading.Thread(target=reviewer, args=(f"r{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    engine.dispose()
    claimed = [i for mine in got.values() for i in mine]
    assert len(got) == 4
    assert sorted(claimed) == ids  # every item once: none twice, none lost
    assert sum(1 for mine in got.values() if mine) >= 2  # they really competed


@pytest.mark.postgres
def test_a_locked_item_is_skipped_not_waited_for(pg_url: str) -> None:
    upgrade(pg_url)
    engine = make_engine(pg_url)
    maker = make_sessionmaker(engine)
    first, second = queue(maker, 2)
    with maker.begin() as holder:
        assert claim(holder, "ana", T0)["id"] == first  # type: ignore[index]
        with maker.begin() as other:  # ana's transaction still holds the row lock
            other.execute(text("SET LOCAL lock_timeout = '2s'"))
            assert claim(other, "bo", T0)["id"] == second  # type: ignore[index]
    engine.dispose()


def add_flagged(maker: sessionmaker[Session], sid: str) -> None:
    with maker.begin() as s:
        s.add(
            SessionRow(
                session_id=sid,
                first_seen=T0,
                last_seen=T0,
                first_flagged_at=T0,
                last_flagged_at=T0,
                turns=80,
                events=200,
                tool_calls=100,
                user_messages=20,
                compactions=2,
                repeat_flags=1,
                restate_flags=1,
                incident=False,
                attrs={},
            )
        )
        s.add(
            FlagRow(
                session_id=sid,
                signal="repeated_tool_call",
                turn=44,
                original_turn=30,
                compaction_turn=41,
                key="9f0c2a1b3c4d5e6f",
                event_id=f"{sid}-44",
                ts=T0,
                evidence={
                    "tool": "Bash",
                    "arguments": '{"command":"make test"}',
                    "first_turn": 12,
                    "original_turn": 30,
                    "compaction_turn": 41,
                    "compactor": "v3",
                },
            )
        )
        s.add(
            FlagRow(
                session_id=sid,
                signal="restated_instruction",
                turn=60,
                original_turn=4,
                compaction_turn=41,
                key="0a1b2c3d4e5f6071",
                event_id=f"{sid}-60",
                ts=T0,
                evidence={
                    "earlier": "Never force-push to main.",
                    "later": "As I said, do not force-push to main.",
                    "original_turn": 4,
                    "score": 92.0,
                    "cues": ["reminder_cue"],
                    "spans_compaction": True,
                },
            )
        )


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_export_round_trips_through_the_schema(
    store: tuple[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, maker = store
    for sid in ("a/b session", "plain-1", "plain-2"):
        add_flagged(maker, sid)
    code, out = run_cli(capsys, "sample", "--week", WEEK, "--n", "3", "--db", url, "--json")
    assert code == 0
    sampled = json.loads(out)
    assert sampled["week"] == WEEK and len(sampled["items"]) == 3
    assert {"session_id", "score", "reason"} <= set(sampled["items"][0])
    code, out = run_cli(capsys, "intake", "claim", "--reviewer", "ana", "--db", url)
    item_id = json.loads(out)["id"]
    resolve_args = ("intake", "resolve", str(item_id), "--accept", "--note", "good", "--db", url)
    code, _ = run_cli(capsys, *resolve_args)
    assert code == 1  # ana holds it
    code, _ = run_cli(capsys, *resolve_args, "--reviewer", "ana")
    assert code == 0

    code, out = run_cli(
        capsys, "intake", "export", "--week", WEEK, "--out", str(tmp_path / "w"), "--db", url
    )
    paths = out.split()
    assert code == 0 and len(paths) == 1  # only the accepted item by default
    code, out = run_cli(
        capsys, "intake", "export", str(item_id), "--out", str(tmp_path / "i"), "--db", url
    )
    assert out.split()[0].endswith(".json")
    exported = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
    jsonschema.validate(exported, SCHEMA, format_checker=jsonschema.FormatChecker())
    assert exported == json.loads(Path(out.split()[0]).read_text(encoding="utf-8"))
    with maker() as s:
        stored = get_item(s, item_id)
        assert export_items(s, item_id=item_id) == [exported]
    assert stored is not None
    assert {k: v for k, v in exported.items() if k != "intake"} == stored["draft"]
    assert exported["intake"]["status"] == "accepted"
    assert exported["intake"]["note"] == "good"
    classes = {e["class"]: e for e in exported["must_survive"]}
    assert classes["constraint"]["literal"] == "Never force-push to main."
    assert classes["constraint"]["turn"] == 4
    assert classes["reference"]["turn"] == 30  # the latest result before the compaction
    assert classes["reference"]["call"] == {"tool": "Bash", "arguments": '{"command":"make test"}'}

    code, out = run_cli(
        capsys,
        "intake",
        "export",
        "--week",
        WEEK,
        "--status",
        "any",
        "--out",
        str(tmp_path / "all"),
        "--db",
        url,
    )
    files = sorted(Path(p).name for p in out.split())
    assert len(files) == 3 and len(set(files)) == 3
    for p in out.split():
        jsonschema.validate(json.loads(Path(p).read_text(encoding="utf-8")), SCHEMA)


def test_cli_lists_shows_and_refuses(
    store: tuple[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    url, maker = store
    add_flagged(maker, "only")
    with maker.begin() as s:
        (item_id,) = run_week(s, WEEK, 5)
    code, out = run_cli(capsys, "intake", "list", "--json", "--db", url)
    assert code == 0 and [i["id"] for i in json.loads(out)["items"]] == [item_id]
    code, out = run_cli(capsys, "intake", "show", str(item_id), "--db", url)
    assert json.loads(out)["draft"]["conversation_id"] == "only"
    assert run_cli(capsys, "intake", "resolve", str(item_id), "--reject", "--db", url)[0] == 1
    assert run_cli(capsys, "intake", "show", "999", "--db", url)[0] == 1
    assert run_cli(capsys, "intake", "claim", "--db", url, "--reviewer", "x")[0] == 0
    assert run_cli(capsys, "intake", "claim", "--db", url, "--reviewer", "x")[0] == 1


def test_an_item_in_review_belongs_to_its_reviewer_unless_forced(store: tuple[str, Any]) -> None:
    from monitor.store.intake import reopen

    _, maker = store
    first, second = queue(maker, 2)
    with maker.begin() as s:
        assert claim(s, "ana", T0, item_id=second)["id"] == second  # type: ignore[index]
    with maker.begin() as s, pytest.raises(IntakeError, match=r"in review by ana.*--force"):
        resolve(s, second, accept=True, reviewer="bo", now=T0)
    with maker.begin() as s, pytest.raises(IntakeError, match="in review by ana"):
        claim(s, "bo", T0, item_id=second)
    with maker.begin() as s:
        again = claim(s, "ana", T0, item_id=second)  # one's own claim: unchanged
        assert again is not None and again["claimed_by"] == "ana"
        done = resolve(s, second, accept=True, reviewer="bo", now=T0, force=True, note="ana away")
    assert (done["status"], done["resolved_by"], done["claimed_by"]) == ("accepted", "bo", "ana")
    assert [h["action"] for h in done["history"]] == ["claim", "resolve"]
    assert done["history"][1] == {
        "action": "resolve",
        "by": "bo",
        "at": T0.isoformat(),
        "verdict": "accepted",
        "forced": True,
        "overrode": "ana",
    }
    with maker.begin() as s, pytest.raises(IntakeError, match="reopen"):
        claim(s, "bo", T0, item_id=second)  # resolved: reopen first
    with maker.begin() as s:
        back = reopen(s, second, reviewer="cy", now=T0 + timedelta(hours=1))
    assert (back["status"], back["claimed_by"], back["resolved_by"]) == ("queued", None, None)
    assert back["history"][-1]["action"] == "reopen" and back["history"][-1]["was"] == "accepted"
    with maker.begin() as s, pytest.raises(IntakeError, match="already queued"):
        reopen(s, second, reviewer="cy", now=T0)
    with maker.begin() as s:
        claim(s, "dee", T0, item_id=first)
    with maker.begin() as s, pytest.raises(IntakeError, match="in review by dee"):
        reopen(s, first, reviewer="cy", now=T0)
    with maker.begin() as s:
        taken = claim(s, "cy", T0, item_id=first, force=True)
    assert taken is not None and taken["claimed_by"] == "cy"
    assert taken["history"][-1] == {
        "action": "claim", "by": "cy", "at": T0.isoformat(), "forced": True, "overrode": "dee"
    }  # fmt: skip


def test_listing_order_is_the_rank_shown_and_the_claim_order(store: tuple[str, Any]) -> None:
    _, maker = store
    later = queue(maker, 2, week="2026-W50")
    earlier = queue(maker, 3, week=WEEK)
    with maker.begin() as s:
        topped_up = add_items(s, "2026-W50", [Pick("top-up", 9.0, {"tier": "evidence"})], {})
    with maker() as s:
        items = list_items(s)
    assert [i["id"] for i in items] == [*earlier, *later, *topped_up]
    assert [(i["week"], i["rank"]) for i in items] == [
        (WEEK, 1), (WEEK, 2), (WEEK, 3), ("2026-W50", 1), ("2026-W50", 2), ("2026-W50", 3)
    ]  # fmt: skip
    with maker.begin() as s:
        assert claim(s, "ana", T0)["id"] == earlier[0]  # type: ignore[index]
    with maker() as s:
        queued = list_items(s, status="queued", week="2026-W50")
        assert [i["rank"] for i in queued] == [1, 2, 3]  # ranks stay the week's
        assert get_item(s, later[1])["rank"] == 2  # type: ignore[index]


def test_cli_claims_by_id_forces_reopens_and_samples_the_last_complete_week(
    store: tuple[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from monitor.sampling import previous_week

    url, maker = store
    first, second = queue(maker, 2)

    def cli(*argv: str) -> tuple[int, str, str]:
        code = main([*argv, "--db", url])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    code, out, _ = cli("intake", "claim", str(second), "--reviewer", "ana")
    assert code == 0 and json.loads(out)["id"] == second
    code, _, err = cli("intake", "resolve", str(second), "--accept", "--reviewer", "bo")
    assert code == 1 and "in review by ana" in err and "--force" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    code, out, _ = cli("intake", "resolve", str(second), "--reject", "--reviewer", "bo", "--force")
    done = json.loads(out)
    assert code == 0 and done["status"] == "rejected"
    assert done["history"][-1]["forced"] is True and done["history"][-1]["overrode"] == "ana"
    code, out, _ = cli("intake", "reopen", str(second), "--reviewer", "bo")
    assert code == 0 and json.loads(out)["status"] == "queued"
    code, out, _ = cli("intake", "list")
    lines = out.splitlines()
    assert lines[0].startswith("rank  id")
    assert [line.split()[:2] for line in lines[1:]] == [["1", f"#{first}"], ["2", f"#{second}"]]
    code, out, err = cli("sample", "--json")
    week = previous_week(datetime.now(UTC))
    assert code == 0 and json.loads(out)["week"] == week
    assert f"sampling {week}, the last complete ISO week" in err
