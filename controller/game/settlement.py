"""Settlement: checking a seat's wagers against the table limits and paying them after the coup.

Pure: wagers and a declared :class:`~controller.game.coup.CoupResult` in, outcomes in integer cents out.

House decisions written down here (they are the table's rule card):

* **Wager checks** (:func:`validate_wagers`, one seat's wagers for one coup). Every amount is positive and
  a multiple of the table unit (default $5). Banker and Player are *main* wagers and keep the table
  minimum and maximum. Every other wager (Tie, pairs, Dragon Bonus, Dragon 7, Panda 8) is a *side* wager
  and keeps the side minimum and maximum; but a Tie wagered with no Banker or Player wager on the seat
  must meet the table minimum. A Dragon Bonus needs a Banker or Player wager on the seat, on either side
  by default (``TableLimits.main_wager_same_side`` asks for the same side; ``needs_main_wager`` lists the
  bets that need one). One wager per bet per seat. Betting Banker *and* Player on one seat is refused
  by default (``allow_both_sides=False``): both sides together risk only the commission and are the
  classic way to farm rolling-chip rebates, so the house must opt in.
* **Winnings round down to the cent** (``floor(stake x pays)``): a Super 6 half pay on an odd-cent stake
  drops the half cent. With the usual $5 unit this never arises.
* **Commission** is ``commission_rate`` of a winning Banker wager's *winnings*, rounded **up** to
  ``TableLimits.commission_rounding_cents`` (1 cent by default; 25 for a table whose smallest chip is a
  quarter), per wager, and never more than the winnings. ``AT_PAYOUT`` deducts it from the win;
  ``AT_SHOE_END`` pays the full win and leaves the commission owed on the seat's
  :class:`CommissionLedger` (the commission box), collected when the shoe ends.
* ``net_cents`` is the player's gain or loss on the coup as settled at the table: with commission
  collected at shoe end it does *not* include the commission owed (that moves through the ledger).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

from controller.game.coup import CoupResult
from controller.game.errors import RulesViolation
from controller.game.notation import money_text
from controller.game.payouts import CoupFacts, Outcome, decide
from controller.game.rules import Bet, CommissionCollection, Ruleset

__all__ = [
    "MAIN_BETS",
    "CommissionLedger",
    "Outcome",
    "Seat",
    "Settlement",
    "TableLimits",
    "Wager",
    "WagerError",
    "WagerOutcome",
    "WagerRule",
    "settle",
    "validate_wagers",
]

#: A seat at the table (the seat number on the layout).
Seat = int

#: Banker and Player: the main wagers. Every other bet is a side wager.
MAIN_BETS: frozenset[Bet] = frozenset({Bet.BANKER, Bet.PLAYER})

#: The hand a side bet belongs to, for ``TableLimits.main_wager_same_side``.
_SIDE_OF: Mapping[Bet, Bet] = {
    Bet.DRAGON_BONUS_PLAYER: Bet.PLAYER,
    Bet.DRAGON_BONUS_BANKER: Bet.BANKER,
    Bet.PLAYER_PAIR: Bet.PLAYER,
    Bet.BANKER_PAIR: Bet.BANKER,
    Bet.PANDA_8: Bet.PLAYER,
    Bet.DRAGON_7: Bet.BANKER,
}


class WagerRule(Enum):
    """Which table rule a wager broke (the ``rule`` of a :class:`WagerError`)."""

    NOT_POSITIVE = "not_positive"
    NOT_UNIT_MULTIPLE = "not_unit_multiple"
    DUPLICATE_BET = "duplicate_bet"
    BOTH_SIDES = "both_sides"
    BELOW_MINIMUM = "below_minimum"
    ABOVE_MAXIMUM = "above_maximum"
    LONE_TIE_BELOW_MINIMUM = "lone_tie_below_minimum"
    SIDE_BELOW_MINIMUM = "side_below_minimum"
    SIDE_ABOVE_MAXIMUM = "side_above_maximum"
    NEEDS_MAIN_WAGER = "needs_main_wager"
    NOT_OFFERED = "not_offered"


class WagerError(RulesViolation):
    """A wager the table limits do not allow. Carries the rule broken, the bet, the amount and the limit."""

    def __init__(
        self, rule: WagerRule, bet: Bet, amount_cents: int, message: str, limit_cents: int | None = None
    ) -> None:
        super().__init__(f"{bet.value} {money_text(amount_cents)}: {message}")
        self.rule = rule
        self.bet = bet
        self.amount_cents = amount_cents
        self.limit_cents = limit_cents


@dataclass(frozen=True, slots=True)
class Wager:
    """One wager on one seat: the bet and the stake in cents."""

    bet: Bet
    amount_cents: int

    def __post_init__(self) -> None:
        if not isinstance(self.bet, Bet):
            raise TypeError(f"bet must be a Bet, got {self.bet!r}")
        if isinstance(self.amount_cents, bool) or not isinstance(self.amount_cents, int):
            raise TypeError(f"amount_cents must be an int (cents), got {self.amount_cents!r}")


def _default_needs_main() -> frozenset[Bet]:
    return frozenset({Bet.DRAGON_BONUS_PLAYER, Bet.DRAGON_BONUS_BANKER})


@dataclass(frozen=True)
class TableLimits:
    """The table's limits and wagering rules, in cents. Defaults: $5 unit, $25-$5,000 main, $5-$500 side."""

    #: Every wager is a multiple of this (the smallest chip accepted on the layout).
    unit_cents: int = 500
    #: Banker and Player wagers (and a Tie wagered alone) must be at least this ...
    minimum_cents: int = 2_500
    #: ... and Banker and Player wagers at most this.
    maximum_cents: int = 500_000
    #: Side wagers (Tie, pairs, Dragon Bonus, Dragon 7, Panda 8) at least this ...
    side_minimum_cents: int = 500
    #: ... and at most this.
    side_maximum_cents: int = 50_000
    #: Whether one seat may wager on Banker and Player in the same coup.
    allow_both_sides: bool = False
    #: Side bets that need a Banker or Player wager on the same seat.
    needs_main_wager: frozenset[Bet] = field(default_factory=_default_needs_main)
    #: Whether that main wager must be on the side bet's own hand (Dragon Bonus Player needs Player).
    main_wager_same_side: bool = False
    #: Commission is rounded UP to a multiple of this (1 cent; 25 where the smallest chip is a quarter).
    commission_rounding_cents: int = 1

    def __post_init__(self) -> None:
        for name in (
            "unit_cents",
            "minimum_cents",
            "maximum_cents",
            "side_minimum_cents",
            "side_maximum_cents",
            "commission_rounding_cents",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive number of cents, got {value!r}")
        if self.minimum_cents > self.maximum_cents:
            raise ValueError(f"minimum_cents {self.minimum_cents} above maximum_cents {self.maximum_cents}")
        if self.side_minimum_cents > self.side_maximum_cents:
            raise ValueError(
                f"side_minimum_cents {self.side_minimum_cents} above side_maximum_cents {self.side_maximum_cents}"
            )
        if MAIN_BETS & self.needs_main_wager:
            raise ValueError("needs_main_wager may list side bets only")


def validate_wagers(wagers: Sequence[Wager], limits: TableLimits | None = None, rules: Ruleset | None = None) -> None:
    """Check one seat's wagers for one coup; raise :class:`WagerError` for the first rule broken.

    Checks, in order: each wager's bet is offered at this table (when ``rules`` is given), its amount
    (positive, a multiple of the unit) and that no bet appears twice; Banker with Player; each wager's
    minimum and maximum; side bets that need a main wager.
    """
    limits = limits or TableLimits()
    seen: set[Bet] = set()
    for w in wagers:
        if rules is not None and not rules.offers(w.bet):
            raise WagerError(WagerRule.NOT_OFFERED, w.bet, w.amount_cents, "this table does not offer this bet")
        if w.amount_cents <= 0:
            raise WagerError(WagerRule.NOT_POSITIVE, w.bet, w.amount_cents, "a wager must be positive")
        if w.amount_cents % limits.unit_cents:
            raise WagerError(
                WagerRule.NOT_UNIT_MULTIPLE,
                w.bet,
                w.amount_cents,
                f"not a multiple of the table unit {money_text(limits.unit_cents)}",
                limits.unit_cents,
            )
        if w.bet in seen:
            raise WagerError(WagerRule.DUPLICATE_BET, w.bet, w.amount_cents, "this seat already has this bet")
        seen.add(w.bet)
    mains = seen & MAIN_BETS
    if mains == MAIN_BETS and not limits.allow_both_sides:
        player = next(w for w in wagers if w.bet is Bet.PLAYER)
        raise WagerError(
            WagerRule.BOTH_SIDES, Bet.PLAYER, player.amount_cents, "Banker and Player on one seat not allowed"
        )
    for w in wagers:
        _check_limits(w, limits, has_main=bool(mains))
    for w in wagers:
        if w.bet not in limits.needs_main_wager:
            continue
        wanted = _SIDE_OF.get(w.bet) if limits.main_wager_same_side else None
        if wanted is not None and wanted not in mains:
            raise WagerError(
                WagerRule.NEEDS_MAIN_WAGER, w.bet, w.amount_cents, f"needs a {wanted.value} wager on the seat"
            )
        if not mains:
            raise WagerError(
                WagerRule.NEEDS_MAIN_WAGER, w.bet, w.amount_cents, "needs a banker or player wager on the seat"
            )


def _check_limits(w: Wager, limits: TableLimits, has_main: bool) -> None:
    amount = w.amount_cents
    if w.bet in MAIN_BETS:
        if amount < limits.minimum_cents:
            raise WagerError(
                WagerRule.BELOW_MINIMUM,
                w.bet,
                amount,
                f"below the table minimum {money_text(limits.minimum_cents)}",
                limits.minimum_cents,
            )
        if amount > limits.maximum_cents:
            raise WagerError(
                WagerRule.ABOVE_MAXIMUM,
                w.bet,
                amount,
                f"above the table maximum {money_text(limits.maximum_cents)}",
                limits.maximum_cents,
            )
        return
    if w.bet is Bet.TIE and not has_main and amount < limits.minimum_cents:
        raise WagerError(
            WagerRule.LONE_TIE_BELOW_MINIMUM,
            w.bet,
            amount,
            f"a Tie without a Banker or Player wager must meet the table minimum {money_text(limits.minimum_cents)}",
            limits.minimum_cents,
        )
    if amount < limits.side_minimum_cents:
        raise WagerError(
            WagerRule.SIDE_BELOW_MINIMUM,
            w.bet,
            amount,
            f"below the side-bet minimum {money_text(limits.side_minimum_cents)}",
            limits.side_minimum_cents,
        )
    if amount > limits.side_maximum_cents:
        raise WagerError(
            WagerRule.SIDE_ABOVE_MAXIMUM,
            w.bet,
            amount,
            f"above the side-bet maximum {money_text(limits.side_maximum_cents)}",
            limits.side_maximum_cents,
        )


@dataclass(frozen=True, slots=True)
class WagerOutcome:
    """How one wager was settled, in cents."""

    bet: Bet
    stake_cents: int
    outcome: Outcome
    #: The odds paid ("N to 1"); 0 for a push or a loss.
    pays: Fraction
    #: Winnings before commission, not counting the returned stake.
    paid_cents: int
    #: The stake handed back: the whole stake on a win or a push, 0 on a loss.
    returned_cents: int
    #: Commission charged on this wager (winning Banker wagers only), however it is collected.
    commission_cents: int
    #: The part of ``commission_cents`` left owed on the ledger (commission collected at shoe end).
    commission_owed_cents: int
    #: The player's gain (+) or loss (-) on this wager, commission owed on the ledger not included.
    net_cents: int

    @property
    def payout_cents(self) -> int:
        """What the dealer pushes to the player: stake back plus winnings less commission taken now."""
        return self.returned_cents + self.paid_cents - (self.commission_cents - self.commission_owed_cents)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bet": self.bet.value,
            "stake_cents": self.stake_cents,
            "outcome": self.outcome.value,
            "pays": str(self.pays),
            "paid_cents": self.paid_cents,
            "returned_cents": self.returned_cents,
            "commission_cents": self.commission_cents,
            "commission_owed_cents": self.commission_owed_cents,
            "net_cents": self.net_cents,
            "payout_cents": self.payout_cents,
        }


@dataclass(frozen=True, slots=True)
class Settlement:
    """One seat's wagers on one coup, settled."""

    ruleset: str
    collection: CommissionCollection
    outcomes: tuple[WagerOutcome, ...]

    def __getitem__(self, bet: Bet) -> WagerOutcome:
        """The outcome of the wager on ``bet`` (``KeyError`` if the seat had none)."""
        for outcome in self.outcomes:
            if outcome.bet is bet:
                return outcome
        raise KeyError(bet)

    @property
    def staked_cents(self) -> int:
        return sum(o.stake_cents for o in self.outcomes)

    @property
    def paid_cents(self) -> int:
        return sum(o.paid_cents for o in self.outcomes)

    @property
    def payout_cents(self) -> int:
        return sum(o.payout_cents for o in self.outcomes)

    @property
    def commission_cents(self) -> int:
        return sum(o.commission_cents for o in self.outcomes)

    @property
    def commission_owed_cents(self) -> int:
        """Commission this coup adds to the seat's ledger (0 when collected at payout)."""
        return sum(o.commission_owed_cents for o in self.outcomes)

    @property
    def net_cents(self) -> int:
        return sum(o.net_cents for o in self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "commission_collection": self.collection.value,
            "wagers": [o.to_dict() for o in self.outcomes],
            "net_cents": self.net_cents,
            "commission_owed_cents": self.commission_owed_cents,
        }


def _commission(paid_cents: int, rate: Fraction, rounding_cents: int) -> int:
    """``rate`` of the winnings, rounded up to ``rounding_cents``, never more than the winnings."""
    if not rate or not paid_cents:
        return 0
    exact = paid_cents * rate
    steps = -((-exact) // rounding_cents)  # ceiling division, exact on Fractions
    return min(int(steps) * rounding_cents, paid_cents)


def settle(
    result: CoupResult | CoupFacts,
    wagers: Iterable[Wager],
    rules: Ruleset,
    limits: TableLimits | None = None,
    decided: dict[Bet, tuple[Outcome, Fraction]] | None = None,
) -> Settlement:
    """Settle one seat's wagers on a declared coup under ``rules`` (``result``: the coup, or its facts computed
    once, :class:`~controller.game.payouts.CoupFacts`, when many seats are settled on one coup; ``decided``:
    a dict kept across those seats, in which each bet's outcome on this coup is decided once).

    Does not re-check the table limits (call :func:`validate_wagers` when the wagers are placed), but a
    stake that is not positive raises :class:`WagerError`. ``limits`` gives the commission rounding.
    """
    if decided is None:
        decided = {}
    rounding = (limits or TableLimits()).commission_rounding_cents
    at_shoe_end = rules.commission_collection is CommissionCollection.AT_SHOE_END
    outcomes: list[WagerOutcome] = []
    for w in wagers:
        stake = w.amount_cents
        if stake <= 0:
            raise WagerError(WagerRule.NOT_POSITIVE, w.bet, stake, "a wager must be positive")
        known = decided.get(w.bet)
        if known is None:
            known = decided[w.bet] = decide(w.bet, result, rules)
        outcome, pays = known
        if outcome is Outcome.WIN:
            paid = stake * pays.numerator // pays.denominator  # rounds down to the cent
            commission = _commission(paid, rules.commission_rate, rounding) if w.bet is Bet.BANKER else 0
            owed = commission if at_shoe_end else 0
            net = paid - (commission - owed)
            returned = stake
        elif outcome is Outcome.PUSH:
            paid = commission = owed = net = 0
            returned = stake
        else:
            paid = commission = owed = returned = 0
            net = -stake
        outcomes.append(
            WagerOutcome(
                bet=w.bet,
                stake_cents=stake,
                outcome=outcome,
                pays=pays,
                paid_cents=paid,
                returned_cents=returned,
                commission_cents=commission,
                commission_owed_cents=owed,
                net_cents=net,
            )
        )
    return Settlement(ruleset=rules.name, collection=rules.commission_collection, outcomes=tuple(outcomes))


class CommissionLedger:
    """The commission box: Banker commission each seat owes over a shoe, when collected at shoe end.

    Mutable and owned by the table loop; pure (no I/O). Settlements whose commission was taken at payout
    add nothing.
    """

    __slots__ = ("_owed",)

    def __init__(self) -> None:
        self._owed: dict[Seat, int] = {}

    def record(self, seat: Seat, settlement: Settlement) -> int:
        """Add the commission this settlement leaves owed; return what the seat now owes."""
        owed = self._owed.get(seat, 0) + settlement.commission_owed_cents
        if owed:
            self._owed[seat] = owed
        return owed

    def owed(self, seat: Seat) -> int:
        """What the seat owes now (0 for a seat never recorded)."""
        return self._owed.get(seat, 0)

    def collect(self, seat: Seat) -> int:
        """Collect the seat's commission (a player leaving mid-shoe): return it and clear the seat."""
        return self._owed.pop(seat, 0)

    def close_shoe(self) -> dict[Seat, int]:
        """The shoe is over: everything owed, per seat (seats owing nothing left out); the ledger clears."""
        owed = dict(sorted(self._owed.items()))
        self._owed.clear()
        return owed

    @property
    def total_owed(self) -> int:
        return sum(self._owed.values())

    def balances(self) -> dict[Seat, int]:
        """A copy of what each seat owes now."""
        return dict(sorted(self._owed.items()))

    def __repr__(self) -> str:
        return f"<CommissionLedger {self.balances()}>"
