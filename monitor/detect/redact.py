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

#: (pattern, group to keep before the mask). Ordered: specific token shapes first.
_PATTERNS: Final[tuple[tuple[re.Pattern[str], int], ...]] = (
    # PEM private keys
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
        ),
        0,
    ),
    # provider key shapes: OpenAI/Anthropic-style sk-, GitHub, Slack, AWS, Google, Stripe
    (re.compile(r"\b((?:sk|rk|pk)-(?:[a-z]+-)?)[A-Za-z0-9_\-]{16,}"), 1),
    (re.compile(r"\b(gh[pousr]_)[A-Za-z0-9]{20,}"), 1),
    (re.compile(r"\b(github_pat_)[A-Za-z0-9_]{20,}"), 1),
    (re.compile(r"\b(xox[abposr]-)[A-Za-z0-9\-]{10,}"), 1),
    (re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"), 1),
    (re.compile(r"\b(AIza)[A-Za-z0-9_\-]{30,}"), 1),
    (re.compile(r"\b((?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{16,}"), 1),
    # JSON Web Tokens
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0),
    # Authorization headers
    (re.compile(r"(?i)\b((?:bearer|basic|token)\s+)[A-Za-z0-9._~+/\-]{12,}=*"), 1),
    # credentials in URLs: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?=@)"), 1),
    # key = value / "key": "value" for secret-sounding keys
    (
        re.compile(
            r"(?i)((?:api[_\-]?key|secret|token|passw(?:or)?d|pwd|access[_\-]?key|private[_\-]?key"
            r"|client[_\-]?secret|auth)[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}&]{4,})"
        ),
        1,
    ),
)


def redact(text: str) -> str:
    """``text`` with every secret-looking span replaced by ``[REDACTED]``."""
    for pattern, keep in _PATTERNS:
        if keep:
            text = pattern.sub(lambda m, k=keep: m.group(k) + MASK, text)  # type: ignore[misc]
        else:
            text = pattern.sub(MASK, text)
    return text
