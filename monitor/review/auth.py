"""Who is asking: reviewer tokens, the browser's session cookie and its CSRF token.

Reviewers and their tokens come from configuration (``MONITOR_REVIEW_TOKENS="alice:T1,bob:T2"``
or ``review_tokens`` in the TOML file). Only SHA-256 digests of the tokens are kept, and every
comparison is constant-time over all of them, so neither timing nor a memory dump of the
running server gives a token away.

The browser logs in with its token once and gets a session cookie: reviewer, expiry and a
random nonce, signed with HMAC-SHA256 under a key made fresh when the server starts (so a
restart logs everyone out, and no key sits in a file). The CSRF token of a session is an HMAC of
its nonce under the same key: the page carries it, every write must send it back, and another
site can neither read it nor compute it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

#: A reviewer's name as recorded on every action.
NAME_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
#: Tokens shorter than this are accepted but warned about at start-up.
WEAK_TOKEN: Final = 16
SESSION_LIFETIME_S: Final = 12 * 3600.0


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


@dataclass(frozen=True)
class Reviewers:
    """Reviewer names by token digest."""

    by_digest: Mapping[bytes, str] = field(default_factory=dict)
    weak: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.by_digest.values()))

    def who(self, token: str | None) -> str | None:
        """The reviewer a token belongs to, or None; compares against every digest."""
        if not token:
            return None
        given = _digest(token)
        found = None
        for digest, name in self.by_digest.items():
            if hmac.compare_digest(given, digest):
                found = name
        return found

    def has(self, name: str) -> bool:
        return name in self.by_digest.values()


def parse_tokens(spec: str) -> Reviewers:
    """``alice:TOKEN,bob:TOKEN`` -> Reviewers. Raises ValueError naming the bad entry (by its
    position and reviewer name, never its token)."""
    by_digest: dict[bytes, str] = {}
    weak = []
    for position, item in enumerate((i.strip() for i in spec.split(",")), start=1):
        if not item:
            continue
        name, sep, token = item.partition(":")
        name, token = name.strip(), token.strip()
        if not sep or not token:
            raise ValueError(f"review token entry {position} is not NAME:TOKEN")
        if not NAME_RE.match(name):
            raise ValueError(f"review token entry {position}: {name!r} is not a reviewer name")
        if name in by_digest.values():
            raise ValueError(f"review token entry {position}: {name} is listed twice")
        digest = _digest(token)
        if digest in by_digest:
            raise ValueError(f"review token entry {position}: {name} shares a token")
        by_digest[digest] = name
        if len(token) < WEAK_TOKEN:
            weak.append(name)
    return Reviewers(by_digest, tuple(weak))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Login:
    """A verified browser session."""

    reviewer: str
    nonce: str
    expires: int


class Sessions:
    """Signs and checks session cookies and CSRF tokens (see the module docstring)."""

    def __init__(
        self,
        reviewers: Reviewers,
        *,
        key: bytes | None = None,
        lifetime_s: float = SESSION_LIFETIME_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._reviewers = reviewers
        self._key = key or secrets.token_bytes(32)
        self._lifetime = lifetime_s
        self._clock = clock

    def _mac(self, *parts: str) -> str:
        msg = "\x1f".join(parts).encode("utf-8")
        return _b64(hmac.new(self._key, msg, hashlib.sha256).digest())

    def issue(self, reviewer: str) -> str:
        expires = str(int(self._clock() + self._lifetime))
        nonce = _b64(secrets.token_bytes(16))
        name = _b64(reviewer.encode("utf-8"))
        return ".".join((name, expires, nonce, self._mac("session", name, expires, nonce)))

    def verify(self, value: str | None) -> Login | None:
        if not value or value.count(".") != 3:
            return None
        name, expires, nonce, mac = value.split(".")
        if not hmac.compare_digest(mac, self._mac("session", name, expires, nonce)):
            return None
        try:
            reviewer = _unb64(name).decode("utf-8")
            until = int(expires)
        except ValueError:
            return None
        if until < self._clock() or not self._reviewers.has(reviewer):
            return None
        return Login(reviewer, nonce, until)

    def csrf(self, login: Login) -> str:
        return self._mac("csrf", login.nonce)

    def check_csrf(self, login: Login, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(str(token), self.csrf(login))
