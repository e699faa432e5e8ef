"""The journal on a disk that really fills, and under a file deleted or replaced while open (real SQLite files on a
real tmpfs). Nothing that returned from a commit may ever be lost; a commit that cannot be made raises a typed fault
and writes nothing."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import Journal, JournalError, JournalFault
from tests.smallfs import SmallFs, small_fs


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[SmallFs]:
    with small_fs(tmp_path, "24m") as fs:
        yield fs


def card(n: int, pad: int = 0) -> dict[str, object]:
    return {"kind": "card", "card": "AS", "n": n, "pad": "x" * pad}


def append_until_refused(j: Journal, first: int, *, pad: int, checkpoint_every: int = 0) -> JournalError:
    """Append cards numbered from ``first`` until a commit is refused; the error's ``args[1]`` is the refused
    number. With ``checkpoint_every``, force a checkpoint that often (a failing one is counted in ``args[2]``)."""
    n = first
    checkpoints_failed = 0
    while True:
        try:
            j.append(card(n, pad=pad), session=1, number=n)
        except JournalError as exc:
            exc.args = (exc.args[0], n, checkpoints_failed)
            return exc
        if checkpoint_every and n % checkpoint_every == 0:
            try:
                j._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # a checkpoint into a filling disk
            except sqlite3.OperationalError:
                checkpoints_failed += 1
        n += 1


def numbers(path: Path) -> list[int]:
    with Journal.open(path, read_only=True) as j:
        assert j.verify() == []
        return [body["n"] for _id, body in j.inputs() if body.get("kind") == "card"]


@pytest.mark.e2e
def test_a_commit_on_a_full_disk_raises_full_writes_nothing_and_the_next_one_after_space_returns_succeeds(
    fs: SmallFs,
) -> None:
    path = fs.root / "journal.db"
    with Journal.open(path) as j:
        for n in range(1, 21):
            j.append(card(n), session=1, number=n)
        fs.fill()
        err = append_until_refused(j, 21, pad=3000)  # the WAL may still hold a page or two
        assert err.fault is JournalFault.FULL
        failed = int(err.args[1])
        fs.free()
        assert j.append(card(failed), session=1, number=failed) is not None
    assert numbers(path) == list(range(1, failed + 1))


@pytest.mark.e2e
def test_headroom_no_commit_is_attempted_below_min_free(fs: SmallFs) -> None:
    path = fs.root / "journal.db"
    with Journal.open_for_table(path, min_free=4 * 1024 * 1024) as j:
        j.append(card(1), session=1, number=1)
        (fs.root / "big").write_bytes(b"\0" * (fs.free_bytes() - 2 * 1024 * 1024))
        with pytest.raises(JournalError) as err:
            j.append(card(2), session=1, number=2)
        assert err.value.fault is JournalFault.FULL
        assert "in hand" in str(err.value)
        (fs.root / "big").unlink()
        j.append(card(2), session=1, number=2)
    assert numbers(path) == [1, 2]


@pytest.mark.e2e
def test_a_full_disk_during_commits_and_checkpoints_loses_nothing_committed(fs: SmallFs) -> None:
    """Commits until SQLite reports the disk full, checkpoints forced on the full disk, a close that cannot
    checkpoint: every commit that returned is there after the space returns, and the chain is intact."""
    path = fs.root / "journal.db"
    j = Journal.open(path)
    (fs.root / "big").write_bytes(b"\0" * (fs.free_bytes() - 3 * 1024 * 1024))
    err = append_until_refused(j, 1, pad=2000, checkpoint_every=25)
    assert err.fault is JournalFault.FULL
    committed = list(range(1, int(err.args[1])))
    assert len(committed) > 100
    assert int(err.args[2]) > 0  # the case this test is for did happen: checkpoints met the full disk
    fs.fill()
    with contextlib.suppress(sqlite3.Error):  # either way, nothing committed may be lost
        j._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    j.close()
    fs.free()
    (fs.root / "big").unlink()
    assert numbers(path) == committed


@pytest.mark.e2e
def test_start_on_a_full_disk_reads_what_is_there_and_writes_once_space_returns(fs: SmallFs) -> None:
    path = fs.root / "journal.db"
    with Journal.open(path) as j:
        for n in range(1, 11):
            j.append(card(n), session=1, number=n)
    fs.fill()
    with pytest.raises(JournalError):
        Journal.open(path)  # what the daemon did before: exit 1, in a loop
    j = Journal.open_for_table(path)
    try:
        assert j.degraded is not None and j.degraded.fault is JournalFault.FULL
        assert [b["n"] for _id, b in j.inputs()] == list(range(1, 11))
        assert j.last_event() == (1, 10)
        with pytest.raises(JournalError) as err:
            j.append(card(11), session=1, number=11)
        assert err.value.fault is JournalFault.FULL
        fs.free()
        j.append(card(11), session=1, number=11)
        assert j.degraded is None
        assert j.append(card(5), session=1, number=5) is None  # dedup works on the reopened file
    finally:
        j.close()
    assert numbers(path) == list(range(1, 12))


@pytest.mark.e2e
def test_start_on_a_full_disk_without_a_journal_yet_creates_it_once_space_returns(fs: SmallFs) -> None:
    path = fs.root / "journal.db"
    fs.fill()
    with Journal.open_for_table(path) as j:
        assert j.degraded is not None
        assert list(j.inputs()) == [] and j.last_event() is None and j.last_shoe_start() is None
        with pytest.raises(JournalError) as err:
            j.append(card(1), session=1, number=1)
        assert err.value.fault is JournalFault.FULL
        fs.free()
        j.append(card(1), session=1, number=1)
    assert numbers(path) == [1]


def test_other_faults_at_start_still_raise(tmp_path: Path) -> None:
    bad = tmp_path / "journal.db"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(JournalError) as err:
        Journal.open_for_table(bad)
    assert err.value.fault is JournalFault.DAMAGED


def test_a_deleted_journal_is_noticed_before_the_commit_and_restored_from_the_open_copy(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal.open_for_table(path, min_free=0) as j:
        for n in range(1, 31):
            j.append(card(n), session=1, number=n)
        for name in ("journal.db", "journal.db-wal", "journal.db-shm"):
            (tmp_path / name).unlink()
        with pytest.raises(JournalError) as err:
            j.append(card(31), session=1, number=31)
        assert err.value.fault is JournalFault.DELETED
        assert not path.exists()  # the first try only reports it: the table shows the alarm first
        j.append(card(31), session=1, number=31)  # the retry restores the file, then commits
        j.append(card(32), session=1, number=32)
        assert j.append(card(3), session=1, number=3) is None
    assert numbers(path) == list(range(1, 33))
    with Journal.open(path, read_only=True) as r:
        notes = [rec.data() for rec in r.records() if rec.kind == "note"]
    assert [x["note"] for x in notes] == ["journal_restored"]


def test_a_deleted_journal_with_its_wal_left_behind_is_restored_without_reading_the_stale_wal(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal.open_for_table(path, min_free=0) as j:
        for n in range(1, 31):
            j.append(card(n), session=1, number=n)
        path.unlink()  # rm journal.db, its -wal and -shm stay
        with pytest.raises(JournalError):
            j.append(card(31), session=1, number=31)
        j.append(card(31), session=1, number=31)
    assert numbers(path) == list(range(1, 32))


def test_a_replaced_journal_is_never_written_and_every_record_is_copied_aside(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    other = tmp_path / "other.db"
    with Journal.open(other) as o:
        o.append({"kind": "card", "card": "KH", "n": 999})
    other_bytes = other.read_bytes()
    with Journal.open_for_table(path, min_free=0) as j:
        for n in range(1, 21):
            j.append(card(n), session=1, number=n)
        os.replace(other, path)
        for _ in range(2):
            with pytest.raises(JournalError) as err:
                j.append(card(21), session=1, number=21)
            assert err.value.fault is JournalFault.REPLACED
        rescued = sorted(tmp_path.glob("journal.db.rescued-*"))
        assert len(rescued) == 1 and str(rescued[0]) in str(err.value)
        assert path.read_bytes() == other_bytes
    assert numbers(rescued[0]) == list(range(1, 21))


def test_a_replaced_journal_put_back_in_place_is_written_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    aside = tmp_path / "aside.db"
    with Journal.open_for_table(path, min_free=0) as j:
        j.append(card(1), session=1, number=1)
        os.rename(path, aside)
        path.write_bytes(b"")
        with pytest.raises(JournalError):
            j.append(card(2), session=1, number=2)
        os.replace(aside, path)
        j.append(card(2), session=1, number=2)
    assert numbers(path) == [1, 2]


def test_check_file_at_an_idle_table_restores_a_deleted_journal_without_a_card(tmp_path: Path) -> None:
    """The loop's idle tick: nobody deals, the file is deleted; the check notices, the next one puts it back."""
    path = tmp_path / "journal.db"
    with Journal.open_for_table(path, min_free=0) as j:
        for n in range(1, 11):
            j.append(card(n), session=1, number=n)
        head = j.head()
        j.check_file()  # all well: nothing raised, nothing written
        assert j.head() == head
        for name in ("journal.db", "journal.db-wal", "journal.db-shm"):
            (tmp_path / name).unlink()
        with pytest.raises(JournalError) as err:
            j.check_file()
        assert err.value.fault is JournalFault.DELETED
        assert not path.exists()
        j.check_file()  # the retry: restored from the open copy, and noted
        assert path.exists()
        with Journal.open(path, read_only=True) as r:
            assert numbers(path) == list(range(1, 11))
            assert [rec.data()["note"] for rec in r.records() if rec.kind == "note"] == ["journal_restored"]
            assert r.verify() == []
        j.append(card(11), session=1, number=11)  # and the table writes to the restored file
    assert numbers(path) == list(range(1, 12))


def test_check_file_keeps_the_headroom_and_leaves_a_reader_alone(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal.open_for_table(path, min_free=0) as j:
        j.append(card(1), session=1, number=1)
        j.min_free = 2**62  # more than any disk holds
        with pytest.raises(JournalError) as err:
            j.check_file()
        assert err.value.fault is JournalFault.FULL and "in hand" in str(err.value)
        with Journal.open(path, read_only=True) as reader:
            path.unlink()
            reader.check_file()  # a reader (history, verify) writes nothing, so it guards nothing
