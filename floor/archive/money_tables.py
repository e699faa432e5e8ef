"""The money's tables, for the repository (:mod:`floor.archive.repository`): the money watch's
(floor/money_watch.py: its state per table, the money faults per table and quarter-hour bucket) and the
accounting's (floor/accounting.py: its state per table, the money per table and bucket, the seat sessions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from typing import Any, Self

from floor.archive.store import Store

# -- the money watch (floor/money_watch.py) -------------------------------------------------------------------

#: The counters of ``money_faults``, per table and quarter-hour bucket.
MONEY_FAULT_COUNTERS = (
    "past_posts",
    "pulled_bets",
    "mispays",
    "mispay_cents",
    "foreign_chips",
    "stolen_chips",
    "wagers",
    "coups",
)
_FAULT_COLUMNS = ", ".join(MONEY_FAULT_COUNTERS)
MONEY_WATCH_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS money_watch_state ("table" TEXT PRIMARY KEY, state TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS money_faults (
        "table" TEXT NOT NULL, bucket TEXT NOT NULL, past_posts BIGINT NOT NULL, pulled_bets BIGINT NOT NULL,
        mispays BIGINT NOT NULL, mispay_cents BIGINT NOT NULL, foreign_chips BIGINT NOT NULL,
        stolen_chips BIGINT NOT NULL, wagers BIGINT NOT NULL, coups BIGINT NOT NULL, PRIMARY KEY ("table", bucket))""",
    "CREATE INDEX IF NOT EXISTS money_faults_bucket ON money_faults (bucket)",
)
_ADD_FAULTS = (
    f'INSERT INTO money_faults ("table", bucket, {_FAULT_COLUMNS})'
    f" VALUES (?, ?, {', '.join('?' for _ in MONEY_FAULT_COUNTERS)})"
    ' ON CONFLICT ("table", bucket) DO UPDATE SET '
    + ", ".join(f"{c} = money_faults.{c} + excluded.{c}" for c in MONEY_FAULT_COUNTERS)
)
_FAULT_SUMS = ", ".join(f"sum({c})" for c in MONEY_FAULT_COUNTERS)


@dataclass(frozen=True, slots=True)
class MoneyFaults:
    """Money faults counted (the counters of ``money_faults``), in one bucket or summed over several."""

    past_posts: int = 0
    pulled_bets: int = 0
    mispays: int = 0
    mispay_cents: int = 0
    foreign_chips: int = 0
    stolen_chips: int = 0
    wagers: int = 0
    coups: int = 0

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> Self:
        """From counts by counter name (:data:`MONEY_FAULT_COUNTERS`); a counter not named is 0."""
        return cls(*(int(counts.get(c, 0)) for c in MONEY_FAULT_COUNTERS))

    def counts(self) -> dict[str, int]:
        """The counters by name, in :data:`MONEY_FAULT_COUNTERS` order."""
        return dict(zip(MONEY_FAULT_COUNTERS, astuple(self), strict=True))


@dataclass(frozen=True, slots=True)
class FaultBucket:
    """One table's row of ``money_faults``: its quarter-hour bucket and its counts."""

    table: str
    bucket: str
    faults: MoneyFaults


class MoneyWatchTables:
    """The money watch's tables, in one transaction (a :class:`~floor.archive.repository.Transaction`)."""

    def __init__(self, store: Store, cur: Any) -> None:
        self._sql, self._cur = store.sql, cur

    def state(self, table: str) -> str | None:
        """The watch's stored state of ``table`` (JSON), or None."""
        self._cur.execute(self._sql('SELECT state FROM money_watch_state WHERE "table" = ?'), (table,))
        row = self._cur.fetchone()
        return None if row is None else str(row[0])

    def save_state(self, table: str, state: str) -> None:
        self._cur.execute(
            self._sql(
                'INSERT INTO money_watch_state ("table", state) VALUES (?, ?)'
                ' ON CONFLICT ("table") DO UPDATE SET state = excluded.state'
            ),
            (table, state),
        )

    def add_faults(self, table: str, bucket: str, faults: MoneyFaults) -> None:
        """Add ``faults`` to ``table``'s ``bucket``."""
        self._cur.execute(self._sql(_ADD_FAULTS), (table, bucket, *astuple(faults)))

    def faults_of(self, table: str, first: str, end: str) -> MoneyFaults:
        """``table``'s faults summed over the buckets from ``first`` to before ``end``."""
        return self._sums('"table" = ?', (table, first, end))

    def floor_faults(self, but: str, first: str, end: str) -> MoneyFaults:
        """Every table's but ``but``'s faults summed over the buckets from ``first`` to before ``end``."""
        return self._sums('"table" <> ?', (but, first, end))

    def _sums(self, which: str, params: tuple[Any, ...]) -> MoneyFaults:
        self._cur.execute(
            self._sql(f"SELECT {_FAULT_SUMS} FROM money_faults WHERE {which} AND bucket >= ? AND bucket < ?"), params
        )
        return MoneyFaults(*(int(x or 0) for x in self._cur.fetchone()))

    def buckets(self, first: str, end: str, table: str | None = None) -> list[FaultBucket]:
        """The money faults per table and bucket from ``first`` to before ``end`` (of one ``table``, or all)."""
        sql = f'SELECT "table", bucket, {_FAULT_COLUMNS} FROM money_faults WHERE bucket >= ? AND bucket < ?'
        params: list[Any] = [first, end]
        if table is not None:
            sql += ' AND "table" = ?'
            params.append(table)
        self._cur.execute(self._sql(sql), params)
        return [
            FaultBucket(str(row[0]), str(row[1]), MoneyFaults(*(int(x) for x in row[2:])))
            for row in self._cur.fetchall()
        ]


# -- the accounting (floor/accounting.py) --------------------------------------------------------------------

ACCOUNTING_SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS money_heads ("table" TEXT PRIMARY KEY, state TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS money_buckets (
        "table" TEXT NOT NULL, bucket TEXT NOT NULL, handle BIGINT NOT NULL, win BIGINT NOT NULL,
        collected BIGINT NOT NULL, uncollected BIGINT NOT NULL, theo_h BIGINT NOT NULL,
        variance DOUBLE PRECISION NOT NULL, coups BIGINT NOT NULL, wagers BIGINT NOT NULL,
        PRIMARY KEY ("table", bucket))""",
    "CREATE INDEX IF NOT EXISTS money_buckets_bucket ON money_buckets (bucket)",
    """CREATE TABLE IF NOT EXISTS seat_sessions (
        "table" TEXT NOT NULL, seat INTEGER NOT NULL, start_seq BIGINT NOT NULL, start_at TEXT NOT NULL,
        last_at TEXT NOT NULL, end_at TEXT, end_seq BIGINT, coups BIGINT NOT NULL, wagers BIGINT NOT NULL,
        wagered BIGINT NOT NULL, net BIGINT NOT NULL, commission BIGINT NOT NULL, collected BIGINT NOT NULL,
        theo_h BIGINT NOT NULL, edge_stake DOUBLE PRECISION NOT NULL,
        PRIMARY KEY ("table", seat, start_seq))""",
    'CREATE INDEX IF NOT EXISTS seat_sessions_table_end ON seat_sessions ("table", end_at)',
    "CREATE INDEX IF NOT EXISTS seat_sessions_end ON seat_sessions (end_at)",
    'CREATE INDEX IF NOT EXISTS seat_sessions_open ON seat_sessions ("table") WHERE end_at IS NULL',
)


@dataclass(frozen=True, slots=True)
class MoneySums:
    """A table's money in one quarter-hour bucket, or summed over a shift's (the columns of ``money_buckets``):
    integer cents, but ``theo_h`` (hundredths of a cent) and ``variance`` (cents squared, a float)."""

    handle: int = 0
    win: int = 0
    collected: int = 0
    uncollected: int = 0
    theo_h: int = 0
    variance: float = 0.0
    coups: int = 0
    wagers: int = 0

    @classmethod
    def of(cls, sums: Mapping[str, float]) -> Self:
        """From sums by column name (as a scan adds them up): integers but ``variance``; one not named is 0."""
        named: dict[str, Any] = {
            f.name: float(sums[f.name]) if f.name == "variance" else int(sums[f.name])
            for f in fields(cls)
            if f.name in sums
        }
        return cls(**named)


_BUCKET_COLUMNS = tuple(f.name for f in fields(MoneySums))
_ADD_BUCKET = (
    f'INSERT INTO money_buckets ("table", bucket, {", ".join(_BUCKET_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
    ' ON CONFLICT ("table", bucket) DO UPDATE SET '
    + ", ".join(f"{c} = money_buckets.{c} + excluded.{c}" for c in _BUCKET_COLUMNS)
)


@dataclass(frozen=True, slots=True)
class ShiftMoney:
    """One table's money summed over one of the shifts asked for (``shift``: its index among them)."""

    shift: int
    table: str
    sums: MoneySums


@dataclass(frozen=True, slots=True)
class SeatSession:
    """One seat session (a rating) as ``seat_sessions`` holds it: where it starts and ends (``end_at`` None:
    still open), and what a step adds to it or the session sums to: integer cents, but ``theo_h`` (hundredths
    of a cent) and ``edge_stake`` (the stakes times their off-the-top edges)."""

    table: str
    seat: int
    start_seq: int
    start_at: str
    last_at: str
    end_at: str | None
    end_seq: int | None
    coups: int
    wagers: int
    wagered: int
    net: int
    commission: int
    collected: int
    theo_h: int
    edge_stake: float


_SESSION_SUMS = ("coups", "wagers", "wagered", "net", "commission", "collected", "theo_h", "edge_stake")
_SESSION_COLUMNS = ", ".join(f.name if f.name != "table" else '"table"' for f in fields(SeatSession))
_ADD_SESSION = (
    f"INSERT INTO seat_sessions ({_SESSION_COLUMNS}) VALUES ({', '.join('?' for _ in fields(SeatSession))})"
    ' ON CONFLICT ("table", seat, start_seq) DO UPDATE SET '
    "last_at = CASE WHEN excluded.last_at > seat_sessions.last_at THEN excluded.last_at"
    " ELSE seat_sessions.last_at END,"
    " end_at = COALESCE(excluded.end_at, seat_sessions.end_at),"
    " end_seq = COALESCE(excluded.end_seq, seat_sessions.end_seq), "
    + ", ".join(f"{c} = seat_sessions.{c} + excluded.{c}" for c in _SESSION_SUMS)
)


@dataclass(frozen=True, slots=True)
class MoneyHead:
    """Where the accounting stands in a table's records (its state, JSON), with how far surveillance has read
    (``read``) and the table's chain head (``head``) and site."""

    table: str
    state: str
    read: int
    head: int
    site: str | None


class AccountingTables:
    """The accounting's tables, in one transaction (a :class:`~floor.archive.repository.Transaction`)."""

    def __init__(self, store: Store, cur: Any) -> None:
        self._sql, self._cur = store.sql, cur

    def state(self, table: str) -> str | None:
        """The accounting's stored state of ``table`` (JSON), or None."""
        self._cur.execute(self._sql('SELECT state FROM money_heads WHERE "table" = ?'), (table,))
        row = self._cur.fetchone()
        return None if row is None else str(row[0])

    def save_state(self, table: str, state: str) -> None:
        self._cur.execute(
            self._sql(
                'INSERT INTO money_heads ("table", state) VALUES (?, ?)'
                ' ON CONFLICT ("table") DO UPDATE SET state = excluded.state'
            ),
            (table, state),
        )

    def add_money(self, table: str, buckets: Iterable[tuple[str, MoneySums]]) -> None:
        """Add each ``(bucket, sums)`` to ``table``'s bucket."""
        rows = [(table, bucket, *astuple(sums)) for bucket, sums in buckets]
        if rows:
            self._cur.executemany(self._sql(_ADD_BUCKET), rows)

    def add_sessions(self, sessions: Iterable[SeatSession]) -> None:
        """Open these sessions, or add to them: their sums added, their last money record the later, their end
        the one given if any."""
        rows = [astuple(s) for s in sessions]
        if rows:
            self._cur.executemany(self._sql(_ADD_SESSION), rows)

    def shift_money(self, shifts: Sequence[tuple[str, str]], table: str | None = None) -> list[ShiftMoney]:
        """Per shift asked for (its buckets from the first to before the end) and table (or only ``table``),
        the money summed: by shift in the order given, then table; a table with no bucket in a shift has no
        line for it."""
        if not shifts:
            return []
        ranges = ", ".join("(?, ?, ?)" for _ in shifts)
        params: list[Any] = []
        for i, (first, end) in enumerate(shifts):
            params += [i, first, end]
        where = ' AND b."table" = ?' if table is not None else ""
        if table is not None:
            params.append(table)
        sums = ", ".join(f"sum(b.{c})" for c in _BUCKET_COLUMNS)
        self._cur.execute(
            self._sql(
                f'WITH s(i, a, z) AS (VALUES {ranges}) SELECT s.i, b."table", {sums} FROM s JOIN money_buckets b'
                f' ON b.bucket >= s.a AND b.bucket < s.z{where} GROUP BY s.i, b."table" ORDER BY s.i, b."table"'
            ),
            params,
        )
        out = []
        for i, t, handle, win, collected, uncollected, theo_h, variance, coups, wagers in self._cur.fetchall():
            money = MoneySums(
                handle=int(handle or 0),
                win=int(win or 0),
                collected=int(collected or 0),
                uncollected=int(uncollected or 0),
                theo_h=int(theo_h or 0),
                variance=float(variance or 0.0),
                coups=int(coups or 0),
                wagers=int(wagers or 0),
            )
            out.append(ShiftMoney(int(i), str(t), money))
        return out

    def heads(self) -> list[MoneyHead]:
        """Every table the accounting has read, with surveillance's progress and the chain's head, by table."""
        self._cur.execute(
            'SELECT m."table", m.state, h.seq, c.head_seq, c.site FROM money_heads m'
            ' JOIN surveil_heads h ON h."table" = m."table" JOIN chains c ON c."table" = m."table"'
            ' ORDER BY m."table"'
        )
        return [
            MoneyHead(str(t), str(state), int(read), int(head), None if site is None else str(site))
            for t, state, read, head, site in self._cur.fetchall()
        ]

    def sessions(
        self, table: str | None = None, since: str | None = None, open_only: bool = False
    ) -> list[SeatSession]:
        """Seat sessions by start, table and seat: every one (of ``table``), those still open or ended at or
        after ``since`` (a time as the sessions' ends are written), or only the open ones."""
        where: list[str] = []
        params: list[Any] = []
        if table is not None:
            where.append('"table" = ?')
            params.append(table)
        if open_only:
            where.append("end_at IS NULL")
        elif since is not None:
            where.append("(end_at IS NULL OR end_at >= ?)")
            params.append(since)
        sql = f"SELECT {_SESSION_COLUMNS} FROM seat_sessions" + (" WHERE " + " AND ".join(where) if where else "")
        self._cur.execute(self._sql(sql + ' ORDER BY start_at, "table", seat'), params)
        return [_session(row) for row in self._cur.fetchall()]


def _session(row: Sequence[Any]) -> SeatSession:
    t, seat, start_seq, start_at, last_at, end_at, end_seq, *sums = row
    coups, wagers, wagered, net, commission, collected, theo_h, edge_stake = sums
    return SeatSession(
        table=str(t),
        seat=int(seat),
        start_seq=int(start_seq),
        start_at=str(start_at),
        last_at=str(last_at),
        end_at=None if end_at is None else str(end_at),
        end_seq=None if end_seq is None else int(end_seq),
        coups=int(coups),
        wagers=int(wagers),
        wagered=int(wagered),
        net=int(net),
        commission=int(commission),
        collected=int(collected),
        theo_h=int(theo_h),
        edge_stake=float(edge_stake),
    )
