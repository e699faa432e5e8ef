"""Opening a journal file: the refusals at open (one line naming the file), read-only beside a writer, WAL and
the schema version, and the on-disk format pinned byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.journal import (
    GENESIS_HASH,
    SCHEMA_VERSION,
    Journal,
    JournalError,
    JournalFault,
    PendingInput,
    record_hash,
)
from floor_protocol.ack import Ack
from tests.journal.helpers import TS, assert_one_line, build, coup_body, raw


def test_open_refuses_random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.DAMAGED
    assert_one_line(info.value, path, "is damaged", "not a database", "surveillance")
    assert path.read_bytes() != b""  # left as it was, for surveillance


def test_open_refuses_a_truncated_journal(path: Path) -> None:
    build(path, 2000)
    with Journal.open(path, create=False) as j:  # fold the WAL into the main file
        j._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    for read_only in (False, True):
        with pytest.raises(JournalError) as info:
            Journal.open(path, read_only=read_only)
        assert info.value.fault is JournalFault.DAMAGED
        assert_one_line(info.value, path, "is damaged", "malformed")


def test_open_refuses_a_newer_schema(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.NEWER_SCHEMA
    assert_one_line(info.value, path, f"schema version {SCHEMA_VERSION + 1}", "upgrade")


def test_open_refuses_a_database_that_is_not_a_journal(path: Path) -> None:
    with raw(path) as db:
        db.execute("CREATE TABLE bets (amount INTEGER)")
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.NOT_A_JOURNAL
    assert_one_line(info.value, path, "not a shoe-controller journal", "bets")


def test_open_refuses_wrong_tables(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("DROP TABLE chain_head")
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.DAMAGED
    assert_one_line(info.value, path, "wrong tables", "chain_head missing")


def test_open_does_not_create_directories(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "journal.db"
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.MISSING
    assert_one_line(info.value, path, "does not exist", "does not create directories")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("kwargs", [{"create": False}, {"read_only": True}])
def test_open_without_create_refuses_a_missing_file(path: Path, kwargs: dict[str, bool]) -> None:
    with pytest.raises(JournalError) as info:
        Journal.open(path, **kwargs)
    assert info.value.fault is JournalFault.MISSING
    assert_one_line(info.value, path, "does not exist")
    assert not path.exists()


def test_read_only_refuses_to_write_and_sees_the_writers_commits(path: Path) -> None:
    with Journal.open(path) as writer:
        writer.append({"kind": "declare"}, derived=[coup_body(1, 1)])
        with Journal.open(path, read_only=True) as reader:
            with pytest.raises(JournalError) as info:
                reader.append({"kind": "declare"})
            assert info.value.fault is JournalFault.WRITE_FAILED
            writer.append({"kind": "declare"}, derived=[coup_body(1, 2)])
            assert [c["coup"] for c in reader.coups()] == [1, 2]
            assert reader.verify() == []


def test_journal_is_in_wal_mode_with_a_versioned_schema(path: Path) -> None:
    Journal.open(path).close()
    with raw(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


# ---------------------------------------------------------------------------------------------------------
# the on-disk format: what a journal file holds is pinned byte for byte (the package split changed nothing;
# a change here is a schema or record version's business, with a migration)

_DDL = [
    (
        "table",
        "chain_anchor",
        "CREATE TABLE chain_anchor (\n        one     INTEGER PRIMARY KEY CHECK (one = 1),\n"
        "        last_id INTEGER NOT NULL,\n        hash    TEXT    NOT NULL\n    )",
    ),
    (
        "table",
        "chain_head",
        "CREATE TABLE chain_head (\n        one     INTEGER PRIMARY KEY CHECK (one = 1),\n"
        "        last_id INTEGER NOT NULL,\n        hash    TEXT    NOT NULL\n    )",
    ),
    (
        "table",
        "floor_ack",
        "CREATE TABLE floor_ack ( one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, ts TEXT NOT NULL,"
        " archive TEXT, hash TEXT, sig TEXT)",
    ),
    (
        "table",
        "records",
        "CREATE TABLE records (\n        id        INTEGER PRIMARY KEY AUTOINCREMENT,\n"
        "        ts        TEXT    NOT NULL,\n        kind      TEXT    NOT NULL,\n        session   INTEGER,\n"
        "        number    INTEGER,\n        cause     INTEGER REFERENCES records(id),\n"
        "        body      TEXT    NOT NULL,\n        prev_hash TEXT    NOT NULL,\n"
        "        hash      TEXT    NOT NULL\n    )",
    ),
    (
        "index",
        "records_event",
        "CREATE UNIQUE INDEX records_event ON records(session, number)\n"
        "        WHERE kind = 'input' AND session IS NOT NULL AND number IS NOT NULL",
    ),
    ("index", "records_kind", "CREATE INDEX records_kind ON records(kind, id)"),
    ("table", "sqlite_sequence", "CREATE TABLE sqlite_sequence(name,seq)"),
]

#: sha256 of every row of every table of the journal :func:`_every_kind_of_write` leaves (as JSON), as the
#: single-module journal (before the package split) wrote it.
_ROWS_DIGEST = "b6eb859f1cd13d041b5b3f5c689948c89cdfa7db10623dfa0f206138c0e744f5"


def _every_kind_of_write(path: Path) -> None:
    """One of each write the journal makes, at a fixed stamp: inputs with and without a key, derived records
    of several kinds, a group commit, a note and the floor's ack."""
    with Journal.open(path) as j:
        j.append({"kind": "card", "card": "2H"}, session=7, number=1, ts=TS)
        j.append({"kind": "new_shoe"}, ts=TS, derived=[("shoe", {"event": "start", "shoe": 1})])
        j.append({"kind": "card", "card": "3S"}, session=7, number=2, ts=TS, derived=[coup_body(1, 1)])
        j.append_many(
            [
                PendingInput({"kind": "link", "up": False}, ts=TS),
                PendingInput({"kind": "card", "card": "4D"}, session=7, number=3, ts=TS, derived=[("alarm", {"a": 1})]),
            ]
        )
        j.note({"note": "hello", "x": 1.5}, ts=TS)
        pinned_key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # signatures are deterministic
        ack = Ack.signed(pinned_key, "archive-pinned-0001", "t1", 3, j.record_hash(3) or "")
        j.store_floor_ack(ack, ts=TS)


def test_the_on_disk_format_is_pinned(path: Path) -> None:
    _every_kind_of_write(path)
    with raw(path) as db:
        ddl = [tuple(row) for row in db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")]
        assert ddl == _DDL
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        rows = {
            table: [list(row) for row in db.execute(f"SELECT * FROM {table} ORDER BY 1")]
            for table in ("records", "chain_head", "chain_anchor", "floor_ack")
        }
    assert rows["records"][0] == [
        1,
        TS,
        "input",
        7,
        1,
        None,
        '{"card":"2H","kind":"card"}',
        GENESIS_HASH,
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, None, '{"card":"2H","kind":"card"}'),
    ]
    assert [r[2] for r in rows["records"]] == [
        "input",
        "input",
        "shoe",
        "input",
        "coup",
        "input",
        "input",
        "alarm",
        "note",
    ]
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    assert digest == _ROWS_DIGEST
