"""Transcript capture from provenance spans: files through the adapters, topic records, the cap,
redaction, and what is said when a source is gone."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.capture import (
    Capture,
    Limits,
    Readers,
    Request,
    SpanRead,
    assemble,
    cap_events,
    capture_many,
    events_from_records,
    read_file_spans,
)
from monitor.events import Event, Tool, encode, encode_batch

T0 = datetime(2026, 11, 23, 9, tzinfo=UTC)
SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"


def event(sid: str, turn: int, kind: str = "tool_call", **kw: Any) -> Event:
    if kind in ("tool_call", "tool_result") and "tool" not in kw:
        kw["tool"] = Tool(name="Read", arguments={"path": f"src/{turn}.py"})
    if kind in ("user_message", "assistant_message", "compaction") and "text" not in kw:
        kw["text"] = f"text of {sid} at {turn}"
    return Event(
        event_id=f"{sid}-{turn}-{kind}",
        session_id=sid,
        turn=turn,
        ts=T0 + timedelta(seconds=turn),
        kind=kind,  # type: ignore[arg-type]
        attrs={"agent": "codex", "tenant": "acme", "user_id": "u-77"},
        **kw,
    )


def interleaved() -> list[Event]:
    """Two sessions, a and b, alternating line by line; a's turn 2 holds a secret."""
    out = []
    for turn in range(6):
        a_kind = "user_message" if turn == 2 else "tool_call"
        extra = {"text": f"my key is {SECRET}, keep it"} if turn == 2 else {}
        out.append(event("a", turn, a_kind, **extra))
        out.append(event("b", turn))
    return out


def write_jsonl(path: Path, events: list[Event], *, gz: bool = False) -> Path:
    data = b"".join(encode(e) + b"\n" for e in events)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def readers() -> Readers:
    return Readers(file=read_file_spans)


@pytest.mark.parametrize("gz", [False, True])
def test_a_file_span_gives_the_session_redacted(tmp_path: Path, gz: bool) -> None:
    path = write_jsonl(tmp_path / ("log.jsonl.gz" if gz else "log.jsonl"), interleaved(), gz=gz)
    req = Request("a", [{"file": str(path), "first_line": 1, "last_line": 11}])
    (got,) = capture_many([req], readers())
    assert got.status == "captured" and got.omitted == 0 and got.notes == ()
    assert [e["turn"] for e in got.events] == list(range(6))
    assert {e["session_id"] for e in got.events} == {"a"}
    said = got.events[2]["text"]
    assert SECRET not in said and "[REDACTED]" in said and said.startswith("my key is sk-")
    assert got.events[0]["attrs"] == {"agent": "codex"}  # no tenant, no user id
    assert got.sources == ({"file": str(path), "first_line": 1, "last_line": 11},)


def test_redaction_can_be_turned_off_which_shows_the_test_sees_it(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "log.jsonl", interleaved())
    req = Request("a", [{"file": str(path), "first_line": 1, "last_line": 12}])
    (got,) = capture_many([req], readers(), redact=False)
    assert SECRET in got.events[2]["text"]


def test_secrets_in_tool_arguments_are_redacted(tmp_path: Path) -> None:
    call = event("a", 0, tool=Tool(name="Bash", arguments={"env": [f"TOKEN={SECRET}"], "n": 3}))
    path = write_jsonl(tmp_path / "log.jsonl", [call])
    (got,) = capture_many(
        [Request("a", [{"file": str(path), "first_line": 1, "last_line": 1}])], readers()
    )
    args = got.events[0]["tool"]["arguments"]
    assert args["n"] == 3 and SECRET not in json.dumps(args) and "[REDACTED]" in args["env"][0]


def test_the_file_is_read_once_for_every_session_in_it(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "log.jsonl", interleaved())
    calls: list[str] = []

    def counting(p: str, wants: Any) -> dict[str, SpanRead]:
        calls.append(p)
        return read_file_spans(p, wants)

    reqs = [
        Request("a", [{"file": str(path), "first_line": 1, "last_line": 11}]),
        Request("b", [{"file": str(path), "first_line": 2, "last_line": 12}]),
    ]
    a, b = capture_many(reqs, Readers(file=counting))
    assert calls == [str(path)]
    assert {e["session_id"] for e in a.events} == {"a"} and len(b.events) == 6


def test_a_claude_code_transcript_is_read_through_its_adapter(tmp_path: Path) -> None:
    sid = "4d5611e5-241a-462a-8d15-5122611a9569"
    base = {"isSidechain": False, "sessionId": sid, "version": "2.1.39"}
    records = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": "2026-02-12T16:02:25.284Z",
            "message": {"role": "user", "content": "Never push to main."},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "timestamp": "2026-02-12T16:02:26.284Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "x",
                "content": [
                    {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls"}}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "parentUuid": "u2",
            "timestamp": "2026-02-12T16:02:27.284Z",
            "message": {
                "role": "user",
                "content": [{"tool_use_id": "c1", "type": "tool_result", "content": "a b c"}],
            },
        },
    ]
    path = tmp_path / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (got,) = capture_many(
        [Request(sid, [{"file": str(path), "first_line": 1, "last_line": 3}])], readers()
    )
    assert got.status == "captured"
    assert [e["kind"] for e in got.events] == ["user_message", "tool_call", "tool_result"]
    assert got.events[0]["text"] == "Never push to main."
    assert got.events[2]["text"] == "a b c"


def test_a_missing_file_and_stdin_are_gone_and_say_why(tmp_path: Path) -> None:
    gone = str(tmp_path / "moved.jsonl")
    reqs = [
        Request("a", [{"file": gone, "first_line": 1, "last_line": 5}]),
        Request("b", [{"file": "-", "first_line": 1, "last_line": 5}]),
    ]
    a, b = capture_many(reqs, readers())
    assert a.status == "gone" and a.events == () and "the file is gone" in a.notes[0]
    assert b.status == "gone" and "standard input" in b.notes[0]


def test_a_file_cut_short_gives_what_is_left(tmp_path: Path) -> None:
    events = interleaved()
    path = write_jsonl(tmp_path / "log.jsonl", events[:6])  # a's turns 0-2 only
    (got,) = capture_many(
        [Request("a", [{"file": str(path), "first_line": 1, "last_line": 11}])], readers()
    )
    assert got.status == "partial" and [e["turn"] for e in got.events] == [0, 1, 2]
    assert "has 6 lines" in got.notes[0]


def test_a_file_rewritten_without_the_session_is_gone(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "log.jsonl", [event("z", t) for t in range(12)])
    (got,) = capture_many(
        [Request("a", [{"file": str(path), "first_line": 1, "last_line": 11}])], readers()
    )
    assert got.status == "gone" and "none of the session's events" in got.notes[0]


def test_no_provenance_is_not_recorded_and_bad_spans_are_named() -> None:
    none, empty, bad = capture_many(
        [Request("a", None), Request("b", []), Request("c", [{"file": 3}, {"where": "?"}])],
        readers(),
    )
    assert none.status == empty.status == "not_recorded" and none.sources is None
    assert bad.status == "gone" and len(bad.notes) == 2
    assert all(n.startswith("unrecognised source") for n in bad.notes)


def test_topic_spans_without_a_broker_are_unavailable_not_gone() -> None:
    span = {"topic": "agent-events", "partition": 3, "first_offset": 10, "last_offset": 20}
    (got,) = capture_many([Request("a", [span])], readers())
    assert got.status == "unavailable" and "no broker configured" in got.notes[0]


def test_spans_of_two_sources_join_each_event_once(tmp_path: Path) -> None:
    events = [e for e in interleaved() if e.session_id == "a"]
    one = write_jsonl(tmp_path / "one.jsonl", events[:4])
    two = write_jsonl(tmp_path / "two.jsonl", events[3:])  # turn 3 in both (a redelivery)
    spans = [
        {"file": str(one), "first_line": 1, "last_line": 4},
        {"file": str(two), "first_line": 1, "last_line": 3},
        {"file": str(tmp_path / "three.jsonl"), "first_line": 1, "last_line": 9},
    ]
    (got,) = capture_many([Request("a", spans)], readers())
    assert [e["turn"] for e in got.events] == list(range(6))
    assert got.status == "partial" and "three.jsonl: the file is gone" in got.notes[0]


# --- topic records (the consumer's half that needs no broker) --------------------------------


def records(events: list[Event]) -> list[tuple[int, bytes | None]]:
    """One record per event, then one batch record of session b at the end."""
    out: list[tuple[int, bytes | None]] = [(i, encode(e)) for i, e in enumerate(events)]
    out.append((len(out), None))  # a tombstone
    out.append((len(out), encode_batch([event("b", 90), event("b", 91)])))
    return out


def test_records_give_the_sessions_within_their_offsets() -> None:
    evs = interleaved()
    got = events_from_records(records(evs), {"a": (0, 11), "b": (5, 13)}, 0, "t[0]", 13)
    assert got["a"].status == "complete"
    assert [e.turn for e in got["a"].events] == list(range(6))
    assert [e.turn for e in got["b"].events] == [2, 3, 4, 5, 90, 91]  # offsets 5.. only


def test_expired_offsets_make_a_partial_or_gone_span() -> None:
    evs = interleaved()
    kept = [r for r in records(evs) if r[0] >= 6]
    got = events_from_records(kept, {"a": (0, 11), "b": (0, 3)}, 6, "t[0]", 13)
    assert got["a"].status == "partial" and "offsets 0-5 have expired" in str(got["a"].note)
    assert got["b"].status == "gone" and "have expired (the log starts at 6)" in str(got["b"].note)


def test_a_span_not_read_to_its_end_is_partial() -> None:
    evs = interleaved()
    got = events_from_records(records(evs)[:4], {"a": (0, 11)}, 0, "t[0]", 3)
    assert got["a"].status == "partial" and "read to offset 3 of 11" in str(got["a"].note)


# --- the cap ---------------------------------------------------------------------------------


def builtins(events: list[Event]) -> list[dict[str, Any]]:
    from monitor.capture import clean

    return [clean(e) for e in events]


def test_over_the_cap_user_messages_compactions_and_focus_turns_stay() -> None:
    evs = [event("a", t, "tool_result") for t in range(100)]
    evs[10] = event("a", 10, "user_message")
    evs[50] = event("a", 50, "compaction")
    kept, omitted = cap_events(builtins(evs), {80}, Limits(max_events=12, focus_radius=2))
    turns = [e["turn"] for e in kept]
    assert omitted == 88 and len(kept) == 12
    assert turns == sorted(turns)
    assert {10, 50, 78, 79, 80, 81, 82} <= set(turns)


def test_the_byte_cap_holds() -> None:
    evs = [event("a", t, "user_message", text="x" * 1000) for t in range(50)]
    kept, omitted = cap_events(builtins(evs), (), Limits(max_bytes=10_000))
    assert sum(len(json.dumps(e)) for e in kept) <= 10_000
    assert omitted == 50 - len(kept) and 0 < len(kept) < 50


def test_long_texts_are_cut() -> None:
    (kept,), _ = cap_events(builtins([event("a", 0, "user_message", text="y" * 20_000)]), ())
    assert len(kept["text"]) < 8_100 and kept["text"].endswith("chars]")


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(
        st.sampled_from(["tool_call", "tool_result", "user_message", "compaction"]), max_size=60
    ),
    max_events=st.integers(1, 40),
    focus=st.sets(st.integers(0, 60), max_size=3),
)
def test_the_cap_keeps_order_and_counts(kinds: list[str], max_events: int, focus: set[int]) -> None:
    evs = builtins([event("a", t, k) for t, k in enumerate(kinds)])
    kept, omitted = cap_events(evs, focus, Limits(max_events=max_events))
    assert len(kept) + omitted == len(evs) and len(kept) <= max_events
    assert [e["turn"] for e in kept] == sorted(e["turn"] for e in kept)
    assert all(e in evs for e in kept)


def test_assemble_orders_by_turn_and_prefers_events_over_no_events() -> None:
    req = Request("a", [{"file": "x", "first_line": 1, "last_line": 2}])
    late, early = event("a", 5), event("a", 1)
    got = assemble(req, [SpanRead((late, early))])
    assert isinstance(got, Capture) and [e["turn"] for e in got.events] == [1, 5]


# --- the worker's input topic, on the real broker --------------------------------------------


@pytest.mark.kafka
def test_a_topic_span_is_read_back_from_the_broker(
    tansu_broker: str, one_partition_topic: Any
) -> None:
    from kafka import KafkaProducer

    from monitor.capture import KafkaTopicReader

    topic = one_partition_topic("capture")
    producer = KafkaProducer(bootstrap_servers=tansu_broker)
    try:
        for e in interleaved():  # offsets 0..11, single-event records
            producer.send(topic, key=e.session_id.encode(), value=encode(e)).get(10)
        batch = encode_batch([event("a", 7), event("a", 8, "user_message")])
        producer.send(topic, key=b"a", value=batch).get(10)  # offset 12
        producer.send(topic, key=b"b", value=encode(event("b", 50))).get(10)  # offset 13
    finally:
        producer.close()
    reader = KafkaTopicReader({"bootstrap_servers": tansu_broker}, timeout_s=15)
    spans = {
        "a": [{"topic": topic, "partition": 0, "first_offset": 0, "last_offset": 12}],
        "b": [{"topic": topic, "partition": 0, "first_offset": 1, "last_offset": 11}],
        "gone": [{"topic": topic + "-nope", "partition": 0, "first_offset": 0, "last_offset": 1}],
    }
    a, b, gone = capture_many(
        [Request(sid, s) for sid, s in spans.items()],
        Readers(file=read_file_spans, topic=reader),
    )
    assert a.status == "captured", a.notes
    assert [e["turn"] for e in a.events] == [0, 1, 2, 3, 4, 5, 7, 8]
    assert "[REDACTED]" in a.events[2]["text"]
    assert b.status == "captured" and [e["turn"] for e in b.events] == list(range(6))
    assert gone.status == "gone" and "the topic or partition is gone" in gone.notes[0]


def test_an_unreachable_broker_is_unavailable() -> None:
    from monitor.capture import KafkaTopicReader
    from monitor.testing import free_port

    reader = KafkaTopicReader({"bootstrap_servers": f"127.0.0.1:{free_port()}"}, timeout_s=3)
    span = {"topic": "t", "partition": 0, "first_offset": 0, "last_offset": 1}
    (got,) = capture_many([Request("a", [span])], Readers(file=read_file_spans, topic=reader))
    assert got.status == "unavailable" and "broker not reachable" in got.notes[0]


# --- the sampling hook (``monitor sample``), on both stores ----------------------------------


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    from monitor.store.db import upgrade

    url: str = (
        request.getfixturevalue("pg_url")
        if request.param == "postgres"
        else f"sqlite:///{tmp_path}/store.db"
    )
    upgrade(url)
    return url


def test_sampling_captures_what_the_provenance_names(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sqlalchemy import select

    from monitor.cli import main
    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.store.models import IntakeItem, TranscriptRow
    from monitor.testing import record_sources, review_session, write_events

    sessions = [review_session(f"cap-{i}", 4 - i, 80 - 10 * i) for i in range(3)]
    path = tmp_path / "sessions.jsonl"
    spans = write_events(path, [e for s in sessions for e in s])
    assert main(["replay", str(path), "--db", store_url, "--no-progress"]) == 0

    def sample(n: int) -> str:
        capsys.readouterr()
        assert main(["sample", "--week", "2026-W48", "--n", str(n), "--db", store_url]) == 0
        return capsys.readouterr().err

    engine = make_engine(store_url)
    try:
        with make_sessionmaker(engine).begin() as s:
            from monitor.store.models import SessionRow

            # The replay recorded each session's span of the file, as the capture reads it.
            recorded = {r.session_id: r.sources for r in s.scalars(select(SessionRow))}
            for sp in spans:
                want = {k: v for k, v in sp.items() if k != "session_id"}
                assert recorded[sp["session_id"]] == [want]
            # Rows written before provenance was recorded have none.
            s.execute(SessionRow.__table__.update().values(sources=None))
    finally:
        engine.dispose()
    assert "transcripts: 1 not recorded" in sample(1)
    record_sources(store_url, spans)
    assert "transcripts: 1 captured" in sample(2)
    path.rename(tmp_path / "moved.jsonl")
    assert "transcripts: 1 gone" in sample(3)
    assert "transcripts" not in sample(3)  # nothing left to capture: nothing read again

    engine = make_engine(store_url)
    try:
        with make_sessionmaker(engine)() as s:
            order = list(s.scalars(select(IntakeItem.session_id).order_by(IntakeItem.id)))
            rows = {r.session_id: r for r in s.scalars(select(TranscriptRow))}
    finally:
        engine.dispose()
    first, second, third = (rows[sid] for sid in order)
    assert first.status == "not_recorded" and first.sources is None and first.events == []
    assert second.status == "captured" and second.omitted == 0
    sid = second.session_id
    expected = next(len(s) for s in sessions if s[0].session_id == sid)
    assert len(second.events) == expected
    assert {e["session_id"] for e in second.events} == {sid}
    assert second.sources == [
        {k: v for k, v in sp.items() if k != "session_id"}
        for sp in spans
        if sp["session_id"] == sid
    ]
    assert third.status == "gone" and "the file is gone" in third.notes[0]


def test_a_captured_draft_carries_the_summaries_it_was_checked_against(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import jsonschema
    from sqlalchemy import select

    from monitor.cli import main
    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.store.models import IntakeItem
    from monitor.testing import review_session, write_events

    events = review_session("cap-sum", 6, 60)
    summaries = {e.turn: e.text for e in events if e.kind == "compaction"}
    assert summaries and all(summaries.values())
    path = tmp_path / "sessions.jsonl"
    write_events(path, events)
    assert main(["replay", str(path), "--db", store_url, "--survival", "--no-progress"]) == 0
    assert main(["sample", "--week", "2026-W48", "--n", "1", "--db", store_url]) == 0
    assert "transcripts: 1 captured" in capsys.readouterr().err

    engine = make_engine(store_url)
    try:
        with make_sessionmaker(engine)() as s:
            (draft,) = s.scalars(select(IntakeItem.draft))
    finally:
        engine.dispose()
    schema = json.loads((Path(__file__).parents[1] / "schemas/fixture-draft.v1.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(draft)
    assert {c["turn"]: c["summary"] for c in draft["compactions"]} == summaries
    assert {c["compactor"] for c in draft["compactions"]} == {"sum-v2.0"}
    checked = {v["compaction_turn"] for e in draft["must_survive"] for v in e.get("seen", ())}
    assert checked and checked <= summaries.keys()
