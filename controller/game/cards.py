"""Playing cards: ranks, suits, baccarat values and the card tokens the casino writes.

A token is rank then suit, case-insensitive: ``AS``, ``10H`` or ``TH``, ``qd``. The canonical token
uses ``T`` for ten (``TH``). Baccarat values: ace 1, two to nine their face, ten and court cards 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum

from controller.game.errors import CardError


class Rank(IntEnum):
    """Card rank; the integer is the rank's wire code (ace 1 ... king 13)."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def symbol(self) -> str:
        return _RANK_SYMBOLS[self]

    @property
    def points(self) -> int:
        """Baccarat value: ace 1, 2-9 face, ten and court cards 0."""
        return int(self) if int(self) < 10 else 0


class Suit(Enum):
    """Card suit; the value is the one-letter symbol used in tokens."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def symbol(self) -> str:
        return str(self.value)


_RANK_SYMBOLS: dict[Rank, str] = {
    Rank.ACE: "A",
    Rank.TWO: "2",
    Rank.THREE: "3",
    Rank.FOUR: "4",
    Rank.FIVE: "5",
    Rank.SIX: "6",
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "T",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
}
_RANK_BY_SYMBOL: dict[str, Rank] = {s: r for r, s in _RANK_SYMBOLS.items()} | {"10": Rank.TEN}
_SUIT_BY_SYMBOL: dict[str, Suit] = {s.value: s for s in Suit}

#: Ranks in order, ace first: the order of a 13-count shoe composition.
RANKS: tuple[Rank, ...] = tuple(Rank)
SUITS: tuple[Suit, ...] = tuple(Suit)


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card."""

    rank: Rank
    suit: Suit

    @property
    def value(self) -> int:
        """Baccarat value of the card (0-9)."""
        return _VALUES[self.rank]

    @property
    def token(self) -> str:
        """Canonical token: rank symbol then suit letter, ``T`` for ten (``TH``)."""
        return _RANK_SYMBOLS[self.rank] + self.suit.value

    def __str__(self) -> str:
        return self.token

    @classmethod
    def parse(cls, token: str) -> Card:
        """Parse a rank-then-suit token, any case; raise :class:`CardError` naming the token."""
        try:
            return _CARDS_BY_TOKEN[token.upper()]
        except (KeyError, AttributeError):
            raise CardError(str(token), _why_not_a_card(str(token))) from None


_VALUES: dict[Rank, int] = {r: (int(r) if int(r) < 10 else 0) for r in Rank}
_CARDS_BY_TOKEN: dict[str, Card] = {}
for _symbol, _rank in _RANK_BY_SYMBOL.items():
    for _suit in Suit:
        _CARDS_BY_TOKEN[_symbol + _suit.value] = Card(_rank, _suit)

#: The 52 distinct cards of one deck, ordered by rank then suit.
DECK: tuple[Card, ...] = tuple(Card(r, s) for r in Rank for s in Suit)


def _why_not_a_card(token: str) -> str:
    if not token:
        return "empty card token"
    up = token.upper()
    rank, suit = up[:-1], up[-1:]
    if rank not in _RANK_BY_SYMBOL:
        return f"unknown rank {rank!r} (expected A, 2-9, T or 10, J, Q, K, then a suit S, H, D, C)"
    if suit not in _SUIT_BY_SYMBOL:
        return f"unknown suit {suit!r} (expected S, H, D or C)"
    return "not a card"


def parse_cards(tokens: list[str] | tuple[str, ...]) -> list[Card]:
    """Parse several tokens; the first bad one raises :class:`CardError` naming it."""
    return [Card.parse(t) for t in tokens]


def hand_total(cards: Sequence[Card]) -> int:
    """A hand's total: the sum of the card values mod 10."""
    return sum(c.value for c in cards) % 10


class TwoHands:
    """The totals of the Player's and the Banker's hands, for each class that holds both (a complete coup,
    the table's view)."""

    __slots__ = ()
    player: tuple[Card, ...]
    banker: tuple[Card, ...]

    @property
    def player_total(self) -> int:
        return hand_total(self.player)

    @property
    def banker_total(self) -> int:
        return hand_total(self.banker)
