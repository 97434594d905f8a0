"""``python -m monitor.stream``: the worker, configured from ``MONITOR_*`` (``monitor worker``).

A refusal to start (an unsupported Faust, a database without the schema) is one line on stderr
and exit status 1, as from ``monitor worker``.
"""

import sys

from monitor.config import load_settings
from monitor.errors import Fatal
from monitor.stream.app import run_worker
from monitor.stream.versions import UnsupportedVersion

if __name__ == "__main__":  # the sink process re-imports this module as ``__mp_main__``
    try:
        run_worker(load_settings())
    except (Fatal, UnsupportedVersion) as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(1) from None
