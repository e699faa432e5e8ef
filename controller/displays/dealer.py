"""The dealer screen: the money at the table, seat by seat, for the Pi's touch display; served by the board.

The board process (``shoe-controller board``) reads the table's ``money.sock`` (the ``money`` lines of
:mod:`controller.feed.messages`: the table's :class:`~controller.game.wagers.MoneyView`) and hands each view to
:class:`controller.board.dealer.DealerScreen`, which serves the page, ``/api/state`` and ``/events`` on **its own
listener** (``[board] dealer_listen``, 127.0.0.1 by default: the kiosk browser on the Pi's own display), never on
the public scoreboard's. The public scoreboard never sees a wager: its feed (``feed.sock``) carries none.

This module is the pure part (the board process's :mod:`controller.board.dealer` is the server):

* :func:`screen_model` - pure: a :class:`MoneyView` (or none) -> what the page draws, every word and amount
  already written (money by :func:`controller.displays.wording.money`, the one formatter both displays use),
  so the page's script only places text. Per seat: each wager with its amount and what the dealer does now
  (``PAY $95``, ``TAKE $100``, ``PUSH``, ``PAID``, ``MISPAY``, ``PAST POST`` ...), its tone (``pay``, ``take``,
  ``alarm``, ``warn``, ``calm``: a colour on the page, never the only sign: the word is always there), the
  commission box, and the seat's alarms. The phase in words (BETS OPEN, NO MORE BETS, PAYOUT, COLLECT
  COMMISSION), READER DOWN, and the two states without money: ``no_reader`` (the table has no bet-spot
  reader: "NO BET-SPOT READER") and ``offline`` (the board does not hear the table).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from controller.displays.wording import money
from controller.game.wagers import MoneyView, Phase, SeatView, Spot, SpotState, SpotView

__all__ = ["PHASE_TEXT", "SPOT_LABEL", "screen_model", "spot_action"]

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
