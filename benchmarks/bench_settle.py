"""Settling at the declare: the cost of settling 9 seats x every offered wager, with the records it writes.

    .venv/bin/python benchmarks/bench_settle.py [--coups 2000] [--seed 1] [--rules commission] [--seats 9]

Each coup: a fresh wager book (:class:`controller.game.wagers.WagerBook`) whose seats hold a bet on every
wager the ruleset offers (Banker and Player together allowed, so none is refused: 81 wagers with 9 seats
and every side bet, each with a random stake), locked at the first card; then timed, exactly what the table
adds at the declare: :meth:`~controller.game.wagers.WagerBook.declared` (each wager settled, the commission
boxes, the payout checks set up) and :func:`controller.game.records.derived_records` of its notices with
the betting time's EVs (the ``settlement`` records). The coups' results come from seeded shuffled
eight-deck shoes. Prints p50, p99 and max, and the lock's cost at the first card beside it (it runs before
that card's lamps). Target: p99 <= 1 ms (issue 16). Card -> LEDs with a reader is the table's benchmark
(``benchmarks/bench_card_led.py``).
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

from harness import common_args, header, load, out, pct, verdict

from controller.game.cards import DECK, Card
from controller.game.chips import Chip, ChipStatus, SpotChips
from controller.game.coup import Coup
from controller.game.records import derived_records
from controller.game.rules import BUILTIN_RULESETS, CommissionCollection
from controller.game.settlement import TableLimits
from controller.game.wagers import MoneyRules, Spot, SpotSeen, WagerBook

TARGET_MS = 1.0


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--coups", type=int, default=2000, help="coups settled (default 2000)")
    p.add_argument("--rules", default="commission", choices=sorted(BUILTIN_RULESETS), help="the ruleset")
    p.add_argument("--seats", type=int, default=9, help="seats betting (default 9)")
    p.add_argument("--shoe-end", action="store_true", help="commission collected at the shoe's end (the boxes)")
    args = p.parse_args(argv)
    header("settling at the declare: every seat's every offered wager, and its records")
    ruleset = BUILTIN_RULESETS[args.rules]
    if args.shoe_end:
        ruleset = replace(ruleset, commission_collection=CommissionCollection.AT_SHOE_END)
    rules = MoneyRules(ruleset, TableLimits(allow_both_sides=True), seats=args.seats)
    spots = [s for s in Spot if s.bet is not None and ruleset.offers(s.bet)]
    evs = {s.value: -0.01 for s in spots}
    rng = random.Random(args.seed)
    shoe: list[Card] = []
    costs: list[float] = []
    locks: list[float] = []
    wagers = 0
    uid = 0
    for coup_number in range(1, args.coups + 1):
        if len(shoe) < 6:
            shoe = list(DECK) * 8
            rng.shuffle(shoe)
        coup = Coup()
        while coup.due is not None:
            coup.deal(shoe.pop())
        result = coup.result()
        book = WagerBook(rules)
        for seat in range(1, args.seats + 1):
            for spot in spots:
                uid += 1
                main = spot.value in ("banker", "player")  # a stake of its own for every wager: no two alike
                cents = 500 * (rng.randrange(5, 1000) if main else rng.randrange(1, 100))
                book.apply(SpotSeen(seat, spot, SpotChips((Chip(f"{uid:016X}", cents, ChipStatus.IN_PLAY),))))
        t_lock = time.perf_counter()
        book.first_card(1, coup_number)
        locks.append(time.perf_counter() - t_lock)
        t0 = time.perf_counter()
        notices = book.declared(1, coup_number, result)
        records = derived_records(notices, ruleset, evs)
        costs.append(time.perf_counter() - t0)
        wagers = len(records)
    ms = [c * 1000 for c in costs]
    out(f"   {len(ms)} coups settled ({args.rules}, {args.seats} seats, {wagers} wagers and records each)")
    out(f"   per declare: p50 {pct(ms, 50):.3f} ms, p99 {pct(ms, 99):.3f} ms, max {max(ms):.3f} ms  ({load()})")
    lock_ms = [c * 1000 for c in locks]
    out(f"   the lock at the first card (not judged): p50 {pct(lock_ms, 50):.3f} ms, p99 {pct(lock_ms, 99):.3f} ms")
    ok = pct(ms, 99) <= TARGET_MS
    out(f"   target <= {TARGET_MS:g} ms per declare (p99): {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
