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
* Which coup it is and who won: ``SHOE 3 · COUP 12`` (the coup being paid while the payout lasts, else the coup
  in play) and the last result in the notation's words (:func:`controller.game.notation.result_text`:
  ``Banker wins · P 5 – B 7``), from the board's public feed (:func:`game_part`).
* Every seat of the table in its own place (``seats``: the table's seat count): a seat with nothing on the
  layout keeps its box, empty, so that no box moves when another seat empties.
* A paid spot keeps its amount (``PAID $95``); a mispaid spot keeps its row (the wager and what to do now:
  ``PAY $15``, ``TAKE BACK $20``, ``TAKE $25``) with the mispay beside it (``MISPAY`` and ``UNDERPAID $15``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from controller.displays.wording import money
from controller.game.bodies import CoupBody
from controller.game.notation import result_text
from controller.game.wagers import MoneyView, Phase, SeatView, Spot, SpotState, SpotView

__all__ = ["PHASE_TEXT", "SPOT_LABEL", "game_part", "screen_model", "spot_action"]

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
    if st is SpotState.MISPAID:  # the row stays what the dealer does now; the mispay is said beside it
        return _correction(s)
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
        paid = _payout(s)
        return (f"PAID {money(paid)}" if paid else "PAID"), "done"
    if st in (SpotState.LOCKED, SpotState.OPEN):  # the wager itself is the news (the phase says locked or not)
        return money(s.wager_cents if s.wager_cents is not None else s.cents), "calm"
    return "", "calm"


def _payout(s: SpotView) -> int:
    """What the dealer paid (or pays) on a winning spot: its target less the stake (0 when unknown)."""
    if s.target_cents is None or s.wager_cents is None:
        return 0
    return max(0, s.target_cents - s.wager_cents)


def _correction(s: SpotView) -> tuple[str, Tone]:
    """A mispaid spot's action: what brings it to what it should hold (its target; a loser's is nothing)."""
    target = s.target_cents or 0
    if s.cents < target:
        return f"PAY {money(target - s.cents)}", "pay"
    if s.cents > target:
        return (f"TAKE BACK {money(s.cents - target)}" if target else f"TAKE {money(s.cents)}"), "take"
    paid = _payout(s)
    return (f"PAID {money(paid)}" if paid else "PAID"), "done"


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
        "alarm": "MISPAY" if s.state is SpotState.MISPAID else "",
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
        "empty": not (shown or seat.alarms or seat.box_cents),
    }


def _all_seats(view: MoneyView, seats: int) -> list[dict[str, Any]]:
    """Every seat from 1 to ``seats`` in order (those the view leaves out empty), and any seat beyond."""
    given = {seat.seat for seat in view.seats}
    empty = [SeatView(n, ()) for n in range(1, seats + 1) if n not in given]
    return [_seat(seat) for seat in sorted((*view.seats, *empty), key=lambda s: s.seat)]


def game_part(
    shoe: int | None, coup: int | None, last: Mapping[str, Any] | None, phase: Phase | None = None
) -> dict[str, Any]:
    """Which coup it is and who won, for the screen's header. ``shoe`` and ``coup`` are the table's shoe and the
    coup in play (or next to open: the public feed's ``shoe``); ``last`` the shoe's last ``coup`` record body
    (declared or voided; None before the first). While the payout or the collection lasts, the coup shown is the
    one just declared (the one being paid) and the result is its own; otherwise it is the last (``LAST: ...``)."""
    body = None if last is None else CoupBody.read(last)
    if body is None or body.set_aside or body.coup is None or body.shoe != shoe:
        body = None  # nothing of this shoe declared or voided yet (cards set aside say no result)
    paying = body is not None and phase in (Phase.PAYOUT, Phase.COLLECTION)
    number = body.coup if paying and body is not None else coup
    coup_text = "" if shoe is None else f"SHOE {shoe}" + ("" if number is None else f" · COUP {number}")
    if body is None:
        return {"coup_text": coup_text, "result_text": "" if shoe is None else "NO RESULT YET", "winner": ""}
    if body.void:
        return {"coup_text": coup_text, "result_text": f"COUP {body.coup} VOID", "winner": ""}
    result = result_text(body.winner, body.player_total, body.banker_total)
    return {"coup_text": coup_text, "result_text": result if paying else f"LAST: {result}", "winner": body.winner or ""}


def screen_model(
    view: MoneyView | None,
    *,
    connected: bool = True,
    seats: int = 0,
    shoe: int | None = None,
    coup: int | None = None,
    last: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the page draws (see the module's docstring). ``view`` None: the table has no bet-spot reader.
    ``seats``: the table's seat count (each seat keeps its box; 0: only the seats the view lists). ``shoe``,
    ``coup``, ``last``: which coup and who won, as :func:`game_part` takes them (none heard yet: None)."""
    if not connected:
        state = "offline"
    elif view is None:
        state = "no_reader"
    else:
        state = "money"
    told = game_part(shoe, coup, last, None if view is None else view.phase)
    if view is None:
        return {
            "state": state,
            "phase": "",
            "phase_text": "",
            "reader_up": True,
            "seats": [],
            "approval": None,
            "keyable": False,
            "refusal": None,
            **told,
        }
    return {
        "state": state,
        "phase": view.phase.value,
        "phase_text": PHASE_TEXT[view.phase],
        "reader_up": view.reader_up,
        "seats": _all_seats(view, seats),
        "approval": None if view.approval is None else view.approval.to_dict(),
        "keyable": view.keyable,  # an unreadable coup card may be keyed: KEY CARD is offered
        # what the table last refused of the screen's, and how many so far: the page says it when the count moves
        "refusal": {"n": view.refusals, "text": view.refusal} if view.refusals else None,
        **told,
    }
