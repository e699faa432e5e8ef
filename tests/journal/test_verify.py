"""verify: an intact chain is clean, and each kind of damage is named (altered, removed, reordered, a tail cut
off, a last record replaced, a derived record moved). Real SQLite files edited by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import (
    GENESIS_HASH,
    Journal,
    canonical_json,
    record_hash,
)
from tests.journal.helpers import TS, build, raw


def test_an_intact_journal_verifies_clean(path: Path) -> None:
    build(path, 12)
    with Journal.open(path, read_only=True) as j:
        assert j.verify() == []
        head_id, head_hash = j.head()
        assert head_id == j.count() == 12 + 3 + 3  # cards, declares, coups
        records = list(j.records())
        assert records[0].prev_hash == GENESIS_HASH
        assert head_hash == records[-1].hash


@pytest.mark.parametrize(
    ("sql", "record"),
    [
        ('UPDATE records SET body = \'{"card":"KH","kind":"card"}\' WHERE id = 3', 3),
        ("UPDATE records SET ts = '2025-03-01T21:00:00+00:00' WHERE id = 2", 2),
        ("UPDATE records SET kind = 'note' WHERE id = 4", 4),
        ("UPDATE records SET number = 99 WHERE id = 1", 1),
    ],
    ids=["body", "ts", "kind", "number"],
)
def test_verify_detects_an_altered_record(path: Path, sql: str, record: int) -> None:
    build(path)
    with raw(path) as db:
        db.execute(sql)
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems
    assert any(p.startswith(f"record {record}: altered") for p in problems), problems


def test_verify_detects_a_removed_middle_record(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("DELETE FROM records WHERE id = 3")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == ["record 4: record 3 removed (ids jump from 2 to 4)"]


def test_verify_detects_a_removed_middle_record_with_ids_renumbered(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("DELETE FROM records WHERE id = 3")
        db.execute("UPDATE records SET id = id - 1 WHERE id > 3")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert any("record 3: chain broken" in p for p in problems), problems


def test_verify_detects_a_removed_last_record(path: Path) -> None:
    build(path)
    with raw(path) as db:
        last = db.execute("SELECT max(id) FROM records").fetchone()[0]
        db.execute("DELETE FROM records WHERE id = ?", (last,))
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == [f"chain head: names record {last} but the last record is {last - 1} (tail removed)"]


def test_verify_detects_a_replaced_last_record(path: Path) -> None:
    """The last record removed and a new one chained in its place by the journal's own hash rule."""
    build(path)
    with raw(path) as db:
        last, prev = db.execute("SELECT id, prev_hash FROM records ORDER BY id DESC LIMIT 1").fetchone()
        body = canonical_json({"kind": "card", "card": "AS"})
        h = record_hash(prev, last, TS, "input", 7, 99, None, body)
        db.execute("UPDATE records SET body = ?, number = 99, hash = ? WHERE id = ?", (body, h, last))
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == [f"chain head: hash does not match record {last} (last record replaced)"]


def test_verify_detects_two_records_swapped(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("UPDATE records SET id = -1 WHERE id = 2")
        db.execute("UPDATE records SET id = 2 WHERE id = 3")
        db.execute("UPDATE records SET id = 3 WHERE id = -1")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert any(p.startswith("record 2: chain broken") for p in problems), problems
    assert any(p.startswith("record 3: chain broken") for p in problems), problems


def test_verify_detects_two_bodies_swapped(path: Path) -> None:
    build(path)
    with raw(path) as db:
        b2, b3 = (db.execute("SELECT body FROM records WHERE id = ?", (i,)).fetchone()[0] for i in (2, 3))
        assert b2 != b3
        db.execute("UPDATE records SET body = ? WHERE id = 2", (b3,))
        db.execute("UPDATE records SET body = ? WHERE id = 3", (b2,))
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == [
        "record 2: altered, its hash does not match its contents",
        "record 3: altered, its hash does not match its contents",
    ]


def test_verify_detects_a_coup_moved_to_another_input(path: Path) -> None:
    build(path, 8)
    with raw(path) as db:
        db.execute("UPDATE records SET cause = 1 WHERE kind = 'coup' AND id = (SELECT max(id) FROM records)")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert any("derived from input 1" in p for p in problems), problems
