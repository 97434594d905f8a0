"""Reviewer tokens, session cookies and CSRF tokens."""

from __future__ import annotations

import pytest

from monitor.review.auth import Sessions, parse_tokens


def test_tokens_name_their_reviewers() -> None:
    r = parse_tokens(" alice:s3cret-token-0123456789 , bob:other-token-abcdefghij ,")
    assert r.names == ("alice", "bob")
    assert r.who("s3cret-token-0123456789") == "alice"
    assert r.who("other-token-abcdefghij") == "bob"
    assert r.who("s3cret-token-012345678") is None
    assert r.who("") is None and r.who(None) is None
    assert r.weak == ()
    assert parse_tokens("alice:SECRET").weak == ("alice",)
    assert parse_tokens("").names == ()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alice", "entry 1 is not NAME:TOKEN"),
        ("alice:", "entry 1 is not NAME:TOKEN"),
        ("bob:x,al ice:y", "entry 2: 'al ice' is not a reviewer name"),
        ("alice:x,alice:y", "alice is listed twice"),
        ("alice:x,bob:x", "bob shares a token"),
    ],
)
def test_bad_token_lists_are_refused_without_showing_a_token(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        parse_tokens(spec)
    assert ":x" not in str(err.value) and ":y" not in str(err.value)


def test_a_session_cookie_verifies_until_it_expires() -> None:
    now = [1000.0]
    reviewers = parse_tokens("alice:a-long-enough-token,bob:b-long-enough-token")
    sessions = Sessions(reviewers, lifetime_s=60, clock=lambda: now[0])
    cookie = sessions.issue("alice")
    login = sessions.verify(cookie)
    assert login is not None and login.reviewer == "alice"
    now[0] += 61
    assert sessions.verify(cookie) is None


def test_a_tampered_or_foreign_cookie_is_refused() -> None:
    reviewers = parse_tokens("alice:a-long-enough-token,bob:b-long-enough-token")
    sessions = Sessions(reviewers)
    cookie = sessions.issue("alice")
    name, expires, nonce, mac = cookie.split(".")
    bob = sessions.issue("bob").split(".")[0]
    assert sessions.verify(".".join((bob, expires, nonce, mac))) is None
    assert sessions.verify(".".join((name, str(int(expires) + 999), nonce, mac))) is None
    assert sessions.verify(cookie + "x") is None
    assert sessions.verify("garbage") is None and sessions.verify(None) is None
    assert Sessions(reviewers).verify(cookie) is None  # another server's key (a restart)
    gone = Sessions(parse_tokens("bob:b-long-enough-token"), key=b"k" * 32)
    assert gone.verify(Sessions(reviewers, key=b"k" * 32).issue("alice")) is None  # removed


def test_csrf_tokens_belong_to_one_session() -> None:
    sessions = Sessions(parse_tokens("alice:a-long-enough-token"))
    one = sessions.verify(sessions.issue("alice"))
    two = sessions.verify(sessions.issue("alice"))
    assert one is not None and two is not None
    assert sessions.check_csrf(one, sessions.csrf(one))
    assert not sessions.check_csrf(one, sessions.csrf(two))
    assert not sessions.check_csrf(one, None) and not sessions.check_csrf(one, "")
