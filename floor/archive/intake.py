"""Records into the archive: a batch in one transaction, each ``(table, seq)`` once, a second, different record
with a seq already archived a ``conflict`` (the stored one stays), and what neither database can hold refused
before it is sent (:class:`~floor.archive.errors.UnstorableRecord`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from controller.game.records import TableRecord, canonical_json
from floor.archive.alerts import Alert, AlertKind
from floor.archive.dialect import POSTGRES, now
from floor.archive.errors import ArchiveError, UnstorableRecord
from floor.archive.store import Store
from floor_protocol.admission import MAX_DEPTH, AdmissionError, check_value

_COLUMNS = '"table", seq, kind, at, session, number, cause, body, prev, hash, received_at, sig, key_id'
_STAGE = f"INSERT INTO staging ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
# From the staging table into the archive, in (table, seq) order, those already there skipped; RETURNING names
# the ones inserted. ("WHERE true": SQLite's parser would read ON CONFLICT as part of a join otherwise.)
_INSERT_STAGED = (
    f"INSERT INTO records ({_COLUMNS})"
    ' SELECT s."table", s.seq, s.kind, s.at, s.session, s.number, s.cause, {json_staged}, s.prev, s.hash,'
    ' s.received_at, s.sig, s.key_id FROM staging s WHERE true ORDER BY s."table", s.seq ON CONFLICT DO NOTHING'
    ' RETURNING "table", seq'
)
# After the insert every staged (table, seq) is archived: those archived with another hash are conflicts. Asked
# only when some staged record was already there (a resend, another collector's copy): usually none is.
_DIFFERING = (
    'SELECT r."table", r.seq, r.hash FROM staging s JOIN records r ON r."table" = s."table" AND r.seq = s.seq'
    " WHERE r.hash <> s.hash"
)
#: What no stored text may hold (NUL, a surrogate), and a digit run long enough to be past 64 bits.
_SUSPECT_TEXT = re.compile("[\x00\ud800-\udfff]")
_LONG_RUN = re.compile("[0-9]{19}")


class Intake:
    """Storing records, on the archive's :class:`~floor.archive.store.Store`."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._staging = False  # the staging table exists on this connection

    def store(
        self, records: Sequence[TableRecord], key_ids: Mapping[tuple[str, int], str] | None = None
    ) -> tuple[int, list[Alert]]:
        """Insert ``records`` in one transaction, those already there skipped; ``(inserted, alerts)``.
        ``key_ids``: (table, seq) -> the id of the key the record's ``sig`` was verified with (stored with it).

        A record whose ``(table, seq)`` is held with a different hash is a conflict: the stored one stays.
        Records are inserted in (table, seq) order, so two collectors never wait on each other in a cycle.

        The batch goes into a temporary staging table first (PostgreSQL: COPY; SQLite: one executemany), then
        into the archive with one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING RETURNING``, and one join names
        the conflicts (only when a record was already archived): three statements and a commit a batch, whatever
        its size and however many tables it holds."""
        if not records:
            return 0, []
        self._store.check_file()
        for r in records:
            check_storable(r)
        stamp = now()
        chosen = {(r.table, r.seq): r for r in records}
        ids = key_ids or {}
        rows = [
            (
                *(r.table, r.seq, r.kind, r.at, r.session, r.number, r.cause, canonical_json(r.body), r.prev, r.hash),
                *(stamp, r.sig, ids.get((r.table, r.seq)) if r.sig is not None else None),
            )
            for r in chosen.values()
        ]
        conn, sql = self._store.conn, self._store.sql
        cur = conn.cursor()
        try:
            self._stage(cur, rows)
            cur.execute(sql(_INSERT_STAGED))
            inserted = len(cur.fetchall())
            stored: dict[tuple[str, int], str] = {}  # (table, seq) -> the archived hash, where it differs
            if inserted < len(chosen):
                cur.execute(sql(_DIFFERING))
                stored = {(str(t), int(seq)): str(h) for t, seq, h in cur.fetchall()}
            conn.commit()
        except BaseException:
            self._staging = False  # its creation may be what was rolled back
            conn.rollback()
            raise
        alerts = [
            Alert(
                r.table, r.seq, AlertKind.CONFLICT, "a different record with this seq is archived", record=r.to_dict()
            )
            for r in sorted(records, key=lambda r: (r.table, r.seq))
            if stored.get((r.table, r.seq), chosen[r.table, r.seq].hash) != r.hash
        ]
        return inserted, alerts

    def content_error(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by :meth:`store`, comes of a record's content (the batch, stored record by
        record, would lose only that one) rather than of a database that is down, gone or broken: a record
        refused before sending (:class:`UnstorableRecord`), a value the driver cannot send (encoding, range,
        nesting), or the database's data and integrity errors (SQLSTATE classes 22 and 23)."""
        if isinstance(exc, UnstorableRecord | UnicodeError | OverflowError | RecursionError | TypeError):
            return True
        if self._store.dialect is POSTGRES:
            import psycopg

            return isinstance(exc, psycopg.DataError | psycopg.IntegrityError)
        return isinstance(exc, sqlite3.DataError | sqlite3.IntegrityError | ValueError) and not isinstance(
            exc, ArchiveError
        )

    def _stage(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:
        """The batch into the staging table (made on first use, empty at the start of each transaction)."""
        if not self._staging:
            cur.execute(self._store.dialect.staging)
            self._staging = True
        if self._store.dialect is POSTGRES:
            with cur.copy(f"COPY staging ({_COLUMNS}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cur.execute("DELETE FROM staging")  # SQLite has no ON COMMIT DELETE ROWS
            cur.executemany(_STAGE, rows)


def check_storable(record: TableRecord) -> None:
    """Refuse what neither database can hold, before it is sent (PostgreSQL refuses a NUL in text and jsonb
    with an error that would abort the whole batch): a NUL or a lone surrogate in any string, an integer
    outside 64 bits, a number that is not finite, a body nested past the admission's depth. The body's
    canonical text says when the full walk is needed (an escape, a surrogate, a 19-digit run): rarely."""
    for name in ("table", "kind", "at", "prev", "hash", "sig"):
        value = getattr(record, name)
        if (value is not None or name != "sig") and (not isinstance(value, str) or _SUSPECT_TEXT.search(value)):
            raise UnstorableRecord(record, f"field {name} is not text without NUL or a lone surrogate")
    try:
        text = canonical_json(record.body)
        if "\\u" in text or _SUSPECT_TEXT.search(text) is not None or _LONG_RUN.search(text) is not None:
            check_value(dict(record.body), MAX_DEPTH)
        check_value([record.seq, record.session, record.number, record.cause])
    except (AdmissionError, ValueError, TypeError, RecursionError) as exc:
        raise UnstorableRecord(record, str(exc) or type(exc).__name__) from None
