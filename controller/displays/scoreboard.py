"""The scoreboard's server: publishes each snapshot and serves the page, ``/api/state`` and ``/events``.

:class:`ScoreboardSink` is a table sink. The daemon wraps it in a :class:`~controller.sinks.QueuedSink`, so
:meth:`ScoreboardSink.update` runs on the sink's own thread, never on the table loop's: it builds the
snapshot with the pure :class:`~controller.displays.snapshot.SnapshotBuilder`, encodes it once, and
publishes the bytes on a :class:`Board`. The HTTP threads only ever read the latest published bytes (under
a condition variable) and never touch the table's state.

**Server choice**: the standard library's :class:`http.server.ThreadingHTTPServer`. The load is one kiosk
browser plus a few viewers on a private network, read-only, with a handful of routes; a thread per
connection is fine at that scale, Server-Sent Events need nothing more than a long-lived response, and it
adds no dependency to a Raspberry Pi install (no event loop beside the table loop, no wheels to build).
What the standard library leaves to us is done here, each with a test:

* a client that goes away mid-request (``BrokenPipeError``, ``ConnectionResetError``, a timeout) is
  counted in :attr:`ScoreboardSink.stats` and logged at debug level, never a traceback on stderr;
* HTTP/0.9 (a request line without a version) is answered ``505`` with a proper HTTP/1.0 status line and
  headers, and so is every malformed request (the standard library would answer those with a bare body);
* event streams are bounded overall (:data:`MAX_STREAMS`) and per remote address
  (:data:`MAX_STREAMS_PER_ADDRESS`); a new stream over a bound **evicts** the oldest stream of its own
  address, or, when the whole board is full, the oldest stream of the address holding the most. One
  client opening stream after stream therefore only ever displaces itself, and a kiosk's single stream is
  the last to go;
* a stream whose client died frees its slot at once: one watcher thread waits (``selectors``) on every
  stream's socket, and end-of-file or a reset ends the stream immediately, not at the next heartbeat;
* at most :data:`MAX_CONNECTIONS` connections are served at once (a thread each); one more is answered 503
  on the spot and closed, so stalled clients cannot pile up threads;
* a socket timeout on every connection, GET and HEAD only (405 otherwise), static files read once at start
  from a fixed list (no path from the request ever reaches the file system).
"""

from __future__ import annotations

import contextlib
import json
import logging
import selectors
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from controller.displays.snapshot import LimitsLike, SnapshotBuilder, TableInfo
from controller.game.public import FeedUpdate, PublicProjector, PublicView
from controller.game.rules import Ruleset
from controller.game.table import Notice, TableView

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
#: The files the server serves, read once at start: URL name -> content type.
STATIC_FILES: Mapping[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "scoreboard.css": "text/css; charset=utf-8",
    "scoreboard.js": "text/javascript; charset=utf-8",
}
#: Event streams served at once (a kiosk and a few viewers need far fewer).
MAX_STREAMS = 32
#: Event streams per remote address: a browser opens at most six connections to one server anyway.
MAX_STREAMS_PER_ADDRESS = 6
#: Connections served at once (a thread each); more are answered 503 at once and closed.
MAX_CONNECTIONS = 64
_BUSY = b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class BoardHost(Protocol):
    """What the HTTP server reads from its owner: the scoreboard sink here, the floor's pit view
    (:mod:`floor.pit`) there. Both serve a :class:`Board` through the same bounded server."""

    board: Board
    stats: Counter[str]
    heartbeat: float
    retry_ms: int
    max_streams: int
    max_streams_per_address: int


class ScoreboardSettings(Protocol):
    """The ``[scoreboard]`` settings the sink reads (:class:`~controller.config.ScoreboardSection`)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def reveal(self) -> str: ...


# ---------------------------------------------------------------------------------------------------------
# Publication (the sink's thread writes, the server's threads read)


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

    def wake(self) -> None:
        """Wake every waiting stream so that each checks whether it has ended."""
        with self.cond:
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closing = True
            self.cond.notify_all()


class ScoreboardSink:
    """The scoreboard as a table sink with its own small HTTP server.

    ``ScoreboardSink(settings, table_name=..., limits=..., ruleset=..., history=journal.coups(shoe=N))``,
    then :meth:`start`; :meth:`update` (or :meth:`update_many`) for each table update; :meth:`close` stops
    the server.
    """

    name = "scoreboard"

    def __init__(
        self,
        settings: ScoreboardSettings,
        *,
        table_name: str,
        limits: LimitsLike,
        ruleset: Ruleset,
        history: Sequence[Mapping[str, Any]] = (),
        heartbeat: float = 15.0,
        retry_ms: int = 2000,
        wall_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        max_streams: int = MAX_STREAMS,
        max_streams_per_address: int = MAX_STREAMS_PER_ADDRESS,
    ) -> None:
        self.settings = settings
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.wall_ms = wall_ms
        self.max_streams = max_streams
        self.max_streams_per_address = max_streams_per_address
        self.builder = SnapshotBuilder(TableInfo(table_name, limits, ruleset), reveal=settings.reveal, history=history)
        #: The squeeze for views handed to :meth:`update` in this process (the board process gets its
        #: updates from the table's feed, projected there).
        self.projector = PublicProjector(settings.reveal)
        self.board = Board()
        self.fault: str | None = None
        #: What the server has seen go wrong on the clients' side (for tests, tools and the logs).
        self.stats: Counter[str] = Counter()
        self._content: dict[str, Any] | None = None
        self._roads_obj: object = None
        self._roads_json = "null"
        self._version = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._publish(self.builder.build())

    # -- the table's updates ---------------------------------------------------------------------
    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        """A table sink's update in this process: projected (the squeeze applied), then shown."""
        self.publish(self.projector.update(view, notices))

    def update_many(self, updates: Sequence[tuple[TableView, Sequence[Notice]]]) -> None:
        """Several updates that queued up while the last snapshot was built (a fast shoe): follow every one
        in order, publish one snapshot of the newest. A board only ever shows the current state."""
        self.publish_many([self.projector.update(view, notices) for view, notices in updates])

    def publish(self, update: FeedUpdate) -> None:
        """Show one update from the table (its feed, or :meth:`update`)."""
        self._publish(self.builder.build(update))

    def publish_many(self, updates: Sequence[FeedUpdate]) -> None:
        """Follow every update in order and publish one snapshot of the newest."""
        for update in updates[:-1]:
            self.builder.follow(update)
        if updates:
            self._publish(self.builder.build(updates[-1]))

    def reset(self, view: PublicView, history: Sequence[Mapping[str, Any]]) -> None:
        """Start again from the table's word (the feed's hello after a (re)connect) and show it."""
        self.builder.reset(view, history)
        self._publish(self.builder.build())

    def _publish(self, content: dict[str, Any]) -> None:
        if content == self._content:  # the cached road parts compare by identity: cheap
            return  # nothing visible changed: no new version (in a squeeze game not even a tick)
        self._content = content
        self._version += 1
        # The roads only change on a declare: encode them once and splice them into each snapshot.
        roads = content["roads"]
        if roads is not self._roads_obj:
            self._roads_obj = roads
            self._roads_json = json.dumps(roads, separators=(",", ":"))
        rest = {"version": self._version, "ts_ms": self.wall_ms(), **content}
        del rest["roads"]
        head = json.dumps(rest, separators=(",", ":"))
        self.board.publish_body(self._version, f'{head[:-1]},"roads":{self._roads_json}}}'.encode())

    def snapshot(self) -> dict[str, Any]:
        """The latest published snapshot (decoded; for tests and tools)."""
        return dict(json.loads(self.board.current()[1]))

    @property
    def version(self) -> int:
        return self._version

    @property
    def streams(self) -> list[str]:
        """The remote address of each open event stream, oldest first."""
        server = self._server
        if server is None:
            return []
        with server.lock:
            return [s.address for s in server.streams]

    # -- the server ------------------------------------------------------------------------------
    def start(self) -> bool:
        """Bind and serve in a thread. A bind failure is logged and kept in :attr:`fault`; returns False."""
        host, port = self.settings.host, self.settings.port
        try:
            server = _Server((host, port), self)
        except OSError as exc:
            self.fault = f"cannot bind {host}:{port}: {exc.strerror or exc}"
            log.error("scoreboard: %s; the table runs without it", self.fault)
            return False
        self._server = server
        server.watch.start()
        self._thread = threading.Thread(
            target=server.serve_forever, name="scoreboard-http", kwargs={"poll_interval": 0.2}
        )
        self._thread.start()
        h, p = self.address
        log.info("scoreboard: serving http://%s:%d/ (reveal %s)", h, p, self.settings.reveal)
        return True

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` actually bound (the port chosen when the settings say 0)."""
        if self._server is None:
            return self.settings.host, self.settings.port
        addr = self._server.server_address
        return str(addr[0]), int(addr[1])

    def close(self) -> None:
        """Stop the server: end the event streams, join every thread, close every socket. Idempotent."""
        if self._server is not None and self.stats:
            log.info("scoreboard: clients: %s", ", ".join(f"{k} {v}" for k, v in sorted(self.stats.items())))
        self.board.close()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.drop_connections()
            server.server_close()  # joins the request threads
            server.watch.close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


# ---------------------------------------------------------------------------------------------------------
# Event streams: bounded, evicted oldest-first, ended at once when their client dies


@dataclass(eq=False)
class _Stream:
    address: str
    conn: socket.socket
    ended: bool = field(default=False)

    def __post_init__(self) -> None:
        self.fd = self.conn.fileno()  # kept: the watcher may see the socket only after it is closed


class _StreamWatch:
    """One thread that waits on every event stream's socket and ends a stream the moment its client
    closes or resets the connection (a stream's own thread only writes, so it would notice at its next
    heartbeat). Bytes a client sends on a stream are read and dropped."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ)
        self._lock = threading.Lock()
        self._pending: list[tuple[bool, _Stream]] = []
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="scoreboard-streams")

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


def _load_static() -> dict[str, tuple[bytes, str]]:
    return {name: ((STATIC_DIR / name).read_bytes(), ctype) for name, ctype in STATIC_FILES.items()}


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so that server_close() joins the request threads
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(
        self,
        address: tuple[str, int],
        sink: BoardHost,
        handler: type[BaseHTTPRequestHandler] | None = None,
        static: Mapping[str, tuple[bytes, str]] | None = None,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.sink = sink
        self.static = _load_static() if static is None else dict(static)
        self.lock = threading.Lock()
        self.streams: list[_Stream] = []  # oldest first
        self.active = 0  # connections being served (a thread each)
        self.connections: set[socket.socket] = set()
        self.watch = _StreamWatch(self)
        try:
            super().__init__(address, handler or _Handler)
        except BaseException:
            self.watch.close()
            raise

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (or stalled) is counted, not a traceback; anything else is a bug."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # BrokenPipeError, ConnectionResetError, TimeoutError ...
            self.count("clients_gone")
            log.debug("scoreboard: client %s went away: %r", client_address[0], exc)
        else:
            log.error("scoreboard: request from %s failed", client_address[0], exc_info=exc)

    def count(self, what: str) -> None:
        with self.lock:
            self.sink.stats[what] += 1

    # -- connections: a thread each, at most MAX_CONNECTIONS at once ------------------------------------
    def process_request(self, request: Any, client_address: Any) -> None:
        with self.lock:
            full = self.active >= MAX_CONNECTIONS
            if not full:
                self.active += 1
        if full:  # answered on the accepting thread: a few bytes into an empty socket buffer never block
            self.count("connections_refused")
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done()

    def _done(self) -> None:
        with self.lock:
            self.active -= 1

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
    def open_stream(self, address: str, conn: socket.socket) -> _Stream:
        """Register a new stream, evicting one first if a bound is reached (see the module's notes)."""
        stream = _Stream(address, conn)
        victim: _Stream | None = None
        with self.lock:
            mine = [s for s in self.streams if s.address == address]
            if len(mine) >= self.sink.max_streams_per_address:
                victim = mine[0]
            elif len(self.streams) >= self.sink.max_streams:
                holders = Counter(s.address for s in self.streams)
                most = max(holders.values())
                victim = next(s for s in self.streams if holders[s.address] == most)
            self.streams.append(stream)
        if victim is not None:
            log.info("scoreboard: event streams full; ending the oldest one of %s", victim.address)
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
        self.sink.board.wake()


_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"
    #: Errors in a request line without a version still get a status line and headers.
    default_request_version = "HTTP/1.0"
    server_version = "shoe-controller-scoreboard"
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
        log.debug("scoreboard %s: " + format, self.client_address[0], *args)

    def parse_request(self) -> bool:
        if not super().parse_request():
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
            _version, body = self.server.sink.board.current()
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

    def _events(self, head: bool) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        for k, v in _SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if head:
            return
        server, board = self.server, self.server.sink.board
        stream = server.open_stream(str(self.client_address[0]), self.connection)
        try:
            # Whatever Last-Event-ID a reconnecting page sends (versions restart with the daemon), it gets
            # the current snapshot at once.
            version, body = board.current()
            self.wfile.write(f"retry: {server.sink.retry_ms}\n".encode() + _event(version, body))
            self.wfile.flush()
            while True:
                news = board.wait_newer(version, server.sink.heartbeat, lambda: stream.ended)
                if board.closing or stream.ended:
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


#: The bounded server and its handler, for the floor's pit view (:mod:`floor.pit`): it serves its own routes
#: (``_route``) and static files through the same limits, eviction and error handling.
BoardServer = _Server
BoardHandler = _Handler
