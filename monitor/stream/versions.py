"""The Faust versions the worker runs on, checked before it starts.

The worker's at-least-once guarantee rests on overriding private members of Faust's consumer and
app (``transport.py``: ``_commit_tps``, ``_committed_offset``, ``_acked_index``, ``flow_control``
...). A Faust release may rename or change them without notice, and the failure would be silent
(records committed unprocessed), so the worker refuses a version outside the range its tests
pass on instead of running on it. ``pyproject.toml`` declares the same range (a test keeps the
two equal); widening it means running the stream and fault tests on the new version first.
"""

from __future__ import annotations

from importlib import metadata
from typing import Final

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

DISTRIBUTION: Final = "faust-streaming"
#: The releases the stream tests pass on.
SUPPORTED: Final = SpecifierSet(">=0.15.3,<0.16")


class UnsupportedVersion(RuntimeError):
    """The installed Faust is outside ``SUPPORTED`` (or not installed at all)."""


def check_faust(installed: str | None = None) -> str:
    """Return the installed faust-streaming version; raise ``UnsupportedVersion`` naming the
    supported range when it is outside it. ``installed`` overrides the lookup (tests)."""
    try:
        found = installed if installed is not None else metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise UnsupportedVersion(
            f"{DISTRIBUTION} is not installed; the worker needs {DISTRIBUTION}{SUPPORTED}"
        ) from None
    try:
        ok = Version(found) in SUPPORTED
    except InvalidVersion:
        ok = False
    if not ok:
        raise UnsupportedVersion(
            f"{DISTRIBUTION} {found} is installed, but the worker runs only on "
            f"{DISTRIBUTION}{SUPPORTED} (it relies on Faust internals); install it with "
            f"pip install '{DISTRIBUTION}{SUPPORTED}'"
        )
    return found
