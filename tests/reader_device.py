"""A bet-spot reader on a real pty, for the tests: the protocol's own device side
(:class:`firmware_protocol.session.ShoeSession` over the reader's dialect) run by a thread on the pty's master.

The table (a :class:`~controller.table.loop.TableLoop` in process, or a ``shoe-controller run`` process) opens the
pty's slave by its path (:attr:`ReaderDevice.path`). The test places and takes chips with :meth:`spot`,
sends snapshots with :meth:`snapshot`, and reads back the betting windows the table told the reader
(:attr:`windows`) and how far the table has acknowledged (:meth:`unacked`); :meth:`churn` sends real
changes as fast as the table acknowledges them. Every thread and descriptor is released by :meth:`close`.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections.abc import Callable, Iterable

from firmware_protocol.session import CommandReceived, ResetRequested, ShoeSession
from firmware_protocol.spots import READER, SnapshotBegin, SnapshotEnd, SpotCode, SpotReport, Window, WindowState


class ReaderDevice:
    """A bet-spot reader speaking the reader's protocol on a pty (see the module's docstring)."""

    def __init__(self, session_id: int = 0x5EA7B0A7, *, heartbeat_every: float = 0.5) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        tty.setraw(self.master)
        self.path = os.ttyname(self._slave)
        os.set_blocking(self.master, False)
        self.session = ShoeSession(
            session_id,
            dialect=READER,
            firmware_version="test-1",
            serial_number="TR-0001",
            heartbeat_every=heartbeat_every,
        )
        self.windows: list[WindowState] = []
        self.bytes_in = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._snapshot = 0
        self._out = bytearray()  # what the pty did not take yet
        self.session.start(time.monotonic())
        self._thread = threading.Thread(target=self._run, name="test-reader", daemon=True)
        self._thread.start()

    # -- what the test does ---------------------------------------------------------------------
    def spot(self, seat: int, spot: SpotCode, uids: Iterable[int] = ()) -> None:
        """The reader reports what ``seat``'s ``spot`` holds now."""
        with self._lock:
            self.session.send(SpotReport(seat, spot, tuple(uids)), time.monotonic())

    def snapshot(self, spots: dict[tuple[int, SpotCode], Iterable[int]]) -> None:
        """A full snapshot: every spot listed (the empty ones too may be), the others empty."""
        with self._lock:
            now = time.monotonic()
            self._snapshot = (self._snapshot + 1) & 0xFFFF
            self.session.send(SnapshotBegin(self._snapshot), now)
            for (seat, spot), uids in spots.items():
                self.session.send(SpotReport(seat, spot, tuple(uids)), now)
            self.session.send(SnapshotEnd(self._snapshot, len(spots)), now)

    def unacked(self) -> int:
        """Events the table has not acknowledged yet."""
        with self._lock:
            return len(self.session._held)

    def wait(self, condition: Callable[[], bool], timeout: float = 10.0, what: str = "the condition") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not happen within {timeout} s (windows {self.windows})")
            time.sleep(0.005)

    def wait_window(self, state: WindowState, timeout: float = 10.0) -> None:
        """Until the table's last WINDOW said ``state``."""
        self.wait(lambda: bool(self.windows) and self.windows[-1] is state, timeout, f"WINDOW {state.name}")

    def churn(self, seconds: float, seats: int = 9, until: threading.Event | None = None) -> int:
        """Reports of real changes as fast as the table acknowledges them (the window kept full) for
        ``seconds`` (or until ``until`` is set): each one a spot input the table applies, shows and journals.
        Returns how many were sent."""
        sent = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until is not None and until.is_set()):
            with self._lock:
                now = time.monotonic()
                while len(self.session._held) < self.session.max_unacked:
                    seat = 1 + sent % seats
                    chips = (0xE004015000001000 + seat,) if (sent // seats) % 2 else ()
                    self.session.send(SpotReport(seat, SpotCode.PLAYER_PAIR, chips), now)
                    sent += 1
            time.sleep(0.001)
        return sent

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for fd in (self.master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> ReaderDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the device's thread --------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.01)
            now = time.monotonic()
            with self._lock:
                if ready:
                    try:
                        data = os.read(self.master, 65536)
                    except OSError:
                        data = b""
                    self.bytes_in += len(data)
                    for event in self.session.receive(data, now):
                        if isinstance(event, CommandReceived) and isinstance(event.message, Window):
                            self.windows.append(WindowState(event.message.state))
                        elif isinstance(event, ResetRequested):
                            self.session.start(now)
                self._out += self.session.poll(now)
                if self._out:
                    try:
                        n = os.write(self.master, bytes(self._out))
                        del self._out[:n]
                    except (BlockingIOError, OSError):
                        pass
