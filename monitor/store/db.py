"""Engines and migrations. Built at the entrypoint from configuration, then passed down."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from alembic.config import Config

DEFAULT_URL = "sqlite:///monitor.db"
#: Seconds a Postgres connection attempt may take.
CONNECT_TIMEOUT_S = 10


#: The migrations ship inside the package (``monitor/store/migrations``), so an installed wheel
#: finds them where a checkout does; Alembic resolves ``package:directory`` itself.
SCRIPT_LOCATION = "monitor.store:migrations"


def normalise_url(url: str) -> str:
    """Accept plain ``postgresql://`` URLs and use the psycopg 3 driver for them."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str = DEFAULT_URL) -> Engine:
    url = normalise_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(conn, _record):  # type: ignore[no-untyped-def]
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    # A bounded connect: an unreachable host fails in seconds, not after the OS's TCP timeout.
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=5,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
    )


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    cfg.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    cfg.attributes["explicit_url"] = True
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` (``monitor db upgrade``)."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def create_sqlite(engine: Engine) -> None:
    """Build the current schema in the new, empty SQLite database ``engine`` is on: from the
    statements in ``monitor.store.schema``, not by running (and importing) the migrations.
    A failure is raised as SQLAlchemy would raise it, so it reads as a migration's would."""
    import sqlite3

    from sqlalchemy.exc import DBAPIError

    from monitor.store import schema

    with engine.connect() as connection:
        try:
            schema.create(cast(sqlite3.Connection, connection.connection.driver_connection))
        except sqlite3.Error as exc:
            raise DBAPIError.instance(None, None, exc, sqlite3.Error) from exc


def revisions(engine: Engine) -> tuple[frozenset[str], frozenset[str]]:
    """(the revisions the database is at, the head revisions this package ships). The first is
    empty for a database the migrations never ran on."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_heads()
    return frozenset(current), frozenset(heads)
