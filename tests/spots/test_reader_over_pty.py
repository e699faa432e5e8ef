"""The simulated reader against the table's SpotWire over a real pty pair, with frames lost and duplicated
in both directions: whatever the line does, the table ends knowing exactly what lies on every spot."""

from __future__ import annotations

import os
import random
import select
import tty
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from controller.table.spot_wire import SPOT_OF_CODE, SpotInput, SpotRecord, SpotWire, SpotWireEvent
from firmware_protocol.spots import SpotCode
from hw_sim.spot_reader import SpotReader

FIRST = 0xE004000000001000
REGISTRY = ChipRegistry([ChipRange(FIRST, FIRST + 0xFFF, 500, ChipStatus.IN_PLAY)])
SEATS = (1, 2, 3, 4, 5, 6, 7)


@contextmanager
def pty_pair() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    os.set_blocking(slave, False)
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


class Line:
    """One direction of the cable: whole frames are lost or doubled at the given rates."""

    def __init__(self, rng: random.Random, lose: float, double: float) -> None:
        self.rng, self.lose, self.double = rng, lose, double
        self.lost = self.doubled = 0

    def __call__(self, data: bytes) -> bytes:
        out = bytearray()
        for frame in data.split(b"\x00")[:-1]:
            roll = self.rng.random()
            if roll < self.lose:
                self.lost += 1
                continue
            out += frame + b"\x00"
            if roll > 1 - self.double:
                self.doubled += 1
                out += frame + b"\x00"
        return bytes(out)


class Table:
    """What the table knows of the spots: SpotSeen sets one, a snapshot replaces them all."""

    def __init__(self) -> None:
        self.spots: dict[tuple[int, Spot], frozenset[str]] = {}
        self.link_up = False
        self.refused = 0

    def apply(self, ev: SpotWireEvent) -> None:
        if isinstance(ev, SpotRecord) and ev.kind == "snapshot_refused":
            self.refused += 1
        if not isinstance(ev, SpotInput):
            return
        got = ev.table_input
        if isinstance(got, SpotSeen):
            if got.chips.chips:
                self.spots[got.seat, got.spot] = got.chips.uids
            else:
                self.spots.pop((got.seat, got.spot), None)
        elif isinstance(got, SpotsSnapshot):
            self.spots = {(seat, spot): chips.uids for seat, spot, chips in got.spots}
        elif isinstance(got, ReaderLinkChanged):
            self.link_up = got.up


def truth_as_table(reader: SpotReader) -> dict[tuple[int, Spot], frozenset[str]]:
    return {
        (seat, SPOT_OF_CODE[code]): frozenset(f"{uid:016X}" for uid in uids)
        for (seat, code), uids in reader.truth.items()
    }


def write_all(fd: int, data: bytes, drain: int, sink: bytearray) -> None:
    """Write ``data`` to ``fd``, reading the far end (``drain``) into ``sink`` whenever the pty is full."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([drain], [], [], 0.05)
            sink += read_all(drain)


def read_all(fd: int) -> bytes:
    out = bytearray()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        out += chunk
    return bytes(out)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reader_and_table_agree_through_a_lossy_duplicating_pty(seed: int) -> None:
    rng = random.Random(seed)
    reader = SpotReader(seed=seed, seats=SEATS, snapshot_every=5.0)
    wire = SpotWire(REGISTRY)
    table = Table()
    up_line = Line(random.Random(f"{seed}:up"), lose=0.1, double=0.1)  # reader -> table
    down_line = Line(random.Random(f"{seed}:down"), lose=0.1, double=0.1)  # table -> reader
    placed = 0
    with pty_pair() as (master, slave):  # the reader holds the master, the table the slave (its "ttyUSB")
        reader.start(0.0)
        now = 0.0
        at_table = bytearray()
        at_reader = bytearray()
        before_snapshot: dict[tuple[int, Spot], frozenset[str]] | None = None
        for step in range(600):  # 30 s at 50 ms a step: 21 s of play, then 9 s quiet
            now = step * 0.05
            if step == 490:  # 24.5 s: the last changes (after the 20 s snapshot) came by reports and resends alone
                before_snapshot = dict(table.spots)
            if now < 21.0 and rng.random() < 0.6:
                seat, code = rng.choice(SEATS), rng.choice(list(SpotCode))
                chips = rng.sample(range(FIRST, FIRST + 200), rng.randint(0, 6))
                placed += reader.place(seat, code, chips, now)
                if rng.random() < 0.05:  # a dropped read, then the truth again
                    held = sorted(reader.truth.get((seat, code), ()))
                    reader.report(seat, code, held[1:], now)
                    reader.report(seat, code, held, now)
                if rng.random() < 0.05:
                    reader.duplicate()
            write_all(master, up_line(reader.poll(now)), slave, at_table)
            at_table += read_all(slave)
            events = wire.receive(bytes(at_table), now)
            at_table.clear()
            polled, data = wire.poll(now)
            events += polled
            replies = bytearray(data)
            for ev in events:
                table.apply(ev)  # "commit"
                if isinstance(ev, SpotInput | SpotRecord) and ev.number is not None:
                    replies += wire.acknowledge(ev.number, ev.session)
            write_all(slave, down_line(bytes(replies)), master, at_reader)
            at_reader += read_all(master)
            reader.receive(bytes(at_reader), now)
            at_reader.clear()
    assert placed > 100 and up_line.lost > 10 and up_line.doubled > 10 and down_line.lost > 10
    assert table.link_up
    assert before_snapshot == truth_as_table(reader)
    assert table.spots == truth_as_table(reader)
    assert reader.unacked == 0
    assert wire.snapshots >= 6  # after HELLO and every 5 s
