"""The shipped Mosquitto example (config/mosquitto.example.conf and .acl) with TLS, passwords, client
certificates and the ACL, certificates made in the test (trustme): a table publishes under its own topics;
another table's topics are refused."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from controller.config import FloorSection
from controller.game.cards import Card
from controller.game.records import input_body
from controller.game.table import CardDrawn
from controller.journal import Journal
from controller.link.floor_link import FloorLink, FloorLinkError
from mqttloop import NetworkLoop
from tests.floor_link.floorside import TEST_FLOOR_KEY, TEST_TABLE_KEY, FloorSide
from tests.shipped_broker import SecureBroker, start_shipped_broker


@pytest.fixture
def secure(tmp_path: Path) -> Iterator[tuple[SecureBroker, object]]:
    sb = start_shipped_broker(tmp_path)
    try:
        yield sb, sb.authority
    finally:
        sb.broker.kill()


def write_cards(path: Path, n: int) -> None:
    with Journal.open(path) as j:
        for i in range(n):
            j.append(input_body(CardDrawn(Card.parse("9S")), source="shoe"), session=1, number=i + 1)


def run_link(settings: FloorSection, journal: Path, side: FloorSide, n: int) -> None:
    link = FloorLink(settings, journal, lambda ack: None, key=TEST_TABLE_KEY, floor_key=TEST_FLOOR_KEY.public_key())
    link.start()
    try:
        side.wait(lambda f: f.contiguous == n, 30, f"{n} records over TLS")
    finally:
        link.close()


@pytest.mark.e2e
def test_a_table_with_a_password_over_tls(secure: tuple[SecureBroker, object], tmp_path: Path) -> None:
    sb, _ca = secure
    write_cards(tmp_path / "j.db", 25)
    side = FloorSide("127.0.0.1", sb.password_port, table="t1", username="collector-1", password="collector-1-pw",
                     ca_file=str(sb.ca))  # fmt: skip
    try:
        settings = FloorSection.model_validate({
            "enabled": True, "broker": f"mqtts://127.0.0.1:{sb.password_port}", "site": "casino", "table": "t1",
            "username": "t1", "password_file": str(sb.dir / "t1.password"), "ca_file": str(sb.ca),
        })  # fmt: skip
        run_link(settings, tmp_path / "j.db", side, 25)
        side.wait(lambda f: f.retained.get("status") == b"offline", 10, "offline after a clean stop")
    finally:
        side.close()


@pytest.mark.e2e
def test_a_table_with_a_client_certificate(secure: tuple[SecureBroker, object], tmp_path: Path) -> None:
    sb, _ca = secure
    crt, key = sb.client_cert("t1")
    write_cards(tmp_path / "j.db", 10)
    side = FloorSide("127.0.0.1", sb.password_port, table="t1", username="collector-1", password="collector-1-pw",
                     ca_file=str(sb.ca))  # fmt: skip
    try:
        settings = FloorSection.model_validate({
            "enabled": True, "broker": f"mqtts://127.0.0.1:{sb.cert_port}", "site": "casino", "table": "t1",
            "ca_file": str(sb.ca), "cert_file": str(crt), "cert_key_file": str(key),
        })  # fmt: skip
        run_link(settings, tmp_path / "j.db", side, 10)
    finally:
        side.close()


@pytest.mark.e2e
def test_a_table_cannot_publish_or_read_another_tables_topics(secure: tuple[SecureBroker, object]) -> None:
    sb, _ca = secure
    side = FloorSide("127.0.0.1", sb.password_port, table="t2", username="collector-1", password="collector-1-pw",
                     ca_file=str(sb.ca))  # fmt: skip
    results: dict[str, object] = {}
    done = threading.Event()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="t1-rogue", protocol=mqtt.MQTTv5)
    client.username_pw_set("t1", "secret-1")
    client.tls_set(ca_certs=str(sb.ca))

    def on_publish(c: mqtt.Client, u: Any, mid: int, reason: ReasonCode, props: Properties) -> None:
        results[f"pub{mid}"] = reason
        done.set()

    client.on_publish = on_publish
    client.on_subscribe = lambda c, u, mid, reasons, props: results.__setitem__("sub", reasons)
    heard: list[str] = []
    client.on_message = lambda c, u, msg: heard.append(msg.topic)
    side.client.publish("baccarat/casino/t2/ack", b"7", qos=1, retain=True).wait_for_publish(10)
    client.connect("127.0.0.1", sb.password_port)
    network = NetworkLoop(client, "test-mqtt")
    network.start()
    try:
        own = client.publish("baccarat/casino/t1/record", b"{}", qos=1)
        other = client.publish("baccarat/casino/t2/record", b"forged", qos=1)
        ack = client.publish("baccarat/casino/t2/ack", b"999", qos=1)
        client.subscribe("baccarat/casino/t2/ack", qos=1)
        for info in (own, other, ack):
            info.wait_for_publish(10)
        deadline = time.monotonic() + 10
        while "sub" not in results and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        assert not results[f"pub{own.mid}"].is_failure  # type: ignore[attr-defined]
        assert results[f"pub{other.mid}"].is_failure  # type: ignore[attr-defined]  # 0x87 not authorized
        assert results[f"pub{ack.mid}"].is_failure  # type: ignore[attr-defined]
        assert "sub" in results
        assert heard == []  # t2's retained ack is not delivered to t1 (Mosquitto filters reads by the ACL)
        assert side.received == [] and side.retained.get("ack") == b"7"  # t1's forgeries never reached the floor
    finally:
        network.stop()
        side.close()


def test_a_missing_password_file_is_one_line(tmp_path: Path) -> None:
    settings = FloorSection.model_validate({
        "enabled": True, "broker": "mqtt://127.0.0.1:1", "username": "t1", "password_file": str(tmp_path / "none"),
    })  # fmt: skip
    with pytest.raises(FloorLinkError, match=r"^floor.password_file: .*none") as info:
        FloorLink(
            settings, tmp_path / "j.db", lambda ack: None, key=TEST_TABLE_KEY, floor_key=TEST_FLOOR_KEY.public_key()
        )
    assert "\n" not in str(info.value)
