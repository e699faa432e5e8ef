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

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

from controller.game.chips import Chip, ChipStatus, SpotChips
from controller.game.coup import CoupResult, Winner
from controller.game.notation import money_text
from controller.game.notice import Notice
from controller.game.payouts import Outcome
from controller.game.rules import COMMISSION, Bet, Ruleset
from controller.game.settlement import (
    CommissionLedger,
    TableLimits,
    Wager,
    WagerError,
    WagerOutcome,
    WagerRule,
    settle,
    validate_wagers,
)

__all__ = [
    "MAX_SEATS",
    "ApprovalView",
    "BoxClosed",
    "BoxDue",
    "BoxWhy",
    "ChipAlarm",
    "CommissionTaken",
    "GhostRead",
    "LockedSpotChanged",
    "Mispay",
    "MispayKind",
    "Misread",
    "MoneyInput",
    "MoneyRules",
    "MoneyView",
    "PastPost",
    "Phase",
    "PulledBet",
    "ReaderLink",
    "ReaderLinkChanged",
    "SeatView",
    "Spot",
    "SpotKey",
    "SpotSeen",
    "SpotState",
    "SpotView",
    "SpotViolation",
    "SpotsSnapshot",
    "WagerBook",
    "WagerRefused",
    "WagerSettled",
    "WagersLocked",
    "spot_label",
    "violation_text",
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

    # Members are singletons: hash them by identity, in C (the book keys its dicts by (seat, spot), and
    # Enum's own hash is Python code; equality is identity either way).
    __hash__ = object.__hash__

    @property
    def bet(self) -> Bet | None:
        """The wager this spot takes (None for the commission spot)."""
        return _BET_OF_SPOT.get(self)

    @classmethod
    def of(cls, bet: Bet) -> Spot:
        return _SPOT_OF_BET[bet]


_SPOT_OF_BET: dict[Bet, Spot] = {b: Spot(b.value) for b in Bet}
_BET_OF_SPOT: dict[Spot, Bet] = {s: b for b, s in _SPOT_OF_BET.items()}


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
    #: This shoe's locked spots that changed and came back before the next snapshot (reader flicker).
    misreads: int = 0
    #: This shoe's chips reported on a second spot while still on the first (counted on the first only).
    ghost_reads: int = 0
    #: What waits for a supervisor's approval (None: nothing; the table loop adds it: the dealer screen shows it).
    approval: ApprovalView | None = None
    #: An unreadable coup card may be keyed now (the table loop sets it: the dealer screen offers KEY CARD).
    keyable: bool = False
    #: What the table last refused of the dealer screen's (a rating, a card keyed, a PIN it did not check), in
    #: the screen's words, and how many it has refused (the screen says a refusal once, when the count moves).
    refusal: str = ""
    refusals: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "phase": self.phase.value,
            "reader_up": self.reader_up,
            "seats": [s.to_dict() for s in self.seats],
            "misreads": self.misreads,
            "ghost_reads": self.ghost_reads,
        }
        if self.approval is not None:
            out["approval"] = self.approval.to_dict()
        if self.keyable:
            out["keyable"] = True
        if self.refusals:
            out |= {"refusal": self.refusal, "refusals": self.refusals}
        return out


@dataclass(frozen=True, slots=True)
class ApprovalView:
    """An approval pending, as the dealer screen shows it: the action and its coup, who asked, the approver whose
    badge was read (None: a badge is due; else the PIN is), and what was said of its last step ("" or the
    refusal: ``WRONG PIN (1 OF 3)``)."""

    action: str
    text: str  # the action as the display says it: VOID COUP
    shoe: int
    coup: int
    dealer: str | None
    approver: str | None
    said: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- notices (what the book reports; the records are built from them, controller.game.records) -------------

#: A spot of a seat: (seat, spot).
SpotKey = tuple[int, Spot]


def spot_label(spot: Spot) -> str:
    """The spot's name on the layout, upper case (both Dragon Bonus spots read DRAGON BONUS)."""
    if spot in (Spot.DRAGON_BONUS_PLAYER, Spot.DRAGON_BONUS_BANKER):
        return "DRAGON BONUS"
    return str(spot.value).replace("_", " ").upper()


@dataclass(frozen=True)
class SpotViolation(Notice):
    """A bet placed during betting breaks a table rule (reported the first time it is seen in a window)."""

    seat: int
    spot: Spot
    cents: int
    text: str


@dataclass(frozen=True)
class ChipAlarm(Notice):
    """A chip that does not count (unknown, retired, stolen) came onto a spot."""

    seat: int
    spot: Spot
    chip: Chip

    @property
    def text(self) -> str:
        return f"SEAT {self.seat} {spot_label(self.spot)}: {self.chip.status.value.upper()} CHIP {self.chip.uid}"


@dataclass(frozen=True)
class GhostRead(Notice):
    """A chip reported on a second spot while the first still holds it: it counts on the first only."""

    seat: int
    spot: Spot
    uid: str
    owner_seat: int
    owner_spot: Spot


@dataclass(frozen=True)
class WagersLocked(Notice):
    """The coup's first card: one seat's wagers for the coup, as its spots held them."""

    shoe: int
    coup: int
    seat: int
    wagers: tuple[Wager, ...]


@dataclass(frozen=True)
class WagerRefused(Notice):
    """A bet on a spot at the lock that breaks a table rule: not a wager, to be returned to the player."""

    shoe: int
    coup: int
    seat: int
    spot: Spot
    cents: int
    text: str


@dataclass(frozen=True)
class LockedSpotChanged(Notice):
    """A locked spot changed before the declare and stayed changed (base of past-post and pulled bet)."""

    shoe: int
    coup: int
    seat: int
    spot: Spot
    locked_cents: int
    seen_cents: int


@dataclass(frozen=True)
class PastPost(LockedSpotChanged):
    """Chips added to (or swapped on) a locked spot."""


@dataclass(frozen=True)
class PulledBet(LockedSpotChanged):
    """Chips taken from a locked spot."""


@dataclass(frozen=True)
class Misread(Notice):
    """A locked spot changed and was back at its locked chips by the next snapshot: reader flicker."""

    shoe: int
    coup: int
    seat: int
    spot: Spot
    locked_cents: int


@dataclass(frozen=True)
class WagerSettled(Notice):
    """One locked wager settled at the declare; ``box_cents`` is what the seat's box owes after it."""

    shoe: int
    coup: int
    seat: int
    outcome: WagerOutcome
    box_cents: int


class MispayKind(Enum):
    UNDERPAY = "underpay"
    OVERPAY = "overpay"
    LOSER_LEFT = "loser_left"


@dataclass(frozen=True)
class Mispay(Notice):
    """A spot's payout check failed by the next lock (or the next shoe)."""

    shoe: int
    coup: int
    seat: int
    spot: Spot
    kind: MispayKind
    expected_cents: int
    seen_cents: int


class BoxWhy(Enum):
    SHOE_END = "shoe_end"
    SEAT_LEFT = "seat_left"


@dataclass(frozen=True)
class BoxDue(Notice):
    """A seat's commission box is asked for (COLLECT on its commission spot)."""

    shoe: int
    seat: int
    owed_cents: int
    why: BoxWhy


@dataclass(frozen=True)
class CommissionTaken(Notice):
    """Chips on a due box's commission spot were taken: ``cents`` collected, ``collected_cents`` so far."""

    shoe: int
    seat: int
    cents: int
    collected_cents: int


@dataclass(frozen=True)
class BoxClosed(Notice):
    """A commission box closed: what it owed, what was collected, what was not."""

    shoe: int
    seat: int
    owed_cents: int
    collected_cents: int
    why: BoxWhy

    @property
    def uncollected_cents(self) -> int:
        return max(0, self.owed_cents - self.collected_cents)

    @property
    def over_collected_cents(self) -> int:
        return max(0, self.collected_cents - self.owed_cents)


@dataclass(frozen=True)
class ReaderLink(Notice):
    """The reader's link came up or went down."""

    up: bool


MoneyInput = SpotSeen | SpotsSnapshot | ReaderLinkChanged

# -- the book -------------------------------------------------------------------------------------------------

_SPOT_ORDER = {s: i for i, s in enumerate(Spot)}
_WAGER_SPOTS = tuple(s for s in Spot if s is not Spot.COMMISSION)
_Counted = tuple[int, frozenset[str]]
_EMPTY: _Counted = (0, frozenset())

_RULE_WORDS = {
    WagerRule.NOT_POSITIVE: "NOT POSITIVE",
    WagerRule.DUPLICATE_BET: "TWICE",
    WagerRule.BOTH_SIDES: "WITH BANKER: ONE SIDE ONLY",
    WagerRule.BELOW_MINIMUM: "BELOW MINIMUM",
    WagerRule.ABOVE_MAXIMUM: "ABOVE MAXIMUM",
    WagerRule.LONE_TIE_BELOW_MINIMUM: "BELOW MINIMUM",
    WagerRule.SIDE_BELOW_MINIMUM: "BELOW MINIMUM",
    WagerRule.SIDE_ABOVE_MAXIMUM: "ABOVE MAXIMUM",
    WagerRule.NOT_OFFERED: "NOT OFFERED",
}


def violation_text(error: WagerError) -> str:
    """A rule broken, in the dealer's words: "TIE BELOW MINIMUM", "DRAGON BONUS NEEDS BANKER OR PLAYER"."""
    label = spot_label(Spot.of(error.bet))
    if error.rule is WagerRule.NOT_UNIT_MULTIPLE:
        return f"{label} NOT IN {money_text(error.limit_cents or 0)} UNITS"
    if error.rule is WagerRule.NEEDS_MAIN_WAGER:
        found = re.search(r"needs an? (.+?) wager", str(error))
        return f"{label} NEEDS {found.group(1).upper() if found else 'A MAIN WAGER'}"
    return f"{label} {_RULE_WORDS[error.rule]}"


def _sort_key(key: SpotKey) -> tuple[int, int]:
    return key[0], _SPOT_ORDER[key[1]]


@dataclass(frozen=True, slots=True)
class CoupFactsOnce:
    """A declared coup's facts computed once (a :class:`~controller.game.payouts.CoupFacts`): settling many
    wagers on one coup then does not total the hands again for each."""

    winner: Winner
    player_total: int
    banker_total: int
    player_three_cards: bool
    banker_three_cards: bool
    player_natural: bool
    banker_natural: bool
    margin: int
    player_pair: bool
    banker_pair: bool

    @classmethod
    def of(cls, result: CoupResult) -> CoupFactsOnce:
        return cls(
            result.winner,
            result.player_total,
            result.banker_total,
            result.player_three_cards,
            result.banker_three_cards,
            result.player_natural,
            result.banker_natural,
            result.margin,
            result.player_pair,
            result.banker_pair,
        )


@dataclass(slots=True)
class _Check:
    """One settled spot's payout check, from the declare until the next lock."""

    outcome: WagerOutcome
    target: int
    peak: int
    last: int
    #: What the spot held at the declare.
    start: int = 0
    decreased: bool = False
    passed: bool = False

    def update(self, cents: int) -> None:
        if self.passed:
            return
        # A loser passes once emptied. A winner or a push passes on reaching its target only before the player
        # first takes chips off it: after that, reaching it again is the player's next bet, not the payout.
        if (cents == 0) if self.outcome.outcome is Outcome.LOSE else (cents == self.target and not self.decreased):
            self.passed = True
            self.last = cents
            return
        if not self.decreased:
            if cents < self.last:
                self.decreased = True
            else:
                self.peak = max(self.peak, cents)
        self.last = cents

    def verdict(self) -> tuple[MispayKind, int] | None:
        """The mispay (kind, seen cents) if the check failed, else None."""
        if self.passed:
            return None
        if self.outcome.outcome is Outcome.LOSE:
            return (MispayKind.LOSER_LEFT, self.last) if self.last else None
        if self.outcome.outcome is Outcome.PUSH:
            # Only chips added after the declare overpay a push (more than it held then is a past-post's
            # leftover, recorded as such); a push taken away is none: the reader cannot tell who took it.
            return (MispayKind.OVERPAY, self.peak) if self.peak > max(self.target, self.start) else None
        if self.peak > self.target:
            return MispayKind.OVERPAY, self.peak
        if self.peak < self.target:
            return MispayKind.UNDERPAY, self.peak
        return None


class WagerBook:
    """The money of one table, from the bet-spot reader's inputs and the coup's events. Pure, deterministic.

    The house's rules:

    * **Betting.** While the betting window is open each seat's non-empty wager spots are checked live with
      :func:`~controller.game.settlement.validate_wagers` (the table's ruleset and limits). A spot that breaks
      a rule shows ``VIOLATION`` with the rule in words ("TIE BELOW MINIMUM", "DRAGON BONUS NEEDS BANKER OR
      PLAYER", "DRAGON 7 NOT OFFERED"), reported as a :class:`SpotViolation` the first time in the window.
      When several wagers of a seat break rules, each is found by taking out the first one named and checking
      the rest again. Only chips in play count: an unknown, retired or stolen chip raises a seat alarm naming
      seat and spot ("SEAT 3 BANKER: UNKNOWN CHIP E004...") while it lies there.
    * **Ghost reads.** A chip (UID) reported on two spots at once counts only on the spot where it was seen
      first (a :class:`GhostRead`, counted in the view, no alarm); when that spot lets it go, it counts where
      it is still seen.
    * **Lock** at the coup's first card (:meth:`first_card`): each spot's value then is the coup's wager
      (:class:`WagersLocked`, one per seat with wagers). A bet still breaking a rule is refused
      (:class:`WagerRefused`, ``REFUSED``: to be returned; it is not settled, and its spot is not watched).
    * **Past-post and pulled bet.** A change to a locked spot (any wager spot, an empty one included) before
      the declare is *suspect*: readers flicker. It is a :class:`PastPost` (value up, or the same value with
      other chips) or a :class:`PulledBet` (value down) when the next :class:`SpotsSnapshot` still shows it, or
      at the declare if the spot is still changed; a spot back at its locked chips by then was a
      :class:`Misread` (counted in the view, no alarm). The locked wager is what is settled.
    * **Declare** (:meth:`declared`): every locked wager is settled with
      :func:`~controller.game.settlement.settle` under the ruleset's commission rule (``AT_PAYOUT`` deducts it;
      ``AT_SHOE_END`` adds it to the seat's :class:`~controller.game.settlement.CommissionLedger` box):
      one :class:`WagerSettled` per wager. **Void** (:meth:`voided`): the wagers unlock and stay on their
      spots for the redeal; nothing is settled.
    * **Payout checks**, from the declare until the next lock (or the next shoe's start). A winning spot's
      target is its payout (stake + win, less the commission where it is deducted), a push's the stake, a
      losing spot's nothing. A spot passes when it reaches its target (a win or push) or is emptied (a loss);
      once passed, later changes are the player's new bets. A winning spot not passed is judged by the
      highest value it reached before its first decrease (the player collecting). At the next lock each spot
      not passed is a :class:`Mispay` (underpay, overpay, loser left) with a seat alarm for the dealer. The
      chips then on a spot are the next coup's wager whatever the verdict (a loser left included: the
      mispay record is how the house gets it back). A push taken away is not a mispay: a reader sees chips
      leave a spot, not whose hand took them. A push whose spot holds its stake passes at once, so chips
      added to it after the declare are a new bet, not an overpay; a push whose spot held more at the
      declare (a past-post's chips) is overpaid only by chips added above that.
    * **Commission boxes.** A seat whose wager spots are all empty at ``leave_after_coups`` consecutive
      locks has left: its box (if it owes anything) is due now (:class:`BoxDue`). At the shoe's end
      (:meth:`shoe_ended`) every box owing something is due. A due box shows ``COLLECT`` on the seat's
      commission spot; chips placed there and then taken (the spot emptied) are collected, the value the spot
      held just before it was emptied (:class:`CommissionTaken`). A leaving seat's box closes when it is
      collected; every other due box closes at :meth:`shoe_started`: a :class:`BoxClosed` records owed,
      collected and uncollected (collected above owed is kept as over-collected), and the box clears.
    * **Alarms.** A seat's money alarms (refused bets, past-posts, pulled bets, mispays) stand until the next
      lock; they are cleared at a new shoe too. Chip alarms stand while the chip lies on the spot.
    * **Reader down.** The book keeps the last readings; READER DOWN shows in the view (the bets cannot be
      checked) and the lock uses what it last knew.

    * **A new shoe** (:meth:`shoe_started`) forgets everything but the reader's link and the spots'
      readings: the chips on the layout stay where they are (a wager left riding from the last coup of the old
      shoe is a wager of the new shoe's first coup; the book once forgot them until the reader's next
      snapshot, and a first coup dealt sooner lost such a wager). The shoe's start record carries the
      readings (:meth:`carried`), so the book at a shoe's start is :meth:`at_shoe_start` of the link and those
      readings, and a replay may begin at the newest shoe's start.
    """

    def __init__(self, rules: MoneyRules) -> None:
        self.rules = rules
        self.phase = Phase.BETTING
        self.reader_up = True
        self.shoe = 1
        self.ledger = CommissionLedger()
        self._readings: dict[SpotKey, tuple[Chip, ...]] = {}
        self._owner: dict[str, SpotKey] = {}
        self._coup: tuple[int, int] | None = None
        self._lock_seen: dict[SpotKey, _Counted] = {}
        self._wagers: dict[int, tuple[Wager, ...]] = {}
        self._refused: dict[SpotKey, str] = {}
        self._suspect: dict[SpotKey, None] = {}
        self._changed: dict[SpotKey, LockedSpotChanged] = {}
        self._checks: dict[SpotKey, _Check] = {}
        self._noted: set[tuple[SpotKey, str]] = set()
        self._alarms: dict[int, list[str]] = {}
        self._empty_locks: dict[int, int] = {}
        self._due: dict[int, BoxWhy] = {}
        self._collected: dict[int, int] = {}
        self.misreads = 0
        self.ghost_reads = 0
        self._counts: dict[SpotKey, _Counted] = {}
        self._touched: set[SpotKey] = set()
        self._violation_cache: dict[int, dict[SpotKey, str]] = {}
        self._view: MoneyView | None = None

    def _moved(self) -> None:
        """Something changed: the cached checks and view are stale."""
        self._violation_cache = {}
        self._view = None

    @classmethod
    def at_shoe_start(
        cls, rules: MoneyRules, shoe: int, reader_up: bool = True, carried: Sequence[Mapping[str, Any]] = ()
    ) -> WagerBook:
        """The book right after :meth:`shoe_started` of shoe ``shoe``, the reader's link ``reader_up``, the
        spots holding what ``carried`` (:meth:`carried`, from the shoe's start record) says."""
        book = cls(rules)
        book.reader_up = reader_up
        book.shoe = shoe
        for item in carried:
            key = (int(item["seat"]), Spot(str(item["spot"])))
            chips = tuple(Chip(str(c["uid"]), int(c["cents"]), ChipStatus(str(c["status"]))) for c in item["chips"])
            ghosts = set(item.get("ghosts", ()))
            book._readings[key] = chips
            for chip in chips:
                if chip.uid not in ghosts:
                    book._owner[chip.uid] = key
        book._counts = {key: book._count(key) for key in book._readings if book._count(key) != _EMPTY}
        return book

    def carried(self) -> tuple[dict[str, Any], ...]:
        """The spots' readings as a new shoe carries them (its start record's ``spots``): each spot's chips, and
        the UIDs on it that count on another spot (ghost reads), in seat and spot order."""
        out = []
        for key in sorted(self._readings, key=_sort_key):
            chips = self._readings[key]
            item: dict[str, Any] = {"seat": key[0], "spot": key[1].value, "chips": [c.to_dict() for c in chips]}
            ghosts = sorted(c.uid for c in chips if self._owner.get(c.uid) != key)
            if ghosts:
                item["ghosts"] = ghosts
            out.append(item)
        return tuple(out)

    # -- readings -----------------------------------------------------------------------------------------
    def _in_range(self, seat: int) -> bool:
        return 1 <= seat <= self.rules.seats

    def _count(self, key: SpotKey) -> _Counted:
        chips = self._readings.get(key)
        if not chips:
            return _EMPTY
        owner = self._owner
        mine = [c for c in chips if c.status is ChipStatus.IN_PLAY and owner.get(c.uid) == key]
        if not mine:
            return _EMPTY
        return sum(c.cents for c in mine), frozenset(c.uid for c in mine)

    def _counted(self, key: SpotKey) -> _Counted:
        """What the spot counts now: its value and the UIDs of the chips that make it."""
        return self._counts.get(key, _EMPTY)

    def cents(self, seat: int, spot: Spot) -> int:
        """What the spot holds now, as it counts (chips in play, ghost reads left out)."""
        return self._counts.get((seat, spot), _EMPTY)[0]

    def _recount(self) -> dict[SpotKey, _Counted]:
        """The counts after this input's changes: only the spots it touched are counted again."""
        counts = dict(self._counts)
        for key in self._touched:
            value = self._count(key)
            if value == _EMPTY:
                counts.pop(key, None)
            else:
                counts[key] = value
        self._touched = set()
        return counts

    @staticmethod
    def _normal(chips: SpotChips) -> tuple[Chip, ...]:
        seen: dict[str, Chip] = {}
        for chip in chips.chips:
            seen.setdefault(chip.uid, chip)
        return tuple(seen.values())

    def _release(self, key: SpotKey, chips: tuple[Chip, ...]) -> None:
        """``key`` no longer holds ``chips``: their ownership moves to a spot still holding them, if any."""
        for chip in chips:
            if self._owner.get(chip.uid) != key:
                continue
            del self._owner[chip.uid]
            for other, held in self._readings.items():
                if other != key and any(c.uid == chip.uid for c in held):
                    self._owner[chip.uid] = other
                    self._touched.add(other)
                    break

    def _set(self, key: SpotKey, chips: tuple[Chip, ...]) -> list[Notice]:
        old = self._readings.get(key, ())
        if {c.uid: c for c in old} == {c.uid: c for c in chips}:
            return []
        new_uids = {c.uid for c in chips}
        old_uids = {c.uid for c in old}
        self._touched.add(key)
        if chips:
            self._readings[key] = chips
        else:
            self._readings.pop(key, None)
        self._release(key, tuple(c for c in old if c.uid not in new_uids))
        out: list[Notice] = []
        for chip in chips:
            if chip.uid in old_uids:
                continue
            owner = self._owner.get(chip.uid)
            if owner is None:
                self._owner[chip.uid] = key
            elif owner != key:
                self.ghost_reads += 1
                out.append(GhostRead(key[0], key[1], chip.uid, owner[0], owner[1]))
            if not chip.counts:
                out.append(ChipAlarm(key[0], key[1], chip))
        return out

    # -- inputs -------------------------------------------------------------------------------------------
    def apply(self, event: MoneyInput) -> list[Notice]:
        """Take one reader input; return what happened. Never raises for what a reader reports."""
        self._view = None
        if isinstance(event, ReaderLinkChanged):
            if event.up == self.reader_up:
                return []
            self.reader_up = event.up
            return [ReaderLink(event.up)]
        before = self._counts
        out: list[Notice] = []
        if isinstance(event, SpotSeen):
            if not self._in_range(event.seat):
                return []
            out += self._set((event.seat, event.spot), self._normal(event.chips))
            pending: tuple[SpotKey, ...] = ()
        elif isinstance(event, SpotsSnapshot):
            pending = tuple(self._suspect)
            wanted = self._snapshot_readings(event)
            keys = sorted(set(self._readings) | set(wanted), key=_sort_key)
            for key in keys:  # chips leaving first, so a chip moved between spots moves cleanly
                if key not in wanted:
                    out += self._set(key, ())
                else:
                    keep = tuple(c for c in self._readings.get(key, ()) if c in set(wanted[key]))
                    out += self._set(key, keep)
            for key in keys:
                if key in wanted:
                    out += self._set(key, wanted[key])
        else:
            raise TypeError(f"not a money input: {event!r}")
        after = self._counts = self._recount()
        changed = sorted({k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}, key=_sort_key)
        for seat in {k[0] for k in changed}:
            self._violation_cache.pop(seat, None)
        out += self._changes(changed, before, after)
        for key in pending:
            if key in self._suspect:
                out += self._confirm(key)
        return out

    def _snapshot_readings(self, snapshot: SpotsSnapshot) -> dict[SpotKey, tuple[Chip, ...]]:
        wanted: dict[SpotKey, tuple[Chip, ...]] = {}
        for seat, spot, chips in snapshot.spots:
            normal = self._normal(chips)
            if self._in_range(seat) and normal:
                wanted[(seat, spot)] = normal
        return wanted

    def differs(self, snapshot: SpotsSnapshot) -> bool:
        """Whether applying ``snapshot`` would change anything (the readings, or a suspect spot to confirm)."""
        if self.phase is Phase.LOCKED and self._suspect:
            return True
        wanted = self._snapshot_readings(snapshot)
        if wanted.keys() != self._readings.keys():
            return True
        return any(set(wanted[k]) != set(self._readings[k]) for k in wanted)

    def _changes(
        self, changed: list[SpotKey], before: dict[SpotKey, _Counted], after: dict[SpotKey, _Counted]
    ) -> list[Notice]:
        out: list[Notice] = []
        seats: set[int] = set()
        for key in changed:
            seat, spot = key
            now = after.get(key, _EMPTY)
            if spot is Spot.COMMISSION:
                out += self._commission_spot(seat, before.get(key, _EMPTY)[0], now[0])
                continue
            check = self._checks.get(key)
            if check is not None and not check.passed:
                check.update(now[0])
                continue
            if self.phase is Phase.LOCKED and key not in self._refused and key not in self._changed:
                if now != self._lock_seen.get(key, _EMPTY):
                    self._suspect.setdefault(key, None)
                elif key in self._suspect:
                    del self._suspect[key]
                    self.misreads += 1
                    assert self._coup is not None
                    out.append(Misread(self._coup[0], self._coup[1], seat, spot, now[0]))
                continue
            seats.add(seat)
        if self.phase is not Phase.LOCKED:
            for seat in sorted(seats):
                for key, text in self._violations(seat).items():
                    if (key, text) not in self._noted:
                        self._noted.add((key, text))
                        out.append(SpotViolation(seat, key[1], self.cents(*key), text))
        return out

    def _betting_spots(self, seat: int) -> list[SpotKey]:
        """The seat's wager spots holding a bet for the next coup (not a payout still being checked)."""
        out: list[SpotKey] = []
        for spot in _WAGER_SPOTS:
            key = (seat, spot)
            check = self._checks.get(key)
            if check is not None and not check.passed:
                continue
            if self.cents(seat, spot) > 0:
                out.append(key)
        return out

    def _violations(self, seat: int) -> dict[SpotKey, str]:
        """Each of the seat's betting spots that breaks a rule, with the rule in words (cached until one of
        the seat's spots changes or a coup's event moves the money)."""
        found = self._violation_cache.get(seat)
        if found is None:
            found = self._violation_cache[seat] = self._check_seat(seat)
        return found

    def _check_seat(self, seat: int) -> dict[SpotKey, str]:
        keys = self._betting_spots(seat)
        wagers = [Wager(spot.bet, self.cents(s, spot)) for s, spot in keys if spot.bet is not None]
        found: dict[SpotKey, str] = {}
        while wagers:
            try:
                validate_wagers(wagers, self.rules.limits, self.rules.ruleset)
                break
            except WagerError as error:
                found[(seat, Spot.of(error.bet))] = violation_text(error)
                wagers = [w for w in wagers if w.bet is not error.bet]
        return found

    # -- the coup's events --------------------------------------------------------------------------------
    def first_card(self, shoe: int, coup: int) -> list[Notice]:
        """The coup's first card is out: judge the last payout, lock the bets."""
        if self.phase is Phase.LOCKED:
            return []
        self._view = None  # the seats' checks stand (cached from the betting) but for the seats judged now
        self.shoe = shoe
        out = self._judge()
        self._alarms = {}
        for notice in out:
            if isinstance(notice, Mispay):
                self._alarm(notice.seat, _mispay_text(notice))
        self._coup = (shoe, coup)
        self._lock_seen, self._wagers, self._refused = {}, {}, {}
        self._suspect, self._changed, self._noted = {}, {}, set()
        for seat in range(1, self.rules.seats + 1):
            keys = [k for k in self._betting_spots(seat)]
            violations = self._violations(seat)
            for key in keys:
                self._lock_seen[key] = self._counted(key)
            wagers = tuple(
                Wager(spot.bet, self.cents(seat, spot))
                for _, spot in keys
                if spot.bet is not None and (seat, spot) not in violations
            )
            if wagers:
                self._wagers[seat] = wagers
                out.append(WagersLocked(shoe, coup, seat, wagers))
            for key, text in violations.items():
                self._refused[key] = text
                cents = self.cents(*key)
                out.append(WagerRefused(shoe, coup, seat, key[1], cents, text))
                self._alarm(seat, f"SEAT {seat} {text}: REFUSED, RETURN {money_text(cents)}")
            out += self._leave_tick(seat, bool(keys))
        self.phase = Phase.LOCKED
        self._violation_cache = {}
        return out

    def _leave_tick(self, seat: int, playing: bool) -> list[Notice]:
        if playing:
            self._empty_locks.pop(seat, None)
            return []
        count = self._empty_locks.get(seat, 0) + 1
        self._empty_locks[seat] = count
        owed = self.ledger.owed(seat)
        if count >= self.rules.leave_after_coups and owed and seat not in self._due:
            self._due[seat] = BoxWhy.SEAT_LEFT
            return [BoxDue(self.shoe, seat, owed, BoxWhy.SEAT_LEFT)]
        return []

    def _judge(self) -> list[Notice]:
        """Every payout check not passed is a mispay; the checks end."""
        out: list[Notice] = []
        coup = self._coup
        for key in sorted(self._checks, key=_sort_key):
            if not self._checks[key].passed:  # the spot becomes a betting spot: its seat's checks change
                self._violation_cache.pop(key[0], None)
            verdict = self._checks[key].verdict()
            if verdict is not None and coup is not None:
                kind, seen = verdict
                out.append(Mispay(coup[0], coup[1], key[0], key[1], kind, self._checks[key].target, seen))
        self._checks = {}
        return out

    def _alarm(self, seat: int, text: str) -> None:
        self._alarms.setdefault(seat, []).append(text)

    def _confirm(self, key: SpotKey) -> list[Notice]:
        del self._suspect[key]
        assert self._coup is not None
        locked = self._lock_seen.get(key, _EMPTY)[0]
        seen = self._counted(key)[0]
        shoe, coup = self._coup
        cls = PulledBet if seen < locked else PastPost
        notice = cls(shoe, coup, key[0], key[1], locked, seen)
        self._changed[key] = notice
        words = "PULLED BET" if cls is PulledBet else "PAST POST"
        label = spot_label(key[1])
        self._alarm(key[0], f"SEAT {key[0]} {label}: {words} {money_text(locked)} -> {money_text(seen)}")
        return [notice]

    def declared(self, shoe: int, coup: int, result: CoupResult) -> list[Notice]:
        """The coup is declared: settle every locked wager; the payout checks begin."""
        self._moved()
        if self.phase is not Phase.LOCKED:
            return []
        out: list[Notice] = []
        for key in list(self._suspect):
            out += self._confirm(key)
        rules = self.rules
        facts = CoupFactsOnce.of(result)
        decided: dict[Bet, tuple[Outcome, Fraction]] = {}  # each bet's outcome on this coup, decided once
        for seat in sorted(self._wagers):
            settlement = settle(facts, self._wagers[seat], rules.ruleset, rules.limits, decided)
            box = self.ledger.record(seat, settlement)
            for outcome in settlement.outcomes:
                spot = Spot.of(outcome.bet)
                out.append(WagerSettled(shoe, coup, seat, outcome, box))
                now = self.cents(seat, spot)
                check = _Check(outcome, outcome.payout_cents, peak=now, last=now, start=now)
                check.update(now)
                self._checks[(seat, spot)] = check
        self._coup = (shoe, coup)
        self._lock_seen, self._wagers, self._refused, self._changed = {}, {}, {}, {}
        self.phase = Phase.PAYOUT
        return out

    def voided(self, shoe: int, coup: int) -> list[Notice]:
        """The coup is voided: the wagers unlock and stay on their spots for the redeal."""
        self._moved()
        if self.phase is not Phase.LOCKED:
            return []
        self._lock_seen, self._wagers, self._refused = {}, {}, {}
        self._suspect, self._changed, self._noted = {}, {}, set()
        self.phase = Phase.BETTING
        return []

    def shoe_ended(self, shoe: int) -> list[Notice]:
        """The shoe is over: every box owing something is due."""
        self._moved()
        self.shoe = shoe
        out: list[Notice] = []
        for seat, owed in self.ledger.balances().items():
            if owed and seat not in self._due:
                self._due[seat] = BoxWhy.SHOE_END
                out.append(BoxDue(shoe, seat, owed, BoxWhy.SHOE_END))
        if self.phase is not Phase.LOCKED:
            self.phase = Phase.COLLECTION
        return out

    def shoe_started(self, shoe: int) -> list[Notice]:
        """A new shoe: the last payout is judged, every due box closes, the alarms clear."""
        self._moved()
        out = self._judge()
        ended = self.shoe
        for seat in sorted(set(self._due) | set(self.ledger.balances())):
            out.append(self._close(ended, seat, self._due.get(seat, BoxWhy.SHOE_END)))
        self._coup = None
        self._lock_seen, self._wagers, self._refused = {}, {}, {}
        self._suspect, self._changed, self._noted = {}, {}, set()
        self._alarms, self._empty_locks = {}, {}
        self.misreads = self.ghost_reads = 0
        self.phase = Phase.BETTING
        self.shoe = shoe
        self._collected, self._due = {}, {}  # the readings (and what they count) stay: the chips are still there
        return out

    def uncollected(self) -> int:
        """What a new shoe now would close uncollected (cents): every box's owed less what was taken of it."""
        return sum(max(0, owed - self._collected.get(seat, 0)) for seat, owed in self.ledger.balances().items())

    def _close(self, shoe: int, seat: int, why: BoxWhy) -> BoxClosed:
        owed = self.ledger.collect(seat)
        collected = self._collected.pop(seat, 0)
        self._due.pop(seat, None)
        return BoxClosed(shoe, seat, owed, collected, why)

    def _commission_spot(self, seat: int, was: int, now: int) -> list[Notice]:
        why = self._due.get(seat)
        if why is None or now or not was:
            return []
        collected = self._collected.get(seat, 0) + was
        self._collected[seat] = collected
        out: list[Notice] = [CommissionTaken(self.shoe, seat, was, collected)]
        if why is BoxWhy.SEAT_LEFT:
            out.append(self._close(self.shoe, seat, why))
        return out

    # -- the view -----------------------------------------------------------------------------------------
    def paying(self) -> bool:
        """Whether a spot still waits for the dealer: a winner not yet paid or a loser not yet taken (its payout
        check not passed) while the payout is on, or a due commission box not yet collected. The chip tray is counted
        only when nothing does (:class:`~controller.game.tray.TrayBook`)."""
        if self.phase in (Phase.PAYOUT, Phase.COLLECTION) and any(
            not c.passed and c.outcome.outcome is not Outcome.PUSH for c in self._checks.values()
        ):
            return True  # a push waits for nobody: the player may take it back or leave it to ride
        return any(seat not in self._collected for seat in self._due)

    def view(self) -> MoneyView:
        """The money now (cached until the book changes: the table asks for it at every input)."""
        if self._view is None:
            self._view = self._build_view()
        return self._view

    def _build_view(self) -> MoneyView:
        # Only the spots that can show anything: those holding chips, locked, refused, changed or checked,
        # and the commission spots of the boxes due.
        keys: set[SpotKey] = set(self._readings)
        keys.update(self._checks)
        if self.phase is Phase.LOCKED:
            keys.update(self._lock_seen, self._refused, self._changed, self._suspect)
        keys.update((seat, Spot.COMMISSION) for seat in self._due)
        by_seat: dict[int, list[SpotKey]] = {}
        for key in sorted(keys, key=_sort_key):
            by_seat.setdefault(key[0], []).append(key)
        seats: list[SeatView] = []
        for seat in sorted(set(by_seat) | set(self._alarms) | set(self.ledger.balances())):
            mine = by_seat.get(seat, [])
            spots = tuple(v for v in (self._spot_view(seat, spot) for _, spot in mine) if v is not None)
            alarms = tuple(self._chip_alarms(mine)) + tuple(self._alarms.get(seat, ()))
            box = self.ledger.owed(seat)
            if spots or alarms or box:
                seats.append(SeatView(seat, spots, box, alarms))
        return MoneyView(self.phase, tuple(seats), self.reader_up, self.misreads, self.ghost_reads)

    def _chip_alarms(self, keys: list[SpotKey]) -> list[str]:
        out = []
        for seat, spot in keys:
            for chip in self._readings.get((seat, spot), ()):
                if not chip.counts:
                    out.append(ChipAlarm(seat, spot, chip).text)
        return out

    def _spot_view(self, seat: int, spot: Spot) -> SpotView | None:
        key = (seat, spot)
        cents = self.cents(seat, spot)
        if spot is Spot.COMMISSION:
            if seat in self._due:
                owed = self.ledger.owed(seat)
                return SpotView(
                    seat, spot, SpotState.COLLECT, cents, target_cents=owed, text=f"COLLECT {money_text(owed)}"
                )
            return SpotView(seat, spot, SpotState.OPEN, cents) if cents else None
        if self.phase is Phase.LOCKED:
            if key in self._changed:
                n = self._changed[key]
                words = "PULLED BET" if isinstance(n, PulledBet) else "PAST POST"
                return SpotView(seat, spot, SpotState.CHANGED, cents, n.locked_cents, text=words)
            if key in self._refused:
                return SpotView(seat, spot, SpotState.REFUSED, cents, text=f"{self._refused[key]}: RETURN")
            if key in self._lock_seen or key in self._suspect:
                locked = self._lock_seen.get(key, _EMPTY)[0]
                return SpotView(seat, spot, SpotState.LOCKED, cents, locked)
            return None if not cents else SpotView(seat, spot, SpotState.LOCKED, cents, 0)
        check = self._checks.get(key)
        if check is not None:
            stake = check.outcome.stake_cents
            if not check.passed:
                if check.outcome.outcome is Outcome.LOSE:
                    return SpotView(seat, spot, SpotState.TAKE, cents, stake, 0, take_cents=cents, text="TAKE")
                state = SpotState.PAY if check.outcome.outcome is Outcome.WIN else SpotState.PUSH
                pay, take = max(0, check.target - cents), max(0, cents - check.target)
                text = f"PAY {money_text(pay)}" if pay else (f"TAKE BACK {money_text(take)}" if take else "")
                return SpotView(seat, spot, state, cents, stake, check.target, pay, take, text)
            if check.outcome.outcome is not Outcome.LOSE and cents == check.target:
                return SpotView(seat, spot, SpotState.PAID, cents, stake, check.target, text="PAID")
        if not cents:
            return None
        problem = self._violations(seat).get(key)
        if problem is not None:
            return SpotView(seat, spot, SpotState.VIOLATION, cents, text=problem)
        return SpotView(seat, spot, SpotState.OPEN, cents)


def _mispay_text(n: Mispay) -> str:
    words = {MispayKind.UNDERPAY: "UNDERPAID", MispayKind.OVERPAY: "OVERPAID", MispayKind.LOSER_LEFT: "LOSER LEFT"}
    return (
        f"SEAT {n.seat} {spot_label(n.spot)}: {words[n.kind]} "
        f"(EXPECTED {money_text(n.expected_cents)}, SEEN {money_text(n.seen_cents)})"
    )
