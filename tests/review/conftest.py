"""Stores filled with review sessions (the HTTP helpers are in ``monitor.testing``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from monitor.review.auth import parse_tokens
from monitor.review.web import Config
from monitor.store.db import make_engine, make_sessionmaker
from monitor.testing import (
    fill_review_store,
    record_sources,
    review_session,
    write_events,
)

TOKENS = "alice:alice-token-0123456789,bob:bob-token-0123456789"


@dataclass
class Store:
    url: str
    maker: Any
    items: list[dict[str, Any]]

    def config(self, **kw: Any) -> Config:
        return Config(self.maker, parse_tokens(TOKENS), **kw)


@pytest.fixture(scope="module")
def review_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Three items of 2026-W48: ten candidates with a captured transcript, three with one, two
    whose source file was gone when it was sampled."""
    tmp = tmp_path_factory.mktemp("review")
    url = f"sqlite:///{tmp}/store.db"
    fill_review_store(
        url, tmp, [review_session("review-ten", 10, 300), review_session("review-three", 3, 60)]
    )
    from monitor.cli import main

    late = tmp / "late.jsonl"
    spans = write_events(late, review_session("review-gone", 2, 40))
    assert main(["replay", str(late), "--db", url, "--no-progress"]) == 0
    record_sources(url, spans)
    late.unlink()
    assert main(["sample", "--week", "2026-W48", "--db", url]) == 0
    engine = make_engine(url)
    from monitor.store.intake import list_items

    maker = make_sessionmaker(engine)
    with maker() as s:
        items = list_items(s, week="2026-W48")
    yield Store(url, maker, items)
    engine.dispose()


@pytest.fixture
def fresh_store(tmp_path: Path) -> Iterator[Store]:
    """A store of its own for tests that change items."""
    url = f"sqlite:///{tmp_path}/store.db"
    fill_review_store(
        url,
        tmp_path,
        [review_session("review-ten", 10, 300), review_session("review-three", 3, 60)],
    )
    engine = make_engine(url)
    from monitor.store.intake import list_items

    maker = make_sessionmaker(engine)
    with maker() as s:
        items = list_items(s, week="2026-W48")
    yield Store(url, maker, items)
    engine.dispose()
