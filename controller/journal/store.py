"""The one open SQLite connection the journal's parts share, and its write transaction.

The chain, the queries, the floor's ack, the retention and the file guard all read and write through one
:class:`Store`. The guard may swap the connection under them (a degraded journal reopened for writing, a
deleted file put back), so each part reads :attr:`Store.conn` afresh instead of keeping the connection.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from controller.journal.errors import JournalError, JournalFault, is_full


@dataclass(eq=False)
class Store:
    """The journal's connection (``conn``), the file it names (``path``) and whether it may write."""

    conn: sqlite3.Connection
    path: str
    read_only: bool

    def copy_to(self, target: str, journal_mode: str) -> None:
        """A complete copy of what this connection sees (WAL included) in a new file ``target``, with SQLite's
        online backup (one read transaction: consistent while another connection commits), in ``journal_mode``
        (``WAL``, or ``DELETE`` for one self-contained file), flushed to disk. Raises OSError or sqlite3.Error."""
        dest = sqlite3.connect(target, isolation_level=None)
        try:
            self.conn.backup(dest)
            dest.execute(f"PRAGMA journal_mode = {journal_mode}")
        finally:
            dest.close()
        fd = os.open(target, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def tables(self) -> set[str]:
        """The file's tables, SQLite's own bookkeeping aside."""
        rows = self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {row[0] for row in rows} - {"sqlite_sequence"}

    @contextlib.contextmanager
    def transaction(self, failure: str | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE, then COMMIT (unless the body rolled back itself); any
        exception rolls back and goes on. With ``failure``, an SQLite error becomes a :class:`JournalError`
        (FULL on a full disk, else WRITE_FAILED) reading ``"<failure>: <error>"``: nothing was written."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                if conn.in_transaction:
                    conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            if failure is None:
                raise
            fault = JournalFault.FULL if is_full(exc) else JournalFault.WRITE_FAILED
            raise JournalError(self.path, fault, f"{failure}: {exc}") from exc
