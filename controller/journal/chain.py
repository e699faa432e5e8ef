"""The hash chain: how records are written (one input and what it produced, in one transaction) and where
the chain stands (its head, and its anchor after a prune).

Each record's hash covers the previous record's hash and its own fields
(:func:`controller.game.records.record_hash`), and the one-row ``chain_head`` moves in the same
transaction, so that a record altered, removed, inserted or reordered, or a tail cut off, shows in
:mod:`controller.journal.verify`. A card the shoe resends because its ACK was lost is dropped here by its
``(session, number)`` key.

The floor's ack (:class:`FloorAcks`) is written here too, beside the chain, by the same one writer; judging an
ack and reading the stored one are :mod:`controller.journal.ack`'s, which the read-only link uses.

The chain makes accidental damage and naive edits evident; it is not a signature. Someone able to write
the file can rebuild the whole chain. The defence against that is to write :meth:`Chain.head` somewhere
else (the shift report, the fleet server) so the two can be compared later.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.game.records import RecordKind, canonical_json, record_hash
from controller.journal.queries import read_anchor, read_head
from controller.journal.schema import FLOOR_ACK_COLUMNS, FLOOR_ACK_SCHEMA
from controller.journal.stamps import check_ts, utc_now
from controller.journal.store import Store
from floor_protocol.ack import Ack

_KIND_RE = re.compile(r"^[a-z][a-z_]{0,31}$")

#: A derived record for :meth:`Chain.append`: a coup body, or a ``(kind, body)`` pair for another kind.
Derived = Mapping[str, Any] | tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class PendingInput:
    """One input for :meth:`Chain.append_many`, with the records it produced."""

    input_body: Mapping[str, Any]
    session: int | None = None
    number: int | None = None
    ts: str | None = None
    derived: Sequence[Derived] = ()


#: One input as the chain writes it: its stamp, its rows ``(kind, body JSON)`` (the input first), its key.
_Event = tuple[str, list[tuple[str, str]], int | None, int | None]


def _check_kind(kind: str) -> str:
    if not isinstance(kind, str) or not _KIND_RE.match(kind):
        raise ValueError(f"record kind {kind!r} must be a lower-case word")
    return kind


def _check_optional_int(name: str, value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    return value


class Chain:
    """The journal's writer and its chain's ends. ``before_commit`` runs before every write transaction
    (the file guard's checks) and raises to stop it."""

    def __init__(self, store: Store, *, before_commit: Callable[[], None]) -> None:
        self._store = store
        self._before_commit = before_commit

    def head(self) -> tuple[int, str]:
        """``(last id, last hash)`` from the chain head: worth writing down elsewhere (shift report)."""
        return read_head(self._store.conn)

    def anchor(self) -> tuple[int, str]:
        """``(id, hash)`` of the last pruned record, where the chain now starts: ``(0, genesis)`` before any
        prune (and for a journal written before retention, opened read-only)."""
        return read_anchor(self._store)

    def append(
        self,
        input_body: Mapping[str, Any],
        *,
        session: int | None = None,
        number: int | None = None,
        ts: str | None = None,
        derived: Sequence[Derived] = (),
    ) -> int | None:
        """Commit one input and the records it produced, in one transaction; return the input's id.

        ``derived`` items are coup bodies (stored as kind ``"coup"``) or ``(kind, body)`` pairs for
        another kind (``("note", {...})``); each is stored after the input with ``cause`` = the input's
        id and the same ``ts``. If the input carries both ``session`` and ``number`` and that pair is
        already stored, it is a duplicate: nothing is written and the result is None.
        Raises :class:`~controller.journal.errors.JournalError` (``WRITE_FAILED``) if the commit fails; then
        nothing was written.
        """
        stamp = check_ts(ts) if ts is not None else utc_now()
        _check_optional_int("session", session)
        _check_optional_int("number", number)
        return self._write_batch([(stamp, self._rows(input_body, derived), session, number)])[0]

    def note(self, body: Mapping[str, Any], *, ts: str | None = None) -> int:
        """Commit a free-standing note (start-up, operator remark, shoe change); return its id."""
        stamp = check_ts(ts) if ts is not None else utc_now()
        record_id = self._write_batch([(stamp, [(RecordKind.NOTE.value, canonical_json(body))], None, None)])[0]
        assert record_id is not None
        return record_id

    def append_many(self, inputs: Sequence[PendingInput]) -> list[int | None]:
        """Group commit: several inputs, each with its derived records, in ONE transaction.

        Each input stays atomic with what it produced and the chain is the same as if each had been appended
        alone; only the fsync is shared. Returns each input's id, or None for a duplicate (session, number).
        """
        if not inputs:
            return []
        events = [
            (
                check_ts(i.ts) if i.ts is not None else utc_now(),
                self._rows(i.input_body, i.derived),
                _check_optional_int("session", i.session),
                _check_optional_int("number", i.number),
            )
            for i in inputs
        ]
        return self._write_batch(events)

    @staticmethod
    def _rows(input_body: Mapping[str, Any], derived: Sequence[Derived]) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = [(RecordKind.INPUT.value, canonical_json(input_body))]
        for item in derived:
            if isinstance(item, tuple):
                kind, body = item
                if _check_kind(kind) == RecordKind.INPUT:
                    raise ValueError("a derived record cannot be an input")
            else:
                kind, body = RecordKind.COUP, item
            rows.append((str(kind), canonical_json(body)))
        return rows

    def _write_batch(self, events: Sequence[_Event]) -> list[int | None]:
        self._before_commit()
        conn = self._store.conn
        ids: list[int | None] = []
        with self._store.transaction("commit failed, nothing written"):
            next_id, prev = read_head(conn)
            next_id += 1
            for ts, rows, session, number in events:
                if session is not None and number is not None and rows[0][0] == RecordKind.INPUT:
                    dup = conn.execute(
                        f"SELECT 1 FROM records WHERE kind = '{RecordKind.INPUT}' AND session = ? AND number = ?",
                        (session, number),
                    ).fetchone()
                    if dup is not None:
                        ids.append(None)
                        continue
                first_id = next_id
                cause: int | None = None
                for i, (kind, body) in enumerate(rows):
                    rid = first_id + i
                    s, n = (session, number) if i == 0 else (None, None)
                    h = record_hash(prev, rid, ts, kind, s, n, cause, body)
                    conn.execute(
                        "INSERT INTO records (id, ts, kind, session, number, cause, body, prev_hash, hash)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (rid, ts, kind, s, n, cause, body, prev, h),
                    )
                    prev = h
                    if i == 0 and kind == RecordKind.INPUT:
                        cause = rid
                next_id = first_id + len(rows)
                ids.append(first_id)
            if all(i is None for i in ids):
                conn.execute("ROLLBACK")
                return ids
            conn.execute("UPDATE chain_head SET last_id = ?, hash = ? WHERE one = 1", (next_id - 1, prev))
        return ids


class FloorAcks:
    """The floor's ack in ``store``; ``before_commit`` is the file guard's check before a write."""

    def __init__(self, store: Store, *, before_commit: Callable[[], None]) -> None:
        self._store = store
        self._before_commit = before_commit

    def store(self, ack: Ack, *, ts: str | None = None) -> bool:
        """Keep ``ack`` (judged believable by :func:`~controller.journal.ack.refusal`): True when stored, False
        when it is no news (the archive stored already holds as much). Raises
        :class:`~controller.journal.errors.JournalError` (FULL, WRITE_FAILED ...) like a commit."""
        if not isinstance(ack, Ack):
            raise ValueError(f"floor ack must be a signed Ack, not {type(ack).__name__}")
        self._before_commit()
        stamp = check_ts(ts) if ts is not None else utc_now()
        with self._store.transaction("cannot store the floor's ack") as conn:
            conn.execute(FLOOR_ACK_SCHEMA)
            _migrate_floor_ack(conn)
            row = conn.execute("SELECT archive, seq FROM floor_ack WHERE one = 1").fetchone()
            if row is not None and row[0] == ack.archive and int(row[1]) >= ack.seq:
                return False
            conn.execute(
                "INSERT INTO floor_ack (one, seq, ts, archive, hash, sig) VALUES (1, ?, ?, ?, ?, ?)"
                " ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, ts = excluded.ts,"
                " archive = excluded.archive, hash = excluded.hash, sig = excluded.sig",
                (ack.seq, stamp, ack.archive, ack.hash, ack.sig),
            )
        return True


def _migrate_floor_ack(conn: sqlite3.Connection) -> None:
    """Add the columns an older ``floor_ack`` table lacks (its row then has no archive id: not verified)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(floor_ack)")}
    for name, kind in FLOOR_ACK_COLUMNS.items():
        if name not in columns:
            conn.execute(f"ALTER TABLE floor_ack ADD COLUMN {name} {kind}")
