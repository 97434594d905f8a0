from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from monitor.detect.session import Meta
from monitor.stream.records import (
    RECORD_BYTES,
    SUMMARIES_PER_RECORD,
    SessionSummary,
    decode,
    encode,
    merge,
    summarise,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _summary(sid: str, events: int, flag_at: int | None) -> SessionSummary:
    meta = Meta(session_id=sid, first_ts=T0, last_ts=T0 + timedelta(seconds=events), events=events)
    s = summarise(meta)
    if flag_at is None:
        return s
    t = T0 + timedelta(seconds=flag_at)
    return SessionSummary(**{**{f: getattr(s, f) for f in s.__struct_fields__},
                             "first_flag_ts": t, "last_flag_ts": t})  # fmt: skip


summaries = st.lists(
    st.builds(
        _summary,
        st.sampled_from("abc"),
        st.integers(0, 50),
        st.one_of(st.none(), st.integers(0, 50)),
    ),
    max_size=20,
)


@given(summaries)
def test_merge_keeps_one_latest_summary_per_session_with_widened_flag_times(
    items: list[SessionSummary],
) -> None:
    merged = {s.session_id: s for s in merge(items)}
    assert len(merged) == len(merge(items)) == len({s.session_id for s in items})
    for sid, m in merged.items():
        mine = [s for s in items if s.session_id == sid]
        assert m.events == max(s.events for s in mine)
        firsts = [s.first_flag_ts for s in mine if s.first_flag_ts is not None]
        assert m.first_flag_ts == (min(firsts) if firsts else None)
        lasts = [s.last_flag_ts for s in mine if s.last_flag_ts is not None]
        assert m.last_flag_ts == (max(lasts) if lasts else None)


def test_summary_round_trips_and_restores_the_counters() -> None:
    meta = Meta(session_id="s", first_ts=T0, last_ts=T0, max_turn=9, events=10, tool_calls=4,
                compactions=2, repeat_flags=1, compactor="c1", attrs={"agent": "x"})  # fmt: skip
    [value] = encode([summarise(meta)])
    [summary] = decode(value)
    back = summary.to_meta()
    for field in ("session_id", "max_turn", "events", "tool_calls", "compactions",
                  "repeat_flags", "compactor", "attrs"):  # fmt: skip
        assert getattr(back, field) == getattr(meta, field)


@given(summaries)
def test_summaries_travel_in_arrays_of_bounded_size_and_come_back_in_order(
    items: list[SessionSummary],
) -> None:
    many = items * 30  # up to 600: several records
    values = encode(many)
    assert len(values) == -(-len(many) // SUMMARIES_PER_RECORD)
    assert [s for v in values for s in decode(v)] == many


@given(st.lists(st.integers(0, 300_000), min_size=1, max_size=12))
def test_records_stay_under_the_byte_bound_unless_one_summary_is_larger(sizes: list[int]) -> None:
    """A producer may send long attribute values; a record never grows past RECORD_BYTES by
    packing, and nothing is lost or reordered."""
    many = [
        msgspec.structs.replace(_summary(f"s{i}", 1, None), compactor="c" * n)
        for i, n in enumerate(sizes)
    ]
    values = encode(many)
    assert [s for v in values for s in decode(v)] == many
    for v in values:
        assert len(v) <= RECORD_BYTES or len(decode(v)) == 1


def test_a_single_summary_object_from_an_older_worker_still_decodes() -> None:
    s = _summary("a", 3, 1)
    assert decode(msgspec.json.encode(s)) == [s]
