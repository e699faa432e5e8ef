"""``shoe-controller tray``: the chip tray coup by coup, from the table's journal.

One line per declared coup (:func:`controller.game.tray_lines.tray_lines`): ``shoe``, ``coup``, ``flow_cents``
(what the coup moved into the tray, - out: losers and commission in, payouts and chips sold out),
``expected_cents`` (the tray it must hold after the coup), and the table's count of it when it has a tray reader:
``counted_cents``, ``variance_cents`` (the coup's own: - the tray short) and ``denominations`` (the count per
denomination). Without a tray reader the count and the variance are null (``expected_cents`` too: there is no
count to begin it at), and the flows are still there to reconcile a count entered by hand.

``--json`` prints one JSON object per line (sorted keys); without it a table in dollars. ``--shoe N`` keeps shoe
N's coups. The journal is opened read-only: this runs beside the live daemon and on a read-only copy.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from controller.commands import Subparsers, UsageError
from controller.commands.history import _whole
from controller.commands.journal import add_journal_argument, journal_path, open_read_only
from controller.game.notation import money_text
from controller.game.tray_lines import TRAY_LINE_KINDS, TrayLine, tray_lines
from controller.journal import Journal


def register(sub: Subparsers) -> None:
    p = sub.add_parser("tray", help="the chip tray coup by coup, from the journal", description=__doc__)
    add_journal_argument(p)
    p.add_argument("--shoe", type=_whole, metavar="N", help="only shoe N's coups")
    p.add_argument("--json", action="store_true", help="one JSON object per line per coup")
    p.set_defaults(handler=run)


def _records(journal: Journal) -> Iterator[tuple[str, dict[str, Any]]]:
    for record in journal.records():
        if record.kind in TRAY_LINE_KINDS:
            yield record.kind, record.data()


def _money(cents: int | None) -> str:
    return "-" if cents is None else money_text(cents)


def run(args: argparse.Namespace) -> int:
    path = journal_path(args)
    with open_read_only(path) as journal:
        try:
            lines = tray_lines(_records(journal))
        except (ValueError, KeyError, TypeError) as exc:  # a record this version cannot read
            raise UsageError(f"shoe-controller tray: {path}: {exc!r:.120}") from None
    if args.shoe is not None:
        lines = [line for line in lines if line.shoe == args.shoe]
    if args.json:
        for line in lines:
            sys.stdout.write(json.dumps(line.to_dict(), sort_keys=True) + "\n")
        return 0
    if not lines:
        which = "" if args.shoe is None else f" in shoe {args.shoe}"
        print(f"{path}: no coup declared{which}", file=sys.stderr)
        return 0
    sys.stdout.write(_table(lines))
    return 0


def _table(lines: list[TrayLine]) -> str:
    rows = [("SHOE", "COUP", "FLOW", "EXPECTED", "COUNTED", "VARIANCE")]
    for line in lines:
        rows.append(
            (
                str(line.shoe),
                str(line.coup),
                money_text(line.flow_cents),
                _money(line.expected_cents),
                _money(line.counted_cents),
                _money(line.variance_cents),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) + "\n" for row in rows)
