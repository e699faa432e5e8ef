"""The dealer screen: the money at the table, seat by seat, for the Pi's touch display; served by the board.

The board process (``shoe-controller board``) reads the table's ``money.sock`` (the ``money`` lines of
:mod:`controller.feed.messages`: the table's :class:`~controller.game.wagers.MoneyView`) and hands each view to
:class:`DealerScreen`, which serves the page, ``/api/state`` and ``/events`` on **its own listener**
(``[board] dealer_listen``, 127.0.0.1 by default: the kiosk browser on the Pi's own display), never on the
public scoreboard's. The public scoreboard never sees a wager: its feed (``feed.sock``) carries none.

Two parts, kept apart:

* :func:`screen_model` - pure: a :class:`MoneyView` (or none) -> what the page draws, every word and amount
  already written (money by :func:`controller.displays.wording.money`, the one formatter both displays use),
  so the page's script only places text. Per seat: each wager with its amount and what the dealer does now
  (``PAY $95``, ``TAKE $100``, ``PUSH``, ``PAID``, ``MISPAY``, ``PAST POST`` ...), its tone (``pay``, ``take``,
  ``alarm``, ``warn``, ``calm``: a colour on the page, never the only sign: the word is always there), the
  commission box, and the seat's alarms. The phase in words (BETS OPEN, NO MORE BETS, PAYOUT, COLLECT
  COMMISSION), READER DOWN, and the two states without money: ``no_reader`` (the table has no bet-spot
  reader: "NO BET-SPOT READER") and ``offline`` (the board does not hear the table).
* :class:`DealerScreen` - the bounded SSE server (:class:`eventstream.BoardServer`) of the page.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from controller.displays.wording import money
from controller.game.wagers import MoneyView, Phase, SeatView, Spot, SpotState, SpotView
from eventstream import MAX_STREAMS, MAX_STREAMS_PER_ADDRESS, Board, BoardHandler, BoardServer, load_static

__all__ = ["PHASE_TEXT", "SPOT_LABEL", "DealerScreen", "screen_model", "spot_action"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parents[1] / "board" / "static" / "dealer"
#: The page's files, read once at start: URL name -> content type (``index.html`` is ``/``).
STATIC_FILES: Mapping[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "dealer.css": "text/css; charset=utf-8",
    "dealer.js": "text/javascript; charset=utf-8",
}

#: The phase as the dealer reads it.
PHASE_TEXT: Mapping[Phase, str] = {
    Phase.BETTING: "BETS OPEN",
    Phase.LOCKED: "NO MORE BETS",
    Phase.PAYOUT: "PAYOUT",
    Phase.COLLECTION: "COLLECT COMMISSION",
}

#: Each spot's name on the layout, short enough for a seat's column.
SPOT_LABEL: Mapping[Spot, str] = {
    Spot.BANKER: "BANKER",
    Spot.PLAYER: "PLAYER",
    Spot.TIE: "TIE",
    Spot.PLAYER_PAIR: "P PAIR",
    Spot.BANKER_PAIR: "B PAIR",
    Spot.DRAGON_BONUS_PLAYER: "DRAGON P",
    Spot.DRAGON_BONUS_BANKER: "DRAGON B",
    Spot.DRAGON_7: "DRAGON 7",
    Spot.PANDA_8: "PANDA 8",
    Spot.COMMISSION: "BOX",
}

Tone = Literal["pay", "take", "alarm", "warn", "calm", "done"]

#: The order of a seat's spots on the screen: the main wagers, the side bets, the commission spot last.
_ORDER = {spot: i for i, spot in enumerate(SPOT_LABEL)}


def spot_action(s: SpotView) -> tuple[str, Tone]:
    """What the dealer does with one spot now, in words, and its tone."""
    st = s.state
    if st in (SpotState.PAY, SpotState.PUSH) and s.pay_cents:
        return f"PAY {money(s.pay_cents)}", "pay"
    if st in (SpotState.PAY, SpotState.PUSH) and s.take_cents:  # paid too much: the dealer takes the rest back
        return f"TAKE BACK {money(s.take_cents)}", "take"
    if st is SpotState.TAKE:
        return (f"TAKE {money(s.take_cents)}" if s.take_cents else "TAKE"), "take"
    if st is SpotState.COLLECT:
        return f"COLLECT {money(s.target_cents or s.take_cents or 0)}", "pay"
    if st is SpotState.MISPAID:
        return "MISPAY", "alarm"
    if st is SpotState.CHANGED:
        if s.text in ("PAST POST", "PULLED BET"):
            return s.text, "alarm"
        return "PAST POST" if s.cents > (s.wager_cents or 0) else "PULLED BET", "alarm"
    if st is SpotState.REFUSED:
        return "RETURN", "alarm"
    if st is SpotState.VIOLATION:
        return "CHECK", "warn"
    if st is SpotState.PUSH:
        return "PUSH", "calm"
    if st in (SpotState.PAID, SpotState.PAY):  # a PAY with nothing left to add or take is at its target
        return "PAID", "done"
    if st in (SpotState.LOCKED, SpotState.OPEN):  # the wager itself is the news (the phase says locked or not)
        return money(s.wager_cents if s.wager_cents is not None else s.cents), "calm"
    return "", "calm"


def _words(s: SpotView) -> str:
    """The book's words under a spot when they say more than its action (the rule broken, the mispay)."""
    if s.state in (SpotState.VIOLATION, SpotState.REFUSED, SpotState.MISPAID):
        return s.text
    if s.state is SpotState.CHANGED and s.text not in ("PAST POST", "PULLED BET"):
        return s.text
    return ""


def _spot(s: SpotView) -> dict[str, Any]:
    action, tone = spot_action(s)
    shown = s.wager_cents if s.wager_cents is not None else s.cents
    # The amount column is empty where the action says it already (a bet, a locked wager) and on a commission
    # spot still empty (the box's chips are not there yet).
    quiet = s.state in (SpotState.LOCKED, SpotState.OPEN) or (s.spot is Spot.COMMISSION and not shown)
    amount = "" if quiet else money(shown)
    return {
        "spot": s.spot.value,
        "label": SPOT_LABEL[s.spot],
        "state": s.state.value,
        "amount": amount,
        "action": action,
        "tone": tone,
        "text": _words(s),
    }


def _in_seat(seat: int, text: str) -> str:
    """An alarm's words inside its seat's box: without the book's leading ``SEAT n`` (the box says it)."""
    head = f"SEAT {seat}"
    if text.startswith(head) and text[len(head) : len(head) + 1] in (" ", ":"):
        return text[len(head) :].lstrip(" :") or text
    return text


def _seat(seat: SeatView) -> dict[str, Any]:
    spots = sorted((s for s in seat.spots if s.state is not SpotState.EMPTY), key=lambda s: _ORDER[s.spot])
    shown = [_spot(s) for s in spots]
    tones = {s["tone"] for s in shown}
    urgent = "alarm" if seat.alarms or "alarm" in tones else "warn" if "warn" in tones else ""
    return {
        "seat": seat.seat,
        "spots": shown,
        "box": money(seat.box_cents) if seat.box_cents else "",
        "alarms": [_in_seat(seat.seat, text) for text in seat.alarms],
        "urgent": urgent,
    }


def screen_model(view: MoneyView | None, *, connected: bool = True) -> dict[str, Any]:
    """What the page draws (see the module's docstring). ``view`` None: the table has no bet-spot reader."""
    if not connected:
        state = "offline"
    elif view is None:
        state = "no_reader"
    else:
        state = "money"
    if view is None:
        return {"state": state, "phase": "", "phase_text": "", "reader_up": True, "seats": []}
    return {
        "state": state,
        "phase": view.phase.value,
        "phase_text": PHASE_TEXT[view.phase],
        "reader_up": view.reader_up,
        "seats": [_seat(seat) for seat in sorted(view.seats, key=lambda s: s.seat)],
    }


class DealerScreen:
    """The dealer screen's server: ``DealerScreen(("127.0.0.1", 8081))``, :meth:`start`, :meth:`show` per money
    view (:meth:`offline` when the table's money socket is lost), :meth:`close`."""

    name = "dealer"

    def __init__(
        self,
        address: tuple[str, int],
        *,
        table_name: str = "",
        heartbeat: float = 15.0,
        retry_ms: int = 1000,
        wall_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        max_streams: int = MAX_STREAMS,
        max_streams_per_address: int = MAX_STREAMS_PER_ADDRESS,
    ) -> None:
        self.host, self.port = address
        self.table_name = table_name
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.wall_ms = wall_ms
        self.max_streams = max_streams
        self.max_streams_per_address = max_streams_per_address
        self.board = Board()
        self.stats: Counter[str] = Counter()
        self.fault: str | None = None
        self._view: MoneyView | None = None
        self._connected = False
        self._content: dict[str, Any] | None = None
        self._version = 0
        self._server: BoardServer | None = None
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

    def _publish(self) -> None:
        content = screen_model(self._view, connected=self._connected)
        if not self._connected and self._view is not None:
            content = {**screen_model(self._view), "state": "offline"}
        content["table"] = self.table_name
        if content == self._content:
            return
        self._content = content
        self._version += 1
        body = {"version": self._version, "ts_ms": self.wall_ms(), **content}
        self.board.publish_body(self._version, json.dumps(body, separators=(",", ":")).encode())

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
