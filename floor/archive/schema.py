"""The archive's tables, and opening an archive: connecting, creating or bringing its tables up to date, or
checking that an archive opened as it is has them; and the archive's id.

Schema::

    records(table, seq, kind, at, session, number, cause, body, prev, hash, received_at, sig, key_id)
        PK (table, seq); sig is the table key's signature over (table, seq, hash), key_id the key that made it
        index (table, kind, seq) for recall (history of one table's coups)
        index (table, kind, body's shoe, body's coup) for game recall (any coup by shoe and number)
    chains(table PK, site, head_seq, head_hash, updated_at)   the contiguous, linked head of each table
    alert_feed(id, key UNIQUE, site, table, seq, kind, detail, record, extra, at, acked_by, acked_at)
        every alert, once; acked_by / acked_at: the pit manager who acknowledged it on the pit page, and when
    alert_outbox(id PK, at)                 alerts stored but not yet confirmed on the broker (PUBACK)
    archive_meta(one PK = 1, archive_id, created_at)   the archive's id (a random UUID, made once)
    table_keys(table, public_key, key_id, enrolled_at, retired_at, revoked)  PK (table, key_id)
        every key a table has had; the current one is neither retired nor revoked (``shoe-floor enroll``)

The watches' and the accounting's own tables (surveil_heads, shoe_windows, dealer_errors, money_faults, ...) are
the repository's (:mod:`floor.archive.repository`), made when a collector's surveillance starts.

Durability (SQLite): every commit is ``synchronous=FULL`` (the WAL is synced before a commit returns, so an ack
published after it never outlives a power cut).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from floor.archive.dialect import POSTGRES, SQLITE, now, parse_url, redacted
from floor.archive.errors import ArchiveError
from floor.archive.store import Store

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS records (
        "table" TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL,
        session BIGINT, number BIGINT, cause BIGINT, body {json_type} NOT NULL,
        prev TEXT NOT NULL, hash TEXT NOT NULL, received_at TEXT NOT NULL, sig TEXT, key_id TEXT,
        PRIMARY KEY ("table", seq))""",
    'CREATE INDEX IF NOT EXISTS records_recall ON records ("table", kind, seq)',
    """CREATE TABLE IF NOT EXISTS chains (
        "table" TEXT PRIMARY KEY, site TEXT, head_seq BIGINT NOT NULL, head_hash TEXT NOT NULL,
        updated_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS alert_feed (
        id {serial}, key TEXT UNIQUE, site TEXT NOT NULL, "table" TEXT NOT NULL, seq BIGINT, kind TEXT NOT NULL,
        detail TEXT NOT NULL, record {json_type}, extra {json_type} NOT NULL, at TEXT NOT NULL, acked_by TEXT,
        acked_at TEXT)""",
    'CREATE INDEX IF NOT EXISTS alert_feed_table ON alert_feed ("table", id)',
    # The alerts stored but not yet confirmed on the broker (PUBACK): the collector that stored one publishes it
    # and deletes its row; a row left by a collector that died in between is published by any collector's sweep.
    "CREATE TABLE IF NOT EXISTS alert_outbox (id BIGINT PRIMARY KEY, at TEXT NOT NULL)",
    # The archive's id, made once (a random UUID): an ack names it, so a table knows which archive holds it.
    """CREATE TABLE IF NOT EXISTS archive_meta (
        one INTEGER PRIMARY KEY CHECK (one = 1), archive_id TEXT NOT NULL, created_at TEXT NOT NULL)""",
    # Every key each table has had. The current one: retired_at IS NULL AND revoked = 0.
    """CREATE TABLE IF NOT EXISTS table_keys (
        "table" TEXT NOT NULL, public_key TEXT NOT NULL, key_id TEXT NOT NULL, enrolled_at TEXT NOT NULL,
        retired_at TEXT, revoked INTEGER NOT NULL DEFAULT 0, PRIMARY KEY ("table", key_id))""",
)
#: At most one current key per table, whatever two operators do at once.
_ONE_CURRENT_KEY = (
    'CREATE UNIQUE INDEX IF NOT EXISTS table_keys_current ON table_keys ("table") WHERE retired_at IS NULL'
    " AND revoked = 0"
)
#: Columns added to the archive's tables since their first version: ``(table, column, type)`` (an older archive
#: gains them on open).
ADDED_COLUMNS = (
    ("records", "sig", "TEXT"),
    ("records", "key_id", "TEXT"),
    ("alert_feed", "acked_by", "TEXT"),
    ("alert_feed", "acked_at", "TEXT"),
)
_TABLE_NAME = re.compile(r"\s*CREATE TABLE IF NOT EXISTS (\w+)")
#: Game recall's index: a coup by table, shoe and number (an expression index on the body, one per dialect).
_RECALL_INDEX = 'CREATE INDEX IF NOT EXISTS records_coup ON records ("table", kind, {shoe}, {coup}, seq)'


def connect(url: str, *, create: bool, read_only: bool = False) -> Store:
    """Open the archive at ``url``: with ``create``, make (or bring up to date) its tables; without, check that
    it has this version's; ``read_only`` (SQLite) for the read commands, which must read a read-only copy too
    (:func:`_read_only`). :class:`ArchiveError` names the problem in one line."""
    dialect, target = parse_url(url)
    if dialect is SQLITE:
        path = Path(target)
        if not create and not path.is_file():
            raise ArchiveError(f"archive {path}: no such file")
        if create and not path.parent.is_dir():
            raise ArchiveError(f"archive {path}: directory {path.parent} does not exist")
        try:
            if read_only:
                conn = _read_only(path)
            else:
                conn = sqlite3.connect(path, timeout=30.0, isolation_level="DEFERRED", check_same_thread=False)
                _wal(conn)
                # FULL: the WAL is synced at every commit, so what the collector acks after a commit survives
                # a power cut (NORMAL syncs only at checkpoints: the last commits can be lost, their acks not).
                conn.execute("PRAGMA synchronous=FULL")
            st = os.stat(path)
        except (sqlite3.Error, OSError) as exc:
            raise ArchiveError(f"archive {path}: {exc}") from None
        store = Store(conn, dialect, url, path, (st.st_dev, st.st_ino))
        serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    else:
        try:
            import psycopg
        except ImportError:
            raise ArchiveError("a PostgreSQL archive needs psycopg: pip install 'shoe-controller[floor]'") from None
        try:
            pg = psycopg.connect(target, connect_timeout=10)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ArchiveError(f"archive {redacted(url)}: {first}") from None
        store = Store(pg, dialect, url)
        serial = "BIGSERIAL PRIMARY KEY"
    if create:
        _create(store, serial)
    else:
        _check(store)
    return store


def _read_only(path: Path) -> sqlite3.Connection:
    """A SQLite archive opened for reading only (the read commands: ``history``, ``verify`` ...). A read-only copy
    (mode 0444 in a folder its reader may not write, what surveillance is handed) is read in ``immutable`` mode,
    SQLite being unable to make the WAL's shared-memory file there; with WAL frames waiting beside such a copy,
    ArchiveError says how to hand it over instead (the frames would be missed)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    wal = Path(f"{path}-wal")
    waiting = wal.exists() and wal.stat().st_size > 0
    if not waiting and path.stat().st_mode & 0o222 == 0:  # a copy nobody writes: nothing made beside it, even as root
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level="DEFERRED", check_same_thread=False)
    conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level="DEFERRED", check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if not str(getattr(exc, "sqlite_errorname", "")).startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
            raise
        if waiting:
            raise ArchiveError(
                f"archive {path}: a read-only copy with WAL frames waiting ({wal.name}) and no {path.name}-shm:"
                f" hand it over with its -shm file too, or as one file (sqlite3 {path.name} '.backup COPY')"
            ) from None
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level="DEFERRED", check_same_thread=False)


def _wal(conn: sqlite3.Connection, attempts: int = 100) -> None:
    """Switch to WAL. Two collectors opening a new archive at once: SQLite may answer the switch with "database
    is locked" at once, without waiting for its busy timeout; try again for up to ten seconds."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.1)


def archive_id(store: Store, *, create: bool) -> str:
    """The archive's id: made once, when the archive is created (or first opened by this version)."""
    with store.transaction() as cur:
        if create:
            cur.execute(
                store.sql(
                    "INSERT INTO archive_meta (one, archive_id, created_at) VALUES (1, ?, ?) ON CONFLICT DO NOTHING"
                ),
                (str(uuid.uuid4()), now()),
            )
        cur.execute("SELECT archive_id FROM archive_meta WHERE one = 1")
        row = cur.fetchone()
    if row is None:
        raise ArchiveError(f"archive {redacted(store.url)}: no archive id; run `shoe-floor serve` on it once")
    return str(row[0])


def columns(cur: Any, table: str) -> set[str]:
    """The names of ``table``'s columns."""
    cur.execute(f'SELECT * FROM "{table}" WHERE 1 = 0')
    return {str(d[0]) for d in cur.description}


def tables_present(store: Store) -> set[str]:
    """The names of the tables in the archive's database (schema checks, optional parts)."""
    with store.transaction() as cur:
        if store.dialect is POSTGRES:
            cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        else:
            cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(row[0]) for row in cur.fetchall()}


def _check(store: Store) -> None:
    """An archive opened as it is must have this version's tables: one made by an older shoe-floor (or
    not by shoe-floor at all) is one line for the operator, not a database error halfway through."""
    expected = [m.group(1) for m in map(_TABLE_NAME.match, SCHEMA) if m is not None]
    present = tables_present(store)
    missing = [name for name in expected if name not in present]
    if not missing:
        with store.transaction() as cur:
            have = {table: columns(cur, table) for table in {t for t, _c, _type in ADDED_COLUMNS}}
        missing = [f"{t}.{c}" for t, c, _type in ADDED_COLUMNS if c not in have[t]]
    if missing:
        store.conn.close()
        where = redacted(store.url)
        if "records" in missing:
            raise ArchiveError(f"archive {where}: not a shoe-floor archive (no records table)")
        raise ArchiveError(
            f"archive {where}: made by an older shoe-floor (no {', '.join(missing)}); "
            "run `shoe-floor serve` on it once to bring it up to date"
        )


def _create(store: Store, serial: str) -> None:
    cur = store.conn.cursor()
    if store.dialect is POSTGRES:
        # Two collectors starting on a new archive at once: PostgreSQL's CREATE TABLE IF NOT EXISTS is not
        # safe against a concurrent one (a unique violation in its catalogue); one creates, the other waits.
        cur.execute("SELECT pg_advisory_xact_lock(4242001)")
    for statement in SCHEMA:
        cur.execute(store.sql(statement.replace("{serial}", serial)))
    have = {table: columns(cur, table) for table in {t for t, _c, _type in ADDED_COLUMNS}}
    for table, column, kind in ADDED_COLUMNS:  # an archive made by an older shoe-floor
        if column not in have[table]:
            try:
                cur.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            except sqlite3.OperationalError as exc:  # SQLite: another collector added it just now
                if "duplicate column" not in str(exc):
                    raise
    cur.execute(store.dialect.recall(_RECALL_INDEX))
    cur.execute(_ONE_CURRENT_KEY)
    store.conn.commit()
