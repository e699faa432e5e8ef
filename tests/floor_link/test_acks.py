"""The floor link believes only the floor's signed word about its own records (issue 15): a forged ack at or
below the head changes nothing and is counted, a lower ack of the same archive is no news, and an ack of
another archive makes the link send again everything the journal holds. Real Mosquitto, real journal."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from controller.game.records import GENESIS_HASH
from controller.journal import Journal
from controller.link.metrics import link_gauges
from floor_protocol.ack import Ack
from floor_protocol.signing import generate_key, sign
from tests.floor_link.floorside import TEST_FLOOR_KEY, FloorSide, signed_ack
from tests.floor_link.test_publisher import Link
from tests.servers import Mosquitto
from tests.waiting import until


@pytest.fixture
def link(broker: Mosquitto, tmp_path: Path) -> Iterator[Link]:
    link = Link(broker, tmp_path / "journal.db")
    yield link
    link.close()


def settled(link: Link, side: FloorSide, seq: int) -> None:
    """Every record through ``seq`` archived by ``side`` and its ack stored in the journal."""
    side.wait(lambda f: f.contiguous == seq, 30, f"{seq} records")
    until(lambda: link.writer.floor_ack() == seq, 10, f"the stored ack reaching {seq}")
    assert link.writer.floor_ack() == seq


def forgeries(journal: Journal) -> dict[str, bytes]:
    """Acks an attacker on the broker could publish, each at or below the head (record 50 of 100)."""
    genuine = signed_ack(journal, 50)
    other_key = generate_key()
    wrong_hash = "ab" * 32
    return {
        "malformed": b"50",  # the old, unsigned ack
        "no sig": Ack(genuine.archive, "t1", 50, genuine.hash, "").to_json(),
        "a sig of zeros": Ack(genuine.archive, "t1", 50, genuine.hash, "A" * 86 + "==").to_json(),
        "another key": signed_ack(journal, 50, key=other_key).to_json(),
        "a wrong hash": Ack.signed(TEST_FLOOR_KEY, genuine.archive, "t1", 50, wrong_hash).to_json(),
        "another table": signed_ack(journal, 50, table="t2").to_json(),
        "genesis hash above 0": Ack.signed(TEST_FLOOR_KEY, genuine.archive, "t1", 50, GENESIS_HASH).to_json(),
        "another archive, forged": Ack(
            "archive-evil-0001", "t1", 50, genuine.hash, sign(other_key, b"anything")
        ).to_json(),
    }


@pytest.mark.e2e
def test_forged_acks_at_or_below_the_head_change_nothing_and_are_counted(broker: Mosquitto, link: Link) -> None:
    side = FloorSide("127.0.0.1", broker.port)
    link.write(100)
    link.link.start()
    try:
        side.wait(lambda f: f.contiguous == 100, 30, "100 records")
        side.ack = False  # the genuine floor says 100 and then nothing more
        settled(link, side, 100)
        before = (link.link.acked, link.link.believed, len(link.posted), link.writer.floor_ack_record("t1"))
        sent = len(side.received)
        attacks = forgeries(link.writer)
        for payload in attacks.values():
            side.publish_ack(payload)
            time.sleep(0.15)
        side.wait(lambda f: link.link.ack_refusals.total == len(attacks), 10, "every forgery judged")
        time.sleep(0.3)
        after = (link.link.acked, link.link.believed, len(link.posted), link.writer.floor_ack_record("t1"))
        assert after == before
        assert len(side.received) == sent  # nothing sent again either
    finally:
        side.close()
    assert dict(link.link.ack_refusals.counts) == {"malformed": 2, "signature": 3, "hash": 2, "table": 1}
    # and in the link's metrics
    registry = CollectorRegistry(auto_describe=False)
    link_gauges(registry, link.link, link.link)
    text = generate_latest(registry).decode()
    assert 'shoe_floor_acks_refused_total{reason="signature"} 3.0' in text
    assert 'shoe_floor_acks_refused_total{reason="malformed"} 2.0' in text
    assert 'shoe_floor_acks_refused_total{reason="pruned"} 0.0' in text


@pytest.mark.e2e
def test_a_forged_ack_does_not_move_a_fresh_tables_ack(broker: Mosquitto, link: Link) -> None:
    side = FloorSide("127.0.0.1", broker.port, ack=False)  # no genuine ack yet
    link.write(100)
    link.link.start()
    try:
        side.wait(lambda f: f.retained.get("status") == b"online", 20, "the link online")
        for payload in forgeries(link.writer).values():
            side.publish_ack(payload)
            time.sleep(0.15)
        side.wait(lambda f: 100 in f.by_seq, 30, "record 100")
        time.sleep(0.5)
    finally:
        side.close()
    assert link.link.acked == 0 and link.link.believed is None and link.posted == []
    assert link.writer.floor_ack() is None
    assert link.link.ack_refusals.total >= 1


@pytest.mark.e2e
def test_ack_zero_from_the_same_archive_is_no_news(broker: Mosquitto, link: Link) -> None:
    """Before: one ``ack 0`` made a table resend its whole journal (2,408 of 2,408 records)."""
    side = FloorSide("127.0.0.1", broker.port)
    link.write(200)
    link.link.start()
    try:
        settled(link, side, 200)
        side.ack = False
        sent = len(side.received)
        side.publish_ack(signed_ack(link.writer, 0))  # genuine, signed, of the archive followed: but lower
        side.publish_ack(signed_ack(link.writer, 120))
        time.sleep(1.5)
        assert len(side.received) == sent, f"{len(side.received) - sent} records sent again"
    finally:
        side.close()
    assert link.link.acked == 200 and link.link.rewinds == 0 and link.link.ack_refusals.total == 0
    stored = link.writer.floor_ack_record("t1")
    assert stored is not None and (stored.archive, stored.seq) == ("archive-test-0001", 200)


@pytest.mark.e2e
def test_an_ack_of_another_archive_makes_the_table_send_everything_again(broker: Mosquitto, tmp_path: Path) -> None:
    """A new, empty or restored archive: its ack 0 (genuine) means it holds none of what the old one acked. At
    once: not after the stuck ack's resend interval (two minutes here)."""
    link = Link(broker, tmp_path / "journal.db", resend_after=120.0)
    side = FloorSide("127.0.0.1", broker.port)
    link.write(150)
    link.link.start()
    try:
        settled(link, side, 150)
        # the floor's archive replaced by an empty one: another id, nothing held
        with side._lock:
            side.by_seq.clear()
            side.contiguous = 0
            side.archive = "archive-new-0002"
            del side.received[:]
        side.publish_ack(side.ack_for(0))
        side.wait(lambda f: f.contiguous == 150, 20, "every record sent again to the new archive")

        def stored_new() -> bool:
            stored = link.writer.floor_ack_record("t1")
            return stored is not None and stored.archive == "archive-new-0002" and stored.seq == 150

        until(stored_new, 10, "the new archive's ack of 150 stored")
        assert sorted({r.seq for r in side.received}) == list(range(1, 151))
        assert link.link.archive_changes == 1
        stored = link.writer.floor_ack_record("t1")
        assert stored is not None and (stored.archive, stored.seq) == ("archive-new-0002", 150)
    finally:
        side.close()
        link.close()
