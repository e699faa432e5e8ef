"""What can go wrong with the journal file, said one way: :class:`JournalFault` names the fault,
:class:`JournalError` carries it with one line naming the file and the problem.

Every part of the journal raises these (opening, a commit, the file guard, a prune); the table loop turns
them into its JOURNAL FULL / JOURNAL FAULT alarm and the commands into a one-line error.
"""

from __future__ import annotations

import errno
import sqlite3
from enum import Enum

#: What a damaged journal's message tells the operator to do.
ADVICE = "keep the file for surveillance and start a new journal (see docs/operations.md)"


class JournalFault(Enum):
    """Why a journal could not be opened or written."""

    MISSING = "missing"  # the file (or its directory) does not exist
    DAMAGED = "damaged"  # not a database, corrupted, truncated, wrong tables
    NEWER_SCHEMA = "newer_schema"  # written by a newer shoe-controller
    NOT_A_JOURNAL = "not_a_journal"  # a SQLite database, but not ours
    UNAVAILABLE = "unavailable"  # cannot be opened now: permissions, a lock, an I/O error
    WRITE_FAILED = "write_failed"  # a commit failed (an I/O error): nothing was written
    FULL = "full"  # the disk is full (or below the journal's headroom): nothing was written
    DELETED = "deleted"  # the open file was unlinked from its path: nothing was written
    REPLACED = "replaced"  # another file now stands at the journal's path: nothing was written


class JournalError(Exception):
    """The journal file cannot be used. ``str()`` is one line naming the file and the problem."""

    def __init__(self, path: str, fault: JournalFault, problem: str, message: str | None = None) -> None:
        self.path = path
        self.fault = fault
        self.problem = problem
        super().__init__(message or f"journal {path}: {problem}")


def damaged(path: str, problem: str) -> JournalError:
    """The error for a file that is bad in itself (with the advice to keep it and start anew)."""
    message = f"journal {path} is damaged: {problem}; {ADVICE}"
    return JournalError(path, JournalFault.DAMAGED, problem, message)


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether an error at open means the file itself is bad (else it cannot be opened just now)."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith("SQLITE_CORRUPT") or name in ("SQLITE_NOTADB", "SQLITE_IOERR_SHORT_READ")


def is_full(exc: sqlite3.Error) -> bool:
    """Whether a SQLite error means the disk (or the file system's quota) is full."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith("SQLITE_FULL") or "disk is full" in str(exc)


def is_full_os(exc: BaseException) -> bool:
    """:func:`is_full` for an error of SQLite or of the operating system (ENOSPC, EDQUOT)."""
    if isinstance(exc, sqlite3.Error):
        return is_full(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
