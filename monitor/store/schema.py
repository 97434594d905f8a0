"""The schema the migrations build in SQLite, as the statements that build it at once.

A new SQLite file (the embedded default, which ``monitor replay`` creates) is made from these
in one transaction, with no Alembic import and no migration run: both were a fifth of a
replay of the examples. Any file that exists already is brought up to date by the migrations,
which stay the one definition of the schema: ``tests/store/test_schema.py`` checks that these
statements build what they build. After adding a migration, regenerate them with
``python -m monitor.store.schema`` (it prints this module's new constants).
"""

from __future__ import annotations

import sqlite3
import sys
from typing import Final

#: The revision the statements build (the migrations' head).
HEAD: Final = "f22a0c0de006"

#: ``sqlite3.Connection.iterdump()`` of a file the migrations built, less its BEGIN/COMMIT.
STATEMENTS: Final[tuple[str, ...]] = (
    (
        "CREATE TABLE alembic_version (\n"
        "\tversion_num VARCHAR(32) NOT NULL, \n"
        "\tCONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)\n"
        ");"
    ),
    ("INSERT INTO \"alembic_version\" VALUES('f22a0c0de006');"),
    (
        "CREATE TABLE flags (\n"
        "\tid INTEGER NOT NULL, \n"
        "\tsession_id VARCHAR(256) NOT NULL, \n"
        "\tsignal VARCHAR(32) NOT NULL, \n"
        "\tturn BIGINT NOT NULL, \n"
        "\toriginal_turn BIGINT NOT NULL, \n"
        "\tcompaction_turn BIGINT, \n"
        '\t"key" VARCHAR(64) NOT NULL, \n'
        "\tevent_id VARCHAR(256) NOT NULL, \n"
        "\tts DATETIME NOT NULL, \n"
        "\tcompactor VARCHAR(128), \n"
        "\tevidence JSON NOT NULL, \n"
        "\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, source JSON, \n"
        "\tCONSTRAINT pk_flags PRIMARY KEY (id), \n"
        "\tCONSTRAINT uq_flags_session_id_signal_turn_key UNIQUE (session_id, signal, "
        'turn, "key")\n'
        ");"
    ),
    (
        "CREATE TABLE intake_actions (\n"
        "\tid INTEGER NOT NULL, \n"
        "\titem_id INTEGER NOT NULL, \n"
        "\treviewer VARCHAR(128) NOT NULL, \n"
        "\taction VARCHAR(16) NOT NULL, \n"
        "\tentry_id VARCHAR(128), \n"
        "\tdetail JSON NOT NULL, \n"
        "\toverride BOOLEAN NOT NULL, \n"
        "\tat DATETIME NOT NULL, \n"
        "\tCONSTRAINT pk_intake_actions PRIMARY KEY (id)\n"
        ");"
    ),
    (
        "CREATE TABLE intake_items (\n"
        "\tid INTEGER NOT NULL, \n"
        "\tweek VARCHAR(10) NOT NULL, \n"
        "\tsession_id VARCHAR(256) NOT NULL, \n"
        "\tscore FLOAT NOT NULL, \n"
        "\treason JSON NOT NULL, \n"
        "\tstatus VARCHAR(16) NOT NULL, \n"
        "\tclaimed_by VARCHAR(128), \n"
        "\tclaimed_at DATETIME, \n"
        "\tresolved_by VARCHAR(128), \n"
        "\tresolved_at DATETIME, \n"
        "\tnote TEXT, \n"
        "\tdraft JSON, \n"
        "\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, history JSON, \n"
        "\tCONSTRAINT pk_intake_items PRIMARY KEY (id), \n"
        "\tCONSTRAINT uq_intake_items_session_id UNIQUE (session_id)\n"
        ");"
    ),
    (
        "CREATE TABLE intake_transcripts (\n"
        "\titem_id INTEGER NOT NULL, \n"
        "\tsession_id VARCHAR(256) NOT NULL, \n"
        "\tstatus VARCHAR(16) NOT NULL, \n"
        "\tevents JSON NOT NULL, \n"
        "\tomitted INTEGER NOT NULL, \n"
        "\tsources JSON, \n"
        "\tnotes JSON NOT NULL, \n"
        "\tcaptured_at DATETIME NOT NULL, \n"
        "\tCONSTRAINT pk_intake_transcripts PRIMARY KEY (item_id)\n"
        ");"
    ),
    (
        "CREATE TABLE sessions (\n"
        "\tsession_id VARCHAR(256) NOT NULL, \n"
        "\tfirst_seen DATETIME NOT NULL, \n"
        "\tlast_seen DATETIME NOT NULL, \n"
        "\tfirst_flagged_at DATETIME, \n"
        "\tlast_flagged_at DATETIME, \n"
        "\tturns INTEGER NOT NULL, \n"
        "\tevents INTEGER NOT NULL, \n"
        "\ttool_calls INTEGER NOT NULL, \n"
        "\tuser_messages INTEGER NOT NULL, \n"
        "\tcompactions INTEGER NOT NULL, \n"
        "\trepeat_flags INTEGER NOT NULL, \n"
        "\trestate_flags INTEGER NOT NULL, \n"
        "\tincident BOOLEAN NOT NULL, \n"
        "\tcompactor VARCHAR(128), \n"
        "\tagent VARCHAR(128), \n"
        "\tattrs JSON NOT NULL, \n"
        "\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, sources JSON, "
        "restate_spanning INTEGER DEFAULT '0' NOT NULL, "
        "retries INTEGER DEFAULT '0' NOT NULL, "
        "dropped_flags INTEGER DEFAULT '0' NOT NULL, "
        "inverted_flags INTEGER DEFAULT '0' NOT NULL, survival JSON, items JSON, "
        "compactions_by JSON, \n"
        "\tCONSTRAINT pk_sessions PRIMARY KEY (session_id)\n"
        ");"
    ),
    ("CREATE INDEX ix_flags_signal_ts ON flags (signal, ts);"),
    ("CREATE INDEX ix_flags_ts ON flags (ts);"),
    ("CREATE INDEX ix_intake_items_status_id ON intake_items (status, id);"),
    ("CREATE INDEX ix_intake_items_week ON intake_items (week);"),
    ("CREATE INDEX ix_sessions_first_flagged_at ON sessions (first_flagged_at);"),
    ("CREATE INDEX ix_sessions_last_flagged_at ON sessions (last_flagged_at);"),
    ("CREATE INDEX ix_intake_actions_item_id_id ON intake_actions (item_id, id);"),
)


def create(connection: sqlite3.Connection) -> None:
    """Build the schema in an empty database, all or nothing."""
    connection.executescript("BEGIN;\n" + "\n".join(STATEMENTS) + "\nCOMMIT;")


def migrated_statements(path: str) -> tuple[str, tuple[str, ...]]:
    """(head revision, the dump's statements) of a new file at ``path`` the migrations built."""
    from monitor.store.db import make_engine, revisions, upgrade

    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    try:
        _, heads = revisions(engine)
    finally:
        engine.dispose()
    (head,) = heads
    with sqlite3.connect(path) as connection:
        dump = [s for s in connection.iterdump() if s not in ("BEGIN TRANSACTION;", "COMMIT;")]
    connection.close()
    return head, tuple(dump)


def _literal(statement: str, width: int = 76) -> str:
    """``statement`` as adjacent string literals, one per line of SQL (long ones cut after a
    comma), so the generated constants read as the SQL does."""
    pieces: list[str] = []
    lines = statement.split("\n")
    for n, line in enumerate(lines):
        line += "\n" if n < len(lines) - 1 else ""
        while len(line) > width:
            cut = line.rfind(", ", 0, width) + 2
            cut = cut if cut > 2 else width
            pieces.append(line[:cut])
            line = line[cut:]
        if line:
            pieces.append(line)
    return "\n".join(f"        {piece!r}" for piece in pieces)


if __name__ == "__main__":
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        head, statements = migrated_statements(str(Path(tmp) / "schema.db"))
    sys.stdout.write(f"HEAD: Final = {head!r}\n\n")
    sys.stdout.write("STATEMENTS: Final[tuple[str, ...]] = (\n")
    for statement in statements:
        sys.stdout.write(f"    (\n{_literal(statement)}\n    ),\n")
    sys.stdout.write(")\n")
