"""The floor's side, as small as the tests need: a real MQTT 5 subscriber that collects a table's records and
(optionally) publishes the retained ``ack`` (the highest contiguous seq it holds and that record's hash, signed
by a test floor key for archive :attr:`FloorSide.archive`), as the collector does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from paho.mqtt.enums import CallbackAPIVersion

from controller.game.records import GENESIS_HASH, TableRecord
from controller.journal import Journal
from floor_protocol.ack import Ack
from floor_protocol.signing import format_public_key, generate_key
from mqttloop import NetworkLoop
from tests.waiting import until

#: The test floor's key (every FloorSide signs its acks with it unless given another) and its public key, as a
#: table's ``floor_public_key`` takes it; and a table key for links the tests build themselves.
TEST_FLOOR_KEY = generate_key()
TEST_FLOOR_PUBLIC = format_public_key(TEST_FLOOR_KEY)
TEST_TABLE_KEY = generate_key()


def signed_ack(journal: Journal, seq: int, *, table: str = "t1", archive: str = "archive-test-0001",
               key: Ed25519PrivateKey = TEST_FLOOR_KEY) -> Ack:  # fmt: skip
    """The floor's signed ack of ``journal``'s record ``seq`` (genesis for 0), as a collector would send it."""
    record_hash = GENESIS_HASH if seq == 0 else journal.record_hash(seq)
    assert record_hash is not None, f"no record {seq}"
    return Ack.signed(key, archive, table, seq, record_hash)


class FloorSide:
    def __init__(self, host: str, port: int, *, site: str = "casino", table: str = "t1", ack: bool = True,
                 client_id: str = "test-floor", username: str | None = None, password: str | None = None,
                 ca_file: str | None = None, floor_key: Ed25519PrivateKey | None = None,
                 archive: str = "archive-test-0001", ack_interval: float = 0.0) -> None:  # fmt: skip
        self.prefix = f"baccarat/{site}/{table}/"
        self.table = table
        self.ack = ack
        #: The floor's key (a fresh one unless given) and its public key as the table's configuration takes it.
        self.key = floor_key if floor_key is not None else TEST_FLOOR_KEY
        self.public = format_public_key(self.key)
        self.archive = archive
        self.acks_sent: list[Ack] = []
        #: At most one ack per this many seconds (0: one per advance; a collector acks once per batch).
        self.ack_interval = ack_interval
        self._last_ack = float("-inf")
        self.received: list[TableRecord] = []  # every record on the wire, duplicates included
        self.by_seq: dict[int, TableRecord] = {}
        self.contiguous = 0
        self.retained: dict[str, bytes] = {}
        self.arrivals: dict[int, float] = {}  # seq -> monotonic time first seen
        self._lock = threading.Lock()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        self.client.on_message = self._on_message
        self.connected = threading.Event()
        self.client.on_connect = self._on_connect
        self.client.reconnect_delay_set(0.2, 1)  # type: ignore[arg-type]  # paho says int; a float works and keeps it quick
        if username is not None:
            self.client.username_pw_set(username, password)
        if ca_file is not None:
            self.client.tls_set(ca_certs=ca_file)
        self.client.connect_async(host, port, keepalive=10)
        self.network = NetworkLoop(self.client, "test-mqtt")
        self.network.start()
        if not self.connected.wait(15):
            raise AssertionError("the test's floor could not connect to the broker")

    def _on_connect(self, client: mqtt.Client, *_: Any) -> None:
        client.subscribe(self.prefix + "#", qos=1)
        self.connected.set()

    def _on_message(self, client: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        leaf = msg.topic.removeprefix(self.prefix)
        if leaf != "record":
            with self._lock:
                self.retained[leaf] = bytes(msg.payload)
            return
        record = TableRecord.from_json(bytes(msg.payload))
        with self._lock:
            self.received.append(record)
            self.by_seq.setdefault(record.seq, record)
            self.arrivals.setdefault(record.seq, time.monotonic())
            before = self.contiguous
            while self.contiguous + 1 in self.by_seq:
                self.contiguous += 1
            advanced = self.contiguous != before
            now = time.monotonic()
            ack = None
            if self.ack and advanced and now - self._last_ack >= self.ack_interval:
                ack, self._last_ack = self.ack_for(self.contiguous), now
        if ack is not None:
            self.publish_ack(ack, wait=False)  # on paho's own thread: it cannot wait for itself

    def ack_for(self, seq: int, *, archive: str | None = None) -> Ack:
        """This floor's signed ack of ``seq`` (the hash of the record it holds; genesis for 0)."""
        record_hash = GENESIS_HASH if seq == 0 else self.by_seq[seq].hash
        return Ack.signed(self.key, archive or self.archive, self.table, seq, record_hash)

    def publish_ack(self, ack: Ack | bytes, *, wait: bool = True) -> None:
        """Publish ``ack`` (or any payload) as the retained ack, as a collector (or an attacker) would."""
        payload = ack if isinstance(ack, bytes) else ack.to_json()
        if isinstance(ack, Ack):
            self.acks_sent.append(ack)
        info = self.client.publish(self.prefix + "ack", payload, qos=1, retain=True)
        if wait:
            info.wait_for_publish(5)

    def wait(self, predicate: Callable[[FloorSide], bool], timeout: float, what: str) -> None:
        def holds() -> bool:
            with self._lock:
                return predicate(self)

        try:
            until(holds, timeout, what, every=0.02)
        except AssertionError:
            stand = f"contiguous {self.contiguous}"
            raise AssertionError(f"timed out after {timeout} s waiting for {what} ({stand})") from None

    def state(self) -> dict[str, Any] | None:
        raw = self.retained.get("state")
        return None if raw is None else json.loads(raw)

    def close(self) -> None:
        self.network.stop()


def ordered_without_duplicates(records: list[TableRecord]) -> bool:
    """Whether the first sight of each seq came in journal order (resends may repeat earlier seqs)."""
    seen: set[int] = set()
    firsts = []
    for r in records:
        if r.seq not in seen:
            seen.add(r.seq)
            firsts.append(r.seq)
    return firsts == sorted(firsts)
