"""Each table's chain head in the archive: the last record up to which the archived records are contiguous
and linked, what the floor acks.

The archive is the truth: :meth:`Chains.advance` computes a table's head from the stored records (whatever
collector stored them), and only ever moves it forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.game.records import GENESIS_HASH
from floor.archive.alerts import Alert, AlertKind
from floor.archive.dialect import now
from floor.archive.store import Store

#: How many records :meth:`Chains.advance` reads per step while walking a chain forward.
ADVANCE_STEP = 5000

_UPSERT_HEAD = (
    'INSERT INTO chains ("table", site, head_seq, head_hash, updated_at) VALUES (?, ?, ?, ?, ?)'
    ' ON CONFLICT ("table") DO UPDATE SET head_seq = excluded.head_seq, head_hash = excluded.head_hash,'
    " updated_at = excluded.updated_at, site = COALESCE(excluded.site, chains.site)"
    " WHERE chains.head_seq < excluded.head_seq RETURNING head_seq, head_hash"
)


@dataclass(frozen=True, slots=True)
class Head:
    """A table's contiguous, linked head: ``seq`` (0 = nothing yet) and its ``hash``."""

    table: str
    seq: int
    hash: str


class Chains:
    """The tables' chain heads, on the archive's :class:`~floor.archive.store.Store`."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def head(self, table: str) -> Head:
        with self._store.transaction() as cur:
            return self._head(cur, table)

    def _head(self, cur: Any, table: str) -> Head:
        cur.execute(self._store.sql('SELECT head_seq, head_hash FROM chains WHERE "table" = ?'), (table,))
        row = cur.fetchone()
        return Head(table, 0, GENESIS_HASH) if row is None else Head(table, int(row[0]), str(row[1]))

    def site(self, cur: Any, table: str) -> str | None:
        """The table's site as its chain knows it (None: never archived yet), in the caller's transaction."""
        cur.execute(self._store.sql('SELECT site FROM chains WHERE "table" = ?'), (table,))
        row = cur.fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def advance(self, table: str, site: str | None = None) -> tuple[Head, Alert | None]:
        """Walk ``table``'s chain forward from its stored head over the archived records, as far as they are
        contiguous and linked; store and return the new head, with what stopped it (a gap or a broken link),
        or None when nothing after the head is archived."""
        self._store.check_file()
        sql = self._store.sql
        cur = self._store.conn.cursor()
        head = self._head(cur, table)
        seq, link = head.seq, head.hash
        stop: Alert | None = None
        while True:
            cur.execute(
                sql('SELECT seq, prev, hash FROM records WHERE "table" = ? AND seq > ? ORDER BY seq LIMIT ?'),
                (table, seq, ADVANCE_STEP),
            )
            rows = cur.fetchall()
            for next_seq, prev, own in rows:
                if next_seq != seq + 1:
                    stop = Alert(
                        table, seq + 1, AlertKind.GAP, f"records {seq + 1}..{next_seq - 1} missing; ack held at {seq}"
                    )
                    break
                if prev != link:
                    stop = Alert(
                        table, next_seq, AlertKind.BROKEN_LINK, f"prev is not record {seq}'s hash; ack held at {seq}"
                    )
                    break
                seq, link = next_seq, own
            if stop is not None or len(rows) < ADVANCE_STEP:
                break
        if seq > head.seq:
            # One transaction: the head read, the walk and the upsert. RETURNING gives the stored head; nothing
            # comes back when another collector stored a further one meanwhile: read it then.
            cur.execute(sql(_UPSERT_HEAD), (table, site, seq, link, now()))
            row = cur.fetchone()
            head = Head(table, int(row[0]), str(row[1])) if row is not None else self._head(cur, table)
        self._store.conn.commit()
        return head, stop
