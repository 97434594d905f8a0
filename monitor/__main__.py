"""``python -m monitor`` is ``monitor``."""

from monitor.cli import main

raise SystemExit(main())
