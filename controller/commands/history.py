"""``shoe-controller history``: the coups in the journal, as a table or JSON Lines.

``--json`` prints one object per coup with the ``replay`` fields (coup, player, banker, player_total,
banker_total, winner, natural, player_pair, banker_pair) plus shoe, ts, void, declared, misdraw,
dummy_hand and record (the journal record id), then any further fields the daemon stored. The journal is
opened read-only, so this runs beside the live daemon. The table (without ``--json``) writes cards and
results in the notation people read (docs/notation.md): ``Banker wins · P 5 – B 9``, ``10♠ 5♥``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from commandline.times import local_time_text
from controller.commands import Subparsers, UsageError
from controller.commands.journal import add_journal_argument, journal_path, open_read_only
from controller.game.notation import hand_text, result_text
from controller.game.records import shape_coup

#: SQLite's largest INTEGER: a larger filter value cannot even be asked of the journal.
_MAX_SQL_INT = 2**63 - 1


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if abs(value) > _MAX_SQL_INT:
        raise argparse.ArgumentTypeError(f"out of range: {text[:40]}")
    return value


def _count(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def register(sub: Subparsers) -> None:
    p = sub.add_parser("history", help="list the coups in the journal", description=__doc__)
    add_journal_argument(p)
    p.add_argument("--last", type=_count, metavar="N", help="only the last N coups")
    p.add_argument("--shoe", type=_whole, metavar="ID", help="only the coups of shoe number ID")
    p.add_argument("--json", action="store_true", help="one JSON object per line per coup")
    p.set_defaults(handler=run)


def _result(c: dict[str, Any]) -> str:
    if c.get("set_aside"):
        return "SET ASIDE"  # cards drawn after the shoe ended: no coup
    if c["void"]:
        return "VOID"
    winner, pt, bt = c["winner"], c["player_total"], c["banker_total"]
    if winner is None:
        return "-"
    return result_text(str(winner), pt, bt)


def _flags(c: dict[str, Any]) -> str:
    flags = []
    if c["natural"]:
        flags.append("natural")
    if c["player_pair"]:
        flags.append("P pair")
    if c["banker_pair"]:
        flags.append("B pair")
    if c["misdraw"] or c["dummy_hand"]:
        flags.append("misdraw: " + hand_text(c["dummy_hand"]) if c["dummy_hand"] else "misdraw")
    if c["void"] and c.get("cards"):
        flags.append("cards: " + hand_text(c["cards"]))
    if not c["declared"] and not c["void"]:
        flags.append("not declared")
    return ", ".join(flags)


def run(args: argparse.Namespace) -> int:
    path = journal_path(args)
    with open_read_only(path) as journal:
        try:
            coups = [shape_coup(c) for c in journal.coups(last=args.last, shoe=args.shoe)]
        except ValueError as exc:
            raise UsageError(f"shoe-controller history: {exc}") from None
    out = sys.stdout
    if args.json:
        for c in coups:
            out.write(json.dumps(c) + "\n")
        return 0
    if not coups:
        print(f"{path}: no coups", file=sys.stderr)
        return 0
    head = f"{'time':<23}  {'shoe':>4} {'coup':>4}  {'result':<23} {'player':<11} {'banker':<11} flags"
    out.write(head + "\n")
    for c in coups:
        ts = local_time_text(str(c["ts"]))
        player = hand_text(c["player"])
        banker = hand_text(c["banker"])
        shoe, coup = f"{c['shoe']!s:>4}", f"{'-' if c['coup'] is None else c['coup']!s:>4}"
        line = f"{ts:<23}  {shoe} {coup}  {_result(c):<23} {player:<11} {banker:<11} {_flags(c)}"
        out.write(line.rstrip() + "\n")
    return 0
