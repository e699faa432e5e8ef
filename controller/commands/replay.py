"""``shoe-controller replay [FILE|-]``: play card tokens (shoe order, no burn cards) as consecutive coups."""

from __future__ import annotations

import argparse
import json
import sys

from controller.commands import Subparsers, UsageError, add_rules_argument, read_tokens
from controller.game.cards import parse_cards
from controller.game.coup import play_coups
from controller.game.notation import hand_text


def register(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="play a sequence of cards as consecutive coups", description=__doc__)
    p.add_argument("source", nargs="?", default="-", metavar="FILE", help="file of card tokens, or - for stdin")
    p.add_argument("--json", action="store_true", help="one JSON object per line per coup")
    add_rules_argument(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    tokens = read_tokens(args.source, prog="shoe-controller replay")
    try:
        cards = parse_cards(tokens)
    except ValueError as exc:  # CardError: a token that is not a card
        name = "stdin" if args.source == "-" else args.source
        raise UsageError(f"shoe-controller replay: {name}: {exc}") from None
    results, leftover = play_coups(cards)
    out = sys.stdout
    for number, result in enumerate(results, start=1):
        if args.json:
            out.write(json.dumps({"coup": number, **result.to_dict()}) + "\n")
        else:
            out.write(f"{number:4d}  {result.describe()}\n")
    if leftover:
        rest = hand_text(c.token for c in leftover)
        print(f"shoe-controller replay: {len(leftover)} card(s) left over, no complete coup: {rest}", file=sys.stderr)
    return 0
