"""``shoe-controller roads RESULT...``: the five scoreboard roads of a sequence of coup results.

Each RESULT is a word (banker, player, tie) or a run of letters B, P, T, any case; ``B P T``, ``BPT`` and
``banker b pt`` are the same three coups. The text output draws the bead plate, the big road (with its
dragon tail), the three derived roads (R red, B blue) and the ask roads; ``--json`` prints one object:
bead_plate, big_road, big_eye_boy, small_road, cockroach_pig, ask.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from controller.commands import Subparsers, UsageError
from controller.game.coup import Winner
from controller.game.roads import (
    DERIVED_ROADS,
    AskMarks,
    BigRoadCell,
    Colour,
    Roads,
    bead_plate_grid,
    big_road_grid,
    compute_roads,
)

T = TypeVar("T")

_LETTERS = {"b": "B", "p": "P", "t": "T"}
#: Tallest board drawn (a real scoreboard has 6 rows); the drawing's size grows with it.
MAX_ROWS = 50


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "roads",
        help="draw the scoreboard roads of a sequence of results",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULT",
        help="coup results in shoe order: B, P, T (any case), banker/player/tie, or runs such as BBPT",
    )
    p.add_argument("--rows", type=int, default=6, metavar="N", help="board height of the drawing (default 6)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run)


def expand_results(args: Sequence[str]) -> list[str]:
    """Split command-line arguments into one token per coup; a bad argument is a UsageError naming it."""
    out: list[str] = []
    for arg in args:
        word = arg.strip().lower()
        if word in ("banker", "player", "tie"):
            out.append(word)
        elif word and all(ch in _LETTERS for ch in word):
            out.extend(_LETTERS[ch] for ch in word)
        else:
            hint = "use B, P, T, banker, player, tie or a run like BBPT"
            raise UsageError(f"shoe-controller roads: {arg!r} is not a result ({hint})")
    return out


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.rows <= MAX_ROWS:
        raise UsageError(f"shoe-controller roads: --rows must be 1-{MAX_ROWS}, not {args.rows}")
    roads = compute_roads(expand_results(args.results))
    if args.json:
        print(json.dumps(roads.to_dict()))
    else:
        print(render(roads, rows=args.rows))
    return 0


def render(roads: Roads, rows: int = 6) -> str:
    """The five roads and the ask roads as ASCII text."""
    winners = [b.winner for b in roads.bead_plate]
    order = (Winner.BANKER, Winner.PLAYER, Winner.TIE)
    counts = "  ".join(f"{w.value.capitalize()} {winners.count(w)}" for w in order)
    lines = [f"{len(winners)} coups: {counts}", ""]
    lines.append("Bead plate")
    lines += _board(bead_plate_grid([b.winner.letter for b in roads.bead_plate], rows), rows, str)
    lines.append("")
    lines.append("Big road (a digit after the letter: ties on that cell)")
    if roads.pending_ties:
        lines.append(f"  (empty: {roads.pending_ties} tie(s) wait for the first Banker or Player result)")
    else:
        lines += _board(big_road_grid(roads.big_road, rows), rows, _cell_text)
    for name, k in DERIVED_ROADS:
        lines.append("")
        lines.append(f"{_title(name)} (R red, B blue)")
        lines += _board(big_road_grid(roads.derived(k), rows), rows, _colour_text)
    lines.append("")
    lines.append("Ask roads (the marks if the next coup is ...)")
    lines.append(f"  Banker: {_ask_text(roads.ask.banker)}")
    lines.append(f"  Player: {_ask_text(roads.ask.player)}")
    return "\n".join(lines)


def _title(name: str) -> str:
    words = name.replace("_", " ")
    return words[0].upper() + words[1:]


def _cell_text(cell: BigRoadCell) -> str:
    return cell.winner.letter + (str(cell.ties) if cell.ties else "")


def _colour_text(colour: Colour) -> str:
    return colour.letter


def _ask_text(marks: AskMarks) -> str:
    parts = []
    for name, _ in DERIVED_ROADS:
        mark: Colour | None = getattr(marks, name)
        parts.append(f"{name.replace('_', ' ')} {mark.letter if mark else '-'}")
    return ",  ".join(parts)


def _board(cells: list[tuple[int, int, T]], rows: int, text: Callable[[T], str]) -> list[str]:
    """Rows of text for (col, row, cell) triples; empty places are dots."""
    if not cells:
        return ["  (empty)"]
    width = max(len(text(c)) for _, _, c in cells)
    ncols = max(col for col, _, _ in cells) + 1
    grid = [["." for _ in range(ncols)] for _ in range(rows)]
    for col, row, cell in cells:
        grid[row][col] = text(cell)
    return ["  " + " ".join(s.ljust(width) for s in line).rstrip() for line in grid]
