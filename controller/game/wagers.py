"""The money at the table: bet spots, the betting window, settlement, payout checks and the commission boxes.

Pure, like the rest of the core: spot readings in (as table inputs, their chips already resolved through the
chip registry, :mod:`controller.game.chips`), notices and a :class:`MoneyView` out. The table state
(:mod:`controller.game.table`) holds one :class:`WagerBook` when the table has a bet-spot reader and feeds
it the coup's own events (the first card locks the bets, the declare settles them, a void unlocks them, the
shoe's end opens the commission collection), so a replay of the journal rebuilds every wager and every box.

This module states the seam (the inputs the shell sends, the view the displays read); the rules are in
:class:`WagerBook`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from controller.game.chips import SpotChips
from controller.game.rules import COMMISSION, Bet, Ruleset
from controller.game.settlement import TableLimits

__all__ = [
    "MAX_SEATS",
    "MoneyRules",
    "MoneyView",
    "Phase",
    "ReaderLinkChanged",
    "SeatView",
    "Spot",
    "SpotSeen",
    "SpotState",
    "SpotView",
    "SpotsSnapshot",
]

#: Seats on the largest layout (big-table baccarat: 14; mini and midi use fewer).
MAX_SEATS = 14


class Spot(Enum):
    """A betting spot of one seat: one per wager, and the seat's commission box. The value is its name."""

    BANKER = "banker"
    PLAYER = "player"
    TIE = "tie"
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    DRAGON_BONUS_PLAYER = "dragon_bonus_player"
    DRAGON_BONUS_BANKER = "dragon_bonus_banker"
    DRAGON_7 = "dragon_7"
    PANDA_8 = "panda_8"
    #: Where the player puts the chips that pay the seat's commission box when it is asked for.
    COMMISSION = "commission"

    @property
    def bet(self) -> Bet | None:
        """The wager this spot takes (None for the commission spot)."""
        return None if self is Spot.COMMISSION else Bet(self.value)

    @classmethod
    def of(cls, bet: Bet) -> Spot:
        return cls(bet.value)


# -- inputs (the shell sends them; the journal stores and replays them) -------------------------------------


@dataclass(frozen=True, slots=True)
class SpotSeen:
    """The reader reports what one spot holds now (a change)."""

    seat: int
    spot: Spot
    chips: SpotChips


@dataclass(frozen=True, slots=True)
class SpotsSnapshot:
    """The reader's periodic full snapshot: every spot listed, and every spot not listed is empty. The loop
    journals one only when it changes what the book knows (:meth:`WagerBook.differs`)."""

    spots: tuple[tuple[int, Spot, SpotChips], ...]


@dataclass(frozen=True, slots=True)
class ReaderLinkChanged:
    """The bet-spot reader's link came up or went down (READER DOWN: the bets cannot be checked)."""

    up: bool


@dataclass(frozen=True)
class MoneyRules:
    """What the book needs of the house: the game, the limits, the seats, and when a seat has left."""

    ruleset: Ruleset = COMMISSION
    limits: TableLimits = field(default_factory=TableLimits)
    seats: int = 9
    #: A seat whose spots stay empty for this many declared coups has left: its commission box is due.
    leave_after_coups: int = 3

    def __post_init__(self) -> None:
        if not 1 <= self.seats <= MAX_SEATS:
            raise ValueError(f"seats {self.seats} outside 1-{MAX_SEATS}")
        if self.leave_after_coups < 1:
            raise ValueError("leave_after_coups must be at least 1")


# -- the view (what the dealer screen and the LCD show) ------------------------------------------------------


class Phase(Enum):
    """Where the coup's money is."""

    BETTING = "betting"  # bets may be placed; each spot is checked live against the table's rules
    LOCKED = "locked"  # the coup's first card is out: the wagers are fixed until the declare
    PAYOUT = "payout"  # declared: the dealer pays the winners and takes the losers
    COLLECTION = "collection"  # the shoe ended: the commission boxes are asked for


class SpotState(Enum):
    """What one spot shows the dealer."""

    EMPTY = "empty"
    OPEN = "open"  # a bet placed during betting, within the rules
    VIOLATION = "violation"  # a bet placed during betting that breaks a rule (shown with its words)
    LOCKED = "locked"  # a wager of the coup in progress
    REFUSED = "refused"  # on the spot at the lock but against the rules: to be returned to the player
    CHANGED = "changed"  # a locked spot whose chips changed (past-post or pulled bet)
    PAY = "pay"  # won: the dealer must bring it to ``target_cents``
    TAKE = "take"  # lost: the dealer must empty it
    PUSH = "push"  # pushed: the stake stays
    PAID = "paid"  # the payout check passed
    MISPAID = "mispaid"  # the payout check failed (underpay, overpay, loser left)
    COLLECT = "collect"  # the commission spot: the box is asked for


@dataclass(frozen=True, slots=True)
class SpotView:
    seat: int
    spot: Spot
    state: SpotState
    #: What the spot holds now (chips in play).
    cents: int
    #: The wager as locked (None before the lock or for an empty spot).
    wager_cents: int | None = None
    #: What the spot must hold after the payout (stake + win, less commission taken now); None if no payout.
    target_cents: int | None = None
    #: PAY: what the dealer must add; TAKE: what the dealer must take.
    pay_cents: int = 0
    take_cents: int = 0
    #: Words for the dealer ("TIE BELOW MINIMUM", "PAST POST", "UNDERPAID $5.00", "UNKNOWN CHIP").
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "spot": self.spot.value,
            "state": self.state.value,
            "cents": self.cents,
            "wager_cents": self.wager_cents,
            "target_cents": self.target_cents,
            "pay_cents": self.pay_cents,
            "take_cents": self.take_cents,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    spots: tuple[SpotView, ...]
    #: The seat's commission box: owed now (commission collected at the shoe's end).
    box_cents: int = 0
    #: The seat's open alarms, in words, newest last.
    alarms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "spots": [s.to_dict() for s in self.spots],
            "box_cents": self.box_cents,
            "alarms": list(self.alarms),
        }


@dataclass(frozen=True, slots=True)
class MoneyView:
    """The money at the table now, seat by seat (seats with nothing to show left out)."""

    phase: Phase
    seats: tuple[SeatView, ...] = ()
    reader_up: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"phase": self.phase.value, "reader_up": self.reader_up, "seats": [s.to_dict() for s in self.seats]}
