"""The chip tray on the table loop, over a real pty beside the shoe's, with a real SQLite journal: tube reports
and full counts journaled as table inputs and acknowledged only after their commit, the settle rule's TrayStill
applied once per report and journaled, a variance held back until the recount its COUNT_REQUEST asked for, and
TRAY DOWN while the tray is silent, cleared (and a count asked for) once it is heard again."""

from __future__ import annotations

import os
import threading
import time
import tty
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus
from controller.game.rules import COMMISSION
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import TableRules, TableState
from controller.journal import Journal, PendingInput
from controller.metrics import TableMetrics
from controller.table.lcd import render
from controller.table.loop import Inbox, LoopConfig, ShoePort, Stop, TableLoop
from controller.table.loop.loop import JournalLike
from controller.table.loop.tray import TrayPort
from controller.table.shoe_link import ShoeLink
from controller.table.tray_wire import TrayWire
from controller.table.wire import AsciiWire
from firmware_protocol.session import ControllerSession
from firmware_protocol.tray import TRAY
from tests.tray.tray_device import TrayDevice
from tests.waiting import until

C25 = 0xE004015025000000  # $25 chips in play: C25, C25 + 1, ...
C5 = 0xE004015005000000  # $5 chips in play
REGISTRY = ChipRegistry(
    [ChipRange(C25, C25 + 0xFF, 2500, ChipStatus.IN_PLAY), ChipRange(C5, C5 + 0xFF, 500, ChipStatus.IN_PLAY)]
)
RULES = TableRules(burn_rule=BurnRule(BurnMode.NONE), auto_declare=True, tray=True)
SETTLE = 0.3
TUBE1 = tuple(C25 + i for i in range(20))
TUBE2 = tuple(C5 + i for i in range(20))


class GatedJournal:
    """The real journal, whose commits wait while :attr:`gate` is clear (the test holds a commit back)."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()  # set while a commit waits at the gate

    def append_many(self, inputs: Sequence[PendingInput]) -> list[int | None]:
        if not self.gate.is_set():
            self.waiting.set()
            self.gate.wait(10)
            self.waiting.clear()
        return self._journal.append_many(inputs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)


@dataclass
class Table:
    loop: TableLoop
    journal: Journal
    gated: GatedJournal
    port: TrayPort
    shoe_master: int
    tray: TrayDevice
    metrics: TableMetrics

    def card(self, line: str) -> None:
        os.write(self.shoe_master, line.encode() + b"\r\n")

    def inputs(self, kind: str) -> list[dict[str, Any]]:
        return [body for _id, body in self.journal.inputs() if body["kind"] == kind]

    def records(self, kind: str) -> list[dict[str, Any]]:
        import json

        return [json.loads(r.body) for r in self.journal.records() if r.kind == kind]

    def wait(self, what: str, condition: Any, timeout: float = 10.0) -> None:
        until(condition, timeout, what, every=0.01)

    def sample(self, name: str, **labels: str) -> float:
        value = self.metrics.registry.get_sample_value(name, labels or None)
        return 0.0 if value is None else value


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    master, slave = os.openpty()
    tty.setraw(slave)
    shoe_path = os.ttyname(slave)
    os.close(slave)
    with Journal.open(tmp_path / "j.db") as journal, TrayDevice({1: TUBE1, 2: TUBE2}) as device:
        gated = GatedJournal(journal)
        inbox = Inbox()
        shoe = ShoeLink(shoe_path, 9600, inbox.put)
        link = ShoeLink(device.path, 115200, inbox.put, device="tray")
        metrics = TableMetrics()
        wire = TrayWire(REGISTRY, ControllerSession(dialect=TRAY, link_timeout=1.0))
        port = TrayPort(link, wire, link.write, settle=SETTLE)
        loop = TableLoop(
            TableState(RULES),
            cast(JournalLike, gated),
            [ShoePort(AsciiWire(), shoe.write, shoe), port],
            [],
            LoopConfig(inbox=inbox, metrics=metrics, ruleset=COMMISSION),
        )
        loop.assume_tray_down("test started; waiting for the chip tray")
        runner = threading.Thread(target=loop.run, name="test-loop")
        runner.start()
        try:
            shoe.start()
            link.start()
            assert shoe.wait_open(5) and link.wait_open(5)
            yield Table(loop, journal, gated, port, master, device, metrics)
        finally:
            gated.gate.set()
            loop.put(Stop())
            runner.join(5)
            shoe.stop()
            link.stop()
            os.close(master)
        assert not runner.is_alive()


def anchored(table: Table) -> None:
    """Until the tray is heard, counted and anchored (its first TrayStill and tray_count)."""
    table.wait("TRAY up", lambda: [b["up"] for b in table.inputs("tray_link")] == [False, True])
    table.wait("the anchor", lambda: [r.get("anchored") for r in table.records("tray_count")] == [True])


def test_the_tray_is_counted_still_once_per_report_and_a_variance_confirmed_by_a_recount(table: Table) -> None:
    anchored(table)
    hello = table.inputs("tray_hello")
    assert [(h["serial_number"], h["tubes"]) for h in hello] == [("CT-0001", 8)]
    snapshots = table.inputs("tray_snapshot")
    assert snapshots and all(len(s["tubes"]) == 2 for s in snapshots)
    assert table.tray.count_requests >= 1  # the link came up: a full count asked for
    assert table.records("tray_count")[0]["counted_cents"] == 20 * 2500 + 20 * 500
    stills = table.inputs("tray_still")
    assert len(stills) == 1
    time.sleep(4 * SETTLE)  # no report meanwhile: no second still (an absence: nothing to wait for)
    assert len(table.inputs("tray_still")) == 1

    for line in ("H9", "S2", "DK", "C5"):  # Player 9 beats Banker 7: coup 1 declared (auto)
        table.card(line)
    table.wait("coup 1 declared", lambda: len(table.records("coup")) == 1)
    asked = table.tray.count_requests
    table.tray.tube(2, TUBE2[1:])  # a $5 chip palmed
    table.wait("the tube journaled", lambda: len(table.inputs("tube")) == 1)
    tube = table.inputs("tube")[0]
    assert tube["tube"] == 2 and len(tube["chips"]) == 19 and all(c["cents"] == 500 for c in tube["chips"])
    # still after the settle time: the variance held back, a recount asked for and answered, still again
    table.wait("the recount asked", lambda: table.tray.count_requests == asked + 1)
    table.wait("the variance", lambda: len(table.records("tray_variance")) == 1)
    variance = table.records("tray_variance")[0]
    assert (variance["coup"], variance["variance_cents"]) == (1, -500)
    assert len(table.inputs("tray_still")) == 3  # the anchor's, the one that held it back, the recount's
    view = table.loop.view()
    assert view.tray is not None and view.tray.alarm == "TRAY SHORT $5 (COUP 1)"
    assert render(view, COMMISSION, 20, 4)[3].rstrip() == "TRAY SHORT 5 C1"
    assert table.sample("shoe_tray_counts_total") == 2
    assert table.sample("shoe_tray_variance_cents_total", direction="short") == 500
    assert table.sample("shoe_tray_snapshots_total", outcome="applied") >= 2


def test_tray_down_on_heartbeat_loss_and_cleared_when_heard(table: Table) -> None:
    anchored(table)
    assert table.sample("shoe_tray_link_up") == 1
    asked = table.tray.count_requests
    table.tray.silence(True)
    table.wait("TRAY DOWN", lambda: [b["up"] for b in table.inputs("tray_link")] == [False, True, False])
    view = table.loop.view()
    assert view.tray is not None and not view.tray.up and not view.tray.counted
    assert render(view, COMMISSION, 20, 4)[3].rstrip() == "TRAY DOWN"
    assert render(view, COMMISSION, 16, 2)[1].rstrip() == "TRAY DOWN"
    assert table.sample("shoe_tray_link_up") == 0
    table.tray.silence(False)
    table.wait("TRAY up again", lambda: [b["up"] for b in table.inputs("tray_link")] == [False, True, False, True])
    table.wait("a count asked for", lambda: table.tray.count_requests > asked)
    table.wait("counted again", lambda: bool(table.loop.view().tray and table.loop.view().tray.counted))  # type: ignore[union-attr]
    assert render(table.loop.view(), COMMISSION, 20, 4)[3].rstrip() != "TRAY DOWN"


def test_a_tube_report_is_acknowledged_only_after_its_commit(table: Table) -> None:
    anchored(table)
    table.wait("everything acknowledged", lambda: table.tray.unacked() == 0)
    table.gated.gate.clear()
    table.tray.tube(1, TUBE1[:-1])
    table.wait("the commit held at the gate", table.gated.waiting.is_set)
    tray = table.loop.state.tray
    assert tray is not None and len(tray.tubes[1]) == 19  # applied (and shown) before the commit ...
    assert table.inputs("tube") == []
    assert table.tray.unacked() >= 1  # ... not acknowledged
    table.gated.gate.set()
    table.wait("the tube journaled", lambda: len(table.inputs("tube")) == 1)
    table.wait("then acknowledged", lambda: table.tray.unacked() == 0)
