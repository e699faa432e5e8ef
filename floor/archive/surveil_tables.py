"""Surveillance's tables (floor/surveillance.py) and the count watch's (floor/counting_watch.py), for the
repository (:mod:`floor.archive.repository`): their DDL, their SQL, their rows.

Surveillance keeps, per table, its head (``surveil_heads``: the last record read and what it remembers), every
20-card window of every shoe dealt in the last ``repeat_days`` (``shoe_windows``, indexed by hash) and the
coups and dealer errors per hour (``dealer_errors``). The count watch keeps its state per table
(``count_heads``) with the random token it was stored with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass
from typing import Any, Self

from floor.archive.store import Store

# -- surveillance (floor/surveillance.py) ---------------------------------------------------------------------

#: The dealer-error counters of ``dealer_errors``, per table and hour (``coups`` is what errors are counted against).
DEALER_ERROR_COUNTERS = ("coups", "misdraws", "early_declares", "voids", "unreadable")
_ERRORS = " + ".join(DEALER_ERROR_COUNTERS[1:])  # one hour's dealer errors, in SQL

SURVEILLANCE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS surveil_heads (
        "table" TEXT PRIMARY KEY, seq BIGINT NOT NULL, state TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS shoe_windows (
        hash BIGINT NOT NULL, "table" TEXT NOT NULL, shoe_key BIGINT NOT NULL, shoe BIGINT NOT NULL,
        "offset" INTEGER NOT NULL, started BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS shoe_windows_hash ON shoe_windows (hash)",
    "CREATE INDEX IF NOT EXISTS shoe_windows_started ON shoe_windows (started)",
    """CREATE TABLE IF NOT EXISTS dealer_errors (
        "table" TEXT NOT NULL, hour TEXT NOT NULL, coups BIGINT NOT NULL, misdraws BIGINT NOT NULL,
        early_declares BIGINT NOT NULL, voids BIGINT NOT NULL, unreadable BIGINT NOT NULL,
        PRIMARY KEY ("table", hour))""",
    "CREATE INDEX IF NOT EXISTS dealer_errors_hour ON dealer_errors (hour)",
)
INSERT_WINDOW = 'INSERT INTO shoe_windows (hash, "table", shoe_key, shoe, "offset", started) VALUES (?, ?, ?, ?, ?, ?)'
#: The shoes (of other tables, or of this table's other shoes) started since a time holding a window.
FIND_WINDOW = (
    'SELECT "table", shoe, shoe_key, "offset", started FROM shoe_windows WHERE hash = ? AND started >= ?'
    ' AND NOT ("table" = ? AND shoe_key = ?) ORDER BY started, "table", "offset" LIMIT 10'
)
_ADD_ERRORS = (
    'INSERT INTO dealer_errors ("table", hour, coups, misdraws, early_declares, voids, unreadable)'
    ' VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT ("table", hour) DO UPDATE SET'
    " coups = dealer_errors.coups + excluded.coups, misdraws = dealer_errors.misdraws + excluded.misdraws,"
    " early_declares = dealer_errors.early_declares + excluded.early_declares,"
    " voids = dealer_errors.voids + excluded.voids, unreadable = dealer_errors.unreadable + excluded.unreadable"
)
_DEALER_ERROR_COLUMNS = ", ".join(DEALER_ERROR_COUNTERS)


@dataclass(frozen=True, slots=True)
class SurveilHead:
    """Where surveillance stands in a table's records: the last seq read and its state (as stored, JSON)."""

    seq: int
    state: str


@dataclass(frozen=True, slots=True)
class Window:
    """One window of 20 dealt cards of a shoe: its hash, the shoe (its start record's seq as ``shoe_key``, its
    number), the window's offset in the shoe's dealt cards and the shoe's start (epoch seconds)."""

    hash: int
    shoe_key: int
    shoe: int
    offset: int
    started: int


@dataclass(frozen=True, slots=True)
class WindowMatch:
    """A shoe that holds a window looked up (:meth:`SurveillanceTables.find_window`)."""

    table: str
    shoe: int
    shoe_key: int
    offset: int
    started: int


@dataclass(frozen=True, slots=True)
class DealerErrors:
    """A table's coups and dealer errors in one hour (the counters of ``dealer_errors``)."""

    coups: int = 0
    misdraws: int = 0
    early_declares: int = 0
    voids: int = 0
    unreadable: int = 0

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> Self:
        """From counts by counter name (:data:`DEALER_ERROR_COUNTERS`); a counter not named is 0."""
        return cls(*(int(counts.get(c, 0)) for c in DEALER_ERROR_COUNTERS))

    @property
    def errors(self) -> int:
        """The dealer errors (every counter but ``coups``)."""
        return self.misdraws + self.early_declares + self.voids + self.unreadable

    def counts(self) -> dict[str, int]:
        """The counters by name, in :data:`DEALER_ERROR_COUNTERS` order."""
        return dict(zip(DEALER_ERROR_COUNTERS, astuple(self), strict=True))


@dataclass(frozen=True, slots=True)
class DealerErrorHour:
    """One table's row of ``dealer_errors``: its hour (``YYYY-MM-DDTHH`` UTC) and its counts."""

    table: str
    hour: str
    counts: DealerErrors


@dataclass(frozen=True, slots=True)
class ErrorTotals:
    """Coups and dealer errors summed over several tables' hours (the floor's rate)."""

    coups: int
    errors: int


class SurveillanceTables:
    """Surveillance's tables, in one transaction (a :class:`~floor.archive.repository.Transaction`)."""

    def __init__(self, store: Store, cur: Any) -> None:
        self._sql, self._cur = store.sql, cur

    def head(self, table: str) -> SurveilHead | None:
        """Where surveillance stands in ``table``'s records, or None: not read yet (:meth:`start` it)."""
        self._cur.execute(self._sql('SELECT seq, state FROM surveil_heads WHERE "table" = ?'), (table,))
        row = self._cur.fetchone()
        return None if row is None else SurveilHead(int(row[0]), str(row[1]))

    def start(self, table: str, state: str) -> None:
        """Give ``table`` its surveillance head at 0 with ``state`` (nothing when another collector did)."""
        self._cur.execute(
            self._sql('INSERT INTO surveil_heads ("table", seq, state) VALUES (?, 0, ?) ON CONFLICT DO NOTHING'),
            (table, state),
        )

    def move_head(self, table: str, seq: int, new_seq: int, state: str) -> bool:
        """Set ``table``'s surveillance head to ``new_seq`` with ``state`` if it still stands at ``seq`` (the
        compare-and-set of a step); False when another collector moved it first (abandon the step then)."""
        self._cur.execute(
            self._sql('UPDATE surveil_heads SET seq = ?, state = ? WHERE "table" = ? AND seq = ?'),
            (new_seq, state, table, seq),
        )
        return int(self._cur.rowcount) == 1

    def add_windows(self, table: str, windows: Sequence[Window]) -> None:
        """Index these windows of ``table``'s shoes."""
        rows = [(w.hash, table, w.shoe_key, w.shoe, w.offset, w.started) for w in windows]
        if rows:
            self._cur.executemany(self._sql(INSERT_WINDOW), rows)

    def find_window(self, hash: int, since: int, table: str, shoe_key: int) -> list[WindowMatch]:
        """The shoes started at or after ``since`` (epoch seconds) holding the window ``hash``, but ``table``'s
        shoe ``shoe_key`` itself: at most 10, the earliest first."""
        self._cur.execute(self._sql(FIND_WINDOW), (hash, since, table, shoe_key))
        return [WindowMatch(str(t), int(s), int(k), int(o), int(st)) for t, s, k, o, st in self._cur.fetchall()]

    def add_errors(self, table: str, hour: str, counts: DealerErrors) -> None:
        """Add ``counts`` to ``table``'s hour."""
        self._cur.execute(self._sql(_ADD_ERRORS), (table, hour, *astuple(counts)))

    def errors_of(self, table: str, hour: str) -> DealerErrors:
        """``table``'s counts in ``hour`` (zero when it has none)."""
        self._cur.execute(
            self._sql(f'SELECT {_DEALER_ERROR_COLUMNS} FROM dealer_errors WHERE "table" = ? AND hour = ?'),
            (table, hour),
        )
        row = self._cur.fetchone()
        return DealerErrors() if row is None else DealerErrors(*(int(x or 0) for x in row))

    def floor_errors(self, first: str, last: str, but: str) -> ErrorTotals:
        """The coups and dealer errors of every table but ``but`` in the hours ``first`` to ``last`` (inclusive)."""
        self._cur.execute(
            self._sql(
                f'SELECT sum(coups), sum({_ERRORS}) FROM dealer_errors WHERE hour >= ? AND hour <= ? AND "table" <> ?'
            ),
            (first, last, but),
        )
        coups, errors = (int(x or 0) for x in self._cur.fetchone())
        return ErrorTotals(coups, errors)

    def prune(self, before: int) -> int:
        """Drop the windows of shoes started before ``before`` (epoch seconds); how many rows went."""
        self._cur.execute(self._sql("DELETE FROM shoe_windows WHERE started < ?"), (before,))
        return int(self._cur.rowcount)

    def hours(self, table: str | None = None) -> list[DealerErrorHour]:
        """The dealer-error counts per table and hour (of one ``table``, or all), oldest first."""
        sql = f'SELECT "table", hour, {_DEALER_ERROR_COLUMNS} FROM dealer_errors'
        params: tuple[Any, ...] = ()
        if table is not None:
            sql += ' WHERE "table" = ?'
            params = (table,)
        self._cur.execute(self._sql(sql + ' ORDER BY hour, "table"'), params)
        return [
            DealerErrorHour(str(row[0]), str(row[1]), DealerErrors(*(int(x) for x in row[2:])))
            for row in self._cur.fetchall()
        ]


# -- the count watch (floor/counting_watch.py) --------------------------------------------------------------

COUNT_SCHEMA = (
    'CREATE TABLE IF NOT EXISTS count_heads ("table" TEXT PRIMARY KEY, token TEXT NOT NULL, state TEXT NOT NULL)',
)


class CountTables:
    """The count watch's table, in one transaction (a :class:`~floor.archive.repository.Transaction`): per table its
    state (JSON) and the random token it was stored with (a collector that stored the state last knows it by its
    token and need not read it)."""

    def __init__(self, store: Store, cur: Any) -> None:
        self._sql, self._cur = store.sql, cur

    def token(self, table: str) -> str | None:
        """The token ``table``'s state was stored with, or None (no state yet)."""
        self._cur.execute(self._sql('SELECT token FROM count_heads WHERE "table" = ?'), (table,))
        row = self._cur.fetchone()
        return None if row is None else str(row[0])

    def state(self, table: str) -> str:
        """``table``'s stored state (there must be one: :meth:`token` said so)."""
        self._cur.execute(self._sql('SELECT state FROM count_heads WHERE "table" = ?'), (table,))
        return str(self._cur.fetchone()[0])

    def save(self, table: str, token: str, state: str) -> None:
        self._cur.execute(
            self._sql(
                'INSERT INTO count_heads ("table", token, state) VALUES (?, ?, ?)'
                ' ON CONFLICT ("table") DO UPDATE SET token = excluded.token, state = excluded.state'
            ),
            (table, token, state),
        )
