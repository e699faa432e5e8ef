"""The serial link to a device (the shoe, or the bet-spot reader): opens the port by pyserial URL, hands
it to the table loop, reconnects.

One :class:`ShoeLink` per port, named by its ``device`` (:data:`~controller.table.loop.inbox.Device`): the events it
puts in the loop's inbox carry the name, so one loop supervises both ports the same way.

A port with a file descriptor (a device path, ``socket://``) is *read by the table loop itself*: the loop
waits on the descriptor with :mod:`selectors`, calls :meth:`ShoeLink.read` when it is readable and decodes
in the same thread (one wake-up per card; the kernel's tty or socket buffer is the bound on the bytes
waiting, and a flood is flow-controlled or dropped there, never queued in our memory). A port without
one (``loop://``, ``rfc2217://``) falls back to a reader thread that puts :class:`WireBytes` on the loop's
bounded queue (the thread blocks when it is full: the bytes then wait in the driver).

The link's own thread only opens the port, reports it (:class:`PortState`) and, when the port is lost,
reopens it with exponential backoff, forever: the daemon never exits because the shoe went away. A port
that keeps failing to open is reported once, then again only when the reason changes or every
``repeat_every`` seconds (not on every attempt). Writes come from the table loop's thread. Device paths
are opened exclusively (a second program cannot steal the shoe's bytes).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import threading
import time
from collections.abc import Callable

import serial

from controller.table.loop.inbox import READ_SIZE, Device, LoopEvent, PortState, WireBytes

log = logging.getLogger(__name__)


def open_port(url: str, baudrate: int, timeout: float = 0.1) -> serial.SerialBase:
    """Open a pyserial URL (device path, ``socket://``, ``loop://``); device paths exclusively."""
    is_device = "://" not in url
    kwargs: dict[str, object] = {"baudrate": baudrate, "timeout": timeout, "write_timeout": 1.0}
    if is_device:
        kwargs["exclusive"] = True
    return serial.serial_for_url(url, **kwargs)


def port_fileno(port: serial.SerialBase) -> int | None:
    """The descriptor the loop can wait on and read, or ``None`` (the reader thread must read)."""
    try:
        fd = port.fileno()
    except (io.UnsupportedOperation, AttributeError, OSError, ValueError):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


class ShoeLink:
    """Owns the serial port: opens and reopens it, :meth:`read` and :meth:`write` for the loop."""

    def __init__(
        self,
        url: str,
        baudrate: int,
        put: Callable[[LoopEvent], None],
        *,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        repeat_every: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        use_fd: bool = True,
        device: Device = "shoe",
    ) -> None:
        self.device: Device = device
        self.url = url
        self.baudrate = baudrate
        self.put = put
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.repeat_every = repeat_every
        self.clock = clock
        self.use_fd = use_fd
        self._port: serial.SerialBase | None = None
        self._fd: int | None = None
        #: Bumped on every open: the loop re-registers the descriptor when it changes (numbers are reused).
        self.generation = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._gone = threading.Event()
        self._gone_reason = ""
        self._thread: threading.Thread | None = None
        self.bytes_in = 0
        self.bytes_out = 0
        self.reconnects = 0
        self.open_failures = 0  # attempts that failed (each one is not reported: see repeat_every)

    # -- life ------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"{self.device}-link", daemon=True)
        self._thread.start()

    def wait_open(self, timeout: float) -> bool:
        """Wait until the port has opened once (for READY)."""
        return self._opened.wait(timeout)

    def stop(self) -> None:
        with self._lock:  # against a port the thread is opening now: see _run
            self._stop.set()
            self._gone.set()
        self._close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None

    @property
    def is_open(self) -> bool:
        return self._port is not None

    # -- the loop's side -------------------------------------------------------------------------
    def fileno(self) -> tuple[int, int] | None:
        """(generation, descriptor) of the open port when the loop is to read it; ``None`` otherwise."""
        fd = self._fd
        return None if fd is None else (self.generation, fd)

    def read(self, size: int = READ_SIZE) -> bytes | None:
        """What the port holds now, at most ``size`` bytes, without blocking; ``None`` if the port is gone
        (closed here; the link's thread reports it and reopens). Call when the descriptor is readable."""
        fd = self._fd
        if fd is None:
            return None
        try:
            data = os.read(fd, size)
        except BlockingIOError:
            return b""  # a spurious wake-up
        except OSError as exc:
            self._lost(f"{self.url}: {exc}")
            return None
        if not data:
            self._lost(f"{self.url}: end of file (the {self.device} hung up)")
            return None
        self.bytes_in += len(data)
        return data

    def write(self, data: bytes) -> None:
        """Write bytes to the shoe if the port is open; a failure closes it (the link reconnects)."""
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
                log.warning("write to the %s failed: %s", self.device, exc)
                self._lost_locked(f"write failed: {exc}")

    # -- the link's thread -----------------------------------------------------------------------
    def _run(self) -> None:
        delay = self.backoff_initial
        reported: tuple[str, float] | None = None  # the last "cannot open" reported, and when
        failing_since: float | None = None
        while not self._stop.is_set():
            try:
                port = open_port(self.url, self.baudrate)
            except (serial.SerialException, OSError, ValueError) as exc:
                self.open_failures += 1
                now = self.clock()
                failing_since = now if failing_since is None else failing_since
                reason = f"cannot open {self.url}: {exc}"
                if reported is None or reported[0] != reason or now - reported[1] >= self.repeat_every:
                    if reported is not None and reported[0] == reason:
                        reason += f" (still, {self.open_failures} attempts over {now - failing_since:.0f} s)"
                    self.put(PortState(False, reason, self.device))
                    reported = (f"cannot open {self.url}: {exc}", now)
                self._stop.wait(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            reported = None
            failing_since = None
            fd = port_fileno(port) if self.use_fd else None
            with self._lock:
                if self._stop.is_set():  # stop() came while the port was opening: it waits for us, not the port
                    with contextlib.suppress(serial.SerialException, OSError):
                        port.close()
                    break
                self._port = port
                self._gone.clear()
                self.generation += 1
                self._fd = fd
            self._opened.set()
            delay = self.backoff_initial
            self.put(PortState(True, f"{self.url} open", self.device))
            if fd is None:
                reason = self._read_until_error(port)
                self._close()
            else:
                self._gone.wait()
                reason = self._gone_reason or "stopped"
            if self._stop.is_set():
                break
            self.reconnects += 1
            self.put(PortState(False, reason, self.device))
            self._stop.wait(delay)

    def _read_until_error(self, port: serial.SerialBase) -> str:
        """The fallback for ports without a descriptor: read here, put the bytes on the loop's queue."""
        while not self._stop.is_set():
            try:
                data = port.read(1)
                if data:
                    waiting = port.in_waiting
                    if waiting:
                        data += port.read(min(waiting, READ_SIZE))
                    self.bytes_in += len(data)
                    self.put(WireBytes(data, self.clock(), self.device))
                elif self._port is None:
                    return self._gone_reason or "port closed"
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                # TypeError/AttributeError: pyserial's posix read after a concurrent close
                return self._gone_reason or f"{self.url}: {exc}"
        return "stopped"

    def _lost(self, reason: str) -> None:
        with self._lock:
            self._lost_locked(reason)

    def _lost_locked(self, reason: str) -> None:
        if self._port is not None:
            self._gone_reason = reason
        self._close_locked()
        self._gone.set()

    def _close(self) -> None:
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        port, self._port = self._port, None
        self._fd = None
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()
