"""``monitor report``: the survival report's arithmetic, its schema, and its agreement with the
stored flags after a real replay into SQLite and Postgres."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor import report
from monitor.cli import main

ROOT = Path(__file__).resolve().parents[1]
VALIDATOR = jsonschema.Draft202012Validator(
    json.loads((ROOT / "schemas" / "survival-report.v1.json").read_text())
)


def counts(**by_compactor: dict[str, dict[str, int]]) -> report.Counts:
    return report.merge([by_compactor])


@given(st.integers(0, 400), st.integers(0, 400))
@settings(max_examples=200)
def test_wilson_holds_the_proportion(k: int, extra: int) -> None:
    n = k + extra
    lo, hi = report.wilson(k, n)
    assert 0.0 <= lo <= hi <= 1.0
    if n:
        assert lo - 1e-12 <= k / n <= hi + 1e-12


@given(st.integers(1, 300), st.integers(0, 300))
@settings(max_examples=100)
def test_equal_proportions_are_no_difference(n: int, k: int) -> None:
    k = min(k, n)
    d, lo, hi = report.difference(k, n, k, n)
    assert d == 0 and lo <= 0 <= hi


def test_merge_sums_sessions_per_compactor_class_and_verdict() -> None:
    one = {"v1": {"constraint": {"verbatim": 2, "absent": 1}}}
    two = {"v1": {"constraint": {"absent": 3}}, "v2": {"reference": {"supported": 1}}}
    merged = report.merge([one, two, {}])
    assert merged["v1"]["constraint"]["absent"] == 4
    assert merged["v1"]["constraint"]["verbatim"] == 2
    assert merged["v2"]["reference"]["supported"] == 1


def test_a_clear_fall_blocks_and_a_shared_shortfall_is_backlog() -> None:
    c = counts(
        # constraints: 60/100 kept under v2 against 97/100 under v1: worse beyond noise.
        v2={
            "constraint": {"verbatim": 60, "absent": 40},
            "commitment": {"verbatim": 80, "absent": 20},
        },
        # commitments: both under the 0.90 gate, about equally: the incumbent's backlog.
        v1={
            "constraint": {"verbatim": 97, "absent": 3},
            "commitment": {"verbatim": 82, "absent": 18},
        },
    )
    doc = report.build(c, {}, {"v1": 40, "v2": 40}, compactor="v2", against="v1")
    VALIDATOR.validate(doc)
    cmp = doc["comparison"]
    assert cmp["blocks"] == ["constraint survival"]
    assert cmp["unmet_by_both"] == ["commitment survival"]
    row = next(r for r in cmp["rows"] if r["class"] == "constraint" and r["metric"] == "survival")
    assert row["verdict"] == "worse" and row["interval"][1] < 0


def test_a_small_sample_is_not_read_as_a_regression() -> None:
    c = counts(
        v2={"constraint": {"verbatim": 4, "absent": 1}},
        v1={"constraint": {"verbatim": 5}},
    )
    cmp = report.build(c, {}, {}, compactor="v2", against="v1")["comparison"]
    row = next(r for r in cmp["rows"] if r["metric"] == "survival" and r["class"] == "constraint")
    assert row["verdict"] == "no_difference" and not cmp["blocks"]


def test_gates_are_configurable_and_checked() -> None:
    assert report.parse_gates(["constraint=0.99"]) == {"constraint": 0.99}
    for bad in ("constraint", "colour=0.5", "reference=1.5", "reference=x"):
        with pytest.raises(ValueError, match="--gate"):
            report.parse_gates([bad])
    doc = report.build(
        counts(v1={"constraint": {"verbatim": 96, "absent": 4}}),
        {},
        {},
        gates={"constraint": 0.99},
    )
    row = doc["compactors"][0]["classes"][0]
    assert row["gate"] == 0.99 and row["meets_gate"] is False and row["survival"] == 0.96


# --- end to end ----------------------------------------------------------------------------------

#: Sessions written for this test: (compactor, rule, summary). A rule kept, dropped or negated.
MIGRATIONS = "Never modify anything under /migrations."
CHARGES = "Keep the /v1/charges response shape the same."
PNPM = "Use pnpm for every install."
SESSIONS = [
    ("sum-v1", MIGRATIONS, f"- {MIGRATIONS}"),
    ("sum-v1", CHARGES, f"- {CHARGES}"),
    ("sum-v1", PNPM, "The session set up the workspace."),
    ("sum-v2", MIGRATIONS, "The session reviewed the schema."),
    ("sum-v2", CHARGES, "- Do not keep the /v1/charges response shape the same."),
    ("sum-v2", PNPM, None),
]


def write_log(path: Path) -> None:
    lines = []
    for n, (compactor, rule, summary) in enumerate(SESSIONS):
        sid = f"sess-{n}"
        base = {"session_id": sid, "attrs": {"agent": "pi"}}
        events: list[dict[str, Any]] = [
            {"kind": "user_message", "turn": 0, "text": rule},
            {"kind": "assistant_message", "turn": 1, "text": "The fixture had a stale path."},
            {"kind": "compaction", "turn": 2, "compaction": {"compactor": compactor}}
            | ({"text": summary} if summary else {}),
            {"kind": "assistant_message", "turn": 3, "text": "Carrying on with the fixture."},
        ]
        for i, e in enumerate(events):
            ts = f"2026-12-01T10:{n:02d}:{i:02d}Z"
            lines.append(json.dumps({**base, **e, "event_id": f"{sid}-{i}", "ts": ts}))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/m.db"
    url: str = request.getfixturevalue("pg_url")
    return url


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, status: int = 0) -> Any:
    capsys.readouterr()
    assert main(list(argv)) == status
    return json.loads(capsys.readouterr().out)


def test_the_report_agrees_with_the_stored_flags(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "events.jsonl"
    write_log(log)
    assert main(["db", "upgrade", "--db", db]) == 0  # Postgres is never created by a replay
    assert main(["replay", str(log), "--db", db, "--survival", "--no-progress"]) == 0
    flags = run_json(capsys, "flags", "--db", db, "--json")["flags"]
    # Sessions whose summaries kept everything are stored for the report, not listed as flagged.
    listed = run_json(capsys, "sessions", "--db", db, "--json")["sessions"]
    assert {r["session_id"] for r in listed} == {f["session_id"] for f in flags}
    assert all(r["flags"] == r["dropped_flags"] + r["inverted_flags"] for r in listed)
    doc = run_json(capsys, "report", "--db", db, "--json")
    VALIDATOR.validate(doc)
    for row in doc["compactors"]:
        name = row["compactor"]
        mine = [f for f in flags if f["evidence"].get("compactor") == name]
        absent = sum(c["absent"] for c in row["classes"])
        contradicted = sum(c["contradicted"] for c in row["classes"])
        assert absent == len([f for f in mine if f["signal"] == "dropped_item"]), name
        assert contradicted == len([f for f in mine if f["signal"] == "inverted_item"]), name
        assert row["downstream"].get("dropped_item", 0) == absent
    by = {r["compactor"]: {c["class"]: c for c in r["classes"]} for r in doc["compactors"]}
    assert by["sum-v1"]["constraint"]["verbatim"] == 2
    assert by["sum-v1"]["constraint"]["absent"] == 1
    assert by["sum-v2"]["constraint"]["contradicted"] == 1
    assert by["sum-v2"]["constraint"]["unchecked"] == 1
    assert doc["compactors"][1]["contradictions"] == 1
    # Too few items to call v2 worse beyond noise; the report says so and exits 0.
    cmp = run_json(capsys, "report", "--db", db, "--compactor", "sum-v2", "--against", "sum-v1",
                   "--json")["comparison"]  # fmt: skip
    assert cmp["candidate"] == "sum-v2" and cmp["blocks"] == []
    capsys.readouterr()
    assert main(["flags", "--db", db, "--signal", "inverted_item"]) == 0
    shown = capsys.readouterr().out
    assert "constraint 'Keep the /v1/charges response shape the same.' contradicted" in shown
    assert shown.count("inverted_item") == 1
    assert main(["report", "--db", db]) == 0
    text = capsys.readouterr().out
    assert "sum-v1: " in text and "BELOW GATE" in text


def test_a_worse_candidate_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from monitor.detect import CHECK_CELLS
    from monitor.detect.session import Meta
    from monitor.store.db import make_engine, make_sessionmaker, upgrade
    from monitor.store.writes import upsert_sessions

    def cells(kept: int, absent: int) -> tuple[int, ...]:
        out = [0] * len(CHECK_CELLS)
        out[CHECK_CELLS[("constraint", "verbatim")]] = kept
        out[CHECK_CELLS[("constraint", "absent")]] = absent
        return tuple(out)

    url = f"sqlite:///{tmp_path}/m.db"
    upgrade(url)
    engine = make_engine(url)
    from datetime import UTC, datetime

    t = datetime(2026, 12, 1, tzinfo=UTC)
    metas = [
        Meta(session_id="a", first_ts=t, last_ts=t, compactions=30, compactor="new",
             survival={"new": cells(50, 50)}),
        Meta(session_id="b", first_ts=t, last_ts=t, compactions=30, compactor="old",
             survival={"old": cells(99, 1)}),
    ]  # fmt: skip
    with make_sessionmaker(engine).begin() as s:
        upsert_sessions(s, metas)
    engine.dispose()
    doc = run_json(capsys, "report", "--db", url, "--compactor", "new", "--against", "old",
                   "--json", status=4)  # fmt: skip
    assert doc["comparison"]["blocks"] == ["constraint survival"]
    capsys.readouterr()
    assert main(["report", "--db", url, "--against", "old"]) == 2
    assert "--against needs --compactor" in capsys.readouterr().err
    assert main(["report", "--db", url, "--gate", "colour=1"]) == 2


def test_each_compaction_counts_under_its_own_compactor(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session the rollout reached midway: two compactions under v1, then one under v2."""
    from sqlalchemy import update

    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.store.models import SessionRow

    lines = []
    turn = 0
    for sid, versions in (("mid", ["v1", "v1", "v2"]), ("old-row", ["v1"])):
        for version in versions:
            for kind, extra in (
                ("tool_call", {"tool": {"name": "Read", "arguments": {"file_path": "a.py"}}}),
                ("compaction", {"compaction": {"compactor": version}}),
                ("tool_call", {"tool": {"name": "Read", "arguments": {"file_path": "a.py"}}}),
            ):
                ts = f"2026-12-01T10:00:{turn % 60:02d}Z"
                event = {"session_id": sid, "event_id": f"{sid}-{turn}", "turn": turn}
                lines.append(json.dumps({**event, "ts": ts, "kind": kind, **extra}))
                turn += 1
    log = tmp_path / "events.jsonl"
    log.write_text("\n".join(lines) + "\n")
    assert main(["db", "upgrade", "--db", db]) == 0
    assert main(["replay", str(log), "--db", db, "--no-progress"]) == 0
    engine = make_engine(db)
    try:
        with make_sessionmaker(engine).begin() as s:
            stored = {r.session_id: r.compactions_by for r in s.query(SessionRow)}
            assert stored == {"mid": {"v1": 2, "v2": 1}, "old-row": {"v1": 1}}
            # A row written before the column existed counts under its latest version.
            s.execute(update(SessionRow).where(SessionRow.session_id == "old-row")
                      .values(compactions_by=None))  # fmt: skip
    finally:
        engine.dispose()
    doc = run_json(capsys, "report", "--db", db, "--json")
    VALIDATOR.validate(doc)
    rows = {r["compactor"]: r for r in doc["compactors"]}
    assert {k: r["compactions"] for k, r in rows.items()} == {"v1": 3, "v2": 1}
    # Every compaction here is followed by a repeated read: one per compaction, per version.
    assert {k: r["downstream"]["per_compaction"] for k, r in rows.items()} == {
        "v1": {"repeated_tool_call": 1.0},
        "v2": {"repeated_tool_call": 1.0},
    }
