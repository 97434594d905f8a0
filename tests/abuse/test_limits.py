"""The limits of schemas/README.md ("Limits"), each enforced where it is documented: the largest
event decoded, the argument bytes fingerprinted, the user text examined, the evidence copied."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from monitor.detect import DetectConfig, detect_all
from monitor.detect.canon import canonical
from monitor.events import (
    MAX_BATCH_BYTES,
    MAX_EVENT_BYTES,
    BadEvent,
    Compaction,
    Event,
    Tool,
    decode,
    decode_record,
    encode,
    encode_batch,
)

README = Path(__file__).resolve().parents[2] / "schemas" / "README.md"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
INSTRUCTION = "Run the linter before every commit."
RESTATED = "Like I said before, run the linter before every commit."


def ev(turn: int, kind: Any, sid: str = "s", **kw: Any) -> Event:
    return Event(f"{sid}-{turn}", sid, turn, T0 + timedelta(seconds=turn), kind, **kw)


def sized(n: int) -> bytes:
    """An encoded user message of exactly ``n`` bytes."""
    base = encode(ev(0, "user_message", text=""))
    data = encode(ev(0, "user_message", text="a" * (n - len(base))))
    assert len(data) == n
    return data


def test_the_limits_table_states_the_code_values() -> None:
    table = README.read_text().split("### Limits", 1)[1].split("\n## ", 1)[0]
    cfg = DetectConfig()
    assert MAX_EVENT_BYTES == 1024 * 1024 and "1 MiB" in table
    assert MAX_BATCH_BYTES == 8 * 1024 * 1024 and "8 MiB" in table
    assert cfg.max_argument_bytes == 64 * 1024 and "64 KiB" in table
    assert cfg.max_text_chars == 4000 and re.search(r"4,?000 characters", table)
    assert cfg.evidence_chars == 300 and "300 characters" in table


def test_largest_event_is_accepted_one_byte_more_is_oversized() -> None:
    assert decode(sized(MAX_EVENT_BYTES)).text is not None
    (bad,) = decode_record(sized(MAX_EVENT_BYTES + 1))
    assert isinstance(bad, BadEvent) and bad.reason == "oversized"


def test_a_batch_may_hold_events_up_to_the_event_limit_each() -> None:
    big = decode(sized(MAX_EVENT_BYTES))
    batch = encode_batch([big, ev(1, "incident")])
    assert len(batch) <= MAX_BATCH_BYTES
    assert [type(x) for x in decode_record(batch)] == [Event, Event]
    inside = b"[" + sized(MAX_EVENT_BYTES + 1) + b"," + encode(ev(1, "incident")) + b"]"
    out = decode_record(inside)
    assert isinstance(out[0], BadEvent) and out[0].reason == "oversized"
    assert isinstance(out[1], Event)


def _repeat(first: dict[str, Any], second: dict[str, Any], cfg: DetectConfig) -> bool:
    events = [
        ev(0, "tool_call", tool=Tool("Write", first)),
        ev(1, "compaction", compaction=Compaction()),
        ev(2, "tool_call", tool=Tool("Write", second)),
    ]
    return any(f.signal == "repeated_tool_call" for f in detect_all(events, cfg))


def test_arguments_are_fingerprinted_on_the_configured_prefix_plus_length() -> None:
    cfg = DetectConfig()
    limit = cfg.max_argument_bytes
    same_prefix = "p" * limit
    a = {"body": same_prefix + "A" * 100}
    b = {"body": same_prefix + "B" * 100}
    assert len(canonical(a)) == len(canonical(b)) > limit
    # Past the limit only the length counts: same prefix and length is one call ...
    assert _repeat(a, b, cfg)
    # ... a different length is another call, and so is a difference inside the prefix.
    assert not _repeat(a, {"body": same_prefix + "A" * 101}, cfg)
    assert not _repeat({"body": "X" + a["body"][1:]}, a, cfg)
    # Under a larger limit the tails are compared too: the limit is a setting, not a constant.
    assert not _repeat(a, b, DetectConfig(max_argument_bytes=2 * limit))


def _restated(padding: int, cfg: DetectConfig) -> bool:
    events = [
        ev(0, "user_message", text="ok. " * (padding // 4) + INSTRUCTION),
        ev(1, "user_message", text=RESTATED),
    ]
    return any(f.signal == "restated_instruction" for f in detect_all(events, cfg))


def test_only_the_first_max_text_chars_of_a_message_are_compared() -> None:
    cfg = DetectConfig()
    assert _restated(0, cfg)
    assert _restated(cfg.max_text_chars - len(INSTRUCTION) - 200, cfg)
    assert not _restated(cfg.max_text_chars + 10, cfg)
    assert _restated(cfg.max_text_chars + 10, DetectConfig(max_text_chars=3 * cfg.max_text_chars))


def test_evidence_is_cut_to_evidence_chars() -> None:
    cfg = DetectConfig()
    args = {"cmd": "y" * 10_000}
    events = [
        ev(0, "tool_call", tool=Tool("Bash", args)),
        ev(1, "compaction", compaction=Compaction()),
        ev(2, "tool_call", tool=Tool("Bash", args)),
    ]
    (flag,) = detect_all(events, cfg)
    texts = [v for v in flag.evidence.values() if isinstance(v, str)]
    assert max(len(t) for t in texts) <= cfg.evidence_chars + 1
    (flag,) = detect_all(events, DetectConfig(evidence_chars=50))
    assert max(len(v) for v in flag.evidence.values() if isinstance(v, str)) <= 51
