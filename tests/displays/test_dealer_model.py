"""The dealer screen's words and amounts (:func:`screen_model`) and the LCD's short form, from a real table with a
bet-spot reader: bets placed through the table's inputs, locked at the first card, settled at the declare by the
real wager book (commission deducted at payout), paid by the dealer; and through the table's feed to the screen.
"""

from __future__ import annotations

import json

from hypothesis import given

from controller.displays.dealer import DealerScreen, screen_model
from controller.feed.messages import Money, decode_table, encode_money
from controller.game.rules import COMMISSION
from controller.game.table import DeclarePressed, NewShoePressed, TableState
from controller.game.wagers import MoneyView, Phase, Spot, SpotSeen, SpotState
from controller.table.lcd import money_line, render
from tests.displays.test_lcd_money import _money
from tests.game.money import BANKER_NATURAL, PAYOUT_RULES, Chips, cards, money, plus, table_rules


def actions(state: TableState) -> dict[tuple[int, str], str]:
    model = screen_model(state.view().money)
    return {(seat["seat"], s["spot"]): s["action"] for seat in model["seats"] for s in seat["spots"]}


def test_a_coup_from_bets_to_payout_on_the_screen_and_the_lcd() -> None:
    chips = Chips()
    state = TableState(table_rules(money(PAYOUT_RULES)))
    assert screen_model(state.view().money)["phase_text"] == "BETS OPEN"
    banker = chips(2500, 2500, 2500, 2500)  # seat 1: Banker $100
    player = chips(2500, 2500)  # seat 3: Player $50
    for event in (NewShoePressed(), SpotSeen(1, Spot.BANKER, banker), SpotSeen(3, Spot.PLAYER, player)):
        state.apply(event)
    assert actions(state) == {(1, "banker"): "$100", (3, "player"): "$50"}
    state.apply(cards(BANKER_NATURAL)[0])  # the first card: the lock
    assert screen_model(state.view().money)["phase_text"] == "NO MORE BETS"
    for card in cards(BANKER_NATURAL)[1:]:
        state.apply(card)
    state.apply(DeclarePressed())  # Banker 9, Player 0: Banker wins 0.95 to 1, the commission deducted now
    view = state.view()
    assert view.money is not None and view.money.phase is Phase.PAYOUT
    assert actions(state) == {(1, "banker"): "PAY $95", (3, "player"): "TAKE $50"}
    assert money_line(view.money, 16) == "S1 PAY 95".ljust(14) + "+1"
    assert render(view, COMMISSION, 20, 4)[3].startswith("S1 PAY 95")
    # The dealer pays seat 1 and takes seat 3: the checks pass.
    state.apply(SpotSeen(1, Spot.BANKER, plus(banker, chips(2500, 2500, 2500, 2500, 500, 500, 500, 500, 500))))
    assert actions(state)[(1, "banker")] == "TAKE BACK $30"  # $125 paid where $95 is due
    money_view = state.view().money
    assert money_view is not None
    assert money_line(money_view, 16) == "S1 TAKE BACK 30"  # no room for the +1 of seat 3
    state.apply(SpotSeen(1, Spot.BANKER, plus(banker, chips(2500, 2500, 2500))))
    assert actions(state)[(1, "banker")] == "PAY $20"  # $75 of $95 so far
    state.apply(SpotSeen(1, Spot.BANKER, plus(banker, chips(*[2500] * 3, *[500] * 4))))
    state.apply(SpotSeen(3, Spot.PLAYER, chips()))
    assert actions(state) == {(1, "banker"): "PAID"}
    money_view = state.view().money
    assert money_view is not None
    assert money_line(money_view, 16) is None


def test_the_real_books_view_crosses_the_feed_and_reaches_the_screen() -> None:
    chips = Chips()
    state = TableState(table_rules(money(PAYOUT_RULES)))
    state.apply(NewShoePressed())
    state.apply(SpotSeen(2, Spot.TIE, chips(500)))  # a lone Tie of $5: below the table minimum
    view = state.view().money
    assert view is not None
    message = decode_table(encode_money(view).rstrip(b"\n"), money=True)
    assert isinstance(message, Money)
    screen = DealerScreen(("127.0.0.1", 0))
    screen.show(message.view)
    snap = screen.snapshot()
    assert snap["state"] == "money" and snap["phase_text"] == "BETS OPEN"
    (seat,) = snap["seats"]
    (spot,) = seat["spots"]
    assert (spot["action"], spot["tone"]) == ("CHECK", "warn") and "MINIMUM" in spot["text"]
    assert seat["urgent"] == "warn"
    assert json.dumps(snap).count("wager_cents") == 0  # the page gets words and amounts, not the book


@given(_money)
def test_any_money_has_words_for_every_spot_the_dealer_must_act_on(view: MoneyView) -> None:
    model = screen_model(view)
    json.dumps(model)  # the page's data: plain JSON
    acting = {SpotState.PAY, SpotState.TAKE, SpotState.COLLECT, SpotState.MISPAID, SpotState.CHANGED,
              SpotState.REFUSED, SpotState.VIOLATION, SpotState.PUSH, SpotState.PAID, SpotState.LOCKED,
              SpotState.OPEN}  # fmt: skip
    shown = {(seat["seat"], s["spot"], s["state"]): s for seat in model["seats"] for s in seat["spots"]}
    for seat in view.seats:
        for s in seat.spots:
            if s.state in acting:
                spot = shown[(seat.seat, s.spot.value, s.state.value)]
                assert spot["action"], s
                assert spot["tone"] in {"pay", "take", "alarm", "warn", "calm", "done"}
    assert [s["seat"] for s in model["seats"]] == sorted(s.seat for s in view.seats)
