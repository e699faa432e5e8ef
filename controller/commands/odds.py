"""``shoe-controller odds``: exact probabilities and the house edge of every bet for a shoe composition."""

from __future__ import annotations

import argparse
import json

from controller.commands import Subparsers, UsageError, add_rules_argument
from controller.game.composition import Composition
from controller.game.odds import exact_odds
from controller.rulebook import get_ruleset


def register(sub: Subparsers) -> None:
    p = sub.add_parser("odds", help="exact odds and house edge of every bet", description=__doc__)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--decks", type=int, metavar="N", help="a full shoe of N decks (1-8; default 8)")
    source.add_argument(
        "--remaining",
        metavar="A=N,2=N,...,K=N",
        help="the remaining shoe as rank counts (A, 2-9, T or 10, J, Q, K; a missing rank counts 0)",
    )
    add_rules_argument(p)
    p.add_argument("--tie-pays", type=int, choices=(8, 9), default=8, help="Tie pays 8:1 or 9:1 (default 8)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.remaining is not None:
        comp = Composition.parse(args.remaining)
    else:
        decks = 8 if args.decks is None else args.decks
        if not 1 <= decks <= 8:
            raise UsageError(f"shoe-controller odds: --decks must be 1-8, not {decks}")
        comp = Composition.decks(decks)
    rules = get_ruleset(args.rules, tie_pays=args.tie_pays)
    report = exact_odds(comp, rules)
    if args.json:
        print(json.dumps(report.to_dict()))
        return 0
    p = report.probabilities
    print(f"{comp.total} cards, {args.rules} rules, tie pays {args.tie_pays}:1")
    if report.note:
        print(f"note: {report.note}")
    print(f"  P(banker) {p.banker:.6f}   P(player) {p.player:.6f}   P(tie) {p.tie:.6f}")
    print(f"  {'bet':<22}{'EV per unit':>14}{'house edge':>13}")
    for bet, odds in report.bets.items():
        edge = odds.house_edge * 100 or 0.0  # no "-0.0000 %"
        print(f"  {bet.value:<22}{odds.ev or 0.0:>+14.6f}{edge:>12.4f}%")
    return 0
