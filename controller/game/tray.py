"""The chip tray, coup by coup: what the dealer's float must hold after each coup, what its reader counts, and
the variance between them.

A table with an RFID chip tray (``[tray] port``, ``docs/tray.md``) knows every chip in its tubes; a table with a
bet-spot reader knows every wager, payout and commission. So after every coup's payout the tray must hold the
tray before it, plus the losers taken and the commission collected, minus the payouts and the chips sold for
cash or a marker (:class:`TrayBook`). The tray's count is held to that once the tray is still; a difference that
a full recount confirms is a variance, named with its coup: the tray short (or over) is traced to the coup
that made it, which a count at the shift's close on paper slips cannot do.

The rules (:class:`TrayBook`'s):

* **Flows.** Each settled wager moves ``-net`` into the tray (a loser's stake in, a winner's payout out, the
  commission taken at payout kept back from it); commission collected from a seat's box (at its seat's leaving
  or the shoe's end) moves in; a buy-in for cash or a marker moves its amount out (the chips sold). A buy-in
  in chips (another table's, walked over) moves nothing of this tray. Fills and credits (the cage's) and colour
  changes are the custody records' (not yet kept by the table: their flows will join here).
* **Expected.** The expected tray is anchored at the tray's first full count (a snapshot after its link came
  up) and moves by the flows: ``expected`` after a coup is the one before plus the coup's flows. The count does
  not move it, so a theft stays short in it until the shift's close.
* **When to count.** A coup's reconciliation is due from its declare. It is made at the first moment the tray
  is still (no tube report for the loop's ``settle`` seconds: a :class:`TrayStill` input, which the loop
  journals so that a replay makes the same decisions) once the dealer has finished the payout (no spot waiting
  to be paid, taken or collected; or the next coup's bets are locked) with the tray's link up and a full count
  since it came up. A payout in progress leaves chips in the dealer's hands, so a still moment then is not
  counted. Several coups declared before the tray is still are reconciled together, under the last of them.
* **Variance.** A coup's variance is the change in ``counted - expected`` since the last reconciliation, so a
  theft shows once, in its coup, and the variances of a shift add up to the tray's discrepancy at its end. A
  non-zero variance is first held back and a full recount asked for (:attr:`TrayBook.recount_wanted`: the loop
  sends the tray COUNT_REQUEST); only when the recount, still again, shows it too is it a
  :class:`TrayVarianceFound` (the ``tray_variance`` record, the dealer screen's and the LCD's alarm). A read that
  flickered (a chip missed, a tube read twice) is gone by the recount: a :attr:`TrayBook.misreads`, not a
  variance. Every reconciliation is a :class:`TrayCounted` (the ``tray_count`` record: what ``shoe-controller
  tray`` prints).
* **Per denomination** the count is exact (each chip's tag says its value); what the coup's flows took of each
  denomination is not known to the table (the dealer chooses the chips of a payout), so a variance names the
  denominations whose count moved and by how much (``changed``), beside the exact amount.
* **Across shoes.** The tray outlives a shoe: a shoe's start record carries the book (:meth:`carried`), and a
  replay that starts at the newest shoe's start rebuilds it from there (:meth:`TrayBook.at_shoe_start`).

Pure: inputs and notices in, notices out; no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.game.cash import BuyInTaken, Tender
from controller.game.chips import Chip, ChipStatus, SpotChips, format_uid, parse_uid
from controller.game.notation import money_text
from controller.game.notice import Notice
from controller.game.wagers import CommissionTaken, WagerSettled

__all__ = [
    "MAX_TUBES",
    "Denomination",
    "TrayBook",
    "TrayCounted",
    "TrayInput",
    "TrayLink",
    "TrayLinkChanged",
    "TraySnapshot",
    "TrayStill",
    "TrayVarianceFound",
    "TrayView",
    "TubeSeen",
]

#: The most tubes a tray may have (the tray's protocol says the same: ``firmware_protocol.tray``).
MAX_TUBES = 16

#: The tenders that take chips out of the tray (the cash or the marker goes to the drop box or the pit).
SOLD = frozenset({Tender.CASH, Tender.MARKER})


# -- the inputs (table inputs: journaled and replayed) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TubeSeen:
    """What one tube holds now, its chips resolved through the chip registry (as a bet spot's)."""

    tube: int
    chips: SpotChips


@dataclass(frozen=True, slots=True)
class TraySnapshot:
    """The tray's full count: every tube that holds chips; a tube not listed is empty."""

    tubes: tuple[tuple[int, SpotChips], ...]


@dataclass(frozen=True, slots=True)
class TrayLinkChanged:
    """The tray's link came up or went down (TRAY DOWN)."""

    up: bool


@dataclass(frozen=True, slots=True)
class TrayStill:
    """The tray has been still for the loop's settle time (no tube report): the moment a count may be made."""


TrayInput = TubeSeen | TraySnapshot | TrayLinkChanged | TrayStill


# -- the notices ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Denomination:
    """A count of one denomination: ``count`` chips of ``cents`` each (a change: ``count`` may be negative)."""

    cents: int
    count: int

    def to_dict(self) -> dict[str, int]:
        return {"cents": self.cents, "count": self.count}


@dataclass(frozen=True)
class TrayCounted(Notice):
    """A coup's reconciliation: the tray's count held to the expected tray (the ``tray_count`` record).

    ``expected_cents`` and ``counted_cents`` are the whole tray; ``flow_cents`` what the coups since the last
    reconciliation moved into it (- out); ``variance_cents`` this reconciliation's own (counted - expected, less
    what it was at the last one); ``anchored``: the tray's first count, where the expected tray begins."""

    shoe: int
    coup: int
    expected_cents: int
    counted_cents: int
    flow_cents: int
    variance_cents: int
    denominations: tuple[Denomination, ...]
    anchored: bool = False


@dataclass(frozen=True)
class TrayVarianceFound(Notice):
    """A variance a recount confirmed: the tray short (``variance_cents`` < 0) or over after coup ``coup``;
    ``changed``: how each denomination's count moved since the last reconciliation."""

    shoe: int
    coup: int
    variance_cents: int
    expected_cents: int
    counted_cents: int
    changed: tuple[Denomination, ...]

    @property
    def text(self) -> str:
        word = "SHORT" if self.variance_cents < 0 else "OVER"
        return f"TRAY {word} {money_text(abs(self.variance_cents))} (COUP {self.coup})"


@dataclass(frozen=True)
class TrayLink(Notice):
    """The tray's link came up or went down."""

    up: bool


@dataclass(frozen=True, slots=True)
class TrayView:
    """What the dealer screen and the LCD show of the tray."""

    up: bool
    counted: bool
    counted_cents: int
    expected_cents: int | None
    #: The last confirmed variance's words ("TRAY SHORT $25.00 (COUP 14)"), shown until the next reconciliation.
    alarm: str | None
    misreads: int
    recounting: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "up": self.up,
            "counted": self.counted,
            "counted_cents": self.counted_cents,
            "expected_cents": self.expected_cents,
            "alarm": self.alarm,
            "misreads": self.misreads,
            "recounting": self.recounting,
        }


# -- the book ------------------------------------------------------------------------------------------------


def _denominations(chips: Sequence[Chip]) -> Counter[int]:
    return Counter(c.cents for c in chips if c.counts)


@dataclass
class TrayBook:
    """The tray of one table: its tubes as last read, the expected tray and the reconciliation due. Pure,
    deterministic; the rules are in the module's docstring."""

    link_up: bool = True
    tubes: dict[int, tuple[Chip, ...]] = field(default_factory=dict)
    #: A full count has come since the link came up: the tubes are known.
    counted: bool = False
    #: The expected tray (None until the first full count anchors it).
    expected: int | None = None
    #: counted - expected at the last reconciliation.
    discrepancy: int = 0
    #: What the coups since the last reconciliation moved (cents, + into the tray).
    flow: int = 0
    #: The last coup declared since the last reconciliation (None: none due).
    due: tuple[int, int] | None = None
    #: The count per denomination at the last reconciliation (for a variance's ``changed``).
    last_denominations: dict[int, int] = field(default_factory=dict)
    #: A variance seen and a full recount asked for; ``recounted``: that full count has come.
    recount_wanted: bool = False
    recounted: bool = False
    misreads: int = 0
    alarm: str | None = None
    #: Each tube's chips in play, summed when the tube is reported (a count then costs the tubes, not the chips).
    _tube_cents: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    _tube_denominations: dict[int, Counter[int]] = field(default_factory=dict, repr=False, compare=False)

    # -- what the table state tells it -----------------------------------------------------------------
    def settled(self, notice: WagerSettled) -> None:
        """A wager settled at the declare: ``-net`` into the tray."""
        self.flow -= notice.outcome.net_cents

    def declared(self, shoe: int, coup: int) -> None:
        """A coup was declared: its reconciliation is due."""
        self.due = (shoe, coup)

    def commission(self, notice: CommissionTaken) -> None:
        """Commission collected from a seat's box: into the tray."""
        self.flow += notice.cents

    def sold(self, notice: BuyInTaken) -> None:
        """A buy-in: chips sold for cash or a marker leave the tray (chips tendered move nothing of it)."""
        if notice.tender in SOLD:
            self.flow -= notice.cents

    # -- the tray's inputs -----------------------------------------------------------------------------
    def apply(self, event: TrayInput, *, shoe: int, coup: int, payout_over: bool) -> list[Notice]:
        """One tray input, in shoe ``shoe`` with coup ``coup`` due; ``payout_over``: no spot waits for the dealer
        (the last coup's payout is finished)."""
        if isinstance(event, TubeSeen):
            self._set(event.tube, event.chips.chips)
            return []
        if isinstance(event, TraySnapshot):
            self.tubes, self._tube_cents, self._tube_denominations = {}, {}, {}
            for tube, chips in event.tubes:
                self._set(tube, chips.chips)
            self.counted = True
            if self.recount_wanted:
                self.recounted = True
            return []
        if isinstance(event, TrayLinkChanged):
            if event.up == self.link_up:
                return []
            self.link_up = event.up
            if not event.up:
                self.counted = False  # what the tubes held while the link was down is not known: a full count
            return [TrayLink(event.up)]
        if isinstance(event, TrayStill):
            return self._still(shoe, coup, payout_over)
        raise TypeError(f"not a tray input: {event!r}")

    def _set(self, tube: int, chips: tuple[Chip, ...]) -> None:
        if chips:
            self.tubes[tube] = chips
            counts = _denominations(chips)
            self._tube_denominations[tube] = counts
            self._tube_cents[tube] = sum(cents * n for cents, n in counts.items())
        else:
            self.tubes.pop(tube, None)
            self._tube_denominations.pop(tube, None)
            self._tube_cents.pop(tube, None)

    # -- the count -------------------------------------------------------------------------------------
    @property
    def counted_cents(self) -> int:
        """The tray as its reader counts it now: the chips in play in every tube."""
        return sum(self._tube_cents.values())

    def denominations(self) -> dict[int, int]:
        """The count now per denomination (cents: chips), chips in play only."""
        out: Counter[int] = Counter()
        for counts in self._tube_denominations.values():
            out.update(counts)
        return dict(out)

    def ready(self, payout_over: bool) -> bool:
        """Whether a still moment now would be counted: the link up, the tubes known, and a reconciliation due
        with the payout over (or the expected tray still to be anchored)."""
        if not (self.link_up and self.counted):
            return False
        if self.expected is None:
            return True
        return self.due is not None and payout_over and not (self.recount_wanted and not self.recounted)

    def _still(self, shoe: int, coup_now: int, payout_over: bool) -> list[Notice]:
        if not self.ready(payout_over):
            return []
        counted = self.counted_cents
        now = self.denominations()
        if self.expected is None:  # the first full count: the expected tray begins here
            shoe_now, coup = self.due or (shoe, coup_now)
            self.expected, self.discrepancy, self.flow, self.due = counted, 0, 0, None
            self.last_denominations = now
            return [TrayCounted(shoe_now, coup, counted, counted, 0, 0, _sorted(now), anchored=True)]
        assert self.due is not None
        expected = self.expected + self.flow
        variance = (counted - expected) - self.discrepancy
        if variance and not self.recounted:
            self.recount_wanted = True  # held back until a full recount, still again, shows it too
            return []
        shoe_due, coup = self.due
        out: list[Notice] = [
            TrayCounted(shoe_due, coup, expected, counted, self.flow, variance, _sorted(now)),
        ]
        if variance:
            changed = _change(self.last_denominations, now)
            found = TrayVarianceFound(shoe_due, coup, variance, expected, counted, changed)
            self.alarm = found.text
            out.append(found)
        else:
            if self.recount_wanted:
                self.misreads += 1  # the recount did not show it: a read that flickered
            self.alarm = None
        self.expected, self.discrepancy, self.flow, self.due = expected, counted - expected, 0, None
        self.last_denominations = now
        self.recount_wanted = self.recounted = False
        return out

    # -- the view and the shoe's start --------------------------------------------------------------------
    def view(self) -> TrayView:
        expected = None if self.expected is None else self.expected + self.flow
        return TrayView(
            self.link_up,
            self.counted,
            self.counted_cents,
            expected,
            self.alarm,
            self.misreads,
            self.recount_wanted,
        )

    def carried(self) -> dict[str, Any]:
        """What a shoe's start record carries of the tray (the book is the same before and after NEW SHOE)."""
        return {
            "counted": self.counted,
            "expected_cents": self.expected,
            "discrepancy_cents": self.discrepancy,
            "flow_cents": self.flow,
            "due": None if self.due is None else list(self.due),
            "denominations": [d.to_dict() for d in _sorted(self.last_denominations)],
            "recount": self.recount_wanted,
            "recounted": self.recounted,
            "misreads": self.misreads,
            "alarm": self.alarm,
            "tubes": [
                {"tube": tube, "chips": [c.to_dict() for c in chips]} for tube, chips in sorted(self.tubes.items())
            ],
        }

    @classmethod
    def at_shoe_start(cls, carried: Mapping[str, Any] | None, *, link_up: bool = True) -> TrayBook:
        """The book a shoe's start record carried (:meth:`carried`; None: a fresh book), with the link as the
        kept ``tray_link`` input leaves it."""
        book = cls(link_up=link_up)
        if not carried:
            return book
        book.counted = bool(carried.get("counted")) and link_up
        book.expected = carried.get("expected_cents")
        book.discrepancy = int(carried.get("discrepancy_cents", 0))
        book.flow = int(carried.get("flow_cents", 0))
        due = carried.get("due")
        book.due = None if not due else (int(due[0]), int(due[1]))
        book.last_denominations = {int(d["cents"]): int(d["count"]) for d in carried.get("denominations", ())}
        book.recount_wanted = bool(carried.get("recount"))
        book.recounted = bool(carried.get("recounted"))
        book.misreads = int(carried.get("misreads", 0))
        book.alarm = carried.get("alarm")
        for tube in carried.get("tubes", ()):
            chips = tuple(
                Chip(format_uid(parse_uid(c["uid"])), int(c["cents"]), ChipStatus(c["status"])) for c in tube["chips"]
            )
            book._set(int(tube["tube"]), chips)
        return book


def _sorted(counts: Mapping[int, int]) -> tuple[Denomination, ...]:
    return tuple(Denomination(cents, n) for cents, n in sorted(counts.items(), reverse=True) if n)


def _change(before: Mapping[int, int], now: Mapping[int, int]) -> tuple[Denomination, ...]:
    return tuple(
        Denomination(cents, now.get(cents, 0) - before.get(cents, 0))
        for cents in sorted(set(before) | set(now), reverse=True)
        if now.get(cents, 0) != before.get(cents, 0)
    )
