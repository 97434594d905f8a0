"""``python -m monitor`` is ``monitor``."""

from monitor.cli import main

if __name__ == "__main__":  # the worker's sink process re-imports this module as ``__mp_main__``
    raise SystemExit(main())
