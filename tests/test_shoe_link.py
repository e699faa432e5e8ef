"""The serial link on a real pseudo-terminal: bytes in as WireBytes, writes out, and it survives the shoe
going away (reopens with backoff, never exits)."""

from __future__ import annotations

import os
import time
import tty
from collections.abc import Callable

import serial
from pytest_mock import MockerFixture

from controller.shoe_link import ShoeLink
from controller.table import LoopEvent, PortState, WireBytes


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def pty_pair() -> tuple[int, str]:
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    return master, path


def test_reads_and_writes_over_a_pty() -> None:
    master, path = pty_pair()
    events: list[LoopEvent] = []
    link = ShoeLink(path, 115200, events.append)
    link.start()
    try:
        assert link.wait_open(5)
        assert wait_for(lambda: any(isinstance(e, PortState) and e.up for e in events))
        os.write(master, b"\x01\x02\x03")
        assert wait_for(lambda: b"".join(e.data for e in events if isinstance(e, WireBytes)) == b"\x01\x02\x03")
        link.write(b"ACK")
        assert os.read(master, 16) == b"ACK"
        assert link.bytes_in == 3
        assert link.bytes_out == 3
    finally:
        link.stop()
        os.close(master)


def test_the_shoe_going_away_is_reported_and_the_link_keeps_trying() -> None:
    master, path = pty_pair()
    events: list[LoopEvent] = []
    link = ShoeLink(path, 115200, events.append, backoff_initial=0.01, backoff_max=0.05)
    link.start()
    try:
        assert link.wait_open(5)
        os.close(master)  # unplugged: the pty's far end is gone
        assert wait_for(lambda: sum(1 for e in events if isinstance(e, PortState) and not e.up) >= 3)
        assert link.is_open is False
    finally:
        link.stop()
    assert link._thread is None  # joined


def test_a_write_error_closes_the_port_and_the_link_reopens_it(mocker: MockerFixture) -> None:
    master, path = pty_pair()
    events: list[LoopEvent] = []
    link = ShoeLink(path, 115200, events.append, backoff_initial=0.01)
    link.start()
    try:
        assert link.wait_open(5)
        assert link._port is not None
        mocker.patch.object(link._port, "write", side_effect=serial.SerialException("write failed: EIO"))
        link.write(b"ACK")  # must not raise into the table loop
        assert wait_for(lambda: link.reconnects >= 1 and link.is_open)
        ups = [e for e in events if isinstance(e, PortState) and e.up]
        assert len(ups) >= 2  # opened, then reopened
        link.write(b"again")
        assert os.read(master, 16) == b"again"
    finally:
        link.stop()
        os.close(master)
