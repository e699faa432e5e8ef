"""The table loop's ports: the shoe and the bet-spot reader as a list of typed ports, each device's bytes and
port changes reaching its own port, and a list the loop cannot run (no shoe, two shoes, two readers) refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import Alarm, TableRules, TableState
from controller.game.wagers import MoneyRules
from controller.journal import Journal
from controller.table.loop import LoopConfig, Port, PortState, ReaderPort, ShoePort, TableLoop, WireBytes
from controller.table.spot_wire import SpotWire
from controller.table.wire import AsciiWire
from firmware_protocol.session import ControllerSession, ShoeSession
from firmware_protocol.spots import READER, SpotCode, SpotReport, Window, WindowState

REGISTRY = ChipRegistry([ChipRange(0x1000, 0x1FFF, 2500, ChipStatus.IN_PLAY)])
RULES = TableRules(burn_rule=BurnRule(BurnMode.NONE), money=MoneyRules(seats=9))


class NoPort:
    """A serial port that never has a descriptor (the loop is driven by hand here)."""

    def fileno(self) -> tuple[int, int] | None:
        return None

    def read(self, size: int = 512) -> bytes | None:
        return b""


def ports(shoe_out: list[bytes], reader_out: list[bytes]) -> tuple[ShoePort, ReaderPort]:
    shoe: Port = ShoePort(AsciiWire(), shoe_out.append)  # each is a Port (mypy checks the protocol here)
    reader: Port = ReaderPort(NoPort(), SpotWire(REGISTRY, ControllerSession(dialect=READER)), reader_out.append)
    assert isinstance(shoe, ShoePort) and isinstance(reader, ReaderPort)
    return shoe, reader


def test_each_devices_bytes_reach_its_own_port(tmp_path: Path) -> None:
    shoe_out: list[bytes] = []
    reader_out: list[bytes] = []
    shoe, reader = ports(shoe_out, reader_out)
    now = [0.0]
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(TableState(RULES), journal, [shoe, reader], config=LoopConfig(clock=lambda: now[0]))
        assert loop.ports == (shoe, reader) and loop.shoe is shoe and loop.reader is reader
        device = ShoeSession(0xBE7, dialect=READER)
        device.start(0.0)
        device.send(SpotReport(3, SpotCode.BANKER, (0x1001,)), 0.0)
        loop.handle(WireBytes(device.poll(0.0), 0.0, device="reader"))  # HELLO, heartbeat, a chip on a spot
        loop.flush()
        kinds = [body["kind"] for _id, body in journal.inputs()]
        assert "spot" in kinds and loop.state.money is not None and loop.state.money.reader_up
        assert reader_out and not shoe_out  # the reader's ACK went to the reader's line, nothing to the shoe's
        loop.handle(WireBytes(b"SK\r\n", 0.1))  # a card on the shoe's line (the default device)
        loop.flush()
        assert [body["kind"] for _id, body in journal.inputs()][-1] == "card"
        # the betting window, told once per change; told again when the reader's port comes back
        told = len(reader_out)
        reader.shown(loop, loop.view())
        reader.shown(loop, loop.view())
        assert _windows(reader_out[told:]) == [Window(WindowState.LOCKED)]  # the coup's first card is out
        told = len(reader_out)
        loop.handle(PortState(True, "reopened", device="reader"))
        reader.shown(loop, loop.view())
        assert _windows(reader_out[told:]) == [Window(WindowState.LOCKED)]


def _windows(chunks: list[bytes]) -> list[Window]:
    from firmware_protocol.framing import FrameDecoder, FrameReceived

    events = FrameDecoder(dialect=READER).feed(b"".join(chunks))
    return [e.message for e in events if isinstance(e, FrameReceived) and isinstance(e.message, Window)]


def test_a_port_state_of_the_shoe_reaches_the_shoes_port(tmp_path: Path) -> None:
    shoe_out: list[bytes] = []
    shoe, _reader = ports(shoe_out, [])
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(TableState(RULES), journal, [shoe])
        assert loop.reader is None
        loop.handle(PortState(False, "unplugged"))  # ASCII: no heartbeat, the port is the link
        loop.flush()
        assert Alarm.LINK_DOWN in loop.view().alarms
        loop.handle(PortState(True, "back"))
        loop.handle(WireBytes(b"x", 0.0, device="reader"))  # no reader on this table: nothing happens
        loop.flush()
        assert Alarm.LINK_DOWN not in loop.view().alarms


@pytest.mark.parametrize(
    "count", [(0, 0), (2, 0), (0, 1), (1, 2)], ids=["none", "two shoes", "reader only", "two readers"]
)
def test_a_loop_takes_one_shoe_and_at_most_one_reader(tmp_path: Path, count: tuple[int, int]) -> None:
    shoes, readers = count
    listed: list[ShoePort | ReaderPort] = [ports([], [])[0] for _ in range(shoes)]
    listed += [ports([], [])[1] for _ in range(readers)]
    with Journal.open(tmp_path / "j.db") as journal, pytest.raises(ValueError, match="one shoe and at most one"):
        TableLoop(TableState(RULES), journal, listed)
