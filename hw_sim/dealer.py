"""The dealer of the software shoe: what the dealer does next, as decisions the simulator core carries out.

Two dealers:

* :class:`PromptDealer` (binary dialect, ``--dealer prompt``) follows the controller's PROMPT: ``DEAL`` ->
  the four initial cards one at a time; ``PLAYER_THIRD`` / ``BANKER_THIRD`` -> one card; ``NOTHING`` ->
  press DECLARE; ``BURN`` -> one burn card per BURN prompt; ``HALTED`` -> hold VOID (an unreadable or
  foreign card halted the coup); ``SHOE_CLOSED`` -> end the shoe. A table that declares by itself
  (``auto_declare``) is followed too: its fresh DEAL after a coup's cards counts the coup declared. It presses
  NEW_SHOE at the start of each shoe. A prompt is followed once, and only when every event the shoe sent
  has been acknowledged (the dealer looks at the table's lights after each card); prompts that cannot be
  meant now (a DEAL in the middle of a coup, a second PLAYER_THIRD, a SHOE_CLOSED before any coup) are
  ignored as stale repeats.
* :class:`SelfDealer` (``--dealer self``; the only dealer of the ASCII dialect) applies the rules itself
  with :class:`controller.game.coup.Coup`: NEW_SHOE, the burn (first card exposed, that many burned: ten
  and court cards 10, the ace 1), coups with their third cards, DECLARE after each coup; the cut card makes
  the current coup and (house rule, on by default) one more the last of the shoe.

Both take dealer faults: ``misdraw`` (a card drawn when none is due, just before a declare) and
``early_declare`` (DECLARE pressed while a third card is due; the dealer then deals the card anyway in
self mode, or waits for the next prompt in prompt mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from controller.game.cards import Card
from controller.game.coup import Coup
from firmware_protocol.messages import Button, Due
from hw_sim.shoe import burn_count


class Role(Enum):
    """Why a card was drawn."""

    BURN = "burn"
    COUP = "coup"
    MISDRAW = "misdraw"


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw the next card from the shoe."""

    role: Role


@dataclass(frozen=True, slots=True)
class Press:
    """Press a button on the shoe. ``early`` marks a DECLARE pressed while a third card is due."""

    button: Button
    early: bool = False


@dataclass(frozen=True, slots=True)
class EndShoe:
    """The shoe is finished (cut card reached and last coup declared, shoe closed, or shoe empty)."""

    reason: str


Action = Draw | Press | EndShoe


class SelfDealer:
    """A dealer who knows the rules: deals a whole shoe without being told what is due."""

    def __init__(self, *, one_more_coup: bool = True) -> None:
        self.one_more_coup = one_more_coup
        self.misdraw_armed = False
        self.early_declare_armed = False
        self.new_shoe()

    def new_shoe(self) -> None:
        self._phase = "start"
        self._burn_left = 0
        self.coup = Coup()
        self.coups_declared = 0
        self._cut_coup: int | None = None
        self._empty = False
        self._early_done = False

    @property
    def current_coup(self) -> int:
        """Number (from 1) of the coup being dealt."""
        return self.coups_declared + 1

    def next_action(self) -> Action:
        if self._empty:
            return EndShoe("shoe empty")
        if self._phase == "start":
            self._phase = "expose"
            return Press(Button.NEW_SHOE)
        if self._phase in ("expose", "burn"):
            return Draw(Role.BURN)
        if self._phase == "done":
            return EndShoe("cut card")
        due = self.coup.due
        if due is not None:
            if self.early_declare_armed and due.is_third_card and not self._early_done:
                self.early_declare_armed = False
                self._early_done = True
                return Press(Button.DECLARE, early=True)
            return Draw(Role.COUP)
        if self.misdraw_armed:
            self.misdraw_armed = False
            return Draw(Role.MISDRAW)
        self.coups_declared += 1
        last = self._cut_coup is not None and self.coups_declared >= self._cut_coup + int(self.one_more_coup)
        self.coup = Coup()
        self._early_done = False
        if last:
            self._phase = "done"
        return Press(Button.DECLARE)

    def on_card(self, card: Card, role: Role) -> None:
        """The card that went out for the last :class:`Draw` (a foreign card included)."""
        if role is Role.BURN:
            if self._phase == "expose":
                self._burn_left = burn_count(card)
                self._phase = "burn"
            else:
                self._burn_left -= 1
            if self._phase == "burn" and self._burn_left == 0:
                self._phase = "coups"
        elif role is Role.COUP:
            self.coup.deal(card)
        # a misdrawn card is set aside (dummy hand): it is no part of any coup

    def on_unreadable(self, card: Card, role: Role) -> None:
        """The reader missed the card; the dealer still sees its face and places it."""
        self.on_card(card, role)

    def on_cut_card(self) -> None:
        if self._cut_coup is None:
            self._cut_coup = self.current_coup

    def on_empty(self) -> None:
        self._empty = True


_THIRD = {Due.PLAYER_THIRD: "P3", Due.BANKER_THIRD: "B3"}


class PromptDealer:
    """A dealer who follows the controller's PROMPT (binary dialect). ``key_cards``: an unreadable coup card is keyed
    on the dealer screen for a supervisor to approve (the table's KEY CARD), not voided: the dealer stops at it,
    and the command line sends the card (:attr:`key_due`) once the table offers KEY CARD; if it never does,
    :meth:`give_up_key` and the dealer holds VOID as ever."""

    def __init__(self, key_cards: bool = False) -> None:
        self.misdraw_armed = False
        self.early_declare_armed = False
        self.key_cards = key_cards
        self.new_shoe()

    def new_shoe(self) -> None:
        self._started = False
        self._burned = False  # a burn card of this shoe has been drawn
        self._pending: Due | None = None
        self._run_left = 0
        self.coup_cards = 0
        self._thirds: set[str] = set()
        self.coups_declared = 0
        self._empty = False
        self.table_declared = False
        self._void_held = False  # VOID held for the halted coup: it waits for the void (a supervisor's approval)
        self._unread: Card | None = None  # key_cards: the unreadable coup card to key, its face seen
        self._key_sent = False  # ... sent to the table, waiting for the approval
        self._keyed = False  # a keyed card was placed in the initial deal: the rest of the four are due

    @property
    def current_coup(self) -> int:
        return self.coups_declared + 1

    def on_prompt(self, due: Due, *, fresh: bool = False) -> None:
        """The controller's PROMPT. ``fresh``: it came after the ACK of every event the shoe sent, so it says
        what is due after the coup's last card. A fresh DEAL (or SHOE_CLOSED) once a coup's cards are out
        means the table declared the coup itself (``[table] auto_declare``): the dealer counts it declared
        (:attr:`table_declared` says so once) and deals on, where a stale one would be ignored."""
        if fresh and self.coup_cards >= 4 and due in (Due.DEAL, Due.SHOE_CLOSED):
            self.coups_declared += 1
            self.coup_cards = 0
            self._thirds.clear()
            self._run_left = 0
            self.table_declared = True
        if due is not Due.HALTED:
            self._void_held = False  # the coup was voided (or the prompt moved on): a new halt is a new void
            if self._unread is not None and self._key_sent:  # the keyed card was placed: the coup goes on
                self._unread, self._key_sent = None, False
                self._keyed = self.coup_cards < 4
        self._pending = due

    @property
    def key_due(self) -> Card | None:
        """The unreadable card to key now (None: none, or it was sent)."""
        return None if self._key_sent else self._unread

    def key_sent(self) -> None:
        """The card was sent to the table: the dealer waits for the supervisor's approval."""
        self._key_sent = True

    def give_up_key(self) -> None:
        """The table did not offer KEY CARD (no supervisor on its list, or no dealer screen): void the coup."""
        self._unread, self._key_sent = None, False

    def take_table_declared(self) -> bool:
        """Whether the table declared a coup by itself since the last call."""
        declared, self.table_declared = self.table_declared, False
        return declared

    def forget_prompt(self) -> None:
        """Drop what the dealer was told (after a shoe reboot the controller must say it again)."""
        self._pending = None
        self._run_left = 0

    def _acceptable(self, due: Due) -> bool:
        if due is Due.DEAL and self._keyed:
            return self.coup_cards < 4  # a keyed card was placed: the rest of the initial four
        if due is Due.DEAL or due is Due.BURN:
            return self.coup_cards == 0
        if due in _THIRD:
            return self.coup_cards >= 4 and _THIRD[due] not in self._thirds
        if due is Due.NOTHING:
            return self.coup_cards >= 4
        if due is Due.HALTED:
            return not self._void_held  # VOID once; the table may wait for a supervisor before it voids
        # SHOE_CLOSED: only once this shoe has had a coup (before that it is the closed table of old)
        return self.coups_declared >= 1 and self.coup_cards == 0

    def next_action(self, ready: bool) -> Action | None:
        """The next move, or None to wait. ``ready``: every event sent so far is acknowledged."""
        if self._empty:
            return EndShoe("shoe empty")
        if not self._started:
            self._started = True
            return Press(Button.NEW_SHOE)
        if self._run_left:
            self._run_left -= 1
            self.coup_cards += 1
            return Draw(Role.COUP)
        if not ready or self._pending is None:
            return None
        if self._pending is Due.HALTED and self._unread is not None:
            return None  # the card is being keyed: the halt is kept for a void if the table never offers KEY CARD
        due, self._pending = self._pending, None
        if due is Due.SHOE_CLOSED and self._burned and self.coups_declared == 0 and self.coup_cards == 0:
            # The burn went wrong (the exposed card was unreadable): the controller wants NEW SHOE again.
            self._burned = False
            return Press(Button.NEW_SHOE)
        if not self._acceptable(due):
            return None
        if due is Due.DEAL:
            self._run_left = 3 - self.coup_cards  # after a keyed card: the rest of the initial four
            self._keyed = False
            self.coup_cards += 1
            return Draw(Role.COUP)
        if due is Due.BURN:
            self._burned = True
            return Draw(Role.BURN)
        if due in _THIRD:
            if self.early_declare_armed:
                self.early_declare_armed = False
                return Press(Button.DECLARE, early=True)
            self._thirds.add(_THIRD[due])
            self.coup_cards += 1
            return Draw(Role.COUP)
        if due is Due.NOTHING:
            if self.misdraw_armed:
                self.misdraw_armed = False
                return Draw(Role.MISDRAW)
            self.coups_declared += 1
            self.coup_cards = 0
            self._thirds.clear()
            return Press(Button.DECLARE)
        if due is Due.HALTED:
            # An unreadable or foreign card halted the coup: the house procedure is to void it.
            self.coups_declared += 1  # the controller counts a voided coup towards the cut card's countdown
            self.coup_cards = 0
            self._thirds.clear()
            self._void_held = True
            return Press(Button.VOID)
        return EndShoe("shoe closed")

    def on_card(self, card: Card, role: Role) -> None:
        """Prompt dealers do not track the rules themselves."""

    def on_unreadable(self, card: Card, role: Role) -> None:
        """The controller will say what is due; with ``key_cards`` the dealer stops at an unreadable coup card (the
        shoe flags it) to key it."""
        if self.key_cards and role is Role.COUP:
            self._unread, self._key_sent = card, False
            self._run_left = 0

    def on_cut_card(self) -> None:
        """The controller decides when the shoe closes."""

    def on_empty(self) -> None:
        self._empty = True
