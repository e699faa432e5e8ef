"""Shared builders for the money's tests: chips, a table with a bet-spot reader, coups dealt by their cards,
and one scripted shoe in which every money record kind happens (the records', the schemas' and settle's
tests read it)."""

from __future__ import annotations

import itertools
from dataclasses import replace

from controller.game.cards import Card
from controller.game.chips import Chip, ChipStatus, SpotChips
from controller.game.notice import Notice
from controller.game.rules import COMMISSION, CommissionCollection, Ruleset
from controller.game.settlement import TableLimits
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, DeclarePressed, NewShoePressed, TableInput, TableRules, TableState
from controller.game.wagers import MoneyRules, Spot, SpotSeen, SpotsSnapshot

#: Commission collected at the shoe's end (the commission boxes), and at payout.
BOX_RULES = replace(COMMISSION, commission_collection=CommissionCollection.AT_SHOE_END)
PAYOUT_RULES = COMMISSION
#: $5 unit, $25-$5,000 main, $5-$500 side (the defaults).
LIMITS = TableLimits()

#: The four cards of a coup, in the order they are dealt (P1 B1 P2 B2): naturals, no third card.
PLAYER_NATURAL = ("9H", "KD", "KS", "QS")  # Player 9, Banker 0
BANKER_NATURAL = ("KD", "9H", "QS", "KS")  # Banker 9, Player 0
NATURAL_TIE = ("9H", "9D", "KS", "KD")  # 9 - 9: Banker and Player push


def money(ruleset: Ruleset = BOX_RULES, seats: int = 9, leave_after_coups: int = 3) -> MoneyRules:
    return MoneyRules(ruleset, LIMITS, seats, leave_after_coups)


def table_rules(rules: MoneyRules | None = None) -> TableRules:
    """Eight decks, no burn (a coup's first card is the first card after NEW SHOE), with a reader's book."""
    return TableRules(decks=8, burn_rule=BurnRule(BurnMode.NONE), money=rules or money())


class Chips:
    """Chips with fresh UIDs: ``chips(2500, 500)`` is a $25 and a $5 chip in play."""

    def __init__(self, start: int = 0xE004_0000_0000_0000) -> None:
        self._uids = itertools.count(start)

    def one(self, cents: int, status: ChipStatus = ChipStatus.IN_PLAY) -> Chip:
        return Chip(f"{next(self._uids):016X}", 0 if status is ChipStatus.UNKNOWN else cents, status)

    def __call__(self, *cents: int, status: ChipStatus = ChipStatus.IN_PLAY) -> SpotChips:
        return SpotChips(tuple(self.one(c, status) for c in cents))


def plus(chips: SpotChips, more: SpotChips) -> SpotChips:
    return SpotChips(chips.chips + more.chips)


def cards(tokens: tuple[str, ...] | list[str]) -> list[TableInput]:
    return [CardDrawn(Card.parse(t)) for t in tokens]


def every_money_kind() -> list[TableInput]:
    """NEW SHOE, then one coup and the next's lock in which every money record kind happens: wagers, a refusal,
    a ghost read, a past-post, a misread, a pulled bet, settlements, an underpay and a loser left, and a
    leaving seat's commission box collected (commission at the shoe's end; seats leave after one empty lock)."""
    chips = Chips()
    banker1 = chips(2500, 2500, 2500, 2500)  # seat 1: Banker $100
    player3 = chips(2500, 2500)  # seat 3: Player $50
    player5 = chips(2500)  # seat 5: Player $25
    tie2 = chips(500)  # seat 2: a lone Tie of $5, below the table minimum
    late = chips(2500)
    out: list[TableInput] = [
        NewShoePressed(),
        SpotSeen(1, Spot.BANKER, banker1),
        SpotSeen(2, Spot.TIE, tie2),
        SpotSeen(3, Spot.PLAYER, player3),
        SpotSeen(5, Spot.PLAYER, player5),
        SpotSeen(4, Spot.BANKER, SpotChips(banker1.chips[:1])),  # a ghost of seat 1's chip
        *cards(BANKER_NATURAL[:1]),  # the lock
        SpotSeen(3, Spot.PLAYER, plus(player3, late)),  # past-posted ...
        SpotSeen(1, Spot.BANKER, SpotChips(banker1.chips[:3])),  # a flicker ...
        SpotSeen(1, Spot.BANKER, banker1),  # ... back: a misread
        SpotSeen(5, Spot.PLAYER, SpotChips()),  # pulled
        SpotsSnapshot(
            (
                (1, Spot.BANKER, banker1),
                (2, Spot.TIE, tie2),
                (3, Spot.PLAYER, plus(player3, late)),  # ... and still there: a past-post
                (4, Spot.BANKER, SpotChips(banker1.chips[:1])),
            )
        ),
        *cards(BANKER_NATURAL[1:]),
        DeclarePressed(),  # the pulled bet confirmed; Banker wins: seat 1 is paid $100, owes $5 commission
        SpotSeen(4, Spot.BANKER, SpotChips()),
        SpotSeen(2, Spot.TIE, SpotChips()),
        SpotSeen(1, Spot.BANKER, plus(banker1, chips(2500, 2500))),  # paid $50 of $100: underpaid
        SpotSeen(1, Spot.BANKER, SpotChips()),  # the player collects
        # seat 3's losing Player wager is left on the spot
        *cards(PLAYER_NATURAL[:1]),  # the next lock: the mispays; seat 1 has left (one empty lock): box due
    ]
    fee = chips(500)
    out += [SpotSeen(1, Spot.COMMISSION, fee), SpotSeen(1, Spot.COMMISSION, SpotChips())]  # box collected
    return out


def run(events: list[TableInput], rules: TableRules | None = None) -> tuple[TableState, list[list[Notice]]]:
    state = TableState(rules or table_rules(money(leave_after_coups=1)))
    return state, [list(state.apply(e)) for e in events]
