"""``shoe-controller settle``: every settled wager and every seat's commission box, from the journal.

Reads the journal's ``settlement`` and ``commission`` records (written when the table has a bet-spot reader,
record version 3). ``--json`` prints one object per settled wager, in the order the table settled them:
``shoe``, ``coup``, ``seat``, ``bet``, ``stake``, ``outcome`` (``win``, ``lose``, ``push``), ``win`` (paid
before commission), ``commission``, ``net`` (all integer cents; with commission collected at the shoe's end
``net`` leaves out the commission owed, which goes to the seat's box); and, where a shoe's commission boxes
closed (at the next shoe's start, or when a leaving seat paid), one object per seat with ``shoe``, ``seat``,
``commission_box`` (what the box owed) and ``collected``, after that shoe's wagers. ``--shoe N`` keeps one
shoe. Without ``--json`` a table in dollars. The journal is opened read-only, so this runs beside the live
daemon; a journal without wagers (no reader, or older than record version 3) prints nothing but a line on
stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.commands import Subparsers, UsageError
from controller.commands.history import _whole
from controller.commands.journal import add_journal_argument, journal_path, open_read_only
from controller.game.notation import money_text
from controller.game.records import RecordKind
from controller.journal import Journal

#: A settled wager's fields in ``--json`` order.
WAGER_FIELDS = ("shoe", "coup", "seat", "bet", "stake", "outcome", "win", "commission", "net")
#: A seat's commission box line's fields in ``--json`` order.
BOX_FIELDS = ("shoe", "seat", "commission_box", "collected")


def register(sub: Subparsers) -> None:
    p = sub.add_parser("settle", help="every settled wager and commission box, from the journal", description=__doc__)
    add_journal_argument(p)
    p.add_argument("--shoe", type=_whole, metavar="N", help="only shoe number N")
    p.add_argument("--json", action="store_true", help="one JSON object per line per wager and per box")
    p.set_defaults(handler=run)


@dataclass
class _Shoe:
    wagers: list[dict[str, Any]] = field(default_factory=list)
    #: seat -> [owed, collected], over every box of the seat that closed for this shoe
    boxes: dict[int, list[int]] = field(default_factory=dict)


def _int(body: Mapping[str, Any], name: str) -> int:
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} is not an integer: {value!r:.40}")
    return value


def _records(journal: Journal) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for record in journal.records():
        if record.kind in (RecordKind.SETTLEMENT, RecordKind.COMMISSION):
            yield record.kind, record.data()


def collect(records: Iterator[tuple[str, Mapping[str, Any]]]) -> dict[int, _Shoe]:
    """The settled wagers and the closed boxes, by shoe, in journal order."""
    shoes: dict[int, _Shoe] = {}
    for kind, body in records:
        shoe = shoes.setdefault(_int(body, "shoe"), _Shoe())
        if kind == RecordKind.SETTLEMENT:
            line = {name: body[name] for name in WAGER_FIELDS}
            for name in ("shoe", "coup", "seat", "stake", "win", "commission", "net"):
                _int(body, name)
            shoe.wagers.append(line)
        else:
            box = shoe.boxes.setdefault(_int(body, "seat"), [0, 0])
            box[0] += _int(body, "owed")
            box[1] += _int(body, "collected")
    return shoes


def run(args: argparse.Namespace) -> int:
    path = journal_path(args)
    with open_read_only(path) as journal:
        try:
            shoes = collect(_records(journal))
        except (ValueError, KeyError, TypeError) as exc:  # a record this version cannot read
            raise UsageError(f"shoe-controller settle: {path}: {exc!r:.120}") from None
    if args.shoe is not None:
        shoes = {n: s for n, s in shoes.items() if n == args.shoe}
    if not any(s.wagers or s.boxes for s in shoes.values()):
        which = "" if args.shoe is None else f" in shoe {args.shoe}"
        print(f"{path}: no settled wagers{which}", file=sys.stderr)
        return 0
    out = sys.stdout
    for number, shoe in sorted(shoes.items()):
        boxes = [
            {"shoe": number, "seat": seat, "commission_box": owed, "collected": collected}
            for seat, (owed, collected) in sorted(shoe.boxes.items())
        ]
        if args.json:
            for line in [*shoe.wagers, *boxes]:
                out.write(json.dumps(line) + "\n")
            continue
        _table(number, shoe.wagers, boxes)
    return 0


def _table(number: int, wagers: list[dict[str, Any]], boxes: list[dict[str, Any]]) -> None:
    out = sys.stdout
    out.write(f"shoe {number}\n")
    if wagers:
        out.write(
            f"{'coup':>4} {'seat':>4}  {'bet':<20} {'stake':>11} {'outcome':<7} {'win':>11} {'commission':>10}"
            f" {'net':>11}\n"
        )
        for w in wagers:
            out.write(
                f"{w['coup']:>4} {w['seat']:>4}  {w['bet']:<20} {money_text(w['stake']):>11} {w['outcome']:<7}"
                f" {money_text(w['win']):>11} {money_text(w['commission']):>10} {money_text(w['net']):>11}\n"
            )
        total = sum(w["net"] for w in wagers)
        out.write(f"{'':>4} {'':>4}  {'players net':<20} {'':>11} {'':<7} {'':>11} {'':>10} {money_text(total):>11}\n")
    if boxes:
        out.write(f"{'seat':>9}  {'commission box':>14} {'collected':>11} {'uncollected':>11}\n")
        for b in boxes:
            short = max(0, b["commission_box"] - b["collected"])
            out.write(
                f"{b['seat']:>9}  {money_text(b['commission_box']):>14} {money_text(b['collected']):>11}"
                f" {money_text(short):>11}\n"
            )
