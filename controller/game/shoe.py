"""The shoe's lifecycle: a new shoe of N decks, the burn procedure, the cut card and the inventory.

A new shoe opens with the burn procedure (house rule, :class:`BurnRule`): the first card is exposed and
that many cards are burned face down (ten and court cards burn 10; an ace burns 1 or 11), or a fixed
count is burned, or none. When the cut card appears, the coup in progress (or, between coups, the next
one) is the last of the shoe, or the one after it, by house rule (:class:`CutCardRule`). The inventory
counts every identity seen, burn cards included, so that a card seen more often than the shoe holds is
reported as a foreign card.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum

from controller.game.cards import Card, Rank
from controller.game.errors import RulesViolation

MIN_DECKS, MAX_DECKS = 1, 8


class BurnMode(Enum):
    """How a new shoe is burned."""

    EXPOSED = "exposed"  # first card exposed, that many burned face down
    FIXED = "fixed"  # a fixed number burned face down
    NONE = "none"  # no burn


@dataclass(frozen=True)
class BurnRule:
    """The house's burn procedure."""

    mode: BurnMode = BurnMode.EXPOSED
    #: What an exposed ace burns: 1 or 11.
    ace_burns: int = 1
    #: Cards burned in FIXED mode.
    fixed_count: int = 0

    def __post_init__(self) -> None:
        if self.ace_burns not in (1, 11):
            raise ValueError(f"ace_burns must be 1 or 11, not {self.ace_burns}")
        if not 0 <= self.fixed_count <= 20:
            raise ValueError(f"fixed burn count {self.fixed_count} outside 0-20")

    def burn_count(self, exposed: Card) -> int:
        """How many cards the exposed first card of the shoe burns."""
        if exposed.rank is Rank.ACE:
            return self.ace_burns
        if exposed.rank >= Rank.TEN:
            return 10
        return int(exposed.rank)


class CutCardRule(Enum):
    """What the cut card means, by house rule."""

    ONE_MORE = "one_more"  # finish this coup and play one more
    FINISH = "finish"  # finish this coup; it is the last


class ShoePhase(Enum):
    """Where a shoe is in its life."""

    EXPOSE = "expose"  # the first card is about to be exposed
    BURNING = "burning"  # burn cards are being drawn face down
    DEALING = "dealing"  # coups are being dealt
    CLOSED = "closed"  # the shoe has ended; no card may be drawn


class CardUse(Enum):
    """What a card drawn from the shoe was used for."""

    EXPOSED = "exposed"
    BURN = "burn"
    COUP = "coup"


@dataclass(frozen=True)
class InventoryCheck:
    """Result of counting one card into the inventory."""

    card: Card
    seen: int  # times this identity has now been seen in this shoe
    allowed: int  # how many the shoe holds

    @property
    def foreign(self) -> bool:
        """Seen more often than the shoe holds: a foreign card (or a misread)."""
        return self.seen > self.allowed


class Shoe:
    """One shoe, from the burn to the end. Mutable, owned by one caller; refusals leave it unchanged."""

    __slots__ = (
        "_burn_left",
        "_coups_left_after_current",
        "_inventory",
        "_phase",
        "_seen",
        "burn_rule",
        "cut_card_out",
        "cut_card_rule",
        "decks",
        "exposed",
    )

    def __init__(
        self,
        decks: int = 8,
        burn_rule: BurnRule | None = None,
        cut_card_rule: CutCardRule = CutCardRule.ONE_MORE,
    ) -> None:
        if not MIN_DECKS <= decks <= MAX_DECKS:
            raise ValueError(f"decks must be {MIN_DECKS}-{MAX_DECKS}, not {decks}")
        self.decks = decks
        self.burn_rule = burn_rule or BurnRule()
        self.cut_card_rule = cut_card_rule
        self._inventory: Counter[Card] = Counter()
        self._seen = 0
        self.exposed: Card | None = None
        self._burn_left = 0
        self.cut_card_out = False
        #: After the cut card: how many coups may open after the current one (None before the cut card).
        self._coups_left_after_current: int | None = None
        if self.burn_rule.mode is BurnMode.EXPOSED:
            self._phase = ShoePhase.EXPOSE
        elif self.burn_rule.mode is BurnMode.FIXED and self.burn_rule.fixed_count > 0:
            self._phase = ShoePhase.BURNING
            self._burn_left = self.burn_rule.fixed_count
        else:
            self._phase = ShoePhase.DEALING

    # -- queries -------------------------------------------------------------------------------
    @property
    def phase(self) -> ShoePhase:
        return self._phase

    @property
    def size(self) -> int:
        return 52 * self.decks

    @property
    def cards_seen(self) -> int:
        return self._seen

    @property
    def cards_remaining(self) -> int:
        """Cards still in the shoe by count (never negative, even if foreign cards were drawn)."""
        return max(0, self.size - self._seen)

    @property
    def burn_left(self) -> int:
        return self._burn_left

    @property
    def last_coup_announced(self) -> bool:
        """The cut card is out and the coup now in progress (or next) is the last."""
        return self._coups_left_after_current == 0

    def seen(self, card: Card) -> int:
        return self._inventory[card]

    def remaining_by_rank(self) -> list[int]:
        """The remaining shoe as 13 rank counts (ace..king), by inventory; for the odds engine."""
        per_rank = [4 * self.decks] * 13
        for card, n in self._inventory.items():
            per_rank[int(card.rank) - 1] -= n
        return [max(0, n) for n in per_rank]

    # -- transitions ---------------------------------------------------------------------------
    def draw(self, card: Card) -> tuple[CardUse, InventoryCheck]:
        """Count a card leaving the shoe and say what it is for (exposed, burn, or a coup card)."""
        if self._phase is ShoePhase.CLOSED:
            raise RulesViolation(f"card {card} drawn but the shoe is closed")
        self._inventory[card] += 1
        self._seen += 1
        check = InventoryCheck(card, self._inventory[card], self.decks)
        if self._phase is ShoePhase.EXPOSE:
            self.exposed = card
            self._burn_left = self.burn_rule.burn_count(card)
            self._phase = ShoePhase.BURNING if self._burn_left else ShoePhase.DEALING
            return CardUse.EXPOSED, check
        if self._phase is ShoePhase.BURNING:
            self._burn_left -= 1
            if self._burn_left == 0:
                self._phase = ShoePhase.DEALING
            return CardUse.BURN, check
        return CardUse.COUP, check

    def draw_unknown(self) -> None:
        """Count an unreadable card leaving the shoe (a burn card if the burn is under way)."""
        if self._phase is ShoePhase.CLOSED:
            raise RulesViolation("card drawn but the shoe is closed")
        self._seen += 1
        if self._phase is ShoePhase.BURNING:
            self._burn_left -= 1
            if self._burn_left == 0:
                self._phase = ShoePhase.DEALING

    def identify(self, card: Card) -> InventoryCheck:
        """An unreadable coup card (counted by :meth:`draw_unknown`) is now known: counted as ``card``."""
        self._inventory[card] += 1
        return InventoryCheck(card, self._inventory[card], self.decks)

    def cut_card(self) -> None:
        """The cut card came out: the current coup (or the next, between coups) is last, or one more."""
        if self.cut_card_out:
            raise RulesViolation("the cut card is already out")
        self.cut_card_out = True
        self._coups_left_after_current = 1 if self.cut_card_rule is CutCardRule.ONE_MORE else 0

    def coup_finished(self) -> bool:
        """A coup was declared. Returns True when that was the last coup and the shoe is now closed."""
        if self._coups_left_after_current is None:
            return False
        if self._coups_left_after_current == 0:
            self._phase = ShoePhase.CLOSED
            return True
        self._coups_left_after_current -= 1
        return False

    def close(self) -> None:
        """End the shoe now (the dealer's new-shoe procedure, or the shoe ran out)."""
        self._phase = ShoePhase.CLOSED
