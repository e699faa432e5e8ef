"""Opening a journal file: the refusals at open (one line naming the file), read-only beside a writer, WAL and
the schema version, and the on-disk format pinned byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.journal import (
    SCHEMA_VERSION,
    Journal,
    JournalError,
    JournalFault,
)
from tests.journal.helpers import assert_one_line, build, coup_body, raw


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
