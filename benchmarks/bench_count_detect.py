"""Betting with the count: how fast the detector catches a counter, and how often it accuses anyone else.

    .venv/bin/python benchmarks/bench_count_detect.py [--shoes 1000] [--seed 1] [--rules commission]

Deals ``--shoes`` seeded eight-deck shoes with the game's own pure code and prices every coup's betting time
with the table's edge engine (hw_sim/counting.py), then feeds the pure detector (floor/counting.py) four
simulated tables per shoe, each seat sitting down at the shoe's first coup and leaving at its end:

* the **null** table: 14 seats (the largest layout), 7 flat bettors and 7 random bettors, every seat playing
  every offered wager (flat: all of them every coup; random: a main wager and each side wager with
  probability 0.4). Every (seat, wager) pair is a seat session's wager the detector tests: 14 x the wagers
  offered per table-shoe. A false alert is any alert on this table; the figure is per 1,000 table-shoes.
* three **counter** tables, one seat per side wager offered (Banker flat, and the side wager at a base of
  1, 2 or 5 units): 10x when the edge is positive, 3x, and "only when positive" (the base then, nothing
  otherwise). Per wager: the share of shoes in which that wager ever turns positive, the share in which the
  counter is caught (of all shoes, and of the shoes with a positive-edge coup), and the coup of the shoe
  (and the positive-edge coups) at which it was caught (median).

Prints the figures and the run time; target: the 10x counter caught within one shoe (in most shoes that give
it a positive edge), fewer than 1 false alert per 1,000 table-shoes. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter as Tally

from controller.game.edges import CoupEdges, offered_bets
from controller.game.odds import precompute
from controller.game.rules import BUILTIN_RULESETS, Bet
from floor.counting import DEFAULT_THRESHOLD, CountState, Detector, Finding
from hw_sim.counting import Bettor, Counter, Flat, Random, dealt_shoes

#: The targets (issue 17): false alerts per 1,000 table-shoes below this ...
FALSE_PER_1000 = 1.0
#: ... and the 10x counter caught in at least this share of the shoes that give its wager MANY positive-edge coups.
CAUGHT_SHARE = 0.9
MANY = 5
SEATS = 14
#: A low line the null table's scores are also held to (Ville: at most 1 in LOOSE of them ever reach it).
LOOSE = 100.0
KINDS = (("10x", 10), ("3x", 3), ("only when positive", 0))


def run_table(detector: Detector, coups: list[CoupEdges], bettors: dict[int, Bettor]) -> list[Finding]:
    state = CountState()
    found: list[Finding] = []
    for i, edges in enumerate(coups):
        stakes = {seat: b.stakes(edges.ev) for seat, b in bettors.items()}
        found += detector.coup(state, edges.shoe, edges.coup, i + 1, edges.ev, stakes)
    return found


def _share(part: int, whole: int) -> str:
    return f"{part / whole:6.1%}" if whole else "     -"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shoes", type=int, default=1000, help="shoes dealt (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rules", default="commission", choices=sorted(BUILTIN_RULESETS), help="the ruleset")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="the detector's alert score")
    args = p.parse_args(argv)
    if args.shoes < 1:
        p.error("--shoes must be at least 1")
    rules = BUILTIN_RULESETS[args.rules]
    detector = Detector(threshold=args.threshold)
    calibration = Detector(threshold=LOOSE)  # how often the null table's scores reach a low line, against Ville's
    print(f"betting with the count: {args.shoes} shoes, {args.rules}, threshold {args.threshold:g}")
    started = time.perf_counter()
    precompute()
    rng = random.Random(args.seed)
    shoes = dealt_shoes(rng, rules)
    sides = [b for b in offered_bets(rules) if b not in (Bet.BANKER, Bet.PLAYER)]
    streams = SEATS * len(offered_bets(rules))
    false_alerts = 0
    loose = 0
    false_by: Tally[str] = Tally()
    with_positive: Tally[str] = Tally()
    caught: dict[str, Tally[str]] = {k: Tally() for k, _ in KINDS}
    caught_pos: dict[str, Tally[str]] = {k: Tally() for k, _ in KINDS}
    at_coup: dict[str, dict[str, list[int]]] = {k: {b.value: [] for b in sides} for k, _ in KINDS}
    at_positive: dict[str, dict[str, list[int]]] = {k: {b.value: [] for b in sides} for k, _ in KINDS}
    coups_dealt = 0
    priced = 0.0
    blank = 0  # shoes in which no side wager ever turns positive
    exposed = 0  # (seat, wager) pairs of the null table whose wager had a positive-edge coup
    with_many: Tally[str] = Tally()
    caught_many: dict[str, Tally[str]] = {k: Tally() for k, _ in KINDS}
    for _ in range(args.shoes):
        t0 = time.perf_counter()
        coups = next(shoes)
        priced += time.perf_counter() - t0
        coups_dealt += len(coups)
        null: dict[int, Bettor] = {}
        for seat in range(1, SEATS + 1):
            null[seat] = Flat() if seat % 2 else Random(random.Random(rng.random()))
        for f in run_table(detector, coups, null):
            false_alerts += 1
            false_by[f.bet] += 1
        loose += len(run_table(calibration, coups, null))
        counts = {b: sum(1 for c in coups if c.ev[b.value] > 0) for b in offered_bets(rules)}
        exposed += SEATS * sum(1 for n in counts.values() if n)
        blank += not any(counts[b] for b in sides)
        for b in sides:
            with_positive[b.value] += counts[b] > 0
            with_many[b.value] += counts[b] >= MANY
        for name, factor in KINDS:
            seats: dict[int, Bettor] = {
                i + 1: Counter(b, factor, random.Random(rng.random())) for i, b in enumerate(sides)
            }
            for f in run_table(detector, coups, seats):
                side = sides[f.seat - 1]
                if f.bet != side.value:
                    continue
                caught[name][side.value] += 1
                caught_pos[name][side.value] += counts[side] > 0
                caught_many[name][side.value] += counts[side] >= MANY
                at_coup[name][side.value].append(f.coup)
                at_positive[name][side.value].append(f.positive)
    took = time.perf_counter() - started
    n = args.shoes
    print(f"   {n} shoes, {coups_dealt} coups dealt and priced ({priced / max(coups_dealt, 1) * 1000:.2f} ms a coup)")
    rate = false_alerts / n * 1000
    print(
        f"   null table: {SEATS} seats (7 flat, 7 random) x {len(offered_bets(rules))} wagers = {streams} seat"
        f" sessions' wagers per table-shoe, {streams * n} tested; {exposed / n:.1f} per table-shoe had a"
        " positive-edge coup (only those can alert)"
    )
    bound = exposed / n / args.threshold * 1000
    by = f" {dict(false_by)}" if false_by else ""
    print(
        f"   false alerts: {false_alerts} in {n} table-shoes = {rate:.2f} per 1,000{by}"
        f" (Ville's bound: at most {bound:.2f} per 1,000 expected)"
    )
    print(f"   shoes in which no side wager ever turns positive (no counter can be seen): {blank / n:.1%}")
    print(
        f"   null scores reaching {LOOSE:g}: {loose} of the {exposed} seat sessions' wagers with a positive-edge coup"
        f" ({loose / max(exposed, 1):.2e}; at most {1 / LOOSE:.0e} by Ville's inequality)"
    )
    print("   counters (Banker flat, one seat per side wager at a base of 1, 2 or 5 units):")
    print(f"   {'wager':<20}{'positive':>9}{f'>={MANY}':>7}  " + "".join(f"{k:>36}" for k, _ in KINDS))
    worst = 1.0
    for b in sides:
        bet = b.value
        cells = []
        for name, _ in KINDS:
            share = caught[name][bet] / n
            cond = _share(caught_pos[name][bet], with_positive[bet])
            many = _share(caught_many[name][bet], with_many[bet])
            med_c = f"{statistics.median(at_coup[name][bet]):3.0f}" if at_coup[name][bet] else "  -"
            med_p = f"{statistics.median(at_positive[name][bet]):2.0f}" if at_positive[name][bet] else " -"
            cells.append(f"{share:6.1%} {cond} {many} c{med_c} +{med_p}")
            if name == "10x" and with_many[bet]:
                worst = min(worst, caught_many[name][bet] / with_many[bet])
        print(
            f"   {bet:<20}{with_positive[bet] / n:>9.1%}{with_many[bet] / n:>7.1%}  "
            + "".join(f"{c:>36}" for c in cells)
        )
    print(
        "   (positive: shoes in which the wager ever turns positive; >=N: with at least N positive-edge coups;"
        " per counter: caught in all shoes, in the positive ones, in those >=N; c: median coup of the shoe at"
        " the alert; +: median positive-edge coups by then)"
    )
    print(f"   run time {took:.1f} s")
    ok_false = rate < FALSE_PER_1000
    ok_caught = worst >= CAUGHT_SHARE
    print(f"   target: < {FALSE_PER_1000:g} false alert per 1,000 table-shoes: {'PASS' if ok_false else 'FAIL'}")
    print(
        f"   target: the 10x counter caught within the shoe in >= {CAUGHT_SHARE:.0%} of the shoes giving its wager"
        f" >= {MANY} positive-edge coups (worst wager {worst:.1%}): {'PASS' if ok_caught else 'FAIL'}"
    )
    return 0 if ok_false and ok_caught else 1


if __name__ == "__main__":
    raise SystemExit(main())
