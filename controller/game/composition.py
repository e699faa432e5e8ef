"""The cards left in the shoe, counted by rank: the input of the exact odds engine.

A :class:`Composition` is 13 counts, ace first (the order of :data:`~controller.game.cards.RANKS`). It
is frozen and checks itself. Build one for a fresh shoe with :meth:`Composition.decks`, from the text a
dealer or a script writes with :meth:`Composition.parse` (``"A=31,2=32,...,K=32"``), or by taking the
cards that left the shoe away with :meth:`Composition.remove`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from controller.game.cards import RANKS, Card, Rank
from controller.game.errors import GameError

#: Rank symbols accepted by :meth:`Composition.parse` (any case); ``10`` is a synonym of ``T``.
_RANK_BY_KEY: dict[str, Rank] = {r.symbol: r for r in RANKS} | {"10": Rank.TEN}

#: Decks a shoe may be built from with :meth:`Composition.decks`.
MIN_DECKS, MAX_DECKS = 1, 8


class CompositionError(GameError, ValueError):
    """A shoe composition that cannot be: ``part`` is the offending piece of input, ``reason`` why."""

    def __init__(self, part: str, reason: str) -> None:
        super().__init__(f"{part!r}: {reason}")
        self.part = part
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Composition:
    """The remaining shoe as 13 rank counts, ace to king."""

    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.counts, tuple) or len(self.counts) != len(RANKS):
            raise CompositionError(repr(self.counts), f"expected a tuple of {len(RANKS)} rank counts")
        for rank, n in zip(RANKS, self.counts, strict=True):
            if isinstance(n, bool) or not isinstance(n, int):
                raise CompositionError(f"{rank.symbol}={n!r}", "count is not an integer")
            if n < 0:
                raise CompositionError(f"{rank.symbol}={n}", "count is negative")

    # -- constructors -------------------------------------------------------------------------------

    @classmethod
    def decks(cls, n: int) -> Composition:
        """A full shoe of ``n`` decks (1-8): ``4 * n`` cards of every rank."""
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_DECKS <= n <= MAX_DECKS:
            raise CompositionError(str(n), f"number of decks must be an integer {MIN_DECKS}-{MAX_DECKS}")
        return cls((4 * n,) * len(RANKS))

    @classmethod
    def from_mapping(cls, counts: dict[Rank, int]) -> Composition:
        """From ``{rank: count}``; ranks not named count 0."""
        return cls(tuple(counts.get(r, 0) for r in RANKS))

    @classmethod
    def parse(cls, text: str) -> Composition:
        """Parse ``"A=31,2=32,...,K=32"``.

        Keys are ``A``, ``2``-``9``, ``T`` or ``10``, ``J``, ``Q``, ``K`` in any case; a rank not named
        counts 0. A rank named twice, an unknown rank, or a count that is not a non-negative integer
        raises :class:`CompositionError` naming that part.
        """
        counts: dict[Rank, int] = {}
        for raw in text.split(","):
            part = raw.strip()
            if not part:
                if text.strip():
                    raise CompositionError(raw, "empty entry (stray comma?)")
                continue
            key, sep, value = part.partition("=")
            if not sep:
                raise CompositionError(part, "expected RANK=COUNT")
            rank = _RANK_BY_KEY.get(key.strip().upper())
            if rank is None:
                expected = "expected A, 2-9, T or 10, J, Q, K"
                raise CompositionError(part, f"unknown rank {key.strip()!r} ({expected})")
            if rank in counts:
                raise CompositionError(part, f"rank {rank.symbol} given twice")
            value = value.strip()
            if not value.isascii() or not value.isdigit():
                raise CompositionError(part, f"count {value!r} is not a non-negative integer")
            counts[rank] = int(value)
        return cls.from_mapping(counts)

    # -- queries ------------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        """Cards left in the shoe."""
        return sum(self.counts)

    def count(self, rank: Rank) -> int:
        return self.counts[RANKS.index(rank)]

    def values_counts(self) -> tuple[int, ...]:
        """Cards left by baccarat value 0-9 (value 0 gathers tens, jacks, queens and kings)."""
        by_value = [0] * 10
        for rank, n in zip(RANKS, self.counts, strict=True):
            by_value[rank.points] += n
        return tuple(by_value)

    def remove(self, card: Card | Rank) -> Composition:
        """The shoe after this card left it; a rank that is used up raises :class:`CompositionError`."""
        rank = card.rank if isinstance(card, Card) else card
        i = RANKS.index(rank)
        if self.counts[i] == 0:
            raise CompositionError(str(card), f"no {rank.symbol} left in the shoe")
        return Composition((*self.counts[:i], self.counts[i] - 1, *self.counts[i + 1 :]))

    def remove_all(self, cards: Iterable[Card | Rank]) -> Composition:
        """The shoe after all these cards left it."""
        comp = self
        for card in cards:
            comp = comp.remove(card)
        return comp

    def items(self) -> Iterator[tuple[Rank, int]]:
        return zip(RANKS, self.counts, strict=True)

    def __str__(self) -> str:
        """The :meth:`parse` form, every rank named."""
        return ",".join(f"{r.symbol}={n}" for r, n in self.items())
