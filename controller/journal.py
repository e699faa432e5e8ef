"""The table's crash-proof journal: every input and every derived coup, in SQLite, on one hash chain.

The daemon is event-sourced. Each input it accepts (a card with the shoe's session id and event number, a
button press, a link event) is committed here, together with the records it gave rise to (the coup it
declared or voided), in **one transaction**, before the shoe gets its ACK. After a power cut the table
state is rebuilt by replaying :meth:`Journal.inputs` through the pure
:class:`~controller.game.table.TableState`.
A card the shoe resends because its ACK was lost is dropped here by its ``(session, number)`` key.

Storage (stdlib :mod:`sqlite3` only):

* WAL mode with ``synchronous=FULL``: a commit that returned is on the disk; readers (``shoe-controller
  history``, ``journal verify``) open the file read-only beside the live daemon.
* One ``records`` table::

      id         INTEGER PRIMARY KEY AUTOINCREMENT   1, 2, 3 ... without gaps
      ts         TEXT     wall-clock UTC, ISO 8601, supplied by the caller (default: now)
      kind       TEXT     "input" | "coup" | "note" (open set of lower-case words)
      session    INTEGER  the shoe's session id (inputs from the shoe), else NULL
      number     INTEGER  the shoe's per-session event number, else NULL
      cause      INTEGER  for a derived record: the id of the input that produced it, else NULL
      body       TEXT     canonical JSON (sorted keys, no spaces, UTF-8, no NaN)
      prev_hash  TEXT     the previous record's hash (64 zeros for record 1)
      hash       TEXT     sha256 hex of prev_hash + canonical JSON of
                          [id, ts, kind, session, number, cause, body]

  with a UNIQUE index on ``(session, number)`` for inputs carrying both: the duplicate drop.
* A one-row ``chain_head`` table (last id, last hash), updated in the same transaction as the records,
  so that removing the newest records is detected too (a chain alone cannot tell a truncated tail).
* A one-row ``chain_anchor`` table (id, hash of the last record pruned; 0 and the genesis hash before any
  prune): the chain is verified from there. A prune deletes whole old shoes (see docs/operations.md,
  "Retention") after writing a ``journal_pruned`` note; :meth:`Journal.verify` holds the anchor to it.
  A journal written before retention gets the table on its first writable open.
* ``PRAGMA user_version`` holds the schema version (:data:`SCHEMA_VERSION`).

The chain makes accidental damage and naive edits evident; it is not a signature. Someone able to write
the file can rebuild the whole chain. The defence against that is to write :meth:`Journal.head` somewhere
else (the shift report, the fleet server) so the two can be compared later.

Coup record bodies are built by the daemon; the journal only requires a JSON object. The shape the
daemon writes and ``shoe-controller history`` reads::

    {"shoe": int, "coup": int, "declared": bool, "void": bool, "misdraw": bool, "dummy_hand": [tokens],
     "player": [tokens], "banker": [tokens], "player_total": int, "banker_total": int,
     "winner": "player" | "banker" | "tie" | null, "natural": bool, "player_pair": bool,
     "banker_pair": bool, ...}

A journal instance has one owner (the table loop); it is not for concurrent use from several threads.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

from controller.game.records import GENESIS_HASH, TableRecord, canonical_json, record_hash

#: The schema this code writes, kept in ``PRAGMA user_version``: 1 the records and the chain head, 2 the
#: chain anchor too (retention). A version-1 journal is upgraded when first opened for writing, so that an
#: older shoe-controller meeting a journal that may have been pruned says "newer schema" instead of "damaged".
SCHEMA_VERSION = 2


INPUT, COUP, NOTE = "input", "coup", "note"
_KIND_RE = re.compile(r"^[a-z][a-z_]{0,31}$")


_ADVICE = "keep the file for surveillance and start a new journal (see docs/operations.md)"

_SCHEMA = (
    """CREATE TABLE records (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        ts        TEXT    NOT NULL,
        kind      TEXT    NOT NULL,
        session   INTEGER,
        number    INTEGER,
        cause     INTEGER REFERENCES records(id),
        body      TEXT    NOT NULL,
        prev_hash TEXT    NOT NULL,
        hash      TEXT    NOT NULL
    )""",
    """CREATE UNIQUE INDEX records_event ON records(session, number)
        WHERE kind = 'input' AND session IS NOT NULL AND number IS NOT NULL""",
    "CREATE INDEX records_kind ON records(kind, id)",
    """CREATE TABLE chain_head (
        one     INTEGER PRIMARY KEY CHECK (one = 1),
        last_id INTEGER NOT NULL,
        hash    TEXT    NOT NULL
    )""",
    f"INSERT INTO chain_head (one, last_id, hash) VALUES (1, 0, '{GENESIS_HASH}')",
)

#: Where the chain starts after a prune: the last pruned record's (id, hash); (0, genesis) before any prune.
#: Created by a writable open of a journal that predates retention (a read-only open reads it as absent).
_ANCHOR_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS chain_anchor (
        one     INTEGER PRIMARY KEY CHECK (one = 1),
        last_id INTEGER NOT NULL,
        hash    TEXT    NOT NULL
    )""",
    f"INSERT OR IGNORE INTO chain_anchor (one, last_id, hash) VALUES (1, 0, '{GENESIS_HASH}')",
)

#: The note a prune writes into the chain before it deletes anything: ``{"note": PRUNE_NOTE, "through": id,
#: "hash": that record's hash, "shoes": n, "ack": the floor's ack or null, "archive": file or null}``.
PRUNE_NOTE = "journal_pruned"

#: Records a prune deletes per transaction at most (rounded up to an input boundary): a few ms on a Pi.
PRUNE_CHUNK = 500

_EXPECTED_COLUMNS = {
    "records": ["id", "ts", "kind", "session", "number", "cause", "body", "prev_hash", "hash"],
    "chain_head": ["one", "last_id", "hash"],
}


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


def _is_damage(exc: sqlite3.Error) -> bool:
    """Whether an error at open means the file itself is bad (else it cannot be opened just now)."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith("SQLITE_CORRUPT") or name in ("SQLITE_NOTADB", "SQLITE_IOERR_SHORT_READ")


def _is_full(exc: sqlite3.Error) -> bool:
    """Whether a SQLite error means the disk (or the file system's quota) is full."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith("SQLITE_FULL") or "disk is full" in str(exc)


def free_bytes(path: str) -> int:
    """Bytes an unprivileged writer may still use on the file system holding ``path`` (its directory)."""
    st = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    return st.f_bavail * st.f_frsize


#: Free space the table's journal keeps in hand: no commit is attempted below it (JOURNAL FULL instead).
#: It covers the WAL's own needs: the WAL grows to the auto-checkpoint size (1000 pages of 4 KiB, 4 MiB)
#: before it is reused, and the checkpoint that copies those pages into the main file may grow that
#: file by as much again. A commit that passed the check can still meet a full disk (another process
#: filled it): SQLite then rolls the transaction back and the same fault is raised.
DEFAULT_MIN_FREE = 8 * 1024 * 1024


def _damaged(path: str, problem: str) -> JournalError:
    message = f"journal {path} is damaged: {problem}; {_ADVICE}"
    return JournalError(path, JournalFault.DAMAGED, problem, message)


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


Derived = Mapping[str, Any] | tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class PendingInput:
    """One input for :meth:`Journal.append_many`, with the records it produced."""

    input_body: Mapping[str, Any]
    session: int | None = None
    number: int | None = None
    ts: str | None = None
    derived: Sequence[Derived] = ()


"""A derived record for :meth:`Journal.append`: a coup body, or a ``(kind, body)`` pair for another kind."""


def utc_now() -> str:
    """The journal's default stamp: wall-clock UTC, ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _check_ts(ts: str) -> str:
    if not isinstance(ts, str):
        raise TypeError(f"ts must be an ISO 8601 string, not {type(ts).__name__}")
    try:
        datetime.fromisoformat(ts)
    except ValueError:
        raise ValueError(f"ts {ts!r} is not an ISO 8601 timestamp") from None
    return ts


def _check_kind(kind: str) -> str:
    if not isinstance(kind, str) or not _KIND_RE.match(kind):
        raise ValueError(f"record kind {kind!r} must be a lower-case word")
    return kind


def _check_optional_int(name: str, value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    return value


def _aware(moment: datetime) -> datetime:
    """A naive stamp is read as UTC (the journal writes UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _is_full_os(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return _is_full(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _fsync_dir(path: str) -> None:
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_SELECT = "SELECT id, ts, kind, session, number, cause, body, prev_hash, hash FROM records"


class Journal:
    """An open journal. Use :meth:`open`; close it (or use ``with``)."""

    def __init__(self, conn: sqlite3.Connection, path: str, *, read_only: bool) -> None:
        self._conn = conn
        self.path = path
        self.read_only = read_only
        #: No commit is attempted while the file system has less than this free (0: no check).
        self.min_free = 0
        #: Why a table journal opened without being able to write (a full disk at start), else None.
        #: Each commit first tries to reopen the file for writing.
        self.degraded: JournalError | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file this connection wrote
        self._lost: JournalFault | None = None  # DELETED or REPLACED, once seen
        self._rescue: str | None = None  # where the records were copied when the file was replaced

    # -- opening -------------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        read_only: bool = False,
        durable: bool = True,
    ) -> Journal:
        """Open (and with ``create``, initialise) the journal at ``path``.

        The parent directory must exist: the journal never creates directories (the service's
        ``StateDirectory=`` does). ``read_only`` opens with SQLite's ``mode=ro`` for the commands that
        run beside the live daemon. ``durable=False`` sets ``synchronous=OFF``: for building test and
        benchmark files only, never for a table. Raises :class:`JournalError` with one line naming the
        file and the problem: missing, not a database, corrupted or truncated, written by a newer
        version, or not a shoe-controller journal.
        """
        p = os.fspath(path)
        if os.path.isdir(p):
            raise JournalError(p, JournalFault.NOT_A_JOURNAL, "is a directory, not a journal file")
        exists = os.path.exists(p)
        if not exists:
            parent = os.path.dirname(os.path.abspath(p))
            if read_only or not create:
                raise JournalError(p, JournalFault.MISSING, "does not exist", f"journal {p} does not exist")
            if not os.path.isdir(parent):
                raise JournalError(
                    p,
                    JournalFault.MISSING,
                    f"directory {parent} does not exist",
                    f"journal {p}: directory {parent} does not exist"
                    " (the journal does not create directories; the service's StateDirectory= does)",
                )
        uri = f"file:{quote(os.path.abspath(p))}?mode={'ro' if read_only else 'rwc'}"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(p, JournalFault.UNAVAILABLE, f"cannot open: {exc}") from None
        try:
            journal = cls(conn, p, read_only=read_only)
            journal._prepare(create=create, durable=durable)
        except JournalError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            if _is_damage(exc):
                raise _damaged(p, str(exc)) from None
            raise JournalError(p, JournalFault.UNAVAILABLE, f"cannot open: {exc}") from None
        if not read_only:
            journal._identity = _identity(p)
        return journal

    @classmethod
    def open_for_table(cls, path: str | os.PathLike[str], *, min_free: int = DEFAULT_MIN_FREE) -> Journal:
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
            journal = cls._open_degraded(p, exc)
        journal.min_free = min_free
        return journal

    @classmethod
    def _open_degraded(cls, p: str, cause: JournalError) -> Journal:
        problem = f"disk full, cannot open for writing ({cause.problem}); {free_bytes(p)} bytes free"
        if not os.path.exists(p) or os.path.getsize(p) == 0:  # none yet (or the failed open left it empty)
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            journal = cls(conn, p, read_only=True)
            journal._create_schema()
        else:
            wal = f"{p}-wal"
            frames_waiting = os.path.exists(wal) and os.path.getsize(wal) > 0
            try:
                journal = cls.open(p, read_only=True)
            except JournalError:
                if frames_waiting:
                    raise cause from None  # committed frames in the WAL: reading without them would lose them
                uri = f"file:{quote(os.path.abspath(p))}?mode=ro&immutable=1"
                try:
                    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
                    journal = cls(conn, p, read_only=True)
                    journal._prepare(create=False, durable=True)
                except sqlite3.Error as exc:
                    raise JournalError(p, JournalFault.UNAVAILABLE, f"cannot open: {exc}") from None
        journal.degraded = JournalError(p, JournalFault.FULL, problem)
        return journal

    def _prepare(self, *, create: bool, durable: bool) -> None:
        conn = self._conn
        conn.execute("PRAGMA busy_timeout = 5000")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise JournalError(
                self.path,
                JournalFault.NEWER_SCHEMA,
                f"schema version {version} is newer than this shoe-controller supports ({SCHEMA_VERSION})",
                f"journal {self.path} has schema version {version}, newer than this shoe-controller supports"
                f" ({SCHEMA_VERSION}): upgrade shoe-controller; do not start a new journal",
            )
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise _damaged(self.path, "; ".join(problems))
        if not self.read_only:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
        conn.execute("PRAGMA foreign_keys = ON")
        tables = self._tables()
        if version == 0:
            if tables:
                raise JournalError(
                    self.path,
                    JournalFault.NOT_A_JOURNAL,
                    f"not a shoe-controller journal (it holds tables: {', '.join(sorted(tables))})",
                    f"journal {self.path} is not a shoe-controller journal (it holds tables:"
                    f" {', '.join(sorted(tables))})",
                )
            if self.read_only or not create:
                raise JournalError(
                    self.path,
                    JournalFault.NOT_A_JOURNAL,
                    "empty database, no journal in it",
                    f"journal {self.path} is empty: no journal has been written to it",
                )
            self._create_schema()
            return
        for table, columns in _EXPECTED_COLUMNS.items():
            found = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            if found != columns:
                what = "missing" if not found else f"has columns {', '.join(found)}"
                raise _damaged(self.path, f"wrong tables: {table} {what}")
        if conn.execute("SELECT count(*) FROM chain_head").fetchone()[0] != 1:
            raise _damaged(self.path, "wrong tables: chain_head must hold exactly one row")
        if not self.read_only and "chain_anchor" not in tables:
            with self._transaction():
                for statement in _ANCHOR_SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _tables(self) -> set[str]:
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {row[0] for row in rows} - {"sqlite_sequence"}

    def _create_schema(self) -> None:
        conn = self._conn
        with self._transaction():
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                for statement in (*_SCHEMA, *_ANCHOR_SCHEMA):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextlib.contextmanager
    def _transaction(self, failure: str | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE, then COMMIT (unless the body rolled back itself); any
        exception rolls back and goes on. With ``failure``, an SQLite error becomes a :class:`JournalError`
        (FULL on a full disk, else WRITE_FAILED) reading ``"<failure>: <error>"``: nothing was written."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                if conn.in_transaction:
                    conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            if failure is None:
                raise
            fault = JournalFault.FULL if _is_full(exc) else JournalFault.WRITE_FAILED
            raise JournalError(self.path, fault, f"{failure}: {exc}") from exc

    # -- writing -------------------------------------------------------------------------------------
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
        Raises :class:`JournalError` (``WRITE_FAILED``) if the commit fails; then nothing was written.
        """
        stamp = _check_ts(ts) if ts is not None else utc_now()
        _check_optional_int("session", session)
        _check_optional_int("number", number)
        rows = self._rows(input_body, derived)
        return self._write(stamp, rows, session, number)

    def note(self, body: Mapping[str, Any], *, ts: str | None = None) -> int:
        """Commit a free-standing note (start-up, operator remark, shoe change); return its id."""
        stamp = _check_ts(ts) if ts is not None else utc_now()
        record_id = self._write(stamp, [(NOTE, canonical_json(body))], None, None)
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
                _check_ts(i.ts) if i.ts is not None else utc_now(),
                self._rows(i.input_body, i.derived),
                _check_optional_int("session", i.session),
                _check_optional_int("number", i.number),
            )
            for i in inputs
        ]
        return self._write_batch(events)

    @staticmethod
    def _rows(input_body: Mapping[str, Any], derived: Sequence[Derived]) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = [(INPUT, canonical_json(input_body))]
        for item in derived:
            if isinstance(item, tuple):
                kind, body = item
                if _check_kind(kind) == INPUT:
                    raise ValueError("a derived record cannot be an input")
            else:
                kind, body = COUP, item
            rows.append((kind, canonical_json(body)))
        return rows

    def _write(self, ts: str, rows: list[tuple[str, str]], session: int | None, number: int | None) -> int | None:
        return self._write_batch([(ts, rows, session, number)])[0]

    def _write_batch(
        self, events: Sequence[tuple[str, list[tuple[str, str]], int | None, int | None]]
    ) -> list[int | None]:
        self._ensure_writable()
        conn = self._conn
        ids: list[int | None] = []
        with self._transaction("commit failed, nothing written"):
            last_id, prev = conn.execute("SELECT last_id, hash FROM chain_head WHERE one = 1").fetchone()
            next_id = int(last_id) + 1
            for ts, rows, session, number in events:
                if session is not None and number is not None and rows[0][0] == INPUT:
                    dup = conn.execute(
                        "SELECT 1 FROM records WHERE kind = 'input' AND session = ? AND number = ?",
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
                    if i == 0 and kind == INPUT:
                        cause = rid
                next_id = first_id + len(rows)
                ids.append(first_id)
            if all(i is None for i in ids):
                conn.execute("ROLLBACK")
                return ids
            conn.execute("UPDATE chain_head SET last_id = ?, hash = ? WHERE one = 1", (next_id - 1, prev))
        return ids

    # -- faults of the file under us -----------------------------------------------------------------
    def _ensure_writable(self) -> None:
        """Before each commit: reopen a degraded journal, check that the path still names the file this
        connection writes (a deleted one is restored from the open copy on the next try; a replaced one is
        copied aside and never written again), and that the disk keeps its headroom. Raises
        :class:`JournalError` (nothing written) when the commit must not be attempted."""
        if self.degraded is not None:
            self._reopen()
        if self.read_only:
            raise JournalError(self.path, JournalFault.WRITE_FAILED, "opened read-only")
        if self._identity is not None:
            self._check_identity()
        if self.min_free:
            try:
                free = free_bytes(self.path)
            except OSError as exc:
                raise JournalError(self.path, JournalFault.WRITE_FAILED, f"cannot check free space: {exc}") from exc
            if free < self.min_free:
                raise JournalError(
                    self.path,
                    JournalFault.FULL,
                    f"disk full: {free} bytes free, the journal keeps {self.min_free} in hand; nothing written",
                )

    def check_file(self) -> None:
        """Between commits (the loop calls it while the table is quiet): the checks made before every commit.
        A journal deleted while a table stands idle lives on only in this open connection; a power cut before
        the next card would lose it all (the unlinked file is freed at the next boot). Checked here, it is
        noticed within seconds and put back at its path at the loop's next retry. Raises :class:`JournalError`
        as a commit would (nothing is written here)."""
        if self.read_only and self.degraded is None:
            return
        self._ensure_writable()

    def _reopen(self) -> None:
        assert self.degraded is not None
        if free_bytes(self.path) < self.min_free:
            raise self.degraded
        try:
            fresh = Journal.open(self.path)
        except JournalError as exc:
            raise JournalError(self.path, JournalFault.FULL, f"still cannot open for writing: {exc.problem}") from exc
        if self._conn.execute("SELECT count(*) FROM records").fetchone()[0] and fresh.head() != self.head():
            fresh.close()
            raise JournalError(
                self.path, JournalFault.REPLACED, "the file changed while the disk was full; not writing to it"
            )
        self._conn.close()
        self._conn, self.read_only, self._identity = fresh._conn, False, fresh._identity
        self.degraded = None

    def _check_identity(self) -> None:
        try:
            now: tuple[int, int] | None = _identity(self.path)
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
                self.path,
                JournalFault.DELETED,
                "the journal file was deleted while open; restoring it from the open copy, nothing written",
            )
        if self._rescue is None:
            self._rescue = self._copy_aside()
        self._lost = JournalFault.REPLACED
        raise JournalError(
            self.path,
            JournalFault.REPLACED,
            f"another file was put in place of the open journal; every record is kept in {self._rescue};"
            " nothing written (see docs/operations.md)",
        )

    def _backup_to(self, target: str) -> None:
        """A complete copy of what this connection sees (WAL included) in a new file ``target``."""
        dest = sqlite3.connect(target, isolation_level=None)
        try:
            self._conn.backup(dest)
            dest.execute("PRAGMA journal_mode = WAL")
        finally:
            dest.close()
        fd = os.open(target, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _copy_aside(self) -> str:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = f"{self.path}.rescued-{stamp}"
        try:
            self._backup_to(target)
        except (sqlite3.Error, OSError) as exc:
            _remove(target)
            fault = JournalFault.FULL if _is_full_os(exc) else JournalFault.WRITE_FAILED
            problem = f"the journal file was replaced and copying it aside failed: {exc}"
            raise JournalError(self.path, fault, problem) from exc
        return target

    def _restore(self) -> None:
        """Put the deleted journal back at its path from the open connection, which still reads it."""
        head = self.head()
        tmp = f"{self.path}.restoring"
        _remove(tmp)
        try:
            self._backup_to(tmp)
        except (sqlite3.Error, OSError) as exc:
            _remove(tmp)
            fault = JournalFault.FULL if _is_full_os(exc) else JournalFault.WRITE_FAILED
            raise JournalError(self.path, fault, f"restoring the deleted journal failed: {exc}") from exc
        # The -wal and -shm at the path belong to the deleted file (SQLite neither checkpoints nor removes them
        # when it closes a file that was unlinked): move them aside before the copy takes the path, so that they
        # are never read as the restored file's. Until the copy is in place the old connection stays open and
        # usable, so a failure here loses nothing and the next try starts again.
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        try:
            for suffix in ("-wal", "-shm"):
                if os.path.exists(self.path + suffix):
                    os.replace(self.path + suffix, f"{self.path}{suffix}.stale-{stamp}")
            os.replace(tmp, self.path)
            _fsync_dir(self.path)
        except OSError as exc:
            fault = JournalFault.FULL if _is_full_os(exc) else JournalFault.WRITE_FAILED
            raise JournalError(self.path, fault, f"putting the restored journal in place failed: {exc}") from exc
        self._conn.close()
        fresh = Journal.open(self.path, create=False)
        if fresh.head() != head:
            fresh.close()
            raise _damaged(self.path, "the restored journal's head differs from the open copy's")
        self._conn, self._identity, self._lost = fresh._conn, fresh._identity, None
        self.note({"note": "journal_restored", "reason": "the file was deleted while open", "head": list(head)})

    # -- reading -------------------------------------------------------------------------------------
    def records(self, *, after: int = 0) -> Iterator[Record]:
        """Every record with id > ``after``, in order."""
        for row in self._conn.execute(f"{_SELECT} WHERE id > ? ORDER BY id", (after,)):
            yield Record(*row)

    def inputs(self, *, after: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(record id, body)`` of every input with id > ``after``, in journal order: what a restart replays."""
        rows = self._conn.execute("SELECT id, body FROM records WHERE kind = 'input' AND id > ? ORDER BY id", (after,))
        for record_id, body in rows:
            yield record_id, json.loads(body)

    def last_input(self, kind: str, *, before: int) -> dict[str, Any] | None:
        """The newest input body of ``kind`` (its ``"kind"`` field) with id < ``before``, or None."""
        row = self._conn.execute(
            "SELECT body FROM records WHERE kind = 'input' AND id < ? AND json_extract(body, '$.kind') = ?"
            " ORDER BY id DESC LIMIT 1",
            (before, kind),
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def last_shoe_start(self) -> tuple[int, int] | None:
        """``(input id, shoe number)`` of the input that started the newest shoe (its derived ``shoe`` record
        says ``"event": "start"``), or None. A restart replays from there: a new shoe resets the table."""
        rows = self._conn.execute("SELECT cause, body FROM records WHERE kind = 'shoe' ORDER BY id DESC")
        for cause, body in rows:
            data = json.loads(body)
            if data.get("event") == "start" and cause is not None:
                return int(cause), int(data["shoe"])
        return None

    def last_event(self, session: int | None = None) -> tuple[int, int] | None:
        """The most recent ``(session, number)`` stored (of ``session`` when given), or None."""
        if session is None:
            row = self._conn.execute(
                "SELECT session, number FROM records WHERE kind = 'input' AND session IS NOT NULL"
                " AND number IS NOT NULL ORDER BY id DESC LIMIT 1"
            ).fetchone()
        else:
            row = self._conn.execute(
                "SELECT session, max(number) FROM records WHERE kind = 'input' AND session = ? AND number IS NOT NULL",
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
        sql = "SELECT id, ts, body FROM records WHERE kind = 'coup'"
        params: list[Any] = []
        if shoe is not None:
            sql += " AND json_extract(body, '$.shoe') = ?"
            params.append(shoe)
        sql += " ORDER BY id DESC"
        if last is not None:
            sql += " LIMIT ?"
            params.append(last)
        rows = self._conn.execute(sql, params).fetchall()
        out = []
        for record_id, ts, body in reversed(rows):
            out.append({**json.loads(body), "ts": ts, "record": record_id})
        return out

    def head(self) -> tuple[int, str]:
        """``(last id, last hash)`` from the chain head: worth writing down elsewhere (shift report)."""
        last_id, h = self._conn.execute("SELECT last_id, hash FROM chain_head WHERE one = 1").fetchone()
        return int(last_id), str(h)

    def count(self) -> int:
        """How many records the journal holds."""
        return int(self._conn.execute("SELECT count(*) FROM records").fetchone()[0])

    # -- the floor's ack -------------------------------------------------------------------------------
    # The floor link's end-to-end mark: the highest contiguous seq (record id) the floor says it archived.
    # Kept beside the chain (not as a record: a record would itself need publishing and acknowledging),
    # written by the table loop (the journal's one writer) when the link posts a FloorAck, read by the
    # link's own read-only connection at start-up. Created on first use: a journal without the table reads
    # as "nothing acknowledged", and an older shoe-controller ignores the extra table.
    def store_floor_ack(self, seq: int, *, ts: str | None = None) -> None:
        """Keep the floor's latest ack (the floor's word, even if lower than the last one: an archive that
        lost records asks for them again). Raises :class:`JournalError` (FULL, WRITE_FAILED ...) like a commit."""
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise ValueError(f"floor ack must be a record id >= 0, not {seq!r}")
        self._ensure_writable()
        stamp = _check_ts(ts) if ts is not None else utc_now()
        conn = self._conn
        with self._transaction("cannot store the floor's ack"):
            conn.execute(
                "CREATE TABLE IF NOT EXISTS floor_ack ("
                " one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, ts TEXT NOT NULL)"
            )
            conn.execute(
                "INSERT INTO floor_ack (one, seq, ts) VALUES (1, ?, ?)"
                " ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, ts = excluded.ts",
                (seq, stamp),
            )

    # -- retention -----------------------------------------------------------------------------------
    def anchor(self) -> tuple[int, str]:
        """``(id, hash)`` of the last pruned record, where the chain now starts: ``(0, genesis)`` before any
        prune (and for a journal written before retention, opened read-only)."""
        if "chain_anchor" not in self._tables():
            return 0, GENESIS_HASH
        row = self._conn.execute("SELECT last_id, hash FROM chain_anchor WHERE one = 1").fetchone()
        return (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))

    def floor_ack(self) -> int | None:
        """The floor's ``ack`` as the floor link stored it (table ``floor_ack``, column ``seq``: the highest
        contiguous record id the floor has archived), or None when no ack is stored, the table does not
        exist (no floor link yet) or cannot be read. Never more than the chain head."""
        if "floor_ack" not in self._tables():
            return None
        try:
            row = self._conn.execute("SELECT max(seq) FROM floor_ack").fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[0] is None:
            return None
        return min(int(row[0]), self.head()[0])

    def shoe_starts(self) -> list[int]:
        """Input ids that started a shoe (their derived ``shoe`` record says ``"event": "start"``), oldest first."""
        rows = self._conn.execute(
            "SELECT DISTINCT cause FROM records WHERE kind = 'shoe' AND cause IS NOT NULL"
            " AND json_extract(body, '$.event') = 'start' ORDER BY cause"
        )
        return [int(row[0]) for row in rows]

    def prunable(self, *, older_than: datetime, ack: int | None, floor: bool = True) -> tuple[int, int] | None:
        """``(before_record, shoes)``: the most that may be pruned now, or None when nothing may.

        Whole shoes only: records from the anchor up to (not including) a shoe's starting input, every one
        of them stamped before ``older_than`` (the last one says when the shoe ended). The newest shoe is
        never pruned, nor the last ``link`` and ``line_noise`` inputs before it (a replay reads them). With
        ``floor`` (the table's own prune), every pruned record must be at or below the floor's ``ack``: with
        no ack, nothing is pruned. ``floor=False`` (``journal archive``, which keeps its own copy) drops the
        ack's limit."""
        if floor and ack is None:
            return None
        starts = self.shoe_starts()
        if not starts:
            return None
        newest = starts[-1]
        limit = newest
        for kind in ("link", "line_noise"):
            row = self._conn.execute(  # newest first, through the (kind, id) index: stops at the first one
                "SELECT id FROM records WHERE kind = 'input' AND id < ? AND json_extract(body, '$.kind') = ?"
                " ORDER BY id DESC LIMIT 1",
                (newest, kind),
            ).fetchone()
            if row is not None:
                limit = min(limit, int(row[0]))
        if floor:
            assert ack is not None
            limit = min(limit, ack + 1)
        anchor_id = self.anchor()[0]
        candidates = [b for b in starts if anchor_id + 1 < b <= limit]
        for b in reversed(candidates):
            ts = self._conn.execute("SELECT ts FROM records WHERE id = ?", (b - 1,)).fetchone()
            if ts is not None and _aware(datetime.fromisoformat(ts[0])) < _aware(older_than):
                return b, sum(1 for s in starts if anchor_id < s < b)
        return None

    def begin_prune(
        self, before_record: int, *, keep_from_ack: int | None, archive: str | None = None, ts: str | None = None
    ) -> int:
        """Check that records below ``before_record`` may go and write the prune's note into the chain (the
        new anchor's id and hash: :meth:`verify` holds the anchor to the newest note). Returns the note's id;
        :meth:`prune_step` then deletes. ``keep_from_ack``: records above it are the floor's to archive and
        are never pruned (None: no floor limit, for ``journal archive``). Raises ValueError naming what is
        wrong: not a shoe's first input, the newest shoe, or beyond the ack."""
        anchor_id = self.anchor()[0]
        starts = self.shoe_starts()
        if before_record <= anchor_id + 1:
            raise ValueError(f"nothing to prune below record {before_record}: the chain starts at {anchor_id + 1}")
        if not starts or before_record > starts[-1]:
            raise ValueError("the newest shoe is never pruned")
        if before_record not in starts:
            raise ValueError(f"record {before_record} does not start a shoe: only whole shoes are pruned")
        if keep_from_ack is not None and before_record - 1 > keep_from_ack:
            raise ValueError(f"records {keep_from_ack + 1}-{before_record - 1} are not acknowledged by the floor")
        row = self._conn.execute("SELECT hash FROM records WHERE id = ?", (before_record - 1,)).fetchone()
        if row is None:
            raise ValueError(f"record {before_record - 1} is not in the journal")
        shoes = sum(1 for s in starts if anchor_id < s < before_record)
        return self.note(
            {
                "note": PRUNE_NOTE,
                "through": before_record - 1,
                "hash": str(row[0]),
                "shoes": shoes,
                "ack": keep_from_ack,
                "archive": archive,
            },
            ts=ts,
        )

    def prune_step(self, before_record: int, *, limit: int = PRUNE_CHUNK) -> int:
        """Delete the oldest records below ``before_record``, about ``limit`` of them (up to the next input, so
        an input never loses its derived records), and move the anchor onto the last one deleted, in one
        transaction. Returns how many were deleted: 0 when the prune is done. Call :meth:`begin_prune` first."""
        self._ensure_writable()
        conn = self._conn
        with self._transaction("prune failed, nothing deleted"):
            anchor_id = int(conn.execute("SELECT last_id FROM chain_anchor WHERE one = 1").fetchone()[0])
            if anchor_id + 1 >= before_record:
                conn.execute("ROLLBACK")
                return 0
            row = conn.execute(
                "SELECT min(id) FROM records WHERE kind = 'input' AND id >= ?", (anchor_id + 1 + max(limit, 1),)
            ).fetchone()
            end = before_record if row[0] is None else min(int(row[0]), before_record)
            last = conn.execute("SELECT hash FROM records WHERE id = ?", (end - 1,)).fetchone()
            if last is None:
                raise JournalError(self.path, JournalFault.WRITE_FAILED, f"prune: record {end - 1} is missing")
            deleted = conn.execute("DELETE FROM records WHERE id > ? AND id < ?", (anchor_id, end)).rowcount
            conn.execute("UPDATE chain_anchor SET last_id = ?, hash = ? WHERE one = 1", (end - 1, last[0]))
        return int(deleted)

    def prune(
        self,
        before_record: int,
        *,
        keep_from_ack: int | None,
        archive: str | None = None,
        chunk: int = PRUNE_CHUNK,
    ) -> int:
        """:meth:`begin_prune`, then :meth:`prune_step` until done; returns how many records were deleted.
        For a stopped table (``journal archive``); the daemon runs the steps one per quiet moment instead."""
        self.begin_prune(before_record, keep_from_ack=keep_from_ack, archive=archive)
        total = 0
        while (n := self.prune_step(before_record, limit=chunk)) > 0:
            total += n
        return total

    def _prune_bound(self) -> int:
        """The highest record id any prune note allows the anchor to stand on (0 without one)."""
        row = self._conn.execute(
            "SELECT max(json_extract(body, '$.through')) FROM records WHERE kind = 'note'"
            " AND json_extract(body, '$.note') = ?",
            (PRUNE_NOTE,),
        ).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    # -- checking ------------------------------------------------------------------------------------
    def verify(self) -> list[str]:
        """Walk the chain; return the problems found (one line each). An empty list means intact.

        Finds: a record altered (body, ts, kind, session, number: its hash no longer matches), a record
        removed (an id gap, or a chain head beyond the last record), records reordered (prev_hash not
        the previous record's hash), a derived record detached from its input, a body that is not a JSON
        object, and whatever SQLite's own ``integrity_check`` reports.
        """
        problems = [f"sqlite: {row[0]}" for row in self._conn.execute("PRAGMA integrity_check(20)")]
        if problems == ["sqlite: ok"]:
            problems = []
        anchor_id, prev_hash = self.anchor()
        if anchor_id and anchor_id > self._prune_bound():
            problems.append(f"chain anchor: names record {anchor_id} but no prune note allows it (records removed)")
        expected_id = anchor_id + 1
        last_input: int | None = None
        for r in self.records(after=anchor_id):
            if r.id != expected_id:
                if r.id > expected_id:
                    gone = f"record {expected_id}"
                    if r.id > expected_id + 1:
                        gone = f"records {expected_id}-{r.id - 1}"
                    problems.append(f"record {r.id}: {gone} removed (ids jump from {expected_id - 1} to {r.id})")
                else:  # cannot happen with an INTEGER PRIMARY KEY, kept for a hand-built file
                    problems.append(f"record {r.id}: out of order after record {expected_id - 1}")
            elif r.prev_hash != prev_hash:
                problems.append(
                    f"record {r.id}: chain broken, prev_hash does not match record {r.id - 1}"
                    " (records removed, inserted or reordered)"
                )
            if record_hash(r.prev_hash, r.id, r.ts, r.kind, r.session, r.number, r.cause, r.body) != r.hash:
                problems.append(f"record {r.id}: altered, its hash does not match its contents")
            try:
                r.data()
            except ValueError as exc:
                problems.append(f"record {r.id}: body is not a JSON object ({exc})")
            if r.kind == INPUT:
                last_input = r.id
            elif r.cause is not None and r.cause != last_input:
                problems.append(f"record {r.id}: derived from input {r.cause}, but the input before it is {last_input}")
            prev_hash = r.hash
            expected_id = r.id + 1
        head_id, head_hash = self.head()
        last_id = expected_id - 1
        if head_id != last_id:
            if head_id > last_id:
                problems.append(f"chain head: names record {head_id} but the last record is {last_id} (tail removed)")
            else:
                problems.append(f"chain head: names record {head_id} but records run to {last_id}")
        elif head_hash != prev_hash:
            problems.append(f"chain head: hash does not match record {last_id} (last record replaced)")
        return problems

    # -- life ----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the file (idempotent)."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r}, read_only={self.read_only})"


class Retention:
    """The daemon's own prune, run by the table loop one bounded step at a time (:meth:`step`).

    At most once every ``every`` seconds (an hour) it plans: whole shoes older than ``retain_days`` that the
    floor has acknowledged (:meth:`Journal.floor_ack`; no ack, no prune), and writes the prune's note. Each
    later step deletes about ``chunk`` records in one transaction (a few milliseconds on a Pi), until done.
    Only the daemon with a floor link builds one: without a floor the table never prunes by itself.
    """

    def __init__(
        self,
        journal: Journal,
        retain_days: float,
        *,
        every: float = 3600.0,
        chunk: int = PRUNE_CHUNK,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.journal = journal
        self.retain_days = retain_days
        self.every = every
        self.chunk = chunk
        self.wall = wall
        self.pruned = 0  # records deleted so far
        self._target: int | None = None  # the prune under way: delete below this record
        self._next_plan: float | None = None

    def step(self, now: float) -> int:
        """Plan (if due) or delete one chunk; returns how many records this step deleted."""
        if self._target is None:
            if self._next_plan is not None and now < self._next_plan:
                return 0
            self._next_plan = now + self.every
            ack = self.journal.floor_ack()
            plan = self.journal.prunable(older_than=self.wall() - timedelta(days=self.retain_days), ack=ack)
            if plan is None:
                return 0
            self.journal.begin_prune(plan[0], keep_from_ack=ack)
            self._target = plan[0]
            return 0
        try:
            deleted = self.journal.prune_step(self._target, limit=self.chunk)
        except BaseException:
            self._target = None  # planned afresh next time
            raise
        if deleted == 0:
            self._target = None
        self.pruned += deleted
        return deleted
