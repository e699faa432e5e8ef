"""The floor's ack beside the chain (issue 15): only a signed ack of this table naming the journal's own record
is believed; stored with its archive id, hash and signature; a lower ack of the same archive is never stored,
an ack of another archive is; a row an older shoe-controller wrote (no archive id) reads as no verified ack and
the table is migrated. Real SQLite files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from controller.game.records import GENESIS_HASH
from controller.journal import SCHEMA_VERSION, Journal, JournalError, JournalFault
from controller.journal.ack import LOG_EVERY, AckRefusals, refusal
from floor_protocol.ack import Ack
from floor_protocol.signing import generate_key
from tests.floor_link.floorside import TEST_FLOOR_KEY, signed_ack
from tests.journal.helpers import TS, build, raw

FLOOR = TEST_FLOOR_KEY.public_key()


def judge(j: Journal, ack: Ack | None) -> str | None:
    return refusal(ack, j, table="t1", floor_key=FLOOR)


def test_a_verified_ack_is_stored_beside_the_chain_not_in_it(path: Path) -> None:
    build(path, 8)
    with Journal.open(path) as j:
        head, count = j.head(), j.count()
        assert j.floor_ack() is None and j.floor_ack_record() is None
        ack = signed_ack(j, 5)
        assert judge(j, ack) is None
        assert j.store_floor_ack(ack, ts=TS) is True
        assert j.floor_ack() == 5
        assert j.floor_ack_record("t1") == ack  # archive, seq, hash and sig kept
        assert (j.head(), j.count()) == (head, count)  # not a record: nothing to publish or acknowledge
        assert j.verify() == []
    with raw(path) as db:
        assert db.execute("SELECT one, seq, archive, hash, sig FROM floor_ack").fetchall() == [
            (1, 5, ack.archive, ack.hash, ack.sig)
        ]
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with Journal.open(path, read_only=True) as reader:  # the floor link's own connection at start-up
        assert reader.floor_ack_record("t1") == ack


def test_a_lower_ack_of_the_same_archive_is_never_stored_another_archives_is(path: Path) -> None:
    build(path, 8)
    with Journal.open(path) as j:
        assert j.store_floor_ack(signed_ack(j, 8))
        assert j.store_floor_ack(signed_ack(j, 3)) is False  # no news: the archive said 8 already
        assert j.store_floor_ack(signed_ack(j, 8)) is False
        assert j.floor_ack() == 8
        other = signed_ack(j, 2, archive="archive-new-0002")
        assert j.store_floor_ack(other) is True  # a new archive holds less: its word is the one now
        stored = j.floor_ack_record("t1")
        assert stored is not None and (stored.archive, stored.seq) == ("archive-new-0002", 2)


def test_only_this_tables_signed_ack_of_its_own_record_is_believed(path: Path) -> None:
    build(path, 8)
    with Journal.open(path) as j:
        good = signed_ack(j, 5)
        assert judge(j, good) is None
        assert judge(j, None) == "malformed"
        assert judge(j, signed_ack(j, 5, table="t2")) == "table"
        assert judge(j, signed_ack(j, 5, key=generate_key())) == "signature"
        assert judge(j, Ack(good.archive, "t1", 5, good.hash, signed_ack(j, 6).sig)) == "signature"
        assert judge(j, Ack.signed(TEST_FLOOR_KEY, good.archive, "t1", 5, j.record_hash(6) or "")) == "hash"
        assert judge(j, Ack.signed(TEST_FLOOR_KEY, good.archive, "t1", j.head()[0] + 1, "ab" * 32)) == "beyond_head"
        assert judge(j, Ack.signed(TEST_FLOOR_KEY, good.archive, "t1", 0, GENESIS_HASH)) is None
        assert judge(j, Ack.signed(TEST_FLOOR_KEY, good.archive, "t1", 0, good.hash)) == "hash"
        assert refusal(good, j, table="t1", floor_key=None) == "no_key"


def test_an_ack_of_a_pruned_record_is_not_believed_the_anchors_is(tmp_path: Path) -> None:
    from tests.journal.test_retention import build as build_shoes

    journal, _loop = build_shoes(tmp_path / "j.db", [40, 35, 1])
    with journal:
        plan = journal.prunable(older_than=__import__("datetime").datetime.now(__import__("datetime").UTC), ack=None,
                                floor=False)  # fmt: skip
        assert plan is not None
        journal.prune(plan[0], keep_from_ack=None)
        anchor, anchor_hash = journal.anchor()
        assert anchor > 2
        at_anchor = Ack.signed(TEST_FLOOR_KEY, "archive-test-0001", "t1", anchor, anchor_hash)
        assert judge(journal, at_anchor) is None
        assert judge(journal, Ack.signed(TEST_FLOOR_KEY, "archive-test-0001", "t1", anchor - 1, "ab" * 32)) == "pruned"
        assert judge(journal, Ack.signed(TEST_FLOOR_KEY, "archive-test-0001", "t1", 0, GENESIS_HASH)) is None


def test_an_old_rows_ack_reads_as_no_verified_ack_and_the_table_is_migrated(path: Path) -> None:
    build(path, 8)
    with raw(path) as db:  # what shoe-controller 0.2 wrote: seq only
        db.execute("CREATE TABLE floor_ack (one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL,"
                   " ts TEXT NOT NULL)")  # fmt: skip
        db.execute("INSERT INTO floor_ack VALUES (1, 8, ?)", (TS,))
    with Journal.open(path, read_only=True) as reader:
        assert reader.floor_ack() is None and reader.floor_ack_record() is None  # nothing to prune on
    with Journal.open(path) as j:
        assert j.floor_ack() is None
        assert j.store_floor_ack(signed_ack(j, 4)) is True  # an archive id now: stored though lower
        assert j.floor_ack() == 4
    with raw(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(floor_ack)")]
        assert columns == ["one", "seq", "ts", "archive", "hash", "sig"]


def test_a_stored_ack_beyond_the_chain_head_reads_as_none(path: Path) -> None:
    build(path, 4)
    with Journal.open(path) as j:
        j.store_floor_ack(Ack.signed(TEST_FLOOR_KEY, "archive-test-0001", "t1", 10_000, "ab" * 32))
        assert j.floor_ack() is None  # a journal restored from an older copy: that ack names records it lacks


@pytest.mark.parametrize("ack", [5, -1, True, "7", None])
def test_an_ack_that_is_not_a_signed_ack_is_refused_and_nothing_is_stored(path: Path, ack: object) -> None:
    with Journal.open(path) as j:
        with pytest.raises(ValueError, match="signed Ack"):
            j.store_floor_ack(ack)  # type: ignore[arg-type]
        assert j.floor_ack() is None
    with raw(path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'floor_ack'").fetchall() == []


def test_a_read_only_journal_cannot_store_an_ack(path: Path) -> None:
    build(path, 2)
    with Journal.open(path, read_only=True) as reader:
        with pytest.raises(JournalError) as info:
            reader.store_floor_ack(signed_ack(reader, 1))
        assert info.value.fault is JournalFault.WRITE_FAILED
        assert reader.floor_ack() is None


def test_refusals_are_counted_and_each_reason_logged_once_then_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    refusals = AckRefusals("table", clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="controller.journal.ack"):
        for _ in range(5):
            refusals.refuse("signature", None)
        refusals.refuse("hash", None)
        assert len(caplog.records) == 2
        now[0] = LOG_EVERY + 1
        refusals.refuse("signature", None)
        assert len(caplog.records) == 3 and "5 since" in caplog.records[-1].getMessage()
        for _ in range(3):
            now[0] += LOG_EVERY + 1
            refusals.refuse("no_key", None)
        assert len(caplog.records) == 4  # no key: said once
    assert dict(refusals.counts) == {"signature": 6, "hash": 1, "no_key": 3}


def test_journal_verify_says_which_archive_holds_the_journal_through_which_record(path: Path) -> None:
    from tests.console import run_main

    build(path, 8)
    quiet = run_main(["shoe-controller", "journal", "verify", "--journal", str(path)])
    assert quiet.returncode == 0 and "floor ack" not in quiet.stdout  # no ack stored: nothing said
    with Journal.open(path) as j:
        j.store_floor_ack(signed_ack(j, 9))
    said = run_main(["shoe-controller", "journal", "verify", "--journal", str(path)])
    assert said.returncode == 0, said.stderr
    assert said.stdout.splitlines() == [
        f"{path}: intact, 12 records",
        f"{path}: floor ack: archive archive-test-0001 holds records through 9",
    ]
