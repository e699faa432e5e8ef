"""A real journal of carded players for the rating slips' tests, built the same way every time by the real
table loop (a wall clock the script sets, fixed inputs): the table's ``slips`` command and the floor's read it.

Eight decks, no burn, commission at the shoe's end, seats leave after three empty locks. The script, a coup every
minute from 20:00 UTC on 2026-12-01:

* ``CARD_A`` sits at seat 1 and buys in $500 (cash) before the first coup, bets Banker $100 for three coups,
  takes the card out, and sits at seat 4 a minute later (a seat move): Player $50 for two coups, card out;
* ``CARD_B`` sits at seat 2 and bets Player $25 for four coups, leaves (card out) after coup 4, and comes back
  to seat 2 ten minutes later (a pause within the window) for two coups of Tie $5 and Banker $25, then takes
  the card out between the last coup's lock and its declare;
* seat 3 is uncarded: Banker $25 every coup, on no slip;
* ``CARD_C`` sits at seat 5 at coup 5 and is still seated at the end (an open visit).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from controller.game.cards import Card
from controller.game.cash import BuyIn, Tender
from controller.game.chips import SpotChips
from controller.game.edges import EdgeWatch
from controller.game.records import input_body
from controller.game.seats import SeatCard
from controller.game.table import CardDrawn, DeclarePressed, NewShoePressed, TableInput, TableState
from controller.game.wagers import Spot, SpotSeen
from controller.journal import Journal
from controller.table.loop import BuyInEntry, LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.game.money import BOX_RULES, Chips, money, table_rules

CARD_A, CARD_B, CARD_C = "E0040150A0000001", "E0040150B0000002", "E0040150C0000003"
TENS = [rank + suit for rank in "TJQK" for suit in "SHDC"]
START = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.start = self.now = start

    def __call__(self) -> str:
        return self.now.isoformat(timespec="milliseconds")

    def at(self, minutes: float) -> None:
        self.now = self.start + timedelta(minutes=minutes)


def slip_journal(
    path: Path, cards: tuple[str, str, str] = (CARD_A, CARD_B, CARD_C), start: datetime = START
) -> Journal:
    """The journal described in the module's docstring (open: the caller closes it); ``cards`` are the players
    A, B and C, ``start`` the time of the shoe's start."""
    card_a, card_b, card_c = cards
    journal = Journal.open(path)
    clock = _Clock(start)
    loop = TableLoop(
        TableState(table_rules(money(leave_after_coups=3))),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=clock, edges=EdgeWatch(1.0, BOX_RULES, 8)),  # every wager priced, none flagged
    )
    chips = Chips()
    seq = iter(range(1, 10_000))

    def apply(event: TableInput) -> None:
        facts = {"seq": next(seq)} if isinstance(event, SeatCard) else {}
        loop._apply(event, input_body(event, **facts), None, None)

    def spot(seat: int, bet: Spot, cents: int | None) -> None:
        apply(SpotSeen(seat, bet, chips(cents) if cents else SpotChips()))

    # (minute, wagers) per coup: seat -> [(spot, cents)]
    a1 = [(Spot.BANKER, 10_000)]
    a4 = [(Spot.PLAYER, 5_000)]
    b = [(Spot.PLAYER, 2_500)]
    b2 = [(Spot.TIE, 500), (Spot.BANKER, 2_500)]
    u = [(Spot.BANKER, 2_500)]
    coups: list[dict[int, list[tuple[Spot, int]]]] = [
        {1: a1, 2: b, 3: u},  # 1
        {1: a1, 2: b, 3: u},  # 2
        {1: a1, 2: b, 3: u},  # 3
        {4: a4, 2: b, 3: u},  # 4 (A moved to seat 4)
        {4: a4, 3: u, 5: b},  # 5 (B away; C sits at 5)
        {3: u, 5: b},  # 6
        {3: u, 5: b},  # 7
        {3: u, 5: b},  # 8
        {3: u, 5: b},  # 9
        {3: u, 5: b},  # 10
        {3: u, 5: b},  # 11
        {3: u, 5: b},  # 12
        {3: u, 5: b},  # 13
        {2: b2, 3: u, 5: b},  # 14 (B back)
        {2: b2, 3: u, 5: b},  # 15
    ]
    clock.at(0)
    apply(NewShoePressed())
    clock.at(0.2)
    apply(SeatCard(1, card_a, True))
    apply(SeatCard(2, card_b, True))
    clock.at(0.3)
    loop.handle(BuyInEntry(BuyIn(1, 50_000, Tender.CASH, card_a)))
    loop.handle(BuyInEntry(BuyIn(3, 20_000, Tender.CASH, None)))  # uncarded: no slip
    placed: dict[tuple[int, Spot], bool] = {}
    for number, wagers in enumerate(coups, start=1):
        minute = float(number)
        clock.at(minute - 0.5)
        if number == 4:  # A moves from seat 1 to seat 4
            apply(SeatCard(1, card_a, False))
            clock.at(minute - 0.4)
            apply(SeatCard(4, card_a, True))
        if number == 5:
            apply(SeatCard(5, card_c, True))
        if number == 14:  # B is back after a pause
            apply(SeatCard(2, card_b, True))
        for seat, bets in sorted(wagers.items()):
            for bet, cents in bets:
                spot(seat, bet, cents)
                placed[(seat, bet)] = True
        clock.at(minute)
        nine, tens = f"9{'SHDC'[number % 4]}", [TENS[(3 * number + i) % len(TENS)] for i in range(3)]
        # P1 B1 P2 B2: a Banker natural, every third coup a Player natural
        hand = (tens[0], nine, tens[1], tens[2]) if number % 3 else (nine, tens[0], tens[1], tens[2])
        for c in hand:
            apply(CardDrawn(Card.parse(c)))
        if number == 15:  # B takes the card out between the lock and the declare: the coup is still B's
            apply(SeatCard(2, card_b, False))
        clock.at(minute + 0.1)
        apply(DeclarePressed())
        clock.at(minute + 0.2)
        for key in list(placed):  # the dealer takes and pays; the players pick up
            spot(key[0], key[1], None)
            del placed[key]
        clock.at(minute + 0.3)
        if number == 4:
            apply(SeatCard(2, card_b, False))
        if number == 5:
            apply(SeatCard(4, card_a, False))
    loop.flush()
    return journal
