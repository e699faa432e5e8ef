"""The floor's staff list reaches the table, and a forged one does not: real processes (``shoe-floor serve`` with a
staff registry, the simulator over a pty, ``shoe-controller run`` and ``link``) and a real Mosquitto."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.table.staff_list import staff_list_path
from floor_protocol.signing import generate_key
from floor_protocol.staff import StaffEntry, StaffList, parse_staff
from floor_protocol.topics import staff_topic
from tests.e2e.harness import Harness
from tests.floor_link.floorside import TEST_FLOOR_KEY
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def publish(broker: Mosquitto, topic: str, payload: bytes) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="staff-test", protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        client.publish(topic, payload, qos=1, retain=True).wait_for_publish(10)
    finally:
        client.loop_stop()
        client.disconnect()


def kept(journal: Path) -> StaffList | None:
    path = staff_list_path(journal)
    return parse_staff(path.read_bytes()) if path.exists() else None


def test_a_signed_list_reaches_the_table_and_a_forged_one_does_not(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mq").start()
    try:
        with Harness(tmp_path / "t1") as h:
            h.tmp.mkdir()
            h.start_sim("--decks", "8", pace="0.2")
            h.start_daemon("--floor", broker.url, "--site", "s1", "--table-id", "t1")
            entries = (StaffEntry(id="D1", role="dealer", badge="0004A1B2C3D4E501"),)
            good = StaffList.signed(TEST_FLOOR_KEY, "s1", "2026-12-01T06:00:00.000Z", entries)
            publish(broker, staff_topic("s1"), good.to_json().encode())
            until(lambda: kept(h.journal) == good, 30, "the table to keep the floor's staff list")
            assert (
                "staff list as of 2026-12-01T06:00:00.000Z: 1 member(s), from the floor"
                in h.daemon_logs[-1].read_text()
            )

            forged = StaffList.signed(generate_key(), "s1", "2026-12-02T06:00:00.000Z", entries)
            publish(broker, staff_topic("s1"), forged.to_json().encode())
            link_log = h.companion_logs[-1]
            until(lambda: "refused a staff list" in link_log.read_text(), 30, "the link to refuse the forged list")
            publish(broker, staff_topic("s1"), b"{" * 10 + b"not a list")
            until(lambda: link_log.read_text().count("refused a staff list") >= 2, 30, "the link to refuse garbage")
            assert kept(h.journal) == good  # the table kept the list it verified
            assert h.link_proc is not None and h.link_proc.poll() is None, "the link died"
            assert h.daemon is not None and h.daemon.poll() is None, "the table died"
    finally:
        broker.stop()


def _floor(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "floor.cli", *args], check=True, capture_output=True, timeout=60)


def test_the_floor_publishes_the_registry_at_start_and_on_every_change(tmp_path: Path) -> None:
    from tests.floor.conftest import Keys, stop_collector
    from tests.floor.conftest import start_collector as start

    url = f"sqlite:///{tmp_path / 'archive.db'}"
    _floor("staff", "add", "--archive", url, "--id", "D1", "--name", "Ann Example", "--role", "dealer",
           "--badge", "04:A1:B2:C3:D4:E5:01", "--by", "test")  # fmt: skip
    broker = Mosquitto(tmp_path / "mq").start()
    heard: list[bytes] = []
    lock = threading.Lock()

    def on_message(client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        with lock:
            heard.append(bytes(message.payload))

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="staff-listener", protocol=mqtt.MQTTv5)
    client.on_message = on_message
    client.connect("127.0.0.1", broker.port)
    client.subscribe(staff_topic("s1"), qos=1)
    client.loop_start()
    collector = start(broker, url, "floor-0", tmp_path / "floor.log")
    try:
        until(lambda: bool(heard), 30, "the floor's staff list at start")
        first = parse_staff(heard[-1])
        assert first.verify(Keys(tmp_path / "keys").floor.key.public_key())  # signed with serve --key
        assert [(e.id, e.role, e.badge) for e in first.staff] == [("D1", "dealer", "04A1B2C3D4E501")]
        assert "Ann" not in heard[-1].decode()  # never a name
        _floor("staff", "disable", "--archive", url, "--id", "D1", "--by", "test")
        until(lambda: len(heard) >= 2, 30, "the list again after the change")
        assert parse_staff(heard[-1]).staff == ()  # a disabled member is not on the list
        assert json.loads(heard[-1])["site"] == "s1"
    finally:
        client.loop_stop()
        client.disconnect()
        stop_collector(collector)
        broker.stop()
