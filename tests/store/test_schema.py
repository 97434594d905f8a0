"""The SQLite schema a new file is built from is the one the migrations build."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monitor.store import schema
from monitor.store.db import create_sqlite, make_engine, revisions, upgrade


def _dump(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        dump = list(connection.iterdump())
    connection.close()
    return dump


def test_the_statements_are_what_the_migrations_build(tmp_path: Path) -> None:
    head, statements = schema.migrated_statements(str(tmp_path / "migrated.db"))
    # On a mismatch (a new migration): `python -m monitor.store.schema` prints the constants.
    assert (head, statements) == (schema.HEAD, schema.STATEMENTS)


def test_a_new_file_holds_what_the_migrations_build_and_is_at_their_head(tmp_path: Path) -> None:
    upgrade(f"sqlite:///{tmp_path / 'migrated.db'}")
    engine = make_engine(f"sqlite:///{tmp_path / 'new.db'}")
    create_sqlite(engine)
    assert _dump(tmp_path / "new.db") == _dump(tmp_path / "migrated.db")
    current, heads = revisions(engine)
    assert current == heads == {schema.HEAD}
    engine.dispose()
    upgrade(f"sqlite:///{tmp_path / 'new.db'}")  # later migrations start from it
    assert _dump(tmp_path / "new.db") == _dump(tmp_path / "migrated.db")
