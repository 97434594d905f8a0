"""The topics the worker reads and writes, all raw bytes (decoding is ``monitor.events``'s job).

The worker declares them (``internal=True`` makes Faust create any that are missing, with the
configured partition count); ``ensure_topics`` does the same for producers that may run first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from monitor.config import Settings

if TYPE_CHECKING:
    import faust


class Topics(NamedTuple):
    input: Any
    flags: Any
    sessions: Any
    deadletter: Any


def sessions_topic_name(settings: Settings) -> str:
    """Session summaries travel beside the flags, on ``<flags_topic>-sessions``."""
    return f"{settings.flags_topic}-sessions"


def plain_topic(app: faust.App, settings: Settings, name: str) -> Any:
    """A raw-bytes topic the worker creates if missing, with the configured partitions."""
    return app.topic(
        name,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.partitions,
        internal=True,
    )


def declare(app: faust.App, settings: Settings) -> Topics:
    def topic(name: str) -> Any:
        return plain_topic(app, settings, name)

    return Topics(
        input=topic(settings.input_topic),
        flags=topic(settings.flags_topic),
        sessions=topic(sessions_topic_name(settings)),
        deadletter=topic(settings.deadletter_topic),
    )


def ensure_topics(settings: Settings, names: list[str], timeout_s: float = 30.0) -> list[str]:
    """Create the topics in ``names`` that do not exist yet; return those created.

    Partition counts must match the worker's (its tables are co-partitioned with the input
    topic), so producers create the input topic themselves rather than rely on auto-creation.
    """
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    from monitor.stream.kafka import kafka_python_config

    admin = KafkaAdminClient(
        **kafka_python_config(settings), request_timeout_ms=int(timeout_s * 1000)
    )
    try:
        existing = set(admin.list_topics())
        missing = [n for n in names if n not in existing]
        created: list[str] = []
        for name in missing:
            try:
                admin.create_topics(
                    [
                        NewTopic(
                            name,
                            num_partitions=settings.partitions,
                            replication_factor=settings.replication,
                        )
                    ]
                )
                created.append(name)
            except TopicAlreadyExistsError:
                pass
        return created
    finally:
        admin.close()
