"""The repository: the tables of the floor's readers of the records, behind a small typed API.

Surveillance (its heads, the shoes' 20-card windows, the dealer errors per hour), the money's watch (its state,
the money faults per quarter-hour), the count watch (its state), the accounting (its state, the money per
quarter-hour, the seat sessions) and the cash log (the buy-ins, each player's cash per gaming day) keep tables
of their own beside the records. Their SQL is here and nowhere else: the watches hand in and get back typed
rows (frozen dataclasses), never a cursor or a tuple read by position.

A surveillance step is two transactions (floor/surveillance.py says why): the watches' states are read in one
and everything the step worked out is written in the other, under the compare-and-set of the surveillance head
(:meth:`~floor.archive.surveil_tables.SurveillanceTables.move_head`). Both are a :class:`Transaction`
(:meth:`Repository.transaction`): committed when the ``with`` body returns, rolled back if it raises or
:meth:`Transaction.abandon` is called. The reports' queries (``shoe-floor alerts``, ``faults``, ``report``,
``ratings``, the pit page) are :class:`Repository` methods, each its own transaction, or a transaction's parts
where several belong together.

A watch with tables the repository does not know (a test's double, a watch before it has its place here)
names their DDL in its ``schema`` and reaches them through :attr:`Transaction.cursor` and :meth:`Transaction.sql`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from floor.archive.alerts import Alert, Feed, FeedItem
from floor.archive.cash_tables import CashBuyIn, CashDay, CashTables
from floor.archive.dialect import POSTGRES
from floor.archive.money_tables import AccountingTables, FaultBucket, MoneyWatchTables, SeatSession
from floor.archive.recall import Recall
from floor.archive.store import Store
from floor.archive.surveil_tables import SURVEILLANCE_SCHEMA, CountTables, DealerErrorHour, SurveillanceTables


class Transaction:
    """One transaction of the repository (:meth:`Repository.transaction`), with each part's tables."""

    def __init__(self, store: Store, cur: Any, feed: Feed, recall: Recall) -> None:
        self._store, self._feed, self._recall = store, feed, recall
        #: The transaction's cursor: only for a watch's tables of its own (its ``schema``).
        self.cursor = cur
        self.surveillance = SurveillanceTables(store, cur)
        self.money = MoneyWatchTables(store, cur)
        self.count = CountTables(store, cur)
        self.accounting = AccountingTables(store, cur)
        self.cash = CashTables(store, cur)
        self.abandoned = False

    def sql(self, statement: str) -> str:
        """``statement`` in the archive's dialect (for a watch's tables of its own)."""
        return self._store.sql(statement)

    def record(self, table: str, seq: int) -> dict[str, Any] | None:
        """One archived record as its JSON dict (what an alert names), or None."""
        return self._recall.record_in(self.cursor, table, seq)

    def insert_alerts(self, alerts: Iterable[Alert]) -> list[FeedItem]:
        """Store these alerts in the feed in this transaction; the newly stored ones."""
        return self._feed.insert(self.cursor, alerts)

    def abandon(self) -> None:
        """Roll the transaction back now; nothing of it is stored."""
        self._store.conn.rollback()
        self.abandoned = True


class Repository:
    """The readers' tables on the archive's :class:`~floor.archive.store.Store` (see the module's docstring)."""

    def __init__(self, store: Store, feed: Feed, recall: Recall) -> None:
        self._store, self._feed, self._recall = store, feed, recall

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One transaction: committed when the body returns (unless :meth:`Transaction.abandon` was called), rolled
        back if it raises."""
        conn = self._store.conn
        tx = Transaction(self._store, conn.cursor(), self._feed, self._recall)
        try:
            yield tx
            if not tx.abandoned:
                conn.commit()
        except BaseException:
            conn.rollback()
            raise

    def prepare(self, extra: Iterable[str] = ()) -> None:
        """Make surveillance's tables, and ``extra`` (the watches' ``schema``: ``CREATE ... IF NOT EXISTS``, ``?``
        placeholders), once at a collector's start (two collectors starting at once: one makes them)."""
        with self._store.transaction() as cur:
            if self._store.dialect is POSTGRES:
                cur.execute("SELECT pg_advisory_xact_lock(4242002)")
            for statement in (*SURVEILLANCE_SCHEMA, *extra):
                cur.execute(self._store.sql(statement))

    # -- the reports' queries, each its own transaction ---------------------------------------------------
    def prune_windows(self, before: int) -> int:
        """Drop the windows of shoes started before ``before`` (epoch seconds); how many rows went."""
        with self.transaction() as tx:
            return tx.surveillance.prune(before)

    def dealer_errors(self, table: str | None = None) -> list[DealerErrorHour]:
        """The dealer-error counts per table and hour (of one ``table``, or all), oldest first."""
        with self.transaction() as tx:
            return tx.surveillance.hours(table)

    def money_faults(self, first: str, end: str, table: str | None = None) -> list[FaultBucket]:
        """The money faults per table and bucket from ``first`` to before ``end`` (of one ``table``, or all)."""
        with self.transaction() as tx:
            return tx.money.buckets(first, end, table)

    def seat_sessions(
        self, table: str | None = None, since: str | None = None, open_only: bool = False
    ) -> list[SeatSession]:
        """Seat sessions by start, table and seat (:meth:`~floor.archive.money_tables.AccountingTables.sessions`)."""
        with self.transaction() as tx:
            return tx.accounting.sessions(table, since, open_only)

    def cash_log(self, day: str) -> tuple[list[CashBuyIn], list[CashDay]]:
        """The gaming day's multiple transaction log entries, and each player's cash in that day (one
        transaction: the two agree)."""
        with self.transaction() as tx:
            return tx.cash.log(day), tx.cash.days(day, "cash")
