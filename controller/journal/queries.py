"""The table's questions to its journal, in the record vocabulary's words: the inputs a restart replays,
the newest input of a kind, where the newest shoe started, the shoe's last event, the coups; and where the chain
stands (its head and its anchor).

Kinds are :class:`~controller.game.records.RecordKind` and :class:`~controller.game.records.InputKind`
members, never bare strings. Reading only: every write goes through :mod:`controller.journal.chain`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from controller.game.records import GENESIS_HASH, InputKind, RecordKind, TableRecord, input_from_body
from controller.journal.store import Store

_INPUT = RecordKind.INPUT.value
#: The note a prune writes into the chain before it deletes anything (:mod:`controller.journal.retention`):
#: ``{"note": PRUNE_NOTE, "through": id, "hash": that record's hash, "shoes": n, "ack": the floor's ack or
#: null, "archive": file or null, "kept": {kind: {"id": id, "body": input body, "since": id} or null}}``:
#: ``kept`` the newest input of each kind a new shoe keeps, below the prune's boundary, and since when its
#: value stood (:meth:`Queries.last_input_entry`, :meth:`Queries.standing_since`).
PRUNE_NOTE = "journal_pruned"
_SELECT = "SELECT id, ts, kind, session, number, cause, body, prev_hash, hash FROM records"
#: The bet-spot reader's events are journaled under their session key plus this (a shoe's keys stay below it:
#: a 32-bit session id and an epoch far below 2**30), so the shoe's and the reader's events never share a
#: ``(session, number)`` and each device's last event is found apart (:meth:`Queries.last_event`).
READER_KEYS = 1 << 62


def read_head(conn: sqlite3.Connection) -> tuple[int, str]:
    """``(last id, last hash)`` from the chain head of the file ``conn`` reads."""
    last_id, h = conn.execute("SELECT last_id, hash FROM chain_head WHERE one = 1").fetchone()
    return int(last_id), str(h)


def read_anchor(store: Store) -> tuple[int, str]:
    """``(id, hash)`` of the last pruned record, where the chain now starts: ``(0, genesis)`` before any prune
    (and for a journal written before retention, opened read-only)."""
    if "chain_anchor" not in store.tables():
        return 0, GENESIS_HASH
    row = store.conn.execute("SELECT last_id, hash FROM chain_anchor WHERE one = 1").fetchone()
    return (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))


def device_key(device: str, session: int | None) -> int | None:
    """The journal's ``session`` column for a device's session key (:data:`READER_KEYS` for the reader)."""
    if session is None or device == "shoe":
        return session
    return READER_KEYS | session


def session_of(device: str, key: int) -> int:
    """The device's own session key back from the journal's column."""
    return key & ~READER_KEYS if device == "reader" else key


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

    def last_input_entry(self, kind: InputKind, *, before: int) -> tuple[int, dict[str, Any]] | None:
        """``(record id, body)`` of the newest input of ``kind`` (its ``"kind"`` field) with id < ``before``, or
        None: from the records or, where a prune deleted it, as the newest prune note carries it.

        A prune may delete the input a replay reads before the newest shoe (a link that came up once, years
        ago, and never dropped): its note (:data:`PRUNE_NOTE`, ``"kept"``) carries the newest input of each
        kind in :data:`~controller.game.records.KEPT_ACROSS_SHOES` below its boundary, and that stands in
        for the records at or below the boundary (``"through"``). A note without ``"kept"`` (a prune before
        this rule) carries nothing: its prune kept those inputs in the records."""
        if not isinstance(kind, InputKind):
            raise TypeError(f"an input kind must be an InputKind, not {kind!r}")
        row = self._store.conn.execute(  # newest first, through the (kind, id) index: stops at the first one
            f"SELECT id, body FROM records WHERE kind = '{_INPUT}' AND id < ? AND json_extract(body, '$.kind') = ?"
            " ORDER BY id DESC LIMIT 1",
            (before, kind.value),
        ).fetchone()
        found = None if row is None else (int(row[0]), dict(json.loads(row[1])))
        note = self.prune_note()
        if note is None or not isinstance(note.get("kept"), dict) or kind.value not in note["kept"]:
            return found
        if found is not None and found[0] > int(note["through"]):
            return found  # newer than anything the prune took
        carried = note["kept"][kind.value]
        if carried is None or int(carried["id"]) >= before:
            return found
        return int(carried["id"]), dict(carried["body"])

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None:
        """The newest input body of ``kind`` with id < ``before``, or None (:meth:`last_input_entry`)."""
        found = self.last_input_entry(kind, before=before)
        return None if found is None else found[1]

    def last_input_id(self, kind: InputKind, *, before: int) -> int | None:
        """The id of the newest input of ``kind`` with id < ``before``, or None (:meth:`last_input_entry`)."""
        found = self.last_input_entry(kind, before=before)
        return None if found is None else found[0]

    def standing_since(self, kind: InputKind, *, before: int) -> int | None:
        """The id of the input of ``kind`` that set the value standing before ``before``: the first of the
        newest run of equal inputs (a LINK DOWN journaled again at a restart does not raise the alarm again:
        the first one did). None when there is no input of ``kind``. Where the run reaches into what a prune
        took, its note says where the run began (``"kept"``, ``"since"``). A replay orders the kept alarms
        by it (they stand in the order they were raised)."""
        newest = self.last_input_entry(kind, before=before)
        if newest is None:
            return None
        since, value = newest[0], input_from_body(newest[1])
        rows = self._store.conn.execute(
            f"SELECT id, body FROM records WHERE kind = '{_INPUT}' AND id < ? AND json_extract(body, '$.kind') = ?"
            " ORDER BY id DESC",
            (since, kind.value),
        )
        for record_id, body in rows:
            if input_from_body(json.loads(body)) != value:
                return since
            since = int(record_id)
        note = self.prune_note()
        kept = None if note is None else note.get("kept")
        carried = kept.get(kind.value) if isinstance(kept, dict) else None
        if (
            isinstance(carried, dict)
            and carried.get("since") is not None
            and int(carried["id"]) <= since
            and input_from_body(carried["body"]) == value
        ):
            return int(carried["since"])
        return since

    def prune_note(self) -> dict[str, Any] | None:
        """The body of the newest prune note (:data:`PRUNE_NOTE`), or None when the journal was never pruned."""
        row = self._store.conn.execute(
            f"SELECT body FROM records WHERE kind = '{RecordKind.NOTE}' AND json_extract(body, '$.note') = ?"
            " ORDER BY id DESC LIMIT 1",
            (PRUNE_NOTE,),
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def last_record(self, kinds: Iterable[RecordKind]) -> tuple[str, dict[str, Any]] | None:
        """``(kind, body)`` of the newest record of one of ``kinds`` (the dealer on duty at a restart), or None."""
        names = [RecordKind(k).value for k in kinds]
        if not names:
            return None
        marks = ", ".join("?" * len(names))
        row = self._store.conn.execute(
            f"SELECT kind, body FROM records WHERE kind IN ({marks}) ORDER BY id DESC LIMIT 1", names
        ).fetchone()
        return None if row is None else (str(row[0]), dict(json.loads(row[1])))

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

    def _shoe_start(self, cause: int) -> dict[str, Any]:
        """The start record's body of the shoe input ``cause`` started (empty when there is none)."""
        rows = self._store.conn.execute(
            f"SELECT body FROM records WHERE kind = '{RecordKind.SHOE}' AND cause = ?", (cause,)
        )
        for (body,) in rows:
            data = json.loads(body)
            if isinstance(data, dict) and data.get("event") == "start":
                return data
        return {}

    def shoe_start_spots(self, cause: int) -> list[dict[str, Any]]:
        """The bet spots' readings the shoe started by input ``cause`` kept (its start record's ``spots``; empty
        for a table without a reader, or a journal written before they were carried)."""
        spots = self._shoe_start(cause).get("spots", [])
        return [dict(item) for item in spots] if isinstance(spots, list) else []

    def shoe_start_players(self, cause: int) -> list[dict[str, Any]]:
        """The cards in the seats' readers the shoe started by input ``cause`` kept (its start record's
        ``players``; empty when none, or for a journal written before version 4)."""
        players = self._shoe_start(cause).get("players", [])
        return [dict(item) for item in players] if isinstance(players, list) else []

    def shoe_start_tray(self, cause: int) -> dict[str, Any] | None:
        """The chip tray's book the shoe started by input ``cause`` kept (its start record's ``tray``; None for a
        table without a tray reader)."""
        tray = self._shoe_start(cause).get("tray")
        return dict(tray) if isinstance(tray, dict) else None

    def shoe_starts(self) -> list[int]:
        """Input ids that started a shoe (their derived ``shoe`` record says ``"event": "start"``), oldest first."""
        rows = self._store.conn.execute(
            f"SELECT DISTINCT cause FROM records WHERE kind = '{RecordKind.SHOE}' AND cause IS NOT NULL"
            " AND json_extract(body, '$.event') = 'start' ORDER BY cause"
        )
        return [int(row[0]) for row in rows]

    def last_event(self, session: int | None = None, *, device: str = "shoe") -> tuple[int, int] | None:
        """The most recent ``(session, number)`` stored (of ``session`` when given, a journal key), or None;
        without ``session``, of the ``device`` (the shoe, or the bet-spot reader: its keys are
        :data:`READER_KEYS` and up, and returned so)."""
        conn = self._store.conn
        if session is None:
            side = ">=" if device == "reader" else "<"
            row = conn.execute(
                f"SELECT session, number FROM records WHERE kind = '{_INPUT}' AND session IS NOT NULL"
                f" AND session {side} {READER_KEYS} AND number IS NOT NULL ORDER BY id DESC LIMIT 1"
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
