"""The :class:`Journal`: one open journal file, the face the table loop and the commands use (the floor link,
which writes nothing, opens its base, :class:`~controller.journal.reader.JournalReader`, which asks every
question to the file). It holds no logic of its own: it opens the file (:mod:`~controller.journal.schema`, or
:func:`~controller.journal.guard.open_degraded` on a full disk) and hands each call to the part whose job it is
(the chain, the queries, the floor's ack, retention, verify), all sharing one
:class:`~controller.journal.store.Store` that the file guard may reconnect under them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Self

from controller.journal.chain import Chain, Derived, FloorAcks, PendingInput
from controller.journal.errors import JournalError, JournalFault
from controller.journal.guard import DEFAULT_MIN_FREE, FileGuard, free_bytes, open_degraded
from controller.journal.reader import JournalReader
from controller.journal.retention import PRUNE_CHUNK, Pruner
from controller.journal.schema import connect
from controller.journal.store import Store
from controller.journal.verify import verify as verify_chain
from floor_protocol.ack import Ack


class Journal(JournalReader):
    """An open journal: everything :class:`~controller.journal.reader.JournalReader` reads, and the writing. Use
    :meth:`open` (the table's daemon: :meth:`open_for_table`); close it (or use ``with``). It has one owner
    (the table loop); it is not for concurrent use from several threads."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._guard = FileGuard(store, note=self.note)
        check = self._guard.ensure_writable
        self._chain = Chain(store, before_commit=check)
        self._acks = FloorAcks(store, before_commit=check)
        self._pruner = Pruner(store, self._chain, self._queries, before_commit=check)

    # -- opening -------------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        read_only: bool = False,
        durable: bool = True,
    ) -> Self:
        """Open (and with ``create``, initialise) the journal at ``path``.

        The parent directory must exist: the journal never creates directories (the service's
        ``StateDirectory=`` does). ``read_only`` opens with SQLite's ``mode=ro`` for the commands that
        run beside the live daemon. ``durable=False`` sets ``synchronous=OFF``: for building test and
        benchmark files only, never for a table. Raises :class:`JournalError` with one line naming the
        file and the problem: missing, not a database, corrupted or truncated, written by a newer
        version, or not a shoe-controller journal.
        """
        journal = cls(connect(os.fspath(path), create=create, read_only=read_only, durable=durable))
        if not read_only:
            journal._guard.watch()
        return journal

    @classmethod
    def open_for_table(cls, path: str | os.PathLike[str], *, min_free: int = DEFAULT_MIN_FREE) -> Self:
        """The daemon's open: :meth:`open` with ``create``, but a full disk is not the end of the table.

        If the file cannot be opened for writing and the disk holds less than ``min_free`` bytes, the
        journal opens for reading only (SQLite's ``immutable`` mode when no WAL frames are waiting, since a
        full disk cannot even hold the WAL's shared-memory file), or as an empty journal when there is no
        file yet: the table replays what is there and :attr:`degraded` says why it cannot write. Every
        commit then first tries to reopen the file for writing (and raises ``FULL`` until it can). Any other
        fault raises as :meth:`open` does.
        """
        p = os.fspath(path)
        try:
            journal = cls.open(p)
        except JournalError as exc:
            if exc.fault is not JournalFault.UNAVAILABLE or not os.path.isdir(os.path.dirname(os.path.abspath(p))):
                raise
            if free_bytes(p) >= max(min_free, 1):
                raise
            store, degraded = open_degraded(p, exc)
            journal = cls(store)
            journal._guard.degraded = degraded
        journal.min_free = min_free
        return journal

    # -- the file ------------------------------------------------------------------------------------
    @property
    def min_free(self) -> int:
        """No commit is attempted while the file system has less than this free (0: no check)."""
        return self._guard.min_free

    @min_free.setter
    def min_free(self, value: int) -> None:
        self._guard.min_free = value

    @property
    def degraded(self) -> JournalError | None:
        """Why a table journal opened without being able to write (a full disk at start), else None."""
        return self._guard.degraded

    def check_file(self) -> None:
        """The file guard's checks between commits (:meth:`~controller.journal.guard.FileGuard.check_file`)."""
        self._guard.check_file()

    # -- writing (controller.journal.chain) ------------------------------------------------------------
    def append(
        self,
        input_body: Mapping[str, Any],
        *,
        session: int | None = None,
        number: int | None = None,
        ts: str | None = None,
        derived: Sequence[Derived] = (),
    ) -> int | None:
        """Commit one input and the records it produced, in one transaction; the input's id, or None for a
        duplicate ``(session, number)`` (:meth:`~controller.journal.chain.Chain.append`)."""
        return self._chain.append(input_body, session=session, number=number, ts=ts, derived=derived)

    def note(self, body: Mapping[str, Any], *, ts: str | None = None) -> int:
        """Commit a free-standing note (start-up, operator remark, shoe change); return its id."""
        return self._chain.note(body, ts=ts)

    def append_many(self, inputs: Sequence[PendingInput]) -> list[int | None]:
        """Group commit: several inputs, each with its derived records, in ONE transaction
        (:meth:`~controller.journal.chain.Chain.append_many`)."""
        return self._chain.append_many(inputs)

    # -- the floor's ack (controller.journal.chain) ------------------------------------------------------
    def store_floor_ack(self, ack: Ack, *, ts: str | None = None) -> bool:
        """Keep a verified floor ack; False when it is no news (:meth:`~controller.journal.chain.FloorAcks.store`).
        Only the table loop calls it, after :func:`~controller.journal.ack.refusal` found nothing wrong."""
        return self._acks.store(ack, ts=ts)

    # -- retention (controller.journal.retention) ------------------------------------------------------
    def prunable(self, *, older_than: datetime, ack: int | None, floor: bool = True) -> tuple[int, int] | None:
        """``(before_record, shoes)``: the most that may be pruned now, or None
        (:meth:`~controller.journal.retention.Pruner.prunable`)."""
        return self._pruner.prunable(older_than=older_than, ack=ack, floor=floor)

    def begin_prune(
        self, before_record: int, *, keep_from_ack: int | None, archive: str | None = None, ts: str | None = None
    ) -> int:
        """Check the prune and write its note; returns the note's id
        (:meth:`~controller.journal.retention.Pruner.begin`)."""
        return self._pruner.begin(before_record, keep_from_ack=keep_from_ack, archive=archive, ts=ts)

    def prune_step(self, before_record: int, *, limit: int = PRUNE_CHUNK) -> int:
        """Delete about ``limit`` more records below ``before_record``; 0 when done
        (:meth:`~controller.journal.retention.Pruner.step`)."""
        return self._pruner.step(before_record, limit=limit)

    def prune(
        self, before_record: int, *, keep_from_ack: int | None, archive: str | None = None, chunk: int = PRUNE_CHUNK
    ) -> int:
        """:meth:`begin_prune`, then :meth:`prune_step` until done; returns how many records were deleted."""
        return self._pruner.prune(before_record, keep_from_ack=keep_from_ack, archive=archive, chunk=chunk)

    # -- checking (controller.journal.verify) ----------------------------------------------------------
    def verify(self) -> list[str]:
        """Walk the chain; return the problems found (one line each). An empty list means intact."""
        return verify_chain(self._store, self._chain, self._queries, prune_bound=self._pruner.bound())

    def copy_to(self, target: str) -> None:
        """The whole journal copied into the new file ``target`` (one file, no WAL beside it), consistent while
        the daemon commits and flushed to disk (:meth:`Store.copy_to`; :mod:`controller.journal.backup` makes
        and checks a backup with it)."""
        self._store.copy_to(target, "DELETE")

    def __repr__(self) -> str:
        return f"Journal({self.path!r}, read_only={self.read_only})"
