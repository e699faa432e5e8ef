"""The floor's ack beside the chain: stored and read back, the floor's word even when lower, never a record,
created on first use (the schema's version unchanged), refused when it is not a record id."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import SCHEMA_VERSION, Journal, JournalError, JournalFault
from tests.journal.helpers import TS, build, raw


def test_the_floor_ack_is_stored_beside_the_chain_not_in_it(path: Path) -> None:
    build(path, 8)
    with Journal.open(path) as j:
        head, count = j.head(), j.count()
        assert j.floor_ack() is None
        j.store_floor_ack(5, ts=TS)
        assert j.floor_ack() == 5
        j.store_floor_ack(3)  # an archive that lost records asks for them again: the floor's word stands
        assert j.floor_ack() == 3
        assert (j.head(), j.count()) == (head, count)  # not a record: nothing to publish or acknowledge
        assert j.verify() == []
    with raw(path) as db:
        assert db.execute("SELECT one, seq FROM floor_ack").fetchall() == [(1, 3)]  # one row
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with Journal.open(path, read_only=True) as reader:  # the floor link's own connection at start-up
        assert reader.floor_ack() == 3


def test_a_floor_ack_beyond_the_chain_head_reads_as_the_head(path: Path) -> None:
    build(path, 4)
    with Journal.open(path) as j:
        j.store_floor_ack(10_000)
        assert j.floor_ack() == j.head()[0] == 6  # 4 cards, a declare and its coup


@pytest.mark.parametrize("seq", [-1, True, 2.0, "7"])
def test_an_ack_that_is_not_a_record_id_is_refused_and_nothing_is_stored(path: Path, seq: object) -> None:
    with Journal.open(path) as j:
        with pytest.raises(ValueError, match="record id"):
            j.store_floor_ack(seq)  # type: ignore[arg-type]
        assert j.floor_ack() is None
    with raw(path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'floor_ack'").fetchall() == []


def test_a_read_only_journal_cannot_store_an_ack(path: Path) -> None:
    build(path, 2)
    with Journal.open(path, read_only=True) as reader:
        with pytest.raises(JournalError) as info:
            reader.store_floor_ack(1)
        assert info.value.fault is JournalFault.WRITE_FAILED
        assert reader.floor_ack() is None
