"""Fixtures for the floor's side: real journals from the demo, a real Mosquitto, real PostgreSQL and SQLite
archives (every archive test runs on SQLite; those marked ``dialects`` on PostgreSQL too), a collector
in-process or as a process.

Trust: every table a test plays has its own key (:class:`Keys`, written as keygen writes them) enrolled in
the archive, and signs what it publishes (:meth:`Table.publish`); every collector signs its acks with a
floor key, and the test's :class:`Table` keeps each ack it hears, verified against that key."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.game.records import TableRecord
from controller.journal import Journal, JournalError
from floor.archive import Archive
from floor.collector import Collector, Settings
from floor_protocol.ack import Ack, parse_ack
from floor_protocol.signing import generate_key, parse_public_key, record_message, sign
from mqttloop import NetworkLoop
from tests.console import Result, run_main
from tests.keys import KeyFile, key_file
from tests.pitload import demo_journal
from tests.processes import dealing_data
from tests.servers import Mosquitto, Postgres
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


@pytest.fixture(scope="session")
def journal_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real journal: one shoe dealt by the demo (simulated shoe, real table loop)."""
    return demo_journal(tmp_path_factory.mktemp("journal") / "journal.db")


@pytest.fixture(scope="session")
def journal_records(journal_path: Path) -> list[TableRecord]:
    """Every record of the real journal, as table T1 publishes it."""
    journal = Journal.open(str(journal_path), create=False, read_only=True)
    try:
        records = [r.for_floor("T1") for r in journal.records()]
    finally:
        journal.close()
    assert len(records) > 300
    return records


def as_table(records: list[TableRecord], table: str) -> list[TableRecord]:
    """The same journal published by another table (the table id is the envelope's, not the chain's)."""
    return [TableRecord.from_dict({**r.to_dict(), "table": table}) for r in records]


def signed(records: list[TableRecord], key: KeyFile) -> list[TableRecord]:
    """``records`` with ``sig`` made by ``key``, as the table's floor link sends them."""
    return [
        TableRecord.from_dict({**r.to_dict(), "sig": sign(key.key, record_message(r.table, r.seq, r.hash))})
        for r in records
    ]


class Keys:
    """The test's keys: one per table (``table(name)``) and the floor's (``floor``), files in ``directory``."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(exist_ok=True)
        self.directory = directory
        self.floor = key_file(directory, "floor")

    def table(self, name: str) -> KeyFile:
        return key_file(self.directory, f"table-{name}")

    def enroll(self, url: str, *tables: str) -> None:
        """Enroll each table's key in the archive at ``url`` (made if need be), as ``shoe-floor enroll`` does."""
        with Archive(url) as archive:
            enrolled = {k.table for k in archive.table_keys() if k.current}
            for name in tables:
                if name not in enrolled:
                    archive.enroll(name, self.table(name).public)

    def sign(self, records: list[TableRecord]) -> list[TableRecord]:
        """Each record signed by its own table's key."""
        return [signed([r], self.table(r.table))[0] for r in records]


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    return Keys(tmp_path / "keys")


def trusted(keys: Keys, url: str, table: str) -> tuple[str, ...]:
    """Enroll ``table``'s key in the archive at ``url``; the options that make a table daemon's link sign with
    it and believe only acks of the floor's key (the collectors' ``serve --key``, :func:`serve_process`)."""
    keys.enroll(url, table)
    return ("--floor-key", str(keys.table(table).path), "--floor-public-key", keys.floor.public)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Postgres]:
    server = Postgres(tmp_path_factory.mktemp("pg")).start()
    yield server
    with dealing_data():  # at the session's end, in the last test's teardown: not that test's process
        server.stop()


_databases = itertools.count()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test on an archive runs on SQLite; a test marked ``dialects`` (its SQL differs by dialect: upserts,
    types, JSON, locking, two collectors racing, verify) runs on PostgreSQL too, as an ``e2e`` test (it needs
    the PostgreSQL server, which ``scripts/test --fast`` does not start)."""
    if "archive_url" in metafunc.fixturenames:
        dialects: list[object] = ["sqlite"]
        if metafunc.definition.get_closest_marker("dialects") is not None:
            dialects.append(pytest.param("postgresql", marks=pytest.mark.e2e))
        metafunc.parametrize("archive_url", dialects, indirect=True)


@pytest.fixture
def archive_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/archive.db"
    import psycopg

    server: Postgres = request.getfixturevalue("postgres_server")
    name = f"archive_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    server = Mosquitto(tmp_path / "mosquitto").start()
    yield server
    server.stop()


class Table:
    """A table's side of the link, played by the test: publishes records (QoS 1), signed with each table's key
    (``keys``), and watches its ack: ``acks`` is the highest seq heard of each table, ``acks_heard`` every ack's
    seq in order and ``signed_acks`` every ack as parsed (``bad_acks``: payloads that are not an ack)."""

    def __init__(self, broker: Mosquitto, keys: Keys | None = None, site: str = "s1") -> None:
        self.site = site
        self.keys = keys
        self.acks: dict[str, int] = {}
        self.acks_heard: list[int] = []  # every ack's seq, in order
        self.signed_acks: list[Ack] = []
        self.bad_acks: list[bytes] = []
        self._lock = threading.Lock()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = self._on_ack
        self.client.connect("127.0.0.1", broker.port)
        self.client.subscribe(f"baccarat/{site}/+/ack", qos=1)
        self.network = NetworkLoop(self.client, "test-mqtt")
        self.network.start()

    def _on_ack(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        table = message.topic.split("/")[2]
        ack = parse_ack(message.payload)
        with self._lock:
            if ack is None or ack.table != table:
                self.bad_acks.append(bytes(message.payload))
                return
            self.signed_acks.append(ack)
            self.acks[table] = max(self.acks.get(table, 0), ack.seq)
            self.acks_heard.append(ack.seq)

    def verified_acks(self, floor_public: str) -> list[Ack]:
        """Every ack heard, each checked against the floor's public key (an assertion error names one that
        does not verify)."""
        key = parse_public_key(floor_public)
        with self._lock:
            acks = list(self.signed_acks)
        for ack in acks:
            assert ack.verify(key), f"an ack that does not verify with the floor key: {ack}"
        return acks

    def publish(self, records: list[TableRecord], *, sign: bool = True) -> None:
        """Publish ``records``, each signed by its table's key (records already signed, and every record with
        ``sign=False``, are sent as they are)."""
        if self.keys is not None and sign:
            records = [r if r.sig is not None else self.keys.sign([r])[0] for r in records]
        infos = [self.send(r.table, r.to_json()) for r in records]
        for info in infos:
            info.wait_for_publish(10)

    def send(self, table: str, payload: str | bytes) -> mqtt.MQTTMessageInfo:
        return self.client.publish(f"baccarat/{self.site}/{table}/record", payload, qos=1)

    def ack(self, table: str) -> int:
        with self._lock:
            return self.acks.get(table, 0)

    def wait_ack(self, table: str, seq: int, timeout: float = 30.0) -> None:
        until(lambda: self.ack(table) >= seq, timeout, f"ack of {table} reaching {seq} (at {self.ack(table)})")

    def close(self) -> None:
        self.network.stop()


@pytest.fixture
def table(broker: Mosquitto, keys: Keys) -> Iterator[Table]:
    t = Table(broker, keys)
    yield t
    t.close()


class InProcess:
    """A collector on a thread of the test process (fast; the process tests use the real command). ``keys``:
    its floor key signs the acks (a fresh key without)."""

    def __init__(self, broker: Mosquitto, url: str, keys: Keys | None = None, **settings: Any) -> None:
        key = keys.floor.key if keys is not None else generate_key()
        self.settings = Settings(broker=broker.url, archive=url, key=key, client_id=f"c{next(_databases)}", **settings)
        self.collector = Collector(self.settings)
        subacks = threading.Event()
        self.collector.client.on_subscribe = lambda *_: subacks.set()  # paho's hook: the broker's SUBACK
        self.archive = Archive(url)
        self.thread = threading.Thread(target=self.collector.run, args=(self.archive,), daemon=True)
        self.thread.start()
        until(lambda: self.collector._connected.is_set() and subacks.is_set(), 15, "the collector's SUBACK")

    def stop(self) -> None:
        self.collector.stop()
        self.thread.join(15)
        assert not self.thread.is_alive()
        self.archive.close()


#: The tables the collector fixture enrolls before it starts (the tests play these).
TABLES = ("T1", "T2")


@pytest.fixture
def collector(broker: Mosquitto, archive_url: str, keys: Keys) -> Iterator[Callable[..., InProcess]]:
    """Start a collector on the test's archive; tables T1 and T2 have their keys enrolled first."""
    started: list[InProcess] = []
    keys.enroll(archive_url, *TABLES)

    def start(**settings: object) -> InProcess:
        c = InProcess(broker, archive_url, keys, **settings)
        started.append(c)
        return c

    yield start
    for c in started:
        if c.thread.is_alive():
            c.stop()


def serve_process(broker: Mosquitto, url: str, client_id: str, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    """``shoe-floor serve`` as a real process (its log in ``log``); its floor key is ``keys/floor.key`` beside
    the log (the test's :class:`Keys` when both are in ``tmp_path``) unless ``--key`` is given."""
    args = [PYTHON, "-m", "floor.cli", "serve", "--broker", broker.url, "--archive", url, "--client-id", client_id]
    if "--bind" not in extra:  # the pit page's default port is one per machine: each collector its own
        args += ["--bind", "127.0.0.1:0"]
    if "--key" not in extra:
        args += ["--key", str(Keys(log.parent / "keys").floor.path)]
    return subprocess.Popen([*args, *extra], stdout=subprocess.DEVNULL, stderr=log.open("ab"), cwd=ROOT)


def archived(url: str, table: str) -> list[dict[str, object]]:
    """The table's archived records as its journal holds them (without ``sig``, which the table's link adds on
    the way out: ``shoe-floor verify`` checks every one)."""
    with Archive(url, create=False) as a:
        return [{k: v for k, v in json.loads(r.to_json()).items() if k != "sig"} for r in a.records(table)]


def shoe_floor(*args: str) -> Result:
    """``shoe-floor ARGS`` in this process (tests/console.py; the collector's own tests run the real process)."""
    return run_main(["shoe-floor", *args])


def archived_count(url: str) -> int:
    try:
        with Archive(url, create=False) as a:
            return sum(1 for t in a.tables() for _ in a.records(t))
    except Exception:
        return 0


def start_collector(broker: Mosquitto, url: str, client_id: str, log: Path) -> subprocess.Popen[bytes]:
    """``shoe-floor serve --site s1`` as a real process, once it has subscribed."""
    proc = serve_process(broker, url, client_id, log, "--site", "s1")
    until(lambda: "subscribed" in log.read_text(), 30, f"{log.name} to subscribe")
    return proc


def stop_collector(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(20)


def journal_of(path: Path, table: str) -> list[dict[str, object]]:
    """A table's journal as the table publishes it (every record, in order, as JSON objects)."""
    with Journal.open(path, read_only=True) as j:
        return [json.loads(r.for_floor(table).to_json()) for r in j.records()]


def stored_ack(path: Path) -> int:
    """The floor's ack as the table stored it in its journal (0: none yet)."""
    with Journal.open(path, read_only=True) as j:
        return j.floor_ack() or 0


def shoes_started(path: Path) -> int:
    """How many shoes the table has started (0 before its daemon has written the journal)."""
    try:
        with Journal.open(path, read_only=True) as j:
            return len(j.shoe_starts())
    except JournalError:
        return 0


def assert_archive_is_every_journal(url: str, tables: dict[str, Path], ack_timeout: float = 90.0) -> None:
    """The end state after a fault: each table's stored ack reached its journal's head, the archive holds each
    journal record for record (same seq, kind, hash, body: nothing lost, nothing doubled), and ``shoe-floor
    verify`` passes. A table may still journal a record after its shoe ended (its shoe link going down 3 s
    after the simulator's last frame): the ack and the archive are waited for until both have caught up."""

    def caught_up(table: str, path: Path) -> bool:
        head = len(journal_of(path, table))
        return stored_ack(path) == head and len(archived(url, table)) == head

    for table, path in tables.items():
        until(lambda: caught_up(table, path), ack_timeout, f"{table}'s last ack")  # noqa: B023
    for table, path in tables.items():
        assert archived(url, table) == journal_of(path, table)
    verify = shoe_floor("verify", "--archive", url)
    assert verify.returncode == 0, verify.stdout + verify.stderr


class AlertWatch:
    """A subscriber to every site's floor alerts (`baccarat/+/floor/alert`), as a surveillance system is."""

    def __init__(self, broker: Mosquitto) -> None:
        self.got: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.connect("127.0.0.1", broker.port)
        self.client.subscribe("baccarat/+/floor/alert", qos=1)
        self.network = NetworkLoop(self.client, "test-mqtt")
        self.network.start()
        assert self._subscribed.wait(10)

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        assert message.topic == "baccarat/s1/floor/alert"
        with self._lock:
            self.got.append(json.loads(message.payload))

    def alerts(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.got)

    def close(self) -> None:
        self.network.stop()
