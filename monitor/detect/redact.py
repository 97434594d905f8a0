"""Secret redaction for evidence: what is stored, exported and shown must not leak credentials.

Evidence quotes tool arguments and user sentences, which can hold API keys, tokens and passwords.
Fingerprints are computed on the real arguments first (redaction must not merge different
calls); only the excerpts that leave the core pass through ``redact``. Patterns cover the common
forms; each match keeps a short recognisable prefix so a reviewer can tell what kind it was.
"""

from __future__ import annotations

import re
from typing import Final

MASK: Final = "[REDACTED]"

#: (pattern, group to keep before the mask, needles). Ordered: specific token shapes first.
#: A pattern can only match a text whose lower-case form holds one of its needles: a few
#: substring tests rule out most patterns for most texts (the key=value pattern alone costs
#: ~13 us to search a 100-character sentence).
_PATTERNS: Final[tuple[tuple[re.Pattern[str], int, tuple[str, ...]], ...]] = (
    # PEM private keys
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
        ),
        0,
        ("-----begin",),
    ),
    # provider key shapes: OpenAI/Anthropic-style sk-, GitHub, Slack, AWS, Google, Stripe
    (re.compile(r"\b((?:sk|rk|pk)-(?:[a-z]+-)?)[A-Za-z0-9_\-]{16,}"), 1, ("sk-", "rk-", "pk-")),
    (re.compile(r"\b(gh[pousr]_)[A-Za-z0-9]{20,}"), 1, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (re.compile(r"\b(github_pat_)[A-Za-z0-9_]{20,}"), 1, ("github_pat_",)),
    (re.compile(r"\b(xox[abposr]-)[A-Za-z0-9\-]{10,}"), 1, ("xox",)),
    (re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"), 1, ("akia", "asia")),
    (re.compile(r"\b(AIza)[A-Za-z0-9_\-]{30,}"), 1, ("aiza",)),
    (re.compile(r"\b((?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{16,}"), 1, ("_live_", "_test_")),
    # JSON Web Tokens
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0, ("eyj",)),
    # Authorization headers
    (
        re.compile(r"(?i)\b((?:bearer|basic|token)\s+)[A-Za-z0-9._~+/\-]{12,}=*"),
        1,
        ("bearer", "basic", "token"),
    ),
    # credentials in URLs: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?=@)"), 1, ("://",)),
    # key = value / "key": "value" for secret-sounding keys
    (
        re.compile(
            r"(?i)((?:api[_\-]?key|secret|token|passw(?:or)?d|pwd|access[_\-]?key|private[_\-]?key"
            r"|client[_\-]?secret|auth)[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}&]{4,})"
        ),
        1,
        ("key", "secret", "token", "passw", "pwd", "auth"),
    ),
)


def redact(text: str) -> str:
    """``text`` with every secret-looking span replaced by ``[REDACTED]``."""
    # Only ASCII text is pre-screened: case-insensitive patterns also match some non-ASCII
    # letters (the long s, U+017F, for "s") that lower() leaves alone.
    low = text.lower() if text.isascii() else None
    for pattern, keep, needles in _PATTERNS:
        if low is not None:
            for needle in needles:
                if needle in low:
                    break
            else:
                continue  # (a loop, not any(): this runs for every excerpt)
        if keep:
            text = pattern.sub(lambda m, k=keep: m.group(k) + MASK, text)  # type: ignore[misc]
        else:
            text = pattern.sub(MASK, text)
    return text
