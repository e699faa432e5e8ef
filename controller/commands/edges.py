"""``shoe-controller edges``: every offered wager's exact player expectation at each coup's betting time.

From the journal alone (each shoe's start record carries the table's ruleset), with the same
:func:`controller.game.edges.shoe_edges` the table prices its ``advantage`` records with, so the numbers are
identical. ``--json`` prints one object per coup: ``shoe``, ``coup``, ``cards_left`` and one field per wager
(its EV per unit staked: 0.0123 is +1.23 % for the player). ``--shoe N`` keeps one shoe. A shoe whose start
record carries no ruleset (a journal older than record version 2), or a first shoe dealt without NEW SHOE,
is priced with the ruleset and decks of ``--config FILE`` when given, else left out (said on stderr). The
journal is opened read-only, so this runs beside the live daemon.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from controller.commands import Subparsers, UsageError
from controller.commands.history import _whole
from controller.commands.journal import add_journal_argument, journal_path, open_read_only
from controller.config import load_config
from controller.game.edges import CoupEdges, shoe_edges
from controller.game.records import RecordKind
from controller.journal import Journal


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "edges", help="each wager's exact player EV at every coup's betting time, from the journal", description=__doc__
    )
    add_journal_argument(p)
    p.add_argument("--shoe", type=_whole, metavar="N", help="only the coups of shoe number N")
    p.add_argument("--json", action="store_true", help="one JSON object per line per coup")
    p.set_defaults(handler=run)


#: Record kinds the edges are computed from (the rest are not read at all).
_KINDS = (RecordKind.SHOE, RecordKind.BURN, RecordKind.COUP)


def _records(journal: Journal) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for record in journal.records():
        if record.kind in _KINDS:
            try:
                yield record.kind, record.data()
            except ValueError as exc:
                raise UsageError(f"shoe-controller edges: {exc}") from None


def run(args: argparse.Namespace) -> int:
    path = journal_path(args)
    rules = decks = None
    if args.config is not None:
        settings = load_config(args.config)
        rules, decks = settings.ruleset(), settings.table.decks
    with open_read_only(path) as journal:
        try:
            rows = [e for e in shoe_edges(_records(journal), rules, decks) if args.shoe is None or e.shoe == args.shoe]
            shoes = _shoes(journal)
        except (ValueError, KeyError, TypeError) as exc:  # a record this version cannot read
            raise UsageError(f"shoe-controller edges: {path}: {exc!r:.120}") from None
    priced = {e.shoe for e in rows}
    unpriced = sorted(s for s in shoes if s not in priced and (args.shoe is None or s == args.shoe))
    if unpriced and rules is None:
        listed = ", ".join(map(str, unpriced))
        why = "no ruleset recorded; price them with the table's --config FILE"
        print(f"{path}: shoe(s) {listed}: {why}", file=sys.stderr)
    out = sys.stdout
    if args.json:
        for e in rows:
            out.write(json.dumps(e.to_dict()) + "\n")
        return 0
    if not rows:
        print(f"{path}: no coups to price", file=sys.stderr)
        return 0
    _table(rows)
    return 0


def _shoes(journal: Journal) -> set[int]:
    """Shoe numbers that have coups in the journal."""
    return {int(c["shoe"]) for c in journal.coups() if c.get("coup") is not None and c.get("shoe") is not None}


def _table(rows: list[CoupEdges]) -> None:
    """One line per coup, one column per wager: EV per unit staked in percent, ``*`` where the player has it."""
    out = sys.stdout
    bets: list[str] = []
    for e in rows:
        bets += [b for b in e.ev if b not in bets]
    width = max(8, *(len(b) for b in bets))
    out.write(f"{'shoe':>4} {'coup':>4} {'left':>4}  " + " ".join(f"{b:>{width}}" for b in bets) + "\n")
    for e in rows:
        cells = []
        for b in bets:
            ev = e.ev.get(b)
            cells.append(f"{'-':>{width}}" if ev is None else f"{100 * ev:+{width - 2}.3f}%{'*' if ev >= 0 else ' '}")
        out.write(f"{e.shoe:>4} {e.coup:>4} {e.cards_left:>4}  " + " ".join(cells).rstrip() + "\n")
    out.write("EV per unit staked for the player, in %; * the player has the edge (EV >= 0)\n")
