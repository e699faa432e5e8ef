"""The file guard: before every commit, make sure the journal may write to the file it opened.

Write-ahead is the promise (nothing is acknowledged that the journal does not hold), so a commit is never
attempted when it could be lost or misplaced:

* **Headroom.** Below :attr:`FileGuard.min_free` bytes free no commit is attempted (FULL, nothing written).
* **Deleted file.** SQLite keeps writing to an unlinked inode: the guard remembers the ``(st_dev, st_ino)``
  it opened; a file gone from its path refuses the commit once (DELETED), and the next try copies the open
  connection (which still reads the deleted file) back to the path and notes ``journal_restored``.
* **Replaced file.** Another file at the path is never written nor overwritten: every record this
  connection holds is copied to ``<path>.rescued-<UTC stamp>`` and each commit refuses (REPLACED) until the
  original is put back.
* **Degraded open.** A table started on a full disk opens for reading only (:func:`open_degraded`); each
  commit first tries to reopen the file for writing.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from controller.journal.errors import JournalError, JournalFault, damaged, is_full_os
from controller.journal.queries import read_head
from controller.journal.schema import connect, connect_immutable, in_memory
from controller.journal.store import Store

#: Free space the table's journal keeps in hand: no commit is attempted below it (JOURNAL FULL instead).
#: It covers the WAL's own needs: the WAL grows to the auto-checkpoint size (1000 pages of 4 KiB, 4 MiB)
#: before it is reused, and the checkpoint that copies those pages into the main file may grow that
#: file by as much again. A commit that passed the check can still meet a full disk (another process
#: filled it): SQLite then rolls the transaction back and the same fault is raised.
DEFAULT_MIN_FREE = 8 * 1024 * 1024


def free_bytes(path: str) -> int:
    """Bytes an unprivileged writer may still use on the file system holding ``path`` (its directory)."""
    st = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    return st.f_bavail * st.f_frsize


def file_identity(path: str) -> tuple[int, int]:
    """``(st_dev, st_ino)`` of the file at ``path``: which file it is, whatever its name."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _fsync_dir(path: str) -> None:
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_degraded(path: str, cause: JournalError) -> tuple[Store, JournalError]:
    """A table's journal that cannot be opened for writing on a full disk: what is there, read-only
    (SQLite's ``immutable`` mode when no WAL frames are waiting), or an empty journal in memory when there
    is no file yet. Returns the store and the FULL error that says why it cannot write."""
    problem = f"disk full, cannot open for writing ({cause.problem}); {free_bytes(path)} bytes free"
    if not os.path.exists(path) or os.path.getsize(path) == 0:  # none yet (or the failed open left it empty)
        store = in_memory(path)
    else:
        wal = f"{path}-wal"
        frames_waiting = os.path.exists(wal) and os.path.getsize(wal) > 0
        try:
            store = connect(path, create=True, read_only=True, durable=True)
        except JournalError:
            if frames_waiting:
                raise cause from None  # committed frames in the WAL: reading without them would lose them
            try:
                store = connect_immutable(path)
            except sqlite3.Error as exc:
                raise JournalError(path, JournalFault.UNAVAILABLE, f"cannot open: {exc}") from None
    return store, JournalError(path, JournalFault.FULL, problem)


class FileGuard:
    """The checks before each commit (:meth:`ensure_writable`) on the file behind ``store``; ``note`` writes
    a note into the chain (the ``journal_restored`` note after a deleted file is put back)."""

    def __init__(self, store: Store, *, note: Callable[[Mapping[str, Any]], int]) -> None:
        self._store = store
        self._note = note
        #: No commit is attempted while the file system has less than this free (0: no check).
        self.min_free = 0
        #: Why a table journal opened without being able to write (a full disk at start), else None.
        #: Each commit first tries to reopen the file for writing.
        self.degraded: JournalError | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file this connection writes
        self._lost: JournalFault | None = None  # DELETED or REPLACED, once seen
        self._rescue: str | None = None  # where the records were copied when the file was replaced

    def watch(self) -> None:
        """Remember which file the connection writes (right after a writable open)."""
        self._identity = file_identity(self._store.path)

    def ensure_writable(self) -> None:
        """Before each commit: reopen a degraded journal, check that the path still names the file this
        connection writes (a deleted one is restored from the open copy on the next try; a replaced one is
        copied aside and never written again), and that the disk keeps its headroom. Raises
        :class:`JournalError` (nothing written) when the commit must not be attempted."""
        store = self._store
        if self.degraded is not None:
            self._reopen()
        if store.read_only:
            raise JournalError(store.path, JournalFault.WRITE_FAILED, "opened read-only")
        if self._identity is not None:
            self._check_identity()
        if self.min_free:
            try:
                free = free_bytes(store.path)
            except OSError as exc:
                raise JournalError(store.path, JournalFault.WRITE_FAILED, f"cannot check free space: {exc}") from exc
            if free < self.min_free:
                raise JournalError(
                    store.path,
                    JournalFault.FULL,
                    f"disk full: {free} bytes free, the journal keeps {self.min_free} in hand; nothing written",
                )

    def check_file(self) -> None:
        """Between commits (the loop calls it while the table is quiet): the checks made before every commit.
        A journal deleted while a table stands idle lives on only in this open connection; a power cut before
        the next card would lose it all (the unlinked file is freed at the next boot). Checked here, it is
        noticed within seconds and put back at its path at the loop's next retry. Raises :class:`JournalError`
        as a commit would (nothing is written here)."""
        if self._store.read_only and self.degraded is None:
            return
        self.ensure_writable()

    def _reopen(self) -> None:
        assert self.degraded is not None
        store = self._store
        if free_bytes(store.path) < self.min_free:
            raise self.degraded
        try:
            fresh = connect(store.path, create=True, read_only=False, durable=True)
        except JournalError as exc:
            raise JournalError(store.path, JournalFault.FULL, f"still cannot open for writing: {exc.problem}") from exc
        identity = file_identity(store.path)
        holds = store.conn.execute("SELECT count(*) FROM records").fetchone()[0]
        if holds and read_head(fresh.conn) != read_head(store.conn):
            fresh.conn.close()
            raise JournalError(
                store.path, JournalFault.REPLACED, "the file changed while the disk was full; not writing to it"
            )
        store.conn.close()
        store.conn, store.read_only, self._identity = fresh.conn, False, identity
        self.degraded = None

    def _check_identity(self) -> None:
        path = self._store.path
        try:
            now: tuple[int, int] | None = file_identity(path)
        except FileNotFoundError:
            now = None
        if now == self._identity:
            if self._lost is not None:  # the technician put our file back in place
                self._lost = None
            return
        if now is None:
            if self._lost is JournalFault.DELETED:
                self._restore()  # second try onwards: put the file back, then write
                return
            self._lost = JournalFault.DELETED
            raise JournalError(
                path,
                JournalFault.DELETED,
                "the journal file was deleted while open; restoring it from the open copy, nothing written",
            )
        if self._rescue is None:
            self._rescue = self._copy_aside()
        self._lost = JournalFault.REPLACED
        raise JournalError(
            path,
            JournalFault.REPLACED,
            f"another file was put in place of the open journal; every record is kept in {self._rescue};"
            " nothing written (see docs/operations.md)",
        )

    def _backup_to(self, target: str) -> None:
        """A complete copy of what this connection sees (WAL included) in a new file ``target``."""
        self._store.copy_to(target, "WAL")

    def _copy_aside(self) -> str:
        path = self._store.path
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = f"{path}.rescued-{stamp}"
        try:
            self._backup_to(target)
        except (sqlite3.Error, OSError) as exc:
            _remove(target)
            fault = JournalFault.FULL if is_full_os(exc) else JournalFault.WRITE_FAILED
            problem = f"the journal file was replaced and copying it aside failed: {exc}"
            raise JournalError(path, fault, problem) from exc
        return target

    def _restore(self) -> None:
        """Put the deleted journal back at its path from the open connection, which still reads it."""
        store = self._store
        path = store.path
        head = read_head(store.conn)
        tmp = f"{path}.restoring"
        _remove(tmp)
        try:
            self._backup_to(tmp)
        except (sqlite3.Error, OSError) as exc:
            _remove(tmp)
            fault = JournalFault.FULL if is_full_os(exc) else JournalFault.WRITE_FAILED
            raise JournalError(path, fault, f"restoring the deleted journal failed: {exc}") from exc
        # The -wal and -shm at the path belong to the deleted file (SQLite neither checkpoints nor removes them
        # when it closes a file that was unlinked): move them aside before the copy takes the path, so that they
        # are never read as the restored file's. Until the copy is in place the old connection stays open and
        # usable, so a failure here loses nothing and the next try starts again.
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        try:
            for suffix in ("-wal", "-shm"):
                if os.path.exists(path + suffix):
                    os.replace(path + suffix, f"{path}{suffix}.stale-{stamp}")
            os.replace(tmp, path)
            _fsync_dir(path)
        except OSError as exc:
            fault = JournalFault.FULL if is_full_os(exc) else JournalFault.WRITE_FAILED
            raise JournalError(path, fault, f"putting the restored journal in place failed: {exc}") from exc
        store.conn.close()
        fresh = connect(path, create=False, read_only=False, durable=True)
        identity = file_identity(path)
        if read_head(fresh.conn) != head:
            fresh.conn.close()
            raise damaged(path, "the restored journal's head differs from the open copy's")
        store.conn, self._identity, self._lost = fresh.conn, identity, None
        self._note({"note": "journal_restored", "reason": "the file was deleted while open", "head": list(head)})
