"""The cash log's tables, for the repository (:mod:`floor.archive.repository`): every buy-in the tables journaled
(``cash_buy_ins``, one row per ``buy_in`` record, with its gaming day and the player it counts for) and each
player's cash in per gaming day across the tables (``cash_days``), read and added to in one statement so that
two collectors adding to one player's day at once each see the other's (floor/cash_watch.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from floor.archive.store import Store

CASH_SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS cash_buy_ins (
        "table" TEXT NOT NULL, seq BIGINT NOT NULL, day TEXT NOT NULL, at TEXT NOT NULL, player TEXT NOT NULL,
        player_ref TEXT, seat INTEGER NOT NULL, shoe BIGINT NOT NULL, coup BIGINT NOT NULL, cents BIGINT NOT NULL,
        tender TEXT NOT NULL, mtl BOOLEAN NOT NULL, day_cash BIGINT NOT NULL, PRIMARY KEY ("table", seq))""",
    "CREATE INDEX IF NOT EXISTS cash_buy_ins_day ON cash_buy_ins (day, player)",
    """CREATE TABLE IF NOT EXISTS cash_days (
        day TEXT NOT NULL, player TEXT NOT NULL, cash BIGINT NOT NULL, PRIMARY KEY (day, player))""",
)

_COLUMNS = '"table", seq, day, at, player, player_ref, seat, shoe, coup, cents, tender, mtl, day_cash'
_ADD_BUY_IN = (
    f"INSERT INTO cash_buy_ins ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ' ON CONFLICT ("table", seq) DO NOTHING RETURNING seq'
)
_ADD_CASH = (
    "INSERT INTO cash_days (day, player, cash) VALUES (?, ?, ?)"
    " ON CONFLICT (day, player) DO UPDATE SET cash = cash_days.cash + excluded.cash RETURNING cash"
)


@dataclass(frozen=True, slots=True)
class CashBuyIn:
    """One buy-in as the cash log keeps it: where and when, the gaming day (``day``, ISO date), the player it
    counts for (``player``: ``ref:<player_ref>`` for a carded player, ``seat:<table>:<seat>`` for an uncarded
    one), the amount and tender, whether it is a multiple transaction log entry (``mtl``: cash over the
    floor's threshold) and the player's cash in that day after it (``day_cash``; 0 for a tender not cash)."""

    table: str
    seq: int
    day: str
    at: str
    player: str
    player_ref: str | None
    seat: int
    shoe: int
    coup: int
    cents: int
    tender: str
    mtl: bool
    day_cash: int = 0


@dataclass(frozen=True, slots=True)
class CashDay:
    """One player's cash in on one gaming day, across the tables: the total, how many cash buy-ins, at how many
    tables, the first and the last (an uncarded player's ``table`` and ``seat``; a carded one's first)."""

    day: str
    player: str
    player_ref: str | None
    table: str
    seat: int
    cash: int
    buy_ins: int
    tables: int
    first_at: str
    last_at: str


class CashTables:
    """The cash log's tables, in one transaction (a :class:`~floor.archive.repository.Transaction`)."""

    def __init__(self, store: Store, cur: Any) -> None:
        self._sql, self._cur = store.sql, cur

    def add(self, buy_in: CashBuyIn, cash: bool) -> int | None:
        """Keep ``buy_in``; with ``cash``, add it to its player's day and return the day's cash after it (a
        buy-in kept already, or not cash: None). The day's row is read and added to in one statement: a
        second collector adding to the same day waits for this one's commit and then adds to its total."""
        b = buy_in
        row = (b.table, b.seq, b.day, b.at, b.player, b.player_ref, b.seat, b.shoe, b.coup, b.cents, b.tender)
        self._cur.execute(self._sql(_ADD_BUY_IN), (*row, b.mtl, 0))
        if self._cur.fetchone() is None or not cash:
            return None
        self._cur.execute(self._sql(_ADD_CASH), (b.day, b.player, b.cents))
        total = int(self._cur.fetchone()[0])
        self._cur.execute(
            self._sql('UPDATE cash_buy_ins SET day_cash = ? WHERE "table" = ? AND seq = ?'), (total, b.table, b.seq)
        )
        return total

    def log(self, day: str) -> list[CashBuyIn]:
        """The gaming day's multiple transaction log: its entries (``mtl``) by time, table and seq."""
        self._cur.execute(
            self._sql(f'SELECT {_COLUMNS} FROM cash_buy_ins WHERE day = ? AND mtl ORDER BY at, "table", seq'), (day,)
        )
        return [_buy_in(row) for row in self._cur.fetchall()]

    def days(self, day: str, tender: str) -> list[CashDay]:
        """Each player's buy-ins of ``tender`` on the gaming day, summed across the tables, by player."""
        self._cur.execute(
            self._sql(
                'SELECT player, max(player_ref), min("table"), min(seat), sum(cents), count(*),'
                ' count(DISTINCT "table"), min(at), max(at) FROM cash_buy_ins WHERE day = ? AND tender = ?'
                " GROUP BY player ORDER BY player"
            ),
            (day, tender),
        )
        return [
            CashDay(day, str(p), None if ref is None else str(ref), str(t), int(s), int(c), int(n), int(k), a, z)
            for p, ref, t, s, c, n, k, a, z in self._cur.fetchall()
        ]


def _buy_in(row: Sequence[Any]) -> CashBuyIn:
    t, seq, day, at, player, ref, seat, shoe, coup, cents, tender, mtl, day_cash = row
    return CashBuyIn(
        table=str(t),
        seq=int(seq),
        day=str(day),
        at=str(at),
        player=str(player),
        player_ref=None if ref is None else str(ref),
        seat=int(seat),
        shoe=int(shoe),
        coup=int(coup),
        cents=int(cents),
        tender=str(tender),
        mtl=bool(mtl),
        day_cash=int(day_cash),
    )
