"""How each wager comes out on a finished coup: the one place where the pay tables are applied.

:func:`decide` is read by the settlement (money, on a :class:`~controller.game.coup.CoupResult`) and by the
odds engine (expected values, on its compact :class:`~controller.game.odds.CoupOutcome`), so the two can
never disagree about who is paid what.
"""

from __future__ import annotations

from enum import Enum
from fractions import Fraction
from typing import Protocol

from controller.game.coup import Winner
from controller.game.rules import Bet, DragonBonus, Ruleset


class Outcome(Enum):
    """How one wager came out."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


class CoupFacts(Protocol):
    """What a wager can depend on. Both the coup result and the odds engine's outcome provide it."""

    @property
    def winner(self) -> Winner: ...
    @property
    def player_total(self) -> int: ...
    @property
    def banker_total(self) -> int: ...
    @property
    def player_three_cards(self) -> bool: ...
    @property
    def banker_three_cards(self) -> bool: ...
    @property
    def player_natural(self) -> bool: ...
    @property
    def banker_natural(self) -> bool: ...
    @property
    def margin(self) -> int: ...
    @property
    def player_pair(self) -> bool: ...
    @property
    def banker_pair(self) -> bool: ...


LOSE = (Outcome.LOSE, Fraction(0))
PUSH = (Outcome.PUSH, Fraction(0))

#: Wagers decided by totals and card counts alone; the pair wagers also need the first two cards' ranks.
PAIR_BETS: tuple[Bet, ...] = (Bet.PLAYER_PAIR, Bet.BANKER_PAIR)


def _win_if(condition: bool, pays: Fraction) -> tuple[Outcome, Fraction]:
    return (Outcome.WIN, pays) if condition else LOSE


def _main(coup: CoupFacts, side: Winner, pays: Fraction, rules: Ruleset) -> tuple[Outcome, Fraction]:
    if coup.winner is Winner.TIE:
        return PUSH if rules.tie_pushes_main_bets else LOSE
    return _win_if(coup.winner is side, pays)


def _banker(coup: CoupFacts, rules: Ruleset) -> tuple[Outcome, Fraction]:
    if coup.winner is Winner.BANKER:
        if rules.banker_three_card_seven_pushes and coup.banker_three_cards and coup.banker_total == 7:
            return PUSH  # EZ baccarat
        if rules.banker_six_pays is not None and coup.banker_total == 6:
            return Outcome.WIN, rules.banker_six_pays  # Super 6
    return _main(coup, Winner.BANKER, rules.banker_pays, rules)


def _dragon_bonus(coup: CoupFacts, side: Winner, bonus: DragonBonus) -> tuple[Outcome, Fraction]:
    if coup.winner is Winner.TIE:
        both_natural = coup.player_natural and coup.banker_natural
        return PUSH if both_natural and bonus.natural_tie_pushes else LOSE
    if coup.winner is not side:
        return LOSE
    natural = coup.player_natural if side is Winner.PLAYER else coup.banker_natural
    if natural:
        return Outcome.WIN, bonus.natural_win
    pays = bonus.ladder.get(coup.margin)
    return LOSE if pays is None else (Outcome.WIN, pays)


def decide(bet: Bet, coup: CoupFacts, rules: Ruleset) -> tuple[Outcome, Fraction]:
    """The outcome of a wager on ``bet`` and the odds it pays ("N to 1", before any commission)."""
    if bet is Bet.BANKER:
        return _banker(coup, rules)
    if bet is Bet.PLAYER:
        return _main(coup, Winner.PLAYER, rules.player_pays, rules)
    if bet is Bet.TIE:
        return _win_if(coup.winner is Winner.TIE, rules.tie_pays)
    if bet is Bet.PLAYER_PAIR:
        return _win_if(coup.player_pair, rules.pair_pays)
    if bet is Bet.BANKER_PAIR:
        return _win_if(coup.banker_pair, rules.pair_pays)
    if bet is Bet.DRAGON_BONUS_PLAYER:
        return _dragon_bonus(coup, Winner.PLAYER, rules.dragon_bonus)
    if bet is Bet.DRAGON_BONUS_BANKER:
        return _dragon_bonus(coup, Winner.BANKER, rules.dragon_bonus)
    if bet is Bet.DRAGON_7:
        won = coup.winner is Winner.BANKER and coup.banker_three_cards and coup.banker_total == 7
        return _win_if(won, rules.dragon_7_pays)
    if bet is Bet.PANDA_8:
        won = coup.winner is Winner.PLAYER and coup.player_three_cards and coup.player_total == 8
        return _win_if(won, rules.panda_8_pays)
    raise AssertionError(f"unhandled bet {bet}")  # pragma: no cover - every Bet is handled above


def net_per_unit(bet: Bet, coup: CoupFacts, rules: Ruleset) -> Fraction:
    """What one unit staked nets: the pay less commission on a Banker win, 0 on a push, -1 on a loss."""
    outcome, pays = decide(bet, coup, rules)
    if outcome is Outcome.WIN:
        return pays * (1 - rules.commission_rate) if bet is Bet.BANKER else pays
    return Fraction(0) if outcome is Outcome.PUSH else Fraction(-1)
