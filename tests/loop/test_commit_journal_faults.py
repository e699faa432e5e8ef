"""The table loop when the journal cannot take a commit: nothing acknowledged, the inputs kept in order and
retried, the alarm shown (panel view, notices), and once the journal writes again every input is there exactly
once, in order, and the live state is the journal's replay. Real SQLite files on a real, really full tmpfs."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from controller.game.records import REPLAYED_KINDS, input_from_body
from controller.game.table import (
    Alarm,
    AlarmCleared,
    AlarmRaised,
    Lamp,
    Notice,
    TableRules,
    TableState,
    TableView,
)
from controller.journal import Journal
from controller.table.loop import LoopConfig, ShoePort, Stop, TableLoop, WireBytes
from controller.table.wire import AsciiWire, BinaryWire
from firmware_protocol import messages as m
from firmware_protocol.session import Acked, ControllerSession, ShoeSession
from tests.smallfs import SmallFs, small_fs
from tests.waiting import until

RULES = TableRules(decks=1)
# burn: a 3 exposes 3 burn cards; then a coup P1 B1 P2 B2 (Player 9, a natural)
DEAL = [(3, "H"), (2, "C"), (3, "D"), (4, "S"), (6, "H"), (7, "H"), (3, "S"), (1, "H")]


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.notices: list[Notice] = []
        self.last: TableView | None = None

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        self.last = view
        self.notices.extend(notices)

    def close(self) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[SmallFs]:
    with small_fs(tmp_path, "24m") as fs:
        yield fs


def replayed(journal: Journal) -> TableState:
    state = TableState(RULES)
    for _id, body in journal.inputs():
        if body["kind"] in REPLAYED_KINDS:
            table_input = input_from_body(body)
            assert table_input is not None  # a replayed kind is always a table input
            state.apply(table_input)
    return state


def acks(shoe: ShoeSession, written: list[bytes], now: float) -> list[int]:
    data = b"".join(written)
    written.clear()
    return [e.up_to for e in shoe.receive(data, now) if isinstance(e, Acked)]


@pytest.mark.e2e
def test_disk_full_nothing_acked_alarm_shown_then_resumes_with_every_card_once_in_order(fs: SmallFs) -> None:
    path = fs.root / "journal.db"
    written: list[bytes] = []
    recorder = Recorder()
    clock = Clock()
    shoe = ShoeSession(0x51)
    shoe.start(0.0)
    with Journal.open_for_table(path) as journal:
        wire = BinaryWire(ControllerSession())
        loop = TableLoop(
            TableState(RULES), journal, [ShoePort(wire, written.append)], [recorder], LoopConfig(clock=clock)
        )
        loop.handle(WireBytes(shoe.poll(0.0), 0.0))  # HELLO, heartbeat
        loop.flush()
        assert acks(shoe, written, 0.0) == [1]
        for rank, suit in DEAL[:3]:
            shoe.send(m.CardRead(rank, suit), 0.1)
        loop.handle(WireBytes(shoe.poll(0.1), 0.1))
        loop.flush()
        assert acks(shoe, written, 0.1) == [4]

        fs.fill()
        for rank, suit in DEAL[3:]:
            shoe.send(m.CardRead(rank, suit), 0.2)
        loop.handle(WireBytes(shoe.poll(0.2), 0.2))
        loop.flush()
        assert acks(shoe, written, 0.2) == []  # write-ahead: nothing the journal refused is acknowledged
        assert written == []
        assert shoe.unacked == len(DEAL) - 3  # the shoe holds the cards
        view = loop.view()
        assert Alarm.JOURNAL_FULL in view.alarms and Lamp.FAULT in view.lamps
        assert recorder.last is not None and Alarm.JOURNAL_FULL in recorder.last.alarms
        assert [n.alarm for n in recorder.notices if isinstance(n, AlarmRaised)] == [Alarm.JOURNAL_FULL]
        assert Alarm.JOURNAL_FULL not in loop.state.view().alarms  # the pure state knows nothing of the disk

        # the shoe resends what it holds; the loop keeps retrying (once a second), still acknowledging nothing
        clock.now += 1.0
        loop.handle(WireBytes(shoe.poll(5.0), 5.0))
        loop.flush()
        assert acks(shoe, written, 5.0) == []
        assert loop.commit.stats.journal_faults == 2

        fs.free()
        loop.flush()  # not yet: the retry is due a second after the last one
        assert acks(shoe, written, 5.1) == []
        clock.now += 1.0
        loop.flush()
        assert acks(shoe, written, 5.2) == [len(DEAL) + 1]
        assert Alarm.JOURNAL_FULL not in loop.view().alarms
        assert any(isinstance(n, AlarmCleared) and n.alarm is Alarm.JOURNAL_FULL for n in recorder.notices)

        cards = [b["card"] for _id, b in journal.inputs() if b["kind"] == "card"]
        assert cards == [f"{'A23456789TJQK'[r - 1]}{s}" for r, s in DEAL]
        faults = [(b["event"], b["alarm"]) for _id, b in journal.inputs() if b["kind"] == "journal_fault"]
        assert faults == [("raised", "journal_full"), ("cleared", "journal_full")]
        assert replayed(journal).view() == loop.state.view()
        assert journal.verify() == []


def test_a_deleted_journal_raises_journal_fault_and_is_restored_without_losing_a_card(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    written: list[bytes] = []
    recorder = Recorder()
    clock = Clock()
    shoe = ShoeSession(0x52)
    shoe.start(0.0)
    with Journal.open_for_table(path, min_free=0) as journal:
        wire = BinaryWire(ControllerSession())
        loop = TableLoop(
            TableState(RULES), journal, [ShoePort(wire, written.append)], [recorder], LoopConfig(clock=clock)
        )
        loop.handle(WireBytes(shoe.poll(0.0), 0.0))
        for rank, suit in DEAL[:4]:
            shoe.send(m.CardRead(rank, suit), 0.1)
        loop.handle(WireBytes(shoe.poll(0.1), 0.1))
        loop.flush()
        assert acks(shoe, written, 0.1) == [5]
        path.unlink()
        for rank, suit in DEAL[4:]:
            shoe.send(m.CardRead(rank, suit), 0.2)
        loop.handle(WireBytes(shoe.poll(0.2), 0.2))
        loop.flush()
        assert acks(shoe, written, 0.2) == []
        assert Alarm.JOURNAL_FAULT in loop.view().alarms
        clock.now += 1.0
        loop.flush()
        assert acks(shoe, written, 0.3) == [len(DEAL) + 1]
        assert loop.view().alarms == loop.state.view().alarms
    with Journal.open(path, read_only=True) as j:
        assert [b["card"] for _id, b in j.inputs() if b["kind"] == "card"] == [
            f"{'A23456789TJQK'[r - 1]}{s}" for r, s in DEAL
        ]
        assert j.verify() == []


@pytest.mark.e2e
def test_a_disk_filling_while_the_table_is_idle_shows_journal_full_before_the_next_card(fs: SmallFs) -> None:
    # Nothing is dealt; the disk fills (another program's log, say). The running loop's quiet-time check finds
    # the journal's headroom gone and shows JOURNAL FULL now, not when the dealer draws the next card; it
    # clears by itself once space returns, with the fault's records journaled.
    recorder = Recorder()
    with Journal.open_for_table(fs.root / "journal.db") as journal:
        loop = TableLoop(
            TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)], [recorder], LoopConfig(tick=0.05)
        )
        runner = threading.Thread(target=loop.run, name="test-loop")
        runner.start()
        try:
            fs.fill()
            until(lambda: Alarm.JOURNAL_FULL in loop.view().alarms, 10, "JOURNAL FULL shown while idle")
            assert [n.alarm for n in recorder.notices if isinstance(n, AlarmRaised)] == [Alarm.JOURNAL_FULL]
            fs.free()
            until(lambda: Alarm.JOURNAL_FULL not in loop.view().alarms, 10, "JOURNAL FULL cleared")
        finally:
            loop.put(Stop())
            runner.join(10)
        assert not runner.is_alive()
        faults = [(b["event"], b["alarm"]) for _id, b in journal.inputs() if b["kind"] == "journal_fault"]
        assert faults == [("raised", "journal_full"), ("cleared", "journal_full")]
        assert not [b for _id, b in journal.inputs() if b["kind"] == "card"]


@pytest.mark.e2e
def test_ascii_keeps_a_bounded_number_of_inputs_in_memory_then_refuses(fs: SmallFs) -> None:
    clock = Clock()
    with Journal.open_for_table(fs.root / "journal.db") as journal:
        loop = TableLoop(
            TableState(RULES),
            journal,
            [ShoePort(AsciiWire(), lambda _b: None)],
            config=LoopConfig(clock=clock, max_staged=6),
        )
        fs.fill()
        loop.handle(WireBytes(b"H5\nC2\nD3\n", 0.0))  # a 5 exposed: 5 burn cards
        loop.flush()  # refused: the fault record joins the three cards (4 staged)
        loop.handle(WireBytes(b"S4\nH6\nH7\nH8\n", 0.1))  # room for two more
        assert loop.commit.stats.refused == 2
        assert loop.view().burn_left == 1  # the refused cards were not applied
        assert Alarm.JOURNAL_FULL in loop.view().alarms
        fs.free()
        clock.now += 1.0
        loop.flush()
        cards = [b["card"] for _id, b in journal.inputs() if b["kind"] == "card"]
        assert cards == ["5H", "2C", "3D", "4S", "6H"]
        assert replayed(journal).view() == loop.state.view()
