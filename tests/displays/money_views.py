"""MoneyView values built by hand for the dealer screen's and the LCD's tests (and the dealer benchmark): every
state a dealer must read at once, which a real wager book reaches only coup by coup; and a :class:`TableView`
that carries one (``TableView.money``)."""

from __future__ import annotations

import dataclasses

from controller.game.table import TableState, TableView
from controller.game.wagers import MoneyView, Phase, SeatView, Spot, SpotState, SpotView

__all__ = ["betting", "nine_seats", "spot", "table_view", "with_money"]


def with_money(view: TableView, money: MoneyView | None) -> TableView:
    """``view`` carrying ``money`` (``TableView.money``)."""
    return dataclasses.replace(view, money=money)


def table_view(money: MoneyView | None) -> TableView:
    """A starting table's view carrying ``money``."""
    return with_money(TableState().view(), money)


def spot(
    seat: int,
    s: Spot,
    state: SpotState,
    cents: int,
    *,
    wager_cents: int | None = None,
    target_cents: int | None = None,
    pay_cents: int = 0,
    take_cents: int = 0,
    text: str = "",
) -> SpotView:
    return SpotView(seat, s, state, cents, wager_cents, target_cents, pay_cents, take_cents, text)


def nine_seats(phase: Phase = Phase.PAYOUT, *, reader_up: bool = True, bump: int = 0) -> MoneyView:
    """Nine seats in play after a Banker win (5% commission deducted), each with something different to do:
    PAY (the commission deducted), TAKE, a push, a side bet won, a mispay, a past-post, a commission box.
    ``bump`` adds cents to seat 1's banker wager (a spot change, for the benchmark)."""
    b = Spot.BANKER
    p = Spot.PLAYER
    seats = (
        SeatView(
            1,
            (
                spot(
                    1,
                    b,
                    SpotState.PAY,
                    10000 + bump,
                    wager_cents=10000 + bump,
                    target_cents=19500,
                    pay_cents=9500 + bump,
                ),
            ),
        ),
        SeatView(
            2,
            (
                spot(2, p, SpotState.TAKE, 2500, wager_cents=2500, take_cents=2500),
                spot(2, Spot.TIE, SpotState.TAKE, 500, wager_cents=500, take_cents=500),
            ),
        ),
        SeatView(
            3,
            (
                spot(3, b, SpotState.PAY, 150000, wager_cents=150000, target_cents=292500, pay_cents=142500),
                spot(3, Spot.BANKER_PAIR, SpotState.PAY, 2500, wager_cents=2500, target_cents=30000, pay_cents=27500),
                spot(
                    3,
                    Spot.DRAGON_BONUS_BANKER,
                    SpotState.PAY,
                    1000,
                    wager_cents=1000,
                    target_cents=2000,
                    pay_cents=1000,
                ),
            ),
            box_cents=1250,
        ),
        SeatView(
            4,
            (spot(4, b, SpotState.MISPAID, 18000, wager_cents=10000, target_cents=19500, text="UNDERPAID $15"),),
            alarms=("SEAT 4 BANKER: UNDERPAID (EXPECTED $195, SEEN $180)",),
        ),
        SeatView(5, (spot(5, p, SpotState.TAKE, 5000, wager_cents=5000, take_cents=5000),)),
        SeatView(
            6,
            (spot(6, b, SpotState.CHANGED, 20000, wager_cents=10000, text="PAST POST +$100"),),
            alarms=("PAST POST BANKER",),
        ),
        SeatView(
            7,
            (
                spot(7, b, SpotState.PAID, 39000, wager_cents=20000, target_cents=39000),
                spot(7, Spot.COMMISSION, SpotState.COLLECT, 0, take_cents=1250, text=""),
            ),
            box_cents=1250,
        ),
        SeatView(
            8,
            (
                spot(8, p, SpotState.TAKE, 500000, wager_cents=500000, take_cents=500000),
                spot(8, Spot.PLAYER_PAIR, SpotState.TAKE, 2500, wager_cents=2500, take_cents=2500),
                spot(8, Spot.DRAGON_BONUS_PLAYER, SpotState.TAKE, 2500, wager_cents=2500, take_cents=2500),
                spot(8, Spot.DRAGON_7, SpotState.TAKE, 500, wager_cents=500, take_cents=500),
                spot(8, Spot.PANDA_8, SpotState.TAKE, 500, wager_cents=500, take_cents=500),
            ),
        ),
        SeatView(9, (spot(9, b, SpotState.PUSH, 2500, wager_cents=2500, target_cents=2500),), box_cents=375),
    )
    return MoneyView(phase, seats, reader_up=reader_up)


def betting(*, reader_up: bool = True) -> MoneyView:
    """Bets open: two seats betting, one of them against the rules."""
    seats = (
        SeatView(2, (spot(2, Spot.BANKER, SpotState.OPEN, 5000),)),
        SeatView(3, (spot(3, Spot.TIE, SpotState.VIOLATION, 500, text="TIE BELOW MINIMUM"),)),
    )
    return MoneyView(Phase.BETTING, seats, reader_up=reader_up)
