"""Exact odds of the next coup: the six-card table against card-by-card enumeration, time per shoe.

Run: .venv/bin/python benchmarks/bench_odds.py [--shoes 2000] [--enumerated 5] [--seed 1]
Prints the one-off cost of building the six-card table, then the median and 95th-percentile time of
:func:`controller.game.odds.exact_odds` (all nine wagers) over seeded random depletions of an eight-deck
shoe, the same for :func:`controller.game.odds.enumerate_odds` over a few of them, and the ratio.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from controller.game.cards import RANKS
from controller.game.composition import Composition
from controller.game.odds import enumerate_odds, exact_odds, precompute
from controller.game.rules import COMMISSION, EZ, SUPER6, Bet


def depleted_shoes(n: int, seed: int) -> list[Composition]:
    """Eight-deck shoes with a random 0-400 cards dealt (at least 16 left), all distinct draws."""
    rng = random.Random(seed)
    shoe = [r for r in RANKS for _ in range(32)]
    out = []
    for _ in range(n):
        left = rng.sample(shoe, len(shoe) - rng.randint(0, 400))
        out.append(Composition.from_mapping({r: left.count(r) for r in RANKS}))
    return out


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shoes", type=int, default=2000, help="compositions timed with exact_odds")
    ap.add_argument("--enumerated", type=int, default=5, help="compositions timed with enumerate_odds")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rulesets = (COMMISSION, EZ, SUPER6)

    t0 = time.perf_counter()
    precompute()
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    for rules in rulesets:  # first query per ruleset folds the pay table into the six-card table
        exact_odds(Composition.decks(8), rules)
    first_pricing = (time.perf_counter() - t0) / len(rulesets)

    shoes = depleted_shoes(args.shoes, args.seed)
    fast: list[float] = []
    for i, comp in enumerate(shoes):
        rules = rulesets[i % len(rulesets)]
        t0 = time.perf_counter()
        exact_odds(comp, rules)
        fast.append(time.perf_counter() - t0)

    # The enumeration remembers its last shoes; these were never enumerated, so every call is cold.
    slow: list[float] = []
    worst = 0.0
    for comp in depleted_shoes(args.enumerated, args.seed + 1):
        t0 = time.perf_counter()
        ref = enumerate_odds(comp, COMMISSION)
        slow.append(time.perf_counter() - t0)
        got = exact_odds(comp, COMMISSION)
        worst = max(worst, *(abs(got.bets[b].ev - ref.bets[b].ev) for b in Bet))

    fast_med, slow_med = statistics.median(fast), statistics.median(slow)
    print("exact odds, all 9 wagers, random depletions of an 8-deck shoe")
    print(f"  six-card table build (once per process):   {build * 1e3:9.1f} ms")
    print(f"  first query per ruleset (pay table fold):   {first_pricing * 1e3:9.2f} ms")
    print(f"  exact_odds      compositions:               {len(fast):9d}")
    print(f"  exact_odds      median per composition:     {fast_med * 1e3:9.3f} ms")
    print(f"  exact_odds      p95 per composition:        {percentile(fast, 0.95) * 1e3:9.3f} ms")
    print(f"  enumerate_odds  compositions:               {len(slow):9d}")
    print(f"  enumerate_odds  median per composition:     {slow_med * 1e3:9.1f} ms")
    print(f"  enumerate_odds  p95 per composition:        {percentile(slow, 0.95) * 1e3:9.1f} ms")
    print(f"  speed-up (median enumerate / median exact): {slow_med / fast_med:9.0f} x")
    print(f"  largest EV difference between the engines:  {worst:9.1e}")


if __name__ == "__main__":
    main()
