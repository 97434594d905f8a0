"""Client settings shared by every Kafka client of the monitor (Faust, aiokafka, kafka-python).

One plain function per client maps ``Settings`` to keyword arguments, so the SASL/SSL handling
lives in one place and a secret is only revealed at the moment a client is built.
"""

from __future__ import annotations

import ssl
from typing import Any

from monitor.config import Secret, Settings


def bootstrap_servers(broker: str) -> list[str]:
    """``host:port`` items of a broker setting (``kafka://a:9092;kafka://b:9092``, ``a:9092,b``)."""
    out: list[str] = []
    for item in broker.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        if "://" in item:
            item = item.split("://", 1)[1]
        item = item.rstrip("/")
        out.append(item if ":" in item else f"{item}:9092")
    if not out:
        raise ValueError("no Kafka bootstrap server configured (MONITOR_BROKER)")
    return out


def _password(settings: Settings) -> str:
    secret = settings.sasl_password
    return secret.reveal() if isinstance(secret, Secret) else str(secret)


def _ssl_context(settings: Settings) -> ssl.SSLContext | None:
    if "SSL" not in settings.security_protocol.upper():
        return None
    return ssl.create_default_context(cafile=settings.ssl_cafile or None)


def kafka_python_config(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for kafka-python clients (``KafkaProducer``, ``KafkaAdminClient``)."""
    config: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers(settings.broker),
        "security_protocol": settings.security_protocol.upper(),
    }
    if "SSL" in config["security_protocol"] and settings.ssl_cafile:
        config["ssl_cafile"] = settings.ssl_cafile
    if "SASL" in config["security_protocol"]:
        config["sasl_mechanism"] = settings.sasl_mechanism
        config["sasl_plain_username"] = settings.sasl_username
        config["sasl_plain_password"] = _password(settings)
    return config


def faust_broker_credentials(settings: Settings) -> Any:
    """The ``broker_credentials`` value for ``faust.App`` (``None`` for PLAINTEXT)."""
    import faust

    protocol = settings.security_protocol.upper()
    context = _ssl_context(settings)
    if "SASL" in protocol:
        return faust.SASLCredentials(
            username=settings.sasl_username,
            password=_password(settings),
            ssl_context=context,
            mechanism=settings.sasl_mechanism.upper(),
        )
    if context is not None:
        return faust.SSLCredentials(context)
    return None
