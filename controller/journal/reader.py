"""The journal read, never written: :class:`JournalReader`, one journal file opened read-only (SQLite's
``mode=ro``), beside the live table process that writes it. The link process reads its records, the chain's ends
and the floor's stored ack through it, and imports none of the writer's modules (the chain's append, the file
guard, retention, the backup: ``tests/test_process_imports.py`` holds it to that). The table's
:class:`~controller.journal.journal.Journal` is a :class:`JournalReader` that also writes, so every question to a
journal is asked here once.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Self

from controller.game.records import InputKind, RecordKind
from controller.journal.ack import read_floor_ack
from controller.journal.queries import Queries, Record, read_anchor, read_head
from controller.journal.schema import connect
from controller.journal.store import Store
from floor_protocol.ack import Ack

__all__ = ["JournalReader"]


class JournalReader:
    """An open journal, for reading. Use :meth:`open_read_only`; close it (or use ``with``)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queries = Queries(store)

    @classmethod
    def open_read_only(cls, path: str | os.PathLike[str]) -> Self:
        """Open the journal at ``path`` read-only (SQLite's ``mode=ro``, beside the live daemon; a read-only
        copy reads too). Raises :class:`~controller.journal.errors.JournalError` with one line naming the file
        and the problem (missing, not a journal, damaged, newer)."""
        return cls(connect(os.fspath(path), create=False, read_only=True, durable=True))

    # -- the file ------------------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The journal file's path."""
        return self._store.path

    @property
    def read_only(self) -> bool:
        """Whether this journal cannot write (opened read-only, or degraded on a full disk)."""
        return self._store.read_only

    @property
    def _conn(self) -> sqlite3.Connection:
        """The open connection (for tests that damage the file on purpose)."""
        return self._store.conn

    # -- the chain's ends (controller.journal.queries) -------------------------------------------------
    def head(self) -> tuple[int, str]:
        """``(last id, last hash)`` from the chain head: worth writing down elsewhere (shift report)."""
        return read_head(self._store.conn)

    def anchor(self) -> tuple[int, str]:
        """``(id, hash)`` of the last pruned record, where the chain now starts (``(0, genesis)`` before any)."""
        return read_anchor(self._store)

    # -- the records (controller.journal.queries) ----------------------------------------------------------
    def records(self, *, after: int = 0) -> Iterator[Record]:
        """Every record with id > ``after``, in order."""
        return self._queries.records(after=after)

    def inputs(self, *, after: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(record id, body)`` of every input with id > ``after``, in journal order: what a restart replays."""
        return self._queries.inputs(after=after)

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None:
        """The newest input body of ``kind`` with id < ``before``, or None."""
        return self._queries.last_input(kind, before=before)

    def last_input_id(self, kind: InputKind, *, before: int) -> int | None:
        """The id of the newest input of ``kind`` with id < ``before``, or None."""
        return self._queries.last_input_id(kind, before=before)

    def standing_since(self, kind: InputKind, *, before: int) -> int | None:
        """The id of the input of ``kind`` that set the value standing before ``before``, or None."""
        return self._queries.standing_since(kind, before=before)

    def last_record(self, kinds: Iterable[RecordKind]) -> tuple[str, dict[str, Any]] | None:
        return self._queries.last_record(kinds)

    def last_shoe_start(self) -> tuple[int, int] | None:
        """``(input id, shoe number)`` of the input that started the newest shoe, or None."""
        return self._queries.last_shoe_start()

    def shoe_start_spots(self, cause: int) -> list[dict[str, Any]]:
        """The bet spots' readings kept by the shoe that input ``cause`` started (its start record's ``spots``)."""
        return self._queries.shoe_start_spots(cause)

    def shoe_start_players(self, cause: int) -> list[dict[str, Any]]:
        """The cards in the seats' readers kept by the shoe that input ``cause`` started (``players``)."""
        return self._queries.shoe_start_players(cause)

    def shoe_start_tray(self, cause: int) -> dict[str, Any] | None:
        """The chip tray's book kept by the shoe that input ``cause`` started (its start record's ``tray``)."""
        return self._queries.shoe_start_tray(cause)

    def shoe_starts(self) -> list[int]:
        """Input ids that started a shoe, oldest first."""
        return self._queries.shoe_starts()

    def last_event(self, session: int | None = None, *, device: str = "shoe") -> tuple[int, int] | None:
        """The most recent ``(session, number)`` stored (of ``session`` when given), or None; without
        ``session``, the ``device``'s (:meth:`~controller.journal.queries.Queries.last_event`)."""
        return self._queries.last_event(session, device=device)

    def coups(self, last: int | None = None, shoe: int | None = None) -> list[dict[str, Any]]:
        """Coup records, oldest first, each body with ``ts`` and ``record`` (its id) merged in
        (:meth:`~controller.journal.queries.Queries.coups`)."""
        return self._queries.coups(last, shoe)

    def count(self) -> int:
        """How many records the journal holds."""
        return self._queries.count()

    def hashes(self, *, after: int, limit: int) -> list[tuple[int, str]]:
        """``(id, hash)`` of at most ``limit`` records after ``after`` (the floor link's signer reads ahead)."""
        return self._queries.hashes(after=after, limit=limit)

    def record_hash(self, seq: int) -> str | None:
        """The hash of record ``seq``, or None when the journal does not hold it."""
        return self._queries.record_hash(seq)

    # -- the floor's stored ack (controller.journal.ack) -----------------------------------------------
    def floor_ack(self) -> int | None:
        """The seq of the floor's stored, verified ack, or None (:func:`~controller.journal.ack.read_floor_ack`);
        never more than the chain head. What retention prunes on."""
        ack = read_floor_ack(self._store)
        return None if ack is None else ack.seq

    def floor_ack_record(self, table: str | None = None) -> Ack | None:
        """The floor's stored, verified ack (archive id, seq, hash, sig), or None."""
        return read_floor_ack(self._store, table)

    # -- life ----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the file (idempotent)."""
        self._store.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JournalReader({self.path!r})"
