"""The money at the simulated table: players place stacks on their spots, the dealer pays, and their faults.

:class:`MoneyTable` is the layout's bet spots with the chips on them, and the people who move the chips.
The simulator core (:mod:`hw_sim.core`) tells it where the coup is, and it answers with *steps*: spot
changes that the core carries out at the dealer's pace, between the dealer's card and button actions:

* **the coup opens** (before its first card: the table PROMPTs DEAL, or the self dealer is about to deal):
  the players place their wagers, each a stack of chips from the rack (:mod:`hw_sim.chipset`), and the
  core deals only once they are down;
* **the first card** locks the wagers (the spots' values then, chips in play only); a wager the table's
  rules refuse (a ``--bets`` script may place one) is handed back to the player right after the lock;
  nothing touches a locked spot unless a fault says so (``late_bet``, ``pulled_bet``: the dealer puts the
  spot back as it was locked, a winner in the same move as its payout);
* **the declare**: every seat's wagers are settled with :func:`controller.game.settlement.settle`; the
  dealer, seat by seat, takes each losing spot (empties it) and pays each winner (adds the win, less the
  commission where the ruleset deducts it at payout), then the players collect their spots; commission
  collected at the shoe's end goes into the seat's box (:class:`~controller.game.settlement.CommissionLedger`);
* **a void** (a halted coup): the wagers unlock and stay on their spots (a spot changed after the lock put
  back first): they are the redeal's wagers;
* **the players' cards** (``--players N``; ``--uncarded K`` leaves the last K without one): a carded player
  inserts a player's card in the seat's card reader on sitting down (before the first wager) and takes it
  out on leaving (the leaver, before the coup it no longer bets); a seat whose player left has a new player,
  with another card, at the next shoe. Each is a ``player_in`` / ``player_out`` truth line, with the card's
  UID as the table's ``player_ref``, and a card read (:class:`CardRead`) for the reader;
* **a player buys in** (``--players``): before placing the coup's wagers, a player with no chips in front yet
  (sitting down) or too few for them changes cash at the seat (:class:`~hw_sim.players.Bankrolls`): a
  ``buy_in`` line of the truth log, and a :class:`~controller.game.cash.BuyIn` for the table
  (:meth:`MoneyTable.take_buy_ins`; the command line sends it on the table's ``money.sock``);
* **a seat leaves** (its wager spots empty at the lock of ``leave_after_coups`` declared coups running,
  after it has wagered) and
  **the shoe ends**: the player puts the box's amount on the seat's commission spot and the dealer takes it.

Every spot change is a ``spot`` line of the truth log, and with a bet-spot reader attached each becomes a
*read* (:class:`SpotRead`, what the reader reports and when), where the reader's faults show: a read
missing a chip, a read twice, a chip also read on the neighbouring spot. Every wager placed, refused,
locked and paid, every commission collected and every fault injected is in the truth log with what the
table should see (docs/simulator.md).

Pure and sans-I/O like the core: an injected clock, seeded generators (the players', and the money
faults' own, so switching a money fault on changes neither the cards nor the players' wagers).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING

from controller.game.approvals import MAX_WRONG_PINS
from controller.game.cards import RANKS, Card
from controller.game.cash import BuyIn, Tender
from controller.game.chips import ChipRegistry, format_uid
from controller.game.composition import Composition
from controller.game.coup import Coup
from controller.game.errors import RulesViolation
from controller.game.payouts import Outcome
from controller.game.rules import COMMISSION, Bet, Ruleset
from controller.game.settlement import CommissionLedger, Settlement, TableLimits, Wager, settle
from controller.game.wagers import MAX_SEATS, ApprovalView, Spot
from hw_sim.chipset import DENOMINATIONS, ChipSet, ForeignKind, chips_for
from hw_sim.faults import Fault, FaultPlan, ScriptedFault
from hw_sim.players import Bankrolls, Counting, Players, ScriptedBets, ScriptedWagers, refusals
from hw_sim.truth import TruthLog

if TYPE_CHECKING:
    from hw_sim.tray import ChipTray

__all__ = [
    "MAX_READS",
    "CardRead",
    "MoneyConfig",
    "MoneyConfigError",
    "MoneyTable",
    "ReadKind",
    "SplitCash",
    "SpotRead",
]

#: Reads waiting for the reader device at most (older ones are dropped and counted: it is not draining).
MAX_READS = 4096
#: The wager spots in the layout's order (a ghost read lands on the next one round the seat).
_WAGER_SPOTS: tuple[Spot, ...] = tuple(s for s in Spot if s is not Spot.COMMISSION)


class MoneyConfigError(ValueError):
    """A money setting that cannot work; ``key`` names it (the option without its dashes)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


@dataclass(frozen=True)
class SplitCash:
    """The split-cash player (``--split-cash UID:DOLLARS:COUP``): a carded player, card ``uid``, who sits down on
    the seat after the ``--players``' at coup ``coup`` of the first shoe, buys in ``cents`` in cash at once and
    bets the table minimum on Banker every coup after. Run at several tables with the same card, it is the player
    who splits their cash across tables in one gaming day (the floor's cash log adds it up: docs/floor.md)."""

    uid: int
    cents: int
    coup: int


@dataclass(frozen=True)
class MoneyConfig:
    """The players and the house: how many players (or scripted wagers), the game, limits and seats."""

    players: int = 0
    bets: tuple[ScriptedWagers, ...] | None = None
    rules: Ruleset = COMMISSION
    limits: TableLimits = field(default_factory=TableLimits)
    seats: int = 9
    #: A seat whose spots stay empty this many declared coups has left (the table's ``leave_after_coups``).
    leave_after_coups: int = 3
    #: A faulty read is put right by the next read this many seconds later.
    reread_after: float = 0.25
    #: One of the players bets a side wager with the count (hw_sim/players.py, ``--counter``).
    counter: Counting | None = None
    #: The last this many of the ``players`` have no player's card (``--uncarded``): not rated.
    uncarded: int = 0
    #: A dealer's badge at the dealer's position, the dealer swapped for the next every this many coups
    #: (``--dealer-swap``; 0: no staff badges). The dealers are :func:`staff` of the seed.
    dealer_swap: int = 0
    #: The split-cash player (None: none).
    split_cash: SplitCash | None = None

    @property
    def split_seat(self) -> int:
        """The split-cash player's seat: the one after the ``players``'."""
        return self.players + 1

    def __post_init__(self) -> None:
        if not 1 <= self.seats <= MAX_SEATS:
            raise MoneyConfigError("seats", f"1-{MAX_SEATS}, not {self.seats}")
        if self.bets is None and not 1 <= self.players <= self.seats:
            raise MoneyConfigError("players", f"1-{self.seats} (one a seat), not {self.players}")
        if self.bets is not None and self.players:
            raise MoneyConfigError("players", "players bet by strategy or by --bets, not both")
        for b in self.bets or ():
            if b.seat > self.seats:
                raise MoneyConfigError("bets", f"shoe {b.shoe} coup {b.coup}: seat {b.seat} beyond {self.seats} seats")
            for w in b.wagers:
                if w.amount_cents % DENOMINATIONS[-1]:
                    raise MoneyConfigError(
                        "bets", f"shoe {b.shoe} coup {b.coup} seat {b.seat}: {w.bet.value} cannot be made of chips"
                    )
        if self.limits.unit_cents % 500:
            raise MoneyConfigError("limits", "the simulator's chips pay a table unit of $5 or a multiple of it")
        if self.leave_after_coups < 1:
            raise MoneyConfigError("leave_after_coups", "at least 1")
        if self.reread_after <= 0:
            raise MoneyConfigError("reread_after", "must be positive")
        if self.counter is not None and (self.bets is not None or not 1 <= self.counter.seat <= self.players):
            seat = self.counter.seat
            raise MoneyConfigError("counter", f"the counter sits on one of the --players' seats, not {seat}")
        if self.dealer_swap < 0:
            raise MoneyConfigError("dealer_swap", f"0 (no badges) or a number of coups, not {self.dealer_swap}")
        if not 0 <= self.uncarded <= self.players:
            raise MoneyConfigError("uncarded", f"0-{self.players} (of the --players), not {self.uncarded}")
        if self.counter is not None and not self.rules.offers(self.counter.bet):
            raise MoneyConfigError("counter", f"the table does not offer {self.counter.bet.value}")
        s = self.split_cash
        if s is not None:
            if self.bets is not None or self.split_seat > self.seats:
                raise MoneyConfigError("split_cash", f"needs --players and a seat after theirs (at most {self.seats})")
            if not 0 < s.uid < 1 << 64 or s.cents < self.limits.minimum_cents or s.cents % DENOMINATIONS[-1]:
                raise MoneyConfigError("split_cash", "a card UID, and cash of at least the table minimum in chips")
            if s.coup < 1:
                raise MoneyConfigError("split_cash", f"the coup is 1 or later, not {s.coup}")


class ReadKind(Enum):
    """What a read does at the reader (:mod:`hw_sim.reader_feed` carries it out)."""

    PLACE = "place"  # the spot now holds ``uids``: the reader's truth, reported
    REPORT = "report"  # a faulty report of ``uids`` (a dropped read), the reader's truth unchanged
    GHOST = "ghost"  # the reader reports its truth of the spot plus the chips ``uids`` of a neighbour
    REFRESH = "refresh"  # the reader reports its truth of the spot again (a duplicate, a ghost put right)
    SYNC = "sync"  # after a dropped read: the reader reads the spot as it holds now (``uids`` then)


@dataclass(frozen=True, slots=True)
class SpotRead:
    """What the bet-spot reader reports of one spot, and when (``at``, the core's clock)."""

    at: float
    seat: int
    spot: Spot
    uids: tuple[int, ...]
    kind: ReadKind = ReadKind.PLACE


#: How many dealers take turns at the table with ``--dealer-swap``.
DEALERS = 3


def staff(seed: int) -> tuple[tuple[str, int], ...]:
    """The simulated table's dealers: ``(staff id, badge UID)`` each (7-byte UIDs, from the seed); what the floor's
    registry must hold for their badges to sign in (``shoe-sim --staff-out``)."""
    return tuple(
        (f"D{i + 1}", random.Random(f"{seed}:badge:{i}").getrandbits(52) | (0x04 << 48)) for i in range(DEALERS)
    )


#: The simulated table's approvers with ``--dealer-swap``: a supervisor, and a pit manager who approves when the
#: supervisor is locked out (the ``wrong_pin`` fault).
APPROVERS = (("S1", "supervisor"), ("P1", "pit_manager"))
#: How long after the approval panel shows the supervisor's badge is at the dealer's position, and between
#: the steps (the dealer's badge out and back, the supervisor's in and out, each PIN typed).
APPROVER_STEP = 0.2


def approvers(seed: int) -> tuple[tuple[str, str, int, str], ...]:
    """The simulated table's approvers: ``(staff id, role, badge UID, PIN)`` each, from the seed (what the floor's
    registry must hold for them to approve: ``shoe-sim --staff-out`` writes them with their PINs)."""
    out = []
    for i, (staff_id, role) in enumerate(APPROVERS):
        rng = random.Random(f"{seed}:approver:{i}")
        out.append((staff_id, role, rng.getrandbits(52) | (0x04 << 48), f"{rng.randrange(10**6):06d}"))
    return tuple(out)


def approve_line(pin: str) -> bytes:
    """A supervisor's PIN as the table's ``money.sock`` takes it (one line)."""
    return b'{"t":"approve","pin":"%s"}\n' % pin.encode()  # not encode_pin: the feed needs cryptography


def key_line(card: str) -> bytes:
    """A card keyed on the dealer screen (its token) as the table's ``money.sock`` takes it (one line)."""
    return b'{"t":"key","card":"%s"}\n' % card.encode()  # not encode_key, for the same reason


@dataclass(frozen=True, slots=True)
class CardRead:
    """What the card reader of seat ``seat`` holds from ``at`` on: the card ``uid``, or none (seat 0: the dealer's
    position, a staff badge)."""

    at: float
    seat: int
    uid: int | None


Step = Callable[[float], None]
_RANK_INDEX = {rank: i for i, rank in enumerate(RANKS)}


def _hex(uids: tuple[int, ...] | list[int]) -> list[str]:
    return [format_uid(u) for u in uids]


class MoneyTable:
    """The spots, the players and the dealer's hands. The core calls the coup hooks and runs :meth:`step`
    while :attr:`busy`; a reader device takes :meth:`due_reads`."""

    def __init__(
        self,
        config: MoneyConfig,
        faults: FaultPlan,
        seed: int,
        truth: TruthLog,
        *,
        keep_reads: bool = False,
        reread_after: float | None = None,
        decks: int = 8,
    ) -> None:
        self.config = config
        self.decks = decks
        #: The cards the players have seen leave the shoe this shoe, by rank left (a counter prices them).
        self.seen = [4 * decks] * len(RANKS)
        #: A faulty read is put right this long after (the core makes it shorter than its pace).
        self.reread_after = config.reread_after if reread_after is None else reread_after
        self.rules = config.rules
        self.limits = config.limits
        self.truth = truth
        self.chips = ChipSet()
        self.registry: ChipRegistry = self.chips.registry()
        self.bettors: Players | ScriptedBets = (
            ScriptedBets(config.bets, seats=config.seats)
            if config.bets is not None
            else Players(config.players, seed, config.rules, config.limits, seats=config.seats, counter=config.counter)
        )
        #: The chips in front of the players and their buy-ins (None: a ``--bets`` script, which buys in nothing).
        self.bankrolls: Bankrolls | None = (
            None if config.bets is not None else Bankrolls(seed, config.limits.minimum_cents)
        )
        self._buy_ins: list[BuyIn] = []
        self._rates = {f: faults.rate(f) for f in Fault if faults.rate(f) > 0}
        self._script: list[ScriptedFault] = list(faults.scripted_money())
        self._fault_rng = random.Random(f"{seed}:money-faults")
        self.keep_reads = keep_reads
        self._reads: list[tuple[float, int, SpotRead | CardRead]] = []  # a heap: the reader reports them in time order
        self._read_numbers = itertools.count()
        self.reads_dropped = 0
        self.spots: dict[tuple[int, Spot], tuple[int, ...]] = {}
        self._steps: deque[Step] = deque()
        self.ledger = CommissionLedger()
        self.shoe = 0
        self.coup = 0
        self._opened: tuple[int, int] | None = None
        self._cards = Coup()
        self._locked: dict[int, tuple[Wager, ...]] = {}
        self._locked_stacks: dict[tuple[int, Spot], tuple[int, ...]] = {}
        self._changed: set[tuple[int, Spot]] = set()
        self._left_losers: set[tuple[int, Spot]] = set()
        self._seated: set[int] = set()
        self._empty_coups: dict[int, int] = {}
        self._closed_shoe = 0
        self._redeal = False
        self._occupied: set[int] = set()  # seats with chips on a wager spot at the lock
        self._seed = seed
        self.cards: dict[int, int] = {}  # the card in each seat's card reader
        self.staff = staff(seed)  # the dealers and their badges (--dealer-swap)
        self._dealer: int | None = None  # the dealer on duty (an index of staff)
        self._dealt = 0  # coups the dealer on duty has opened
        self._unknown_badges = 0
        self.approvers = approvers(seed)  # the supervisor and the pit manager (--dealer-swap)
        self._locked_out: set[str] = set()  # approvers the table locked out (their wrong PINs)
        self._approval_step: tuple[object, ...] | None = None  # the approval's step last answered
        self._wrong_pins_left = 0  # the wrong_pin fault: wrong PINs still to type
        self._pins: list[bytes] = []  # approve lines for the table's money.sock
        self._visits: dict[int, int] = {}  # the visits each seat has had (a new player, a new card)
        self._cards_left: set[int] = set()  # seats whose leaving player left their card in the reader (card_left)
        #: The dealer's chip tray (hw_sim/tray.py; the core sets it): losers go into it, payouts and buy-ins come
        #: out of it. None: the payouts come from the rack, as ever.
        self.tray: ChipTray | None = None
        self._purses: dict[int, list[int]] = {}  # chips a player bought from the tray, not yet wagered
        self._pause = 0.0  # the dealer holds still this long after the step just made (the tray's count)

    # -- the core's side -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Spot changes are waiting to be made (the core makes them before its next action)."""
        return bool(self._steps)

    def step(self, now: float) -> None:
        """Make the next waiting spot change(s)."""
        if self._steps:
            self._steps.popleft()(now)

    def take_pause(self) -> float:
        """How long the dealer holds still after the step just made (0: the dealer's pace; with a tray, the pause
        after each coup's payout)."""
        out, self._pause = self._pause, 0.0
        return out

    def shoe_started(self, shoe: int) -> None:
        self.shoe = shoe
        if self.tray is not None:
            self.tray.shoe, self.tray.coup = shoe, 0
        self.seen = [4 * self.decks] * len(RANKS)
        self.coup = 0
        self._opened = None
        self._cards = Coup()
        self._seated.clear()
        self._empty_coups.clear()

    def open_coup(self, coup: int, now: float) -> bool:
        """The coup is about to be dealt: the players place their wagers. True if there are chips to place
        first (the core waits for :attr:`busy` to clear before the first card)."""
        if self._opened == (self.shoe, coup):
            return False
        self._opened = (self.shoe, coup)
        self.coup = coup
        if self.tray is not None:
            self.tray.coup = coup
        self._cards = Coup()
        if self._redeal:  # after a void the stacks stayed on their spots: they are this coup's wagers
            self._redeal = False
            intended: dict[int, tuple[Wager, ...]] = {}
            if not self.spots:
                return False
        else:
            self._dealer_badge(now)
            if isinstance(self.bettors, Players):
                self.bettors.new_shoe(self.shoe)
                self._seat_cards(now)
            if isinstance(self.bettors, Players) and self.bettors.counter is not None:
                from controller.game.edges import price  # a counter's alone: the odds engine (numpy) is heavy

                intended = self.bettors.wagers(self.shoe, coup, price(Composition(tuple(self.seen)), self.rules))
            else:
                intended = self.bettors.wagers(self.shoe, coup)
            self._split_player(intended, now)
            if not intended and not self._left_losers:
                return False
        self._steps.append(partial(self._place, intended))
        return True

    def on_coup_card(self, card: Card, now: float) -> None:
        """A card of the coup left the shoe (not a burn or a misdraw). The first one locks the wagers."""
        first = self._cards.cards_dealt == 0
        i = _RANK_INDEX[card.rank]
        self.seen[i] = max(0, self.seen[i] - 1)
        with contextlib.suppress(RulesViolation):  # more cards than a coup has (the table halts it: a void follows)
            self._cards.deal(card)
        if first and self._opened == (self.shoe, self.coup):
            self._lock(now)

    def declared(self, now: float) -> None:
        """DECLARE was pressed (not early): settle the coup and queue the payout."""
        if self._opened != (self.shoe, self.coup) or not self._cards.complete:
            return
        self._opened = None
        result = self._cards.result()
        self.truth.write(
            "settle",
            now,
            shoe=self.shoe,
            coup=self.coup,
            player=[c.token for c in result.player],
            banker=[c.token for c in result.banker],
        )
        for seat, wagers in sorted(self._locked.items()):
            settlement = settle(result, wagers, self.rules, self.limits)
            self.ledger.record(seat, settlement)
            if self.bankrolls is not None:
                self.bankrolls.won(seat, sum(o.net_cents for o in settlement.outcomes))
            self._steps.append(partial(self._pay_seat, seat, settlement))
        if self._locked or self._left_losers:
            self._steps.append(self._collect)
        self._count_empty_seats(now)
        self._locked = {}
        if self.tray is not None:
            self._steps.append(self._tray_still)

    def _tray_still(self, now: float) -> None:
        """The payout is over: the dealer holds still for the table to count the tray."""
        assert self.tray is not None
        self._pause = self.tray.paid(now)

    def voided(self, now: float) -> None:
        """The coup was voided: the wagers unlock and stay on their spots for the redeal (the next coup)."""
        if self._opened is None:
            return
        self.truth.write("void", now, shoe=self.shoe, coup=self.coup)
        self._opened = None
        self._redeal = True
        for key in sorted(self._changed, key=lambda k: (k[0], k[1].value)):  # the dealer puts them right
            self._steps.append(partial(self._restore, key))
        self._locked = {}

    def shoe_ended(self, now: float) -> bool:
        """The shoe is over: every box is asked for. True if there are chips to move first."""
        if self._closed_shoe == self.shoe:
            return False
        self._closed_shoe = self.shoe
        owed = self.ledger.close_shoe()
        for seat, cents in owed.items():
            self._steps.append(partial(self._pay_box, seat, cents, "shoe_end"))
        return bool(owed)

    def due_reads(self, now: float) -> list[SpotRead | CardRead]:
        """The reads the reader reports by ``now``, oldest first."""
        out: list[SpotRead | CardRead] = []
        while self._reads and self._reads[0][0] <= now:
            out.append(heapq.heappop(self._reads)[2])
        return out

    def next_read_at(self) -> float | None:
        return self._reads[0][0] if self._reads else None

    def value(self, seat: int, spot: Spot) -> int:
        """What a spot counts for at the table now (its chips in play)."""
        return self.registry.resolve_all(list(self.spots.get((seat, spot), ()))).cents

    # -- the people ----------------------------------------------------------------------------------

    def approval_shown(self, approval: ApprovalView | None, now: float) -> None:
        """What the dealer screen shows of a pending approval (the money line's ``approval``; None: nothing): the
        supervisor answers it. A badge is due: the dealer takes theirs out of the dealer's position's reader, the
        supervisor (the pit manager when the supervisor is locked out) shows theirs, and the dealer's goes back.
        The PIN is due: the approver types it (a wrong one three times for the ``wrong_pin`` fault: locked out,
        and the pit manager comes). Each step answered once; truth lines ``approval_badge``, ``approval_pin``."""
        if approval is None or not self.config.dealer_swap:
            self._approval_step = None
            return
        step = (approval.shoe, approval.coup, approval.approver, approval.said)
        if step == self._approval_step:
            return
        self._approval_step = step
        approver = approval.approver
        if approver is None:
            who = next((a for a in self.approvers if a[0] not in self._locked_out), None)
            if who is None:
                return  # everyone locked out: the void waits (a pit manager on the floor resets a PIN)
            staff_id, _role, uid, _pin = who
            dealer = None if self._dealer is None else self.staff[self._dealer][1]
            self.truth.write("approval_badge", now, shoe=self.shoe, coup=self.coup, staff_id=staff_id)
            at = now + APPROVER_STEP
            reads = [
                CardRead(at, 0, None),
                CardRead(at + APPROVER_STEP, 0, uid),
                CardRead(at + 2 * APPROVER_STEP, 0, None),
            ]
            if dealer is not None:
                reads.append(CardRead(at + 3 * APPROVER_STEP, 0, dealer))
            self._queue(*reads)
            if staff_id == "S1" and self._fault(Fault.WRONG_PIN, 0):
                self._wrong_pins_left = MAX_WRONG_PINS
                self.truth.write(
                    "fault", now, kind=Fault.WRONG_PIN.value, shoe=self.shoe, coup=self.coup, staff_id=staff_id
                )
            return
        who = next((a for a in self.approvers if a[0] == approver), None)
        if who is None:
            return  # not one of ours
        staff_id, _role, _uid, pin = who
        right = not (staff_id == "S1" and self._wrong_pins_left > 0)
        if not right:
            self._wrong_pins_left -= 1
            pin = f"{(int(pin) + 1) % 10**6:06d}"
            if self._wrong_pins_left == 0:  # the last wrong PIN the table allows: it locks them out
                self._locked_out.add(staff_id)
        self.truth.write("approval_pin", now, shoe=self.shoe, coup=self.coup, staff_id=staff_id, right=right)
        self._pins.append(approve_line(pin))

    def take_pins(self) -> list[bytes]:
        """The supervisor's ``approve`` lines since the last call, in order (the command line sends them)."""
        out, self._pins = self._pins, []
        return out

    def take_buy_ins(self) -> list[BuyIn]:
        """The buy-ins made since the last call, in order (for the table: the command line sends them)."""
        out, self._buy_ins = self._buy_ins, []
        return out

    def _buy_in(self, seat: int, wagers: tuple[Wager, ...], now: float) -> None:
        """Before the seat's wagers go down: the player buys in with cash if the chips in front will not do (the
        dealer enters it for the seat's player: the card in the seat's reader, if any)."""
        if self.bankrolls is None:
            return
        cents = self.bankrolls.need(seat, sum(w.amount_cents for w in wagers))
        if cents:
            card = self.cards.get(seat)
            buy_in = BuyIn(seat, cents, Tender.CASH, None if card is None else format_uid(card))
            self._buy_ins.append(buy_in)
            fields = {"shoe": self.shoe, "coup": self.coup, "seat": seat, "cents": cents}
            self.truth.write("buy_in", now, **fields, tender=buy_in.tender.value, player_ref=buy_in.player_ref)
            self._sold(seat, cents, now)

    def _sold(self, seat: int, cents: int, now: float) -> None:
        """With a tray: the chips of a buy-in come out of it into the player's stack (wagered first)."""
        if self.tray is not None:
            self._purses.setdefault(seat, []).extend(self.tray.sell(cents, now, seat=seat))

    def _stack(self, seat: int, cents: int) -> tuple[int, ...]:
        """A wager's stack: the fewest chips that make it, the player's chips bought from the tray first (without
        a tray, every chip from the rack: the same denominations either way)."""
        purse = self._purses.get(seat)
        if not purse:
            return self.chips.take(cents)
        out: list[int] = []
        for d in chips_for(cents):
            uid = next((u for u in purse if self.chips.denomination(u) == d), None)
            if uid is None:
                out.append(self.chips.one(d))
            else:
                purse.remove(uid)
                out.append(uid)
        return tuple(out)

    def _place(self, intended: dict[int, tuple[Wager, ...]], now: float) -> None:
        for seat, wagers in intended.items():
            self._buy_in(seat, wagers, now)
            for w in wagers:
                spot = Spot.of(w.bet)
                stack = self._stack(seat, w.amount_cents)
                if self._fault(Fault.UNKNOWN_CHIP, seat):
                    kind = self._fault_rng.choice(tuple(ForeignKind))
                    uid = self.chips.foreign(kind, self._fault_rng)
                    stack += (uid,)
                    self._write_fault(
                        Fault.UNKNOWN_CHIP,
                        seat,
                        spot,
                        now,
                        chip=format_uid(uid),
                        status=kind.value,
                        expect="alarm naming the seat and spot; the chip does not count towards the wager",
                    )
                before = self.spots.get((seat, spot), ())  # a loser the dealer left: the player adds to it
                self._set(seat, spot, before + stack, now, "bet")
        self._left_losers.clear()
        for seat, placed in self._on_spots().items():
            _kept, refused = refusals(placed, self.limits, self.rules)
            for w in placed:
                fields: dict[str, object] = {"shoe": self.shoe, "coup": self.coup, "seat": seat, "bet": w.bet.value}
                fields["stake"] = w.amount_cents
                if w.bet in refused:
                    fields["violation"] = refused[w.bet]
                self.truth.write("wager", now, **fields)

    def _seat_cards(self, now: float) -> None:
        """Before the coup's wagers: a carded player who sits down inserts a card, one who has left takes it
        out (the seat's next player has a card of their own)."""
        assert isinstance(self.bettors, Players)
        seated = self.bettors.seated()
        carded = range(1, self.config.players - self.config.uncarded + 1)
        for seat in carded:
            held = self.cards.get(seat)
            if held is not None and seat not in seated and seat not in self._cards_left:
                ref = format_uid(held)
                if self._fault(Fault.CARD_LEFT, seat):  # the player goes; the card stays in the reader
                    self._cards_left.add(seat)
                    expect = f"player_out (card_left) after {self.config.leave_after_coups} locks without a wager"
                    self.truth.write("fault", now, kind=Fault.CARD_LEFT.value, shoe=self.shoe, coup=self.coup,
                                     seat=seat, player_ref=ref, expect=expect)  # fmt: skip
                    continue
                del self.cards[seat]
                self.truth.write(
                    "player_out", now, shoe=self.shoe, coup=self.coup, seat=seat, player_ref=ref, reason="card_out"
                )
                self._queue(CardRead(now, seat, None))
            elif held is not None and seat in seated and seat in self._cards_left:
                # the seat's next player: the card left there is taken out (the table ended its visit long ago)
                self._cards_left.discard(seat)
                del self.cards[seat]
                self._queue(CardRead(now, seat, None))
                self._seat_card_in(seat, now)
            elif held is None and seat in seated:
                self._seat_card_in(seat, now)

    def _seat_card_in(self, seat: int, now: float) -> None:
        """The seat's new player puts their card in its reader (a 4-byte UID drawn from the seed and the visit)."""
        visit = self._visits[seat] = self._visits.get(seat, 0) + 1
        uid = random.Random(f"{self._seed}:card:{seat}:{visit}").getrandbits(32) or 1
        self.cards[seat] = uid
        ref = format_uid(uid)
        self.truth.write("player_in", now, shoe=self.shoe, coup=self.coup, seat=seat, player_ref=ref)
        self._queue(CardRead(now, seat, uid))

    def _split_player(self, intended: dict[int, tuple[Wager, ...]], now: float) -> None:
        """The split-cash player (``split_cash``): from their coup of the first shoe, at their seat, with their
        card; the cash bought in at once on sitting down (a truth ``buy_in`` and a line for the table's
        money.sock, as the dealer screen enters it), then the table minimum on Banker each coup."""
        s = self.config.split_cash
        if s is None or self.bankrolls is None or (self.shoe, self.coup) < (1, s.coup):
            return
        seat = self.config.split_seat
        if seat not in self.cards:
            self.cards[seat] = s.uid
            ref = format_uid(s.uid)
            self.truth.write("player_in", now, shoe=self.shoe, coup=self.coup, seat=seat, player_ref=ref)
            self._queue(CardRead(now, seat, s.uid))
            self.bankrolls.bought(seat, s.cents)
            self._buy_ins.append(BuyIn(seat, s.cents, Tender.CASH, ref))
            fields = {"shoe": self.shoe, "coup": self.coup, "seat": seat, "cents": s.cents}
            self.truth.write("buy_in", now, **fields, tender=Tender.CASH.value, player_ref=ref, split_cash=True)
            self._sold(seat, s.cents, now)
        intended[seat] = (Wager(Bet.BANKER, self.limits.minimum_cents),)

    def _dealer_badge(self, now: float) -> None:
        """Before a coup's wagers (``dealer_swap``): the first dealer signs in; after ``dealer_swap`` coups the
        dealer takes the badge out and the next puts theirs in (a swap between coups); ``unknown_badge``: a badge
        not in the registry is put in and taken out, and the dealer's goes back. Each a truth line and a read of
        the dealer's position (0)."""
        swap = self.config.dealer_swap
        if not swap:
            return
        if self._dealer is None:
            self._sign_in(0, now)
            return
        self._dealt += 1
        if self._dealt >= swap:
            following = (self._dealer + 1) % len(self.staff)
            self._sign_out(now)
            self._sign_in(following, now)
        elif self._fault(Fault.UNKNOWN_BADGE, 0):
            back = self._dealer
            self._sign_out(now)
            self._unknown_badges += 1
            uid = random.Random(f"{self._seed}:unknown-badge:{self._unknown_badges}").getrandbits(52) | (0x04 << 48)
            self.truth.write("fault", now, kind=Fault.UNKNOWN_BADGE.value, shoe=self.shoe, coup=self.coup,
                             badge=format_uid(uid))  # fmt: skip
            self._queue(CardRead(now, 0, uid))
            self._queue(CardRead(now, 0, None))
            self._sign_in(back, now)

    def _sign_in(self, dealer: int, now: float) -> None:
        staff_id, uid = self.staff[dealer]
        self._dealer, self._dealt = dealer, 0
        self.truth.write("dealer_in", now, shoe=self.shoe, coup=self.coup, staff_id=staff_id, badge=format_uid(uid))
        self._queue(CardRead(now, 0, uid))

    def _sign_out(self, now: float) -> None:
        assert self._dealer is not None
        staff_id, _uid = self.staff[self._dealer]
        self.truth.write("dealer_out", now, shoe=self.shoe, coup=self.coup, staff_id=staff_id, reason="badge_out")
        self._queue(CardRead(now, 0, None))
        self._dealer = None

    def _on_spots(self) -> dict[int, list[Wager]]:
        """The wagers the spots hold now, seat by seat in the layout's order (chips in play only)."""
        out: dict[int, list[Wager]] = {}
        for seat in sorted({s for s, _ in self.spots}):
            for spot in _WAGER_SPOTS:
                cents = self.value(seat, spot)
                bet = spot.bet
                if cents and bet is not None:
                    out.setdefault(seat, []).append(Wager(bet, cents))
        return out

    def _lock(self, now: float) -> None:
        self._locked = {}
        refused: list[tuple[int, Wager]] = []
        for seat, wagers in self._on_spots().items():
            kept, why = refusals(wagers, self.limits, self.rules)
            refused += [(seat, w) for w in wagers if w.bet in why]
            if kept:
                self._locked[seat] = kept
        self._occupied = {seat for seat, spot in self.spots if spot is not Spot.COMMISSION}
        self._locked_stacks = {
            (seat, Spot.of(w.bet)): self.spots[(seat, Spot.of(w.bet))] for seat, ws in self._locked.items() for w in ws
        }
        self._changed.clear()
        self.truth.write(
            "lock",
            now,
            shoe=self.shoe,
            coup=self.coup,
            wagers=[
                {"seat": seat, "bet": w.bet.value, "stake": w.amount_cents}
                for seat, ws in sorted(self._locked.items())
                for w in ws
            ],
            refused=[{"seat": s, "bet": w.bet.value, "stake": w.amount_cents} for s, w in refused],
        )
        if refused:
            self._steps.append(partial(self._return, refused))
        for seat in sorted(self._locked):
            if self._fault(Fault.LATE_BET, seat):
                self._steps.append(partial(self._late_bet, seat))
            if self._fault(Fault.PULLED_BET, seat):
                self._steps.append(partial(self._pulled_bet, seat))

    def _return(self, refused: list[tuple[int, Wager]], now: float) -> None:
        for seat, w in refused:
            self._set(seat, Spot.of(w.bet), (), now, "refused")

    def _late_bet(self, seat: int, now: float) -> None:
        spot = self._fault_rng.choice([Spot.of(w.bet) for w in self._locked[seat]])
        before = self.value(seat, spot)
        self._set(seat, spot, self.spots.get((seat, spot), ()) + self.chips.take(self.limits.unit_cents), now, "late")
        self._changed.add((seat, spot))
        self._write_fault(
            Fault.LATE_BET,
            seat,
            spot,
            now,
            locked=before,
            seen=self.value(seat, spot),
            expect="past_post record and alarm; the wager stays as locked (the dealer takes the late chips back)",
        )

    def _pulled_bet(self, seat: int, now: float) -> None:
        spot = self._fault_rng.choice([Spot.of(w.bet) for w in self._locked[seat]])
        stack = self.spots.get((seat, spot), ())
        before = self.value(seat, spot)
        self._set(seat, spot, stack[:-1], now, "pulled")
        self._changed.add((seat, spot))
        self._write_fault(
            Fault.PULLED_BET,
            seat,
            spot,
            now,
            locked=before,
            seen=self.value(seat, spot),
            expect="pulled_bet record and alarm; the wager stays as locked (the player puts the chip back)",
        )

    def _pay_seat(self, seat: int, settlement: Settlement, now: float) -> None:
        for o in settlement.outcomes:
            spot = Spot.of(o.bet)
            key = (seat, spot)
            changed = key in self._changed
            if changed and o.outcome is not Outcome.WIN:
                self._restore(key, now)  # the late chips handed back, the pulled chip put back
            stack = self._locked_stacks[key] if changed else self.spots.get(key, ())
            self._changed.discard(key)
            fields: dict[str, object] = {
                "shoe": self.shoe,
                "coup": self.coup,
                "seat": seat,
                "bet": o.bet.value,
                "stake": o.stake_cents,
                "outcome": o.outcome.value,
                "commission": o.commission_cents - o.commission_owed_cents,
                "owed": o.commission_owed_cents,
            }
            if o.outcome is Outcome.LOSE:
                fields["expected"] = -o.stake_cents
                if self._fault(Fault.LOSER_NOT_TAKEN, seat):
                    self._left_losers.add(key)
                    fields["amount"], fields["fault"] = 0, Fault.LOSER_NOT_TAKEN.value
                    self._write_fault(
                        Fault.LOSER_NOT_TAKEN,
                        seat,
                        spot,
                        now,
                        expected=0,
                        seen=self.value(seat, spot),
                        expect="mispay record (a loser left) at the next lock, seen with the player's next stake",
                    )
                else:
                    fields["amount"] = -o.stake_cents
                    taken = self.spots.get(key, ())
                    self._set(seat, spot, (), now, "take")
                    if self.tray is not None:
                        self.tray.take(taken, now, seat=seat)
            elif o.outcome is Outcome.WIN:
                due = o.payout_cents - o.returned_cents
                fields["expected"] = due
                amount = due
                fault = None
                if self._fault(Fault.UNDERPAY, seat):
                    fault, amount = Fault.UNDERPAY, due - (500 if due > 500 else DENOMINATIONS[-1])
                elif self._fault(Fault.OVERPAY, seat):
                    fault, amount = Fault.OVERPAY, due + 500
                fields["amount"] = amount
                if fault is not None:
                    fields["fault"] = fault.value
                # on a spot changed after the lock the dealer pays the locked stack, the late chips handed back
                # (or the pulled chip put back) in the same move: the spot never drops below what it held
                paid = self.chips.take(amount) if self.tray is None else self.tray.pay(amount, now, seat=seat)
                self._set(seat, spot, stack + paid, now, "pay")
                if fault is not None:
                    self._write_fault(
                        fault,
                        seat,
                        spot,
                        now,
                        expected=o.stake_cents + due,
                        seen=self.value(seat, spot),
                        expect=f"mispay record (expected {o.stake_cents + due}, seen {self.value(seat, spot)} cents)",
                    )
            else:
                fields["expected"] = fields["amount"] = 0
            self.truth.write("payout", now, **fields)

    def _collect(self, now: float) -> None:
        """The players take their spots (winnings, pushes, stacks handed back); a loser left stays."""
        for key in sorted(self.spots, key=lambda k: (k[0], k[1].value)):
            if key not in self._left_losers:
                self._set(key[0], key[1], (), now, "collect")

    def _restore(self, key: tuple[int, Spot], now: float) -> None:
        if key in self._changed:
            self._set(key[0], key[1], self._locked_stacks[key], now, "restored")
            self._changed.discard(key)

    def _count_empty_seats(self, now: float) -> None:
        """After a declare: a seat that has wagered this shoe and whose wager spots were all empty at the lock
        this many declared coups running has left (its box is due)."""
        for seat in sorted(self._occupied):
            self._seated.add(seat)
            self._empty_coups[seat] = 0
        for seat in sorted(self._seated - self._occupied):
            self._empty_coups[seat] = self._empty_coups.get(seat, 0) + 1
            if self._empty_coups[seat] < self.config.leave_after_coups:
                continue
            self._seated.discard(seat)
            if self.bankrolls is not None:
                self.bankrolls.left(seat)
            self._purses.pop(seat, None)  # the player leaves with the chips in front
            owed = self.ledger.collect(seat)
            self.truth.write("seat_left", now, shoe=self.shoe, coup=self.coup, seat=seat, box=owed)
            if owed:
                self._steps.append(partial(self._pay_box, seat, owed, "seat_left"))

    def _pay_box(self, seat: int, cents: int, why: str, now: float) -> None:
        if self.bankrolls is not None:
            self.bankrolls.won(seat, -cents)
        self._set(seat, Spot.COMMISSION, self.chips.take(cents), now, "commission")
        self._steps.appendleft(partial(self._take_box, seat, cents, why))

    def _take_box(self, seat: int, cents: int, why: str, now: float) -> None:
        box = self.spots.get((seat, Spot.COMMISSION), ())
        self._set(seat, Spot.COMMISSION, (), now, "take")
        if self.tray is not None:
            self.tray.take(box, now, seat=seat, why="commission")
        self.truth.write("commission", now, shoe=self.shoe, seat=seat, owed=cents, collected=cents, why=why)

    # -- spots and reads -----------------------------------------------------------------------------

    def _set(self, seat: int, spot: Spot, stack: tuple[int, ...], now: float, why: str) -> None:
        key = (seat, spot)
        if stack:
            self.spots[key] = stack
        else:
            self.spots.pop(key, None)
        self.truth.write(
            "spot",
            now,
            shoe=self.shoe,
            coup=self.coup,
            seat=seat,
            spot=spot.value,
            uids=_hex(stack),
            cents=self.registry.resolve_all(list(stack)).cents,
            why=why,
        )
        self._read(seat, spot, stack, now)

    def _read(self, seat: int, spot: Spot, stack: tuple[int, ...], now: float) -> None:
        if not self.keep_reads:
            return
        later = now + self.reread_after
        if stack and self._fault(Fault.DROPPED_READ, seat):
            missing = self._fault_rng.randrange(len(stack))
            seen = stack[:missing] + stack[missing + 1 :]
            self._queue(
                SpotRead(now, seat, spot, seen, ReadKind.REPORT), SpotRead(later, seat, spot, stack, ReadKind.SYNC)
            )
            self._write_fault(
                Fault.DROPPED_READ,
                seat,
                spot,
                now,
                chip=format_uid(stack[missing]),
                seconds=self.reread_after,
                expect="a read without the chip, right again at the next read",
            )
        elif stack and self._fault(Fault.DUPLICATE_READ, seat):
            self._queue(SpotRead(now, seat, spot, stack), SpotRead(now, seat, spot, stack, ReadKind.REFRESH))
            self._write_fault(Fault.DUPLICATE_READ, seat, spot, now, expect="the same read twice: no change")
        elif stack and self._fault(Fault.GHOST_READ, seat):
            neighbour = _WAGER_SPOTS[(_WAGER_SPOTS.index(spot) + 1) % len(_WAGER_SPOTS)] if spot.bet else Spot.BANKER
            ghost = stack[self._fault_rng.randrange(len(stack))]
            theirs = self.spots.get((seat, neighbour), ())
            self._queue(
                SpotRead(now, seat, spot, stack),
                SpotRead(now, seat, neighbour, (ghost,), ReadKind.GHOST),
                SpotRead(later, seat, neighbour, theirs, ReadKind.REFRESH),
            )
            self._write_fault(
                Fault.GHOST_READ,
                seat,
                spot,
                now,
                chip=format_uid(ghost),
                neighbour=neighbour.value,
                seconds=self.reread_after,
                expect="the chip read on both spots for a moment, then on its own spot only",
            )
        else:
            self._queue(SpotRead(now, seat, spot, stack))

    def _queue(self, *reads: SpotRead | CardRead) -> None:
        if not self.keep_reads:
            return
        for r in reads:
            heapq.heappush(self._reads, (r.at, next(self._read_numbers), r))
            if len(self._reads) > MAX_READS:
                heapq.heappop(self._reads)
                self.reads_dropped += 1

    # -- faults ----------------------------------------------------------------------------------------

    def _fault(self, fault: Fault, seat: int) -> bool:
        """Whether ``fault`` happens now at ``seat``: scripted for this coup or an earlier one of this shoe where
        it found nothing to hit (a scripted fault happens once), or by its rate."""
        for s in self._script:
            at = s.at_coup or 0
            if s.fault is fault and s.shoe == self.shoe and at <= self.coup and s.seat in (None, seat):
                self._script.remove(s)
                return True
        rate = self._rates.get(fault, 0.0)
        return bool(rate) and self._fault_rng.random() < rate

    def _write_fault(self, fault: Fault, seat: int, spot: Spot, now: float, **fields: object) -> None:
        self.truth.write(
            "fault", now, kind=fault.value, shoe=self.shoe, coup=self.coup, seat=seat, spot=spot.value, **fields
        )
