"""The one connection the archive's parts share, its dialect, and the guard on the SQLite file it opened.

The records, the chain heads, the keys, the alert feed, recall, verify and the watches' repository all read and
write through one :class:`Store`, used by one thread at a time (the collector's loop). Every write first checks
that the path still names the file this connection opened (device and inode, as the table's journal does in
controller/journal/guard.py): a deleted or replaced archive file is :class:`~floor.archive.errors.ArchiveLost`,
nothing more is written to it or acked from it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from floor.archive.dialect import Connection, Dialect
from floor.archive.errors import ArchiveLost


@dataclass(eq=False)
class Store:
    """The archive's connection (``conn``) in its ``dialect``; for SQLite the file (``path``) and which file it
    is (``identity``: device, inode) once opened."""

    conn: Connection
    dialect: Dialect
    url: str
    path: Path | None = None
    identity: tuple[int, int] | None = None
    lost: str | None = field(default=None)  # why the file is no longer the one opened, once seen

    def sql(self, statement: str) -> str:
        """``statement`` (``?`` placeholders, ``{json}`` and ``{json_type}``) in this archive's dialect."""
        return self.dialect.sql(statement)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor for one transaction: committed when the body returns, rolled back if it raises (a read
        ends its transaction so, too: PostgreSQL holds a snapshot until then)."""
        cur = self.conn.cursor()
        try:
            yield cur
            self.conn.commit()
        except BaseException:
            self.conn.rollback()
            raise

    def newest(self, select: str, column: str | None, value: Any, limit: int | None) -> list[Any]:
        """The rows of ``select`` (a ``SELECT ... FROM`` a table with an ``id``), newest first: with ``column``
        only those whose column is ``value``, at most ``limit`` (None: all). The feed and the audit log."""
        sql, params = select, []
        if column is not None:
            sql += f" WHERE {column} = ?"
            params.append(value)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self.transaction() as cur:
            cur.execute(self.sql(sql), params)
            return list(cur.fetchall())

    def check_file(self) -> None:
        """Before every write (and between batches): the path still names the SQLite file this connection
        opened. A deleted file lives on only in this connection (and is lost at the next boot); a replaced one
        is not the archive the tables were acked from. Either way :class:`ArchiveLost`, every time: nothing is
        written or acked. (PostgreSQL: nothing to check.)"""
        if self.path is None:
            return
        if self.lost is None:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                self.lost = "deleted"
            except OSError as exc:
                self.lost = f"cannot be checked ({exc.strerror})"
            else:
                if (st.st_dev, st.st_ino) != self.identity:
                    self.lost = "replaced by another file"
        if self.lost is not None:
            raise ArchiveLost(
                f"archive {self.path}: the file this collector opened was {self.lost}; nothing more is stored"
                " or acked from it"
            )
