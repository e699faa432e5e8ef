"""hw_sim/spot_reader.py: the simulated bet-spot reader's firmware side, on a virtual clock."""

from __future__ import annotations

import pytest

from firmware_protocol.binary import BinaryDecoder, FrameReceived
from firmware_protocol.session import ControllerSession
from firmware_protocol.spots import (
    READER,
    ReaderFlags,
    ReaderHeartbeat,
    ReaderHello,
    ReaderStatus,
    SnapshotBegin,
    SnapshotEnd,
    SpotCode,
    SpotReport,
    Window,
    WindowState,
)
from hw_sim.spot_reader import SpotReader

A, B, C = 0xE004000000001001, 0xE004000000001002, 0xE004000000001003


def messages(data: bytes) -> list[object]:
    events = BinaryDecoder(dialect=READER).feed(data)
    assert all(isinstance(e, FrameReceived) for e in events), events
    return [e.message for e in events if isinstance(e, FrameReceived)]


def reliable(data: bytes) -> list[object]:
    return [m for m in messages(data) if not isinstance(m, ReaderHeartbeat)]


def test_boot_sends_hello_then_a_full_snapshot() -> None:
    reader = SpotReader(seats=(1, 2, 3), spots=(SpotCode.BANKER, SpotCode.PLAYER, SpotCode.TIE))
    reader.start(0.0)
    out = messages(reader.poll(0.0))
    assert isinstance(out[0], ReaderHello)
    assert out[0].seats == (1, 2, 3) and out[0].spots == (SpotCode.BANKER, SpotCode.PLAYER, SpotCode.TIE)
    assert out[1:] == [SnapshotBegin(1), SnapshotEnd(1, 0), ReaderHeartbeat(reader.session_id or 0)]


def test_a_change_is_reported_once_and_the_snapshot_carries_the_truth() -> None:
    reader = SpotReader(snapshot_every=5.0)
    reader.start(0.0)
    reader.poll(0.0)
    assert reader.place(2, SpotCode.BANKER, [B, A], 0.1)
    assert not reader.place(2, SpotCode.BANKER, [A, B], 0.2)  # the same chips: no change, no report
    assert reliable(reader.poll(0.2)) == [SpotReport(2, SpotCode.BANKER, (A, B))]
    assert reliable(reader.poll(4.9)) != [SnapshotBegin(2)]  # (a resend of what is unacknowledged)
    reader.place(5, SpotCode.TIE, [C], 4.95)
    out = reliable(reader.poll(5.0))
    start = out.index(SnapshotBegin(2))
    assert out[start:] == [
        SnapshotBegin(2),
        SpotReport(2, SpotCode.BANKER, (A, B)),
        SpotReport(5, SpotCode.TIE, (C,)),
        SnapshotEnd(2, 2),
    ]


def test_emptying_a_spot_reports_it_empty_and_the_snapshot_leaves_it_out() -> None:
    reader = SpotReader(snapshot_every=1.0, heartbeat_every=10.0)
    reader.start(0.0)
    reader.poll(0.0)
    reader.place(1, SpotCode.PLAYER, [A], 0.1)
    reader.place(1, SpotCode.PLAYER, [], 0.2)
    assert reliable(reader.poll(0.2)) == [SpotReport(1, SpotCode.PLAYER, (A,)), SpotReport(1, SpotCode.PLAYER, ())]
    assert reader.truth == {}


def test_a_fault_report_does_not_change_the_truth() -> None:
    reader = SpotReader()
    reader.start(0.0)
    reader.poll(0.0)
    reader.place(3, SpotCode.BANKER, [A, B], 0.1)
    reader.report(3, SpotCode.BANKER, [A], 0.2)  # a dropped read
    reader.report(4, SpotCode.BANKER, [B], 0.2)  # a ghost on the neighbour
    assert reliable(reader.poll(0.2))[-2:] == [
        SpotReport(3, SpotCode.BANKER, (A,)),
        SpotReport(4, SpotCode.BANKER, (B,)),
    ]
    assert reader.truth == {(3, SpotCode.BANKER): frozenset({A, B})}


def test_duplicate_writes_the_next_frame_twice() -> None:
    reader = SpotReader()
    reader.start(0.0)
    reader.poll(0.0)
    reader.place(1, SpotCode.TIE, [A], 0.1)
    reader.duplicate()
    assert reliable(reader.poll(0.1)) == [SpotReport(1, SpotCode.TIE, (A,))] * 2
    reader.place(1, SpotCode.TIE, [B], 0.2)
    assert reliable(reader.poll(0.2)) == [SpotReport(1, SpotCode.TIE, (B,))]


def test_a_spot_the_reader_does_not_have_is_refused() -> None:
    reader = SpotReader(seats=(1, 2), spots=(SpotCode.BANKER,))
    reader.start(0.0)
    with pytest.raises(ValueError, match="seat 3 banker"):
        reader.place(3, SpotCode.BANKER, [A], 0.1)
    with pytest.raises(ValueError, match="seat 1 tie"):
        reader.report(1, SpotCode.TIE, [A], 0.1)


def test_ack_window_and_reset_from_the_table() -> None:
    table = ControllerSession(dialect=READER)
    reader = SpotReader()
    reader.start(0.0)
    delivered = table.receive(reader.poll(0.0), 0.0)
    assert reader.unacked == 3  # HELLO, SNAPSHOT_BEGIN, SNAPSHOT_END
    reader.receive(table.acknowledge(3), 0.1)
    assert reader.unacked == 0 and delivered
    reader.receive(table.command(Window(WindowState.LOCKED)), 0.1)
    assert reader.window is WindowState.LOCKED
    old = reader.session_id
    reader.place(1, SpotCode.BANKER, [A], 0.2)
    reader.receive(table.reset(), 0.3)
    assert reader.session_id != old and reader.reboots == 1
    out = reliable(reader.poll(0.3))
    assert isinstance(out[0], ReaderHello)
    assert out[1:] == [SnapshotBegin(2), SpotReport(1, SpotCode.BANKER, (A,)), SnapshotEnd(2, 1)]


def test_without_acks_the_reader_holds_a_bounded_window_and_owes_a_snapshot() -> None:
    reader = SpotReader(max_unacked=10, snapshot_every=1.0)
    reader.start(0.0)
    for i in range(20):
        reader.place(1 + i % 7, SpotCode.BANKER, [A + i], 0.1 + i * 0.01)
    assert reader.unacked == 10 and reader.owed
    table = ControllerSession(dialect=READER)
    table.receive(reader.poll(0.5), 0.5)
    reader.receive(table.acknowledge(table.last_number), 0.6)
    assert reader.unacked == 0
    out = reliable(reader.poll(0.7))  # the owed snapshot: the truth, whole
    begin = out[0]
    assert isinstance(begin, SnapshotBegin)
    assert out[1:] == [
        *(SpotReport(seat, SpotCode.BANKER, (A + 13 + seat,)) for seat in range(1, 7)),
        SpotReport(7, SpotCode.BANKER, (A + 13,)),
        SnapshotEnd(begin.snapshot, 7),
    ]
    assert not reader.owed


def test_status_goes_out_reliably() -> None:
    reader = SpotReader()
    reader.start(0.0)
    reader.poll(0.0)
    reader.status(ReaderFlags.ANTENNA_FAULT, 0.1)
    assert reliable(reader.poll(0.1)) == [ReaderStatus(ReaderFlags.ANTENNA_FAULT)]


def test_a_condition_that_outlives_a_reboot_is_repeated_after_hello() -> None:
    reader = SpotReader()
    reader.start(0.0)
    reader.status(ReaderFlags.TAMPER, 0.1)
    reader.reboot(0.2)
    out = reliable(reader.poll(0.2))
    assert isinstance(out[0], ReaderHello)
    assert out[1:3] == [ReaderStatus(ReaderFlags.TAMPER), SnapshotBegin(2)]
