"""The cash log (floor/cash_watch.py) against both archives: each player's cash in per gaming day across the
tables, a multiple transaction log entry for each cash buy-in over $3,000, the $8,000 alert and the currency
transaction report's at $10,000, each once per player and gaming day on the table where it was crossed, and
never without its cause (chips and markers are not cash; an uncarded player is one per table and seat; the
gaming day starts at its configured time); ``shoe-floor cashlog``."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from controller.game.records import TableRecord
from floor.archive import AlertKind, Archive, FeedItem
from floor.cash_watch import CashThresholds, CashWatch, cash_day, gaming_day, gaming_days
from floor.cli import main as shoe_floor
from floor.surveillance import Surveillance
from tests.floor.test_surveillance import Chain

CASH_KINDS = {AlertKind.CASH_APPROACHING, AlertKind.CTR_DUE}
DAY = "2026-12-01"


def ref(n: int) -> str:
    """Player ``n``'s card (a ``player_ref``: the card's UID)."""
    return f"E0040150C{n:07d}"


class CashChain(Chain):
    """A :class:`Chain` with buy-ins, in the shape a real table journals them (docs/schemas/buy_in.schema.json)."""

    def buy_in(self, seat: int, dollars: int, ref: str | None = None, tender: str = "cash") -> TableRecord:
        cause = self.add("input", {"kind": "buy_in", "seat": seat, "cents": dollars * 100, "tender": tender,
                                   "player_ref": ref})  # fmt: skip
        body = {"shoe": max(self.shoe, 1), "coup": 1, "seat": seat, "cents": dollars * 100, "tender": tender}
        return self.add("buy_in", body | {"player_ref": ref}, cause=cause.seq)


def chain(table: str, hour: int = 12) -> CashChain:
    c = CashChain(table, hour)
    c.day = DAY
    return c


def cash_surveillance(archive: Archive, **thresholds: Any) -> Surveillance:
    days = gaming_days("06:00", "Europe/London")
    return Surveillance(archive, watches=[CashWatch(days, CashThresholds(**thresholds))])


def feed(archive: Archive, s: Surveillance, c: Chain, records: list[TableRecord] | None = None) -> list[FeedItem]:
    archive.store(records if records is not None else c.records)
    archive.advance(c.table, "s1")
    return [i for i in s.process(c.table, "s1") if i.kind in CASH_KINDS]


@pytest.mark.dialects
def test_twelve_thousand_in_cash_across_three_tables_raises_each_alert_once_where_it_was_crossed(
    archive_url: str,
) -> None:
    with Archive(archive_url) as archive:
        s = cash_surveillance(archive)
        t1, t2, t3 = chain("T1"), chain("T2", 13), chain("T3", 14)
        t1.buy_in(4, 4_000, ref(77))
        t1.buy_in(2, 2_000, ref(12))  # someone else
        assert feed(archive, s, t1) == []  # $4,000: an MTL entry, no alert
        t2.buy_in(1, 4_500, ref(77))  # $8,500: approaching
        got = feed(archive, s, t2)
        assert [(i.kind, i.table, i.extra["day_cash_cents"]) for i in got] == [
            (AlertKind.CASH_APPROACHING, "T2", 850_000)
        ]
        assert ref(77) in got[0].detail and "$8,500" in got[0].detail and "gaming day (2026-12-01)" in got[0].detail
        t3.buy_in(6, 3_500, ref(77))  # $12,000: a currency transaction report is due
        t3.buy_in(6, 2_000, ref(77))  # more the same day: nothing more
        got = feed(archive, s, t3)
        assert [(i.kind, i.table, i.seq) for i in got] == [(AlertKind.CTR_DUE, "T3", t3.records[1].seq)]
        assert "$12,000" in got[0].detail and "table T3 seat 6" in got[0].detail
        assert s.process("T3", "s1") == []  # read once floor-wide
        cash = [(i.kind, i.table) for i in archive.feed(None) if i.kind in CASH_KINDS]
        assert sorted(cash) == [(AlertKind.CASH_APPROACHING, "T2"), (AlertKind.CTR_DUE, "T3")]
        entries, totals = cash_day(archive, DAY)
        assert [(e.table, e.player_ref, e.cents, e.day_cash) for e in entries] == [
            ("T1", ref(77), 400_000, 400_000),
            ("T2", ref(77), 450_000, 850_000),
            ("T3", ref(77), 350_000, 1_200_000),
        ]  # the $2,000 buy-ins are not over $3,000
        assert [(t.player_ref, t.cash, t.buy_ins, t.tables) for t in totals] == [
            (ref(12), 200_000, 1, 1),
            (ref(77), 1_400_000, 4, 3),
        ]


@pytest.mark.dialects
def test_no_alert_without_its_cause(archive_url: str) -> None:
    """$7,999 in cash, chips from another table and markers beyond $10,000, two players at $6,000 each, an
    uncarded player at two seats, and a player's cash split across the gaming day's start: no alert at all."""
    with Archive(archive_url) as archive:
        s = cash_surveillance(archive)
        a = chain("T1")
        a.buy_in(1, 7_999, ref(1))
        a.buy_in(1, 20_000, ref(1), tender="chips")
        a.buy_in(1, 50_000, ref(1), tender="marker")
        a.buy_in(2, 6_000, ref(2))
        a.buy_in(3, 6_000, ref(3))
        a.buy_in(4, 6_000)  # uncarded at seat 4 ...
        a.buy_in(5, 6_000)  # ... and another at seat 5: two players
        assert feed(archive, s, a) == []
        b = chain("T2", 5)  # 05:xx in London (GMT): the gaming day before
        b.buy_in(1, 7_000, ref(9))
        assert feed(archive, s, b) == []
        c = chain("T3", 7)  # 07:xx: the gaming day of the 1st
        c.buy_in(1, 7_000, ref(9))
        assert feed(archive, s, c) == []
        assert [i for i in archive.feed(None) if i.kind in CASH_KINDS] == []
        _, totals = cash_day(archive, DAY)
        by = {t.player_ref or f"{t.table}:{t.seat}": t.cash for t in totals}
        assert by == {ref(1): 799_900, ref(2): 600_000, ref(3): 600_000, "T1:4": 600_000, "T1:5": 600_000,
                      ref(9): 700_000}  # fmt: skip
        _, before = cash_day(archive, "2026-11-30")
        assert [(t.player_ref, t.cash) for t in before] == [(ref(9), 700_000)]


@pytest.mark.dialects
def test_an_uncarded_player_is_counted_by_table_and_seat_and_one_buy_in_past_both_is_the_reports_alert(
    archive_url: str,
) -> None:
    with Archive(archive_url) as archive:
        s = cash_surveillance(archive)
        t = chain("T5")
        t.buy_in(3, 5_000)
        t.buy_in(3, 4_000)  # $9,000 at T5 seat 3
        t.buy_in(3, 500, tender="chips")
        t.buy_in(4, 12_000)  # another seat: at once over $10,000
        got = feed(archive, s, t)
        assert [(i.kind, i.extra["player"], i.extra["day_cash_cents"]) for i in got] == [
            (AlertKind.CASH_APPROACHING, "seat:T5:3", 900_000),
            (AlertKind.CTR_DUE, "seat:T5:4", 1_200_000),
        ]
        assert "an uncarded player" in got[0].detail


@pytest.mark.dialects
def test_two_collectors_adding_to_one_players_day_at_once_see_each_others_cash(archive_url: str) -> None:
    """Two collectors read two tables' buy-ins of one player at the same time, $100 at a time: the day's total
    steps through every $100 once, and each alert is raised once, at exactly its threshold's step."""
    t1, t2 = chain("T1"), chain("T2", 13)
    for _ in range(60):  # $6,000 at each table
        t1.buy_in(1, 100, ref(1))
        t2.buy_in(2, 100, ref(1))
    with Archive(archive_url) as first, Archive(archive_url) as second:
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def run(archive: Archive, c: CashChain) -> None:
            s = cash_surveillance(archive)
            barrier.wait()
            try:
                for k in range(0, len(c.records), 6):
                    feed(archive, s, c, c.records[k : k + 6])
            except BaseException as exc:  # said by the test, not lost in the thread
                errors.append(exc)

        threads = [threading.Thread(target=run, args=pair) for pair in ((first, t1), (second, t2))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [] and not any(t.is_alive() for t in threads)
        got = sorted((i.kind, i.extra["day_cash_cents"]) for i in first.feed(None) if i.kind in CASH_KINDS)
        assert got == [(AlertKind.CASH_APPROACHING, 800_000), (AlertKind.CTR_DUE, 1_010_000)]
        _, totals = cash_day(first, DAY)
        assert [(t.player_ref, t.cash, t.buy_ins, t.tables) for t in totals] == [(ref(1), 1_200_000, 120, 2)]


def test_the_thresholds_are_the_floors_configuration(tmp_path: Path) -> None:
    with Archive(f"sqlite:///{tmp_path}/a.db") as archive:
        s = cash_surveillance(archive, mtl_over_cents=100_000, approaching_cents=200_000, ctr_over_cents=250_000)
        t = chain("T1")
        t.buy_in(1, 1_500, ref(1))
        t.buy_in(1, 1_000, ref(1))  # $2,500: at the alert, not over the report's
        t.buy_in(1, 1, ref(1))
        kinds = [i.kind for i in feed(archive, s, t)]
        assert kinds == [AlertKind.CASH_APPROACHING, AlertKind.CTR_DUE]
        entries, _ = cash_day(archive, DAY)
        assert [e.cents for e in entries] == [150_000]  # over $1,000 only
    with pytest.raises(ValueError, match="at most the report's"):
        CashThresholds(approaching_cents=1_000_001)


def test_the_gaming_day_starts_at_its_time_in_the_floors_zone() -> None:
    days = gaming_days("06:00", "America/Los_Angeles")
    assert gaming_day(days, "2026-12-01T13:59:59Z") == "2026-11-30"  # 05:59 in Las Vegas
    assert gaming_day(days, "2026-12-01T14:00:00Z") == "2026-12-01"
    assert gaming_day(gaming_days(), "2026-12-01T05:00:00Z") == "2026-11-30"  # 06:00 UTC by default


def test_shoe_floor_cashlog_prints_the_mtl_and_the_days(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/a.db"
    with Archive(url) as archive:
        s = cash_surveillance(archive)
        t = chain("T1")
        t.buy_in(2, 3_500, ref(5))
        t.buy_in(3, 1_000)
        feed(archive, s, t)
    assert shoe_floor(["cashlog", "--archive", url, "--day", DAY, "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"line": "mtl", "day": DAY, "at": t.records[1].at, "table": "T1", "seq": 2, "seat": 2, "player_ref": ref(5),
         "shoe": 1, "coup": 1, "cents": 350_000, "tender": "cash", "day_cash_cents": 350_000},
        {"line": "day", "day": DAY, "player_ref": ref(5), "table": None, "seat": None, "cash_cents": 350_000,
         "buy_ins": 1, "tables": 1, "first_at": t.records[1].at, "last_at": t.records[1].at},
        {"line": "day", "day": DAY, "player_ref": None, "table": "T1", "seat": 3, "cash_cents": 100_000,
         "buy_ins": 1, "tables": 1, "first_at": t.records[3].at, "last_at": t.records[3].at},
    ]  # fmt: skip
    assert shoe_floor(["cashlog", "--archive", url, "--day", DAY]) == 0
    text = capsys.readouterr().out
    assert "$3,500" in text and "uncarded, T1 seat 3" in text
    assert shoe_floor(["cashlog", "--archive", url, "--day", "1 December"]) == 2
    assert "not a date like 2026-12-01" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--gaming-day-start", "06:10"], "--gaming-day-start shift start 06:10 is not on a quarter hour"),
        (["--gaming-day-start", "6am"], "--gaming-day-start shift start '6am' is not HH:MM"),
        (["--cash-alert-at", "12000"], "--cash-alert-at: the cash alert at $12,000 must be above nothing and at most"),
    ],
)
def test_serve_s_cash_options_are_checked_in_one_line(options: list[str], said: str) -> None:
    from commandline import UsageError
    from floor.cli import _cash_thresholds, _gaming_days, parser

    args = parser().parse_args(["serve", "--broker", "mqtt://x:1", "--archive", "sqlite:///x", *options])

    def read() -> None:
        _gaming_days(args)
        _cash_thresholds(args)

    with pytest.raises(UsageError) as caught:
        read()
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_an_amount_that_is_not_dollars_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert shoe_floor(["serve", "--broker", "mqtt://x:1", "--archive", "sqlite:///x", "--ctr-over", "ten"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--ctr-over: not an amount in dollars like 3000 or 3000.00: 'ten'" in err


def test_serve_s_cash_options_reach_the_collector() -> None:
    from floor.cli import _cash_thresholds, _gaming_days, parser

    args = parser().parse_args(
        ["serve", "--broker", "mqtt://x:1", "--archive", "sqlite:///x", "--zone", "America/Los_Angeles",
         "--gaming-day-start", "04:00", "--mtl-over", "2500", "--cash-alert-at", "7500.50", "--ctr-over", "$10,000"]
    )  # fmt: skip
    assert _cash_thresholds(args) == CashThresholds(250_000, 750_050, 1_000_000)
    assert gaming_day(_gaming_days(args), "2026-12-01T11:59:00Z") == "2026-11-30"  # 03:59 in Las Vegas
