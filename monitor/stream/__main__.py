"""``python -m monitor.stream``: the worker, configured from ``MONITOR_*`` (``monitor worker``)."""

from monitor.config import load_settings
from monitor.stream.app import run_worker

if __name__ == "__main__":  # the sink process re-imports this module as ``__mp_main__``
    run_worker(load_settings())
