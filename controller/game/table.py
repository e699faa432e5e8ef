"""The table's game state as a pure, event-sourced machine: inputs in, notices out.

This is what the daemon's one table loop feeds and what a restart replays from the journal. It combines
the shoe's lifecycle (:mod:`controller.game.shoe`) with the coup machine (:mod:`controller.game.coup`) and
the dealer-error procedures:

* **misdraw** - a card drawn when none is due is set aside for the dummy hand (house rule) and alarmed;
* **early declare** - declare pressed while a third card is still due is refused and alarmed;
* **unreadable** or **foreign** card during a coup halts the coup until the dealer voids it; an unreadable coup
  card may instead be **keyed** (:class:`CardKeyed`: the dealer keys the card lying face up, a supervisor
  approves, and it takes the unreadable card's place: the coup goes on). An unreadable first card locks the
  bets as a read one does: the betting window closed when it left the shoe;
* **void** (held button) voids the coup in progress; **new shoe** starts the burn procedure;
* the **cut card** ends the shoe after the current coup, or one more, by house rule;
* with a bet-spot reader (``TableRules.money``), the **money**: the reader's inputs go to the table's
  :class:`~controller.game.wagers.WagerBook`, and the coup's events drive it (the coup's first card accepted
  locks the bets, the declare settles them, a void unlocks them, the shoe's end and NEW SHOE open and close
  the commission boxes). Without one, ``money`` is None and nothing here knows a wager;
* with it, the **seats** (:class:`~controller.game.seats.SeatBook`): the players' cards at the seats' card
  readers open and end visits; at each lock a seat without a wager counts toward a card left in a reader;
* with a chip tray's reader (``TableRules.tray``), the **tray** (:class:`~controller.game.tray.TrayBook`): the
  tray's inputs go to it, and the money's notices (each wager settled, commission collected, chips sold at a
  buy-in) move the tray it must hold; once the tray is still after a payout its count is held to that.

Every transition lives in :meth:`TableState.apply`; an input the rules refuse still produces a notice
(the daemon turns it into an alarm) and never corrupts the state. What the LEDs, the shoe's PROMPT and the
displays show is a pure function of :meth:`TableState.view`, so a replayed table shows the same lamps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from controller.game.cards import Card, TwoHands
from controller.game.cash import BuyIn, BuyInTaken, buy_in_refusal
from controller.game.coup import Coup, CoupResult, Position, Winner
from controller.game.notice import Notice as Notice
from controller.game.seats import SeatBook, SeatCard
from controller.game.shoe import BurnRule, CardUse, CutCardRule, InventoryCheck, Shoe, ShoePhase
from controller.game.tray import TrayBook, TrayLinkChanged, TraySnapshot, TrayStill, TrayView, TubeSeen
from controller.game.wagers import (
    MAX_SEATS,
    CommissionTaken,
    MoneyRules,
    MoneyView,
    Phase,
    ReaderLinkChanged,
    SpotSeen,
    SpotsSnapshot,
    WagerBook,
    WagerRefused,
    WagerSettled,
    WagersLocked,
)

# ---------------------------------------------------------------------------------------------------------
# Inputs (what the journal stores and replays)


@dataclass(frozen=True, slots=True)
class CardDrawn:
    card: Card


@dataclass(frozen=True, slots=True)
class UnreadableCard:
    pass


@dataclass(frozen=True, slots=True)
class CardKeyed:
    """An unreadable coup card corrected: ``card`` as the dealer keyed it (a supervisor approved) takes the unread
    card's place in the halted coup (:attr:`TableState.keyable`)."""

    card: Card


@dataclass(frozen=True, slots=True)
class CutCardOut:
    pass


@dataclass(frozen=True, slots=True)
class DeclarePressed:
    pass


@dataclass(frozen=True, slots=True)
class VoidPressed:
    pass


@dataclass(frozen=True, slots=True)
class NewShoePressed:
    pass


@dataclass(frozen=True, slots=True)
class LinkChanged:
    up: bool


@dataclass(frozen=True, slots=True)
class ShoeRebooted:
    pass


@dataclass(frozen=True, slots=True)
class ShoeProtocol:
    """The shoe's frames carry protocol ``version``: 1 clears the alarm, anything else raises it."""

    version: int


@dataclass(frozen=True, slots=True)
class LineNoise:
    """The shoe's line turned noisy (rejected frames or lines beyond the budget) or quiet again."""

    noisy: bool


TableInput = (
    CardDrawn
    | UnreadableCard
    | CardKeyed
    | CutCardOut
    | DeclarePressed
    | VoidPressed
    | NewShoePressed
    | LinkChanged
    | ShoeRebooted
    | ShoeProtocol
    | LineNoise
    | SpotSeen
    | SpotsSnapshot
    | ReaderLinkChanged
    | SeatCard
    | TubeSeen
    | TraySnapshot
    | TrayLinkChanged
    | TrayStill
)


# ---------------------------------------------------------------------------------------------------------
# What the table shows


class Alarm(Enum):
    """Dealer errors and faults. The value is the text for the displays."""

    MISDRAW = "MISDRAW"  # a card drawn when none was due; set aside for the dummy hand
    EARLY_DECLARE = "DECLARE TOO EARLY"  # declare pressed while a third card is due
    UNREADABLE = "UNREADABLE CARD"  # a coup card passed the reader unidentified: key it or void the coup
    FOREIGN_CARD = "FOREIGN CARD"  # over-count: void the coup, call the supervisor
    FOREIGN_BURN_CARD = "FOREIGN CARD BURNED"  # over-count among the burn cards: call the supervisor
    NOTHING_TO_DECLARE = "NOTHING TO DECLARE"
    SHOE_CLOSED = "SHOE CLOSED"  # a card drawn after the shoe ended: press NEW SHOE
    UNREADABLE_EXPOSED = "BURN CARD UNREADABLE"  # the exposed burn card is unknown: press NEW SHOE again
    LINK_DOWN = "LINK DOWN"
    SHOE_REBOOTED = "SHOE REBOOTED"  # events not yet acknowledged were lost: void the coup in progress
    SHOE_PROTOCOL_V2 = "SHOE PROTOCOL V2"  # the shoe speaks another protocol version: nothing is acknowledged
    NOISY_LINE = "NOISY LINE"  # the shoe's line carries garbage beyond the budget: check cable and baud
    # Faults of the shell, never raised by TableState: the table loop merges them into the view it shows.
    JOURNAL_FULL = "JOURNAL FULL"  # the disk is full: nothing is acknowledged, the shoe holds the cards
    JOURNAL_FAULT = "JOURNAL FAULT"  # the journal file was deleted, replaced or cannot be written
    INPUT_LOST = "PRESS AGAIN"  # the loop was stalled and its full queue dropped a press (or a port report)
    UNKNOWN_BADGE = "UNKNOWN BADGE"  # a badge at the dealer's position not on the staff list: held a few seconds
    SUPERVISOR_CALLED = "CALL SUPERVISOR"  # a void waits for a supervisor's badge (controller.game.approvals)
    SUPERVISOR_PIN = "SUPERVISOR PIN"  # ... and, the badge read, for the supervisor's PIN on the dealer screen

    @property
    def halts_coup(self) -> bool:
        """While this alarm stands no card is accepted into the coup (the dealer must void)."""
        return self in (Alarm.UNREADABLE, Alarm.FOREIGN_CARD, Alarm.SHOE_REBOOTED)


#: Alarms about the line to the shoe, not the game: a new shoe keeps them.
_LINE_ALARMS = (Alarm.LINK_DOWN, Alarm.NOISY_LINE)


class Due(Enum):
    """What the dealer must do now (mirrors the shoe's PROMPT)."""

    BURN = "burn"
    DEAL = "deal"  # the first four cards of a coup
    PLAYER_THIRD = "player_third"
    BANKER_THIRD = "banker_third"
    DECLARE = "declare"  # coup complete: declare the result
    VOID = "void"  # coup halted by an unreadable or foreign card: hold VOID
    NEW_SHOE = "new_shoe"  # the shoe has ended


class Lamp(Enum):
    """The panel's lamps."""

    PLAYER_DRAW = "player_draw"
    BANKER_DRAW = "banker_draw"
    PLAYER_WIN = "player_win"
    BANKER_WIN = "banker_win"
    TIE = "tie"
    FAULT = "fault"


@dataclass(frozen=True)
class TableView(TwoHands):
    """Everything the sinks show, derived from the state. Equal states give equal views."""

    shoe_number: int
    coup_number: int  # the coup in progress (or next to open), 1-based within the shoe
    due: Due
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    result: CoupResult | None  # set once the coup is complete (before and after declare, until the next)
    alarms: tuple[Alarm, ...]
    cards_remaining: int
    cut_card_out: bool
    last_coup: bool
    burn_left: int
    dummy_hand: tuple[Card, ...]
    #: The money at the table (None: the table has no bet-spot reader).
    money: MoneyView | None = None
    #: The seats with a player's visit open, and each one's player_ref (the seats' card readers). Not in
    #: :meth:`to_dict` (the feed) yet: no screen shows it so far.
    players: tuple[tuple[int, str], ...] = ()
    #: The chip tray (None: the table has no tray reader).
    tray: TrayView | None = None

    @property
    def lamps(self) -> frozenset[Lamp]:
        """The lamps lit for this view: what is due, or the result, and FAULT for any alarm."""
        lit: set[Lamp] = set()
        if self.due is Due.PLAYER_THIRD:
            lit.add(Lamp.PLAYER_DRAW)
        elif self.due is Due.BANKER_THIRD:
            lit.add(Lamp.BANKER_DRAW)
        elif self.due is Due.DECLARE and self.result is not None:
            lit.add(_WIN_LAMP[self.result.winner])
        if self.alarms:
            lit.add(Lamp.FAULT)
        return frozenset(lit)

    def to_dict(self) -> dict[str, Any]:
        return (
            {
                "shoe": self.shoe_number,
                "coup": self.coup_number,
                "due": self.due.value,
                "player": [c.token for c in self.player],
                "banker": [c.token for c in self.banker],
                "player_total": self.player_total,
                "banker_total": self.banker_total,
                "result": self.result.to_dict() if self.result else None,
                "alarms": [a.name.lower() for a in self.alarms],
                "cards_remaining": self.cards_remaining,
                "cut_card_out": self.cut_card_out,
                "last_coup": self.last_coup,
                "burn_left": self.burn_left,
                "dummy_hand": [c.token for c in self.dummy_hand],
                "lamps": sorted(lamp.value for lamp in self.lamps),
            }
            | ({} if self.money is None else {"money": self.money.to_dict()})
            | ({} if self.tray is None else {"tray": self.tray.to_dict()})
        )


_WIN_LAMP = {Winner.PLAYER: Lamp.PLAYER_WIN, Winner.BANKER: Lamp.BANKER_WIN, Winner.TIE: Lamp.TIE}

# ---------------------------------------------------------------------------------------------------------
# Notices (what happened; the daemon journals coups and fans these out to the sinks)


@dataclass(frozen=True)
class ShoeStarted(Notice):
    shoe_number: int
    decks: int
    #: The bet spots' readings the new shoe keeps (a table with a reader: :meth:`WagerBook.carried`).
    spots: tuple[dict[str, Any], ...] = ()
    #: The cards in the seats' readers the new shoe keeps (:meth:`~controller.game.seats.SeatBook.carried`).
    players: tuple[dict[str, Any], ...] = ()
    #: The chip tray's book the new shoe keeps (a table with a tray reader: :meth:`TrayBook.carried`).
    tray: dict[str, Any] | None = None


@dataclass(frozen=True)
class BurnCard(Notice):
    card: Card | None  # None for an unreadable burn card
    exposed: bool
    burn_left: int


@dataclass(frozen=True)
class CardPlaced(Notice):
    card: Card
    position: Position
    due_next: Position | None


@dataclass(frozen=True)
class CoupComplete(Notice):
    coup_number: int
    result: CoupResult


@dataclass(frozen=True)
class CoupDeclared(Notice):
    shoe_number: int
    coup_number: int
    result: CoupResult
    dummy_hand: tuple[Card, ...]


@dataclass(frozen=True)
class CoupVoided(Notice):
    shoe_number: int
    coup_number: int
    cards: tuple[Card, ...]
    dummy_hand: tuple[Card, ...]


@dataclass(frozen=True)
class CutCardNotice(Notice):
    last_coup_is_current: bool  # True: the coup now in progress (or next) is the last


@dataclass(frozen=True)
class ShoeEnded(Notice):
    shoe_number: int
    coups: int


@dataclass(frozen=True)
class CardsSetAside(Notice):
    """Cards drawn after the shoe ended, set aside when NEW SHOE starts the next one: they belong to no
    coup, and this is their record."""

    shoe_number: int
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class AlarmRaised(Notice):
    alarm: Alarm
    detail: str
    card: Card | None = None


@dataclass(frozen=True)
class AlarmCleared(Notice):
    alarm: Alarm


# ---------------------------------------------------------------------------------------------------------


@dataclass
class TableRules:
    """House rules the table state needs."""

    decks: int = 8
    burn_rule: BurnRule = field(default_factory=BurnRule)
    cut_card_rule: CutCardRule = CutCardRule.ONE_MORE
    auto_declare: bool = False
    #: The money rules when the table has a bet-spot reader (None: no reader, the table knows no wager).
    money: MoneyRules | None = None
    #: Whether the table has a chip tray's reader (``[tray] port``): the tray is counted coup by coup.
    tray: bool = False


class TableState:
    """One table's game state. Single owner; :meth:`apply` is the only transition."""

    def __init__(self, rules: TableRules | None = None) -> None:
        self.rules = rules or TableRules()
        self.shoe_number = 1
        self.shoe = self._new_shoe()
        self.coup_number = 1
        self.coups_declared = 0  # in this shoe
        self.coup = Coup()
        self.last_result: CoupResult | None = None  # complete, awaiting declare
        self.alarms: list[Alarm] = []
        self.dummy_hand: list[Card] = []
        #: The table's wagers and commission boxes (None without a bet-spot reader).
        self.money: WagerBook | None = None if self.rules.money is None else WagerBook(self.rules.money)
        #: The players at the seats (None without a bet-spot reader, whose board has the card readers).
        m = self.rules.money
        self.seats: SeatBook | None = None if m is None else SeatBook(m.seats, m.leave_after_coups)
        #: The chip tray (None without a tray reader).
        self.tray: TrayBook | None = TrayBook() if self.rules.tray else None

    @classmethod
    def at_shoe_start(
        cls,
        rules: TableRules,
        shoe_number: int,
        spots: Sequence[Mapping[str, Any]] = (),
        players: Sequence[Mapping[str, Any]] = (),
        tray: Mapping[str, Any] | None = None,
    ) -> TableState:
        """The state right after NEW SHOE started shoe ``shoe_number`` (no alarm, the links aside): where a
        replay can begin instead of at the journal's first input, since a new shoe resets everything else
        (the money's book too: :meth:`WagerBook.at_shoe_start`; a replay then applies the kept link inputs).
        ``players`` are the cards the seats' readers held then (the shoe's start record's ``players``), ``tray``
        the chip tray's book (its ``tray``)."""
        state = cls(rules)
        if rules.tray:
            state.tray = TrayBook.at_shoe_start(tray)
        state.shoe_number = shoe_number
        m = rules.money
        if m is not None:
            state.money = WagerBook.at_shoe_start(m, shoe_number, carried=spots)
            state.seats = SeatBook.at_shoe_start(m.seats, m.leave_after_coups, players)
        return state

    def _new_shoe(self) -> Shoe:
        r = self.rules
        return Shoe(r.decks, r.burn_rule, r.cut_card_rule)

    # -- the view --------------------------------------------------------------------------------
    @property
    def due(self) -> Due:
        if self.shoe.phase is ShoePhase.CLOSED:
            return Due.NEW_SHOE
        if self.shoe.phase in (ShoePhase.EXPOSE, ShoePhase.BURNING):
            return Due.BURN
        if any(a.halts_coup for a in self.alarms):
            return Due.VOID
        position = self.coup.due
        if position is None:
            return Due.DECLARE
        if position is Position.P3:
            return Due.PLAYER_THIRD
        if position is Position.B3:
            return Due.BANKER_THIRD
        return Due.DEAL

    def view(self) -> TableView:
        return TableView(
            shoe_number=self.shoe_number,
            coup_number=self.coup_number,
            due=self.due,
            player=self.coup.player_cards,
            banker=self.coup.banker_cards,
            result=self.last_result,
            alarms=tuple(self.alarms),
            cards_remaining=self.shoe.cards_remaining,
            cut_card_out=self.shoe.cut_card_out,
            last_coup=self.shoe.last_coup_announced,
            burn_left=self.shoe.burn_left,
            dummy_hand=tuple(self.dummy_hand),
            money=None if self.money is None else self.money.view(),
            players=() if self.seats is None else tuple(self.seats.players().items()),
            tray=None if self.tray is None else self.tray.view(),
        )

    # -- the one transition ------------------------------------------------------------------------
    def apply(self, event: TableInput) -> list[Notice]:
        """Apply one input; return what happened. Never raises for a rules problem: it alarms."""
        out = self._apply(event)
        if self.tray is not None:
            self._tray_flows(out)
        return out

    def _tray_flows(self, notices: Sequence[Notice]) -> None:
        """What the money's notices move of the chip tray (each wager settled, commission collected, chips sold),
        and the coups declared, whose reconciliation is then due."""
        tray = self.tray
        assert tray is not None
        for n in notices:
            if isinstance(n, WagerSettled):
                tray.settled(n)
            elif isinstance(n, CommissionTaken):
                tray.commission(n)
            elif isinstance(n, BuyInTaken):
                tray.sold(n)
            elif isinstance(n, CoupDeclared):
                tray.declared(n.shoe_number, n.coup_number)

    @property
    def payout_over(self) -> bool:
        """Whether no spot waits for the dealer to pay, take or collect it (always, without a bet-spot reader)."""
        return self.money is None or not self.money.paying()

    def _apply(self, event: TableInput) -> list[Notice]:
        if isinstance(event, CardDrawn):
            return self._card(event.card)
        if isinstance(event, UnreadableCard):
            return self._unreadable()
        if isinstance(event, CardKeyed):
            return self._keyed(event.card)
        if isinstance(event, DeclarePressed):
            return self._declare()
        if isinstance(event, VoidPressed):
            return self._void()
        if isinstance(event, NewShoePressed):
            return self._new_shoe_pressed()
        if isinstance(event, CutCardOut):
            return self._cut_card()
        if isinstance(event, LinkChanged):
            if event.up:
                return self._clear(Alarm.LINK_DOWN)
            return self._raise(Alarm.LINK_DOWN, "no frame from the shoe within the link timeout")
        if isinstance(event, LineNoise):
            if not event.noisy:
                return self._clear(Alarm.NOISY_LINE)
            return self._raise(Alarm.NOISY_LINE, "garbage on the shoe's line; check the cable and the baud rate")
        if isinstance(event, ShoeRebooted):
            if self.shoe.phase is not ShoePhase.DEALING or not (self.coup.cards_dealt or self.dummy_hand):
                # Between coups (or during the burn, or with the shoe closed) nothing is on the layout that
                # a lost event could belong to: a reboot there halts nothing (issue 8).
                return []
            return self._raise(
                Alarm.SHOE_REBOOTED, "the shoe started a new session; cards may be lost: hold VOID to void the coup"
            )
        if isinstance(event, SpotSeen | SpotsSnapshot | ReaderLinkChanged):
            return [] if self.money is None else self.money.apply(event)
        if isinstance(event, SeatCard):
            return [] if self.seats is None else self.seats.card(event, self.shoe_number, self.coup_number)
        if isinstance(event, TubeSeen | TraySnapshot | TrayLinkChanged | TrayStill):
            if self.tray is None:
                return []
            return self.tray.apply(event, shoe=self.shoe_number, coup=self.coup_number, payout_over=self.payout_over)
        if isinstance(event, ShoeProtocol):
            if event.version == 1:
                return self._clear(Alarm.SHOE_PROTOCOL_V2)
            return self._raise(
                Alarm.SHOE_PROTOCOL_V2, f"shoe speaks protocol v{event.version}; this controller speaks v1"
            )
        raise TypeError(f"not a table input: {event!r}")

    @property
    def seat_count(self) -> int:
        """The seats on the layout: the bet-spot reader's, or every seat a layout may have without one."""
        return MAX_SEATS if self.rules.money is None else self.rules.money.seats

    def buy_in(self, event: BuyIn) -> list[Notice]:
        """What a buy-in at a seat gives: its notice, in the shoe and coup now (the coup being dealt, or the next),
        for the seat's carded player (the entry's ``player_ref``, else the card in the seat's reader now, else
        None). Not a transition: a buy-in changes nothing of the game (a record only, never replayed). One the
        table refuses (:func:`~controller.game.cash.buy_in_refusal`; the loop refuses it before it asks) is
        nothing."""
        if buy_in_refusal(event, self.seat_count) is not None:
            return []
        ref = event.player_ref
        if ref is None and self.seats is not None:
            ref = self.seats.players().get(event.seat)
        out: list[Notice] = [BuyInTaken(self.shoe_number, self.coup_number, event.seat, event.cents, event.tender, ref)]
        if self.tray is not None:
            self._tray_flows(out)
        return out

    # -- helpers ---------------------------------------------------------------------------------
    def _raise(self, alarm: Alarm, detail: str, card: Card | None = None) -> list[Notice]:
        if alarm not in self.alarms:
            self.alarms.append(alarm)
        return [AlarmRaised(alarm, detail, card)]

    def _clear(self, *alarms: Alarm) -> list[Notice]:
        out: list[Notice] = []
        for alarm in alarms:
            if alarm in self.alarms:
                self.alarms.remove(alarm)
                out.append(AlarmCleared(alarm))
        return out

    def _foreign(self, check: InventoryCheck) -> list[Notice]:
        detail = f"{check.card} seen {check.seen} times in a {check.allowed}-deck shoe: void the coup"
        return self._raise(Alarm.FOREIGN_CARD, detail, check.card)

    #: Alarms cleared by the next accepted card, declare or void.
    _TRANSIENT = (
        Alarm.MISDRAW,
        Alarm.EARLY_DECLARE,
        Alarm.NOTHING_TO_DECLARE,
        Alarm.FOREIGN_BURN_CARD,
    )

    def _card(self, card: Card) -> list[Notice]:
        if self.shoe.phase is ShoePhase.CLOSED:
            self.dummy_hand.append(card)
            return self._raise(Alarm.SHOE_CLOSED, f"card {card} drawn after the shoe ended; press NEW SHOE", card)
        halted = any(a.halts_coup for a in self.alarms)
        use, check = self.shoe.draw(card)
        out: list[Notice] = []
        if use is not CardUse.COUP:
            out += self._clear(Alarm.SHOE_REBOOTED)
            out.append(BurnCard(card, use is CardUse.EXPOSED, self.shoe.burn_left))
            if check.foreign:
                detail = f"{card} seen {check.seen} times in a {check.allowed}-deck shoe (burned)"
                out += self._raise(Alarm.FOREIGN_BURN_CARD, detail, card)
            return out
        if halted:
            self.dummy_hand.append(card)
            return self._raise(Alarm.MISDRAW, f"card {card} drawn while the coup is halted; set aside", card)
        if self.coup.due is None:
            # A misdraw: set aside for the dummy hand, coup still awaits its declare.
            self.dummy_hand.append(card)
            out += self._raise(Alarm.MISDRAW, f"card {card} drawn when none was due; set aside (dummy hand)", card)
            if check.foreign:
                out += self._foreign(check)
            return out
        if check.foreign:
            self.dummy_hand.append(card)
            return self._foreign(check)
        return out + self._place(card)

    def _lock(self) -> list[Notice]:
        """The coup's first card left the shoe (read or not): the betting window closes, once."""
        if self.money is None or self.coup.cards_dealt or self.money.phase is Phase.LOCKED:
            return []
        locked = self.money.first_card(self.shoe_number, self.coup_number)
        out = list(locked)
        if self.seats is not None:
            playing = {n.seat for n in locked if isinstance(n, WagersLocked | WagerRefused)}
            out += self.seats.locked(self.shoe_number, self.coup_number, playing)
        return out

    def _place(self, card: Card) -> list[Notice]:
        """A coup card, read or keyed, into the position due."""
        out = self._clear(*self._TRANSIENT)
        position = self.coup.due
        assert position is not None
        out += self._lock()
        due_next = self.coup.deal(card)
        out.append(CardPlaced(card, position, due_next))
        if due_next is None:
            self.last_result = self.coup.result()
            out.append(CoupComplete(self.coup_number, self.last_result))
            if self.rules.auto_declare:
                out += self._declare()
        return out

    def _unreadable(self) -> list[Notice]:
        if self.shoe.phase is ShoePhase.CLOSED:
            return self._raise(Alarm.SHOE_CLOSED, "unreadable card drawn after the shoe ended; press NEW SHOE")
        if self.shoe.phase is ShoePhase.EXPOSE:
            # Count it as gone; the burn count is unknown.
            self.shoe.close()
            return self._raise(Alarm.UNREADABLE_EXPOSED, "the exposed burn card was unreadable; press NEW SHOE")
        if self.shoe.phase is ShoePhase.BURNING:
            # A face-down burn card need not be known.
            self.shoe.draw_unknown()
            return [BurnCard(None, False, self.shoe.burn_left)]
        self.shoe.draw_unknown()
        if self.coup.due is None:
            return self._raise(Alarm.MISDRAW, "unreadable card drawn when none was due; set aside")
        if any(a.halts_coup for a in self.alarms):  # drawn while halted: set aside, as a read card would be
            return self._raise(Alarm.MISDRAW, "unreadable card drawn while the coup is halted; set aside")
        out = self._lock()
        # (the words are the journal's since version 1: a table that keys cards says so on its dealer screen)
        return out + self._raise(Alarm.UNREADABLE, "a coup card was not identified: hold VOID to void the coup")

    @property
    def keyable(self) -> bool:
        """Whether a keyed card would correct the coup now: it is halted by an unreadable coup card alone (a card
        is due at a position, and no other alarm halts it: a foreign card, a shoe reboot are voided)."""
        halting = [a for a in self.alarms if a.halts_coup]
        return self.shoe.phase is ShoePhase.DEALING and halting == [Alarm.UNREADABLE] and self.coup.due is not None

    def _keyed(self, card: Card) -> list[Notice]:
        """The unreadable coup card keyed (:class:`CardKeyed`): counted as that card, placed where it was due; a
        keyed card over the shoe's count is a foreign card (the coup stays halted: void it). Nothing when there is
        nothing to correct (the shell asks only when there is, so a replay sees the same)."""
        if not self.keyable:
            return []
        check = self.shoe.identify(card)
        out = self._clear(Alarm.UNREADABLE)
        if check.foreign:
            self.dummy_hand.append(card)
            return out + self._foreign(check)
        return out + self._place(card)

    def _declare(self) -> list[Notice]:
        if self.shoe.phase is not ShoePhase.DEALING or any(a.halts_coup for a in self.alarms):
            return self._raise(Alarm.NOTHING_TO_DECLARE, f"declare pressed but {self.due.value} is due")
        if self.coup.cards_dealt == 0:
            return self._raise(Alarm.NOTHING_TO_DECLARE, "declare pressed before any card of the coup")
        if self.coup.due is not None:
            return self._raise(Alarm.EARLY_DECLARE, f"declare pressed while {self.coup.due.description} is due")
        result = self.coup.result()
        self.coups_declared += 1
        out: list[Notice] = [CoupDeclared(self.shoe_number, self.coup_number, result, tuple(self.dummy_hand))]
        if self.money is not None:
            out += self.money.declared(self.shoe_number, self.coup_number, result)
        out += self._clear(*self._TRANSIENT)
        out += self._next_coup()
        return out

    def _next_coup(self) -> list[Notice]:
        self.coup = Coup()
        self.last_result = None
        self.dummy_hand = []
        closed = self.shoe.coup_finished()
        out: list[Notice] = []
        if closed:
            out.append(ShoeEnded(self.shoe_number, self.coups_declared))
            if self.money is not None:
                out += self.money.shoe_ended(self.shoe_number)
        else:
            self.coup_number += 1
        return out

    @property
    def voidable(self) -> bool:
        """Whether VOID would void something now: a coup with cards, a dummy hand, or a halted coup."""
        if self.shoe.phase is not ShoePhase.DEALING:
            return False
        cards = self.coup.player_cards + self.coup.banker_cards
        return bool(cards or self.dummy_hand or any(a.halts_coup for a in self.alarms))

    @property
    def uncollected_cents(self) -> int:
        """What NEW SHOE now would close uncollected in the commission boxes (0 without a bet-spot reader)."""
        return 0 if self.money is None else self.money.uncollected()

    def _void(self) -> list[Notice]:
        if not self.voidable:
            return []
        cards = self.coup.player_cards + self.coup.banker_cards
        halting = [a for a in self.alarms if a.halts_coup]
        out: list[Notice] = [CoupVoided(self.shoe_number, self.coup_number, cards, tuple(self.dummy_hand))]
        if self.money is not None:
            out += self.money.voided(self.shoe_number, self.coup_number)
        out += self._clear(*halting, *self._TRANSIENT)
        out += self._next_coup()
        return out

    def _new_shoe_pressed(self) -> list[Notice]:
        out: list[Notice] = []
        if self.shoe.phase is ShoePhase.DEALING:
            out += self._void()  # a coup in progress is voided (nothing if none)
        elif self.dummy_hand:
            # cards drawn after the shoe ended: every card read ends up in the record
            out.append(CardsSetAside(self.shoe_number, tuple(self.dummy_hand)))
        if self.shoe.cards_seen or self.shoe.phase is ShoePhase.CLOSED:
            if self.shoe.phase is not ShoePhase.CLOSED:
                out.append(ShoeEnded(self.shoe_number, self.coups_declared))
                if self.money is not None:
                    out += self.money.shoe_ended(self.shoe_number)
            self.shoe_number += 1
        # else: the shoe is untouched; pressing NEW SHOE restarts its burn procedure in place.
        self.shoe = self._new_shoe()
        self.coup = Coup()
        self.coup_number = 1
        self.coups_declared = 0
        self.last_result = None
        self.dummy_hand = []
        out += self._clear(*[a for a in self.alarms if a not in _LINE_ALARMS])
        if self.money is not None:
            closed = self.money.shoe_started(self.shoe_number)
            players: tuple[dict[str, Any], ...] = ()
            if self.seats is not None:
                self.seats.shoe_started()
                players = self.seats.carried()
            kept = ShoeStarted(self.shoe_number, self.rules.decks, self.money.carried(), players, self._tray_kept())
            out.append(kept)
            out += closed
        else:
            out.append(ShoeStarted(self.shoe_number, self.rules.decks, tray=self._tray_kept()))
        return out

    def _tray_kept(self) -> dict[str, Any] | None:
        return None if self.tray is None else self.tray.carried()

    def _cut_card(self) -> list[Notice]:
        if self.shoe.cut_card_out or self.shoe.phase is ShoePhase.CLOSED:
            return []
        self.shoe.cut_card()
        return [CutCardNotice(self.shoe.last_coup_announced)]
