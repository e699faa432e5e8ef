"""The floor's archive: every table's records, once each, in PostgreSQL or SQLite through one code path.

The two databases differ in three small ways, kept in :class:`_Dialect`: the driver's placeholder (``?`` or
``%s``), the body column's type (``jsonb`` or ``TEXT``) and how a JSON parameter is written into it. Every
statement is written once, with ``?`` placeholders; ``INSERT ... ON CONFLICT DO NOTHING`` and the
conditional upsert of a chain's head work in both.

Schema::

    records(table, seq, kind, at, session, number, cause, body, prev, hash, received_at, sig, key_id)
        PK (table, seq); sig is the table key's signature over (table, seq, hash), key_id the key that made it
        index (table, kind, seq) for recall (history of one table's coups)
        index (table, kind, body's shoe, body's coup) for game recall (any coup by shoe and number)
    chains(table PK, site, head_seq, head_hash, updated_at)   the contiguous, linked head of each table
    alert_feed(id, key UNIQUE, site, table, seq, kind, detail, record, extra, at)   every alert, once
    alert_outbox(id PK, at)                 alerts stored but not yet confirmed on the broker (PUBACK)
    archive_meta(one PK = 1, archive_id, created_at)   the archive's id (a random UUID, made once)
    table_keys(table, public_key, key_id, enrolled_at, retired_at, revoked)  PK (table, key_id)
        every key a table has had; the current one is neither retired nor revoked (``shoe-floor enroll``)
        (floor/surveillance.py keeps its own tables: surveil_heads, shoe_windows, dealer_errors)

The archive is the truth: :meth:`Archive.advance` computes a table's head from the stored records (whatever
collector stored them), and only ever moves it forward.

Durability (SQLite): every commit is ``synchronous=FULL`` (the WAL is synced before a commit returns, so an ack
published after it never outlives a power cut), and every write first checks that the path still names the file
this connection opened (device and inode, as the table's journal does in controller/journal/guard.py): a
deleted or replaced archive file is :class:`ArchiveLost`, nothing more is written to it or acked from it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from commandline.times import utc_stamp
from controller.game.records import GENESIS_HASH, RecordKind, TableRecord, canonical_json, record_hash, shape_coup
from floor_protocol.admission import MAX_DEPTH, AdmissionError, check_value
from floor_protocol.signing import KeyStatement, SigningError, key_id, parse_public_key, record_message, verify

#: How many records :meth:`Archive.advance` reads per step while walking a chain forward.
ADVANCE_STEP = 5000


class ArchiveError(ValueError):
    """A bad archive URL or an archive that cannot be opened (one line for the operator)."""


class ArchiveLost(ArchiveError):
    """The archive's file is no longer the one this connection opened (deleted, or another put in its place):
    nothing is written to it, nothing acked from it."""


class EnrollError(ArchiveError):
    """A change of a table's keys that is refused (one line for the operator)."""


class UnstorableRecord(ArchiveError):
    """A record whose content this archive cannot hold (a NUL, a lone surrogate, an integer past 64 bits),
    found before the database sees it: the batch is not sent."""

    def __init__(self, record: TableRecord, reason: str) -> None:
        super().__init__(f"record {record.table}/{record.seq}: {reason}")
        self.record = record


class AlertKind:
    GAP = "gap"  # records after the head exist, one or more before them do not (the ack waits)
    BROKEN_LINK = "broken_link"  # a record's prev is not its predecessor's hash (the ack stops before it)
    REFUSED = "refused"  # not a record, or its hash is not its own link: not archived
    CONFLICT = "conflict"  # a second, different record with a seq the archive already holds: not archived
    # surveillance (floor/surveillance.py), from the archive's contiguous records, once floor-wide
    # the table journaled an advantage record (a wager's player EV at/above threshold), and its advantage_cleared
    # record: the alert is named after the record's kind (the one statement of it, RecordKind)
    ADVANTAGE = RecordKind.ADVANTAGE.value
    ADVANTAGE_CLEARED = RecordKind.ADVANTAGE_CLEARED.value
    REPEATED_SHOE = "repeated_shoe"  # a new shoe's first 20 dealt cards were dealt before, in order
    DEALER_ERRORS = "dealer_errors"  # a table's dealer errors this hour far above the floor's rate
    CLOCK_UNSYNCHRONISED = "clock_unsynchronised"  # a table journaled that its clock is not synchronised
    # a seat's stakes on a wager rise when its live edge is positive beyond what chance explains (floor/counting.py)
    BETTING_WITH_THE_COUNT = "betting_with_the_count"
    # the money's surveillance (floor/money_watch.py): one alert per money record, named after its kind
    PAST_POST = RecordKind.PAST_POST.value  # chips added to (or swapped on) a locked wager before the declare
    PULLED_BET = RecordKind.PULLED_BET.value  # chips taken from a locked wager before the declare
    MISPAY = RecordKind.MISPAY.value  # an underpay, an overpay, a losing wager left on the layout
    FOREIGN_CHIP = "foreign_chip"  # an unknown or retired chip came onto a spot (the reader's spot input)
    STOLEN_CHIP = "stolen_chip"  # a chip reported stolen came onto a spot: the most urgent of the money's alerts
    MONEY_FAULTS = "money_faults"  # a table's past-posts or mispays this shift far above the floor's rate
    # the floor's accounting (floor/accounting.py): a shift's win outside the 95 % interval of its exact theo
    HOLD_OUTSIDE_INTERVAL = "hold_outside_interval"
    # trust (docs/floor.md, threat model)
    FORGED = "forged"  # a record from an unenrolled or revoked table, or whose signature does not verify
    KEY_ENROLLED = "key_enrolled"  # a table's first key (shoe-floor enroll)
    KEY_ROTATED = "key_rotated"  # a new key, handed over by a statement the old one signed
    KEY_REVOKED = "key_revoked"  # the table's key revoked: nothing is admitted until a new one is enrolled
    KEY_REPLACED = "key_replaced"  # a new key enrolled by the operator without the old key's word (lost, stolen)
    ARCHIVE_LOST = "archive_lost"  # the archive file was deleted or replaced under the collector


#: The record kinds the archive's queries name (bound as plain text: a driver need not know the enum).
_COUP, _SHOE = RecordKind.COUP.value, RecordKind.SHOE.value
#: The money's records a coup's recall shows (:meth:`Archive.coup_money`).
_MONEY_KINDS = (
    RecordKind.WAGER,
    RecordKind.WAGER_REFUSED,
    RecordKind.PAST_POST,
    RecordKind.PULLED_BET,
    RecordKind.SETTLEMENT,
    RecordKind.MISPAY,
    RecordKind.COMMISSION,
)

#: The alert feed's JSON version (``v`` of what is published on ``baccarat/<site>/floor/alert``).
FEED_VERSION = 1


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert to keep. ``key`` makes it once floor-wide (a second alert with the same key is not stored or
    published); None: every occurrence is its own alert. ``record`` is the record that caused it (its
    :meth:`TableRecord.to_dict`), ``extra`` what the kind adds."""

    table: str
    seq: int | None
    kind: str
    detail: str
    site: str | None = None
    record: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None

    def line(self) -> str:
        where = f"table {self.table}" + ("" if self.seq is None else f" seq {self.seq}")
        return f"{self.kind}: {where}: {self.detail}"


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One stored alert, as the feed lists it and ``baccarat/<site>/floor/alert`` carries it."""

    id: int
    at: str
    site: str
    table: str
    seq: int | None
    kind: str
    detail: str
    record: Mapping[str, Any] | None
    extra: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": FEED_VERSION,
            "id": self.id,
            "at": self.at,
            "site": self.site,
            "table": self.table,
            "seq": self.seq,
            "kind": self.kind,
            "detail": self.detail,
            "record": None if self.record is None else dict(self.record),
            "extra": dict(self.extra),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)

    def line(self) -> str:
        where = f"table {self.table}" + ("" if self.seq is None else f" seq {self.seq}")
        return f"#{self.id} {self.at} {self.kind}: {where}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Head:
    """A table's contiguous, linked head: ``seq`` (0 = nothing yet) and its ``hash``."""

    table: str
    seq: int
    hash: str


@dataclass(slots=True)
class TableReport:
    """What :meth:`Archive.verify` found for one table."""

    table: str
    records: int = 0
    head: int = 0
    last: int = 0
    gaps: list[tuple[int, int]] = field(default_factory=list)  # missing seq ranges, inclusive
    broken: list[int] = field(default_factory=list)  # seqs whose link or own hash does not hold
    forged: list[int] = field(default_factory=list)  # seqs unsigned, or not signed by a key enrolled for the table
    problems: list[str] = field(default_factory=list)  # one line each, in seq order

    @property
    def ok(self) -> bool:
        return not self.gaps and not self.broken and not self.forged

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "records": self.records,
            "head": self.head,
            "last": self.last,
            "gaps": [list(g) for g in self.gaps],
            "broken": self.broken,
            "forged": self.forged,
            "ok": self.ok,
        }


@dataclass(frozen=True, slots=True)
class TableKey:
    """One of a table's keys as the archive holds it (``table_keys``)."""

    table: str
    public_key: str  # as written: ed25519:<base64>
    key_id: str
    enrolled_at: str
    retired_at: str | None
    revoked: bool

    @property
    def current(self) -> bool:
        """The key the table's records are admitted with now."""
        return self.retired_at is None and not self.revoked

    def status(self) -> str:
        return "revoked" if self.revoked else "retired" if self.retired_at is not None else "current"


class _Connection(Protocol):
    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class _Dialect:
    name: str
    placeholder: str
    json_type: str
    json_param: str  # how a JSON text parameter is written (``?`` or ``CAST(? AS jsonb)``)
    json_staged: str  # how the staging table's body text is written into records.body
    staging: str  # how the batch's staging table is made (once per connection), emptied at each commit

    def sql(self, statement: str) -> str:
        statement = statement.replace("{json_type}", self.json_type).replace("{json}", self.json_param)
        return statement.replace("{json_staged}", self.json_staged).replace("?", self.placeholder)


_STAGING_COLUMNS = (
    '("table" TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL, session BIGINT,'
    " number BIGINT, cause BIGINT, body TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL,"
    " received_at TEXT NOT NULL, sig TEXT, key_id TEXT)"
)
SQLITE = _Dialect("sqlite", "?", "TEXT", "?", "s.body", f"CREATE TEMP TABLE IF NOT EXISTS staging {_STAGING_COLUMNS}")
POSTGRES = _Dialect(
    "postgresql",
    "%s",
    "jsonb",
    "CAST(? AS jsonb)",
    "CAST(s.body AS jsonb)",
    # Emptied by PostgreSQL at each commit (a truncate: no dead rows in a table autovacuum never visits).
    f"CREATE TEMP TABLE IF NOT EXISTS staging {_STAGING_COLUMNS} ON COMMIT DELETE ROWS",
)

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
        detail TEXT NOT NULL, record {json_type}, extra {json_type} NOT NULL, at TEXT NOT NULL)""",
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
_KEY_COLUMNS = '"table", public_key, key_id, enrolled_at, retired_at, revoked'
#: Columns added to ``records`` since its first version, and their type (an older archive gains them on open).
_ADDED_COLUMNS = (("sig", "TEXT"), ("key_id", "TEXT"))
_INSERT_ALERT = (
    'INSERT INTO alert_feed (key, site, "table", seq, kind, detail, record, extra, at)'
    " VALUES (?, ?, ?, ?, ?, ?, {json}, {json}, ?) ON CONFLICT DO NOTHING RETURNING id"
)
_FEED_COLUMNS = 'id, at, site, "table", seq, kind, detail, record, extra'
_TABLE_NAME = re.compile(r"\s*CREATE TABLE IF NOT EXISTS (\w+)")

#: Game recall's index: a coup by table, shoe and number (an expression index on the body, one per dialect).
_SHOE_OF = {"sqlite": "json_extract(body, '$.shoe')", "postgresql": "((body->>'shoe')::bigint)"}
_COUP_OF = {"sqlite": "json_extract(body, '$.coup')", "postgresql": "((body->>'coup')::bigint)"}
_RECALL_INDEX = 'CREATE INDEX IF NOT EXISTS records_coup ON records ("table", kind, {shoe}, {coup}, seq)'

_COLUMNS = '"table", seq, kind, at, session, number, cause, body, prev, hash, received_at, sig, key_id'
_STAGE = f"INSERT INTO staging ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
# From the staging table into the archive, in (table, seq) order, those already there skipped; RETURNING names
# the ones inserted. ("WHERE true": SQLite's parser would read ON CONFLICT as part of a join otherwise.)
_INSERT_STAGED = (
    f"INSERT INTO records ({_COLUMNS})"
    ' SELECT s."table", s.seq, s.kind, s.at, s.session, s.number, s.cause, {json_staged}, s.prev, s.hash,'
    ' s.received_at, s.sig, s.key_id FROM staging s WHERE true ORDER BY s."table", s.seq ON CONFLICT DO NOTHING'
    ' RETURNING "table", seq'
)
# After the insert every staged (table, seq) is archived: those archived with another hash are conflicts. Asked
# only when some staged record was already there (a resend, another collector's copy): usually none is.
_DIFFERING = (
    'SELECT r."table", r.seq, r.hash FROM staging s JOIN records r ON r."table" = s."table" AND r.seq = s.seq'
    " WHERE r.hash <> s.hash"
)
_UPSERT_HEAD = (
    'INSERT INTO chains ("table", site, head_seq, head_hash, updated_at) VALUES (?, ?, ?, ?, ?)'
    ' ON CONFLICT ("table") DO UPDATE SET head_seq = excluded.head_seq, head_hash = excluded.head_hash,'
    " updated_at = excluded.updated_at, site = COALESCE(excluded.site, chains.site)"
    " WHERE chains.head_seq < excluded.head_seq RETURNING head_seq, head_hash"
)


def _feed_item(row: Sequence[Any]) -> FeedItem:
    """A feed row (``_FEED_COLUMNS``) as a FeedItem."""
    i, at, site, t, s, k, d, rec, ex = row
    return FeedItem(int(i), str(at), str(site), str(t), s, str(k), str(d), _json_or_none(rec), _json_or_none(ex) or {})


def _now() -> str:
    return utc_stamp()


def _body_text(body: Any) -> str:
    """A stored body as its canonical JSON (psycopg hands jsonb back decoded, SQLite as text)."""
    return canonical_json(json.loads(body) if isinstance(body, str | bytes) else body)


def parse_url(url: str) -> tuple[_Dialect, str]:
    """``(dialect, target)`` for ``sqlite:///path`` or ``postgresql://...``; ArchiveError names the problem."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        if parts.netloc or not parts.path or parts.path == "/":
            raise ArchiveError(f"archive URL {url!r}: write sqlite:///path/to/archive.db (three slashes)")
        return SQLITE, "/" + parts.path.lstrip("/")  # sqlite:////abs/path (SQLAlchemy's spelling) too
    if parts.scheme in ("postgresql", "postgres"):
        if not parts.netloc and "host=" not in parts.query:
            raise ArchiveError(f"archive URL {url!r}: no server (postgresql://user@host:port/database)")
        return POSTGRES, url
    raise ArchiveError(f"archive URL {url!r}: use sqlite:///path or postgresql://user@host:port/database")


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


class Archive:
    """One connection to the archive, used by one thread at a time (the collector's loop)."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.dialect, target = parse_url(url)
        self.url = url
        self._staging = False  # the staging table exists on this connection
        self._conn: _Connection
        self._path: Path | None = None  # the SQLite file, and which file it is (device, inode) once opened
        self._identity: tuple[int, int] | None = None
        self._lost: str | None = None  # why the file is no longer the one opened (ArchiveLost), once seen
        if self.dialect is SQLITE:
            path = Path(target)
            if not create and not path.is_file():
                raise ArchiveError(f"archive {path}: no such file")
            if create and not path.parent.is_dir():
                raise ArchiveError(f"archive {path}: directory {path.parent} does not exist")
            try:
                conn = sqlite3.connect(path, timeout=30.0, isolation_level="DEFERRED", check_same_thread=False)
                _wal(conn)
                # FULL: the WAL is synced at every commit, so what the collector acks after a commit survives a
                # power cut (NORMAL syncs only at checkpoints: the last commits can be lost, their acks not).
                conn.execute("PRAGMA synchronous=FULL")
                st = os.stat(path)
            except (sqlite3.Error, OSError) as exc:
                raise ArchiveError(f"archive {path}: {exc}") from None
            self._conn = conn
            self._path, self._identity = path, (st.st_dev, st.st_ino)
            serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
        else:
            try:
                import psycopg
            except ImportError:
                raise ArchiveError("a PostgreSQL archive needs psycopg: pip install 'shoe-controller[floor]'") from None
            try:
                self._conn = psycopg.connect(target, connect_timeout=10)
            except psycopg.Error as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ArchiveError(f"archive {_redacted(url)}: {first}") from None
            serial = "BIGSERIAL PRIMARY KEY"
        if create:
            self._create(serial)
        else:
            self._check_schema()
        self.archive_id = self._archive_id(create)

    def _archive_id(self, create: bool) -> str:
        """The archive's id: made once, when the archive is created (or first opened by this version)."""
        cur = self._conn.cursor()
        if create:
            cur.execute(
                self.dialect.sql(
                    "INSERT INTO archive_meta (one, archive_id, created_at) VALUES (1, ?, ?) ON CONFLICT DO NOTHING"
                ),
                (str(uuid.uuid4()), _now()),
            )
        cur.execute("SELECT archive_id FROM archive_meta WHERE one = 1")
        row = cur.fetchone()
        self._conn.commit()
        if row is None:
            raise ArchiveError(f"archive {_redacted(self.url)}: no archive id; run `shoe-floor serve` on it once")
        return str(row[0])

    def check_file(self) -> None:
        """Before every write (and between batches): the path still names the SQLite file this connection
        opened. A deleted file lives on only in this connection (and is lost at the next boot); a replaced one
        is not the archive the tables were acked from. Either way :class:`ArchiveLost`, every time: nothing is
        written or acked. (PostgreSQL: nothing to check.)"""
        if self._path is None:
            return
        if self._lost is None:
            try:
                st = os.stat(self._path)
            except FileNotFoundError:
                self._lost = "deleted"
            except OSError as exc:
                self._lost = f"cannot be checked ({exc.strerror})"
            else:
                if (st.st_dev, st.st_ino) != self._identity:
                    self._lost = "replaced by another file"
        if self._lost is not None:
            raise ArchiveLost(
                f"archive {self._path}: the file this collector opened was {self._lost}; nothing more is stored"
                " or acked from it"
            )

    def _columns(self, cur: Any, table: str) -> set[str]:
        cur.execute(f'SELECT * FROM "{table}" WHERE 1 = 0')
        return {str(d[0]) for d in cur.description}

    def tables_present(self) -> set[str]:
        """The names of the tables in the archive's database (schema checks, optional parts)."""
        cur = self._conn.cursor()
        if self.dialect is POSTGRES:
            cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        else:
            cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        present = {str(row[0]) for row in cur.fetchall()}
        self._conn.commit()
        return present

    def _check_schema(self) -> None:
        """An archive opened as it is must have this version's tables: one made by an older shoe-floor (or
        not by shoe-floor at all) is one line for the operator, not a database error halfway through."""
        expected = [m.group(1) for m in map(_TABLE_NAME.match, SCHEMA) if m is not None]
        present = self.tables_present()
        missing = [name for name in expected if name not in present]
        if not missing:
            columns = self._columns(self._conn.cursor(), "records")
            self._conn.commit()
            missing = [f"records.{c}" for c, _type in _ADDED_COLUMNS if c not in columns]
        if missing:
            self._conn.close()
            where = _redacted(self.url)
            if "records" in missing:
                raise ArchiveError(f"archive {where}: not a shoe-floor archive (no records table)")
            raise ArchiveError(
                f"archive {where}: made by an older shoe-floor (no {', '.join(missing)}); "
                "run `shoe-floor serve` on it once to bring it up to date"
            )

    def _create(self, serial: str) -> None:
        cur = self._conn.cursor()
        if self.dialect is POSTGRES:
            # Two collectors starting on a new archive at once: PostgreSQL's CREATE TABLE IF NOT EXISTS is not
            # safe against a concurrent one (a unique violation in its catalogue); one creates, the other waits.
            cur.execute("SELECT pg_advisory_xact_lock(4242001)")
        for statement in SCHEMA:
            cur.execute(self.dialect.sql(statement.replace("{serial}", serial)))
        columns = self._columns(cur, "records")
        for column, kind in _ADDED_COLUMNS:  # an archive made by an older shoe-floor
            if column not in columns:
                try:
                    cur.execute(f"ALTER TABLE records ADD COLUMN {column} {kind}")
                except sqlite3.OperationalError as exc:  # SQLite: another collector added it just now
                    if "duplicate column" not in str(exc):
                        raise
        cur.execute(self._recall_sql(_RECALL_INDEX))
        cur.execute(_ONE_CURRENT_KEY)
        self._conn.commit()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------------------
    def store(
        self, records: Sequence[TableRecord], key_ids: Mapping[tuple[str, int], str] | None = None
    ) -> tuple[int, list[Alert]]:
        """Insert ``records`` in one transaction, those already there skipped; ``(inserted, alerts)``.
        ``key_ids``: (table, seq) -> the id of the key the record's ``sig`` was verified with (stored with it).

        A record whose ``(table, seq)`` is held with a different hash is a conflict: the stored one stays.
        Records are inserted in (table, seq) order, so two collectors never wait on each other in a cycle.

        The batch goes into a temporary staging table first (PostgreSQL: COPY; SQLite: one executemany), then
        into the archive with one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING RETURNING``, and one join names
        the conflicts (only when a record was already archived): three statements and a commit a batch, whatever
        its size and however many tables it holds."""
        if not records:
            return 0, []
        self.check_file()
        for r in records:
            _check_storable(r)
        now = _now()
        chosen = {(r.table, r.seq): r for r in records}
        ids = key_ids or {}
        rows = [
            (
                *(r.table, r.seq, r.kind, r.at, r.session, r.number, r.cause, canonical_json(r.body), r.prev, r.hash),
                *(now, r.sig, ids.get((r.table, r.seq)) if r.sig is not None else None),
            )
            for r in chosen.values()
        ]
        cur = self._conn.cursor()
        try:
            self._stage(cur, rows)
            cur.execute(self.dialect.sql(_INSERT_STAGED))
            inserted = len(cur.fetchall())
            stored: dict[tuple[str, int], str] = {}  # (table, seq) -> the archived hash, where it differs
            if inserted < len(chosen):
                cur.execute(self.dialect.sql(_DIFFERING))
                stored = {(str(t), int(seq)): str(h) for t, seq, h in cur.fetchall()}
            self._conn.commit()
        except BaseException:
            self._staging = False  # its creation may be what was rolled back
            self._conn.rollback()
            raise
        alerts = [
            Alert(
                r.table, r.seq, AlertKind.CONFLICT, "a different record with this seq is archived", record=r.to_dict()
            )
            for r in sorted(records, key=lambda r: (r.table, r.seq))
            if stored.get((r.table, r.seq), chosen[r.table, r.seq].hash) != r.hash
        ]
        return inserted, alerts

    def content_error(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by :meth:`store`, comes of a record's content (the batch, stored record by
        record, would lose only that one) rather than of a database that is down, gone or broken: a record
        refused before sending (:class:`UnstorableRecord`), a value the driver cannot send (encoding, range,
        nesting), or the database's data and integrity errors (SQLSTATE classes 22 and 23)."""
        if isinstance(exc, UnstorableRecord | UnicodeError | OverflowError | RecursionError | TypeError):
            return True
        if self.dialect is POSTGRES:
            import psycopg

            return isinstance(exc, psycopg.DataError | psycopg.IntegrityError)
        return isinstance(exc, sqlite3.DataError | sqlite3.IntegrityError | ValueError) and not isinstance(
            exc, ArchiveError
        )

    def _stage(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:
        """The batch into the staging table (made on first use, empty at the start of each transaction)."""
        if not self._staging:
            cur.execute(self.dialect.staging)
            self._staging = True
        if self.dialect is POSTGRES:
            with cur.copy(f"COPY staging ({_COLUMNS}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cur.execute("DELETE FROM staging")  # SQLite has no ON COMMIT DELETE ROWS
            cur.executemany(_STAGE, rows)

    def alert(self, alerts: Iterable[Alert]) -> list[FeedItem]:
        """Keep these alerts in the feed, in one transaction; return those newly stored (an alert whose ``key``
        is already in the feed, raised by another collector or before, is not stored again)."""
        self.check_file()
        cur = self._conn.cursor()
        try:
            items = self.insert_alerts(cur, alerts)
            self._conn.commit()
        except BaseException:
            self._conn.rollback()
            raise
        return items

    def insert_alerts(self, cur: Any, alerts: Iterable[Alert]) -> list[FeedItem]:
        """Insert into the feed inside the caller's transaction (surveillance stores its alerts with its
        progress); the newly stored ones."""
        items = []
        for a in alerts:
            at = _now()
            site = a.site or "?"
            record = None if a.record is None else canonical_json(a.record)
            row = (a.key, site, a.table, a.seq, a.kind, a.detail[:500], record, canonical_json(a.extra), at)
            cur.execute(self.dialect.sql(_INSERT_ALERT), row)
            got = cur.fetchone()
            if got is not None:
                items.append(FeedItem(int(got[0]), at, site, a.table, a.seq, a.kind, a.detail[:500], a.record, a.extra))
                if site != "?":  # a site is needed to publish it; without one it is in the feed only
                    cur.execute(self.dialect.sql("INSERT INTO alert_outbox (id, at) VALUES (?, ?)"), (int(got[0]), at))
        return items

    def unpublished(self, older_than: float, limit: int = 500) -> list[FeedItem]:
        """Alerts stored at least ``older_than`` seconds ago and still not confirmed published, oldest first (at
        most ``limit``: a sweep after a long outage sends the rest at the next sweeps, not all at once)."""
        cutoff = utc_stamp(datetime.now(UTC) - timedelta(seconds=older_than))
        cur = self._conn.cursor()
        columns = ", ".join(f"f.{c.strip()}" for c in _FEED_COLUMNS.split(","))
        cur.execute(
            self.dialect.sql(
                f"SELECT {columns} FROM alert_feed f JOIN alert_outbox o ON o.id = f.id WHERE o.at <= ?"
                " ORDER BY f.id LIMIT ?"
            ),
            (cutoff, limit),
        )
        rows = cur.fetchall()
        self._conn.commit()
        return [_feed_item(row) for row in rows]

    def published(self, ids: Iterable[int]) -> None:
        """These alerts are on the broker (PUBACK): out of the outbox."""
        ids = list(ids)
        if not ids:
            return
        cur = self._conn.cursor()
        try:
            cur.executemany(self.dialect.sql("DELETE FROM alert_outbox WHERE id = ?"), [(i,) for i in ids])
            self._conn.commit()
        except BaseException:
            self._conn.rollback()
            raise

    def sql(self, statement: str) -> str:
        """``statement`` (``?`` placeholders, ``{json}`` and ``{json_type}``) in this archive's dialect."""
        return self.dialect.sql(statement)

    @property
    def connection(self) -> Any:
        """The connection (one thread at a time): for floor/surveillance.py's own tables and transactions."""
        return self._conn

    def head(self, table: str) -> Head:
        head = self._head(self._conn.cursor(), table)
        self._conn.commit()
        return head

    def _head(self, cur: Any, table: str) -> Head:
        cur.execute(self.dialect.sql('SELECT head_seq, head_hash FROM chains WHERE "table" = ?'), (table,))
        row = cur.fetchone()
        return Head(table, 0, GENESIS_HASH) if row is None else Head(table, int(row[0]), str(row[1]))

    def advance(self, table: str, site: str | None = None) -> tuple[Head, Alert | None]:
        """Walk ``table``'s chain forward from its stored head over the archived records, as far as they are
        contiguous and linked; store and return the new head, with what stopped it (a gap or a broken link),
        or None when nothing after the head is archived."""
        self.check_file()
        cur = self._conn.cursor()
        head = self._head(cur, table)
        seq, link = head.seq, head.hash
        stop: Alert | None = None
        while True:
            cur.execute(
                self.dialect.sql(
                    'SELECT seq, prev, hash FROM records WHERE "table" = ? AND seq > ? ORDER BY seq LIMIT ?'
                ),
                (table, seq, ADVANCE_STEP),
            )
            rows = cur.fetchall()
            for next_seq, prev, own in rows:
                if next_seq != seq + 1:
                    stop = Alert(
                        table, seq + 1, AlertKind.GAP, f"records {seq + 1}..{next_seq - 1} missing; ack held at {seq}"
                    )
                    break
                if prev != link:
                    stop = Alert(
                        table, next_seq, AlertKind.BROKEN_LINK, f"prev is not record {seq}'s hash; ack held at {seq}"
                    )
                    break
                seq, link = next_seq, own
            if stop is not None or len(rows) < ADVANCE_STEP:
                break
        if seq > head.seq:
            # One transaction: the head read, the walk and the upsert. RETURNING gives the stored head; nothing
            # comes back when another collector stored a further one meanwhile: read it then.
            cur.execute(self.dialect.sql(_UPSERT_HEAD), (table, site, seq, link, _now()))
            row = cur.fetchone()
            head = Head(table, int(row[0]), str(row[1])) if row is not None else self._head(cur, table)
        self._conn.commit()
        return head, stop

    # -- the tables' keys (shoe-floor enroll) --------------------------------------------------------------
    def table_keys(self, table: str | None = None) -> list[TableKey]:
        """Every key enrolled (of one ``table``, or all), per table in the order they were enrolled."""
        cur = self._conn.cursor()
        sql = f"SELECT {_KEY_COLUMNS} FROM table_keys"
        params: list[Any] = []
        if table is not None:
            sql += ' WHERE "table" = ?'
            params.append(table)
        cur.execute(self.dialect.sql(sql + ' ORDER BY "table", enrolled_at, key_id'), params)
        out = [TableKey(str(t), str(p), str(k), str(e), r, bool(v)) for t, p, k, e, r, v in cur.fetchall()]
        self._conn.commit()
        return out

    def enroll(
        self, table: str, public_key: str, *, statement: KeyStatement | None = None, replace: bool = False
    ) -> FeedItem:
        """Enroll ``public_key`` as ``table``'s current key and say so in the feed (one transaction).

        A table without a key: its first (``key_enrolled``). A table with a current key: only with a
        ``statement`` for this table and key signed by the current key (``key_rotated``; the old key is
        retired) or with ``replace`` (``key_replaced``: the operator's word for a lost or stolen key; the old
        one is revoked). A table whose key is revoked: only with ``replace``. Anything else is
        :class:`EnrollError`, nothing changed."""
        try:
            new_key = parse_public_key(public_key)
        except SigningError as exc:
            raise EnrollError(f"--public-key: {exc}") from None
        public_key, new_id = public_key.strip(), key_id(new_key)
        self.check_file()
        known = self.table_keys(table)
        current = next((k for k in known if k.current), None)
        if any(k.key_id == new_id for k in known):
            raise EnrollError(f"table {table}: key {new_id} is already enrolled ({_status_of(known, new_id)})")
        if statement is not None:
            if current is None:
                raise EnrollError(f"table {table}: no current key to have signed the statement (enroll with --replace)")
            if statement.table != table or statement.public_key != public_key:
                raise EnrollError(f"the statement is for table {statement.table}'s key {key_id(statement.public_key)},"
                                  f" not table {table}'s {new_id}")  # fmt: skip
            if not statement.verify(parse_public_key(current.public_key)):
                raise EnrollError(f"table {table}: the statement is not signed by the current key {current.key_id}")
            kind, detail = AlertKind.KEY_ROTATED, f"key {new_id} replaces {current.key_id}, by its statement"
        elif replace:
            if not known:
                raise EnrollError(f"table {table}: no key to replace (enroll without --replace)")
            was = current or known[-1]
            kind = AlertKind.KEY_REPLACED
            detail = f"key {new_id} enrolled by the operator in place of {was.key_id} (lost or stolen; it is revoked)"
        elif current is not None:
            raise EnrollError(
                f"table {table} has key {current.key_id}: rotate with --statement FILE (signed by that key)"
                " or, for a lost key, --revoke then --replace"
            )
        elif known:
            raise EnrollError(f"table {table}'s key {known[-1].key_id} is revoked: enroll a new one with --replace")
        else:
            kind, detail = AlertKind.KEY_ENROLLED, f"key {new_id} enrolled"
        now = _now()
        cur = self._conn.cursor()
        try:
            if current is not None:
                revoke = 1 if replace and statement is None else 0
                cur.execute(
                    self.dialect.sql(
                        'UPDATE table_keys SET retired_at = ?, revoked = ? WHERE "table" = ? AND key_id = ?'
                        " AND retired_at IS NULL AND revoked = 0"
                    ),
                    (now, revoke, table, current.key_id),
                )
                if cur.rowcount != 1:
                    raise EnrollError(f"table {table}: its keys changed meanwhile; nothing done, try again")
            cur.execute(
                self.dialect.sql(f"INSERT INTO table_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, NULL, 0)"),
                (table, public_key, new_id, now),
            )
            (item,) = self.insert_alerts(cur, [self._key_alert(cur, table, kind, detail, new_id)])
            self._conn.commit()
        except BaseException as exc:
            self._conn.rollback()
            if _is_unique_violation(exc):
                raise EnrollError(f"table {table}: its keys changed meanwhile; nothing done, try again") from None
            raise
        return item

    def revoke(self, table: str) -> FeedItem:
        """Revoke ``table``'s current key: nothing of the table is admitted until a key is enrolled with
        ``replace``. Records archived under it stay (and keep verifying). :class:`EnrollError` when the table
        has no current key."""
        self.check_file()
        current = next((k for k in self.table_keys(table) if k.current), None)
        if current is None:
            raise EnrollError(f"table {table} has no current key to revoke")
        cur = self._conn.cursor()
        try:
            cur.execute(
                self.dialect.sql(
                    'UPDATE table_keys SET retired_at = ?, revoked = 1 WHERE "table" = ? AND key_id = ?'
                    " AND retired_at IS NULL AND revoked = 0"
                ),
                (_now(), table, current.key_id),
            )
            if cur.rowcount != 1:
                raise EnrollError(f"table {table}: its keys changed meanwhile; nothing done, try again")
            detail = f"key {current.key_id} revoked: nothing of the table is archived until a new key is enrolled"
            (item,) = self.insert_alerts(cur, [self._key_alert(cur, table, AlertKind.KEY_REVOKED, detail, None)])
            self._conn.commit()
        except BaseException:
            self._conn.rollback()
            raise
        return item

    def _key_alert(self, cur: Any, table: str, kind: str, detail: str, new_id: str | None) -> Alert:
        """An alert for a change of keys, with the table's site as its chain knows it (then a collector's sweep
        publishes it; a table never archived yet has no site: the alert is in the feed only)."""
        cur.execute(self.dialect.sql('SELECT site FROM chains WHERE "table" = ?'), (table,))
        row = cur.fetchone()
        site = None if row is None or row[0] is None else str(row[0])
        return Alert(table, None, kind, detail, site, extra={} if new_id is None else {"key_id": new_id})

    # -- reading ------------------------------------------------------------------------------------------
    def tables(self) -> list[str]:
        cur = self._conn.cursor()
        cur.execute('SELECT DISTINCT "table" FROM records ORDER BY "table"')
        out = [str(r[0]) for r in cur.fetchall()]
        self._conn.commit()
        return out

    def record(self, table: str, seq: int | None) -> dict[str, Any] | None:
        """One archived record as its JSON dict (what an alert names), or None."""
        if seq is None:
            return None
        cur = self._conn.cursor()
        cur.execute(
            self.dialect.sql(
                'SELECT "table", seq, kind, at, session, number, cause, body, prev, hash FROM records'
                ' WHERE "table" = ? AND seq = ?'
            ),
            (table, seq),
        )
        row = cur.fetchone()
        self._conn.commit()
        if row is None:
            return None
        body = json.loads(row[7]) if isinstance(row[7], str | bytes) else row[7]
        return TableRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], body, row[8], row[9]).to_dict()

    def records(self, table: str) -> Iterator[TableRecord]:
        """Every archived record of ``table`` in seq order, as it was received."""
        cur = self._conn.cursor()
        cur.execute(
            self.dialect.sql(
                'SELECT "table", seq, kind, at, session, number, cause, body, prev, hash, sig FROM records'
                ' WHERE "table" = ? ORDER BY seq'
            ),
            (table,),
        )
        for row in cur.fetchall():
            body = json.loads(row[7]) if isinstance(row[7], str | bytes) else row[7]
            yield TableRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], body, row[8], row[9], sig=row[10])
        self._conn.commit()

    def coups(self, table: str | None = None, last: int | None = None) -> list[dict[str, Any]]:
        """Coups in ``history --json`` shape plus ``table``, per table oldest first; ``last`` = newest N per table."""
        out: list[dict[str, Any]] = []
        cur = self._conn.cursor()
        for name in [table] if table is not None else self.tables():
            sql = 'SELECT seq, at, body FROM records WHERE "table" = ? AND kind = ? ORDER BY seq DESC'
            params: list[Any] = [name, _COUP]
            if last is not None:
                sql += " LIMIT ?"
                params.append(last)
            cur.execute(self.dialect.sql(sql), params)
            for seq, at, body in reversed(cur.fetchall()):
                data = json.loads(_body_text(body))  # key order as the table stored it (jsonb reorders)
                out.append({"table": name, **shape_coup({**data, "ts": at, "record": seq})})
        self._conn.commit()
        return out

    def alerts(self, table: str | None = None) -> list[Alert]:
        """The feed's alerts, oldest first."""
        return [
            Alert(i.table, i.seq, i.kind, i.detail, i.site, i.record, i.extra)
            for i in reversed(self.feed(limit=None, table=table))
        ]

    def feed(self, limit: int | None = 100, table: str | None = None) -> list[FeedItem]:
        """The alert feed, newest first: the last ``limit`` alerts (None: all), of one ``table`` or all."""
        cur = self._conn.cursor()
        sql = f"SELECT {_FEED_COLUMNS} FROM alert_feed"
        params: list[Any] = []
        if table is not None:
            sql += ' WHERE "table" = ?'
            params.append(table)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        cur.execute(self.dialect.sql(sql), params)
        out = [_feed_item(row) for row in cur.fetchall()]
        self._conn.commit()
        return out

    # -- game recall (the pit page's table page and anyone answering a dispute) ----------------------------
    def _recall_sql(self, statement: str) -> str:
        shoe, coup = _SHOE_OF[self.dialect.name], _COUP_OF[self.dialect.name]
        return self.dialect.sql(statement.replace("{shoe}", shoe).replace("{coup}", coup))

    def _coup_rows(self, sql: str, params: Sequence[Any], table: str) -> list[dict[str, Any]]:
        cur = self._conn.cursor()
        cur.execute(self._recall_sql(sql), params)
        rows = cur.fetchall()
        self._conn.commit()
        return [
            {"table": table, **shape_coup({**json.loads(_body_text(body)), "ts": at, "record": seq})}
            for seq, at, body in rows
        ]

    def shoes(self, table: str) -> list[int]:
        """The numbers of the shoes ``table`` has coups archived for, oldest first."""
        cur = self._conn.cursor()
        cur.execute(
            self._recall_sql(
                'SELECT DISTINCT {shoe} FROM records WHERE "table" = ? AND kind = ? AND {shoe} IS NOT NULL'
            ),
            (table, _COUP),
        )
        out = sorted(int(r[0]) for r in cur.fetchall())
        self._conn.commit()
        return out

    def shoe_coups(self, table: str, shoe: int) -> list[dict[str, Any]]:
        """Every coup record of one shoe (voids and set-aside cards included) in ``history --json`` shape plus
        ``table``, in the order they were dealt."""
        return self._coup_rows(
            'SELECT seq, at, body FROM records WHERE "table" = ? AND kind = ? AND {shoe} = ? ORDER BY seq',
            (table, _COUP, shoe),
            table,
        )

    def recall(self, table: str, shoe: int, coup: int) -> dict[str, Any] | None:
        """Coup ``coup`` of shoe ``shoe`` as it was settled: the declared record, or, when the coup number was
        only ever voided, the last void; None when the archive holds no such coup. ``voids`` counts the voided
        deals of that number (a void and a re-deal keep the coup's number); ``hash`` is the coup record's own
        (``record`` its seq) and ``money`` what a dispute needs of the coup's wagers (:meth:`coup_money`)."""
        rows = self._coup_rows(
            'SELECT seq, at, body FROM records WHERE "table" = ? AND kind = ? AND {shoe} = ? AND {coup} = ?'
            " ORDER BY seq",
            (table, _COUP, shoe, coup),
            table,
        )
        if not rows:
            return None
        declared = [r for r in rows if r["declared"]]
        found = declared[-1] if declared else rows[-1]
        return {
            **found,
            "voids": sum(1 for r in rows if r["void"]),
            "hash": self._hash_of(table, int(found["record"])),
            "money": self.coup_money(table, shoe, coup, int(found["record"])),
        }

    def _hash_of(self, table: str, seq: int) -> str | None:
        cur = self._conn.cursor()
        cur.execute(self.dialect.sql('SELECT hash FROM records WHERE "table" = ? AND seq = ?'), (table, seq))
        row = cur.fetchone()
        self._conn.commit()
        return None if row is None else str(row[0])

    def coup_money(self, table: str, shoe: int, coup: int, seq: int) -> list[dict[str, Any]]:
        """The money records of one coup, in journal order, each ``{"kind", "seq", "at", "hash", "body"}``: its
        wagers (locked after the table's previous coup record), their settlements, mispays, past-posts, pulled
        and refused bets (those of this shoe and coup), and the commission boxes that closed right after it
        (``seq`` is the coup record's; the records read lie between the coup records before and after it)."""
        cur = self._conn.cursor()
        cur.execute(
            self.dialect.sql('SELECT max(seq) FROM records WHERE "table" = ? AND kind = ? AND seq < ?'),
            (table, _COUP, seq),
        )
        row = cur.fetchone()
        before = 0 if row is None or row[0] is None else int(row[0])
        cur.execute(
            self.dialect.sql('SELECT min(seq) FROM records WHERE "table" = ? AND kind IN (?, ?) AND seq > ?'),
            (table, _COUP, _SHOE, seq),
        )
        row = cur.fetchone()
        after = None if row is None or row[0] is None else int(row[0])
        kinds = tuple(k.value for k in _MONEY_KINDS)
        sql = (
            f'SELECT seq, kind, at, hash, body FROM records WHERE "table" = ? AND seq > ?'
            f" AND kind IN ({', '.join('?' for _ in kinds)})"
        )
        params: list[Any] = [table, before, *kinds]
        if after is not None:
            sql += " AND seq < ?"
            params.append(after)
        cur.execute(self.dialect.sql(sql + " ORDER BY seq LIMIT 2000"), params)
        out = []
        for r_seq, kind, at, digest, body in cur.fetchall():
            data = json.loads(_body_text(body))
            if not isinstance(data, dict) or data.get("shoe") != shoe:
                continue
            if kind != RecordKind.COMMISSION and data.get("coup") != coup:
                continue
            out.append({"kind": str(kind), "seq": int(r_seq), "at": str(at), "hash": str(digest), "body": data})
        self._conn.commit()
        return out

    def shoe_records(self, table: str, shoe: int) -> list[tuple[str, dict[str, Any]]]:
        """``(kind, body)`` of every record of one shoe, from its start record to the next shoe's, in journal
        order: what :func:`controller.game.edges.shoe_edges` reads to recompute the edge of every wager."""
        cur = self._conn.cursor()
        cur.execute(
            self._recall_sql('SELECT min(seq) FROM records WHERE "table" = ? AND kind = ? AND {shoe} = ?'),
            (table, _SHOE, shoe),
        )
        row = cur.fetchone()
        start = None if row is None else row[0]
        if start is None:
            self._conn.commit()
            return []
        cur.execute(
            self._recall_sql('SELECT min(seq) FROM records WHERE "table" = ? AND kind = ? AND {shoe} > ? AND seq > ?'),
            (table, _SHOE, shoe, start),
        )
        row = cur.fetchone()
        end = None if row is None else row[0]
        sql = 'SELECT kind, body FROM records WHERE "table" = ? AND seq >= ?'
        params: list[Any] = [table, start]
        if end is not None:
            sql += " AND seq < ?"
            params.append(end)
        cur.execute(self.dialect.sql(sql + " ORDER BY seq"), params)
        out = [(str(k), json.loads(_body_text(b))) for k, b in cur.fetchall()]
        self._conn.commit()
        return out

    def verify(self, table: str | None = None) -> list[TableReport]:
        """Per table (or only ``table``): the records, the contiguous linked head, the gaps, the broken links (a
        record whose stored fields do not hash to its ``hash``, or whose ``prev`` is not its predecessor's
        hash) and the forged ones (no signature, or one that does not verify with the key it names, which
        must be a key enrolled for the table, whatever its state now). ``problems`` says each in one line."""
        reports = []
        enrolled: dict[str, dict[str, Any]] = {}
        for k in self.table_keys(table):
            enrolled.setdefault(k.table, {})[k.key_id] = parse_public_key(k.public_key)
        cur = self._conn.cursor()
        for name in [table] if table is not None else self.tables():
            report = TableReport(name)
            keys = enrolled.get(name, {})
            cur.execute(
                self.dialect.sql(
                    "SELECT seq, kind, at, session, number, cause, body, prev, hash, sig, key_id FROM records"
                    ' WHERE "table" = ? ORDER BY seq'
                ),
                (name,),
            )
            expected, link, contiguous = 1, GENESIS_HASH, True
            for seq, kind, at, session, number, cause, body, prev, own, sig, signer in cur:
                report.records += 1
                report.last = seq
                if seq != expected:
                    report.gaps.append((expected, seq - 1))
                    report.problems.append(f"table {name}: records {expected}..{seq - 1} missing")
                    contiguous = False
                own_ok = record_hash(prev, seq, at, kind, session, number, cause, _body_text(body)) == own
                linked = seq == expected and prev == link
                if not own_ok or (seq == expected and not linked):
                    report.broken.append(seq)
                    why = "its fields do not hash to its hash" if not own_ok else "prev is not the record before's hash"
                    report.problems.append(f"table {name} seq {seq}: broken: {why}")
                    contiguous = False
                forged = _signature_problem(name, seq, own, sig, signer, keys)
                if forged is not None:
                    report.forged.append(seq)
                    report.problems.append(f"table {name} seq {seq}: forged: {forged}")
                    contiguous = False
                if contiguous:
                    report.head = seq
                expected, link = seq + 1, own
            reports.append(report)
        self._conn.commit()
        return reports


def _signature_problem(
    table: str, seq: int, own: str, sig: str | None, signer: str | None, keys: Mapping[str, Any]
) -> str | None:
    """What is wrong with an archived record's signature, or None."""
    if sig is None:
        return "no signature"
    if signer is None or signer not in keys:
        return f"signed by key {signer or '?'}, not a key enrolled for table {table}"
    if not verify(keys[signer], record_message(table, seq, own), sig):
        return f"the signature does not verify with key {signer}"
    return None


def _status_of(keys: Sequence[TableKey], key: str) -> str:
    return next(k.status() for k in keys if k.key_id == key)


def _is_unique_violation(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.IntegrityError):
        return True
    return type(exc).__name__ == "UniqueViolation"


def _check_storable(record: TableRecord) -> None:
    """Refuse what neither database can hold, before it is sent (PostgreSQL refuses a NUL in text and jsonb
    with an error that would abort the whole batch): a NUL or a lone surrogate in any string, an integer
    outside 64 bits, a number that is not finite, a body nested past the admission's depth. The body's
    canonical text says when the full walk is needed (an escape, a surrogate, a 19-digit run): rarely."""
    for name in ("table", "kind", "at", "prev", "hash", "sig"):
        value = getattr(record, name)
        if (value is not None or name != "sig") and (not isinstance(value, str) or _SUSPECT_TEXT.search(value)):
            raise UnstorableRecord(record, f"field {name} is not text without NUL or a lone surrogate")
    try:
        text = canonical_json(record.body)
        if "\\u" in text or _SUSPECT_TEXT.search(text) is not None or _LONG_RUN.search(text) is not None:
            check_value(dict(record.body), MAX_DEPTH)
        check_value([record.seq, record.session, record.number, record.cause])
    except (AdmissionError, ValueError, TypeError, RecursionError) as exc:
        raise UnstorableRecord(record, str(exc) or type(exc).__name__) from None


#: What no stored text may hold (NUL, a surrogate), and a digit run long enough to be past 64 bits.
_SUSPECT_TEXT = re.compile("[\x00\ud800-\udfff]")
_LONG_RUN = re.compile("[0-9]{19}")


def _json_or_none(value: Any) -> Any:
    """A stored JSON column as Python (psycopg decodes jsonb itself, SQLite hands back text)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url
