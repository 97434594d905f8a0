"""The worker under abuse: the nasty corpus and seeded mutations of valid records, mixed into a
stream of good events. Every bad record (or batch element) lands in the dead-letter topic with a
reason and its source, every good event is processed (the store equals a replay of the good
events alone), and the worker never stops."""

from __future__ import annotations

import random
import re
import urllib.request
from collections import Counter
from typing import Any

import pytest
from kafka import KafkaProducer

from monitor.events import BadEvent, decode_record, encode
from monitor.stream.deadletter import HEADER_DETAIL, HEADER_REASON, HEADER_SOURCE
from monitor.stream.topics import ensure_topics
from monitor.testing import free_port, generate_events, read_topic

from ..stream.conftest import Rig, expected, rig
from .conftest import NASTY

__all__ = ["rig"]

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.slow]

#: Corpus records whose decoding yields more items than this are left out of the worker run (a
#: 200,000-element array would publish 200,000 dead letters; the decoder tests cover it).
MAX_ITEMS = 50
MUTANTS = 300


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random byte-level mutation: flip, delete, insert, truncate or splice junk."""
    i = rng.randrange(len(data))
    match rng.randrange(5):
        case 0:
            return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
        case 1:
            return data[:i] + data[i + rng.randint(1, 8) :]
        case 2:
            return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 4))) + data[i:]
        case 3:
            return data[:i]
        case _:
            return data[:i] + rng.choice([b"NaN", b"\xff", b'"', b"{", b"]", b"\x00"]) + data[i:]


def bad_records(good: list[Any], seed: int) -> list[tuple[bytes, bytes]]:
    """(key, value) pairs that decode to nothing but ``BadEvent``s."""
    rng = random.Random(seed)
    out = [(name.encode(), data) for name, data in NASTY if len(decode_record(data)) <= MAX_ITEMS]
    while len(out) < len(NASTY) + MUTANTS:
        event = rng.choice(good)
        value = mutate(encode(event), rng)
        results = decode_record(value)
        if results and all(isinstance(r, BadEvent) for r in results):
            out.append((event.session_id.encode(), value))
    return out


def test_every_bad_record_is_dead_lettered_and_every_good_one_processed(rig: Rig) -> None:
    good = generate_events(100, seed=61)
    bad = bad_records(good, seed=61)
    want_reasons = Counter(
        r.reason for _, value in bad for r in decode_record(value) if isinstance(r, BadEvent)
    )
    want_flags, want_sessions = expected(good, rig.settings)
    port = free_port()
    rig.overrides.update(web_port=str(port), web_host="127.0.0.1")
    settings = rig.settings
    ensure_topics(settings, [settings.input_topic])
    producer = KafkaProducer(bootstrap_servers=rig.bootstrap, max_request_size=16 << 20)
    rig.start()
    rng = random.Random(62)
    queue = [(e.session_id.encode(), encode(e)) for e in good]
    for key, value in bad:  # bad records land at random points between the good ones
        queue.insert(rng.randrange(len(queue) + 1), (key, value))
    for key, value in queue:
        producer.send(settings.input_topic, key=key, value=value)
    producer.flush()
    producer.close()

    rig.wait_for(want_flags, want_sessions, timeout_s=90)
    total = sum(want_reasons.values())
    letters = read_topic(rig.bootstrap, settings.deadletter_topic, total, timeout_s=60,
                         then_poll_ms=1000, max_partition_fetch_bytes=4 << 20)  # fmt: skip
    assert len(letters) == total
    got = Counter(dict(m.headers)[HEADER_REASON].decode() for m in letters)
    assert got == want_reasons
    for m in letters:
        headers = dict(m.headers)
        assert headers[HEADER_DETAIL] and headers[HEADER_SOURCE].startswith(
            settings.input_topic.encode()
        )
    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    counted = dict(re.findall(r'^compaction_monitor_dead_letters_total\{reason="(\w+)"\} (\S+)$',
                              page, re.MULTILINE))  # fmt: skip
    assert {k: int(float(v)) for k, v in counted.items() if float(v)} == dict(want_reasons)
    assert rig.procs[0].poll() is None
    print(f"\n{len(good)} good events, {len(bad)} bad records, {total} dead letters {dict(got)}")
