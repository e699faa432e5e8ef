"""The dealer screen's server, in the board process: the page, ``/api/state`` and ``/events`` on **its own
listener** (``[board] dealer_listen``, 127.0.0.1 by default: the kiosk browser on the Pi's own display), never
on the public scoreboard's. :class:`controller.board.process.BoardProcess` hands it each money view from the
table's ``money.sock``, and :meth:`DealerScreen.game` which coup it is and the shoe's last result (from the
public feed the scoreboard follows); what the page draws is :func:`controller.displays.dealer.screen_model`'s
(pure). Each of the table's ``seats`` keeps its box on the page, empty when the seat has nothing on the layout.

The dealer records a buy-in at a seat on the page (the amount and the tender; the table adds the seat's carded
player): ``POST /api/buy-in`` with the money socket's own ``buy_in`` line as its JSON body, validated by the
same rule the table applies (:func:`controller.feed.messages.decode_money_reader`, then the table's seats),
and handed to the table at once through :attr:`DealerScreen.send_buy_in` or refused; never queued. Only the
screen's own machine may enter one: a request from another address, from another site's page (its ``Origin``),
or not JSON is refused with one line and counted in :attr:`DealerScreen.stats` (``buy_ins_refused``).

While a void (or another action that needs a supervisor) waits, the money view carries it (``approval``) and the
page shows it: CALL SUPERVISOR until the supervisor's badge is read at the dealer's position, then a PIN pad.
The PIN goes as ``POST /api/approve`` (``{"t":"approve","pin":"..."}``, the money socket's own line) under the
same rules, straight to the table (:attr:`DealerScreen.send_pin`), which checks it; the board never keeps or
logs it. Refusals are counted (``pins_refused``); the table's verdict comes back on the money view.

When the coup is halted by an unreadable card the table can take keyed (the money view's ``keyable``), the page
offers KEY CARD: the dealer picks the card lying face up and ``POST /api/key`` (``{"t":"key","card":"5S"}``)
hands it to the table, which asks a supervisor as for a void (:attr:`DealerScreen.send_key`).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from controller.displays.dealer import screen_model
from controller.displays.wording import money
from controller.feed.messages import FeedError, KeyLine, PinLine, RateLine, decode_money_reader
from controller.game.cash import BuyIn, buy_in_refusal
from controller.game.notation import card_text
from controller.game.wagers import MoneyView
from eventstream import MAX_STREAMS, MAX_STREAMS_PER_ADDRESS, Board, BoardHandler, BoardServer, load_static

__all__ = ["DealerScreen"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static") / "dealer"
#: The page's files, read once at start: URL name -> content type (``index.html`` is ``/``).
STATIC_FILES: Mapping[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "dealer.css": "text/css; charset=utf-8",
    "dealer.js": "text/javascript; charset=utf-8",
}
#: The most a buy-in's request body may be (its one JSON line is about 90 bytes); a PIN's the same.
MAX_BUY_IN_BODY = 512
#: What may be posted: the path, the word its refusals start with, and the counter of its refusals (stats).
_POSTS = {
    "/api/buy-in": ("buy-in", "buy_ins_refused"),
    "/api/approve": ("PIN", "pins_refused"),
    "/api/rate": ("rating", "rates_refused"),
    "/api/key": ("card keyed", "keys_refused"),
}


class DealerScreen:
    """The dealer screen's server: ``DealerScreen(("127.0.0.1", 8081), seats=9)``, :meth:`start`, :meth:`show`
    per money view (:meth:`offline` when the table's money socket is lost), :meth:`game` per public view (which
    coup, the last result), :meth:`close`. The money and the game may come on two threads."""

    name = "dealer"

    def __init__(
        self,
        address: tuple[str, int],
        *,
        table_name: str = "",
        seats: int = 0,
        heartbeat: float = 15.0,
        retry_ms: int = 1000,
        wall_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        max_streams: int = MAX_STREAMS,
        max_streams_per_address: int = MAX_STREAMS_PER_ADDRESS,
    ) -> None:
        self.host, self.port = address
        self.table_name = table_name
        self.seats = seats
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.wall_ms = wall_ms
        self.max_streams = max_streams
        self.max_streams_per_address = max_streams_per_address
        self.min_gap = 0.0  # a card shows at once: every event is sent
        self.board = Board()
        self.stats: Counter[str] = Counter()
        self.fault: str | None = None
        self._view: MoneyView | None = None
        self._connected = False
        self._game: tuple[int | None, int | None, Mapping[str, Any] | None] = (None, None, None)
        self._lock = threading.Lock()
        self._content: dict[str, Any] | None = None
        self._version = 0
        self._server: BoardServer | None = None
        #: Hands a buy-in entered here to the table: True when sent (the board process sets it to its money
        #: feed's ``send_buy_in``); None: no table to send to, every buy-in is refused.
        self.send_buy_in: Callable[[BuyIn], bool] | None = None
        #: Hands a supervisor's PIN entered here to the table (the money feed's ``send_pin``); None: refused.
        self.send_pin: Callable[[PinLine], bool] | None = None
        #: Hands the RATE of a seat's uncarded player to the table (the money feed's ``send_rate``); None: refused.
        self.send_rate: Callable[[RateLine], bool] | None = None
        #: Hands the card keyed for an unreadable coup card to the table (the money feed's ``send_key``); None:
        #: refused.
        self.send_key: Callable[[KeyLine], bool] | None = None
        self._publish()

    # -- what the board process hands it ------------------------------------------------------------
    def show(self, view: MoneyView | None) -> None:
        """The table's money now (None: the table has no bet-spot reader)."""
        self._view, self._connected = view, True
        self._publish()

    def connected(self) -> None:
        """The table's money socket is heard again; until a money line comes the table has no reader."""
        self.show(None)

    def offline(self) -> None:
        """The board lost the table: the page says so (the last money stays, marked TABLE OFFLINE)."""
        self._connected = False
        self._publish()

    def game(self, shoe: int | None, coup: int | None, last: Mapping[str, Any] | None) -> None:
        """Which coup it is: the table's shoe and the coup in play (the public feed's), and the shoe's last
        ``coup`` record (declared or voided; None before the first)."""
        with self._lock:
            self._game = (shoe, coup, last)
        self._publish()

    def _publish(self) -> None:
        with self._lock:
            shoe, coup, last = self._game

            def model(view: MoneyView | None, connected: bool) -> dict[str, Any]:
                return screen_model(view, connected=connected, seats=self.seats, shoe=shoe, coup=coup, last=last)

            content = model(self._view, self._connected)
            if not self._connected and self._view is not None:
                content = {**model(self._view, True), "state": "offline"}
            content["table"] = self.table_name
            content["seat_count"] = self.seats  # the buy-in's seats (every seat of the table, 0: not known)
            if content == self._content:
                return
            self._content = content
            self._version += 1
            body = {"version": self._version, "ts_ms": self.wall_ms(), **content}
            self.board.publish_body(self._version, json.dumps(body, separators=(",", ":")).encode())

    def enter_buy_in(self, body: bytes) -> tuple[HTTPStatus, str]:
        """A buy-in entered on the page (``body``: the money socket's ``buy_in`` line): sent to the table, or why
        not in one line. Counted in :attr:`stats` (``buy_ins_sent``, ``buy_ins_refused``)."""
        try:
            buy_in = decode_money_reader(body)
        except FeedError as exc:
            return self._refuse_buy_in(HTTPStatus.BAD_REQUEST, f"buy-in refused: {str(exc).removeprefix('buy_in: ')}")
        if not isinstance(buy_in, BuyIn):
            return self._refuse_buy_in(HTTPStatus.BAD_REQUEST, "buy-in refused: not a buy_in line")
        if self.seats:
            why = buy_in_refusal(buy_in, self.seats)
            if why is not None:
                return self._refuse_buy_in(HTTPStatus.BAD_REQUEST, why)
        sender = self.send_buy_in
        if sender is None or not sender(buy_in):
            return self._refuse_buy_in(
                HTTPStatus.SERVICE_UNAVAILABLE, "buy-in NOT sent: the table is not reached; enter it again"
            )
        self.stats["buy_ins_sent"] += 1
        said = f"seat {buy_in.seat}: buy-in {money(buy_in.cents)} {buy_in.tender.value} sent to the table"
        log.info("dealer screen: %s", said)
        return HTTPStatus.ACCEPTED, said

    def _refuse_buy_in(self, status: HTTPStatus, why: str) -> tuple[HTTPStatus, str]:
        return self._refuse("buy_ins_refused", status, why)

    def _refuse(self, counter: str, status: HTTPStatus, why: str) -> tuple[HTTPStatus, str]:
        """A post refused: counted in :attr:`stats` under ``counter``, said in one line."""
        self.stats[counter] += 1
        log.warning("dealer screen: %s", why)
        return status, why

    def enter_pin(self, body: bytes) -> tuple[HTTPStatus, str]:
        """A supervisor's PIN entered on the page (``body``: the money socket's ``approve`` line): sent to the
        table, or why not in one line (never the PIN). Counted in :attr:`stats` (``pins_sent``, ``pins_refused``)."""
        try:
            pin = decode_money_reader(body)
        except FeedError:
            return self._refuse_pin(HTTPStatus.BAD_REQUEST, "PIN refused: a PIN is 4 to 12 digits")
        if not isinstance(pin, PinLine):
            return self._refuse_pin(HTTPStatus.BAD_REQUEST, "PIN refused: not an approve line")
        with self._lock:
            waiting = self._view is not None and self._view.approval is not None and self._view.approval.approver
        if not waiting:
            return self._refuse_pin(HTTPStatus.CONFLICT, "PIN refused: no approval waits for a PIN")
        sender = self.send_pin
        if sender is None or not sender(pin):
            return self._refuse_pin(HTTPStatus.SERVICE_UNAVAILABLE, "PIN NOT sent: the table is not reached; again")
        self.stats["pins_sent"] += 1
        log.info("dealer screen: a PIN sent to the table")
        return HTTPStatus.ACCEPTED, "PIN sent to the table: checking"

    def _refuse_pin(self, status: HTTPStatus, why: str) -> tuple[HTTPStatus, str]:
        return self._refuse("pins_refused", status, why)

    def enter_rate(self, body: bytes) -> tuple[HTTPStatus, str]:
        """The RATE of a seat's uncarded player (``body``: the money socket's ``rate`` line): sent to the table,
        which asks a supervisor, or why not in one line. Counted in :attr:`stats` (``rates_sent``,
        ``rates_refused``)."""
        try:
            rate = decode_money_reader(body)
        except FeedError as exc:
            return self._refuse_rate(HTTPStatus.BAD_REQUEST, f"rating refused: {str(exc).removeprefix('rate: ')}")
        if not isinstance(rate, RateLine):
            return self._refuse_rate(HTTPStatus.BAD_REQUEST, "rating refused: not a rate line")
        if self.seats and rate.seat > self.seats:
            return self._refuse_rate(
                HTTPStatus.BAD_REQUEST, f"rating refused: seat {rate.seat} is not on this table (seats 1-{self.seats})"
            )
        sender = self.send_rate
        if sender is None or not sender(rate):
            return self._refuse_rate(HTTPStatus.SERVICE_UNAVAILABLE, "rating NOT sent: the table is not reached; again")
        self.stats["rates_sent"] += 1
        said = f"seat {rate.seat}: rating asked: a supervisor approves it"
        log.info("dealer screen: %s", said)
        return HTTPStatus.ACCEPTED, said

    def _refuse_rate(self, status: HTTPStatus, why: str) -> tuple[HTTPStatus, str]:
        return self._refuse("rates_refused", status, why)

    def enter_key(self, body: bytes) -> tuple[HTTPStatus, str]:
        """The card keyed for an unreadable coup card (``body``: the money socket's ``key`` line): sent to the
        table, which asks a supervisor, or why not in one line. Counted in :attr:`stats` (``keys_sent``,
        ``keys_refused``)."""
        try:
            key = decode_money_reader(body)
        except FeedError as exc:
            return self._refuse(
                "keys_refused", HTTPStatus.BAD_REQUEST, f"card refused: {str(exc).removeprefix('key: ')}"
            )
        if not isinstance(key, KeyLine):
            return self._refuse("keys_refused", HTTPStatus.BAD_REQUEST, "card refused: not a key line")
        with self._lock:
            keyable = self._view is not None and self._view.keyable
        if not keyable:
            why = "card refused: no coup waits for an unreadable card"
            return self._refuse("keys_refused", HTTPStatus.CONFLICT, why)
        sender = self.send_key
        if sender is None or not sender(key):
            why = "card NOT sent: the table is not reached; again"
            return self._refuse("keys_refused", HTTPStatus.SERVICE_UNAVAILABLE, why)
        self.stats["keys_sent"] += 1
        said = f"{card_text(key.card)} keyed: a supervisor approves it"
        log.info("dealer screen: %s", said)
        return HTTPStatus.ACCEPTED, said

    def refuse(self, path: str, status: HTTPStatus, why: str) -> tuple[HTTPStatus, str]:
        """A post to ``path`` refused before its body was read (counted as that post's refusals)."""
        return self._refuse(_POSTS[path][1], status, why)

    def snapshot(self) -> dict[str, Any]:
        """The latest published snapshot (decoded; for tests and tools)."""
        return dict(json.loads(self.board.current()[1]))

    @property
    def version(self) -> int:
        return self._version

    # -- the server ---------------------------------------------------------------------------------
    def start(self) -> bool:
        """Bind and serve in a thread. A bind failure is kept in :attr:`fault`; returns False."""
        try:
            server = BoardServer(
                (self.host, self.port), self, _DealerHandler, load_static(STATIC_DIR, STATIC_FILES), label="dealer"
            )
        except OSError as exc:
            self.fault = f"cannot bind {self.host}:{self.port}: {exc.strerror or exc}"
            log.error("dealer screen: %s", self.fault)
            return False
        self._server = server
        server.start()
        log.info("dealer screen: serving http://%s:%d/", *self.address)
        return True

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` actually bound (the port chosen when the settings say 0)."""
        if self._server is None:
            return self.host, self.port
        return self._server.bound

    def close(self) -> None:
        """Stop the server: end the streams, join every thread, close every socket. Idempotent."""
        self.board.close()
        server, self._server = self._server, None
        if server is not None:
            server.stop()


class _DealerHandler(BoardHandler):
    server_version = "shoe-controller-dealer"

    def do_POST(self) -> None:
        """``POST /api/buy-in``, ``/api/approve``, ``/api/rate`` or ``/api/key`` from the screen's own machine (see
        the module's notes); nothing else is posted."""
        host = self.server.host
        assert isinstance(host, DealerScreen)
        path = self.path.split("?", 1)[0]
        if path not in _POSTS:
            self._not_allowed()
            return
        status, said = self._post(host, path)
        body = json.dumps({"ok" if status == HTTPStatus.ACCEPTED else "error": said}).encode()
        self._send(status, body, "application/json")

    def _post(self, host: DealerScreen, path: str) -> tuple[HTTPStatus, str]:
        what = _POSTS[path][0]
        if not _loopback(str(self.client_address[0])):
            return host.refuse(
                path, HTTPStatus.FORBIDDEN, f"{what} refused: only the dealer screen's own machine enters one"
            )
        origin = self.headers.get("Origin", "")
        if origin and urlsplit(origin).netloc != self.headers.get("Host", ""):
            return host.refuse(path, HTTPStatus.FORBIDDEN, f"{what} refused: posted from another site's page")
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            return host.refuse(path, HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"{what} refused: send it as JSON")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return host.refuse(path, HTTPStatus.LENGTH_REQUIRED, f"{what} refused: no Content-Length")
        if not 0 < length <= MAX_BUY_IN_BODY:
            return host.refuse(
                path,
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"{what} refused: {length} bytes (at most {MAX_BUY_IN_BODY})",
            )
        body = self.rfile.read(length)
        if path == "/api/approve":
            return host.enter_pin(body)
        if path == "/api/key":
            return host.enter_key(body)
        return host.enter_rate(body) if path == "/api/rate" else host.enter_buy_in(body)


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.removeprefix("::ffff:")).is_loopback
    except ValueError:
        return False
