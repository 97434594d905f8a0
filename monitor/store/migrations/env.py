"""Alembic environment: the models' metadata is the target; the URL comes from the caller."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import engine_from_config, pool

from monitor.store import models
from monitor.store.db import normalise_url

config = context.config
target_metadata = models.Base.metadata

# `monitor db upgrade` passes its URL explicitly;
# a hand-run `alembic upgrade` honours MONITOR_DB_URL.
url = os.environ.get("MONITOR_DB_URL")
if url and not config.attributes.get("explicit_url"):
    config.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with connectable.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            compare_type=True,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
