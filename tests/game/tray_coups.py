"""A chip tray's shoe as table inputs, built the same way every time: the tray counted and anchored, a coup paid
from it and its loser taken into it (no variance), then a $5 chip palmed from a tube, seen at the next coup's
count, recounted and confirmed: a variance of -$5.00 in that coup. Read by tests/game/test_tray.py and
tests/record_journals.py (every tray record kind)."""

from __future__ import annotations

from controller.game.chips import SpotChips
from controller.game.table import DeclarePressed, NewShoePressed, TableInput, TableRules
from controller.game.tray import TraySnapshot, TrayStill, TubeSeen
from controller.game.wagers import Spot, SpotSeen
from tests.game.money import PLAYER_NATURAL, Chips, cards, money, plus, table_rules

#: The float: tube 1 twenty $25 chips, tube 2 twenty $5 chips ($600).
FLOAT_CENTS = 20 * 2500 + 20 * 500


def tray_rules() -> TableRules:
    """Eight decks, no burn, a reader's book (commission at payout) and a chip tray's reader."""
    rules = table_rules(money())
    return TableRules(decks=rules.decks, burn_rule=rules.burn_rule, money=rules.money, tray=True)


def tray_shoe() -> list[TableInput]:
    """NEW SHOE; the tray's full count and a still moment (the anchor); coup 1: seat 1 $50 on Player, seat 2 $25
    on Banker, a Player natural: the dealer takes seat 2's chip into tube 1 and pays seat 1 two $25 chips from
    it, the players pick up, the tray is still (no variance); a $5 chip is palmed from tube 2; coup 2 without
    wagers, the tray still (the variance held back), recounted (a full count, the same), still again: the
    variance (-$5.00) in coup 2."""
    chips = Chips()
    tube1, tube2 = chips(*[2500] * 20), chips(*[500] * 20)
    bet1, bet2 = chips(2500, 2500), chips(2500)
    paid = SpotChips(tube1.chips[:2])
    tube1_after = SpotChips(tube1.chips[2:] + bet2.chips)
    tube2_palmed = SpotChips(tube2.chips[1:])
    return [
        NewShoePressed(),
        TraySnapshot(((1, tube1), (2, tube2))),
        TrayStill(),
        SpotSeen(1, Spot.PLAYER, bet1),
        SpotSeen(2, Spot.BANKER, bet2),
        *cards(PLAYER_NATURAL),
        DeclarePressed(),
        SpotSeen(2, Spot.BANKER, SpotChips()),  # the loser taken ...
        TubeSeen(1, SpotChips(tube1.chips + bet2.chips)),  # ... into tube 1
        TubeSeen(1, tube1_after),  # the payout taken from tube 1 ...
        SpotSeen(1, Spot.PLAYER, plus(bet1, paid)),  # ... onto seat 1's spot: the payout check passes
        SpotSeen(1, Spot.PLAYER, SpotChips()),  # the player picks up
        TrayStill(),
        TubeSeen(2, tube2_palmed),  # a $5 chip palmed
        *cards(PLAYER_NATURAL),
        DeclarePressed(),
        TrayStill(),  # the variance seen: held back, a recount asked for
        TraySnapshot(((1, tube1_after), (2, tube2_palmed))),  # the recount
        TrayStill(),  # ... confirms it
    ]
