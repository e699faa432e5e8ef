"""The shared connection's write transaction: committed whole or not at all, and an SQLite failure said as
a typed journal fault naming what failed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.journal import JournalError, JournalFault
from controller.journal.schema import connect
from controller.journal.store import Store


def store(path: Path) -> Store:
    return connect(str(path), create=True, read_only=False, durable=True)


def count(s: Store) -> int:
    return int(s.conn.execute("SELECT count(*) FROM records").fetchone()[0])


def insert(s: Store, rid: int) -> None:
    s.conn.execute(
        "INSERT INTO records (id, ts, kind, body, prev_hash, hash) VALUES (?, 't', 'note', '{}', 'p', 'h')", (rid,)
    )


def write_twice(s: Store, rid: int, failure: str | None = None) -> None:
    """Two rows with the same id in one transaction: the second one is refused by the database."""
    with s.transaction(failure):
        insert(s, rid)
        insert(s, rid)


def fail_midway(s: Store) -> None:
    with s.transaction():
        insert(s, 3)
        raise RuntimeError("the body failed")


def test_a_transaction_commits_whole_or_rolls_back_whole(tmp_path: Path) -> None:
    s = store(tmp_path / "j.db")
    with s.transaction():
        insert(s, 1)
        insert(s, 2)
    assert count(s) == 2 and not s.conn.in_transaction
    with pytest.raises(RuntimeError):
        fail_midway(s)
    assert count(s) == 2 and not s.conn.in_transaction
    with s.transaction() as conn:  # a body may roll back itself (nothing to commit)
        insert(s, 4)
        conn.execute("ROLLBACK")
    assert count(s) == 2
    assert s.tables() == {"records", "chain_head", "chain_anchor"}
    s.conn.close()


def test_an_sqlite_failure_becomes_a_journal_fault_naming_what_failed(tmp_path: Path) -> None:
    s = store(tmp_path / "j.db")
    with pytest.raises(JournalError) as info:
        write_twice(s, 1, "commit failed, nothing written")
    assert info.value.fault is JournalFault.WRITE_FAILED
    assert str(info.value).startswith(f"journal {s.path}: commit failed, nothing written: UNIQUE constraint")
    assert count(s) == 0 and not s.conn.in_transaction
    with pytest.raises(sqlite3.IntegrityError):  # without a failure text: SQLite's own error
        write_twice(s, 1)
    assert count(s) == 0
    s.conn.close()
