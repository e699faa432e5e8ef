"""The table's questions to its journal, in the record vocabulary's words: the inputs a restart replays,
the newest input of a kind, where the newest shoe started, the shoe's last event, the coups.

Kinds are :class:`~controller.game.records.RecordKind` and :class:`~controller.game.records.InputKind`
members, never bare strings. Reading only: every write goes through :mod:`controller.journal.chain`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from controller.game.records import InputKind, RecordKind, TableRecord
from controller.journal.store import Store

_INPUT = RecordKind.INPUT.value
_SELECT = "SELECT id, ts, kind, session, number, cause, body, prev_hash, hash FROM records"


@dataclass(frozen=True, slots=True)
class Record:
    """One journal row as stored (``body`` is the canonical JSON text)."""

    id: int
    ts: str
    kind: str
    session: int | None
    number: int | None
    cause: int | None
    body: str
    prev_hash: str
    hash: str

    def data(self) -> dict[str, Any]:
        """The body decoded."""
        value = json.loads(self.body)
        if not isinstance(value, dict):
            raise ValueError(f"record {self.id}: body is not a JSON object")
        return value

    def for_floor(self, table: str) -> TableRecord:
        """This record as it leaves the table (the floor link's message), checkable against the chain."""
        return TableRecord(
            table=table,
            seq=self.id,
            kind=self.kind,
            at=self.ts,
            session=self.session,
            number=self.number,
            cause=self.cause,
            body=self.data(),
            prev=self.prev_hash,
            hash=self.hash,
        )


class Queries:
    """The journal's domain queries over ``store``."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def records(self, *, after: int = 0) -> Iterator[Record]:
        """Every record with id > ``after``, in order."""
        for row in self._store.conn.execute(f"{_SELECT} WHERE id > ? ORDER BY id", (after,)):
            yield Record(*row)

    def inputs(self, *, after: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(record id, body)`` of every input with id > ``after``, in journal order: what a restart replays."""
        rows = self._store.conn.execute(
            f"SELECT id, body FROM records WHERE kind = '{_INPUT}' AND id > ? ORDER BY id", (after,)
        )
        for record_id, body in rows:
            yield record_id, json.loads(body)

    def _last_input(self, column: str, kind: InputKind, before: int) -> Any:
        if not isinstance(kind, InputKind):
            raise TypeError(f"an input kind must be an InputKind, not {kind!r}")
        row = self._store.conn.execute(  # newest first, through the (kind, id) index: stops at the first one
            f"SELECT {column} FROM records WHERE kind = '{_INPUT}' AND id < ? AND json_extract(body, '$.kind') = ?"
            " ORDER BY id DESC LIMIT 1",
            (before, kind.value),
        ).fetchone()
        return None if row is None else row[0]

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None:
        """The newest input body of ``kind`` (its ``"kind"`` field) with id < ``before``, or None."""
        body = self._last_input("body", kind, before)
        return None if body is None else dict(json.loads(body))

    def last_input_id(self, kind: InputKind, *, before: int) -> int | None:
        """The id of the newest input of ``kind`` with id < ``before``, or None."""
        record_id = self._last_input("id", kind, before)
        return None if record_id is None else int(record_id)

    def last_shoe_start(self) -> tuple[int, int] | None:
        """``(input id, shoe number)`` of the input that started the newest shoe (its derived ``shoe`` record
        says ``"event": "start"``), or None. A restart replays from there: a new shoe resets the table."""
        rows = self._store.conn.execute(
            f"SELECT cause, body FROM records WHERE kind = '{RecordKind.SHOE}' ORDER BY id DESC"
        )
        for cause, body in rows:
            data = json.loads(body)
            if data.get("event") == "start" and cause is not None:
                return int(cause), int(data["shoe"])
        return None

    def shoe_starts(self) -> list[int]:
        """Input ids that started a shoe (their derived ``shoe`` record says ``"event": "start"``), oldest first."""
        rows = self._store.conn.execute(
            f"SELECT DISTINCT cause FROM records WHERE kind = '{RecordKind.SHOE}' AND cause IS NOT NULL"
            " AND json_extract(body, '$.event') = 'start' ORDER BY cause"
        )
        return [int(row[0]) for row in rows]

    def last_event(self, session: int | None = None) -> tuple[int, int] | None:
        """The most recent ``(session, number)`` stored (of ``session`` when given), or None."""
        conn = self._store.conn
        if session is None:
            row = conn.execute(
                f"SELECT session, number FROM records WHERE kind = '{_INPUT}' AND session IS NOT NULL"
                " AND number IS NOT NULL ORDER BY id DESC LIMIT 1"
            ).fetchone()
        else:
            row = conn.execute(
                f"SELECT session, max(number) FROM records WHERE kind = '{_INPUT}' AND session = ?"
                " AND number IS NOT NULL",
                (session,),
            ).fetchone()
            if row is not None and row[1] is None:
                row = None
        return None if row is None else (int(row[0]), int(row[1]))

    def coups(self, last: int | None = None, shoe: int | None = None) -> list[dict[str, Any]]:
        """Coup records, oldest first, each body with ``ts`` and ``record`` (its id) merged in.

        ``last`` keeps only the newest N; ``shoe`` only those whose body says ``"shoe": shoe``.
        """
        if last is not None and last < 0:
            raise ValueError(f"last must be >= 0, not {last}")
        sql = f"SELECT id, ts, body FROM records WHERE kind = '{RecordKind.COUP}'"
        params: list[Any] = []
        if shoe is not None:
            sql += " AND json_extract(body, '$.shoe') = ?"
            params.append(shoe)
        sql += " ORDER BY id DESC"
        if last is not None:
            sql += " LIMIT ?"
            params.append(last)
        rows = self._store.conn.execute(sql, params).fetchall()
        return [{**json.loads(body), "ts": ts, "record": record_id} for record_id, ts, body in reversed(rows)]

    def hashes(self, *, after: int, limit: int) -> list[tuple[int, str]]:
        """``(id, hash)`` of at most ``limit`` records with id > ``after``, in order (what a signature covers)."""
        rows = self._store.conn.execute(
            "SELECT id, hash FROM records WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
        ).fetchall()
        return [(int(i), str(h)) for i, h in rows]

    def record_hash(self, seq: int) -> str | None:
        """The hash of record ``seq``, or None when there is no such record."""
        row = self._store.conn.execute("SELECT hash FROM records WHERE id = ?", (seq,)).fetchone()
        return None if row is None else str(row[0])

    def count(self) -> int:
        """How many records the journal holds."""
        return int(self._store.conn.execute("SELECT count(*) FROM records").fetchone()[0])
