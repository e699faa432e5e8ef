"""The finding with a real collector (``shoe-floor serve`` as a process, a SQLite archive) on the shipped TLS broker:
while the collector is down, a table publishes 5 signed records; t1's credentials then connect with the
collector's client id (asking for its session, then for a clean one); the collector, restarted under its user
name, archives all 5. Before client ids were bound to user names, the thief took the session and the 5 never
came.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.game.cards import Card
from controller.game.records import TableRecord, input_body
from controller.game.table import CardDrawn
from controller.journal import Journal
from floor.archive import Archive
from floor_protocol.signing import record_message, sign
from tests.broker.test_shipped_broker import COLLECTOR_ID, Client, marker, steal_the_collectors_session
from tests.console import run_main
from tests.keys import key_file
from tests.shipped_broker import SecureBroker
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e


def signed_records(tmp_path: Path, table: str, n: int) -> list[TableRecord]:
    """``n`` records of a real journal as ``table`` publishes them, signed with its key (tests/keys.py)."""
    key = key_file(tmp_path, table)
    with Journal.open(tmp_path / f"{table}.db") as j:
        for i in range(n):
            j.append(input_body(CardDrawn(Card.parse("9S")), source="shoe"), session=1, number=i + 1)
        records = [r.for_floor(table) for r in j.records()]
    return [
        TableRecord.from_dict({**r.to_dict(), "sig": sign(key.key, record_message(table, r.seq, r.hash))})
        for r in records
    ]


def serve(sb: SecureBroker, url: str, tmp_path: Path, log: Path, bind: str = "127.0.0.1:0") -> subprocess.Popen[bytes]:
    """A real ``shoe-floor serve`` on the shipped broker as ``collector-1`` (its pit view as ``pit-1``), the
    floor's key from tests/keys.py; waited for until it subscribed."""
    args = [
        sys.executable, "-m", "floor.cli", "serve", "--broker", f"mqtts://127.0.0.1:{sb.password_port}",
        "--archive", url, "--bind", bind, "--ca-file", str(sb.ca), "--client-id", COLLECTOR_ID,
        "--username", "collector-1", "--password-file", str(sb.dir / "collector-1.password"),
        "--pit-username", "pit-1", "--pit-password-file", str(sb.dir / "pit-1.password"),
        "--key", str(key_file(tmp_path, "floor").path),
    ]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log.open("ab"), cwd=ROOT)
    before = log.read_text().count("subscribed")
    until(lambda: log.read_text().count("subscribed") > before or proc.poll() is not None, 30, "serve to subscribe")
    assert proc.poll() is None, log.read_text()
    return proc


def stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0, log.read_text()


def archived(url: str, table: str) -> int:
    with Archive(url, create=False) as archive:
        return sum(1 for _ in archive.records(table))


def test_a_tables_credentials_with_the_collectors_client_id_leave_its_queued_records_to_it(
    sb: SecureBroker, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    log = tmp_path / "serve.log"
    records = signed_records(tmp_path, "t1", 5)
    stop(serve(sb, url, tmp_path, log), log)  # subscribed once, then down: the broker queues for its session
    enrolled = run_main(["shoe-floor", "enroll", "--archive", url, "--table", "t1",
                         "--public-key", key_file(tmp_path, "t1").public])  # fmt: skip
    assert enrolled.returncode == 0, enrolled.stderr
    table = Client(sb, "t1", client_id="shoe-casino-t1")
    try:
        assert all(table.publish("baccarat/casino/t1/record", r.to_json().encode()) for r in records)
    finally:
        table.close()
    marker(sb, "t1", b"marker")
    for clean_start in (False, True):
        assert steal_the_collectors_session(sb, clean_start=clean_start, certificate=False) == [
            "baccarat/casino/t1/ack"
        ]
    proc = serve(sb, url, tmp_path, log)  # restarted under its user name
    try:
        until(lambda: archived(url, "t1") == 5, 30, "the 5 records queued while the collector was down")
    finally:
        stop(proc, log)
    verified = run_main(["shoe-floor", "verify", "--archive", url])
    assert verified.returncode == 0, verified.stdout + verified.stderr
