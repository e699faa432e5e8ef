"""Rulesets and pay tables as data: what each wager pays under Commission, EZ and Super 6 baccarat.

The shipped rulesets live in ``controller/rulesets.toml`` (read by :mod:`controller.rulebook`); this
module only defines the values. Odds are exact fractions ("pays N to 1"), never floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from fractions import Fraction
from types import MappingProxyType


class Bet(Enum):
    """Every wager the table offers; the value is the name used in JSON and configuration."""

    BANKER = "banker"
    PLAYER = "player"
    TIE = "tie"
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    DRAGON_BONUS_PLAYER = "dragon_bonus_player"
    DRAGON_BONUS_BANKER = "dragon_bonus_banker"
    DRAGON_7 = "dragon_7"
    PANDA_8 = "panda_8"


#: The three wagers every table offers; the others are side bets a table may or may not offer.
ALWAYS_OFFERED: frozenset[Bet] = frozenset({Bet.BANKER, Bet.PLAYER, Bet.TIE})
SIDE_BETS: frozenset[Bet] = frozenset(Bet) - ALWAYS_OFFERED

# The wagers' vocabulary, stated once: the configuration's table.side_bets and surveillance.bet_thresholds
# read names only through it, so a name one of them takes the other takes too.

#: The nine wagers by name, in the layout's order.
WAGER_NAMES: tuple[str, ...] = tuple(b.value for b in Bet)
#: Names that stand for several wagers: the Dragon Bonus is one side bet on the layout, with a Player and a
#: Banker side that a house offers together (and a surveillance officer watches together).
WAGER_GROUPS: Mapping[str, frozenset[Bet]] = MappingProxyType(
    {"dragon_bonus": frozenset({Bet.DRAGON_BONUS_PLAYER, Bet.DRAGON_BONUS_BANKER})}
)
#: The side bets a table offers, by the names a house uses (``table.side_bets``): each group once, in the
#: layout's order, in place of its members.
SIDE_BET_NAMES: tuple[str, ...] = tuple(
    dict.fromkeys(
        next((g for g, members in WAGER_GROUPS.items() if b in members), b.value) for b in Bet if b in SIDE_BETS
    )
)


def wagers_named(name: str) -> frozenset[Bet]:
    """The wagers a name stands for: one (``dragon_7``) or a group (``dragon_bonus``: both sides).
    Raises :class:`ValueError` naming the names there are."""
    if name in WAGER_GROUPS:
        return WAGER_GROUPS[name]
    try:
        return frozenset({Bet(name)})
    except ValueError:
        known = ", ".join([*WAGER_NAMES, *WAGER_GROUPS])
        raise ValueError(f"{name[:40]!r} is not a wager: use {known}") from None


class CommissionCollection(Enum):
    """When the Banker commission is collected (both appear on casino rule cards)."""

    AT_PAYOUT = "payout"  # deducted from each winning Banker wager when it is paid
    AT_SHOE_END = "shoe_end"  # kept per seat on a ledger (commission box) and collected at the shoe's end


def _default_ladder() -> Mapping[int, Fraction]:
    pays = {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1}
    return MappingProxyType({margin: Fraction(p) for margin, p in pays.items()})


@dataclass(frozen=True)
class DragonBonus:
    """Dragon Bonus pay table: a natural win pays ``natural_win``, a natural tie pushes, a non-natural
    win pays by the winning margin from ``ladder`` (margin -> pays N to 1); anything else loses."""

    natural_win: Fraction = Fraction(1)
    natural_tie_pushes: bool = True
    ladder: Mapping[int, Fraction] = field(default_factory=_default_ladder)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ladder", MappingProxyType(dict(self.ladder)))  # read-only, whatever was given
        for margin, pays in self.ladder.items():
            if not 1 <= margin <= 9:
                raise ValueError(f"dragon bonus margin {margin} outside 1-9")
            if pays < 0:
                raise ValueError(f"dragon bonus pay for margin {margin} is negative")

    def __reduce__(self) -> tuple[type[DragonBonus], tuple[Fraction, bool, dict[int, Fraction]]]:
        # A mappingproxy cannot be pickled; the scoreboard's process receives the ruleset pickled.
        return (DragonBonus, (self.natural_win, self.natural_tie_pushes, dict(self.ladder)))


@dataclass(frozen=True)
class Ruleset:
    """One way of paying the main wagers and side bets. Pays are "N to 1"."""

    name: str
    description: str = ""
    #: Banker pays this to 1 before commission.
    banker_pays: Fraction = Fraction(1)
    #: Commission on a winning Banker wager (0.05 = 5 %); 0 for no-commission games.
    commission_rate: Fraction = Fraction(0)
    #: EZ baccarat: a Banker win with a three-card 7 pushes the Banker wager.
    banker_three_card_seven_pushes: bool = False
    #: Super 6: a Banker win with a total of 6 pays this (1/2 = 1:2); ``None`` for no special pay.
    banker_six_pays: Fraction | None = None
    player_pays: Fraction = Fraction(1)
    tie_pays: Fraction = Fraction(8)
    #: Whether Banker and Player wagers push on a tie (universal in Punto Banco).
    tie_pushes_main_bets: bool = True
    pair_pays: Fraction = Fraction(11)
    dragon_bonus: DragonBonus = field(default_factory=DragonBonus)
    dragon_7_pays: Fraction = Fraction(40)
    panda_8_pays: Fraction = Fraction(25)
    commission_collection: CommissionCollection = CommissionCollection.AT_PAYOUT
    #: The side bets this table offers (the table's configuration, ``table.side_bets``); all by default.
    offered_side_bets: frozenset[Bet] = SIDE_BETS

    def __post_init__(self) -> None:
        if not self.offered_side_bets <= SIDE_BETS:
            extra = ", ".join(sorted(b.value for b in self.offered_side_bets - SIDE_BETS))
            raise ValueError(f"not side bets: {extra}")
        if not 0 <= self.commission_rate < 1:
            raise ValueError(f"commission_rate {self.commission_rate} outside [0, 1)")
        for name in ("banker_pays", "player_pays", "tie_pays", "pair_pays", "dragon_7_pays", "panda_8_pays"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} is negative")

    def offers(self, bet: Bet) -> bool:
        """Whether a wager on ``bet`` may be placed at this table."""
        return bet in ALWAYS_OFFERED or bet in self.offered_side_bets

    def with_side_bets(self, offered: frozenset[Bet]) -> Ruleset:
        """The same ruleset at a table that offers only these side bets."""
        return replace(self, offered_side_bets=frozenset(offered))

    def with_tie_pays(self, pays: Fraction | int) -> Ruleset:
        """The same ruleset with another Tie pay (8:1 or 9:1 are usual)."""
        return replace(self, tie_pays=Fraction(pays))


#: The three house games, as shipped (the TOML in controller/rulesets.toml must agree; a test checks).
COMMISSION = Ruleset(
    name="commission",
    description="Banker pays 1:1 less 5 % commission",
    commission_rate=Fraction(5, 100),
)
EZ = Ruleset(
    name="ez",
    description="No commission; a Banker win with a three-card 7 pushes the Banker wager",
    banker_three_card_seven_pushes=True,
)
SUPER6 = Ruleset(
    name="super6",
    description="No commission; a Banker win with 6 pays 1:2",
    banker_six_pays=Fraction(1, 2),
)
BUILTIN_RULESETS: Mapping[str, Ruleset] = MappingProxyType({r.name: r for r in (COMMISSION, EZ, SUPER6)})
#: The names of the house games, stated here once: the shipped rulesets.toml holds exactly these, the
#: configuration's ``table.rules`` and the commands' ``--rules`` accept exactly these.
RULESET_NAMES: tuple[str, ...] = tuple(BUILTIN_RULESETS)
#: The ruleset a table plays when nothing names one.
DEFAULT_RULESET = COMMISSION.name
