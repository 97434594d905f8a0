"""``--since`` values: an ISO date or time, or a duration back from now (``24h``, ``7d``).

Pure: the caller passes ``now``. A date or a time without an offset means UTC, the time zone
the store keeps every time in.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Final

_DURATION: Final = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
#: Shown in help and in the error for a value that is neither.
SINCE_FORMS: Final = "an ISO date or time (2026-12-01, 2026-12-01T09:30Z) or a duration (24h, 7d)"


def parse_since(text: str, now: datetime) -> datetime:
    """The aware time ``text`` names; ``ValueError`` (saying what is accepted) otherwise."""
    found = _DURATION.match(text)
    if found:
        amount, unit = int(found.group(1)), found.group(2).lower()
        try:
            return now - timedelta(**{_UNITS[unit]: amount})
        except OverflowError:
            raise ValueError(f"the duration {text!r} reaches before year 1") from None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"expected {SINCE_FORMS}, not {text!r}") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
