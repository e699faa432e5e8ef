"""``shoe-controller demo``: the demo table. Starts the software shoe on a pseudo-terminal and the daemon
with mock GPIO pins, and shows the table live in the terminal until interrupted or the shoes are dealt.

With ``--players N`` (7 by default; 0 for none) the simulator also seats N players betting by strategy on a
simulated bet-spot reader (a second pseudo-terminal, its chip registry written by the simulator), the table
locks, settles and checks every payout, and the board serves the dealer screen beside the scoreboard
(``--dealer``, http://127.0.0.1:8081/ by default)."""

from __future__ import annotations

import argparse

from controller.commands import Subparsers, UsageError
from controller.commands.run import check_journal_file
from controller.game.wagers import MAX_SEATS
from demo.floor import MAX_TABLES
from demo.table import DEFAULT_DEALER

#: Slowest pace the demo accepts, in seconds per card (also refuses nan and infinity).
MAX_PACE = 3600.0
#: Players at the demo table (and at each table of the floor demo) unless --players says otherwise.
DEFAULT_PLAYERS = 7


def register(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help="the demo table on the built-in simulated shoe", description=__doc__)
    p.add_argument("--shoes", type=int, default=1, metavar="N", help="shoes to deal, then stop (default 1)")
    p.add_argument("--seed", type=int, default=None, metavar="N", help="shuffle seed (default: random)")
    p.add_argument("--pace", default="real", help="real (about a card a second), fast, or SECONDS per card")
    p.add_argument("--decks", type=int, default=8, metavar="N", help="decks in the shoe (default 8)")
    p.add_argument("--dialect", choices=("binary", "ascii"), default="binary", help="the shoe's protocol")
    p.add_argument("--journal", metavar="PATH", help="keep the journal here (default: a temporary file)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME=RATE", help="simulator fault (repeatable)")
    p.add_argument(
        "--scoreboard", default="127.0.0.1:8080", metavar="HOST:PORT", help="scoreboard address (default %(default)s)"
    )
    p.add_argument("--reveal", choices=("on_read", "on_declare"), default="on_read", help="on_declare: squeeze game")
    p.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help=f"simulated players betting on a bet-spot reader (0-14; default {DEFAULT_PLAYERS}, and 0 with"
        " --dialect ascii; 0: no reader)",
    )
    p.add_argument(
        "--dealer",
        default=None,
        metavar="HOST:PORT",
        help=f"dealer screen address (default {DEFAULT_DEALER}; with --tables N, N ports from here, by default the"
        " ports right after the scoreboards')",
    )
    floor = p.add_argument_group(
        "a floor on one machine",
        "--tables N deals at N tables, each with --players players (scoreboards on consecutive ports from"
        " --scoreboard, dealer screens on the ports after them; port 0: free ports), each publishing to a private"
        " Mosquitto, archived by shoe-floor serve into SQLite",
    )
    floor.add_argument("--tables", type=int, metavar="N", help=f"simulated tables on the floor (1-{MAX_TABLES})")
    floor.add_argument(
        "--dir", metavar="PATH", help="keep the floor's journals, archive and logs here (default: temporary)"
    )
    floor.add_argument(
        "--floor-bind",
        default="127.0.0.1:8070",
        metavar="HOST:PORT",
        help="shoe-floor serve --bind (default %(default)s)",
    )
    p.set_defaults(handler=run)


def _check(args: argparse.Namespace) -> None:
    if args.shoes < 1:
        raise UsageError("shoe-controller demo: --shoes must be at least 1")
    if not 1 <= args.decks <= 8:
        raise UsageError("shoe-controller demo: --decks must be 1-8")
    if args.players is None:
        args.players = 0 if args.dialect == "ascii" else DEFAULT_PLAYERS
    if not 0 <= args.players <= MAX_SEATS:
        raise UsageError(f"shoe-controller demo: --players must be 0-{MAX_SEATS}")
    if args.players and args.dialect == "ascii":
        raise UsageError("shoe-controller demo: --players needs the binary dialect (--players 0 with --dialect ascii)")
    if args.pace not in ("real", "fast"):
        try:
            if not 0 <= float(args.pace) <= MAX_PACE:
                raise ValueError
        except ValueError:
            raise UsageError(
                f"shoe-controller demo: --pace must be real, fast or 0-{MAX_PACE:g} seconds, not {args.pace!r}"
            ) from None


def run(args: argparse.Namespace) -> int:
    _check(args)
    if args.tables is not None:
        from demo import floor

        return floor.run(args)
    if args.dir is not None:
        raise UsageError("shoe-controller demo: --dir is for the floor demo (--tables N)")
    if args.journal:
        check_journal_file(args.journal)
    from demo import table

    return table.run(args)
