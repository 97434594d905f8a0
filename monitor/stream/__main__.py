"""``python -m monitor.stream``: the worker, configured from ``MONITOR_*`` (``monitor worker``)."""

from monitor.config import load_settings
from monitor.stream.app import run_worker

run_worker(load_settings())
