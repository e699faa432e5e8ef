"""The floor link in the real daemon: ``shoe-controller run --floor`` as a process, the software shoe over a
pty, a real Mosquitto and a test floor that archives and acks. Slow."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from controller.journal import Journal
from floor_protocol.ack import Ack
from floor_protocol.signing import generate_key, record_message, verify
from tests.console import run_main
from tests.e2e.harness import Harness
from tests.floor_link.floorside import TEST_FLOOR_KEY, FloorSide, signed_ack
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = pytest.mark.e2e

FLOOR_ARGS = ("--site", "casino", "--table-id", "t1")


def journal_head(path: Path) -> int:
    with Journal.open(path, read_only=True) as j:
        return j.head()[0]


def stored_ack(path: Path) -> int:
    with Journal.open(path, read_only=True) as j:
        return j.floor_ack() or 0


wait_until = until  # tests/waiting.py


def assert_archive_is_the_journal(side: FloorSide, path: Path) -> None:
    with Journal.open(path, read_only=True) as j:
        journal = [r.for_floor("t1") for r in j.records()]
    assert [replace(side.by_seq[r.seq], sig=None) for r in journal] == journal
    assert set(side.by_seq) == {r.seq for r in journal}
    assert all(r.chain_ok() for r in journal)


def test_broker_killed_mid_shoe_and_daemon_sigkilled_nothing_lost(harness: Harness, broker: Mosquitto) -> None:
    side = FloorSide("127.0.0.1", broker.port)
    try:
        harness.start_sim("--decks", "2", seed=5, pace="0.004")
        harness.start_daemon("--floor", broker.url, *FLOOR_ARGS)
        side.wait(lambda f: f.contiguous >= 40, 60, "the first records")
        assert side.retained.get("status") == b"online"
        broker.kill()  # mid-shoe
        time.sleep(1.0)
        broker.start()
        assert harness.wait_sim(timeout=180) == 0
        harness.wait_daemon_log("shoe", timeout=5)
        wait_until(
            lambda: side.contiguous == journal_head(harness.journal), 90, "the backlog after the broker came back"
        )
        assert_archive_is_the_journal(side, harness.journal)
        cards = sum(1 for r in side.by_seq.values() if r.kind == "input" and r.body.get("kind") == "card")
        assert cards == sum(1 for e in harness.truth_events() if e["event"] == "card")
        state = side.state()
        assert state is not None and state["table"] == "t1" and state["counts"]["coups"] > 0

        # the floor's ack reaches the journal; a SIGKILLed table and link resume from it, not from record 1
        wait_until(lambda: stored_ack(harness.journal) == side.contiguous, 15, "the ack stored in the journal")
        acked = stored_ack(harness.journal)
        harness.stop_daemon(signal.SIGKILL)  # the table's process, and its floor link's (the Last Will's)
        assert harness.link_proc is not None
        harness.link_proc.send_signal(signal.SIGKILL)
        harness.link_proc.wait(10)
        side.wait(lambda f: f.retained.get("status") == b"offline", 20, "the Last Will")
        side.ack = False  # from now on only the stored ack tells the table where the floor stands
        side.client.publish("baccarat/casino/t1/ack", b"", qos=1, retain=True).wait_for_publish(5)  # clear it
        time.sleep(0.3)
        del side.received[:]
        harness.start_daemon("--floor", broker.url, *FLOOR_ARGS)
        side.wait(lambda f: f.retained.get("status") == b"online" and any(r.seq > acked for r in f.received),
                  30, "records after the restart")  # fmt: skip
        time.sleep(0.5)
        assert min(r.seq for r in side.received) == acked + 1
    finally:
        side.close()


def test_a_card_reaches_the_leds_while_the_broker_does_not_answer(harness: Harness, broker: Mosquitto) -> None:
    """The loop never waits for the link: with the broker stopped (alive but silent: the worst case for a
    TCP client) a whole shoe is dealt at full speed, every card journaled and acknowledged to the shoe."""
    assert broker.proc is not None
    side = FloorSide("127.0.0.1", broker.port)
    os.kill(broker.proc.pid, signal.SIGSTOP)
    try:
        harness.start_sim("--decks", "1", seed=8)
        harness.start_daemon("--floor", broker.url, *FLOOR_ARGS)
        assert harness.wait_sim(timeout=120) == 0
        truth = [e["card"] for e in harness.truth_events() if e["event"] == "card"]
        journal = [b["card"] for b in harness.journal_inputs() if b.get("kind") == "card"]
        assert journal == truth
    finally:
        os.kill(broker.proc.pid, signal.SIGCONT)
    try:
        wait_until(lambda: side.contiguous == journal_head(harness.journal), 90, "the shoe flushed after SIGCONT")
        assert_archive_is_the_journal(side, harness.journal)
    finally:
        side.close()


def settle(side: FloorSide, path: Path, timeout: float = 90) -> int:
    """Wait until the table is quiet, the floor holds every record and the table stored the floor's ack of
    them all; returns the head."""
    last = -1
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        head = journal_head(path)
        if head == last and side.contiguous == head and stored_ack(path) == head:
            return head
        last = head
        time.sleep(0.5)
    raise AssertionError(f"not settled: head {journal_head(path)}, floor {side.contiguous}, ack {stored_ack(path)}")


def table_says(journal: Path) -> tuple[str, str]:
    """``shoe-controller history`` and ``journal verify`` as an operator reads them."""
    history = run_main(["shoe-controller", "history", "--journal", str(journal)])
    verify = run_main(["shoe-controller", "journal", "verify", "--journal", str(journal)])
    assert history.returncode == 0 and verify.returncode == 0, (history.stderr, verify.stdout)
    return history.stdout, verify.stdout


def test_forged_acks_change_nothing_and_another_archive_gets_everything_again(
    harness: Harness, broker: Mosquitto
) -> None:
    """Issue 15, against the real table and link processes: forged retained acks at the head (unsigned, another
    key, the floor's signature over a wrong hash, another table's) are not stored and prune nothing; a signed
    ``ack 0`` of the same archive is no news (before: the whole journal sent again); a genuine ack of a second
    archive makes the table send everything it holds, and then its ack is the one stored."""
    side = FloorSide("127.0.0.1", broker.port)
    try:
        harness.start_sim("--decks", "1", seed=3)
        harness.start_daemon("--floor", broker.url, *FLOOR_ARGS)
        assert harness.wait_sim(timeout=120) == 0
        harness.wait_daemon_log("shoe link DOWN: no frame", timeout=30)  # journaled: then nothing more
        head = settle(side, harness.journal)
        said = table_says(harness.journal)
        assert f"floor ack: archive {side.archive} holds records through {head}" in said[1]
        side.ack = False
        with Journal.open(harness.journal, read_only=True) as j:
            genuine = signed_ack(j, head)
            forged = [
                Ack(genuine.archive, "t1", head, genuine.hash, "").to_json(),  # unsigned
                signed_ack(j, head, key=generate_key()).to_json(),  # another key
                Ack.signed(TEST_FLOOR_KEY, "archive-evil-0009", "t1", head, "ab" * 32).to_json(),  # a wrong hash
                signed_ack(j, head, table="t2", archive="archive-evil-0009").to_json(),  # another table's
            ]
        sent = len(side.received)
        for payload in forged:
            side.publish_ack(payload)
            time.sleep(0.3)
        side.publish_ack(side.ack_for(0))  # genuine, of the archive followed, but lower
        time.sleep(2.0)
        again = [r.seq for r in side.received[sent:] if r.seq <= head]
        assert again == [], f"{len(again)} records sent again"
        with Journal.open(harness.journal, read_only=True) as j:
            stored = j.floor_ack_record("t1")
            assert stored is not None and (stored.archive, stored.seq, stored.hash) == (
                side.archive,
                head,
                genuine.hash,
            )
            assert j.anchor()[0] == 0 and j.head()[0] == head
        assert table_says(harness.journal) == said
        link_log = harness.companion_logs[-1].read_text()
        for why in ("not a well-formed signed ack", "not signed by the floor's key", "its hash is not", "another"):
            assert why in link_log, why

        # the floor's archive replaced by an empty one (another id): its ack 0 asks for everything again
        with side._lock:
            side.by_seq.clear()
            side.contiguous = 0
            side.archive = "archive-new-0002"
            del side.received[:]
            side.ack = True
        side.publish_ack(side.ack_for(0))
        # at once, not by the stuck ack's resend (10 s): within 9 s
        wait_until(lambda: side.contiguous == head, 9, "every record sent again to the new archive")
        assert sorted({r.seq for r in side.received}) == list(range(1, head + 1))
        wait_until(lambda: stored_ack(harness.journal) == head, 20, "the new archive's ack stored")
        with Journal.open(harness.journal, read_only=True) as j:
            stored = j.floor_ack_record("t1")
            assert stored is not None and (stored.archive, stored.seq) == ("archive-new-0002", head)
        assert_archive_is_the_journal(side, harness.journal)
        table_public = harness.table_key.key.public_key()  # every record on the wire signed by the table's key
        assert all(verify(table_public, record_message("t1", r.seq, r.hash), r.sig) for r in side.received)
    finally:
        side.close()
