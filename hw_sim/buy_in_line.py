"""The simulated dealer screen's buy-in entries: the players' buy-ins sent to the table on its ``money.sock``.

The table's ``money.sock`` (``docs/architecture.md``, the money's own channel) carries the money lines to the
dealer screen and takes ``buy_in`` lines back: one JSON object per line, ``{"t": "buy_in", "seat": 3,
"cents": 500000, "tender": "cash", "player_ref": null}``. ``shoe-sim --buy-ins PATH`` is that dealer screen:
:class:`BuyInLine` connects to the socket (again and again until the table is there), sends each buy-in the
money table made (:meth:`hw_sim.money.MoneyTable.take_buy_ins`) in order, and reads and drops the money lines
the table sends (a reader that stops reading is dropped by the table), keeping of them only the approval the
table holds for a supervisor (:attr:`BuyInLine.approval`: the money line's ``view.approval``), which the
simulated supervisor answers with a badge and an ``approve`` line (:meth:`BuyInLine.send_lines`). A line not yet
sent waits for the connection; one sent on a connection the table closed before it read the line is lost (said
on stderr).
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections import deque
from pathlib import Path

from controller.game.cash import BuyIn
from controller.game.wagers import ApprovalView

__all__ = ["BuyInLine", "buy_in_line"]

#: How long between two tries to connect to the table's socket.
RETRY = 0.2


def buy_in_line(buy_in: BuyIn) -> bytes:
    """A buy-in as the table's ``money.sock`` takes it (one line)."""
    b = buy_in
    fields = {"seat": b.seat, "cents": b.cents, "tender": b.tender.value, "player_ref": b.player_ref}
    return json.dumps({"t": "buy_in", **fields}, separators=(",", ":")).encode() + b"\n"


class BuyInLine:
    """The connection to the table's ``money.sock``: buy-ins out, the money lines read and dropped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._sock: socket.socket | None = None
        self._waiting: deque[bytes] = deque()
        self._next_try = 0.0
        self.sent = 0
        #: The approval the table's last money line held for a supervisor (None: none).
        self.approval: ApprovalView | None = None
        #: The table's last money line offered KEY CARD (an unreadable coup card may be keyed).
        self.keyable = False
        self._inbox = bytearray()

    @property
    def pending(self) -> bool:
        """Buy-ins wait to be sent."""
        return bool(self._waiting)

    def read_fds(self) -> list[int]:
        return [] if self._sock is None else [self._sock.fileno()]

    def send(self, buy_ins: list[BuyIn], now: float) -> None:
        """Queue ``buy_ins`` and send what waits (connecting first when not connected)."""
        self.send_lines([buy_in_line(b) for b in buy_ins], now)

    def send_lines(self, lines: list[bytes], now: float) -> None:
        """Queue ``lines`` (buy-ins, a supervisor's PIN) and send what waits (connecting first when not connected)."""
        self._waiting.extend(lines)
        if not self._waiting:
            return
        if self._sock is None and now >= self._next_try:
            self._next_try = now + RETRY
            self._connect()
        while self._sock is not None and self._waiting:
            try:
                self._sock.sendall(self._waiting[0])
            except OSError as exc:
                self._lost(f"sending a buy-in: {exc.strerror or exc}")
                return
            self._waiting.popleft()
            self.sent += 1

    def readable(self) -> None:
        """The table sent something (a money line): read and drop it; the end of the connection noticed."""
        if self._sock is None:
            return
        try:
            data = self._sock.recv(65536)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(str(exc.strerror or exc))
            return
        if not data:
            self._lost("the table closed money.sock")
            return
        self._inbox += data
        *lines, rest = bytes(self._inbox).split(b"\n")
        self._inbox = bytearray(rest[-(1 << 20) :])
        for line in lines[-1:]:  # the newest money line is the table's whole view
            self._read_money(line)

    def _read_money(self, line: bytes) -> None:
        """Keep the approval of a money line (read as the dealer screen reads it: bounded and validated); a line
        that is not one is dropped, never a crash."""
        # Not controller.feed.messages' decoder: it needs cryptography, and the simulator runs on the base install.
        try:
            value = json.loads(line)
        except ValueError:
            return
        view = value.get("view") if isinstance(value, dict) and value.get("t") == "money" else None
        if not isinstance(view, dict) or "phase" not in view:  # not a money line's whole view
            return
        self.keyable = view.get("keyable") is True
        approval = view.get("approval")
        try:
            self.approval = None if approval is None else ApprovalView(**approval)
        except TypeError:
            return

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None

    def _connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(self.path))
        except OSError:
            sock.close()
            return
        sock.settimeout(1.0)  # a buy-in line is small: a send waits at most this long for room
        self._sock = sock

    def _lost(self, why: str) -> None:
        sys.stderr.write(f"shoe-sim: buy-ins: {why}; connecting again\n")
        sys.stderr.flush()
        self.close()
        self.approval = None
        self.keyable = False
