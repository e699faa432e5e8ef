"""The floor's ack, kept beside the chain: the highest contiguous seq (record id) the floor says it archived.

It is the floor link's end-to-end mark and the limit of the table's own prune. It is not a record (a
record would itself need publishing and acknowledging): a one-row table ``floor_ack``, written by the table
loop (the journal's one writer) when the link posts a ``FloorAck``, read by the link's own read-only
connection at start-up. Created on first use: a journal without the table reads as "nothing acknowledged",
and an older shoe-controller ignores the extra table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from controller.journal.chain import check_ts, read_head, utc_now
from controller.journal.schema import FLOOR_ACK_SCHEMA
from controller.journal.store import Store


class FloorAcks:
    """The floor's ack in ``store``; ``before_commit`` is the file guard's check before a write."""

    def __init__(self, store: Store, *, before_commit: Callable[[], None]) -> None:
        self._store = store
        self._before_commit = before_commit

    def store(self, seq: int, *, ts: str | None = None) -> None:
        """Keep the floor's latest ack (the floor's word, even if lower than the last one: an archive that
        lost records asks for them again). Raises :class:`~controller.journal.errors.JournalError` (FULL,
        WRITE_FAILED ...) like a commit."""
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise ValueError(f"floor ack must be a record id >= 0, not {seq!r}")
        self._before_commit()
        stamp = check_ts(ts) if ts is not None else utc_now()
        with self._store.transaction("cannot store the floor's ack") as conn:
            conn.execute(FLOOR_ACK_SCHEMA)
            conn.execute(
                "INSERT INTO floor_ack (one, seq, ts) VALUES (1, ?, ?)"
                " ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, ts = excluded.ts",
                (seq, stamp),
            )

    def read(self) -> int | None:
        """The floor's ``ack`` as the floor link stored it (table ``floor_ack``, column ``seq``: the highest
        contiguous record id the floor has archived), or None when no ack is stored, the table does not
        exist (no floor link yet) or cannot be read. Never more than the chain head."""
        if "floor_ack" not in self._store.tables():
            return None
        conn = self._store.conn
        try:
            row = conn.execute("SELECT max(seq) FROM floor_ack").fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[0] is None:
            return None
        return min(int(row[0]), read_head(conn)[0])
