"""Slow clients cannot lock the pit's other viewers out: a real pit (its server is eventstream's) and real
sockets; 127.0.0.2 stands for another machine on the floor."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from eventstream import HEADER_TIMEOUT, MAX_CONNECTIONS
from floor.archive import Archive
from floor.pit import Pit
from tests.floor.test_pit_server import _read_until


def test_64_slow_heads_from_one_address_leave_the_page_and_the_stream_to_another(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    pit.start(("127.0.0.1", 0), None)
    host, port = pit.address
    started = time.monotonic()
    slow = [socket.create_connection((host, port), timeout=HEADER_TIMEOUT + 5) for _ in range(MAX_CONNECTIONS)]
    try:
        for s in slow:
            s.sendall(b"GET / HTTP/1.1\r\nHost: pit\r\n")  # half a head, and then nothing
        with socket.create_connection((host, port), timeout=5, source_address=("127.0.0.2", 0)) as viewer:
            viewer.sendall(b"GET / HTTP/1.1\r\nHost: pit\r\n\r\n")
            page = b"".join(iter(lambda: viewer.recv(65536), b""))
        assert page.startswith(b"HTTP/1.0 200 ") and b'data-testid="tiles"' in page
        with socket.create_connection((host, port), timeout=5, source_address=("127.0.0.2", 0)) as stream:
            stream.sendall(b"GET /events HTTP/1.1\r\nHost: pit\r\n\r\n")
            assert b'data: {"version":' in _read_until(stream, b"data: {")
        assert time.monotonic() - started < HEADER_TIMEOUT  # all of it while the slow ones still wait
        closed = 0
        for s in slow:  # each is answered 503 at once (past the address's cap) or closed at the timeout
            try:
                first = s.recv(4096)
            except ConnectionResetError:
                first = b""
            closed += first == b""
            assert first in (b"",) or first.startswith(b"HTTP/1.0 503 ")
        assert time.monotonic() - started <= HEADER_TIMEOUT + 3
        assert closed == pit.stats["heads_timed_out"] > 0
    finally:
        for s in slow:
            s.close()
        pit.close()
