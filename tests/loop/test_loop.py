"""The table loop on a real journal: the batch order, the records an input gives rise to, and the shoe's port
read by the loop itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.game.records import derived_records
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    CardDrawn,
    DeclarePressed,
    TableRules,
    TableState,
    VoidPressed,
)
from controller.journal import Journal
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.waiting import until

RULES = TableRules(decks=1)


def new_loop(journal: Journal, written: list[bytes] | None = None, **parts: Any) -> TableLoop:
    sink = written if written is not None else []
    return TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), sink.append)], config=LoopConfig(**parts))


def test_a_full_batch_keeps_the_order_of_what_waits(tmp_path: Path) -> None:
    from controller.table.loop import Stop, WireBytes

    tokens = ["9H", "2S", "KD", "5C", "4H", "3S", "TD", "8C", "7D", "6S", "AH"]
    with Journal.open(tmp_path / "j.db") as journal:
        loop = new_loop(journal, max_batch=3)
        for token in tokens:  # ASCII lines: suit letter, then rank
            loop.put(WireBytes(f"{token[1]}{token[0]}\r\n".encode().replace(b"T", b"10"), 0.0))
        loop.put(Stop())
        loop.run()
        assert [b["card"] for _id, b in journal.inputs() if b["kind"] == "card"] == tokens
        assert loop.commit.stats.commits >= 4  # 11 events in batches of at most 3


def test_derived_records_of_a_declared_and_a_voided_coup() -> None:
    from controller.game.cards import Card

    state = TableState(TableRules(burn_rule=BurnRule(BurnMode.NONE)))
    notices = []
    for token in ["9H", "2S", "KD", "5C"]:
        notices += state.apply(CardDrawn(Card.parse(token)))
    notices += state.apply(CardDrawn(Card.parse("7H")))  # a misdraw: set aside
    notices += state.apply(DeclarePressed())
    notices += state.apply(CardDrawn(Card.parse("2H")))
    notices += state.apply(VoidPressed())
    coups = [body for kind, body in derived_records(notices) if kind == "coup"]
    assert coups[0] == {
        "shoe": 1, "coup": 1, "declared": True, "void": False, "misdraw": True, "dummy_hand": ["7H"],
        **state_free_result(["9H", "KD"], ["2S", "5C"]),
    }  # fmt: skip
    assert coups[1] == {
        "shoe": 1, "coup": 2, "declared": False, "void": True, "misdraw": False, "dummy_hand": [],
        "cards": ["2H"], "winner": None,
    }  # fmt: skip
    alarms = [body for kind, body in derived_records(notices) if kind == "alarm"]
    assert alarms == [
        {"alarm": "misdraw", "text": "MISDRAW", "card": "7H",
         "detail": "card 7H drawn when none was due; set aside (dummy hand)"},
    ]  # fmt: skip


def state_free_result(player: list[str], banker: list[str]) -> dict[str, object]:
    from controller.game.cards import Card
    from controller.game.coup import CoupResult

    return CoupResult(tuple(map(Card.parse, player)), tuple(map(Card.parse, banker))).to_dict()


def test_the_loop_reads_the_shoes_port_itself(tmp_path: Path) -> None:
    """No reader thread between the port and the loop: the loop waits on the port's descriptor, reads and
    decodes in its own thread (one wake-up per card), and the cards are journaled."""
    import os
    import threading
    import time
    import tty

    from controller.table.loop import Inbox, Stop
    from controller.table.shoe_link import ShoeLink

    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    with Journal.open(tmp_path / "j.db") as journal:
        inbox = Inbox()  # first: the link's opener reports to it
        link = ShoeLink(path, 9600, inbox.put)
        loop = TableLoop(
            TableState(RULES), journal, [ShoePort(AsciiWire(), link.write, link)], config=LoopConfig(inbox=inbox)
        )
        runner = threading.Thread(target=loop.run, name="test-loop")
        runner.start()
        try:
            link.start()
            assert link.wait_open(5)
            tokens = ["H9", "S2", "DK", "C5"]
            for token in tokens:
                os.write(master, token.encode() + b"\r\n")
                time.sleep(0.02)
            until(lambda: len([b for _i, b in journal.inputs() if b["kind"] == "card"]) >= 4, 5, "4 cards journaled")
        finally:
            loop.put(Stop())
            runner.join(5)
            link.stop()
            os.close(master)
        assert [b["card"] for _i, b in journal.inputs() if b["kind"] == "card"] == ["9H", "2S", "KD", "5C"]
        assert loop.stats.reads >= 1
        assert link.bytes_in == 16
        assert not runner.is_alive()


def test_the_ports_state_is_the_link_only_for_a_wire_that_does_not_report_it(tmp_path: Path) -> None:
    """ASCII has no heartbeat: a port lost is LINK DOWN, a port opened LINK up. The binary wire reports the
    link itself (HELLO, heartbeats, silence), so the port's state alone changes nothing there."""
    from controller.game.table import Alarm
    from controller.table.loop import PortState
    from controller.table.wire import BinaryWire
    from firmware_protocol.session import ControllerSession

    assert not AsciiWire.reports_link and BinaryWire.reports_link
    with Journal.open(tmp_path / "j.db") as journal:
        ascii_loop = new_loop(journal)
        ascii_loop.handle(PortState(False, "port lost"))
        assert Alarm.LINK_DOWN in ascii_loop.view().alarms
        ascii_loop.handle(PortState(True, "port opened"))
        assert Alarm.LINK_DOWN not in ascii_loop.view().alarms
        binary_loop = TableLoop(
            TableState(RULES), journal, [ShoePort(BinaryWire(ControllerSession()), lambda _data: None)]
        )
        binary_loop.handle(PortState(False, "port lost"))
        assert Alarm.LINK_DOWN not in binary_loop.view().alarms
