"""Shoes and bettors for the count detector's figures (floor/counting.py; benchmarks/bench_count_detect.py).

A direct simulation, without the table process: a seeded eight-deck shoe is shuffled and dealt by the game's
own pure table state (controller/game/table.py: the burn, the tableau, the cut card), and each coup's betting
time is priced by the same edge engine the table runs (controller/game/edges.py), so every coup comes with
every offered wager's exact player EV. The bettors then choose their stakes from what they may know:

* :class:`Flat`: the same stake on every wager it plays, every coup (no variance at all);
* :class:`Random`: a main wager at a random level and each side wager with probability 0.4 at a random level
  (as ``shoe-sim --players``' side bettor), independent of the cards;
* :class:`Counter`: a main wager, and on its side wager a base stake (1, 2 or 5 units at random, as a
  player's stakes vary) that it multiplies by ``factor`` when the wager's live edge is positive;
  ``factor=0`` is the counter that bets the side wager *only* when it is positive.

Pure: seeded generators, no clock, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from controller.game.cards import DECK
from controller.game.edges import CoupEdges, EdgeTracker
from controller.game.records import derived_records
from controller.game.rules import Bet, Ruleset
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
)

#: Cents per betting unit (the side wagers' minimum at the simulated table).
UNIT = 500
#: The main wager's stake for every bettor that plays one.
MAIN = 2500


def dealt_shoes(
    rng: random.Random, rules: Ruleset, decks: int = 8, cut_from_end: int = 14
) -> Iterator[list[CoupEdges]]:
    """Endless shoes: each shuffled by ``rng``, dealt to its cut card, as the list of its coups' betting-time
    edges (every offered wager's player EV, by wager name)."""
    table = TableState(TableRules(decks=decks))
    tracker = EdgeTracker(rules, decks)
    while True:
        cards = list(DECK) * decks
        rng.shuffle(cards)
        cut = len(cards) - cut_from_end
        events: list[TableInput] = [NewShoePressed()]
        dealt = 0
        coups: list[CoupEdges] = []
        while True:
            for event in events:
                notices = table.apply(event)
                for kind, body in derived_records(notices, rules):
                    tracker.feed(kind, body)
                if table.due is Due.DEAL and table.coup.cards_dealt == 0 and not table.dummy_hand:
                    edges = tracker.edges(table.coup_number)
                    if edges is not None and (not coups or coups[-1].coup != edges.coup):
                        coups.append(edges)
            if table.due is Due.NEW_SHOE or dealt >= len(cards):
                break
            if table.due is Due.DECLARE:
                events = [DeclarePressed()]
            else:
                events = [CardDrawn(cards[dealt])]
                dealt += 1
                if dealt == cut:
                    events.append(CutCardOut())
        yield coups


class Bettor:
    """A seat's stakes (cents by wager name) at one coup, from that coup's edges."""

    def stakes(self, edges: Mapping[str, float]) -> dict[str, int]:
        raise NotImplementedError


@dataclass
class Flat(Bettor):
    """The same stake on the main wager and on every offered side wager, every coup."""

    main: Bet = Bet.BANKER
    side: int = UNIT

    def stakes(self, edges: Mapping[str, float]) -> dict[str, int]:
        out = {bet: self.side for bet in edges if bet not in (Bet.BANKER.value, Bet.PLAYER.value)}
        out[self.main.value] = MAIN
        return out


@dataclass
class Random(Bettor):
    """A random main wager and random side wagers at random levels, whatever the cards."""

    rng: random.Random

    def stakes(self, edges: Mapping[str, float]) -> dict[str, int]:
        main = self.rng.choice((Bet.BANKER.value, Bet.PLAYER.value))
        out = {main: MAIN * self.rng.choice((1, 2, 4, 10))}
        for bet in edges:
            if bet not in (Bet.BANKER.value, Bet.PLAYER.value) and self.rng.random() < 0.4:
                out[bet] = UNIT * self.rng.choice((1, 2, 5, 10))
        return out


@dataclass
class Counter(Bettor):
    """Banker flat, and ``bet`` at a base of 1, 2 or 5 units, times ``factor`` when its edge is positive
    (``factor=0``: the side wager only when positive, at the base)."""

    bet: Bet
    factor: int
    rng: random.Random

    def stakes(self, edges: Mapping[str, float]) -> dict[str, int]:
        out = {Bet.BANKER.value: MAIN}
        base = UNIT * self.rng.choice((1, 2, 5))
        positive = edges.get(self.bet.value, -1.0) > 0
        if self.factor == 0:
            if positive:
                out[self.bet.value] = base
        else:
            out[self.bet.value] = base * self.factor if positive else base
        return out
