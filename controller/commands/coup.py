"""``shoe-controller coup CARD...``: the coup those cards make, as text or one JSON object."""

from __future__ import annotations

import argparse
import json

from controller.commands import Subparsers, UsageError
from controller.game.cards import parse_cards
from controller.game.coup import Coup


def register(sub: Subparsers) -> None:
    p = sub.add_parser("coup", help="show the coup a sequence of cards makes", description=__doc__)
    p.add_argument("cards", nargs="+", metavar="CARD", help="card tokens in shoe order, e.g. 2H 3S AD KC 8D")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    cards = parse_cards(args.cards)
    coup = Coup()
    for i, card in enumerate(cards):
        if coup.complete:
            extra = " ".join(c.token for c in cards[i:])
            raise UsageError(f"shoe-controller coup: the coup is complete before {extra}; no card is due")
        coup.deal(card)
    if not coup.complete:
        assert coup.due is not None
        raise UsageError(f"shoe-controller coup: incomplete coup: {coup.due.description} is due")
    result = coup.result()
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.describe())
    return 0
