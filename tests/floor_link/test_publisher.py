"""The floor link's publisher against a real Mosquitto, with a journal written by the test (the daemon's part
is in test_publisher_e2e.py)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from controller.config import FloorSection
from controller.game.cards import Card
from controller.game.public import PublicProjector, PublicView
from controller.game.records import RECORD_VERSION, input_body
from controller.game.table import CardDrawn, TableRules, TableState
from controller.journal import Journal
from controller.journal.ack import refusal
from controller.link import floor_link
from controller.link.floor_link import FloorLink, state_message
from controller.table.loop import ShoePort, TableLoop
from controller.table.wire import AsciiWire
from floor_protocol.ack import Ack
from floor_protocol.signing import record_message, verify
from tests.floor_link.floorside import (
    TEST_FLOOR_KEY,
    TEST_TABLE_KEY,
    FloorSide,
    ordered_without_duplicates,
    signed_ack,
)
from tests.servers import Mosquitto
from tests.waiting import until


def write_cards(journal: Journal, n: int, start: int = 0) -> None:
    tokens = ["AS", "2H", "3D", "4C", "5S", "6H", "7D", "8C", "9S", "TH", "JD", "QC", "KS"]
    for i in range(start, start + n):
        journal.append(input_body(CardDrawn(Card.parse(tokens[i % 13])), source="shoe"), session=1, number=i + 1)


def section(broker: Mosquitto, **extra: object) -> FloorSection:
    return FloorSection.model_validate(
        {"enabled": True, "broker": broker.url, "site": "casino", "table": "t1", **extra}
    )


class Link:
    """A FloorLink whose acks are judged and stored as the loop would store them (tests have no loop here)."""

    def __init__(self, broker: Mosquitto, path: Path, **kwargs: object) -> None:
        self.writer = Journal.open(path)
        self.posted: list[Ack] = []
        self.lock = threading.Lock()  # one writer at a time, as the table loop is

        def post(ack: Ack) -> None:
            self.posted.append(ack)
            with self.lock:
                if refusal(ack, self.writer, table="t1", floor_key=TEST_FLOOR_KEY.public_key()) is None:
                    self.writer.store_floor_ack(ack)

        kwargs.setdefault("ack_store_interval", 0.0)
        kwargs.setdefault("key", TEST_TABLE_KEY)
        kwargs.setdefault("floor_key", TEST_FLOOR_KEY.public_key())
        self.link = FloorLink(section(broker), path, post, **kwargs)  # type: ignore[arg-type]

    def write(self, n: int, start: int = 0) -> None:
        with self.lock:
            write_cards(self.writer, n, start)
        self.link.wake()

    def close(self) -> None:
        self.link.close()
        self.writer.close()


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def floor(broker: Mosquitto) -> Iterator[FloorSide]:
    side = FloorSide("127.0.0.1", broker.port)
    yield side
    side.close()


@pytest.mark.e2e
def test_every_record_arrives_in_order_and_the_ack_is_kept(
    broker: Mosquitto, journal_path: Path, floor: FloorSide
) -> None:
    link = Link(broker, journal_path)
    link.write(300)
    link.link.start()
    try:
        floor.wait(lambda f: f.contiguous == 300, 30, "300 records")
        link.write(50, start=300)  # records committed while the link runs
        link.link.wake()
        floor.wait(lambda f: f.contiguous == 350, 30, "350 records")
        until(lambda: link.writer.floor_ack() == 350, 10, "the stored ack reaching 350")
    finally:
        link.close()
    assert ordered_without_duplicates(floor.received)
    records = [floor.by_seq[i] for i in range(1, 351)]
    assert all(r.chain_ok() for r in records)
    assert all(b.prev == a.hash for a, b in itertools.pairwise(records))
    assert all(r.table == "t1" and r.v == RECORD_VERSION for r in records)
    with Journal.open(journal_path, read_only=True) as j:
        assert j.floor_ack() == 350
        assert [r.for_floor("t1") for r in j.records()] == [replace(r, sig=None) for r in records]
    # every record on the wire is signed by the table's key, over its table, seq and hash
    public = TEST_TABLE_KEY.public_key()
    assert all(verify(public, record_message("t1", r.seq, r.hash), r.sig) for r in floor.received)
    assert not verify(TEST_FLOOR_KEY.public_key(), record_message("t1", 1, records[0].hash), records[0].sig)
    floor.wait(lambda f: f.retained.get("status") == b"offline", 10, "offline after a clean stop")


@pytest.mark.e2e
def test_restart_sends_from_the_stored_ack_only(broker: Mosquitto, journal_path: Path) -> None:
    with Journal.open(journal_path) as j:
        write_cards(j, 100)
        j.store_floor_ack(signed_ack(j, 60))
    side = FloorSide("127.0.0.1", broker.port, ack=False)  # a floor that says nothing: only the stored ack counts
    link = Link(broker, journal_path)
    link.link.start()
    try:
        side.wait(lambda f: 100 in f.by_seq, 30, "record 100")
        side.wait(lambda f: len(f.received) == link.link.sent, 10, "every record the link sent")
    finally:
        link.close()
        side.close()
    assert min(r.seq for r in side.received) == 61
    assert [r.seq for r in side.received] == list(range(61, 101))


@pytest.mark.e2e
def test_the_window_bounds_records_in_flight_while_the_broker_does_not_answer(
    broker: Mosquitto, journal_path: Path
) -> None:
    link = Link(broker, journal_path, max_inflight=16)
    link.write(2000)
    side = FloorSide("127.0.0.1", broker.port)
    link.link.start()
    try:
        side.wait(lambda f: f.contiguous >= 1, 30, "the first record")
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGSTOP)  # alive, connected, but no PUBACK ever comes
        try:
            time.sleep(1.0)
            sent = link.link.sent
            time.sleep(1.0)
            assert link.link.sent == sent, "the link kept sending without PUBACKs"
            assert sent <= side.contiguous + 16 + 16, f"{sent} sent with only {side.contiguous} through"
        finally:
            os.kill(broker.proc.pid, signal.SIGCONT)
        side.wait(lambda f: f.contiguous == 2000, 60, "all 2000 records after the broker woke")
    finally:
        link.close()
        side.close()


@pytest.mark.e2e
def test_the_window_stays_within_the_brokers_receive_maximum(tmp_path: Path, journal_path: Path) -> None:
    # MQTT 5: a client must not have more QoS 1 messages in flight than the broker's Receive Maximum (Mosquitto
    # grants 20 by default; a broker that enforces it cuts the connection or refuses the message). The link
    # keeps a few under what the broker grants, and every record still arrives without a resend.
    server = Mosquitto(tmp_path / "mq-20")
    server.extra = ["max_inflight_messages 20", f"listener {server.port} 127.0.0.1", "allow_anonymous true"]
    server.start()
    link = Link(server, journal_path, resend_after=120.0)  # a dropped record would wait two minutes
    link.write(3000)
    side = FloorSide("127.0.0.1", server.port)
    link.link.start()
    try:
        side.wait(lambda f: f.contiguous == 3000, 60, "all 3000 records")
    finally:
        link.close()
        side.close()
        server.kill()
    assert link.link.window == 16
    assert link.link.rewinds == 0


@pytest.mark.e2e
def test_the_link_outlives_a_silent_broker_longer_than_its_resend_interval(
    broker: Mosquitto, journal_path: Path
) -> None:
    """A broker (or a network path) that keeps the connection open and answers nothing: each time the ack is
    stuck for ``resend_after`` the link goes back to it and sends its window again, on top of what paho still
    holds unacknowledged, until paho's outgoing queue is full. The link must wait, not die."""
    link = Link(broker, journal_path, max_inflight=16, resend_after=0.3, resend_max=0.3)
    link.write(2000)
    side = FloorSide("127.0.0.1", broker.port)
    link.link.start()
    try:
        side.wait(lambda f: f.contiguous >= 1, 30, "the first record")
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline:
                assert link.link._thread is not None and link.link._thread.is_alive(), "the floor link died"
                time.sleep(0.05)
            assert link.link.rewinds >= 3
        finally:
            os.kill(broker.proc.pid, signal.SIGCONT)
        side.wait(lambda f: f.contiguous == 2000, 60, "all 2000 records after the broker woke")
    finally:
        link.close()
        side.close()


@pytest.mark.e2e
def test_broker_killed_mid_stream_then_the_backlog_flushes(broker: Mosquitto, journal_path: Path) -> None:
    # The floor's subscription may come back after the table has resent (the killed broker lost the session):
    # the ack then stops at the gap and the table sends again from it.
    link = Link(broker, journal_path, resend_after=1.0)
    link.write(200)
    side = FloorSide("127.0.0.1", broker.port)
    link.link.start()
    try:
        side.wait(lambda f: f.contiguous == 200, 30, "200 records")
        broker.kill()
        link.write(1000, start=200)  # the backlog grows in the journal while the broker is down
        link.link.wake()
        time.sleep(0.5)
        broker.start()
        side.wait(lambda f: f.contiguous == 1200, 60, "the backlog after the restart")
    finally:
        link.close()
        side.close()
    assert link.link.connects >= 2
    assert all(side.by_seq[i].chain_ok() for i in range(1, 1201))


@pytest.mark.e2e
def test_a_stuck_ack_makes_the_link_send_again_from_it(broker: Mosquitto, journal_path: Path) -> None:
    side = FloorSide("127.0.0.1", broker.port, ack=False)
    link = Link(broker, journal_path, resend_after=0.5)
    link.write(20)
    side.publish_ack(signed_ack(link.writer, 5))
    link.link.start()
    try:
        side.wait(lambda f: sum(r.seq == 6 for r in f.received) >= 2, 30, "record 6 sent again")
    finally:
        link.close()
        side.close()
    assert link.link.rewinds >= 1
    again = [r for r in side.received if r.seq == 6]
    assert all(r == again[0] for r in again)  # a duplicate carries the same seq and content
    assert 5 in [a.seq for a in link.posted]  # the floor's ack went to the loop to be stored


@pytest.mark.e2e
def test_status_online_while_running_and_state_is_retained(
    broker: Mosquitto, journal_path: Path, floor: FloorSide
) -> None:
    link = Link(broker, journal_path, state_interval=0.05)
    link.link.start()
    try:
        floor.wait(lambda f: f.retained.get("status") == b"online", 20, "status online")
        state = TableState(TableRules())
        link.link.show(PublicProjector().view(state.view()))
        floor.wait(lambda f: f.state() is not None, 20, "a state message")
    finally:
        link.close()
    message = floor.state()
    assert message is not None and message["shoe"] == state.view().shoe_number and message["table"] == "t1"
    assert message["counts"]["coups"] == 0 and message["journal"] == {"head": 0, "acked": 0}


@pytest.mark.e2e
def test_a_view_before_the_table_said_one_sends_no_state_and_the_records_go_on(
    broker: Mosquitto, journal_path: Path, floor: FloorSide
) -> None:
    """The link shown the view of a table it has not heard yet (no shoe, no coup, nothing due): no state
    message is made of it, nothing fails, and the records and the next real view go out (the CI run of
    2026-12-03: that view killed the link's thread, and its table stayed offline on the pit for good)."""
    link = Link(broker, journal_path, state_interval=0.05)
    link.write(20)
    link.link.show(PublicView.starting(PublicProjector().reveal))
    link.link.start()
    try:
        floor.wait(lambda f: f.contiguous == 20, 30, "20 records")
        link.write(5, start=20)
        floor.wait(lambda f: f.contiguous == 25, 30, "25 records")
        assert floor.state() is None
        state = TableState(TableRules())
        link.link.show(PublicProjector().view(state.view()))
        floor.wait(lambda f: f.state() is not None, 20, "a state message")
    finally:
        link.close()
    assert (link.link.failures, link.link.states_unsent) == (0, 0)


@pytest.mark.e2e
def test_a_failure_the_link_did_not_foresee_starts_its_publishing_again(
    broker: Mosquitto, journal_path: Path, floor: FloorSide, mocker: MockerFixture
) -> None:
    """A bug in the publishing (here: building the state raises once) is logged, counted, and the link
    starts again from the floor's ack: every record still arrives, the state too."""
    real = floor_link.state_message
    calls = []

    def once_broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug")
        return real(*args, **kwargs)

    mocker.patch.object(floor_link, "state_message", once_broken)
    mocker.patch.object(floor_link, "RESTART_AFTER", 0.1)
    link = Link(broker, journal_path, state_interval=0.05)
    link.write(20)
    link.link.show(PublicProjector().view(TableState(TableRules()).view()))
    link.link.start()
    try:
        floor.wait(lambda f: f.state() is not None, 30, "a state message after the failure")
        link.write(30, start=20)
        floor.wait(lambda f: f.contiguous == 50, 30, "50 records")
    finally:
        link.close()
    assert link.link.failures == 1 and len(calls) >= 2


def test_a_view_the_state_model_refuses_is_counted_each_time_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A view that makes no state message (a shoe but no coup: not a view the table sends) is counted each
    time it comes and logged once (a view comes with every card), and nothing is published of it."""
    from controller.game.public import CoupState, PublicCoup, PublicShoe
    from controller.journal.reader import JournalReader

    Journal.open(tmp_path / "j.db").close()
    settings = FloorSection.model_validate(
        {"enabled": True, "broker": "mqtt://127.0.0.1:1", "site": "s", "table": "t1"}
    )
    link = FloorLink(
        settings, tmp_path / "j.db", lambda ack: None, key=TEST_TABLE_KEY, floor_key=TEST_FLOOR_KEY.public_key(),
        signer_process=False,
    )  # fmt: skip
    bad = PublicView(PublicProjector().reveal, PublicShoe(1, None, 40), PublicCoup(None, CoupState.WAITING))
    journal = JournalReader.open_read_only(tmp_path / "j.db")
    try:
        with caplog.at_level("ERROR", logger="controller.link.floor_link"):
            for _ in range(3):
                link._publish_state(journal, bad)
    finally:
        journal.close()
    assert link.states_unsent == 3
    said = [r for r in caplog.records if "makes no state message" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0].getMessage()


def test_state_under_on_declare_shows_nothing_of_the_coup_being_dealt() -> None:
    from controller.game.table import NewShoePressed

    state = TableState(TableRules(burn_rule=__import__("controller.game.shoe", fromlist=["BurnRule"]).BurnRule(
        mode=__import__("controller.game.shoe", fromlist=["BurnMode"]).BurnMode.NONE)))  # fmt: skip
    state.apply(NewShoePressed())
    for token in ("9S", "KH", "QC", "8D"):  # player 9, banker 8: naturals, the coup is complete, not declared
        state.apply(CardDrawn(Card.parse(token)))
    view = state.view()
    assert len(view.player) + len(view.banker) == 4
    shown = state_message(PublicProjector("on_read").view(view), [], table="t1", site="s", head=9, acked=3)
    hidden = state_message(PublicProjector("on_declare").view(view), [], table="t1", site="s", head=9, acked=3)
    assert shown["player"] and shown["result"] is not None and shown["cards_dealt"] == 4
    text = json.dumps(hidden)
    assert "player" not in hidden and "banker" not in hidden and "result" not in hidden
    # the squeeze is applied in the table process: not even how many cards are out leaves it
    assert hidden["due"] == "hidden" and hidden["cards_dealt"] is None
    for token in ("9S", "KH", "8D", "QC"):
        assert token not in text


def test_the_table_loop_is_idle_between_cards_and_busy_while_it_handles_one(tmp_path: Path) -> None:
    seen: list[bool] = []

    class Watcher:
        name = "watcher"

        def update(self, view: object, notices: object) -> None:
            seen.append(loop.idle.is_set())

        def close(self) -> None:
            pass

    journal = Journal.open(tmp_path / "j.db")
    loop = TableLoop(TableState(), journal, [ShoePort(AsciiWire(), lambda data: None)], [Watcher()])
    try:
        assert loop.idle.is_set()
        card = CardDrawn(Card.parse("9H"))
        loop._apply(card, input_body(card, source="shoe"), None, None)
        assert seen == [False]  # the sinks (the LEDs) run while the loop is busy
        assert not loop.idle.is_set()
        loop.flush()
        assert loop.idle.is_set()  # committed and acknowledged: idle again
    finally:
        journal.close()
