"""Replay of eight-deck shoes through the coup machine: coups per second.

Run: .venv/bin/python benchmarks/bench_replay.py [--shoes 1000]
Deals seeded shuffled eight-deck shoes (no burn, cut card 14 from the back) through
:func:`controller.game.coup.play_coups` and through the full :class:`controller.game.table.TableState`
(with declares), and prints coups per second for each.
"""

from __future__ import annotations

import argparse
import random
import time

from controller.game.cards import DECK
from controller.game.coup import play_coups
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, DeclarePressed, NewShoePressed, TableRules, TableState


def shoes(n: int, seed: int = 1) -> list[list]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        cards = list(DECK) * 8
        rng.shuffle(cards)
        out.append(cards[: len(cards) - 14])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shoes", type=int, default=1000)
    args = ap.parse_args()
    dealt = shoes(args.shoes)
    cards_total = sum(len(s) for s in dealt)

    t0 = time.perf_counter()
    coups = 0
    for cards in dealt:
        results, _ = play_coups(cards)
        coups += len(results)
    t1 = time.perf_counter()
    print(f"coup machine: {args.shoes} eight-deck shoes, {coups} coups, {cards_total} cards in {t1 - t0:.3f} s")
    print(f"coup machine: {coups / (t1 - t0):,.0f} coups/s, {cards_total / (t1 - t0):,.0f} cards/s")

    n = min(args.shoes, 200)
    table = TableState(TableRules(burn_rule=BurnRule(BurnMode.NONE)))
    declared = 0
    t0 = time.perf_counter()
    for cards in dealt[:n]:
        table.apply(NewShoePressed())
        for card in cards:
            for notice in table.apply(CardDrawn(card)):
                if type(notice).__name__ == "CoupComplete":
                    table.apply(DeclarePressed())
                    declared += 1
    t1 = time.perf_counter()
    print(f"table state (with declares, {n} shoes): {declared / (t1 - t0):,.0f} coups/s")


if __name__ == "__main__":
    main()
