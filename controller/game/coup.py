"""The coup machine: takes cards one at a time in shoe order and says what is due next.

A coup is dealt P1, B1, P2, B2, then a Player third card and/or a Banker third card when the
:data:`~controller.game.tableau.TABLEAU` says so. After each card the machine tells what is due: the next
card's :class:`Position`, or ``None`` when the coup is complete. A card offered when none is due raises
:class:`~controller.game.errors.CardNotDue` and leaves the machine unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from controller.game.cards import Card, TwoHands, hand_total
from controller.game.errors import CardNotDue, RulesViolation
from controller.game.notation import hand_text, result_text
from controller.game.tableau import TABLEAU


class Hand(Enum):
    """The two hands of a coup."""

    PLAYER = "player"
    BANKER = "banker"


class Winner(Enum):
    """Who won a coup."""

    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"

    @property
    def letter(self) -> str:
        return self.value[0].upper()


class Position(Enum):
    """Where the next card of a coup goes."""

    P1 = "P1"
    B1 = "B1"
    P2 = "P2"
    B2 = "B2"
    P3 = "P3"
    B3 = "B3"

    @property
    def hand(self) -> Hand:
        return Hand.PLAYER if self.value[0] == "P" else Hand.BANKER

    @property
    def is_third_card(self) -> bool:
        return self in (Position.P3, Position.B3)

    @property
    def description(self) -> str:
        """What the dealer is told: ``PLAYER THIRD CARD``, ``BANKER CARD`` ..."""
        return f"{self.hand.value.upper()} {'THIRD CARD' if self.is_third_card else 'CARD'}"


_INITIAL = (Position.P1, Position.B1, Position.P2, Position.B2)


def next_due(player: Sequence[Card], banker: Sequence[Card]) -> Position | None:
    """What is due after these cards, by the tableau; ``None`` when the coup is complete."""
    dealt = len(player) + len(banker)
    if dealt < 4:
        return _INITIAL[dealt]
    pt = (player[0].value + player[1].value) % 10
    bt = (banker[0].value + banker[1].value) % 10
    if dealt == 4:
        if TABLEAU.player_draws(pt, bt):
            return Position.P3
        if TABLEAU.banker_draws(pt, bt, None):
            return Position.B3
        return None
    if len(player) == 3 and len(banker) == 2 and TABLEAU.banker_draws(pt, bt, player[2].value):
        return Position.B3
    return None


@dataclass(frozen=True, slots=True)
class CoupResult(TwoHands):
    """A complete coup: both hands and everything the payouts and the scoreboard need."""

    player: tuple[Card, ...]
    banker: tuple[Card, ...]

    @property
    def winner(self) -> Winner:
        pt, bt = self.player_total, self.banker_total
        if pt > bt:
            return Winner.PLAYER
        if bt > pt:
            return Winner.BANKER
        return Winner.TIE

    @property
    def player_natural(self) -> bool:
        return TABLEAU.is_natural((self.player[0].value + self.player[1].value) % 10)

    @property
    def banker_natural(self) -> bool:
        return TABLEAU.is_natural((self.banker[0].value + self.banker[1].value) % 10)

    @property
    def natural(self) -> bool:
        """Either hand holds a natural (both then stand)."""
        return self.player_natural or self.banker_natural

    @property
    def natural_hand(self) -> str | None:
        """Whose natural: ``"player"``, ``"banker"``, ``"both"`` or ``None``."""
        p, b = self.player_natural, self.banker_natural
        if p and b:
            return "both"
        if p:
            return Hand.PLAYER.value
        if b:
            return Hand.BANKER.value
        return None

    @property
    def player_pair(self) -> bool:
        """The Player's first two cards are of the same rank."""
        return self.player[0].rank == self.player[1].rank

    @property
    def banker_pair(self) -> bool:
        """The Banker's first two cards are of the same rank."""
        return self.banker[0].rank == self.banker[1].rank

    @property
    def player_three_cards(self) -> bool:
        return len(self.player) == 3

    @property
    def banker_three_cards(self) -> bool:
        return len(self.banker) == 3

    @property
    def margin(self) -> int:
        """The winning margin in points (0 for a tie)."""
        return abs(self.player_total - self.banker_total)

    @property
    def cards(self) -> tuple[Card, ...]:
        """The cards in the order they left the shoe."""
        p, b = self.player, self.banker
        order = [p[0], b[0], p[1], b[1]]
        if len(p) == 3:
            order.append(p[2])
        if len(b) == 3:
            order.append(b[2])
        return tuple(order)

    def to_dict(self) -> dict[str, Any]:
        """The JSON fields fixed by the command-line contract, plus a few more."""
        return {
            "player": [c.token for c in self.player],
            "banker": [c.token for c in self.banker],
            "player_total": self.player_total,
            "banker_total": self.banker_total,
            "winner": self.winner.value,
            "natural": self.natural,
            "natural_hand": self.natural_hand,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "player_three_cards": self.player_three_cards,
            "banker_three_cards": self.banker_three_cards,
            "margin": self.margin,
        }

    def describe(self) -> str:
        """One human line in the notation people read (docs/notation.md): the result with its score, Player
        first, then each hand: ``Banker wins · P 5 – B 7   P 2♥ 3♠      B 4♦ 3♣``."""
        head = result_text(self.winner.value, self.player_total, self.banker_total)
        flags = []
        if self.natural:
            flags.append(f"natural ({self.natural_hand})")
        if self.player_pair:
            flags.append("player pair")
        if self.banker_pair:
            flags.append("banker pair")
        tail = f"  [{', '.join(flags)}]" if flags else ""
        player = hand_text(c.token for c in self.player)
        banker = hand_text(c.token for c in self.banker)
        return f"{head:<23}  P {player:<11}  B {banker:<11}{tail}".rstrip()


class Coup:
    """One coup in progress. Mutable, owned by one caller; every refusal leaves it unchanged."""

    __slots__ = ("_banker", "_due", "_player")

    def __init__(self) -> None:
        self._player: list[Card] = []
        self._banker: list[Card] = []
        self._due: Position | None = Position.P1

    @classmethod
    def from_cards(cls, cards: Iterable[Card]) -> Coup:
        """A coup with these cards dealt in shoe order (raises if one is not due)."""
        coup = cls()
        for card in cards:
            coup.deal(card)
        return coup

    @property
    def due(self) -> Position | None:
        """The position of the next card, or ``None`` when the coup is complete."""
        return self._due

    @property
    def complete(self) -> bool:
        return self._due is None

    @property
    def player_cards(self) -> tuple[Card, ...]:
        return tuple(self._player)

    @property
    def banker_cards(self) -> tuple[Card, ...]:
        return tuple(self._banker)

    @property
    def cards_dealt(self) -> int:
        return len(self._player) + len(self._banker)

    @property
    def player_total(self) -> int:
        """The Player's running total."""
        return hand_total(self._player)

    @property
    def banker_total(self) -> int:
        """The Banker's running total."""
        return hand_total(self._banker)

    def deal(self, card: Card) -> Position | None:
        """Place the next card; return what is due next. Raises :class:`CardNotDue` if none is due."""
        due = self._due
        if due is None:
            raise CardNotDue(card)
        if due.hand is Hand.PLAYER:
            self._player.append(card)
        else:
            self._banker.append(card)
        self._due = next_due(self._player, self._banker)
        return self._due

    def result(self) -> CoupResult:
        """The finished coup. Raises :class:`RulesViolation` while a card is still due."""
        if self._due is not None:
            raise RulesViolation(f"coup not complete: {self._due.description} is due")
        return CoupResult(tuple(self._player), tuple(self._banker))

    def copy(self) -> Coup:
        other = Coup()
        other._player = list(self._player)
        other._banker = list(self._banker)
        other._due = self._due
        return other

    def __repr__(self) -> str:
        p = " ".join(c.token for c in self._player)
        b = " ".join(c.token for c in self._banker)
        return f"<Coup P[{p}] B[{b}] due={self._due.value if self._due else 'nothing'}>"


def play_coups(cards: Iterable[Card]) -> tuple[list[CoupResult], list[Card]]:
    """Split cards (in the order they left the shoe) into consecutive coups.

    Returns the complete coups and the cards left over that do not complete a coup.
    """
    results: list[CoupResult] = []
    coup = Coup()
    pending: list[Card] = []
    for card in cards:
        pending.append(card)
        if coup.deal(card) is None:
            results.append(coup.result())
            coup = Coup()
            pending = []
    return results, pending
