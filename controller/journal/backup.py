"""A consistent copy of the journal while the table deals: SQLite's online backup, checked before it counts.

:func:`copy_journal` copies the journal through SQLite's backup API from a read-only connection (the copy is
one read transaction: every record committed before it began, none after, whatever the daemon commits
meanwhile), into ``OUT.partial``, switches the copy to a single self-contained file (rollback journal, no
``-wal`` beside it), flushes it to disk, renames it to ``OUT`` and flushes the directory. Then it opens the
copy as a journal and walks its hash chain (:meth:`controller.journal.Journal.verify`): a copy that does not
verify is deleted and :class:`BackupError` says why. A copy never overwrites a file.

:func:`rotate` keeps the newest ``keep`` dated copies (``journal-YYYYMMDDTHHMMSSZ.db``) of a backup
directory and deletes the older ones; files of other names are never touched.

The restore (a stopped table, the copy in place of the journal with its owner and mode, no stale ``-wal``)
is in docs/operations.md, *Backup and restore*.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["BACKUP_NAME", "Backup", "BackupError", "copy_journal", "dated_name", "rotate"]

#: The name of a dated copy in a backup directory.
BACKUP_NAME = re.compile(r"^journal-\d{8}T\d{6}Z\.db$")


class BackupError(Exception):
    """A backup that could not be made or did not verify: one line naming the file and the problem."""


@dataclass(frozen=True, slots=True)
class Backup:
    path: str
    records: int
    bytes: int


def dated_name(now: datetime) -> str:
    """``journal-20261201T031500Z.db`` for a UTC ``now``."""
    return f"journal-{now.strftime('%Y%m%dT%H%M%SZ')}.db"


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy_journal(source: str, out: str) -> Backup:
    """Copy the journal at ``source`` to ``out`` (which must not exist) and verify the copy."""
    from controller.journal.errors import JournalError
    from controller.journal.journal import Journal  # the journal's facade; this module is one of its parts

    if os.path.lexists(out):
        raise BackupError(f"{out} already exists: a backup never overwrites a file")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise BackupError(f"directory {parent} does not exist")
    try:
        journal = Journal.open(source, create=False, read_only=True)
    except JournalError as exc:
        raise BackupError(str(exc)) from None
    tmp = f"{out}.partial"
    try:
        with journal:
            journal.copy_to(tmp)  # one self-contained file, flushed
        os.replace(tmp, out)
        _fsync_dir(parent)
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BackupError(f"cannot write {out}: {detail}") from None
    try:
        with Journal.open(out, create=False, read_only=True) as copy:
            problems = copy.verify()
            records = copy.count()
    except JournalError as exc:
        problems, records = [str(exc)], 0
    if problems:
        with contextlib.suppress(OSError):
            os.unlink(out)
        raise BackupError(f"the copy {out} does not verify ({problems[0]}); it was deleted")
    return Backup(out, records, os.path.getsize(out))


def rotate(directory: str, keep: int) -> list[str]:
    """Delete all but the newest ``keep`` dated copies in ``directory``; return the paths deleted."""
    names = sorted(n for n in os.listdir(directory) if BACKUP_NAME.match(n))
    old = names[: max(len(names) - keep, 0)]
    deleted: list[str] = []
    for name in old:
        path = str(Path(directory) / name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
            deleted.append(path)
    if deleted:
        _fsync_dir(directory)
    return deleted
