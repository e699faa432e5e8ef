"""Reading the archive back: its tables, a record, a table's records, its coups in ``history --json`` shape,
and game recall (the pit page's table page and anyone answering a dispute): a table's shoes, a shoe's coups, one
coup as it was settled with the money records a dispute needs, a shoe's records for its edges.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from typing import Any

from controller.game.records import RecordKind, TableRecord, shape_coup
from floor.archive.dialect import POSTGRES, body_text
from floor.archive.store import Store

#: The record kinds the archive's queries name (bound as plain text: a driver need not know the enum).
_COUP, _SHOE = RecordKind.COUP.value, RecordKind.SHOE.value
#: The money's records a coup's recall shows (:meth:`Recall.coup_money`).
_MONEY_KINDS = (
    RecordKind.WAGER,
    RecordKind.WAGER_REFUSED,
    RecordKind.PAST_POST,
    RecordKind.PULLED_BET,
    RecordKind.SETTLEMENT,
    RecordKind.MISPAY,
    RecordKind.COMMISSION,
)
_RECORD_COLUMNS = '"table", seq, kind, at, session, number, cause, body, prev, hash'


def _record_of(row: Sequence[Any], sig: str | None = None) -> TableRecord:
    """A row of ``_RECORD_COLUMNS`` as the record (with ``sig``, if given)."""
    body = json.loads(row[7]) if isinstance(row[7], str | bytes) else row[7]
    return TableRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], body, row[8], row[9], sig=sig)


class Recall:
    """Reading records back, on the archive's :class:`~floor.archive.store.Store`."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def tables(self) -> list[str]:
        with self._store.transaction() as cur:
            cur.execute('SELECT DISTINCT "table" FROM records ORDER BY "table"')
            return [str(r[0]) for r in cur.fetchall()]

    def record(self, table: str, seq: int | None) -> dict[str, Any] | None:
        """One archived record as its JSON dict (what an alert names), or None."""
        if seq is None:
            return None
        with self._store.transaction() as cur:
            return self.record_in(cur, table, seq)

    def record_in(self, cur: Any, table: str, seq: int) -> dict[str, Any] | None:
        """:meth:`record`, in the caller's transaction."""
        cur.execute(
            self._store.sql(f'SELECT {_RECORD_COLUMNS} FROM records WHERE "table" = ? AND seq = ?'), (table, seq)
        )
        row = cur.fetchone()
        return None if row is None else _record_of(row).to_dict()

    def records(self, table: str) -> Iterator[TableRecord]:
        """Every archived record of ``table`` in seq order, as it was received."""
        cur = self._store.conn.cursor()
        cur.execute(
            self._store.sql(f'SELECT {_RECORD_COLUMNS}, sig FROM records WHERE "table" = ? ORDER BY seq'), (table,)
        )
        for row in cur.fetchall():
            yield _record_of(row, row[10])
        self._store.conn.commit()

    def of_kinds(
        self,
        kinds: Sequence[str],
        table: str | None = None,
        after: int = 0,
        upto: int | None = None,
        batch: int = 5000,
    ) -> Generator[TableRecord, None, None]:
        """Every archived record of these kinds (of one ``table``, or all; with ``after`` < seq <= ``upto``),
        table by table in seq order, without their signatures, read ``batch`` rows at a time (what the rating
        slips read: a month of a floor's records is not held at once)."""
        marks = ", ".join("?" for _ in kinds)
        sql = f"SELECT {_RECORD_COLUMNS} FROM records WHERE kind IN ({marks})"
        params: list[Any] = list(kinds)
        if table is not None:
            sql += ' AND "table" = ? AND seq > ?'
            params += [table, after]
            if upto is not None:
                sql += " AND seq <= ?"
                params.append(upto)
        # PostgreSQL: a server-side cursor (psycopg's plain one fetches every row at the execute)
        conn: Any = self._store.conn  # psycopg's cursor() takes a name (the archive's Connection does not say so)
        cur = conn.cursor(name="records_of_kinds") if self._store.dialect is POSTGRES else conn.cursor()
        try:
            cur.execute(self._store.sql(sql + ' ORDER BY "table", seq'), params)
            while rows := cur.fetchmany(batch):
                for row in rows:
                    yield _record_of(row)
        finally:
            cur.close()
            conn.commit()

    def last_of_kinds(self, table: str, kinds: Sequence[str]) -> TableRecord | None:
        """``table``'s newest archived record of these kinds (by seq), or None (the pit's dealer on duty after
        its restart: the last ``dealer_in`` or ``dealer_out``, which may be shoes back)."""
        marks = ", ".join("?" for _ in kinds)
        with self._store.transaction() as cur:
            cur.execute(
                self._store.sql(
                    f'SELECT {_RECORD_COLUMNS} FROM records WHERE "table" = ? AND kind IN ({marks})'
                    " ORDER BY seq DESC LIMIT 1"
                ),
                (table, *kinds),
            )
            row = cur.fetchone()
        return None if row is None else _record_of(row)

    def between(self, table: str, after: int, upto: int) -> list[TableRecord]:
        """``table``'s records with ``after`` < seq <= ``upto``, in seq order, without their signatures (what
        surveillance reads)."""
        with self._store.transaction() as cur:
            cur.execute(
                self._store.sql(
                    f'SELECT {_RECORD_COLUMNS} FROM records WHERE "table" = ? AND seq > ? AND seq <= ? ORDER BY seq'
                ),
                (table, after, upto),
            )
            return [_record_of(row) for row in cur.fetchall()]

    def coups(self, table: str | None = None, last: int | None = None) -> list[dict[str, Any]]:
        """Coups in ``history --json`` shape plus ``table``, per table oldest first; ``last`` = newest N per table."""
        out: list[dict[str, Any]] = []
        cur = self._store.conn.cursor()
        for name in [table] if table is not None else self.tables():
            sql = 'SELECT seq, at, body FROM records WHERE "table" = ? AND kind = ? ORDER BY seq DESC'
            params: list[Any] = [name, _COUP]
            if last is not None:
                sql += " LIMIT ?"
                params.append(last)
            cur.execute(self._store.sql(sql), params)
            for seq, at, body in reversed(cur.fetchall()):
                data = json.loads(body_text(body))  # key order as the table stored it (jsonb reorders)
                out.append({"table": name, **shape_coup({**data, "ts": at, "record": seq})})
        self._store.conn.commit()
        return out

    # -- game recall (the pit page's table page and anyone answering a dispute) ----------------------------
    def _coup_rows(self, sql: str, params: Sequence[Any], table: str) -> list[dict[str, Any]]:
        cur = self._store.conn.cursor()
        cur.execute(self._store.dialect.recall(sql), params)
        rows = cur.fetchall()
        self._store.conn.commit()
        return [
            {"table": table, **shape_coup({**json.loads(body_text(body)), "ts": at, "record": seq})}
            for seq, at, body in rows
        ]

    def shoes(self, table: str) -> list[int]:
        """The numbers of the shoes ``table`` has coups archived for, oldest first."""
        cur = self._store.conn.cursor()
        cur.execute(
            self._store.dialect.recall(
                'SELECT DISTINCT {shoe} FROM records WHERE "table" = ? AND kind = ? AND {shoe} IS NOT NULL'
            ),
            (table, _COUP),
        )
        out = sorted(int(r[0]) for r in cur.fetchall())
        self._store.conn.commit()
        return out

    def shoe_coups(self, table: str, shoe: int) -> list[dict[str, Any]]:
        """Every coup record of one shoe (voids and set-aside cards included) in ``history --json`` shape plus
        ``table``, in the order they were dealt."""
        return self._coup_rows(
            'SELECT seq, at, body FROM records WHERE "table" = ? AND kind = ? AND {shoe} = ? ORDER BY seq',
            (table, _COUP, shoe),
            table,
        )

    def recall(self, table: str, shoe: int, coup: int) -> dict[str, Any] | None:
        """Coup ``coup`` of shoe ``shoe`` as it was settled: the declared record, or, when the coup number was
        only ever voided, the last void; None when the archive holds no such coup. ``voids`` counts the voided
        deals of that number (a void and a re-deal keep the coup's number); ``hash`` is the coup record's own
        (``record`` its seq) and ``money`` what a dispute needs of the coup's wagers (:meth:`coup_money`)."""
        rows = self._coup_rows(
            'SELECT seq, at, body FROM records WHERE "table" = ? AND kind = ? AND {shoe} = ? AND {coup} = ?'
            " ORDER BY seq",
            (table, _COUP, shoe, coup),
            table,
        )
        if not rows:
            return None
        declared = [r for r in rows if r["declared"]]
        found = declared[-1] if declared else rows[-1]
        return {
            **found,
            "voids": sum(1 for r in rows if r["void"]),
            "hash": self._hash_of(table, int(found["record"])),
            "money": self.coup_money(table, shoe, coup, int(found["record"])),
        }

    def _hash_of(self, table: str, seq: int) -> str | None:
        cur = self._store.conn.cursor()
        cur.execute(self._store.sql('SELECT hash FROM records WHERE "table" = ? AND seq = ?'), (table, seq))
        row = cur.fetchone()
        self._store.conn.commit()
        return None if row is None else str(row[0])

    def coup_money(self, table: str, shoe: int, coup: int, seq: int) -> list[dict[str, Any]]:
        """The money records of one coup, in journal order, each ``{"kind", "seq", "at", "hash", "body"}``: its
        wagers (locked after the table's previous coup record), their settlements, mispays, past-posts, pulled
        and refused bets (those of this shoe and coup), and the commission boxes that closed right after it
        (``seq`` is the coup record's; the records read lie between the coup records before and after it)."""
        cur = self._store.conn.cursor()
        cur.execute(
            self._store.sql('SELECT max(seq) FROM records WHERE "table" = ? AND kind = ? AND seq < ?'),
            (table, _COUP, seq),
        )
        row = cur.fetchone()
        before = 0 if row is None or row[0] is None else int(row[0])
        cur.execute(
            self._store.sql('SELECT min(seq) FROM records WHERE "table" = ? AND kind IN (?, ?) AND seq > ?'),
            (table, _COUP, _SHOE, seq),
        )
        row = cur.fetchone()
        after = None if row is None or row[0] is None else int(row[0])
        kinds = tuple(k.value for k in _MONEY_KINDS)
        sql = (
            f'SELECT seq, kind, at, hash, body FROM records WHERE "table" = ? AND seq > ?'
            f" AND kind IN ({', '.join('?' for _ in kinds)})"
        )
        params: list[Any] = [table, before, *kinds]
        if after is not None:
            sql += " AND seq < ?"
            params.append(after)
        cur.execute(self._store.sql(sql + " ORDER BY seq LIMIT 2000"), params)
        out = []
        for r_seq, kind, at, digest, body in cur.fetchall():
            data = json.loads(body_text(body))
            if not isinstance(data, dict) or data.get("shoe") != shoe:
                continue
            if kind != RecordKind.COMMISSION and data.get("coup") != coup:
                continue
            out.append({"kind": str(kind), "seq": int(r_seq), "at": str(at), "hash": str(digest), "body": data})
        self._store.conn.commit()
        return out

    def shoe_records(self, table: str, shoe: int) -> list[tuple[str, dict[str, Any]]]:
        """``(kind, body)`` of every record of one shoe, from its start record to the next shoe's, in journal
        order: what :func:`controller.game.edges.shoe_edges` reads to recompute the edge of every wager."""
        cur = self._store.conn.cursor()
        cur.execute(
            self._store.dialect.recall('SELECT min(seq) FROM records WHERE "table" = ? AND kind = ? AND {shoe} = ?'),
            (table, _SHOE, shoe),
        )
        row = cur.fetchone()
        start = None if row is None else row[0]
        if start is None:
            self._store.conn.commit()
            return []
        cur.execute(
            self._store.dialect.recall(
                'SELECT min(seq) FROM records WHERE "table" = ? AND kind = ? AND {shoe} > ? AND seq > ?'
            ),
            (table, _SHOE, shoe, start),
        )
        row = cur.fetchone()
        end = None if row is None else row[0]
        sql = 'SELECT kind, body FROM records WHERE "table" = ? AND seq >= ?'
        params: list[Any] = [table, start]
        if end is not None:
            sql += " AND seq < ?"
            params.append(end)
        cur.execute(self._store.sql(sql + " ORDER BY seq"), params)
        out = [(str(k), json.loads(body_text(b))) for k, b in cur.fetchall()]
        self._store.conn.commit()
        return out
