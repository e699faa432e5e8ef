"""The shipped broker configuration (config/mosquitto.example.conf and .acl, tests/shipped_broker.py), attacked
with one table's credentials: it cannot take the collector's persistent session or end its connection (client
ids are bound to user names), the records queued for a collector that is down reach it when it comes back under
its user name, and each user publishes and reads only what the ACL says (a table its own record, state and
status and its own ack; a collector every record, the acks and the alerts; a pit view reads and writes nothing).

The clients here are plain paho clients that connect as the floor's processes do (the collector's client id,
``clean_start=False``, a session of a day, the shared subscription of ``shoe-floor serve``): what is under test
is the broker's configuration, which every process meets the same way.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from mqttloop import NetworkLoop
from tests.servers import MOSQUITTO, wait_port
from tests.shipped_broker import PASSWORDS, SecureBroker
from tests.waiting import until

#: What ``shoe-floor serve`` connects with by default (``shoe-floor-<hostname>``): a predictable id.
COLLECTOR_ID = "shoe-floor-floor1"
#: ``shoe-floor serve``'s subscription (its default share group, every site).
COLLECTOR_FILTER = "$share/shoe-floor/baccarat/+/+/record"
DAY = 24 * 3600


class Client:
    """One MQTT 5 connection to the shipped broker, as ``user`` (a password) or with a client certificate."""

    def __init__(
        self,
        sb: SecureBroker,
        user: str,
        *,
        client_id: str = "",
        clean_start: bool = True,
        session_expiry: int = 0,
        certificate: bool = False,
    ) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        self.lock = threading.Lock()
        self.messages: list[tuple[str, bytes]] = []
        self.published: dict[int, Any] = {}
        self.subscribed: dict[int, list[Any]] = {}
        self.disconnects: list[str] = []
        self.session_present: bool | None = None
        self.connected = threading.Event()
        if certificate:
            crt, key = sb.client_cert(user)
            self.client.tls_set(ca_certs=str(sb.ca), certfile=str(crt), keyfile=str(key))
            port = sb.cert_port
        else:
            self.client.tls_set(ca_certs=str(sb.ca))
            self.client.username_pw_set(user, PASSWORDS[user])
            port = sb.password_port
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.client.on_subscribe = self._on_subscribe
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = session_expiry
        self.client.connect("127.0.0.1", port, keepalive=30, clean_start=clean_start, properties=props)
        self.network = NetworkLoop(self.client, f"test-{user}")
        self.network.start()
        if not self.connected.wait(15):
            raise AssertionError(f"{user} could not connect to the shipped broker")

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        assert not reason.is_failure, reason
        self.session_present = bool(flags.session_present)
        self.connected.set()

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        with self.lock:
            self.disconnects.append(str(reason))

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self.lock:
            self.messages.append((message.topic, bytes(message.payload)))

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        with self.lock:
            self.published[mid] = reason

    def _on_subscribe(self, client: mqtt.Client, userdata: Any, mid: int, reasons: Any, props: Any) -> None:
        with self.lock:
            self.subscribed[mid] = list(reasons)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> bool:
        """Publish at QoS 1 and wait for the broker's PUBACK: True if it took the message, False if refused."""
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        until(lambda: info.mid in self.published, 10, f"the PUBACK of {topic}")
        with self.lock:
            return not self.published[info.mid].is_failure

    def subscribe(self, topic_filter: str) -> None:
        _, mid = self.client.subscribe(topic_filter, qos=1)
        until(lambda: mid in self.subscribed, 10, f"the SUBACK of {topic_filter}")

    def topics(self) -> list[str]:
        with self.lock:
            return [topic for topic, _ in self.messages]

    def close(self) -> None:
        """A clean disconnect: a session with an expiry stays on the broker, with what is queued for it."""
        assert self.network.stop(10)


def collector(sb: SecureBroker, user: str = "collector-1", client_id: str = COLLECTOR_ID) -> Client:
    """A collector's connection, as ``shoe-floor serve`` makes it: its persistent session and subscription."""
    c = Client(sb, user, client_id=client_id, clean_start=False, session_expiry=DAY)
    c.subscribe(COLLECTOR_FILTER)
    return c


def publish_records(sb: SecureBroker, table: str, n: int) -> list[bytes]:
    t = Client(sb, table, client_id=f"shoe-casino-{table}")
    try:
        payloads = [f'{{"seq":{i}}}'.encode() for i in range(1, n + 1)]
        assert all(t.publish(f"baccarat/casino/{table}/record", p) for p in payloads)
        return payloads
    finally:
        t.close()


def marker(sb: SecureBroker, table: str, payload: bytes) -> None:
    """A retained ack for ``table`` (the collector writes acks): the last thing a client of that table reads on
    subscribing to it, after whatever the broker had queued for its session."""
    c = Client(sb, "collector-2", client_id="marker")
    try:
        assert c.publish(f"baccarat/casino/{table}/ack", payload, retain=True)
    finally:
        c.close()


def steal_the_collectors_session(sb: SecureBroker, *, clean_start: bool, certificate: bool) -> list[str]:
    """t1's credentials (a password or its certificate) with the collector's client id: the topics it heard
    up to its own retained ack, which comes after anything the broker had queued for the session it got."""
    thief = Client(sb, "t1", client_id=COLLECTOR_ID, clean_start=clean_start, session_expiry=DAY,
                   certificate=certificate)  # fmt: skip
    try:
        assert thief.session_present is False
        thief.subscribe("baccarat/casino/t1/ack")
        until(lambda: ("baccarat/casino/t1/ack", b"marker") in thief.messages, 10, "the thief's own ack")
        return thief.topics()
    finally:
        thief.close()


@pytest.mark.parametrize("listener", ["password", "certificate"])
@pytest.mark.e2e
def test_a_tables_credentials_with_the_collectors_client_id_do_not_take_its_queued_records(
    sb: SecureBroker, listener: str
) -> None:
    """The finding: t1's credentials with the collector's id took its session; 5 queued records never came."""
    collector(sb).close()  # the collector subscribed once and is down (a restart, an upgrade)
    queued = publish_records(sb, "t1", 5)  # the broker queues them for the collector's session
    marker(sb, "t1", b"marker")
    # The attacker asks for the collector's session, then for a clean one (which on a broker that let it take
    # the id would throw the collector's session, and its queued records, away).
    for clean_start in (False, True):
        heard = steal_the_collectors_session(sb, clean_start=clean_start, certificate=listener == "certificate")
        assert heard == ["baccarat/casino/t1/ack"]
    back = collector(sb)  # restarted under its user name: its session, with the records queued meanwhile
    try:
        assert back.session_present is True
        until(lambda: len(back.messages) >= len(queued), 10, "the records queued while the collector was down")
        assert back.messages == [("baccarat/casino/t1/record", p) for p in queued]
    finally:
        back.close()


@pytest.mark.e2e
def test_a_tables_credentials_with_the_collectors_client_id_do_not_disconnect_it(sb: SecureBroker) -> None:
    live = collector(sb)
    try:
        thief = Client(sb, "t1", client_id=COLLECTOR_ID)
        try:
            payloads = publish_records(sb, "t2", 3)  # (t2: t1's credentials again would end the thief's connection)
            until(lambda: len(live.messages) >= 3, 10, "the records published after the thief connected")
            assert live.messages == [("baccarat/casino/t2/record", p) for p in payloads]
            assert live.disconnects == [] and thief.messages == []
        finally:
            thief.close()
    finally:
        live.close()


@pytest.mark.e2e
def test_a_collectors_session_belongs_to_its_user_name_whatever_client_id_it_sends(sb: SecureBroker) -> None:
    """The broker makes the user name the client id: a collector restarted with another ``--client-id`` (or on a
    renamed host) still gets what was queued for it, and two collectors' sessions never mix."""
    collector(sb, client_id="shoe-floor-old-name").close()
    queued = publish_records(sb, "t2", 4)
    back = collector(sb, client_id="shoe-floor-new-name")
    try:
        assert back.session_present is True
        until(lambda: len(back.messages) >= 4, 10, "the queued records under another client id")
        assert back.messages == [("baccarat/casino/t2/record", p) for p in queued]
    finally:
        back.close()
    other = collector(sb, user="collector-2", client_id="shoe-floor-old-name")
    try:
        assert other.session_present is False  # collector-1's session is not collector-2's
    finally:
        other.close()


@pytest.mark.e2e
def test_two_collectors_in_one_share_group_each_with_its_own_user_share_every_record(sb: SecureBroker) -> None:
    first, second = collector(sb, "collector-1", "shoe-floor-a"), collector(sb, "collector-2", "shoe-floor-a")
    try:
        payloads = publish_records(sb, "t1", 20)
        until(lambda: len(first.messages) + len(second.messages) >= 20, 10, "every record, once")
        got = sorted(p for _, p in first.messages + second.messages)
        assert got == sorted(payloads)  # each once: neither took the other's session (same client id sent)
        assert first.messages and second.messages  # the group shared them
        assert first.disconnects == [] and second.disconnects == []
    finally:
        first.close()
        second.close()


#: user -> (topic, may it publish there): a table only its own record/state/status; a collector only acks and
#: the alert feed; a pit view nothing at all (not even the topics its own name would have as a table's).
WRITES: dict[str, list[tuple[str, bool]]] = {
    "t1": [
        ("baccarat/casino/t1/record", True),
        ("baccarat/casino/t1/state", True),
        ("baccarat/casino/t1/status", True),
        ("baccarat/casino/t1/ack", False),
        ("baccarat/casino/t2/record", False),
        ("baccarat/casino/t2/state", False),
        ("baccarat/casino/t2/status", False),
        ("baccarat/casino/t2/ack", False),
        ("baccarat/casino/floor/alert", False),
        ("baccarat/other-site/t1/record", False),
        ("baccarat/casino/t1/record/extra", False),
    ],
    "collector-1": [
        ("baccarat/casino/t1/ack", True),
        ("baccarat/casino/floor/alert", True),
        ("baccarat/casino/t1/record", False),
        ("baccarat/casino/t1/state", False),
        ("baccarat/casino/collector-1/record", False),
        ("baccarat/casino/collector-1/state", False),
    ],
    "pit-1": [
        ("baccarat/casino/pit-1/record", False),
        ("baccarat/casino/pit-1/state", False),
        ("baccarat/casino/pit-1/status", False),
        ("baccarat/casino/t1/record", False),
        ("baccarat/casino/t1/state", False),
        ("baccarat/casino/t1/ack", False),
        ("baccarat/casino/floor/alert", False),
    ],
}


@pytest.mark.parametrize("user", sorted(WRITES))
@pytest.mark.e2e
def test_each_user_publishes_only_where_the_acl_says(sb: SecureBroker, user: str) -> None:
    client = Client(sb, user, client_id=f"test-{user}")
    try:
        outcome = [(topic, client.publish(topic, b"{}")) for topic, _ in WRITES[user]]
        assert outcome == WRITES[user]
    finally:
        client.close()


#: user -> the retained messages it reads when it subscribes to everything (``baccarat/#``).
READS: dict[str, set[str]] = {
    "t1": {"baccarat/casino/t1/ack"},
    "pit-1": {"baccarat/casino/t1/state", "baccarat/casino/t2/state", "baccarat/casino/t1/status"},
    "collector-1": {
        "baccarat/casino/t1/ack",
        "baccarat/casino/t2/ack",
        "baccarat/casino/t1/state",
        "baccarat/casino/t2/state",
        "baccarat/casino/t1/status",
    },
}


@pytest.mark.parametrize("user", sorted(READS))
@pytest.mark.e2e
def test_each_user_reads_only_what_the_acl_says(sb: SecureBroker, user: str) -> None:
    """A table reads its own ack and nothing of another table; a pit view states and statuses, never acks."""
    for table in ("t1", "t2"):
        t = Client(sb, table, client_id=f"shoe-casino-{table}")
        try:
            assert t.publish(f"baccarat/casino/{table}/state", b'{"shoe":1}', retain=True)
            if table == "t1":
                assert t.publish("baccarat/casino/t1/status", b"online", retain=True)
        finally:
            t.close()
        marker(sb, table, f"ack of {table}".encode())
    reader = Client(sb, user, client_id=f"test-{user}")
    try:
        reader.subscribe("baccarat/#")  # granted (Mosquitto filters what it delivers by the ACL) ...
        # ... and what comes after the subscription shows the retained messages have all come: for a pit view
        # or a collector a live record (of t2: t1's credentials would take the t1 reader's session), for the
        # table t1 its next ack.
        if user == "t1":
            c = Client(sb, "collector-1", client_id="late-ack")
            try:
                assert c.publish("baccarat/casino/t1/ack", b"late")
            finally:
                c.close()
            until(lambda: ("baccarat/casino/t1/ack", b"late") in reader.messages, 10, "t1's new ack")
        else:
            t2 = Client(sb, "t2", client_id="shoe-casino-t2")
            try:
                assert t2.publish("baccarat/casino/t2/record", b'{"seq":1}')
            finally:
                t2.close()
            until(lambda: "baccarat/casino/t2/record" in reader.topics(), 10, "the live record")
        retained = set(reader.topics()) - {"baccarat/casino/t2/record"}
        assert retained == READS[user]
    finally:
        reader.close()


#: Debian 12's /etc/mosquitto/mosquitto.conf (package mosquitto 2.0.11) without its comments: the file that
#: includes the shipped one from conf.d/ (docs/floor.md, *The broker's users*).
DEBIAN_MAIN = (
    "pid_file /run/mosquitto/mosquitto.pid",
    "persistence true",
    "persistence_location /var/lib/mosquitto/",
    "log_dest file /var/log/mosquitto/mosquitto.log",
    "include_dir /etc/mosquitto/conf.d",
)


@pytest.mark.e2e
def test_the_shipped_file_starts_the_broker_from_debians_conf_d(sb: SecureBroker, tmp_path: Path) -> None:
    """Installed as /etc/mosquitto/conf.d/floor.conf under Debian's own mosquitto.conf (which sets the
    persistence location: a second one in floor.conf stopped the broker at start)."""
    installed = Path("/etc/mosquitto/mosquitto.conf")
    if installed.exists():  # the embedded copy is still the package's
        lines = [line for line in installed.read_text().splitlines() if line.strip() and not line.startswith("#")]
        assert tuple(lines) == DEBIAN_MAIN
    sb.broker.kill()  # its conf.d/floor.conf stays: the shipped file, paths and ports replaced
    d = tmp_path / "debian"
    d.mkdir()
    main = d / "mosquitto.conf"
    text = "\n".join(DEBIAN_MAIN).replace("/etc/mosquitto/conf.d", str(tmp_path / "conf.d"))
    for where in ("/run/mosquitto/", "/var/lib/mosquitto/", "/var/log/mosquitto/"):
        text = text.replace(where, f"{d}/")
    main.write_text(text + ("\nuser root\n" if os.geteuid() == 0 else "\n"))  # root: see tests.servers
    proc = subprocess.Popen([MOSQUITTO, "-c", str(main)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        try:
            wait_port(sb.password_port, proc)
        except RuntimeError:
            log = (d / "mosquitto.log").read_text() if (d / "mosquitto.log").exists() else ""
            raise AssertionError(f"the broker did not start: {log[-500:]}") from None
        c = Client(sb, "collector-1", client_id=COLLECTOR_ID)
        try:
            assert c.publish("baccarat/casino/t1/ack", b"up")
        finally:
            c.close()
    finally:
        proc.terminate()
        proc.wait(10)
