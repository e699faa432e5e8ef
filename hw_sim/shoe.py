"""The shoe model of the software shoe: N decks, a seeded shuffle, the cut card, and foreign cards.

The shuffle uses the :class:`random.Random` it is given (never the global generator), so a seed gives the
same shoe every time. The cut card is placed ``cut_from_back`` cards from the back: it comes out of the shoe
just before the card at index ``len(cards) - cut_from_back``. Burn cards are ordinary cards of the shoe; the
dealer decides which cards are burned.

A *foreign card* is a card this shoe cannot contain: an extra physical card slipped in from outside (a
differently-backed deck). Its face is chosen so that the controller can tell: a rank and suit of which all
``decks`` copies have already left the shoe, so this would be copy ``decks + 1``. When no such face exists
yet (early in a shoe) any face is used and the card is marked ``detectable=False``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from controller.game.cards import DECK, Card

MIN_DECKS = 1
MAX_DECKS = 8
#: Default cut-card position, in cards from the back (usual for an 8-deck baccarat shoe; the same count is
#: used for smaller shoes unless --cut-card says otherwise).
DEFAULT_CUT_FROM_BACK = 14


class ShoeEmpty(Exception):
    """A card was drawn from a shoe with no cards left."""

    def __init__(self, shoe_size: int) -> None:
        super().__init__(f"the shoe of {shoe_size} cards is empty")
        self.shoe_size = shoe_size


@dataclass(frozen=True, slots=True)
class ForeignCard:
    """A card from outside the shoe; ``detectable`` says whether its face already exceeds the deck count."""

    card: Card
    detectable: bool


def shoe_size(decks: int) -> int:
    return decks * len(DECK)


def validate_shoe(decks: int, cut_from_back: int) -> None:
    """Raise ValueError naming the problem if this shoe cannot be built."""
    if not MIN_DECKS <= decks <= MAX_DECKS:
        raise ValueError(f"decks must be {MIN_DECKS}-{MAX_DECKS}, not {decks}")
    size = shoe_size(decks)
    if not 1 <= cut_from_back < size:
        raise ValueError(f"cut card must be 1-{size - 1} cards from the back of a {decks}-deck shoe")


class ShoeModel:
    """One shuffled shoe being dealt. Mutable; owned by the simulator core."""

    __slots__ = ("_counts", "_cut_taken", "_pos", "cards", "cut_index", "decks")

    def __init__(self, cards: list[Card], decks: int, cut_index: int) -> None:
        self.cards = cards
        self.decks = decks
        self.cut_index = cut_index
        self._pos = 0
        self._cut_taken = False
        self._counts: Counter[Card] = Counter()

    @classmethod
    def shuffled(cls, decks: int, rng: random.Random, cut_from_back: int = DEFAULT_CUT_FROM_BACK) -> ShoeModel:
        """A freshly shuffled shoe of ``decks`` decks, its cut card ``cut_from_back`` cards from the back."""
        validate_shoe(decks, cut_from_back)
        cards = list(DECK) * decks
        rng.shuffle(cards)
        return cls(cards, decks, len(cards) - cut_from_back)

    @classmethod
    def ordered(
        cls, order: Sequence[Card], decks: int, rng: random.Random, cut_from_back: int = DEFAULT_CUT_FROM_BACK
    ) -> ShoeModel:
        """A shoe whose first cards are ``order`` (as given); the rest of the ``decks`` decks, shuffled with
        ``rng``, follow. ``order`` must fit the shoe (see :func:`check_order`)."""
        validate_shoe(decks, cut_from_back)
        check_order(order, decks)
        rest = Counter(list(DECK) * decks)
        rest.subtract(order)
        tail = [c for c in DECK for _ in range(rest[c])]
        rng.shuffle(tail)
        cards = [*order, *tail]
        return cls(cards, decks, len(cards) - cut_from_back)

    @property
    def position(self) -> int:
        """How many of the shoe's own cards have been drawn."""
        return self._pos

    @property
    def remaining(self) -> int:
        return len(self.cards) - self._pos

    @property
    def cut_card_next(self) -> bool:
        """The cut card comes out before the next card."""
        return not self._cut_taken and self._pos >= self.cut_index

    @property
    def cut_card_out(self) -> bool:
        return self._cut_taken

    def take_cut_card(self) -> None:
        self._cut_taken = True

    def draw(self) -> Card:
        """The next card of the shoe. Raises :class:`ShoeEmpty` when none is left."""
        if self._pos >= len(self.cards):
            raise ShoeEmpty(len(self.cards))
        card = self.cards[self._pos]
        self._pos += 1
        self._counts[card] += 1
        return card

    def seen(self, card: Card) -> int:
        """How many copies of this face have left the shoe (foreign cards included)."""
        return self._counts[card]

    def foreign(self, rng: random.Random) -> ForeignCard:
        """Make a foreign card (see the module text) and count it as out of the shoe."""
        exhausted = [c for c in DECK if self._counts[c] >= self.decks]
        if exhausted:
            card, detectable = rng.choice(exhausted), True
        else:
            card, detectable = rng.choice(DECK), False
        self._counts[card] += 1
        return ForeignCard(card, detectable)


class OrderError(ValueError):
    """A card order that cannot be dealt from this shoe; ``index`` is the 0-based position of the card at fault
    (None: the order as a whole)."""

    def __init__(self, reason: str, index: int | None = None) -> None:
        super().__init__(reason)
        self.index = index


def check_order(order: Sequence[Card], decks: int) -> None:
    """Raise :class:`OrderError` if ``order`` holds more cards than the shoe, or a face more often than ``decks``."""
    size = shoe_size(decks)
    seen: Counter[Card] = Counter()
    for i, card in enumerate(order):
        if i >= size:
            raise OrderError(f"more cards than a {decks}-deck shoe holds ({size})", i)
        seen[card] += 1
        if seen[card] > decks:
            raise OrderError(f"{card} copy {seen[card]} in a {decks}-deck shoe", i)


def burn_count(card: Card) -> int:
    """How many cards the exposed first card of a shoe orders burned: its pips, ten and court cards 10,
    the ace 1."""
    return min(int(card.rank), 10)
