"""Secrets never reach evidence; ordinary text passes untouched."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.detect import DetectConfig, detect_all
from monitor.detect.redact import _PATTERNS, MASK, redact
from monitor.events import Compaction, Event, Tool

SECRETS = [
    ("Authorization: Bearer abcdef1234567890xyz", "abcdef1234567890xyz"),
    ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234567890", "abcdefghijklmnop1234567890"),
    ('{"password": "hunter22", "user": "bob"}', "hunter22"),
    ("psql postgresql://bob:s3cr3tpw@db:5432/x", "s3cr3tpw"),
    (
        "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.example",
        "abcdefghijklmnopqrstuvwxyz0123",
    ),
    ("aws_access_key_id AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    ("token=abc123def", "abc123def"),
    ("slack xoxb-1234567890-abcdefghij", "1234567890-abcdefghij"),
    ("stripe sk_live_abcdefghijklmnop1234", "abcdefghijklmnop1234"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_X",
        "dozjgNryP4J3",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA",
    ),
    ("--client-secret=Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4"),
]
PLAIN = [
    "Read /repo/auth/tokens.py",
    "keep the passwords module under 40 lines",
    "Never push to main; run pytest -q tests/auth first.",
    '{"file_path": "/repo/billing/models.py", "offset": 10}',
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_are_masked(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert MASK in out


@pytest.mark.parametrize("text", PLAIN)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text


_PIECES = st.sampled_from([t for t, _ in SECRETS] + PLAIN + ["sk-", "://a:", "Bearer ", "eyJ"])


def _every_pattern(text: str) -> str:
    for pattern, keep, _ in _PATTERNS:
        text = pattern.sub(lambda m, k=keep: m.group(k) + MASK if k else MASK, text)  # type: ignore[misc]
    return text


@given(st.lists(st.one_of(st.text(max_size=30), _PIECES), max_size=6).map("".join))
def test_skipping_patterns_by_their_needles_changes_nothing(text: str) -> None:
    """``redact`` runs only the patterns whose needles the text holds; the result is what
    running every pattern gives."""
    assert redact(text) == _every_pattern(text)


@pytest.mark.parametrize(
    "text", ["\u017fecret=abcdef12", "Authorization: BAS\u0130C abcdef1234567890"]
)
def test_non_ascii_text_is_not_prescreened(text: str) -> None:
    assert redact(text) == _every_pattern(text) != text


@given(st.text(max_size=200))
def test_redaction_is_idempotent_and_never_crashes(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


def test_evidence_is_redacted_and_fingerprints_are_not() -> None:
    t = datetime(2026, 12, 1, tzinfo=UTC)

    def call(i: int, turn: int, key: str) -> Event:
        args = {"command": f"curl -H 'Authorization: Bearer {key}' https://api"}
        return Event(
            event_id=f"e{i}",
            session_id="s",
            turn=turn,
            ts=t,
            kind="tool_call",
            tool=Tool("Bash", args),
        )

    events = [
        call(0, 1, "a" * 24),
        call(1, 1, "b" * 24),
        Event(
            event_id="c", session_id="s", turn=2, ts=t, kind="compaction", compaction=Compaction()
        ),
        call(2, 3, "a" * 24),
    ]
    [flag] = detect_all(events)  # only the call with the same key repeats
    assert "a" * 24 not in flag.evidence["arguments"] and MASK in flag.evidence["arguments"]
    [raw] = detect_all(events, DetectConfig(redact=False))
    assert "a" * 24 in raw.evidence["arguments"]
