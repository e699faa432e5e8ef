"""The archive on its own, on PostgreSQL and SQLite: once per (table, seq), the head from the archive whoever
stored the records, conflicts kept out, the URL's mistakes named."""

from __future__ import annotations

import pytest

from controller.game.records import TableRecord
from floor.archive import AlertKind, Archive, ArchiveError, parse_url


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
