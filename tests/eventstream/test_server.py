"""The neutral board server (:mod:`eventstream`) against rude clients, over real sockets on 127.0.0.1.

Half-finished and aborted requests at full speed, HTTP/0.9, one client opening stream after stream, and an
event-stream client killed with SIGKILL (a real process). Other loopback addresses (127.0.0.2, ...) stand
for other machines: the server bounds event streams per remote address. The host here is a bare one (a
board, its counters and bounds): the scoreboard (tests/displays) and the pit (tests/floor) serve
through the same server.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from eventstream import HEADER_TIMEOUT, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, Board, BoardHandler, BoardServer
from tests.eventstream.client import EventStream, get
from tests.waiting import until

PAGE = b"<!doctype html><p>the board</p>"


class Host:
    """A bare board host: what :class:`~eventstream.BoardServer` reads, and the server itself."""

    def __init__(
        self, *, heartbeat: float = 60.0, max_streams: int = 8, max_streams_per_address: int = 3, min_gap: float = 0.0
    ) -> None:
        self.board = Board()
        self.stats: Counter[str] = Counter()
        self.heartbeat = heartbeat
        self.retry_ms = 2000
        self.max_streams = max_streams
        self.max_streams_per_address = max_streams_per_address
        self.min_gap = min_gap
        self.board.publish_body(1, b'{"n":1}')
        self.server = BoardServer(
            ("127.0.0.1", 0), self, BoardHandler, {"index.html": (PAGE, "text/html; charset=utf-8")}, label="test"
        )

    @property
    def address(self) -> tuple[str, int]:
        return self.server.bound

    @property
    def streams(self) -> list[str]:
        with self.server.lock:
            return [s.address for s in self.server.streams]


@pytest.fixture
def sink() -> Iterator[Host]:
    host = Host()
    host.server.start()
    try:
        yield host
    finally:
        host.server.stop()


def _stream_from(sink: Host, source: str) -> EventStream:
    """An event stream opened from ``source`` (a loopback address standing for another machine)."""
    stream = EventStream(sink, source=source)
    stream.next()  # the current snapshot: the stream is registered
    return stream


def _wait(condition: Any, timeout: float = 10.0) -> float:
    """Wait for ``condition()``; return the seconds it took."""
    start = time.monotonic()
    until(condition, timeout, "the scoreboard", every=0.01)
    return time.monotonic() - start


def _raw(sink: Host, request: bytes) -> bytes:
    with socket.create_connection(sink.address, timeout=5) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def _abort(sink: Host, request: bytes) -> None:
    """Send ``request`` and reset the connection at once (SO_LINGER 0: an RST, not a FIN)."""
    s = socket.create_connection(sink.address, timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    try:
        s.sendall(request)
    finally:
        s.close()


@pytest.mark.e2e
def test_aborted_requests_at_full_speed_print_no_traceback(
    sink: Host, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="eventstream.server")
    page = get(sink, "/")[2]
    kinds = [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",  # whole request, gone before the answer
        b"GET /api/state HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost:",  # half a request
        b"GE",
    ]

    def abort_500(k: int) -> None:
        for i in range(500):
            _abort(sink, kinds[(i + k) % 4])

    threads = [threading.Thread(target=abort_500, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status, _headers, body = get(sink, "/")
    assert (status, body) == (200, page)  # the server still answers
    _wait(lambda: not sink.streams and sink.stats["clients_gone"] > 0)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    assert "Error" not in err
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]


def test_http_0_9_gets_a_status_line_and_headers(sink: Host) -> None:
    answer = _raw(sink, b"GET /\r\n")
    head, _, _body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 505 ")
    assert b"\r\nContent-Type: " in head


@pytest.mark.parametrize("line", [b"FOO\r\n", b"GET / HTTP/x.y\r\n\r\n", b"POST /\r\n"])
def test_malformed_request_lines_get_a_status_line(sink: Host, line: bytes) -> None:
    assert _raw(sink, line).startswith(b"HTTP/1.0 4")


def test_one_client_with_many_streams_cannot_lock_out_another(sink: Host) -> None:
    greedy = [_stream_from(sink, "127.0.0.1") for _ in range(40)]
    assert sink.streams == ["127.0.0.1"] * 3  # its own oldest streams were ended
    assert sink.stats["streams_evicted"] == 37
    with pytest.raises((EOFError, OSError)):
        greedy[0].next()  # an evicted stream is closed, not left hanging
    other = _stream_from(sink, "127.0.0.2")
    assert sorted(sink.streams) == ["127.0.0.1"] * 3 + ["127.0.0.2"]
    for s in [*greedy, other]:
        s.close()


def test_a_full_board_evicts_the_oldest_stream_of_the_biggest_holder(sink: Host) -> None:
    # max 8 streams, 3 per address: kiosk .1 (1), .2 (3), .3 (3), .4 (1) fill it.
    opened = [_stream_from(sink, a) for a in ["127.0.0.1", *["127.0.0.2"] * 3, *["127.0.0.3"] * 3, "127.0.0.4"]]
    assert len(sink.streams) == 8
    newcomer = _stream_from(sink, "127.0.0.5")
    assert len(sink.streams) == 8
    assert sink.streams.count("127.0.0.2") == 2  # .2 and .3 hold the most; .2's oldest went first
    assert sink.streams[0] == "127.0.0.1"  # the kiosk's single stream stays
    for s in [*opened, newcomer]:
        s.close()


CLIENT = """
import socket, sys
s = socket.create_connection(("{host}", {port}))
s.sendall(b"GET /events HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
f = s.makefile("rb")
while f.readline() != b"\\r\\n":
    pass
while not f.readline().startswith(b"data:"):
    pass
print("open", flush=True)
sys.stdin.read()
"""


@pytest.mark.e2e
def test_a_killed_stream_client_frees_its_slot_at_once(sink: Host) -> None:
    host, port = sink.address
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT.format(host=host, port=port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "open\n"
        _wait(lambda: len(sink.streams) == 1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        took = _wait(lambda: sink.streams == [])
        assert took < 30  # the heartbeat is 60 s: only the watcher can have freed it (about 10 ms here)
        assert sink.stats["streams_lost"] == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_stream_client_that_closes_frees_its_slot(sink: Host) -> None:
    stream = _stream_from(sink, "127.0.0.3")
    assert sink.streams == ["127.0.0.3"]
    stream.close()
    _wait(lambda: sink.streams == [], timeout=5)


def test_connections_over_the_bound_get_503_and_the_server_recovers(sink: Host) -> None:
    sources = [f"127.0.0.{2 + i // MAX_CONNECTIONS_PER_ADDRESS}" for i in range(MAX_CONNECTIONS)]  # each at its cap
    idle = [socket.create_connection(sink.address, timeout=5, source_address=(s, 0)) for s in sources]
    try:
        _wait(lambda: sink.stats["connections_refused"] == 0 and _served(sink) == MAX_CONNECTIONS)
        with socket.create_connection(sink.address, timeout=5, source_address=("127.0.0.99", 0)) as extra:
            assert extra.recv(4096).startswith(b"HTTP/1.0 503 ")  # answered before it asks
        assert sink.stats["connections_refused"] == 1
    finally:
        for s in idle:
            s.close()
    _wait(lambda: _served(sink) == 0)
    assert get(sink, "/api/state")[0] == 200


HALF_A_HEAD = b"GET / HTTP/1.1\r\nHost: x\r\n"  # and never the blank line that ends it


def _closed_by_server(s: socket.socket) -> bool:
    """Whether the server closed ``s`` without a word (end of file, or a reset)."""
    try:
        return s.recv(4096) == b""
    except ConnectionResetError:
        return True


def test_slow_heads_from_one_address_cannot_lock_out_another_and_are_closed_after_the_header_timeout(
    sink: Host,
) -> None:
    """80 connections from one address send half a request head and wait: the first ones take that address's
    slots only (the rest are answered 503 at once); another address gets the page and the stream; once the
    header timeout has passed, the slow ones are closed unanswered and every slot is free again."""
    started = time.monotonic()  # before the first connection: its clock starts when the server accepts it
    slow = [socket.create_connection(sink.address, timeout=HEADER_TIMEOUT + 5) for _ in range(80)]
    try:
        for s in slow:
            s.sendall(HALF_A_HEAD)
        _wait(lambda: sink.stats["connections_refused_address"] == 80 - MAX_CONNECTIONS_PER_ADDRESS)
        assert _served(sink) == MAX_CONNECTIONS_PER_ADDRESS
        host, port = sink.address
        with socket.create_connection((host, port), timeout=5, source_address=("127.0.0.2", 0)) as other:
            other.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b"".join(iter(lambda: other.recv(65536), b""))
        assert answer.startswith(b"HTTP/1.0 200 ") and answer.endswith(PAGE)
        stream = _stream_from(sink, "127.0.0.2")
        assert sink.streams == ["127.0.0.2"]
        held = slow[:MAX_CONNECTIONS_PER_ADDRESS]  # the ones served (the server takes them in order)
        for s in held:
            assert _closed_by_server(s)  # blocks until the server closes it
        waited = time.monotonic() - started
        assert HEADER_TIMEOUT - 0.1 <= waited <= HEADER_TIMEOUT + 3, waited
        assert sink.stats["heads_timed_out"] == MAX_CONNECTIONS_PER_ADDRESS
        _wait(lambda: _served(sink) == 1)  # the stream only
        assert sink.streams == ["127.0.0.2"]
        sink.board.publish_body(2, b'{"n":2}')
        assert stream.next()["data"] == '{"n":2}'  # still served
        stream.close()
        assert get(sink, "/api/state")[0] == 200
    finally:
        for s in slow:
            s.close()


def test_a_client_that_trickles_its_head_is_closed_at_the_header_timeout(sink: Host) -> None:
    """A byte at a time, well within the socket timeout each: the head's deadline still holds."""
    with socket.create_connection(sink.address, timeout=HEADER_TIMEOUT + 5) as s:
        started = time.monotonic()
        for byte in HALF_A_HEAD * 4:
            try:
                s.sendall(bytes([byte]))
            except OSError:
                break
            if time.monotonic() - started > HEADER_TIMEOUT + 3:
                break
            time.sleep(0.1)
        assert _closed_by_server(s)
        assert time.monotonic() - started <= HEADER_TIMEOUT + 3
    assert sink.stats["heads_timed_out"] == 1


def _served(sink: Host) -> int:
    server = sink.server
    with server.lock:
        return server.active


def test_routes_serve_the_page_the_board_and_nothing_else(sink: Host) -> None:
    assert get(sink, "/")[::2] == (200, PAGE)
    status, headers, body = get(sink, "/api/state")
    assert (status, headers["Content-Type"], body) == (200, "application/json", b'{"n":1}')
    assert get(sink, "/static/index.html")[::2] == (200, PAGE)
    assert get(sink, "/static/../server.py")[0] == 404
    assert get(sink, "/api/state", method="POST")[0] == 405


def test_events_push_each_published_body_then_heartbeats() -> None:
    host = Host(heartbeat=0.05)
    host.server.start()
    try:
        stream = EventStream(host)
        first = stream.next()
        assert (first["retry"], first["id"], first["data"]) == ("2000", "1", '{"n":1}')
        host.board.publish_body(2, b'{"n":2}')
        assert stream.next()["data"] == '{"n":2}'
        assert stream.next(comments=True)["comment"] == "heartbeat"
        stream.close()
    finally:
        host.server.stop()


def test_a_host_s_min_gap_sends_the_newest_at_most_once_per_gap() -> None:
    """The pit's pacing: bodies published faster than ``min_gap`` are not each sent; the stream skips to
    the newest, and no two events are closer than the gap."""
    host = Host(min_gap=0.3)
    host.server.start()
    try:
        stream = EventStream(host)
        assert stream.next()["data"] == '{"n":1}'
        started = time.monotonic()
        for n in range(2, 12):  # ten bodies in well under one gap
            host.board.publish_body(n, b'{"n":%d}' % n)
        got = stream.next()
        took = time.monotonic() - started
        assert got["data"] == '{"n":11}'  # not {"n":2}: the nine between were never sent
        assert took >= 0.25
        host.board.publish_body(12, b'{"n":12}')
        assert stream.next()["data"] == '{"n":12}'
        assert time.monotonic() - started >= 0.55  # a second gap before the next event
        stream.close()
    finally:
        host.server.stop()


def test_stop_ends_open_streams_and_leaves_no_thread() -> None:
    before = set(threading.enumerate())
    host = Host()
    host.server.start()
    names = {t.name for t in set(threading.enumerate()) - before}
    assert {"test-http", "test-streams"} <= names  # the label names the threads
    stream = EventStream(host)
    stream.next()
    host.server.stop()
    assert set(threading.enumerate()) - before == set()
    with pytest.raises((EOFError, OSError)):
        stream.next()
    stream.close()
