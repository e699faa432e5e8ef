"""The archive's repository: the watches' and the accounting's tables behind typed rows, in one transaction
that commits on return and leaves nothing behind when it raises or is abandoned (both databases: this is
where the dialects' SQL lives)."""

from __future__ import annotations

import pytest

from floor.archive import Archive
from floor.archive.money_tables import ACCOUNTING_SCHEMA, MONEY_WATCH_SCHEMA, MoneyFaults, MoneySums, SeatSession
from floor.archive.surveil_tables import DealerErrorHour, DealerErrors, SurveilHead, Window, WindowMatch


def test_a_transaction_commits_on_return_and_keeps_nothing_when_it_raises_or_is_abandoned(archive_url: str) -> None:
    with Archive(archive_url) as a:
        repo = a.repository
        repo.prepare()
        with repo.transaction() as tx:
            assert tx.surveillance.head("T1") is None
            tx.surveillance.start("T1", '{"s": 0}')

        def failing_step() -> None:
            with repo.transaction() as tx:
                assert tx.surveillance.move_head("T1", 0, 5, '{"s": 5}')
                raise RuntimeError("a watch failed")

        with pytest.raises(RuntimeError):
            failing_step()
        with repo.transaction() as tx:
            assert tx.surveillance.move_head("T1", 0, 7, '{"s": 7}')
            tx.abandon()
        with repo.transaction() as tx:
            assert tx.surveillance.head("T1") == SurveilHead(0, '{"s": 0}')
            assert not tx.surveillance.move_head("T1", 3, 9, "{}")  # another collector's head: no set
            assert tx.surveillance.move_head("T1", 0, 9, '{"s": 9}')
        with repo.transaction() as tx:
            assert tx.surveillance.head("T1") == SurveilHead(9, '{"s": 9}')


def test_surveillance_rows_go_in_and_come_back_typed(archive_url: str) -> None:
    with Archive(archive_url) as a:
        repo = a.repository
        repo.prepare()
        with repo.transaction() as tx:
            tx.surveillance.add_windows("T1", [Window(-42, 10, 1, 0, 1000), Window(7, 10, 1, 1, 1000)])
            tx.surveillance.add_windows("T2", [Window(-42, 3, 4, 12, 2000)])
            tx.surveillance.add_errors("T1", "2026-12-01T10", DealerErrors.of({"coups": 20, "misdraws": 2}))
            tx.surveillance.add_errors("T1", "2026-12-01T10", DealerErrors(coups=5, voids=1))
            tx.surveillance.add_errors("T2", "2026-12-01T09", DealerErrors(coups=30, unreadable=3))
        with repo.transaction() as tx:
            assert tx.surveillance.find_window(-42, 0, "T2", 3) == [WindowMatch("T1", 1, 10, 0, 1000)]
            assert tx.surveillance.find_window(-42, 1500, "T1", 10) == [WindowMatch("T2", 4, 3, 12, 2000)]
            mine = tx.surveillance.errors_of("T1", "2026-12-01T10")
            assert mine == DealerErrors(coups=25, misdraws=2, voids=1) and mine.errors == 3
            assert tx.surveillance.errors_of("T1", "2026-12-01T11") == DealerErrors()
            others = tx.surveillance.floor_errors("2026-12-01T00", "2026-12-01T10", but="T1")
            assert (others.coups, others.errors) == (30, 3)
        assert repo.dealer_errors() == [
            DealerErrorHour("T2", "2026-12-01T09", DealerErrors(coups=30, unreadable=3)),
            DealerErrorHour("T1", "2026-12-01T10", DealerErrors(coups=25, misdraws=2, voids=1)),
        ]
        assert repo.prune_windows(1500) == 2
        with repo.transaction() as tx:
            assert tx.surveillance.find_window(-42, 0, "T2", 3) == []


def test_the_money_rows_add_up_and_come_back_typed(archive_url: str) -> None:
    with Archive(archive_url) as a:
        repo = a.repository
        repo.prepare((*MONEY_WATCH_SCHEMA, *ACCOUNTING_SCHEMA))
        session = SeatSession("T1", 3, 40, "2026-12-01T10:00:00.000000Z", "2026-12-01T10:05:00.000000Z", None, None,
                              2, 3, 5000, -1200, 50, 0, 6000, 60.5)  # fmt: skip
        with repo.transaction() as tx:
            tx.money.add_faults("T1", "2026-12-01T10:00", MoneyFaults.of({"past_posts": 1, "wagers": 10}))
            tx.money.add_faults("T1", "2026-12-01T10:00", MoneyFaults(mispays=1, mispay_cents=250, wagers=5))
            tx.money.add_faults("T2", "2026-12-01T10:15", MoneyFaults(past_posts=2, wagers=40))
            tx.accounting.add_money("T1", [("2026-12-01T10:00", MoneySums(1000, -200, 5, 0, 1234, 2.5, 1, 2))])
            tx.accounting.add_money("T1", [("2026-12-01T10:15", MoneySums(500, 100, 0, 5, 66, 0.5, 1, 1))])
            tx.accounting.add_sessions([session])
            tx.accounting.add_sessions([SeatSession("T1", 3, 40, "2026-12-01T10:00:00.000000Z",
                                                    "2026-12-01T10:09:00.000000Z", "2026-12-01T10:09:00.000000Z", 77,
                                                    1, 1, 1000, 300, 0, 50, 2000, 12.0)])  # fmt: skip
        with repo.transaction() as tx:
            assert tx.money.faults_of("T1", "2026-12-01T10:00", "2026-12-01T11:00") == MoneyFaults(
                past_posts=1, mispays=1, mispay_cents=250, wagers=15
            )
            floor = tx.money.floor_faults("T1", "2026-12-01T00:00", "2026-12-01T11:00")
            assert floor.counts()["past_posts"] == 2 and floor.wagers == 40
            (money,) = tx.accounting.shift_money([("2026-12-01T10:00", "2026-12-01T10:30")])
            assert (money.shift, money.table) == (0, "T1")
            assert money.sums == MoneySums(1500, -100, 5, 5, 1300, 3.0, 2, 3)
            assert tx.accounting.shift_money([("2026-12-01T11:00", "2026-12-01T12:00")]) == []
        assert [(b.table, b.faults.past_posts) for b in repo.money_faults("2026-12-01T10:15", "2026-12-01T11:00")] == [
            ("T2", 2)
        ]
        (rated,) = repo.seat_sessions()
        ended = "2026-12-01T10:09:00.000000Z"  # the later last money record and the end given
        assert rated == SeatSession("T1", 3, 40, "2026-12-01T10:00:00.000000Z", ended, ended, 77,
                                    3, 4, 6000, -900, 50, 50, 8000, 72.5)  # fmt: skip
        assert repo.seat_sessions(open_only=True) == []


def test_the_feed_and_the_audit_log_read_newest_first_by_table_or_subject_and_limit(archive_url: str) -> None:
    """``Store.newest``, which the alert feed and the audit log both read through: the newest rows first, only
    the table's (or the subject's) when one is named, at most the limit."""
    from floor.archive import Alert

    with Archive(archive_url) as archive:
        archive.alert([Alert("T1", 1, "k", "a"), Alert("T2", 2, "k", "b"), Alert("T2", 3, "k", "c")])
        assert [i.detail for i in archive.feed(None)] == ["c", "b", "a"]
        assert [i.detail for i in archive.feed(2)] == ["c", "b"]
        assert [i.detail for i in archive.feed(1, "T2")] == ["c"]
        assert [i.detail for i in archive.feed(None, "T1")] == ["a"]
        assert archive.feed(None, "") == []  # a table named, even an empty name, is a filter
        people = archive.people
        people.add_staff("D1", "Ann", "dealer", actor="test")
        people.add_staff("D2", "Bob", "dealer", actor="test")
        people.set_active("D1", False, actor="test")
        assert [e.subject for e in people.audit_log(last=2)] == ["staff:D2", "staff:D1"]  # oldest first
        assert [e.action for e in people.audit_log(subject="staff:D1")] == ["staff_added", "staff_disabled"]
