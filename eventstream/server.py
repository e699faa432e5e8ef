"""The bounded SSE board server: publishes the newest encoded snapshot of a :class:`Board` to every page.

The owner (a :class:`BoardHost`: the table's scoreboard sink, the floor's pit view) publishes bytes on its
:class:`Board`; the HTTP threads only ever read the latest published bytes (under a condition variable) and
never touch the owner's state. A slow page only ever gets the newest snapshot, never a backlog.

**Server choice**: the standard library's :class:`http.server.ThreadingHTTPServer`. The load is a kiosk
browser plus a few viewers on a private network, read-only, with a handful of routes; a thread per
connection is fine at that scale, Server-Sent Events need nothing more than a long-lived response, and it
adds no dependency to a Raspberry Pi install (no event loop beside the table loop, no wheels to build).
What the standard library leaves to us is done here, each with a test (``tests/eventstream/``):

* a client that goes away mid-request (``BrokenPipeError``, ``ConnectionResetError``, a timeout) is
  counted in the host's ``stats`` and logged at debug level, never a traceback on stderr;
* HTTP/0.9 (a request line without a version) is answered ``505`` with a proper HTTP/1.0 status line and
  headers, and so is every malformed request (the standard library would answer those with a bare body);
* event streams are bounded overall (:data:`MAX_STREAMS`) and per remote address
  (:data:`MAX_STREAMS_PER_ADDRESS`); a new stream over a bound **evicts** the oldest stream of its own
  address, or, when the whole board is full, the oldest stream of the address holding the most. One
  client opening stream after stream therefore only ever displaces itself, and a kiosk's single stream is
  the last to go;
* a stream whose client died frees its slot at once: one watcher thread waits (``selectors``) on every
  stream's socket, and end-of-file or a reset ends the stream immediately, not at the next heartbeat;
* at most :data:`MAX_CONNECTIONS` connections are served at once (a thread each), and at most
  :data:`MAX_CONNECTIONS_PER_ADDRESS` from one remote address; one more is answered 503 on the spot and
  closed, so stalled clients cannot pile up threads, and one address cannot take every slot;
* a client has :data:`HEADER_TIMEOUT` seconds from its connection to send its whole request head (a slow
  client that trickles a byte at a time included); then its connection is closed, unanswered, and its slot
  freed (the server's own loop checks every 0.2 s);
* a socket timeout on every connection, GET and HEAD only (405 otherwise), static files read once at start
  from a fixed list (no path from the request ever reaches the file system).

:class:`BoardHandler` serves ``/`` (the static ``index.html``), ``/static/<name>``, ``/api/state`` (the
board's bytes) and ``/events``; a host with other routes subclasses it and overrides ``_route``.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

#: Event streams served at once (a kiosk and a few viewers need far fewer).
MAX_STREAMS = 32
#: Event streams per remote address: a browser opens at most six connections to one server anyway.
MAX_STREAMS_PER_ADDRESS = 6
#: Connections served at once (a thread each); more are answered 503 at once and closed.
MAX_CONNECTIONS = 64
#: Connections served at once from one remote address: a browser opens at most six to one server, so this is
#: a few browsers behind one address; more are answered 503 at once and closed (the other addresses still get in).
MAX_CONNECTIONS_PER_ADDRESS = 16
#: Seconds a client has, from its connection, to send its whole request head; then it is closed unanswered.
HEADER_TIMEOUT = 5.0
_BUSY = b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class BoardHost(Protocol):
    """What the HTTP server reads from its owner: the scoreboard sink (:mod:`controller.board.scoreboard`)
    on a table, the pit view (:mod:`floor.pit`) on the floor."""

    board: Board
    stats: Counter[str]
    heartbeat: float
    retry_ms: int
    max_streams: int
    max_streams_per_address: int
    #: The least time in seconds between two events on one stream: what is published in between is not
    #: sent, the stream goes on with the newest. The pit sets it (a floor of busy tables publishes many
    #: times a second, a person reads a tile a few times a second at most); a table's scoreboard and dealer
    #: screen leave it at 0, since a card must show at once.
    min_gap: float


#: The files every page may use, whatever server serves it (``/static/notation.js``: docs/notation.md).
SHARED_STATIC_DIR = Path(__file__).with_name("static")
SHARED_STATIC_FILES: Mapping[str, str] = {"notation.js": "text/javascript; charset=utf-8"}


def load_static(directory: Path, files: Mapping[str, str]) -> dict[str, tuple[bytes, str]]:
    """The static files a server serves, read once at start: ``files`` maps a name in ``directory`` to its
    content type; the result maps the name to ``(bytes, content type)``. The shared files
    (:data:`SHARED_STATIC_FILES`) come with every server's own."""
    shared = {name: ((SHARED_STATIC_DIR / name).read_bytes(), ct) for name, ct in SHARED_STATIC_FILES.items()}
    return shared | {name: ((directory / name).read_bytes(), ctype) for name, ctype in files.items()}


# ---------------------------------------------------------------------------------------------------------
# Publication (the owner's thread writes, the server's threads read)


class Board:
    """The latest published snapshot (encoded) and a condition variable the event streams wait on."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.version = 0
        self.body = b"{}"
        self.closing = False

    def publish_body(self, version: int, body: bytes) -> None:
        with self.cond:
            self.version = version
            self.body = body
            self.cond.notify_all()

    def current(self) -> tuple[int, bytes]:
        with self.cond:
            return self.version, self.body

    def wait_newer(
        self, seen: int, timeout: float, ended: Callable[[], bool] = lambda: False
    ) -> tuple[int, bytes] | None:
        """The snapshot once its version differs from ``seen``; ``None`` on timeout, on closing, or once
        ``ended()`` (the stream was evicted or its client died)."""
        with self.cond:
            self.cond.wait_for(lambda: self.version != seen or self.closing or ended(), timeout)
            if self.closing or ended() or self.version == seen:
                return None
            return self.version, self.body

    def wait_closing(self, timeout: float, ended: Callable[[], bool] = lambda: False) -> None:
        """Wait ``timeout`` seconds, or less once the board closes or ``ended()`` (a stream's pause)."""
        with self.cond:
            self.cond.wait_for(lambda: self.closing or ended(), timeout)

    def wake(self) -> None:
        """Wake every waiting stream so that each checks whether it has ended."""
        with self.cond:
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closing = True
            self.cond.notify_all()


# ---------------------------------------------------------------------------------------------------------
# Event streams: bounded, evicted oldest-first, ended at once when their client dies


@dataclass(eq=False)
class _Stream:
    address: str
    conn: socket.socket
    ended: bool = field(default=False)
    board: Board | None = None  # the board it follows, when not its host's (:meth:`BoardHandler._events`)

    def __post_init__(self) -> None:
        self.fd = self.conn.fileno()  # kept: the watcher may see the socket only after it is closed


class _StreamWatch:
    """One thread that waits on every event stream's socket and ends a stream the moment its client
    closes or resets the connection (a stream's own thread only writes, so it would notice at its next
    heartbeat). Bytes a client sends on a stream are read and dropped."""

    def __init__(self, server: BoardServer) -> None:
        self.server = server
        self.selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ)
        self._lock = threading.Lock()
        self._pending: list[tuple[bool, _Stream]] = []
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=f"{server.label}-streams")

    def start(self) -> None:
        self._thread.start()

    def add(self, stream: _Stream) -> None:
        self._change(True, stream)

    def remove(self, stream: _Stream) -> None:
        self._change(False, stream)

    def _change(self, add: bool, stream: _Stream) -> None:
        with self._lock:
            self._pending.append((add, stream))
        self._poke()

    def _poke(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):  # a full wake pipe already wakes the thread
            self._wake_w.send(b"\0")

    def close(self) -> None:
        with self._lock:
            self._closing = True
        self._poke()
        if self._thread.is_alive():
            self._thread.join()
        self.selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def _run(self) -> None:
        watched: dict[int, _Stream] = {}
        while True:
            with self._lock:
                pending, self._pending = self._pending, []
                closing = self._closing
            if closing:
                return
            for add, stream in pending:
                fd = stream.fd
                if add and fd not in watched and not stream.ended:
                    self.selector.register(fd, selectors.EVENT_READ, stream)
                    watched[fd] = stream
                elif not add and watched.get(fd) is stream:
                    self.selector.unregister(fd)
                    del watched[fd]
            for key, _events in self.selector.select():
                if key.fileobj is self._wake_r:
                    with contextlib.suppress(BlockingIOError):
                        self._wake_r.recv(4096)
                    continue
                stream = key.data
                try:
                    gone = not stream.conn.recv(4096, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    self.selector.unregister(key.fd)
                    watched.pop(key.fd, None)
                    self.server.end_stream(stream, "streams_lost")


# ---------------------------------------------------------------------------------------------------------
# HTTP


class BoardServer(ThreadingHTTPServer):
    """The bounded server of one host's board (see the module's notes). ``label`` names it in the logs and
    its threads' names (``scoreboard``, ``pit``); :meth:`start` serves in a thread, :meth:`stop` ends it."""

    daemon_threads = False  # so that server_close() joins the request threads
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(
        self,
        address: tuple[str, int],
        host: BoardHost,
        handler: type[BoardHandler],
        static: Mapping[str, tuple[bytes, str]],
        *,
        label: str,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.host = host
        self.label = label
        self.static = dict(static)
        self.lock = threading.Lock()
        self.streams: list[_Stream] = []  # oldest first
        self.active = 0  # connections being served (a thread each)
        self.active_by_address: Counter[str] = Counter()  # the same, per remote address (no zero counts kept)
        self.heads: dict[socket.socket, float] = {}  # connections still sending their request head -> deadline
        self.max_connections_per_address = MAX_CONNECTIONS_PER_ADDRESS
        self.header_timeout = HEADER_TIMEOUT
        self.connections: set[socket.socket] = set()
        self.watch = _StreamWatch(self)
        try:
            super().__init__(address, handler)
        except BaseException:
            self.watch.close()
            raise
        self._thread: threading.Thread | None = None

    @property
    def bound(self) -> tuple[str, int]:
        """``(host, port)`` actually bound (the port chosen when the address said 0)."""
        addr = self.server_address
        return str(addr[0]), int(addr[1])

    def start(self) -> None:
        """Serve in a thread (and watch the streams in another)."""
        self.watch.start()
        self._thread = threading.Thread(
            target=self.serve_forever, name=f"{self.label}-http", kwargs={"poll_interval": 0.2}
        )
        self._thread.start()

    def stop(self) -> None:
        """End the event streams (the host's board is closed), join every thread, close every socket."""
        self.host.board.close()
        self.shutdown()
        self.drop_connections()
        self.server_close()  # joins the request threads
        self.watch.close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (or stalled) is counted, not a traceback; anything else is a bug."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # BrokenPipeError, ConnectionResetError, TimeoutError ...
            self.count("clients_gone")
            log.debug("%s: client %s went away: %r", self.label, client_address[0], exc)
        else:
            log.error("%s: request from %s failed", self.label, client_address[0], exc_info=exc)

    def count(self, what: str) -> None:
        with self.lock:
            self.host.stats[what] += 1

    # -- connections: a thread each, at most MAX_CONNECTIONS at once, MAX_CONNECTIONS_PER_ADDRESS from one --
    def process_request(self, request: Any, client_address: Any) -> None:
        address = str(client_address[0])
        with self.lock:
            if self.active >= MAX_CONNECTIONS:
                refused: str | None = "connections_refused"
            elif self.active_by_address[address] >= self.max_connections_per_address:
                refused = "connections_refused_address"
            else:
                refused = None
                self.active += 1
                self.active_by_address[address] += 1
                self.heads[request] = time.monotonic() + self.header_timeout
        if refused is not None:  # answered on the accepting thread: a few bytes into an empty socket buffer never block
            self.count(refused)
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done(request, address)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request, str(client_address[0]))

    def _done(self, request: Any, address: str) -> None:
        with self.lock:
            self.active -= 1
            self.active_by_address[address] -= 1
            if self.active_by_address[address] <= 0:
                del self.active_by_address[address]
            self.heads.pop(request, None)

    def head_read(self, conn: socket.socket) -> bool:
        """The request head on ``conn`` is in: stop its clock. False when it came too late (it was closed)."""
        with self.lock:
            return self.heads.pop(conn, None) is not None

    def service_actions(self) -> None:
        """Close every connection whose request head is overdue (``serve_forever`` calls this every loop)."""
        now = time.monotonic()
        with self.lock:
            late = [conn for conn, deadline in self.heads.items() if deadline <= now]
            for conn in late:
                del self.heads[conn]
                self.host.stats["heads_timed_out"] += 1
        for conn in late:
            log.debug("%s: a client took over %.0f s to send its request head; closed", self.label, self.header_timeout)
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def track(self, conn: socket.socket, add: bool) -> None:
        with self.lock:
            if add:
                self.connections.add(conn)
            else:
                self.connections.discard(conn)

    def drop_connections(self) -> None:
        """Unblock every handler still reading or writing (a stalled viewer must not hold up close)."""
        with self.lock:
            conns = list(self.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    # -- event streams ---------------------------------------------------------------------------
    def open_stream(self, address: str, conn: socket.socket, board: Board | None = None) -> _Stream:
        """Register a new stream (of ``board``, default the host's), evicting one first if a bound is reached (see
        the module's notes)."""
        stream = _Stream(address, conn, board=board)
        victim: _Stream | None = None
        with self.lock:
            mine = [s for s in self.streams if s.address == address]
            if len(mine) >= self.host.max_streams_per_address:
                victim = mine[0]
            elif len(self.streams) >= self.host.max_streams:
                holders = Counter(s.address for s in self.streams)
                most = max(holders.values())
                victim = next(s for s in self.streams if holders[s.address] == most)
            self.streams.append(stream)
        if victim is not None:
            log.info("%s: event streams full; ending the oldest one of %s", self.label, victim.address)
            self.end_stream(victim, "streams_evicted")
        self.watch.add(stream)
        return stream

    def end_stream(self, stream: _Stream, why: str | None) -> None:
        """Free the stream's slot now, close its connection and wake its thread. Idempotent."""
        with self.lock:
            if stream.ended:
                return
            stream.ended = True
            self.streams.remove(stream)
        if why:
            self.count(why)
        with contextlib.suppress(OSError):
            stream.conn.shutdown(socket.SHUT_RDWR)
        (stream.board or self.host.board).wake()


_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class BoardHandler(BaseHTTPRequestHandler):
    """GET and HEAD of the board's routes (see the module's notes); a host with more routes subclasses it."""

    server: BoardServer
    protocol_version = "HTTP/1.0"
    #: Errors in a request line without a version still get a status line and headers.
    default_request_version = "HTTP/1.0"
    server_version = "shoe-controller-board"
    sys_version = ""
    timeout = 10.0  # socket timeout: a stalled client cannot hold a thread for long

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s: " + format, self.server.label, self.client_address[0], *args)

    def parse_request(self) -> bool:
        ok = super().parse_request()
        if not self.server.head_read(self.connection):  # too late: the server has closed it, nothing is answered
            self.close_connection = True
            return False
        if not ok:
            return False
        if len(self.requestline.split()) == 2:  # "GET /": HTTP/0.9, which has no status line or headers
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/0.9 is not served; use HTTP/1.0 or 1.1")
            return False
        return True

    # GET and HEAD only: every other method is answered 405 (BaseHTTPRequestHandler looks up do_<METHOD>).
    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"read-only: GET and HEAD only\n", "text/plain; charset=utf-8",
                   extra={"Allow": "GET, HEAD"})  # fmt: skip

    def do_HEAD(self) -> None:
        self._route(head=True)

    def do_GET(self) -> None:
        self._route(head=False)

    def _route(self, head: bool) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path in ("/", "/index.html"):
            body, ctype = self.server.static["index.html"]
            self._send(HTTPStatus.OK, body, ctype, head=head)
        elif path.startswith("/static/") and path[len("/static/") :] in self.server.static:
            body, ctype = self.server.static[path[len("/static/") :]]
            self._send(HTTPStatus.OK, body, ctype, head=head)
        elif path == "/api/state":
            _version, body = self.server.host.board.current()
            self._send(HTTPStatus.OK, body, "application/json", head=head)
        elif path == "/events":
            self._events(head)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8", head=head)

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        ctype: str,
        *,
        head: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in {**_SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _events(self, head: bool, board: Board | None = None, alive: Callable[[], bool] | None = None) -> None:
        """The event stream of ``board`` (default the host's: a host with several, as the pit's tiles-only one,
        names which), ended once ``alive()`` says False (asked after each event and heartbeat: the pit's session
        that opened it ended)."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        for k, v in _SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if head:
            return
        server = self.server
        board = board or server.host.board
        stream = server.open_stream(str(self.client_address[0]), self.connection, board)
        try:
            # Whatever Last-Event-ID a reconnecting page sends (versions restart with the daemon), it gets
            # the current snapshot at once.
            version, body = board.current()
            self.wfile.write(f"retry: {server.host.retry_ms}\n".encode() + _event(version, body))
            self.wfile.flush()
            gap = server.host.min_gap
            while True:
                if gap:
                    board.wait_closing(gap, lambda: stream.ended)
                news = board.wait_newer(version, server.host.heartbeat, lambda: stream.ended)
                if board.closing or stream.ended or (alive is not None and not alive()):
                    break
                if news is None:
                    self.wfile.write(b": heartbeat\n\n")
                else:
                    version, body = news
                    self.wfile.write(_event(version, body))
                self.wfile.flush()
        except OSError:
            if not stream.ended:  # a write failed: the viewer went away
                server.count("streams_lost")
        finally:
            server.watch.remove(stream)
            server.end_stream(stream, None)


def _event(version: int, body: bytes) -> bytes:
    return b"id: %d\ndata: %s\n\n" % (version, body)
