"""The serial link to the shoe: opens the port by pyserial URL, reads in its own thread, reconnects.

The reader thread does nothing but read bytes and put them on the table loop's queue (:class:`WireBytes`),
and report the port opening or failing (:class:`PortState`). Writes come from the table loop's thread.
On unplug or an I/O error the port is closed and reopened with exponential backoff, forever: the daemon
never exits because the shoe went away. Device paths are opened exclusively (a second program cannot
steal the shoe's bytes).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

import serial

from controller.table import LoopEvent, PortState, WireBytes

log = logging.getLogger(__name__)


def open_port(url: str, baudrate: int, timeout: float = 0.1) -> serial.SerialBase:
    """Open a pyserial URL (device path, ``socket://``, ``loop://``); device paths exclusively."""
    is_device = "://" not in url
    kwargs: dict[str, object] = {"baudrate": baudrate, "timeout": timeout, "write_timeout": 1.0}
    if is_device:
        kwargs["exclusive"] = True
    return serial.serial_for_url(url, **kwargs)


class ShoeLink:
    """Owns the serial port: a reader thread feeding the loop, and :meth:`write` for the loop."""

    def __init__(
        self,
        url: str,
        baudrate: int,
        put: Callable[[LoopEvent], None],
        *,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.baudrate = baudrate
        self.put = put
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.clock = clock
        self._port: serial.SerialBase | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._thread: threading.Thread | None = None
        self.bytes_in = 0
        self.bytes_out = 0
        self.reconnects = 0

    # -- life ------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="shoe-link", daemon=True)
        self._thread.start()

    def wait_open(self, timeout: float) -> bool:
        """Wait until the port has opened once (for READY)."""
        return self._opened.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        self._close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None

    @property
    def is_open(self) -> bool:
        return self._port is not None

    # -- the loop's side -------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        """Write bytes to the shoe if the port is open; a failure closes it (the reader reconnects)."""
        if not data:
            return
        with self._lock:
            port = self._port
            if port is None:
                return
            try:
                port.write(data)
                self.bytes_out += len(data)
            except (serial.SerialException, OSError) as exc:
                log.warning("write to the shoe failed: %s", exc)
                self._close_locked()

    # -- the reader thread -----------------------------------------------------------------------
    def _run(self) -> None:
        delay = self.backoff_initial
        while not self._stop.is_set():
            try:
                port = open_port(self.url, self.baudrate)
            except (serial.SerialException, OSError, ValueError) as exc:
                self.put(PortState(False, f"cannot open {self.url}: {exc}"))
                self._stop.wait(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            with self._lock:
                self._port = port
            self._opened.set()
            delay = self.backoff_initial
            self.put(PortState(True, f"{self.url} open"))
            reason = self._read_until_error(port)
            self._close()
            if self._stop.is_set():
                break
            self.reconnects += 1
            self.put(PortState(False, reason))
            self._stop.wait(delay)

    def _read_until_error(self, port: serial.SerialBase) -> str:
        while not self._stop.is_set():
            try:
                data = port.read(1)
                if data:
                    waiting = port.in_waiting
                    if waiting:
                        data += port.read(waiting)
                    self.bytes_in += len(data)
                    self.put(WireBytes(data, self.clock()))
                elif self._port is None:
                    return "port closed"
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                # TypeError/AttributeError: pyserial's posix read after a concurrent close
                return f"{self.url}: {exc}"
        return "stopped"

    def _close(self) -> None:
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()
