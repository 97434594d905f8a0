from __future__ import annotations

import pytest

from monitor.config import load_settings
from monitor.stream.kafka import bootstrap_servers, faust_broker_credentials, kafka_python_config


@pytest.mark.parametrize(
    ("broker", "servers"),
    [
        ("kafka://127.0.0.1:9092", ["127.0.0.1:9092"]),
        ("kafka://a:1;kafka://b:2", ["a:1", "b:2"]),
        ("a:1, b", ["a:1", "b:9092"]),
    ],
)
def test_bootstrap_servers(broker: str, servers: list[str]) -> None:
    assert bootstrap_servers(broker) == servers


def test_no_servers_is_an_error() -> None:
    with pytest.raises(ValueError):
        bootstrap_servers(" , ")


def test_sasl_settings_reach_the_clients_and_stay_out_of_reprs() -> None:
    settings = load_settings(
        {
            "MONITOR_BROKER": "kafka://k:9093",
            "MONITOR_SECURITY_PROTOCOL": "sasl_ssl",
            "MONITOR_SASL_MECHANISM": "SCRAM-SHA-512",
            "MONITOR_SASL_USERNAME": "svc",
            "MONITOR_SASL_PASSWORD": "hunter2",
        }
    )
    config = kafka_python_config(settings)
    assert config["security_protocol"] == "SASL_SSL"
    assert config["sasl_plain_password"] == "hunter2"
    assert "hunter2" not in repr(settings)
    credentials = faust_broker_credentials(settings)
    assert credentials.username == "svc"
    assert credentials.mechanism.value == "SCRAM-SHA-512"


def test_plaintext_needs_no_credentials() -> None:
    settings = load_settings({})
    assert faust_broker_credentials(settings) is None
    assert "sasl_plain_password" not in kafka_python_config(settings)
