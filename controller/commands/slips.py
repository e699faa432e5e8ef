"""``shoe-controller slips``: the table's rating slips from measured play, from its journal.

Reads the journal's ``player_in``, ``player_out``, ``wager``, ``settlement``, ``coup``, ``shoe`` and
``buy_in`` records (the players at the seats, record version 4) and prints the closed rating slips that
:func:`controller.game.slips.rating_slips` makes of them: per player, visit and table, the start, end, paused
and rated seconds, coups, decisions and the measured decisions per hour, handle, average bet (per coup played
and per decision), the exact theo (the wagers' ``theo_cents``) beside the usual estimate (its assumptions
named), the player's win (``win_cents``, + when the player won) and the buy-ins. ``shoe-floor slips`` makes the
floor's with the same function: for one table's records its lines are these plus ``table``.

``--json`` prints one JSON object per line per slip (sorted keys, in the order the slips started); without it a
table in dollars. ``--shoe N`` keeps the slips that played in shoe N. ``--open`` adds the visits still seated
at the journal's end, ended there and marked ``open``. The journal is opened read-only: this runs beside the
live daemon and on a read-only copy.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from controller.commands import Subparsers, UsageError
from controller.commands.history import _whole
from controller.commands.journal import add_journal_argument, journal_path, open_read_only
from controller.game.records import TableRecord
from controller.game.slips import (
    DEFAULT_DECISIONS_PER_HOUR,
    DEFAULT_HOUSE_EDGE,
    PAUSE_WINDOW_SECONDS,
    SLIP_KINDS,
    Estimate,
    rating_slips,
    slip_line,
    slips_table,
)
from controller.journal import Journal

_KINDS = frozenset(k.value for k in SLIP_KINDS)


def add_slip_options(p: argparse.ArgumentParser) -> None:
    """The options both slip commands take (the pause window, the estimate's assumptions, ``--open``)."""
    p.add_argument(
        "--window-minutes",
        type=_minutes,
        default=PAUSE_WINDOW_SECONDS // 60,
        metavar="M",
        help=f"a player back within M minutes continues the visit (default {PAUSE_WINDOW_SECONDS // 60})",
    )
    p.add_argument(
        "--decisions-per-hour",
        type=_whole,
        default=DEFAULT_DECISIONS_PER_HOUR,
        metavar="N",
        help=f"the usual estimate's assumed pace (default {DEFAULT_DECISIONS_PER_HOUR})",
    )
    p.add_argument(
        "--house-edge",
        type=_edge,
        default=DEFAULT_HOUSE_EDGE,
        metavar="F",
        help=f"the usual estimate's assumed house edge, a fraction (default {DEFAULT_HOUSE_EDGE})",
    )
    p.add_argument("--open", action="store_true", help="also the visits still seated at the end, marked open")


def _edge(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
    if not 0 <= value <= 0.5:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 0.5, not {text[:40]}")
    return value


def _minutes(text: str) -> int:
    if not text.isdigit() or int(text) > 24 * 60:
        raise argparse.ArgumentTypeError(f"must be a whole number of minutes (0-1440), got {text[:40]!r}")
    return int(text)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("slips", help="the rating slips from measured play, from the journal", description=__doc__)
    add_journal_argument(p)
    p.add_argument("--shoe", type=_whole, metavar="N", help="only the slips that played in shoe N")
    p.add_argument("--json", action="store_true", help="one JSON object per line per slip")
    add_slip_options(p)
    p.set_defaults(handler=run)


def _records(journal: Journal) -> Iterator[TableRecord]:
    for record in journal.records():
        if record.kind in _KINDS:
            yield record.for_floor("")


def run(args: argparse.Namespace) -> int:
    path = journal_path(args)
    estimate = Estimate(args.decisions_per_hour, args.house_edge)  # a ValueError is one line (controller.cli)
    with open_read_only(path) as journal:
        try:
            slips = rating_slips(
                _records(journal), window_seconds=args.window_minutes * 60, estimate=estimate, include_open=args.open
            )
        except (ValueError, KeyError, TypeError) as exc:  # a record this version cannot read
            raise UsageError(f"shoe-controller slips: {path}: {exc!r:.120}") from None
    if args.shoe is not None:
        slips = [s for s in slips if s.shoes[0] <= args.shoe <= s.shoes[1]]
    if args.json:
        for slip in slips:
            sys.stdout.write(slip_line(slip) + "\n")
        return 0
    if not slips:
        which = "" if args.shoe is None else f" in shoe {args.shoe}"
        print(f"{path}: no closed rating slips{which}", file=sys.stderr)
        return 0
    sys.stdout.write("".join(line + "\n" for line in slips_table(slips)))
    return 0
