"""The two databases the archive runs on, and the few ways they differ (PostgreSQL through psycopg 3, SQLite).

Every statement of the archive is written once, with ``?`` placeholders; :meth:`Dialect.sql` puts in the
driver's placeholder (``?`` or ``%s``), the body column's type (``jsonb`` or ``TEXT``), how a JSON parameter is
written into it, and (:meth:`Dialect.recall`) how a coup's shoe and number are read out of a body. Beside them:
reading an archive URL, and the stored values as Python (psycopg decodes jsonb itself, SQLite hands back text).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from commandline.times import utc_stamp
from controller.game.records import canonical_json
from floor.archive.errors import ArchiveError


class Connection(Protocol):
    """What the archive uses of a DB-API connection (sqlite3's or psycopg's)."""

    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str
    json_type: str
    json_param: str  # how a JSON text parameter is written (``?`` or ``CAST(? AS jsonb)``)
    json_staged: str  # how the staging table's body text is written into records.body
    staging: str  # how the batch's staging table is made (once per connection), emptied at each commit
    shoe_of: str  # a coup or shoe record's ``shoe``, read out of its body (game recall's index)
    coup_of: str  # a coup record's ``coup``, likewise

    def sql(self, statement: str) -> str:
        statement = statement.replace("{json_type}", self.json_type).replace("{json}", self.json_param)
        return statement.replace("{json_staged}", self.json_staged).replace("?", self.placeholder)

    def recall(self, statement: str) -> str:
        """:meth:`sql`, with ``{shoe}`` and ``{coup}`` read out of the body (as the recall index does)."""
        return self.sql(statement.replace("{shoe}", self.shoe_of).replace("{coup}", self.coup_of))


_STAGING_COLUMNS = (
    '("table" TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL, session BIGINT,'
    " number BIGINT, cause BIGINT, body TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL,"
    " received_at TEXT NOT NULL, sig TEXT, key_id TEXT)"
)
SQLITE = Dialect(
    "sqlite",
    "?",
    "TEXT",
    "?",
    "s.body",
    f"CREATE TEMP TABLE IF NOT EXISTS staging {_STAGING_COLUMNS}",
    "json_extract(body, '$.shoe')",
    "json_extract(body, '$.coup')",
)
POSTGRES = Dialect(
    "postgresql",
    "%s",
    "jsonb",
    "CAST(? AS jsonb)",
    "CAST(s.body AS jsonb)",
    # Emptied by PostgreSQL at each commit (a truncate: no dead rows in a table autovacuum never visits).
    f"CREATE TEMP TABLE IF NOT EXISTS staging {_STAGING_COLUMNS} ON COMMIT DELETE ROWS",
    "((body->>'shoe')::bigint)",
    "((body->>'coup')::bigint)",
)


def parse_url(url: str) -> tuple[Dialect, str]:
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


def redacted(url: str) -> str:
    """``url`` with its password, if any, as ``***`` (what an error line may show)."""
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def now() -> str:
    """The time now as the archive stamps it (UTC, milliseconds, ``Z``)."""
    return utc_stamp()


def body_text(body: Any) -> str:
    """A stored body as its canonical JSON (psycopg hands jsonb back decoded, SQLite as text)."""
    return canonical_json(json.loads(body) if isinstance(body, str | bytes) else body)


def json_or_none(value: Any) -> Any:
    """A stored JSON column as Python (psycopg decodes jsonb itself, SQLite hands back text)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def is_unique_violation(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.IntegrityError):
        return True
    return type(exc).__name__ == "UniqueViolation"
