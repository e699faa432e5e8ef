"""Raw HTTP and Server-Sent Events clients for the board servers' tests (the scoreboard's, the pit's, the
neutral server's own): anything with an ``address`` ``(host, port)`` can be asked."""

from __future__ import annotations

import http.client
import socket
from typing import Any, Protocol


class Served(Protocol):
    @property
    def address(self) -> tuple[str, int]: ...


def get(served: Served, path: str, method: str = "GET", headers: dict[str, str] | None = None) -> Any:
    """``(status, headers, body)`` of one request."""
    host, port = served.address
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


class EventStream:
    """A raw /events client: reads Server-Sent Events one at a time."""

    def __init__(self, served: Served, last_event_id: str | None = None, source: str | None = None) -> None:
        source_address = None if source is None else (source, 0)
        self.sock = socket.create_connection(served.address, timeout=5, source_address=source_address)
        extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
        self.sock.sendall(f"GET /events HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
        self.file = self.sock.makefile("rb")
        self.headers = self._block()

    def _block(self) -> list[str]:
        lines: list[str] = []
        while True:
            line = self.file.readline()
            if not line:
                raise EOFError("stream closed")
            line = line.rstrip(b"\r\n")
            if not line:
                return lines
            lines.append(line.decode())

    def next(self, comments: bool = False) -> dict[str, str]:
        while True:
            block = self._block()
            fields: dict[str, str] = {}
            for line in block:
                name, _, value = line.partition(":")
                fields[name or "comment"] = value.strip()
            if "data" in fields or (comments and "comment" in fields):
                return fields

    def close(self) -> None:
        self.file.close()
        self.sock.close()
