"""Acknowledging an alert in the archive (floor/archive/alerts.py ``Feed.acknowledge``, ``Archive.acknowledge``):
who and when kept once, a second acknowledgement changes nothing and names the first, each one an audit row in
the same transaction; an archive made before the acknowledgement gains its columns when ``serve`` opens it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from floor.archive import Acknowledgement, Alert, AlertKind, Archive, ArchiveError
from floor.archive.schema import columns

AT = "2026-12-03T07:30:00.000Z"


def audit_rows(archive: Archive) -> list[tuple[str, str, str, str]]:
    return [(e.actor, e.action, e.subject, e.source) for e in archive.people.audit_log()]


@pytest.mark.dialects
def test_an_alert_is_acknowledged_once_and_each_acknowledgement_is_audited(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        first, other = archive.alert(
            [Alert("T1", 7, AlertKind.PAST_POST, "seat 3 player", "s1"), Alert("T2", None, AlertKind.GAP, "x", "s1")]
        )
        assert (first.acked_by, first.acked_at) == (None, None)
        ack = archive.acknowledge(first.id, "pam", source="pit 127.0.0.1", at=AT)
        assert ack is not None and ack.first and ack.outcome == "acknowledged"
        assert (ack.item.id, ack.item.acked_by, ack.item.acked_at, ack.item.kind) == (first.id, "pam", AT, "past_post")
        # Again, by someone else, later: nothing changes, and it says who was first.
        again = archive.acknowledge(first.id, "pat", source="pit 10.0.0.9", at="2026-12-03T08:00:00.000Z")
        assert again is not None and not again.first and again.outcome == "already"
        assert (again.item.acked_by, again.item.acked_at) == ("pam", AT)
        feed = {i.id: i for i in archive.feed()}
        assert (feed[first.id].acked_by, feed[first.id].acked_at) == ("pam", AT)
        assert (feed[other.id].acked_by, feed[other.id].acked_at) == (None, None)  # the other alert untouched
        assert feed[first.id].to_dict()["acked_by"] == "pam" and feed[other.id].to_dict()["acked_at"] is None
        assert "(acknowledged by pam at 2026-12-03T07:30:00.000Z)" in feed[first.id].line()
        # What the outbox publishes carries it too (an alert acknowledged before its sweep).
        assert {i.id: i.acked_by for i in archive.unpublished(older_than=0)}[first.id] == "pam"
        # No such alert: None, nothing written.
        assert archive.acknowledge(10**12, "pam", source="pit 127.0.0.1") is None
        assert audit_rows(archive) == [
            ("pam", "alert_acknowledged", f"alert:{first.id}", "pit 127.0.0.1"),
            ("pat", "alert_acknowledged_again", f"alert:{first.id}", "pit 10.0.0.9"),
        ]
        entry = archive.people.audit_log()[0]
        assert entry.at == AT and entry.after == {"acked_by": "pam", "acked_at": AT, "kind": "past_post",
                                                  "table": "T1"}  # fmt: skip


@pytest.mark.dialects
def test_an_acknowledgement_and_its_audit_row_commit_together(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        (item,) = archive.alert([Alert("T1", None, AlertKind.MISPAY, "underpaid", "s1")])

        def failing(cur: Any, ack: Acknowledgement) -> None:
            raise RuntimeError("the audit row could not be written")

        with pytest.raises(RuntimeError):
            archive._feed.acknowledge(item.id, "pam", audit=failing)
        assert archive.feed()[0].acked_by is None  # rolled back with it
        got = archive.acknowledge(item.id, "pam", source="pit 127.0.0.1")
        assert got is not None and got.first and archive.feed()[0].acked_by == "pam"


def test_an_archive_made_before_the_acknowledgement_gains_its_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    with Archive(url) as archive:
        (item,) = archive.alert([Alert("T1", None, AlertKind.GAP, "missing", "s1")])
    with sqlite3.connect(tmp_path / "old.db") as conn:
        for column in ("acked_by", "acked_at"):
            conn.execute(f"ALTER TABLE alert_feed DROP COLUMN {column}")
    with pytest.raises(ArchiveError, match=r"older shoe-floor \(no alert_feed\.acked_by, alert_feed\.acked_at\)"):
        Archive(url, create=False)
    with Archive(url) as archive:  # what serve opens it with
        assert {"acked_by", "acked_at"} <= columns(archive.connection.cursor(), "alert_feed")
        assert archive.feed()[0].acked_by is None
    with Archive(url, create=False) as archive:  # and the pit, after it
        ack = archive.acknowledge(item.id, "pam", source="pit 127.0.0.1")
        assert ack is not None and ack.item.acked_by == "pam"
