"""The five scoreboard roads of a shoe: bead plate, big road, big eye boy, small road, cockroach pig.

Pure functions of the coup results in shoe order (no I/O, no clocks, no logging). The scoreboard page,
``shoe-controller roads`` and anything else that draws the roads read them from here.

**Bead plate.** Every result in order, ties included. Richer input (a
:class:`~controller.game.coup.CoupResult`, a journal coup record, a :class:`Bead`) also carries the pair
and natural flags of each bead.

**Big road** (logical form). Columns of same-winner streaks, Banker and Player only. A tie makes no cell:
it adds one to the ``ties`` count of the previous cell. Ties dealt before the first Banker or Player result
are held and attached to the first cell when it appears (until then the big road is empty). A cell carries
the pair flags of every coup it stands for (its win and its ties).

**Derived roads** (big eye boy k=1, small road k=2, cockroach pig k=3). For each new big-road cell placed
in logical column ``n`` at row ``m`` (both counted from 1):

* ``m = 1``: red when columns ``n-1`` and ``n-1-k`` have the same height, else blue;
* ``m > 1``, with ``p`` the height of column ``n-k``: red when ``m <= p``, blue when ``m = p + 1``, red
  when ``m > p + 1`` (the "straight drop").

A derived road starts at big-road column ``k+1`` row 2, or column ``k+2`` row 1 if that comes first;
cells before it make no mark. Heights are those of the *logical* columns (before the dragon tail bends
them). Every column a comparison reads is already closed when the cell is placed, so a mark never changes
afterwards. Ties make no mark. Each derived road is laid out in columns of one colour, a new column when
the colour changes (the big road's streak rule with red and blue).

**Ask roads.** The mark each derived road would make if the next coup were Banker, or Player
(``None`` while that road would not mark yet).

**Display layout.** :func:`big_road_grid` lays logical columns on a board of ``rows`` rows (the
dragon tail); :func:`bead_plate_grid` fills the bead plate column by column; :func:`roads_layout` places
every road on a board of :data:`ROAD_ROWS` rows, as the table's scoreboard and the floor's table page draw it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from controller.game.coup import CoupResult, Winner
from controller.game.errors import GameError

__all__ = [
    "DERIVED_ROADS",
    "PAIR_LETTERS",
    "ROAD_ROWS",
    "Ask",
    "AskMarks",
    "Bead",
    "BigRoadCell",
    "Colour",
    "ResultLike",
    "RoadError",
    "Roads",
    "RoadsBuilder",
    "bead_plate_grid",
    "big_road_grid",
    "compute_roads",
    "derived_mark",
    "parse_result",
    "roads_layout",
]

T = TypeVar("T")


class RoadError(GameError, ValueError):
    """A value that is not a coup result. Carries the value and its position in the input (from 1)."""

    def __init__(self, value: object, index: int | None = None, reason: str | None = None) -> None:
        where = f"result {index}: " if index is not None else ""
        why = reason or "is not a coup result (use B, P, T or banker, player, tie)"
        super().__init__(f"{where}{value!r} {why}")
        self.value = value
        self.index = index
        self.reason = why


class Colour(Enum):
    """The colour of a derived-road mark."""

    RED = "red"
    BLUE = "blue"

    @property
    def letter(self) -> str:
        return self.value[0].upper()


#: The derived roads by name and comparison distance k, in scoreboard order.
DERIVED_ROADS: tuple[tuple[str, int], ...] = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))


@dataclass(frozen=True, slots=True)
class Bead:
    """One coup on the bead plate: the winner and the flags a scoreboard may draw on the bead."""

    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "winner": self.winner.value,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "natural": self.natural,
        }


@dataclass(frozen=True, slots=True)
class BigRoadCell:
    """One big-road cell: a Banker or Player win, and the ties dealt after it (or before the first cell).

    ``player_pair`` and ``banker_pair``: whether any coup the cell stands for (its win and its ties) had that
    pair, so no pair the bead plate shows is missing from the big road (the dots boards draw on its cells)."""

    winner: Winner
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "winner": self.winner.value,
            "ties": self.ties,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
        }

    def with_tie(self, bead: Bead) -> BigRoadCell:
        """This cell with one more tie on it, and that tie's pairs."""
        return BigRoadCell(
            self.winner, self.ties + 1, self.player_pair or bead.player_pair, self.banker_pair or bead.banker_pair
        )


@dataclass(frozen=True, slots=True)
class AskMarks:
    """What each derived road would mark after one more coup (``None``: that road would not mark yet)."""

    big_eye_boy: Colour | None
    small_road: Colour | None
    cockroach_pig: Colour | None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "big_eye_boy": _colour_value(self.big_eye_boy),
            "small_road": _colour_value(self.small_road),
            "cockroach_pig": _colour_value(self.cockroach_pig),
        }


@dataclass(frozen=True, slots=True)
class Ask:
    """The ask roads: the derived marks if the next coup were Banker, or Player."""

    banker: AskMarks
    player: AskMarks

    def to_dict(self) -> dict[str, dict[str, str | None]]:
        return {"banker": self.banker.to_dict(), "player": self.player.to_dict()}


Columns = tuple[tuple[T, ...], ...]


@dataclass(frozen=True, slots=True)
class Roads:
    """The five roads of a shoe so far (logical columns), and the ask roads."""

    bead_plate: tuple[Bead, ...]
    big_road: Columns[BigRoadCell]
    big_eye_boy: Columns[Colour]
    small_road: Columns[Colour]
    cockroach_pig: Columns[Colour]
    ask: Ask

    def derived(self, k: int) -> Columns[Colour]:
        """The derived road with comparison distance ``k`` (1, 2 or 3)."""
        roads = {1: self.big_eye_boy, 2: self.small_road, 3: self.cockroach_pig}
        if k not in roads:
            raise ValueError(f"k must be 1, 2 or 3, not {k}")
        return roads[k]

    @property
    def pending_ties(self) -> int:
        """Ties dealt before the first Banker or Player result, while the big road is still empty."""
        return len(self.bead_plate) if not self.big_road else 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: bead_plate, big_road, the three derived roads and ask."""
        return {
            "bead_plate": [b.winner.value for b in self.bead_plate],
            "big_road": [[c.to_dict() for c in col] for col in self.big_road],
            "big_eye_boy": _colours_json(self.big_eye_boy),
            "small_road": _colours_json(self.small_road),
            "cockroach_pig": _colours_json(self.cockroach_pig),
            "ask": self.ask.to_dict(),
        }

    def bead_plate_details(self) -> list[dict[str, Any]]:
        """The bead plate with its flags: ``[{"winner", "player_pair", "banker_pair", "natural"}, ...]``."""
        return [b.to_dict() for b in self.bead_plate]


def _colour_value(c: Colour | None) -> str | None:
    return None if c is None else c.value


def _colours_json(columns: Columns[Colour]) -> list[list[str]]:
    return [[c.value for c in col] for col in columns]


# -- input ---------------------------------------------------------------------------------------------------

#: What the roads accept for one coup.
ResultLike = Winner | str | Bead | CoupResult | Mapping[str, Any]

_WORDS = {
    "b": Winner.BANKER,
    "banker": Winner.BANKER,
    "p": Winner.PLAYER,
    "player": Winner.PLAYER,
    "t": Winner.TIE,
    "tie": Winner.TIE,
}


def parse_result(value: object, index: int | None = None) -> Winner:
    """A :class:`Winner` from ``Winner`` or ``"B"``/``"P"``/``"T"``/``"banker"``/``"player"``/``"tie"``
    (any case). Raises :class:`RoadError` naming the value (and its position, when given)."""
    if isinstance(value, Winner):
        return value
    if isinstance(value, str):
        winner = _WORDS.get(value.strip().lower())
        if winner is not None:
            return winner
    raise RoadError(value, index)


def _to_bead(value: object, index: int) -> Bead | None:
    """One input item as a bead; ``None`` for a voided journal record (it has no result)."""
    if isinstance(value, Bead):
        return value
    if isinstance(value, CoupResult):
        return Bead(value.winner, value.player_pair, value.banker_pair, value.natural)
    if isinstance(value, Mapping):
        if value.get("void") is True:
            return None
        if "winner" not in value:
            raise RoadError(dict(value), index, "has no 'winner'")
        flags = {key: value.get(key, False) for key in ("player_pair", "banker_pair", "natural")}
        for key, flag in flags.items():
            if not isinstance(flag, bool):
                raise RoadError(dict(value), index, f"has {key}={flag!r}, not a bool")
        winner = value["winner"]
        try:
            return Bead(parse_result(winner, index), **flags)
        except RoadError:
            raise RoadError(dict(value), index, f"has winner={winner!r}, not banker, player or tie") from None
    return Bead(parse_result(value, index))


# -- the derived-road rule (one source of truth) -------------------------------------------------------------


def derived_mark(heights: Sequence[int], n: int, m: int, k: int) -> Colour | None:
    """The mark of derived road ``k`` for a big-road cell at logical column ``n``, row ``m`` (from 1).

    ``heights[i]`` is the height of logical column ``i + 1``; only columns before ``n`` are read (they
    are closed by then). ``None`` when the cell comes before the road's start (column ``k+1`` row 2, or
    column ``k+2`` row 1).
    """
    if m == 1:
        if n < k + 2:
            return None
        return Colour.RED if heights[n - 2] == heights[n - 2 - k] else Colour.BLUE
    if n < k + 1:
        return None
    p = heights[n - k - 1]
    return Colour.BLUE if m == p + 1 else Colour.RED


# -- layouts -------------------------------------------------------------------------------------------------


def big_road_grid(columns: Sequence[Sequence[T]], rows: int = 6) -> list[tuple[int, int, T]]:
    """Lay logical columns on a board ``rows`` high: ``(col, row, cell)`` triples, 0-based, in input order.

    The rule (the standard "dragon tail"): each logical column starts in the top row of the first board
    column, right of where the previous logical column started, whose top cell is free (normally the next
    one). It runs down; when the next cell down is past the last row, or is occupied by an earlier
    column's tail, it turns right and continues along the row it has reached. Works for any columns
    (big road cells, derived-road colours).
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1, not {rows}")
    taken: set[tuple[int, int]] = set()
    out: list[tuple[int, int, T]] = []
    start = -1
    for column in columns:
        if not column:
            continue
        start += 1
        while (start, 0) in taken:
            start += 1
        col, row = start, 0
        turned = False
        for i, cell in enumerate(column):
            if i:
                if not turned and row + 1 < rows and (col, row + 1) not in taken:
                    row += 1
                else:
                    turned = True
                    col += 1
                    while (col, row) in taken:  # cannot happen for tails of earlier columns; kept safe
                        col += 1
            taken.add((col, row))
            out.append((col, row, cell))
    return out


def bead_plate_grid(beads: Sequence[T], rows: int = 6) -> list[tuple[int, int, T]]:
    """The bead plate on a board ``rows`` high, filled top to bottom then left to right (0-based)."""
    if rows < 1:
        raise ValueError(f"rows must be at least 1, not {rows}")
    return [(i // rows, i % rows, b) for i, b in enumerate(beads)]


# -- building ------------------------------------------------------------------------------------------------

_NO_MARKS = AskMarks(None, None, None)


class RoadsBuilder:
    """The roads kept up to date one coup at a time (the scoreboard's per-coup update).

    :meth:`add` does O(1) work on the roads, then builds an immutable snapshot (a shallow copy of the bead
    plate and the column tuples: some 15 µs at the end of an 80-coup shoe). A bad result raises
    :class:`RoadError` and leaves the builder unchanged.
    """

    __slots__ = ("_beads", "_closed", "_count", "_derived", "_heights", "_last", "_pending_ties", "_snapshot")

    def __init__(self, results: Iterable[ResultLike] = ()) -> None:
        self._beads: list[Bead] = []
        self._closed: list[tuple[BigRoadCell, ...]] = []  # big-road columns before the last one
        self._last: list[BigRoadCell] = []  # the big road's current column
        self._heights: list[int] = []
        self._pending_ties: list[Bead] = []  # ties before the first Banker or Player result
        # per derived road: closed columns and the current one
        self._derived: list[tuple[list[tuple[Colour, ...]], list[Colour]]] = [([], []) for _ in DERIVED_ROADS]
        self._count = 0
        self._snapshot: Roads | None = None
        for r in results:
            self._push(r)

    def add(self, result: ResultLike) -> Roads:
        """Record one coup's result; return the roads after it."""
        self._push(result)
        return self.roads

    def extend(self, results: Iterable[ResultLike]) -> Roads:
        """Record several results in order; return the roads after the last (one snapshot, at the end).

        A bad result raises :class:`RoadError`; the results before it stay recorded.
        """
        for r in results:
            self._push(r)
        return self.roads

    def _push(self, result: ResultLike) -> None:
        bead = _to_bead(result, self._count + 1)
        self._count += 1
        if bead is None:
            return
        self._snapshot = None
        self._beads.append(bead)
        winner = bead.winner
        if winner is Winner.TIE:
            if self._last:
                self._last[-1] = self._last[-1].with_tie(bead)
            else:
                self._pending_ties.append(bead)
            return
        cell = BigRoadCell(winner, 0, bead.player_pair, bead.banker_pair)
        if self._last and self._last[0].winner is winner:
            self._last.append(cell)
            self._heights[-1] += 1
        else:
            if self._last:
                self._closed.append(tuple(self._last))
            for tie in self._pending_ties:  # ties dealt before the first Banker or Player result
                cell = cell.with_tie(tie)
            self._last = [cell]
            self._pending_ties.clear()
            self._heights.append(1)
        n, m = len(self._heights), self._heights[-1]
        for (closed, current), (_, k) in zip(self._derived, DERIVED_ROADS, strict=True):
            mark = derived_mark(self._heights, n, m, k)
            if mark is None:
                continue
            if current and current[0] is not mark:
                closed.append(tuple(current))
                current.clear()
            current.append(mark)

    @property
    def roads(self) -> Roads:
        """The roads so far (an immutable snapshot; cached until the next result)."""
        if self._snapshot is None:
            big = (*self._closed, tuple(self._last)) if self._last else ()
            derived = [(*closed, tuple(cur)) if cur else () for closed, cur in self._derived]
            self._snapshot = Roads(
                bead_plate=tuple(self._beads),
                big_road=big,
                big_eye_boy=derived[0],
                small_road=derived[1],
                cockroach_pig=derived[2],
                ask=Ask(self._ask(Winner.BANKER), self._ask(Winner.PLAYER)),
            )
        return self._snapshot

    def _ask(self, winner: Winner) -> AskMarks:
        if not self._last:
            return _NO_MARKS
        if self._last[0].winner is winner:
            n, m = len(self._heights), self._heights[-1] + 1
        else:
            n, m = len(self._heights) + 1, 1
        marks = [derived_mark(self._heights, n, m, k) for _, k in DERIVED_ROADS]
        return AskMarks(*marks)


def compute_roads(results: Iterable[ResultLike]) -> Roads:
    """The roads of a shoe from its coup results in order.

    Each result is a :class:`~controller.game.coup.Winner`, a string (``B``/``P``/``T`` or
    ``banker``/``player``/``tie``, any case), a :class:`Bead`, a :class:`~controller.game.coup.CoupResult`,
    or a journal coup record (a mapping with ``winner`` and optional ``player_pair``, ``banker_pair``,
    ``natural``; a record with ``"void": true`` has no result and is skipped). Raises :class:`RoadError`
    naming the first bad result.
    """
    return RoadsBuilder(results).roads


#: The letter of a coup's pairs in a table's ``state`` message (``roads.pairs``, beside the bead string):
#: no pair, a Player pair, a Banker pair, both.
PAIR_LETTERS: dict[tuple[bool, bool], str] = {
    (False, False): ".",
    (True, False): "p",
    (False, True): "b",
    (True, True): "x",
}


#: Rows of the bead plate, the big road and the derived roads on a page.
ROAD_ROWS = 6


def roads_layout(roads: Roads) -> dict[str, Any]:
    """The roads as the pages draw them: :meth:`Roads.to_dict` plus ``layout``, each road's cells placed on a
    board of :data:`ROAD_ROWS` rows (the scoreboard and the floor's table page)."""
    data = roads.to_dict()
    beads = [
        [c, r, b.winner.value, b.player_pair, b.banker_pair, b.natural]
        for c, r, b in bead_plate_grid(roads.bead_plate, ROAD_ROWS)
    ]
    big = [
        [c, r, cell.winner.value, cell.ties, cell.player_pair, cell.banker_pair]
        for c, r, cell in big_road_grid(roads.big_road, ROAD_ROWS)
    ]
    data["layout"] = {"rows": ROAD_ROWS, "bead_plate": beads, "big_road": big}
    for name, k in DERIVED_ROADS:
        marks = big_road_grid(roads.derived(k), ROAD_ROWS)
        data["layout"][name] = [[c, r, mark.value] for c, r, mark in marks]
    return data
