"""The readers' side of the table's feed: connect, read validated lines, reconnect; never trust a line.

:class:`FeedClient` runs one thread: it connects to a feed socket (trying again every
``backoff``..``backoff_max`` seconds while the table is not there), reads the table's lines, decodes each with
:func:`controller.feed.messages.decode_table` and hands the typed message to ``on_message``. A line that is
not a message (too long, not JSON, of the wrong shape) is refused, logged and counted in :attr:`stats`, and
the client reads on. A gap in the updates' numbers (a line refused) ends the connection, and a lost
connection is made again: the reader starts again from the next hello, which the table sends on every
connection. A reader of the money socket (``money=True``) gets no hello: each ``money`` line is the whole
money view, handed on as it comes.

On the link socket the floor link also sends the floor's signed ack through :meth:`FeedClient.send_ack`: the newest
ack is kept and sent again on every (re)connect, so a table restarted meanwhile still hears it; so is the floor's
signed staff list (:meth:`FeedClient.send_staff`), the newest only. No sender ever waits on the table: a staff
list (up to some 500 kB) goes as the table's socket takes it, the rest by the reader's thread when the socket
is writable again, and an ack that comes meanwhile follows the list's last byte (a line is never torn, two
never mixed). On the money socket the dealer screen sends
the buy-ins entered at it through :meth:`FeedClient.send_buy_in`: at once or not at all, never queued.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import socket
import threading
from collections import Counter
from collections.abc import Callable

from controller.feed.messages import (
    MAX_LINE,
    FeedError,
    Hello,
    KeyLine,
    PinLine,
    RateLine,
    TableMessage,
    Update,
    decode_table,
    encode_ack,
    encode_buy_in,
    encode_key,
    encode_pin,
    encode_rate,
    encode_staff,
)
from controller.game.cash import BuyIn
from floor_protocol.ack import Ack
from floor_protocol.staff import StaffList

log = logging.getLogger(__name__)


class _StartAgain(Exception):
    """Updates were missed: end this connection, the next one starts with a hello."""


class FeedClient:
    """A reader of one feed socket (see the module's docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        on_message: Callable[[TableMessage], None],
        *,
        on_connected: Callable[[bool], None] | None = None,
        name: str = "feed",
        money: bool = False,
        backoff: float = 0.05,
        backoff_max: float = 1.0,
    ) -> None:
        self.path = os.fspath(path)
        self.on_message = on_message
        self.on_connected = on_connected
        self.name = name
        #: A reader of ``money.sock`` (the dealer screen's): takes ``money`` lines, which any other reader refuses.
        self.money = money
        self.backoff = backoff
        self.backoff_max = backoff_max
        #: connects, lines, refused (bad lines), gaps (updates missed), lost (connections that ended).
        self.stats: Counter[str] = Counter()
        self.connected = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()  # the socket and the ack, shared with send_ack's callers
        self._ack: Ack | None = None
        self._ack_sent: Ack | None = None
        self._staff: StaffList | None = None
        self._staff_sent: StaffList | None = None  # the list whose line is sent (or being sent) on this connection
        self._out = bytearray()  # what the socket has not taken yet of that line (the reader's thread sends it)
        self._stop = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"{self.name}-reader", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._wake_r.close()
        self._wake_w.close()

    def send_ack(self, ack: Ack) -> None:
        """Hand the floor's whole signed ack to the table (now if connected, else at the next connect; the newest
        only). Never blocks. The floor link believed it; the table verifies it again before it stores it."""
        with self._lock:
            if ack == self._ack:
                return
            self._ack = ack
            self._flush_ack()
        self._wake()

    def send_staff(self, staff: StaffList) -> None:
        """Hand the floor's signed staff list to the table (now if connected, else at the next connect; the
        newest only). The floor link verified it; the table verifies it again before it keeps it. Never blocks:
        what the table's socket does not take at once, the reader's thread sends as it can."""
        with self._lock:
            if staff == self._staff:
                return
            self._staff = staff
            self._flush_staff()
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: the reader's thread is awake already
            self._wake_w.send(b"\0")

    def _flush_staff(self) -> None:
        """Under the lock: start the newest staff list's line if the table has not had it on this connection
        and no line is half sent (:meth:`_pump` starts it then)."""
        if self._sock is None or self._staff is None or self._staff == self._staff_sent or self._out:
            return
        self._staff_sent = self._staff
        self._out = bytearray(encode_staff(self._staff))
        self._pump()

    def _pump(self) -> None:
        """Under the lock: send what the socket takes of the half-sent line, without waiting (the reader's
        thread sends the rest when the socket is writable); once it is all gone, the newest ack the table has
        not had, then the newest staff list."""
        sock = self._sock
        while self._out and sock is not None:
            try:
                sent = sock.send(self._out, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:
                self._out.clear()  # the reader's thread sees the connection end; all goes at the next connect
                return
            del self._out[:sent]
        if not self._out and sock is not None:
            self._flush_ack()
            self._flush_staff()

    def send_buy_in(self, buy_in: BuyIn) -> bool:
        """Hand a buy-in entered at the dealer screen to the table (a reader of ``money.sock`` only): sent now,
        whole, or not at all (False: the table is not connected or its socket is full; nothing is queued, so the
        dealer who is told "not sent" enters it again and it is never taken twice). Never blocks."""
        if not self.money:
            raise ValueError("only a reader of money.sock sends buy-ins")
        return self._send_now(encode_buy_in(buy_in), "buy_ins_sent")

    def send_pin(self, pin: PinLine) -> bool:
        """Hand a supervisor's PIN entered at the dealer screen to the table (``money.sock`` only), as
        :meth:`send_buy_in` does: now, whole, or not at all; never kept here."""
        if not self.money:
            raise ValueError("only a reader of money.sock sends PINs")
        return self._send_now(encode_pin(pin), "pins_sent")

    def send_rate(self, rate: RateLine) -> bool:
        """Hand the dealer screen's RATE of a seat to the table (``money.sock`` only), now or not at all."""
        if not self.money:
            raise ValueError("only a reader of money.sock sends ratings")
        return self._send_now(encode_rate(rate), "rates_sent")

    def send_key(self, key: KeyLine) -> bool:
        """Hand the dealer screen's card keyed for an unreadable coup card to the table (``money.sock`` only), now
        or not at all."""
        if not self.money:
            raise ValueError("only a reader of money.sock sends cards keyed")
        return self._send_now(encode_key(key), "keys_sent")

    def _send_now(self, line: bytes, counted: str) -> bool:
        with self._lock:
            if self._sock is None or self._out:
                return False
            try:
                sent = self._sock.send(line, socket.MSG_DONTWAIT)
            except OSError:
                return False
            if sent == len(line):
                self.stats[counted] += 1
                return True
            # a torn line would be refused by the table and drop this reader: end the connection, start again
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            return False

    def _flush_ack(self) -> None:
        """Under the lock: start the newest ack's line if the table has not had it on this connection and no
        line is half sent (:meth:`_pump` starts it after that one's last byte)."""
        if self._sock is None or self._ack is None or self._ack == self._ack_sent or self._out:
            return
        self._ack_sent = self._ack
        self._out = bytearray(encode_ack(self._ack))
        self._pump()

    # -- the reader's thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        delay = self.backoff
        while not self._stop.is_set():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.path)
            except OSError as exc:
                sock.close()
                if self.stats["connects"] == 0 and delay == self.backoff:
                    log.info("%s: waiting for the table at %s (%s)", self.name, self.path, exc.strerror or exc)
                self._stop.wait(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            delay = self.backoff
            self.stats["connects"] += 1
            with self._lock:
                self._sock = sock
                self._ack_sent = None
                self._staff_sent = None
                self._out.clear()
                self._flush_ack()
                self._flush_staff()
            self.connected = True
            log.info("%s: connected to the table at %s", self.name, self.path)
            if self.on_connected is not None:
                self.on_connected(True)
            try:
                self._read(sock)
            finally:
                with self._lock:
                    self._sock = None
                    self._out.clear()
                sock.close()
                self.connected = False
                if self.on_connected is not None:
                    self.on_connected(False)
            if not self._stop.is_set():
                self.stats["lost"] += 1
                log.warning("%s: the table's feed ended; connecting again", self.name)
                self._stop.wait(self.backoff)

    def _read(self, sock: socket.socket) -> None:
        buffer = bytearray()
        expected: int | None = None  # the next update's number; None until a hello
        skipping = False  # inside a line too long to keep
        with selectors.DefaultSelector() as sel:
            sel.register(sock, selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            writing = False
            while not self._stop.is_set():
                with self._lock:
                    want = bool(self._out)
                if want != writing:  # the socket's writability matters only while a line is half sent
                    sel.modify(sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0))
                    writing = want
                events = sel.select(timeout=1.0)
                readable = False
                for key, mask in events:
                    if key.fileobj is self._wake_r:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                    elif mask & selectors.EVENT_WRITE:
                        with self._lock:
                            self._pump()
                    if key.fileobj is sock and mask & selectors.EVENT_READ:
                        readable = True
                if not readable:
                    continue
                try:
                    data = sock.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buffer += data
                while True:
                    end = buffer.find(b"\n")
                    if end < 0:
                        if len(buffer) > MAX_LINE:
                            self._refuse(f"a line of over {MAX_LINE} bytes")
                            buffer.clear()
                            skipping = True
                            expected = None
                        break
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    if skipping:
                        skipping = False
                        continue
                    try:
                        expected = self._take(line, expected)
                    except _StartAgain:
                        return

    def _take(self, line: bytes, expected: int | None) -> int | None:
        """Decode and hand on one line; returns the next update number expected (None: wait for a hello)."""
        self.stats["lines"] += 1
        try:
            message = decode_table(line, money=self.money)
        except FeedError as exc:
            self._refuse(str(exc))
            return None if expected is None else expected + 1  # the gap shows at the next update
        if isinstance(message, Hello):
            self.on_message(message)
            return 0  # the next update may have any number: the hello has no number of its own
        if isinstance(message, Update):
            if expected is None:
                return None  # not since a hello: wait for one (the table sends one per connection)
            if expected and message.n != expected:
                self.stats["gaps"] += 1
                log.warning(
                    "%s: updates %d-%d missed; starting again from a new hello", self.name, expected, message.n - 1
                )
                raise _StartAgain
            self.on_message(message)
            return message.n + 1
        self.on_message(message)
        return expected

    def _refuse(self, why: str) -> None:
        self.stats["refused"] += 1
        log.warning("%s: refused a line from the table: %s", self.name, why)
