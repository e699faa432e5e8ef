"""A chip tray on a real pty, for the tests: the protocol's own device side
(:class:`firmware_protocol.session.ShoeSession` over the tray's dialect) run by a thread on the pty's master.

The table (a :class:`~controller.table.loop.TableLoop` in process) opens the pty's slave by its path
(:attr:`TrayDevice.path`). The tray sends a full snapshot after its HELLO and in answer to every COUNT_REQUEST
(counted in :attr:`count_requests`), as ``docs/tray.md`` section 5.2 says; the test changes a tube with
:meth:`tube`, silences the tray (no frame at all, heartbeats included) with :meth:`silence`, and reads how far
the table has acknowledged (:meth:`unacked`). Every thread and descriptor is released by :meth:`close`.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections.abc import Iterable

from firmware_protocol.session import CommandReceived, ResetRequested, ShoeSession
from firmware_protocol.tray import TRAY, CountRequest, TrayHello, TraySnapshotBegin, TraySnapshotEnd, TubeReport


class TrayDevice:
    """A chip tray speaking the tray's protocol on a pty (see the module's docstring)."""

    def __init__(
        self, tubes: dict[int, Iterable[int]], session_id: int = 0x7EA1C0DE, *, heartbeat_every: float = 0.25
    ) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        tty.setraw(self.master)
        self.path = os.ttyname(self._slave)
        os.set_blocking(self.master, False)
        self.session = ShoeSession(
            session_id,
            dialect=TRAY,
            heartbeat_every=heartbeat_every,
            hello=lambda sid: TrayHello("test-1", "CT-0001", 1, sid, 8),
        )
        #: What each tube holds (the tray's truth).
        self.tubes: dict[int, tuple[int, ...]] = {t: tuple(u) for t, u in tubes.items()}
        self.count_requests = 0
        self.silent = threading.Event()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._snapshot = 0
        self._out = bytearray()
        now = time.monotonic()
        self.session.start(now)
        self._send_snapshot(now)
        self._thread = threading.Thread(target=self._run, name="test-tray", daemon=True)
        self._thread.start()

    # -- what the test does ---------------------------------------------------------------------
    def tube(self, tube: int, uids: Iterable[int]) -> None:
        """A tube's chips changed: the tray reports its whole set."""
        with self._lock:
            self.tubes[tube] = tuple(uids)
            self.session.send(TubeReport(tube, self.tubes[tube]), time.monotonic())

    def silence(self, silent: bool) -> None:
        """Stop (or start again) sending anything at all: the table's link timeout runs out."""
        if silent:
            self.silent.set()
        else:
            self.silent.clear()

    def unacked(self) -> int:
        """Events the table has not acknowledged yet."""
        with self._lock:
            return len(self.session._held)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for fd in (self.master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> TrayDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the device's thread --------------------------------------------------------------------
    def _send_snapshot(self, now: float) -> None:
        self._snapshot = (self._snapshot + 1) & 0xFFFF
        full = {t: u for t, u in sorted(self.tubes.items()) if u}
        self.session.send(TraySnapshotBegin(self._snapshot), now)
        for tube, uids in full.items():
            self.session.send(TubeReport(tube, uids), now)
        self.session.send(TraySnapshotEnd(self._snapshot, len(full)), now)

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
                    for event in self.session.receive(data, now):
                        if isinstance(event, CommandReceived) and isinstance(event.message, CountRequest):
                            self.count_requests += 1
                            self._send_snapshot(now)
                        elif isinstance(event, ResetRequested):
                            self.session.start(now)
                            self._send_snapshot(now)
                if self.silent.is_set():
                    continue
                self._out += self.session.poll(now)
                if self._out:
                    try:
                        n = os.write(self.master, bytes(self._out))
                        del self._out[:n]
                    except (BlockingIOError, OSError):
                        pass
