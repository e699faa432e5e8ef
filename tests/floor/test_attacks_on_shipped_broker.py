"""The attacker of issue 15, on the shipped broker: one table's own credentials (t1's password on the shipped
TLS listener, the shipped ACL) against a real ``shoe-floor serve`` on SQLite and on PostgreSQL.

With t1's credentials the attacker publishes, on t1's own record topic, invented history with valid sha256
links (unsigned, and signed by a key of its own), and each poison that used to stop the floor; it tries to
write t1's ack and another table's record. Then the genuine table publishes its signed records. The collector
is still running, has archived exactly the genuine records, refused the rest as ``forged`` or ``refused``
(counted on its metrics), and its retained ack names the genuine head and verifies with the floor's key;
``shoe-floor verify`` passes. Before issue 15 the forged history was archived as the table's, its ack moved
over it, and each poison made ``serve`` exit.
"""

from __future__ import annotations

import re
import signal
import urllib.request
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from floor.archive import Archive
from floor_protocol.ack import parse_ack
from floor_protocol.signing import parse_public_key, record_message, sign
from tests.broker.test_collector_hijack import serve, signed_records
from tests.broker.test_shipped_broker import Client
from tests.console import run_main
from tests.floor.test_poison import POISONS, linked
from tests.keys import key_file
from tests.servers import free_port
from tests.shipped_broker import SecureBroker
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e


def refused_total(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        body = response.read()
    found = re.search(rb"^shoe_floor_refused_total (\S+)$", body, re.M)
    assert found is not None, body[:300]
    return float(found.group(1))


def test_one_tables_credentials_cannot_forge_history_stop_the_floor_or_move_an_ack(
    sb: SecureBroker, archive_url: str, tmp_path: Path
) -> None:
    genuine = signed_records(tmp_path, "t1", 6)
    with Archive(archive_url):
        pass  # the floor's archive, made at install; enroll needs it
    enrolled = run_main(["shoe-floor", "enroll", "--archive", archive_url, "--table", "t1",
                         "--public-key", key_file(tmp_path, "t1").public])  # fmt: skip
    assert enrolled.returncode == 0, enrolled.stderr
    log, port = tmp_path / "serve.log", free_port()
    proc = serve(sb, archive_url, tmp_path, log, f"127.0.0.1:{port}")
    attacker = Client(sb, "t1", client_id="shoe-casino-t1")
    try:
        # Invented history in place of the genuine records 1-3: valid links, unsigned or signed by the attacker.
        own = key_file(tmp_path, "attacker")
        forged = []
        prev = genuine[0].prev
        for r in genuine[:3]:
            data = TableRecord.from_json(linked(r, body={"winner": "banker"}, prev=prev)).to_dict()
            prev = data["hash"]
            forged.append(TableRecord.from_dict(data))
        unsigned = [r.to_json().encode() for r in forged]
        resigned = [
            TableRecord.from_dict({**r.to_dict(), "sig": sign(own.key, record_message("t1", r.seq, r.hash))})
            .to_json()
            .encode()
            for r in forged
        ]
        poisons = [make(genuine[0]) for make in POISONS.values()]
        for payload in [*unsigned, *resigned, *poisons]:
            assert attacker.publish("baccarat/casino/t1/record", payload)  # the ACL lets t1 write here ...
        # ... and nowhere else: not its own ack, not another table's records
        assert not attacker.publish("baccarat/casino/t1/ack", b'{"v":1}', retain=True)
        assert not attacker.publish("baccarat/casino/t2/record", genuine[0].to_json().encode())
        expected = len(unsigned) + len(resigned) + len(poisons)
        until(lambda: refused_total(port) >= expected, 30, f"{expected} messages refused")
        assert proc.poll() is None, log.read_text()
        for r in genuine:  # the genuine table, on its own connection
            assert attacker.publish("baccarat/casino/t1/record", r.to_json().encode())
        with Archive(archive_url, create=False) as archive:
            until(lambda: sum(1 for _ in archive.records("t1")) == len(genuine), 30, "the genuine records")
            stored = list(archive.records("t1"))
            kinds = [item.kind for item in archive.feed(limit=100)]
        assert [r.hash for r in stored] == [r.hash for r in genuine]
        # the noise budget: the table's first 5 refusals this minute are alerts each (the forged ones came
        # first), the rest are counted (above) and said in the minute's summary
        assert kinds.count("forged") == 5
        assert proc.poll() is None, log.read_text()
        # The retained ack: the genuine head, signed by the floor, naming this archive.
        reader = Client(sb, "collector-2", client_id="ack-reader")
        try:
            reader.subscribe("baccarat/casino/t1/ack")
            until(lambda: any(t.endswith("/t1/ack") for t in reader.topics()), 10, "the retained ack")
            ack = parse_ack(next(p for t, p in reader.messages if t.endswith("/t1/ack")))
        finally:
            reader.close()
        assert ack is not None and ack.seq == genuine[-1].seq and ack.hash == genuine[-1].hash
        assert ack.verify(parse_public_key(key_file(tmp_path, "floor").public))
    finally:
        attacker.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, log.read_text()
    verified = run_main(["shoe-floor", "verify", "--archive", archive_url])
    assert verified.returncode == 0, verified.stdout + verified.stderr
