"""What the journal file holds and how a connection to it is opened: the DDL, the pragmas, the checks a
file must pass at open, and the one migration (version 1 -> 2: the chain anchor).

Storage (stdlib :mod:`sqlite3` only):

* WAL mode with ``synchronous=FULL``: a commit that returned is on the disk; readers (``shoe-controller
  history``, ``journal verify``) open the file read-only beside the live daemon. A read-only copy (a file of
  mode 0444 in a folder its reader may not write, what surveillance is handed) reads too: SQLite cannot make
  the WAL's shared-memory file there, so it is read in ``immutable`` mode, or, with WAL frames waiting, from a
  private copy with its WAL folded in (:func:`connect`).
* One ``records`` table::

      id         INTEGER PRIMARY KEY AUTOINCREMENT   1, 2, 3 ... without gaps
      ts         TEXT     wall-clock UTC, ISO 8601, supplied by the caller (default: now)
      kind       TEXT     a RecordKind: "input" | "coup" | "note" ... (open set of lower-case words)
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
  prune): the chain is verified from there (:mod:`controller.journal.retention`). A journal written before
  retention gets the table on its first writable open.
* A one-row ``floor_ack`` table, created on first use (:mod:`controller.journal.ack`).
* ``PRAGMA user_version`` holds the schema version (:data:`SCHEMA_VERSION`).

The text of every statement here is stored in the file (``sqlite_master``): it is part of the on-disk
format, pinned by ``tests/journal/test_schema.py``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from urllib.parse import quote

from controller.game.records import GENESIS_HASH
from controller.journal.errors import JournalError, JournalFault, damaged, is_damage
from controller.journal.store import Store

#: The schema this code writes, kept in ``PRAGMA user_version``: 1 the records and the chain head, 2 the
#: chain anchor too (retention). A version-1 journal is upgraded when first opened for writing, so that an
#: older shoe-controller meeting a journal that may have been pruned says "newer schema" instead of "damaged".
SCHEMA_VERSION = 2

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

#: The floor's ack (one row), created by the first ack stored: an older shoe-controller ignores the table.
FLOOR_ACK_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS floor_ack ("
    " one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, ts TEXT NOT NULL,"
    " archive TEXT, hash TEXT, sig TEXT)"
)
#: The columns the signed ack added (controller.journal.ack adds them to an older table; its row has no archive).
FLOOR_ACK_COLUMNS = {"archive": "TEXT", "hash": "TEXT", "sig": "TEXT"}

_EXPECTED_COLUMNS = {
    "records": ["id", "ts", "kind", "session", "number", "cause", "body", "prev_hash", "hash"],
    "chain_head": ["one", "last_id", "hash"],
}


def _connect(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def connect(path: str, *, create: bool, read_only: bool, durable: bool) -> Store:
    """Open the journal file at ``path`` and check it (see :meth:`controller.journal.Journal.open`)."""
    p = path
    if os.path.isdir(p):
        raise JournalError(p, JournalFault.NOT_A_JOURNAL, "is a directory, not a journal file")
    if not os.path.exists(p):
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
    if read_only and _a_copy(p):
        return _read_only_copy(p, None)
    try:
        conn = _connect(f"file:{quote(os.path.abspath(p))}?mode={'ro' if read_only else 'rwc'}")
    except sqlite3.Error as exc:
        raise JournalError(p, JournalFault.UNAVAILABLE, f"cannot open: {exc}") from None
    store = Store(conn, p, read_only)
    try:
        prepare(store, create=create, durable=durable)
    except JournalError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        if is_damage(exc):
            raise damaged(p, str(exc)) from None
        if read_only and _no_shared_memory(exc):
            return _read_only_copy(p, exc)
        raise JournalError(p, JournalFault.UNAVAILABLE, f"cannot open: {exc}") from None
    return store


def _a_copy(path: str) -> bool:
    """Whether the file is one nobody writes, by its mode (0444: a copy handed over): read as
    :func:`_read_only_copy` does even where SQLite could make its ``-shm`` (root ignores a read-only folder), so that
    nothing is written beside it."""
    try:
        return os.stat(path).st_mode & 0o222 == 0
    except OSError:
        return False


def _no_shared_memory(exc: sqlite3.Error) -> bool:
    """Whether a read-only open failed for want of the WAL's shared-memory file (``-shm``), which SQLite makes
    beside the journal and cannot in a folder its reader may not write."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN"))


def _read_only_copy(path: str, cause: sqlite3.Error | None) -> Store:
    """The journal at ``path`` for reading, where SQLite cannot share it (a read-only copy in a read-only folder):
    in ``immutable`` mode when no WAL frames are waiting (the file alone is the whole journal); with frames
    waiting (a copy taken beside a live table, ``-wal`` and all), from a private copy in the temporary folder
    with the WAL folded in, opened ``immutable`` and unlinked at once (the connection keeps it until it closes).
    Nothing is written beside ``path``. Raises the :class:`JournalError` of ``cause`` when that fails too."""
    wal = f"{path}-wal"
    try:
        if not (os.path.exists(wal) and os.path.getsize(wal) > 0):
            return connect_immutable(path)
        with tempfile.TemporaryDirectory(prefix="shoe-journal-") as folder:
            copy = os.path.join(folder, "journal.db")
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, f"{copy}-wal")
            folding = sqlite3.connect(copy, isolation_level=None)
            try:
                folding.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                folding.execute("PRAGMA journal_mode = DELETE")
            finally:
                folding.close()
            store = Store(_connect(f"file:{quote(copy)}?mode=ro&immutable=1"), path, True)
            try:
                prepare(store, create=False, durable=True)  # reads the file: open from here on, unlinked or not
            except BaseException:
                store.conn.close()
                raise
        return store
    except JournalError:
        raise
    except (OSError, sqlite3.Error) as exc:
        if isinstance(exc, sqlite3.Error) and is_damage(exc):
            raise damaged(path, str(exc)) from None
        raise JournalError(path, JournalFault.UNAVAILABLE, f"cannot open: {cause or exc}") from None


def connect_immutable(path: str) -> Store:
    """A read-only store on a file nobody may be writing (SQLite's ``immutable``: no WAL, no shared memory),
    for a full disk that cannot even hold the WAL's shared-memory file. Raises :class:`sqlite3.Error`."""
    store = Store(_connect(f"file:{quote(os.path.abspath(path))}?mode=ro&immutable=1"), path, True)
    prepare(store, create=False, durable=True)
    return store


def in_memory(path: str) -> Store:
    """An empty journal in memory, named ``path`` (read-only to its users): a table's start on a full disk
    with no journal file yet."""
    store = Store(sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False), path, True)
    create_schema(store)
    return store


def prepare(store: Store, *, create: bool, durable: bool) -> None:
    """Set the pragmas and check the file's schema: create it in an empty file (with ``create``), upgrade a
    version-1 journal opened for writing, refuse anything else with a :class:`JournalError`."""
    conn = store.conn
    conn.execute("PRAGMA busy_timeout = 5000")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise JournalError(
            store.path,
            JournalFault.NEWER_SCHEMA,
            f"schema version {version} is newer than this shoe-controller supports ({SCHEMA_VERSION})",
            f"journal {store.path} has schema version {version}, newer than this shoe-controller supports"
            f" ({SCHEMA_VERSION}): upgrade shoe-controller; do not start a new journal",
        )
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        raise damaged(store.path, "; ".join(problems))
    if not store.read_only:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
    conn.execute("PRAGMA foreign_keys = ON")
    tables = store.tables()
    if version == 0:
        if tables:
            raise JournalError(
                store.path,
                JournalFault.NOT_A_JOURNAL,
                f"not a shoe-controller journal (it holds tables: {', '.join(sorted(tables))})",
                f"journal {store.path} is not a shoe-controller journal (it holds tables: {', '.join(sorted(tables))})",
            )
        if store.read_only or not create:
            raise JournalError(
                store.path,
                JournalFault.NOT_A_JOURNAL,
                "empty database, no journal in it",
                f"journal {store.path} is empty: no journal has been written to it",
            )
        create_schema(store)
        return
    for table, columns in _EXPECTED_COLUMNS.items():
        found = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        if found != columns:
            what = "missing" if not found else f"has columns {', '.join(found)}"
            raise damaged(store.path, f"wrong tables: {table} {what}")
    if conn.execute("SELECT count(*) FROM chain_head").fetchone()[0] != 1:
        raise damaged(store.path, "wrong tables: chain_head must hold exactly one row")
    if not store.read_only and "chain_anchor" not in tables:
        with store.transaction():
            for statement in _ANCHOR_SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def create_schema(store: Store) -> None:
    """Create the tables of :data:`SCHEMA_VERSION` in an empty database (nothing if it has a schema)."""
    conn = store.conn
    with store.transaction():
        if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
            for statement in (*_SCHEMA, *_ANCHOR_SCHEMA):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
