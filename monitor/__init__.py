"""Compaction signal monitor: find agent sessions where context compaction lost something."""

__version__ = "0.1.0"
