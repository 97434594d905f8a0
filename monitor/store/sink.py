"""Batching sink for the offline shell: buffer flags, write each batch in one transaction."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from monitor.detect.session import Meta
from monitor.flags import Flag
from monitor.store.writes import upsert_sessions, write_flags


class StoreSink:
    """``add`` buffers; a full buffer, ``flush`` or ``close`` writes it (idempotently)."""

    def __init__(self, maker: sessionmaker[Session], batch: int = 1000) -> None:
        self._maker = maker
        self._batch = batch
        self._buffer: list[Flag] = []
        self.inserted = 0

    def add(self, flags: Iterable[Flag]) -> None:
        self._buffer.extend(flags)
        if len(self._buffer) >= self._batch:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        with self._maker.begin() as session:
            self.inserted += write_flags(session, self._buffer)
        self._buffer.clear()

    def close(
        self,
        metas: Iterable[Meta],
        flag_times: dict[str, tuple[datetime, datetime]],
        sources: dict[str, list[dict[str, Any]]] | None = None,
        items: dict[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        """Write what is buffered, then the sessions' counters (input spans, ledger items)."""
        self.flush()
        with self._maker.begin() as session:
            upsert_sessions(session, list(metas), flag_times, sources, items)
