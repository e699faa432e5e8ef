"""The table's side of the feed: a sink of the table loop that publishes on two Unix sockets and never waits.

``feed.sock`` (mode 0666 by default) is the public feed: the board, or any local reader, gets the hello and
every update, and may send nothing (a reader that sends is refused, counted and dropped). ``link.sock``
(mode 0660: the table's group, which the floor link's user is in) gets the same lines plus ``commit`` and
``metrics``, and may send ``ack`` lines: the floor's signed ack, which :attr:`FeedServer.on_ack` hands to the
table loop (the loop verifies it again and stores it: the table stays the journal's one writer).
``money.sock`` (mode 0660, and group :attr:`FeedServer.money_group` when one is set: the board's) carries the
money at the table (:class:`~controller.game.wagers.MoneyView`, the ``money`` line) for the dealer screen, and
nothing else; its readers may send ``buy_in`` lines (a buy-in entered for a seat), which
:attr:`FeedServer.on_buy_in` hands to the table loop, and nothing else: a reader that sends another line is
refused, counted and dropped, a ``buy_in`` out of bounds refused and counted in one line. The wagers never go
on the other two sockets: a table without a bet-spot reader (``TableView.money`` None) sends no ``money`` line
at all.

The loop calls :meth:`FeedServer.update` and :meth:`FeedServer.committed` on its own thread: each encodes
one line and sends it to every reader without blocking (``MSG_DONTWAIT``). What a reader's socket does not
take at once waits in that reader's own buffer, drained by the feed's thread as the socket allows; a reader
whose buffer passes :data:`MAX_BACKLOG` bytes (it stopped reading, or reads slower than the table deals) is
dropped, logged and counted, and gets a fresh hello when it connects again. The loop never waits for a
reader, and a reader never costs the table more than one ``send`` per update.

At most :data:`MAX_READERS` readers per socket; one more is closed at once and counted.
"""

from __future__ import annotations

import contextlib
import enum
import grp
import logging
import os
import selectors
import socket
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.feed.messages import (
    COMMIT_LINE,
    MAX_LINE,
    BuyInRefused,
    FeedError,
    KeyLine,
    KeyRefused,
    PinLine,
    PinRefused,
    RateLine,
    RateRefused,
    decode_money_reader,
    decode_reader,
    encode_hello,
    encode_metrics,
    encode_money,
    encode_update,
)
from controller.game.cash import BuyIn
from controller.game.public import PublicProjector, PublicView, Reveal, shoe_coups
from controller.game.table import Notice, TableView
from controller.game.wagers import MoneyView
from floor_protocol.ack import Ack
from floor_protocol.staff import StaffList

log = logging.getLogger(__name__)

#: Bytes a reader may have waiting before it is dropped (some thousand updates; a hello is some 40 kB).
MAX_BACKLOG = 512 * 1024
#: Readers at once on each socket.
MAX_READERS = 16
#: How often the link's readers get the table's metrics (seconds).
METRICS_INTERVAL = 1.0
#: Longest Unix socket path (sun_path, less the terminating NUL).
MAX_PATH = 107

PUBLIC_SOCKET = "feed.sock"
LINK_SOCKET = "link.sock"
MONEY_SOCKET = "money.sock"


class FeedServerError(Exception):
    """The feed's sockets cannot be made (a path too long, another table listening, a directory not ours)."""


class _Kind(enum.Enum):
    PUBLIC = "public"
    LINK = "link"
    MONEY = "money"


_PUBLIC, _LINK, _MONEY = _Kind.PUBLIC, _Kind.LINK, _Kind.MONEY


@dataclass(eq=False)
class _Reader:
    sock: socket.socket
    link: bool  # on link.sock: gets commit and metrics, may send ack
    money: bool = False  # on money.sock: gets the money lines and nothing else, may send nothing
    out: bytearray = field(default_factory=bytearray)
    inbox: bytearray = field(default_factory=bytearray)
    closed: bool = False


def socket_paths(directory: str | os.PathLike[str]) -> tuple[Path, Path]:
    """``(feed.sock, link.sock)`` in ``directory``; :class:`FeedServerError` if a path is too long."""
    d = Path(directory)
    paths = (d / PUBLIC_SOCKET, d / LINK_SOCKET)
    for p in paths:
        _check_length(p)
    return paths


def money_socket_path(directory: str | os.PathLike[str]) -> Path:
    """``money.sock`` in ``directory`` (the dealer screen's); :class:`FeedServerError` if the path is too long."""
    return _check_length(Path(directory) / MONEY_SOCKET)


def _check_length(p: Path) -> Path:
    if len(os.fsencode(p)) > MAX_PATH:
        raise FeedServerError(f"feed socket path {p} is longer than {MAX_PATH} bytes; set feed.dir shorter")
    return p


class FeedServer:
    """The feed's sockets and thread; a sink of the table loop (see the module's docstring)."""

    name = "feed"

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        reveal: Reveal | str,
        history: Sequence[Mapping[str, Any]] = (),
        on_ack: Callable[[Ack], None] = lambda ack: None,
        on_staff: Callable[[StaffList], None] = lambda staff: None,
        on_buy_in: Callable[[BuyIn], None] = lambda buy_in: None,
        on_buy_in_refused: Callable[[str], None] = lambda why: None,
        on_pin: Callable[[str], None] = lambda pin: None,
        on_rate: Callable[[int], None] = lambda seat: None,
        on_key: Callable[[str], None] = lambda card: None,
        metrics_text: Callable[[], str] | None = None,
        public_mode: int = 0o666,
        link_mode: int = 0o660,
        money_mode: int = 0o660,
        money_group: str | int | None = None,
        max_backlog: int = MAX_BACKLOG,
        max_readers: int = MAX_READERS,
        metrics_interval: float = METRICS_INTERVAL,
    ) -> None:
        self.public_path, self.link_path = socket_paths(directory)
        self.money_path = money_socket_path(directory)
        self.projector = PublicProjector(reveal)
        self.on_ack = on_ack
        #: The floor's signed staff list a floor link handed on (the loop verifies it again and keeps it).
        self.on_staff = on_staff
        #: Where a buy-in a money reader sent goes (the table loop's inbox).
        self.on_buy_in = on_buy_in
        #: Told (in one line) of each ``buy_in`` line refused as out of bounds (the table's metrics count it).
        self.on_buy_in_refused = on_buy_in_refused
        #: Where a supervisor's PIN a money reader sent goes (the table loop's inbox; never logged).
        self.on_pin = on_pin
        #: Where the dealer screen's RATE of a seat goes (the table loop's inbox).
        self.on_rate = on_rate
        #: Where the dealer screen's card keyed for an unreadable coup card goes (the table loop's inbox).
        self.on_key = on_key
        self.metrics_text = metrics_text
        self.public_mode = public_mode
        self.link_mode = link_mode
        self.money_mode = money_mode
        #: The group given ``money.sock`` (the board's, so the dealer screen reads it); None: the table's own.
        self.money_group = money_group
        #: Why ``money.sock`` could not be made (None: it was, or the feed has not started).
        self.money_error: str | None = None
        self.max_backlog = max_backlog
        self.max_readers = max_readers
        self.metrics_interval = metrics_interval
        #: What happened to readers: connected, dropped_slow, refused_full, refused_lines, acks, gone.
        self.stats: Counter[str] = Counter()
        self._lock = threading.Lock()  # readers, view, history, n: the loop's thread and the feed's
        self._readers: list[_Reader] = []
        self._dead: list[_Reader] = []  # dropped readers whose sockets the feed's thread closes
        self._view = PublicView.starting(self.projector.reveal)
        shoes = [int(r["shoe"]) for r in history if isinstance(r.get("shoe"), int)]
        self._history = shoe_coups(history, max(shoes) if shoes else None)
        self._n = 0
        self._money: MoneyView | None = None
        self._money_line: bytes | None = None
        self._listeners: list[tuple[socket.socket, _Kind]] = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- life ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Bind the three sockets and start the feed's thread. Raises :class:`FeedServerError` when the public or
        the link socket cannot be made; a money socket that cannot be made (its group, a sandbox) costs only the
        dealer screen: said once at ERROR (:attr:`money_error`), and the board and the link are served."""
        try:
            for path, kind, mode in (
                (self.public_path, _PUBLIC, self.public_mode),
                (self.link_path, _LINK, self.link_mode),
            ):
                self._listeners.append((self._listen(path, mode), kind))
        except FeedServerError:
            self._unlisten()
            raise
        try:
            self._listeners.append((self._listen(self.money_path, self.money_mode, self.money_group), _MONEY))
        except FeedServerError as exc:
            self.money_error = str(exc)
            log.error("%s; the dealer screen gets no money (the scoreboard and the floor link are served)", exc)
        self._thread = threading.Thread(target=self._run, name="table-feed", daemon=True)
        self._thread.start()
        log.info(
            "feed on %s (public), %s (floor link) and %s (dealer screen)", self.public_path, self.link_path,
            self.money_path,
        )  # fmt: skip

    def _listen(self, path: Path, mode: int, group: str | int | None = None) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(path)
            if not stat.S_ISSOCK(st.st_mode):
                raise FeedServerError(f"feed socket {path} exists and is not a socket")
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
            except OSError:
                os.unlink(path)  # a stale socket of a table that died: ours to replace
            else:
                raise FeedServerError(f"feed socket {path}: another table process is listening on it")
            finally:
                probe.close()
        try:
            gid = group if isinstance(group, int) or group is None else grp.getgrnam(group).gr_gid
        except KeyError:
            raise FeedServerError(f"feed socket {path}: no group {group!r} (feed.money_group)") from None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bound = False
        try:
            old = os.umask(0o777 ^ mode)  # the socket is made with its mode: no moment with a wider one
            try:
                sock.bind(str(path))
                bound = True
            finally:
                os.umask(old)
            if gid is not None:
                os.chown(path, -1, gid)
            os.chmod(path, mode)
            sock.listen(8)
        except OSError as exc:
            sock.close()
            if bound:  # ours, made a moment ago (a group we may not give it, say)
                with contextlib.suppress(OSError):
                    os.unlink(path)
            raise FeedServerError(f"feed socket {path}: {exc.strerror or exc}") from None
        sock.setblocking(False)
        return sock

    def close(self) -> None:
        """Stop the thread, close every reader and the sockets, remove the socket files. Idempotent."""
        self._stop.set()
        self._poke()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:
            readers, self._readers = self._readers + self._dead, []
            self._dead = []
        for r in readers:
            r.sock.close()
        self._unlisten()
        self._wake_r.close()
        self._wake_w.close()

    def _unlisten(self) -> None:
        for sock, kind in self._listeners:
            sock.close()
            with contextlib.suppress(OSError):  # only a socket this table made: never another table's
                os.unlink(self._path(kind))
        self._listeners = []

    def _path(self, kind: _Kind) -> Path:
        return {_PUBLIC: self.public_path, _LINK: self.link_path, _MONEY: self.money_path}[kind]

    # -- the loop's side (never blocks) -----------------------------------------------------------------
    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        """A sink's update: project it (the squeeze applied), send it to every reader."""
        update = self.projector.update(view, notices)
        with self._lock:
            if update.shoe_started is not None:
                self._history = []
            if update.view.shoe.number != self._view.shoe.number:
                self._history = shoe_coups(self._history, update.view.shoe.number)
            self._history.extend(dict(c) for c in update.coups)
            self._view = update.view
            self._n += 1
            line = encode_update(self._n, update)
            self._send_all(line, link_only=False)
            money = view.money
            if money is not None and money != self._money:  # no reader: no money line, ever
                self._money = money
                self._money_line = encode_money(money)
                self._send_money(self._money_line)

    def _send_money(self, line: bytes) -> None:
        """Under the lock: one money line to every reader of ``money.sock`` (and to no other reader)."""
        poke = False
        for r in list(self._readers):
            if r.money:
                poke |= self._send(r, line)
        if poke:
            self._poke()

    def committed(self) -> None:
        """After a commit that wrote records: the floor link reads them from the journal now."""
        with self._lock:
            self._send_all(COMMIT_LINE, link_only=True)

    def _send_all(self, line: bytes, *, link_only: bool) -> None:
        poke = False
        for r in list(self._readers):  # a reader dropped on the way leaves the list: the next is not skipped
            if r.money or (link_only and not r.link):
                continue
            poke |= self._send(r, line)
        if poke:
            self._poke()

    def _send(self, r: _Reader, line: bytes) -> bool:
        """Send or buffer ``line``; True if the feed's thread must start watching the reader's socket."""
        if r.closed:
            return False
        if r.out:
            r.out += line
        else:
            try:
                sent = r.sock.send(line, socket.MSG_DONTWAIT)
            except BlockingIOError:
                sent = 0
            except OSError:
                self._drop(r, "gone")
                return True
            if sent == len(line):
                return False
            r.out += line[sent:]
        if len(r.out) > self.max_backlog:
            self._drop(r, "dropped_slow")
        return True

    def _drop(self, r: _Reader, why: str) -> None:
        """Under the lock: forget a reader (the feed's thread closes its socket)."""
        if r.closed:
            return
        r.closed = True
        self.stats[why] += 1
        if why == "dropped_slow":
            log.warning("feed: a reader of %s fell %d bytes behind; dropped", self._name(r), len(r.out))
        with contextlib.suppress(ValueError):
            self._readers.remove(r)
        self._dead.append(r)
        self._poke()

    def _name(self, r: _Reader) -> str:
        return MONEY_SOCKET if r.money else LINK_SOCKET if r.link else PUBLIC_SOCKET

    def _poke(self) -> None:
        with contextlib.suppress(OSError):  # a full wake-up socket: the thread is awake already
            self._wake_w.send(b"\0")

    @property
    def readers(self) -> int:
        with self._lock:
            return len(self._readers)

    # -- the feed's thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        try:
            sel.register(self._wake_r, selectors.EVENT_READ, None)
            for sock, kind in self._listeners:
                sel.register(sock, selectors.EVENT_READ, ("listen", kind))
            registered: dict[_Reader, int] = {}
            next_metrics = time.monotonic()
            while not self._stop.is_set():
                now = time.monotonic()
                if self.metrics_text is not None and now >= next_metrics:
                    next_metrics = now + self.metrics_interval
                    self._send_metrics()
                self._watch(sel, registered)
                for key, events in sel.select(timeout=max(0.0, next_metrics - time.monotonic()) or 0.05):
                    if key.data is None:
                        with contextlib.suppress(BlockingIOError):
                            while self._wake_r.recv(4096):
                                pass
                    elif isinstance(key.data, tuple):
                        self._accept(key.fileobj, key.data[1])  # type: ignore[arg-type]
                    else:
                        self._service(key.data, events)
        finally:
            sel.close()

    def _watch(self, sel: selectors.BaseSelector, registered: dict[_Reader, int]) -> None:
        """(Re)register every reader: read always (EOF, acks), write while it has bytes waiting."""
        with self._lock:
            live = {r: selectors.EVENT_READ | (selectors.EVENT_WRITE if r.out else 0) for r in self._readers}
            dead, self._dead = self._dead, []
        for r in dead:
            if registered.pop(r, None) is not None:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    sel.unregister(r.sock)
            r.sock.close()
        for r, events in live.items():
            if r not in registered:
                sel.register(r.sock, events, r)
            elif registered[r] != events:
                sel.modify(r.sock, events, r)
            registered[r] = events

    def _accept(self, listener: socket.socket, kind: _Kind) -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        sock.setblocking(False)
        r = _Reader(sock, kind is _LINK, kind is _MONEY)
        with self._lock:
            if sum(1 for x in self._readers if (x.link, x.money) == (r.link, r.money)) >= self.max_readers:
                self.stats["refused_full"] += 1
                log.warning("feed: %s has %d readers already; one more refused", self._name(r), self.max_readers)
                sock.close()
                return
            self.stats["connected"] += 1
            self._readers.append(r)
            if r.money:  # the money now, if the table has any: each money line is the whole view
                if self._money_line is not None:
                    self._send(r, self._money_line)
                return
            # The hello under the lock: no update can come between it and the reader's first update.
            self._send(r, encode_hello(self._view, self._history))

    def _service(self, r: _Reader, events: int) -> None:
        if events & selectors.EVENT_WRITE:
            with self._lock:
                if r.out and not r.closed:
                    try:
                        sent = r.sock.send(r.out, socket.MSG_DONTWAIT)
                    except BlockingIOError:
                        sent = 0
                    except OSError:
                        self._drop(r, "gone")
                        return
                    del r.out[:sent]
        if events & selectors.EVENT_READ:
            try:
                data = r.sock.recv(4096)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                with self._lock:
                    self._drop(r, "gone")
                return
            if not r.link and not r.money:
                log.warning(
                    "feed: a reader of %s sent %d bytes; it may send nothing: dropped", self._name(r), len(data)
                )
                with self._lock:
                    self.stats["refused_lines"] += 1
                    self._drop(r, "gone")
                return
            self._take_lines(r, data)

    def _take_lines(self, r: _Reader, data: bytes) -> None:
        r.inbox += data
        while True:
            end = r.inbox.find(b"\n")
            if end < 0:
                if len(r.inbox) > MAX_LINE:
                    self.stats["refused_lines"] += 1
                    log.warning("feed: a floor link sent a line of over %d bytes; dropped", MAX_LINE)
                    with self._lock:
                        self._drop(r, "gone")
                return
            line = bytes(r.inbox[:end])
            del r.inbox[: end + 1]
            if r.money:
                if not self._take_money_line(r, line):
                    return
                continue
            try:
                message = decode_reader(line)
            except FeedError as exc:
                self.stats["refused_lines"] += 1
                log.warning("feed: refused a line from the floor link: %s", exc)
                continue
            if isinstance(message, StaffList):
                self.stats["staff_lists"] += 1
                self.on_staff(message)
                continue
            self.stats["acks"] += 1
            self.on_ack(message)

    def _take_money_line(self, r: _Reader, line: bytes) -> bool:
        """A money reader's line: a buy-in, a supervisor's PIN or a rating handed on; one out of bounds refused in
        one line (counted); any other line refused and the reader dropped (False)."""
        try:
            buy_in = decode_money_reader(line)
        except (PinRefused, RateRefused, KeyRefused) as exc:
            self.stats["refused_lines"] += 1
            what = {PinRefused: "PIN", RateRefused: "rating", KeyRefused: "card keyed"}[type(exc)]
            log.warning("feed: refused a %s: %s", what, exc)
            return True
        except BuyInRefused as exc:
            self.stats["refused_lines"] += 1
            log.warning("feed: refused a buy-in: %s", exc)
            self.on_buy_in_refused(str(exc))
            return True
        except FeedError as exc:
            self.stats["refused_lines"] += 1
            log.warning("feed: a reader of %s sent a line it may not (%s): dropped", MONEY_SOCKET, exc)
            with self._lock:
                self._drop(r, "gone")
            return False
        if isinstance(buy_in, PinLine):
            self.stats["pins"] += 1
            self.on_pin(buy_in.pin)
            return True
        if isinstance(buy_in, RateLine):
            self.stats["rates"] += 1
            self.on_rate(buy_in.seat)
            return True
        if isinstance(buy_in, KeyLine):
            self.stats["keys"] += 1
            self.on_key(buy_in.card)
            return True
        self.stats["buy_ins"] += 1
        self.on_buy_in(buy_in)
        return True

    def _send_metrics(self) -> None:
        assert self.metrics_text is not None
        with self._lock:
            if not any(r.link for r in self._readers):
                return
        try:
            line = encode_metrics(self.metrics_text())
        except Exception:  # the metrics are a courtesy: never the end of the feed
            log.exception("feed: the table's metrics could not be read")
            return
        with self._lock:
            self._send_all(line, link_only=True)
