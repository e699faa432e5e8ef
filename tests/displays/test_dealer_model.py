"""The dealer screen's words and amounts (:func:`screen_model`) and the LCD's short form, from a real table with a
bet-spot reader: bets placed through the table's inputs, locked at the first card, settled at the declare by the
real wager book (commission deducted at payout), paid by the dealer; and through the table's feed to the screen.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given

from controller.board.dealer import DealerScreen
from controller.displays.dealer import game_part, screen_model
from controller.feed.messages import Money, decode_table, encode_money
from controller.game.records import coup_body
from controller.game.rules import COMMISSION
from controller.game.table import CoupDeclared, CoupVoided, DeclarePressed, NewShoePressed, TableState
from controller.game.wagers import MoneyView, Phase, SeatView, Spot, SpotSeen, SpotState
from controller.table.lcd import money_line, render
from tests.displays.money_views import nine_seats, spot
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
    assert actions(state) == {(1, "banker"): "PAID $95"}  # the amount paid stays in view
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


def _coups(*tokens: tuple[str, ...]) -> list[dict[str, Any]]:
    """The ``coup`` records of coups dealt from a new shoe with these cards, each declared (as the feed gives)."""
    state = TableState(table_rules())
    state.apply(NewShoePressed())
    out = []
    for hand in tokens:
        for card in cards(hand):
            state.apply(card)
        for notice in state.apply(DeclarePressed()):
            if isinstance(notice, CoupDeclared | CoupVoided):
                out.append(coup_body(notice))
    return out


def test_the_screen_says_which_coup_and_who_won() -> None:
    """The dealer reads the shoe and the coup, and the last result in the notation's words: while paying, the
    coup being paid and its own result; while the next coup's bets are open, the coup in play and LAST."""
    (first, second) = _coups(BANKER_NATURAL, ("9D", "KH", "QC", "TS"))  # Banker 9 - Player 0; Player 9 - Banker 0
    assert first["coup"] == 1 and second["coup"] == 2 and second["winner"] == "player"
    paying = screen_model(nine_seats(), seats=9, shoe=first["shoe"], coup=3, last=second)
    assert (paying["coup_text"], paying["result_text"]) == ("SHOE 1 · COUP 2", "Player wins · P 9 – B 0")
    assert paying["winner"] == "player"
    betting = screen_model(nine_seats(Phase.BETTING), seats=9, shoe=first["shoe"], coup=3, last=second)
    assert (betting["coup_text"], betting["result_text"]) == ("SHOE 1 · COUP 3", "LAST: Player wins · P 9 – B 0")
    banker = game_part(1, 2, first, Phase.PAYOUT)
    assert banker == {"coup_text": "SHOE 1 · COUP 1", "result_text": "Banker wins · P 0 – B 9", "winner": "banker"}
    # before the shoe's first result, a result of another shoe, a void, nothing heard at all
    assert game_part(1, 1, None, Phase.BETTING)["result_text"] == "NO RESULT YET"
    assert game_part(2, 1, first, Phase.PAYOUT) == {"coup_text": "SHOE 2 · COUP 1", "result_text": "NO RESULT YET",
                                                    "winner": ""}  # fmt: skip
    void = {**first, "declared": False, "void": True, "winner": None, "cards": ["KD", "9H"]}
    assert game_part(1, 1, void, Phase.BETTING)["result_text"] == "COUP 1 VOID"
    assert game_part(None, None, None) == {"coup_text": "", "result_text": "", "winner": ""}
    assert screen_model(None)["coup_text"] == ""  # no reader: the header's words are there, empty


def test_every_seat_keeps_its_place_as_seats_empty() -> None:
    """Each of the table's seats is in the model, in order, whether or not it has money: a seat that empties
    keeps its (empty) box, so that no other box moves on the screen."""
    full = screen_model(nine_seats(), seats=9)
    assert [s["seat"] for s in full["seats"]] == list(range(1, 10)) and not any(s["empty"] for s in full["seats"])
    # seats 2, 5 and 8 lost and taken: the book leaves them out of its view
    left = MoneyView(Phase.PAYOUT, tuple(seat for seat in nine_seats().seats if seat.seat not in (2, 5, 8)))
    model = screen_model(left, seats=9)
    assert [s["seat"] for s in model["seats"]] == list(range(1, 10))
    assert [s["seat"] for s in model["seats"] if s["empty"]] == [2, 5, 8]
    assert all(s["spots"] == [] and s["alarms"] == [] and s["box"] == "" for s in model["seats"] if s["empty"])
    # a seat beyond the table's count that the book names is shown too; without a count, the book's seats only
    odd = MoneyView(Phase.BETTING, (SeatView(12, (spot(12, Spot.BANKER, SpotState.OPEN, 2500),)),))
    assert [s["seat"] for s in screen_model(odd, seats=9)["seats"]] == [*range(1, 10), 12]
    assert [s["seat"] for s in screen_model(left)["seats"]] == [1, 3, 4, 6, 7, 9]


def test_a_paid_spot_keeps_its_amount() -> None:
    seats = {seat["seat"]: seat for seat in screen_model(nine_seats())["seats"]}
    (banker, _box) = seats[7]["spots"]
    assert (banker["action"], banker["tone"], banker["amount"]) == ("PAID $190", "done", "$200")


def test_a_mispay_keeps_the_wager_s_row_with_the_alarm_beside_it() -> None:
    """The spot's row stays what the dealer does now (the correction), the mispay said beside it."""
    seats = {seat["seat"]: seat for seat in screen_model(nine_seats())["seats"]}
    (row,) = seats[4]["spots"]
    assert (row["label"], row["amount"], row["action"], row["tone"]) == ("BANKER", "$100", "PAY $15", "pay")
    assert (row["alarm"], row["text"]) == ("MISPAY", "UNDERPAID $15")
    assert seats[4]["urgent"] == "alarm" and seats[4]["alarms"] == ["BANKER: UNDERPAID (EXPECTED $195, SEEN $180)"]
    over = spot(4, Spot.BANKER, SpotState.MISPAID, 21500, wager_cents=10000, target_cents=19500, text="OVERPAID $20")
    left = spot(4, Spot.PLAYER, SpotState.MISPAID, 2500, wager_cents=2500, text="LOSER LEFT")
    model = screen_model(MoneyView(Phase.PAYOUT, (SeatView(4, (over, left)),)))
    got = [(s["action"], s["tone"], s["alarm"]) for s in model["seats"][0]["spots"]]
    assert got == [("TAKE BACK $20", "take", "MISPAY"), ("TAKE $25", "take", "MISPAY")]
    assert all(s["alarm"] == "" for seat in screen_model(nine_seats())["seats"] if seat["seat"] != 4
               for s in seat["spots"])  # fmt: skip


def test_the_shells_parts_of_the_money_view_cross_the_feed_whole() -> None:
    """What the table loop adds to the book's view (the approval pending, KEY CARD offered, the last refusal)
    reaches the dealer screen as the table sent it."""
    from dataclasses import replace

    from controller.game.wagers import ApprovalView, MoneyView, Phase

    asked = ApprovalView("key_card", "KEY CARD 5♠", 2, 7, "D1", "S1", "WRONG PIN (1 OF 3)")
    view = MoneyView(Phase.LOCKED, approval=asked, keyable=True, refusal="CARD REFUSED: NO", refusals=4)
    message = decode_table(encode_money(view).rstrip(b"\n"), money=True)
    assert isinstance(message, Money) and message.view == view
    plain = decode_table(encode_money(replace(view, approval=None, keyable=False, refusals=0, refusal="")), money=True)
    assert isinstance(plain, Money) and plain.view == MoneyView(Phase.LOCKED)
