"""The archive on its own, on PostgreSQL and SQLite: once per (table, seq), the head from the archive whoever
stored the records, conflicts kept out, the URL's mistakes named."""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from floor.archive import Alert, AlertKind, Archive, ArchiveError, UnstorableRecord, parse_url
from floor.cli import main as shoe_floor


@pytest.mark.dialects
def test_two_connections_storing_halves_give_the_head_of_the_whole(
    journal_records: list[TableRecord], archive_url: str
) -> None:
    records = journal_records[:200]
    with Archive(archive_url) as a, Archive(archive_url) as b:
        a.store(records[::2])  # what one collector got of a shared subscription
        head, stop = a.advance("T1")
        assert head.seq == 1 and stop is not None and stop.kind == AlertKind.GAP
        b.store(records[1::2])  # and the other
        head, stop = b.advance("T1")
        assert (head.seq, head.hash, stop) == (200, records[-1].hash, None)
        assert a.head("T1") == head  # the head is the archive's, not a connection's


@pytest.mark.dialects
def test_store_counts_first_copies_and_names_a_conflicting_record(
    journal_records: list[TableRecord], archive_url: str
) -> None:
    records = journal_records[:30]
    altered = TableRecord.from_dict({**records[9].to_dict(), "hash": "f" * 64})
    with Archive(archive_url) as a:
        assert a.store(records[:20]) == (20, [])
        inserted, alerts = a.store([*records[10:], altered])
        assert inserted == 10
        assert [(x.kind, x.seq) for x in alerts] == [(AlertKind.CONFLICT, 10)]
        assert [r.hash for r in a.records("T1")] == [r.hash for r in records]


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("sqlite://host/x.db", "three slashes"),
        ("sqlite:///", "three slashes"),
        ("mysql://db/x", "use sqlite:///path"),
        ("postgresql:///x", "no server"),
        ("/var/lib/archive.db", "use sqlite:///path"),
    ],
)
def test_a_bad_archive_url_is_named(url: str, says: str) -> None:
    with pytest.raises(ArchiveError, match=says):
        parse_url(url)


def test_sqlite_urls_with_three_and_four_slashes_are_the_same_file() -> None:
    assert parse_url("sqlite:///srv/a.db")[1] == parse_url("sqlite:////srv/a.db")[1] == "/srv/a.db"


@pytest.mark.dialects
def test_a_batch_of_old_new_twice_sent_and_conflicting_records_is_stored_once_with_its_conflicts_named(
    journal_records: list[TableRecord], archive_url: str
) -> None:
    # One batch through the staging table (COPY on PostgreSQL): records archived before, new ones, the same
    # new record twice, a different record for an archived seq, and two different records for one new seq
    # (the last one in the batch is stored; the other is a conflict).
    t1 = journal_records[:60]
    t2 = [TableRecord.from_dict({**r.to_dict(), "table": "T2"}) for r in journal_records[:10]]
    forged = [TableRecord.from_dict({**r.to_dict(), "hash": "e" * 64}) for r in (t1[4], t1[44])]
    with Archive(archive_url) as a:
        assert a.store(t1[:30]) == (30, [])
        batch = [*t1[20:40], t1[35], forged[0], *t2, forged[1], *t1[40:], t2[3]]
        inserted, alerts = a.store(batch)
        assert inserted == 10 + 10 + 20
        assert [(x.table, x.seq, x.kind) for x in alerts] == [
            ("T1", 5, AlertKind.CONFLICT),
            ("T1", 45, AlertKind.CONFLICT),
        ]
        assert [r.hash for r in a.records("T1")] == [r.hash for r in t1]
        assert [r.hash for r in a.records("T2")] == [r.hash for r in t2]
        assert a.store(batch) == (0, alerts)  # the same batch again: nothing new, the same conflicts
        assert [a.advance(t)[0].seq for t in ("T1", "T2")] == [60, 10]


@pytest.mark.dialects
def test_a_batch_that_fails_leaves_the_archive_able_to_store_the_next(
    journal_records: list[TableRecord], archive_url: str
) -> None:
    # The staging table is made inside the first batch's transaction: a batch that fails takes it back with it.
    # (A NUL, which PostgreSQL's text refuses, no longer gets that far: the archive refuses it before sending.)
    if not archive_url.startswith("postgresql"):
        pytest.skip("the staging table is PostgreSQL's ON COMMIT DELETE ROWS table")
    bad = dataclasses.replace(journal_records[0], at="2026-11-30\x00")
    with Archive(archive_url) as a:
        with pytest.raises(UnstorableRecord, match="NUL"):
            a.store([bad])
        a.connection.cursor().execute("ALTER TABLE records ADD CONSTRAINT not_1 CHECK (seq <> 1)")
        a.connection.commit()
        with pytest.raises(Exception, match="not_1"):  # the database refuses the batch
            a.store(journal_records[:1])
        a.connection.cursor().execute("ALTER TABLE records DROP CONSTRAINT not_1")
        a.connection.commit()
        assert a.store(journal_records[:20]) == (20, [])
        assert a.advance("T1")[0].seq == 20


@pytest.mark.dialects
def test_two_collectors_storing_the_same_records_at_once_count_each_first_copy_once(
    archive_url: str, journal_records: list[TableRecord]
) -> None:
    """Two collectors of a shared subscription store overlapping batches at the same moment (a resend reached
    both). Each first copy is counted once between them, and no count goes below zero: a count taken before and
    after the insert (the old way) also counted the other's rows, and a negative count killed the collector in
    prometheus_client."""
    records = journal_records[:600]
    batches = [records[i : i + 50] for i in range(0, len(records), 50)]
    with Archive(archive_url):
        pass  # the schema, made once
    results: dict[int, list[int]] = {0: [], 1: []}
    start = threading.Barrier(2)

    def collector(n: int) -> None:
        with Archive(archive_url) as archive:
            start.wait()
            for batch in batches:
                inserted, conflicts = archive.store(batch)
                assert conflicts == []
                results[n].append(inserted)

    threads = [threading.Thread(target=collector, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(0 <= x <= 50 for x in results[0] + results[1])
    assert [a + b for a, b in zip(results[0], results[1], strict=True)] == [len(b) for b in batches]
    with Archive(archive_url) as archive:
        assert archive.advance("T1")[0].seq == len(records)


@pytest.mark.parametrize("command", ["alerts", "history", "verify"])
def test_an_archive_from_an_older_shoe_floor_or_none_at_all_is_one_line(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.db"
    Archive(f"sqlite:///{old}").close()
    with sqlite3.connect(old) as conn:  # as an archive made before the alert feed was
        conn.execute("DROP TABLE alert_feed")
        conn.execute("DROP TABLE alert_outbox")
    assert shoe_floor([command, "--archive", f"sqlite:///{old}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "older shoe-floor (no alert_feed, alert_outbox)" in err
    assert "shoe-floor serve" in err
    Archive(f"sqlite:///{old}").close()  # what serve does: brings it up to date
    assert shoe_floor([command, "--archive", f"sqlite:///{old}"]) == 0
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (a)")
    assert shoe_floor([command, "--archive", f"sqlite:///{other}"]) == 2
    assert "not a shoe-floor archive" in capsys.readouterr().err


@pytest.mark.dialects
def test_the_alert_outbox_gives_the_oldest_unconfirmed_first_and_at_most_a_sweep_s_worth(archive_url: str) -> None:
    with Archive(archive_url) as a:
        gaps = [Alert("T1", seq, AlertKind.GAP, "missing", site="s1", key=f"gap:T1:{seq}") for seq in range(7)]
        items = a.alert(gaps)
        a.alert([Alert("T1", 99, AlertKind.REFUSED, "no site: in the feed only")])  # never published, not waiting
        assert [i.id for i in a.unpublished(older_than=0, limit=3)] == [i.id for i in items[:3]]
        a.published([items[0].id, items[2].id])
        assert [i.id for i in a.unpublished(older_than=0)] == [items[1].id, *[i.id for i in items[3:]]]
        assert a.unpublished(older_than=3600) == []  # none is that old yet


@pytest.mark.dialects
def test_a_wager_priced_at_zero_verifies_on_both_archives(archive_url: str) -> None:
    """A wager whose exact edge is zero (or a hair below it) gave ``theo_cents`` -0.0; PostgreSQL's numeric has
    no negative zero, so the record came back as 0.0 and its hash no longer verified: a broken link in the
    archive of a table with a bet-spot reader (found by the floor tests on a demo journal with players)."""
    import math

    from controller.game.records import wager_body
    from controller.game.rules import Bet
    from controller.game.settlement import Wager
    from controller.game.wagers import WagersLocked
    from tests.floor.test_surveillance import Chain

    locked = WagersLocked(1, 1, 3, (Wager(Bet.BANKER, 2500), Wager(Bet.TIE, 500)))
    bodies = [wager_body(locked, 0, {"banker": 1e-19}), wager_body(locked, 1, {"tie": -0.0})]
    for body in bodies:
        assert all(math.copysign(1.0, body[k]) > 0 for k in ("ev", "theo_cents") if body[k] == 0), body
    chain = Chain("T1")
    for body in bodies:
        chain.add("wager", body)
    with Archive(archive_url) as a:
        a.store(chain.records)
        (report,) = a.verify()
        assert report.broken == [] and report.records == 2  # unsigned here: forged is test_trust.py's
