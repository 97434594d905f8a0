"""Persistence: flagged sessions, flags and the fixture-intake queue (SQLAlchemy 2).

One surface for both backends: Postgres in production, SQLite for the embedded default; the
difference is the URL. Functions take a ``Session`` and never open their own transaction.
"""
