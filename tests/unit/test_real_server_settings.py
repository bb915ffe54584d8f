"""Settings of the real-producer servers (tests/helpers/real_servers.py): the KRaft cluster id of
the test broker is never one that Kafka's storage tool takes for an option, whatever the random
bytes; the Debezium connectors start with the lossless settings."""

from __future__ import annotations

import base64
from types import SimpleNamespace

import pytest

from tests.helpers.real_servers import LOSSLESS_SETTINGS, DebeziumConnect, kafka_cluster_id


@pytest.mark.parametrize("first", range(256))
def test_no_first_byte_gives_an_id_that_starts_like_an_option(first: int) -> None:
    random_bytes = bytes([first]) + bytes(range(1, 16))
    cluster_id = kafka_cluster_id(random_bytes)
    assert len(cluster_id) == 22 and cluster_id[0].isalpha(), cluster_id
    decoded = base64.urlsafe_b64decode(cluster_id + "==")
    assert decoded[1:] == random_bytes[1:] and decoded[0] == first & 0x7F


def test_the_bytes_that_gave_a_leading_dash_before_give_a_letter_now() -> None:
    raw = bytes([0xF8]) + bytes(15)  # top six bits 62: '-' in URL-safe base64
    assert base64.urlsafe_b64encode(raw).decode().startswith("-")
    assert not kafka_cluster_id(raw).startswith("-")


def test_a_cluster_id_takes_sixteen_bytes() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        kafka_cluster_id(bytes(15))


def test_the_connectors_start_with_the_lossless_settings(tmp_path) -> None:
    """What `scripts/real_producers.sh start`, the demo and the tests give both connectors: the
    settings of docs/real_producers.md, "Connector settings for a lossless lakehouse"; options
    given per connector come on top."""
    database = {"port": 5, "user": "u", "password": "p", "database": "shop", "publication": "pub"}
    connect = DebeziumConnect(
        tmp_path,
        SimpleNamespace(bootstrap="127.0.0.1:9"),
        SimpleNamespace(**database),
        SimpleNamespace(**database),
        connector_options={"maria": {"provide.transaction.metadata": "true"}},
    )
    connectors = connect.connectors()
    for name, kind in (("pg", "postgresql"), ("maria", "mariadb")):
        assert LOSSLESS_SETTINGS[kind].items() <= connectors[name].items(), name
        assert connectors[name]["skipped.operations"] == "none"  # truncates are sent
    assert connectors["maria"]["bigint.unsigned.handling.mode"] == "precise"
    assert connectors["maria"]["enable.time.adjuster"] == "false"
    assert connectors["maria"]["provide.transaction.metadata"] == "true"
    assert connectors["pg"]["interval.handling.mode"] == "string"
