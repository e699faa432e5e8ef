"""The live exact edge: the cost per coup of pricing every offered wager at its betting time.

    .venv/bin/python benchmarks/bench_edges.py [--shoes 20] [--seed 1] [--rules commission]

Deals seeded random eight-deck shoes (exposed burn, cut card about 14 cards from the end) through the pure
table state and times, at each coup's betting time, exactly what the table loop adds after the fan-out:
the edge watch's ``record`` of the input's derived records and ``betting_time`` (the cards left, then
:func:`controller.game.odds.exact_odds` of every offered wager, then the advantage flags). Prints p50, p95
and max per coup, and the one-off start-up cost (the six-card table's build, its time and how much it
raises the process's RSS high-water). Target: <= 1 ms per coup (max included is reported, not judged: a
loaded machine's scheduler makes the max). Card -> LEDs with it on: ``benchmarks/bench_card_led.py`` (the
daemon always runs the edge watch).
"""

from __future__ import annotations

import random
import resource
import time

from harness import common_args, header, load, out, pct, verdict

from controller.game.cards import DECK
from controller.game.edges import EdgeWatch
from controller.game.odds import precompute
from controller.game.records import derived_records
from controller.game.rules import BUILTIN_RULESETS
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

TARGET_MS = 1.0


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--shoes", type=int, default=20, help="shoes dealt (default 20, some 1,600 coups)")
    p.add_argument("--rules", default="commission", choices=sorted(BUILTIN_RULESETS), help="the ruleset")
    args = p.parse_args(argv)
    header("the live exact edge: pricing every offered wager at each coup's betting time")
    ruleset = BUILTIN_RULESETS[args.rules]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    precompute()
    build = time.perf_counter() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    out(f"   start-up: six-card table built in {build * 1000:.0f} ms, RSS high-water +{grown:.1f} MB")

    rng = random.Random(args.seed)
    rules = TableRules(decks=8)
    state = TableState(rules)
    watch = EdgeWatch(0.0, ruleset, rules.decks)
    costs: list[float] = []
    flagged = 0
    for _ in range(args.shoes):
        cards = list(DECK) * 8
        rng.shuffle(cards)
        cut = len(cards) - 14
        events: list[TableInput] = [NewShoePressed()]
        dealt = 0
        while True:
            for event in events:
                notices = state.apply(event)
                t0 = time.perf_counter()
                for kind, body in derived_records(notices, ruleset):
                    watch.record(kind, body)
                priced = False
                if state.due is Due.DEAL and state.coup.cards_dealt == 0 and not state.dummy_hand:
                    before_price = watch.priced
                    flagged += len(watch.betting_time(state.shoe_number, state.coup_number))
                    priced = watch.priced != before_price
                if priced:
                    costs.append(time.perf_counter() - t0)
            due = state.due
            if due is Due.NEW_SHOE or dealt >= len(cards):
                break
            if due is Due.DECLARE:
                events = [DeclarePressed()]
            else:
                events = [CardDrawn(cards[dealt])]
                dealt += 1
                if dealt == cut:
                    events.append(CutCardOut())
    ms = [c * 1000 for c in costs]
    wagers = len(watch.last.ev) if watch.last else 0
    out(f"   {len(ms)} betting times priced over {args.shoes} shoes ({args.rules}, {wagers} wagers each)")
    out(f"   {flagged} advantage and advantage_cleared records at threshold 0.0 (the default margin and step)")
    out(f"   per coup: p50 {pct(ms, 50):.3f} ms, p95 {pct(ms, 95):.3f} ms, max {max(ms):.3f} ms  ({load()})")
    ok = pct(ms, 95) <= TARGET_MS
    out(f"   target <= {TARGET_MS:g} ms per coup (p95): {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
