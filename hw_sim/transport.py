"""Where the software shoe plugs in: a real pseudo-terminal or a TCP server (the shell around the core).

:class:`PtyTransport` opens a pty pair in raw mode (``os.openpty`` + ``tty.setraw``) and symlinks the
slave's path where the user asked (``--link /tmp/shoe0``): the controller opens it exactly like
``/dev/ttyUSB0`` (pyserial sets its own raw mode too). The simulator keeps only the master open; whether a
controller has the slave open is read from the master (POLLHUP while nobody has it open), so output is
discarded while the "cable" is unplugged instead of piling up stale bytes in the pty. A ``disconnect``
fault is emulated by silence: nothing is written or read until the line comes back (the pty itself stays
open, so the controller's port does not vanish). The symlink is removed on close, if it still points to
our pty.

:class:`TcpTransport` listens on HOST:PORT so pyserial's ``socket://HOST:PORT`` reaches it. One client at
a time: a new client replaces the old one (a controller that restarted without closing its socket must
not be locked out). The shoe keeps running between clients, so a client that reconnects resumes the same
session (binary events still unacknowledged are resent). A ``disconnect`` fault closes the client's
socket and refuses connections until the line comes back.

Both are non-blocking; output that the peer does not take at once is buffered up to ``MAX_PENDING`` bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import tty
from pathlib import Path

MAX_PENDING = 1 << 20


class TransportError(Exception):
    """The transport could not be set up; the message names what and why."""


class _Base:
    def __init__(self) -> None:
        self._out = bytearray()

    def _queue(self, data: bytes) -> None:
        if len(self._out) + len(data) <= MAX_PENDING:
            self._out += data

    def wants_write(self) -> bool:
        return bool(self._out)


class PtyTransport(_Base):
    """A pty whose slave is reachable through a symlink."""

    def __init__(self, link: Path) -> None:
        super().__init__()
        self.link = link
        self.master = -1
        self.slave_name = ""
        self._poll = select.poll()

    def open(self) -> None:
        link = self.link
        if link.is_symlink():
            link.unlink()  # a stale link from an earlier run
        elif link.exists():
            raise TransportError(f"--link {link}: exists and is not a symlink")
        if not link.parent.is_dir():
            raise TransportError(f"--link {link}: directory {link.parent} does not exist")
        master, slave = os.openpty()
        tty.setraw(slave)
        self.slave_name = os.ttyname(slave)
        os.close(slave)
        os.set_blocking(master, False)
        self.master = master
        self._poll.register(master, select.POLLIN | select.POLLHUP)
        try:
            link.symlink_to(self.slave_name)
        except OSError as exc:
            self.close()
            raise TransportError(f"--link {link}: {exc.strerror}") from None

    def describe(self) -> str:
        return f"{self.link} (pty {self.slave_name})"

    def read_fds(self) -> list[int]:
        return [self.master] if self.connected else []

    def write_fds(self) -> list[int]:
        return [self.master] if self._out and self.connected else []

    @property
    def connected(self) -> bool:
        """A controller has the slave open."""
        return not any(ev & select.POLLHUP for _, ev in self._poll.poll(0))

    def read(self) -> bytes:
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:  # nobody has the slave open
                return b""
            raise

    def write(self, data: bytes) -> None:
        if not self.connected:
            self._out.clear()  # the cable is unplugged: these bytes go nowhere
            return
        self._queue(data)
        self.flush()

    def flush(self) -> None:
        while self._out:
            try:
                n = os.write(self.master, self._out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno == errno.EIO:
                    self._out.clear()
                    return
                raise
            del self._out[:n]

    def drop_client(self) -> None:
        """A pty cannot be unplugged: the line just goes silent (the core sends nothing)."""
        self._out.clear()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.link.is_symlink() and os.readlink(self.link) == self.slave_name:
                self.link.unlink()
        if self.master >= 0:
            with contextlib.suppress(OSError):
                os.close(self.master)
            self.master = -1


class TcpTransport(_Base):
    """A TCP server for one client at a time."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__()
        self.host = host
        self.port = port
        self.server: socket.socket | None = None
        self.client: socket.socket | None = None
        self.refusing = False
        self.clients_seen = 0

    def open(self) -> None:
        try:
            infos = socket.getaddrinfo(self.host or None, self.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as exc:
            raise TransportError(f"--tcp {self.host}:{self.port}: {exc.strerror}") from None
        family, kind, proto, _, addr = infos[0]
        server = socket.socket(family, kind, proto)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.bind(addr)
        except OSError as exc:
            server.close()
            raise TransportError(f"--tcp {self.host}:{self.port}: {exc.strerror}") from None
        server.listen(1)
        server.setblocking(False)
        self.server = server
        self.port = server.getsockname()[1]

    def describe(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"socket://{host}:{self.port}"

    def read_fds(self) -> list[int]:
        fds = [self.server.fileno()] if self.server is not None else []
        if self.client is not None:
            fds.append(self.client.fileno())
        return fds

    def write_fds(self) -> list[int]:
        return [self.client.fileno()] if self.client is not None and self._out else []

    @property
    def connected(self) -> bool:
        return self.client is not None

    def _accept(self) -> None:
        assert self.server is not None
        while True:
            try:
                conn, _ = self.server.accept()
            except (BlockingIOError, InterruptedError):
                return
            if self.refusing:
                conn.close()
                continue
            self._close_client()
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.client = conn
            self.clients_seen += 1

    def read(self) -> bytes:
        self._accept()
        if self.client is None:
            return b""
        try:
            data = self.client.recv(4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self._close_client()
        return data

    def write(self, data: bytes) -> None:
        if self.client is None:
            self._out.clear()
            return
        self._queue(data)
        self.flush()

    def flush(self) -> None:
        while self._out and self.client is not None:
            try:
                n = self.client.send(self._out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._close_client()
                return
            del self._out[:n]

    def _close_client(self) -> None:
        if self.client is not None:
            with contextlib.suppress(OSError):
                self.client.close()
        self.client = None
        self._out.clear()

    def drop_client(self) -> None:
        """Unplug: close the client and refuse new ones until :meth:`allow_clients`."""
        self.refusing = True
        self._close_client()

    def allow_clients(self) -> None:
        self.refusing = False

    def close(self) -> None:
        self._close_client()
        if self.server is not None:
            with contextlib.suppress(OSError):
                self.server.close()
            self.server = None
