"""The floor's accounting (floor/accounting.py) against both archives: a real demo journal's shift report and
ratings equal ``shoe-controller settle``; seat sessions end where the table's book judges the seat has left;
a shift's win outside its 95 % interval is one alert; two collectors racing count each record once; the
``report`` and ``ratings`` commands."""

from __future__ import annotations

import atexit
import functools
import itertools
import json
import tempfile
import threading
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.records import TableRecord
from floor.accounting import (
    SHIFT_CLOSE_GRACE,
    Accounting,
    AccountState,
    ended_shift_alerts,
    floor_totals,
    ratings,
    shift_report,
    unit_moments,
)
from floor.archive import AlertKind, Archive
from floor.shifts import ShiftPlan
from floor.surveillance import Surveillance
from tests.console import run_main
from tests.floor.conftest import Keys, Table, as_table, serve_process, shoe_floor
from tests.floor.feeding import archive_in_steps
from tests.floor.test_surveillance import TODAY, Chain, coup_body
from tests.servers import Mosquitto
from tests.waiting import until

#: Every shift from two days before now to two days after: every record these tests report is dated today (the
#: demo's journals and the chains), and a record outside would miss the handle sums each test checks. (A century
#: made every report walk 110,000 empty shifts: 4-6 s a report on the 2-core machine.)
WIDE = (datetime.now(UTC) - timedelta(days=2), datetime.now(UTC) + timedelta(days=2))
UTC_PLAN = ShiftPlan.parse("06:00,14:00,22:00", "UTC")


def settle_lines(journal: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``shoe-controller settle --journal J --json`` (in this process): (wagers, commission boxes)."""
    settled = run_main(["shoe-controller", "settle", "--journal", str(journal), "--json"])
    assert settled.returncode == 0, settled.stderr
    out = settled.stdout
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    return [x for x in lines if "bet" in x], [x for x in lines if "commission_box" in x]


@pytest.mark.dialects
def test_a_real_journal_s_report_and_ratings_equal_what_the_table_settled(
    archive_url: str, journal_path: Path, journal_records: list[TableRecord]
) -> None:
    wagers, boxes = settle_lines(journal_path)
    assert len(wagers) > 100, "the demo journal has too few settled wagers"
    with Archive(archive_url) as a:
        archive_in_steps(a, Surveillance(a, watches=[Accounting(UTC_PLAN)]), journal_records, step=97)
        report = shift_report(a, UTC_PLAN, *WIDE)
        sessions = ratings(a)
    collected = sum(b["collected"] for b in boxes)
    assert sum(f.handle for f in report) == sum(w["stake"] for w in wagers)
    assert sum(f.win for f in report) == -sum(w["net"] for w in wagers) + collected
    assert sum(f.wagers for f in report) == len(wagers)
    assert sum(f.commission_collected for f in report) == collected
    assert sum(f.commission_uncollected for f in report) == sum(
        max(0, b["commission_box"] - b["collected"]) for b in boxes
    )
    coups = [r for r in journal_records if r.kind == "coup" and r.body.get("declared")]
    assert sum(f.coups for f in report) == len(coups)
    theo = sum(r.body["theo_cents"] for r in journal_records if r.kind == "wager")
    assert sum(f.theo_cents for f in report) == pytest.approx(theo, abs=0.01)
    # the variance is the table's exact one at each wager's betting time, not the off-the-top fallback
    exact = [r.body["stake"] ** 2 * r.body["variance"] for r in journal_records if r.kind == "wager"]
    top = unit_moments("", 8)
    off_top = [r.body["stake"] ** 2 * top[r.body["bet"]][1] for r in journal_records if r.kind == "wager"]
    assert sum(f.sigma_cents**2 for f in report) == pytest.approx(sum(exact), rel=1e-6)
    assert sum(exact) != pytest.approx(sum(off_top), rel=1e-6)
    # ratings: per seat, the sessions' totals are settle's per-seat sums
    by_seat: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for w in wagers:
        s = by_seat[w["seat"]]
        s[0] += w["stake"]
        s[1] += w["net"]
        s[2] += w["commission"]
        s[3] += 1
    rated: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for x in sessions:
        r = rated[x.seat]
        r[0] += x.wagered
        r[1] += x.player_net
        r[2] += x.commission
        r[3] += x.wagers
    assert dict(rated) == dict(by_seat)
    for x in sessions:
        assert x.table == "T1" and x.coups > 0 and x.exact_theo_cents > 0
        assert 0.005 < x.edge < 0.15  # banker/player/side bets off the top
        d = x.to_dict()
        assert d["average_bet"] == round(x.wagered / x.coups)
        assert d["usual_theo_cents"] == pytest.approx(
            x.wagered / x.coups * d["assumptions"]["decisions_per_hour"] * x.hours * x.edge, abs=0.01
        )


# -- seat sessions, from records written by the test -----------------------------------------------------------


class MoneyChain(Chain):
    """A chain with money: wagers, settlements, commission boxes, coups numbered in their shoe."""

    def __init__(self, table: str, hour: int = 10) -> None:
        super().__init__(table, hour)
        self.coup_no = 0

    def start(self, decks: int = 8) -> None:
        self.shoe += 1
        self.coup_no = 0
        self.add("shoe", {"event": "start", "shoe": self.shoe, "decks": decks})

    def play(self, bets: dict[int, list[tuple[str, int, int]]], void: bool = False) -> None:
        """One coup: ``bets`` seat -> [(bet, stake, player's net)], theo 1 % of the stake."""
        self.coup_no += 1
        for seat, wagers in sorted(bets.items()):
            for bet, stake, _ in wagers:
                body = {"shoe": self.shoe, "coup": self.coup_no, "seat": seat, "bet": bet, "stake": stake}
                self.add("wager", body | {"ev": -0.01, "theo_cents": round(stake * 0.01, 2)})
        if not void:
            for seat, wagers in sorted(bets.items()):
                for bet, stake, net in wagers:
                    self.add(
                        "settlement",
                        {
                            "shoe": self.shoe,
                            "coup": self.coup_no,
                            "seat": seat,
                            "bet": bet,
                            "stake": stake,
                            "outcome": "win" if net > 0 else "lose",
                            "win": max(net, 0),
                            "commission": 0,
                            "net": net,
                            "commission_owed": 0,
                            "box": 0,
                        },
                    )
        self.add("coup", coup_body(self.shoe, self.coup_no, void=void, cards=["5H", "6D", "7C", "8S"]))

    def empty_void(self) -> None:
        """A coup voided before any card (a dummy hand only): no lock."""
        self.coup_no += 1
        self.add("coup", coup_body(self.shoe, self.coup_no, void=True, cards=[]))

    def box(self, seat: int, owed: int, collected: int, why: str = "shoe_end") -> None:
        self.add(
            "commission",
            {
                "shoe": self.shoe,
                "seat": seat,
                "owed": owed,
                "collected": collected,
                "uncollected": max(0, owed - collected),
                "over_collected": max(0, collected - owed),
                "why": why,
            },
        )


def test_a_seat_session_ends_at_the_lock_where_the_book_judges_the_seat_has_left(archive_url: str) -> None:
    t = MoneyChain("T1")
    t.start()
    t.play({1: [("banker", 1000, -1000)], 2: [("player", 500, 500)]})  # coup 1: both play
    t.play({1: [("banker", 1000, 950)]})  # seat 2 empty (1)
    t.empty_void()  # no lock: not counted
    t.play({1: [("banker", 1000, -1000)]}, void=True)  # voided with cards: a lock, seat 2 empty (2)
    t.play({1: [("banker", 1000, -1000)]})  # seat 2 empty (3): left at this coup
    left_at = t.records[-1]
    t.play({1: [("tie", 100, -100)], 2: [("banker", 2000, 1900)]})  # seat 2 again: a new session
    t.play({})  # seat 1 empty (1), seat 2 empty (1)
    t.play({})  # (2)
    t.start()  # the book counts again from the shoe's start
    t.box(1, owed=0, collected=0)
    t.play({})  # (1) in the new shoe
    t.play({})  # (2)
    t.play({2: [("player", 300, -300)]})  # seat 1 (3): left; seat 2 plays
    seat1_left = t.records[-1]
    t.box(2, owed=95, collected=90, why="seat_left")
    with Archive(archive_url) as a:
        archive_in_steps(a, Surveillance(a, watches=[Accounting(UTC_PLAN, leave_after_coups=3)]), t.records, step=5)
        got = ratings(a)
        opened = ratings(a, open_only=True)
        since = ratings(a, since=datetime.fromisoformat(left_at.at.replace("Z", "+00:00")) + timedelta(seconds=1))
    by = [(x.seat, x.end is not None, x.wagered, x.player_net, x.coups, x.wagers, x.commission_collected) for x in got]
    assert by == [
        (1, True, 3100, -1150, 4, 4, 0),  # the voided coup's wager is not settled
        (2, True, 500, 500, 1, 1, 0),
        (2, False, 2300, 1600, 2, 2, 90),
    ]
    seat2_first = got[1]
    assert seat2_first.end == datetime.fromisoformat(left_at.at.replace("Z", "+00:00")).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )
    assert got[0].end is not None and got[0].end.startswith(seat1_left.at[:19])
    assert [(x.seat, x.wagered) for x in opened] == [(2, 2300)]
    assert [(x.seat, x.wagered) for x in since] == [(1, 3100), (2, 2300)]  # seat 2's first ended before
    assert got[2].win == -1600 + 90


def test_leave_after_coups_is_the_tables_setting(archive_url: str) -> None:
    t = MoneyChain("T1")
    t.start()
    t.play({1: [("banker", 1000, -1000)]})
    t.play({})
    t.play({1: [("banker", 1000, -1000)]})
    with Archive(archive_url) as a:
        archive_in_steps(a, Surveillance(a, watches=[Accounting(UTC_PLAN, leave_after_coups=1)]), t.records, step=3)
        got = [(x.wagered, x.end is None) for x in ratings(a)]
    assert got == [(1000, False), (1000, True)]  # left at the first empty lock, back at the next coup


# -- the 95 % interval --------------------------------------------------------------------------------------


@pytest.mark.dialects
def test_a_shift_won_far_outside_its_interval_is_one_alert_and_an_ordinary_one_is_none(archive_url: str) -> None:
    t = MoneyChain("T1", hour=13)  # 13:00-13:59 UTC: the 06:00 shift; the next record at 14:00 ends it
    t.start()
    for _ in range(30):  # the players win every coup: far above 1.96 sigma of 30 banker bets
        t.play({1: [("banker", 1000, 950)], 2: [("player", 1000, 1000)]})
    u = MoneyChain("T2", hour=13)
    u.start()
    for i in range(30):  # an ordinary run: half won, half lost
        u.play({1: [("banker", 1000, 950 if i % 2 else -1000)]})
    with Archive(archive_url) as a:
        s = Surveillance(a, watches=[Accounting(UTC_PLAN)])
        archive_in_steps(a, s, t.records, step=97)
        archive_in_steps(a, s, u.records, step=97)
        assert not [i for i in a.feed() if i.kind == AlertKind.HOLD_OUTSIDE_INTERVAL]  # the shift has not ended
        for chain in (t, u):
            chain.hour = 14
            chain.play({1: [("banker", 1000, -1000)]})
            chain.play({1: [("banker", 1000, -1000)]})
            archive_in_steps(a, s, chain.records[-8:], step=97)
        feed = [i for i in a.feed() if i.kind == AlertKind.HOLD_OUTSIDE_INTERVAL]
        s.process("T1", "s1")
        report = shift_report(a, UTC_PLAN, *WIDE)
    assert len(feed) == 1 and feed[0].table == "T1"
    extra = feed[0].extra
    assert extra["win"] == -(30 * 950 + 30 * 1000) and extra["outside"] is True
    assert extra["interval"][0] < extra["theo_cents"] < extra["interval"][1] and extra["win"] < extra["interval"][0]
    assert "outside the 95 % interval" in feed[0].detail
    lines = {(f.table, f.start[11:13]): f for f in report}
    assert lines[("T1", "06")].outside and not lines[("T2", "06")].outside
    assert lines[("T1", "06")].theo_cents == pytest.approx(30 * 20.0)
    _, var_b = unit_moments("", 8)["banker"]
    _, var_p = unit_moments("", 8)["player"]
    assert lines[("T1", "06")].sigma_cents == pytest.approx((30 * 1000**2 * (var_b + var_p)) ** 0.5, abs=0.01)
    assert lines[("T1", "14")].handle == 2000 and lines[("T1", "14")].win == 2000
    totals = floor_totals(report)
    assert {(f.start[11:13], f.handle) for f in totals} == {("06", 90_000), ("14", 4000)}
    assert all(f.table is None and f.to_dict()["total"] is True for f in totals)


# -- two collectors racing ----------------------------------------------------------------------------------


@pytest.mark.dialects
def test_two_collectors_racing_count_each_money_record_once(
    archive_url: str, journal_path: Path, journal_records: list[TableRecord]
) -> None:
    wagers, _ = settle_lines(journal_path)
    records = journal_records
    with Archive(archive_url) as a, Archive(archive_url) as b:
        sa, sb = Surveillance(a, watches=[Accounting(UTC_PLAN)]), Surveillance(b, watches=[Accounting(UTC_PLAN)])
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def run(i: int, s: Surveillance, archive: Archive) -> None:
            try:
                barrier.wait()
                for k in range(0, len(records), 53):
                    if i == 0:
                        archive.store(records[k : k + 53])
                        archive.advance("T1", "s1")
                    s.process("T1", "s1")
                s.process("T1", "s1")
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i, s, x)) for i, (s, x) in enumerate(((sa, a), (sb, b)))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        assert not errors
        sb.process("T1", "s1")
        report = shift_report(a, UTC_PLAN, *WIDE)
        sessions = ratings(a)
    assert sum(f.handle for f in report) == sum(w["stake"] for w in wagers)
    assert sum(f.wagers for f in report) == len(wagers)
    assert sum(x.wagered for x in sessions) == sum(w["stake"] for w in wagers)


# -- the commands ------------------------------------------------------------------------------------------


def test_report_and_ratings_commands(archive_url: str, journal_records: list[TableRecord]) -> None:
    with Archive(archive_url) as a:
        archive_in_steps(a, Surveillance(a, watches=[Accounting(UTC_PLAN)]), journal_records, step=97)
        expected = shift_report(a, UTC_PLAN, *WIDE)
    day = journal_records[0].at[:10]
    start = (datetime.fromisoformat(day) - timedelta(days=1)).date().isoformat()
    end = (datetime.fromisoformat(day) + timedelta(days=2)).date().isoformat()
    r = shoe_floor("report", "--archive", archive_url, "--from", start, "--to", end, "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    tables = [x for x in lines if not x["total"]]
    assert [x["handle"] for x in tables] == [f.handle for f in expected]
    assert sum(x["handle"] for x in lines if x["total"]) == sum(f.handle for f in expected)
    assert set(tables[0]) >= {"table", "shift", "start", "end", "handle", "win", "hold_pct", "interval", "outside"}
    r = shoe_floor("ratings", "--archive", archive_url, "--table", "T1", "--json")
    assert r.returncode == 0, r.stderr
    rated = [json.loads(x) for x in r.stdout.splitlines()]
    assert rated and all(x["table"] == "T1" for x in rated)
    assert rated[0]["assumptions"]["decisions_per_hour"] == 70
    r = shoe_floor("ratings", "--archive", archive_url, "--decisions-per-hour", "40", "--json")
    assert json.loads(r.stdout.splitlines()[0])["assumptions"]["decisions_per_hour"] == 40
    text = shoe_floor("report", "--archive", archive_url, "--from", start, "--to", end)
    assert text.returncode == 0 and "T1" in text.stdout and "$" in text.stdout
    text = shoe_floor("ratings", "--archive", archive_url)
    assert text.returncode == 0 and "T1" in text.stdout and "$" in text.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--from", "yesterday", "--to", "2026-12-02"], "not an ISO date"),
        (["--from", "2026-12-02", "--to", "2026-12-01"], "--to must be after --from"),
        (["--from", "2026-12-01", "--to", "2026-12-02", "--shifts", "6am"], "is not HH:MM"),
        (["--from", "2026-12-01", "--to", "2026-12-02", "--zone", "Mars/Olympus"], "unknown time zone"),
    ],
)
def test_report_bad_options_are_one_line_and_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    Archive(url).close()
    r = shoe_floor("report", "--archive", url, *args, "--json")
    assert (
        r.returncode == 2
        and words in r.stderr
        and len(r.stderr.strip().splitlines()) == 1
        and "Traceback" not in r.stderr
    )


def test_ratings_bad_since_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    Archive(url).close()
    r = shoe_floor("ratings", "--archive", url, "--since", "soon")
    assert r.returncode == 2 and "not an ISO date" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# -- through the real collector --------------------------------------------------------------------------


@pytest.mark.e2e
def test_shoe_floor_serve_keeps_the_money_as_the_table_settled_it(
    journal_path: Path,
    journal_records: list[TableRecord],
    broker: Mosquitto,
    table: Table,
    keys: Keys,
    archive_url: str,
    tmp_path: Path,
) -> None:
    wagers, _ = settle_lines(journal_path)
    keys.enroll(archive_url, "T1")
    log = tmp_path / "serve.log"
    shifts = ("--shifts", "07:00,19:00", "--zone", "Europe/London", "--leave-after-coups", "5")
    proc = serve_process(broker, archive_url, "floor-a", log, *shifts)
    try:
        until(lambda: "subscribed" in log.read_text(), 30, "the collector to subscribe")
        table.publish(journal_records)
        table.wait_ack("T1", len(journal_records), timeout=90)
    finally:
        proc.terminate()
        proc.wait(20)
    with Archive(archive_url) as a:
        report = shift_report(a, ShiftPlan.parse("07:00,19:00", "Europe/London"), *WIDE)
        sessions = ratings(a, "T1")
    assert sum(f.handle for f in report) == sum(w["stake"] for w in wagers)
    assert sum(f.win for f in report) == -sum(w["net"] for w in wagers)  # commission at the payout: in net
    assert {f.shift[-3:] for f in report} <= {"GMT", "BST"}
    assert sum(x.wagered for x in sessions) == sum(w["stake"] for w in wagers)


def test_a_record_whose_time_cannot_be_read_counts_at_the_time_before_it() -> None:
    t = MoneyChain("T1")
    t.start()
    t.play({1: [("banker", 1000, -1000)]})
    bad = t.records[-2]  # the settlement
    records = [*t.records[:-2], TableRecord.from_dict({**bad.to_dict(), "at": "not a time"}), t.records[-1]]
    out = Accounting(UTC_PLAN).scan(AccountState(), records)
    assert [(b["handle"], b["win"]) for b in out.buckets.values()] == [(1000, 1000)]


# -- each record once, however the steps fall ------------------------------------------------------------

_coups = st.lists(
    st.one_of(
        st.just("empty_void"),
        st.dictionaries(
            st.integers(1, 4),
            st.dictionaries(
                st.sampled_from(["banker", "player", "tie"]),
                st.tuples(st.integers(1, 50), st.booleans()),
                min_size=1,
                max_size=2,
            ),
            max_size=4,
        ),
    ),
    min_size=1,
    max_size=16,
)


_examples = itertools.count()


@functools.cache
def _shared_archive() -> tuple[Archive, Surveillance]:
    """One SQLite archive and its surveillance for every example (one per example is too slow): each example
    its own tables."""
    directory = tempfile.mkdtemp(prefix="accounting-steps-")
    archive = Archive(f"sqlite:///{directory}/archive.db")
    atexit.register(archive.close)
    return archive, Surveillance(archive, watches=[Accounting(UTC_PLAN)])


def _without_table(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in line.items() if k != "table"} for line in lines]


@pytest.mark.timeout(900)  # every step is a commit (two, with its surveillance): slow on a loaded machine
@settings(max_examples=15, deadline=None)
@given(coups=_coups, shoe_every=st.integers(3, 12), step=st.integers(2, 40))
def test_the_figures_do_not_depend_on_how_the_records_fall_into_steps(
    coups: list[Any], shoe_every: int, step: int
) -> None:
    t = MoneyChain("T1")
    t.start()
    for i, coup in enumerate(coups):
        if i and i % shoe_every == 0:
            t.start()
            t.box(1, owed=50, collected=25)
        if coup == "empty_void":
            t.empty_void()
            continue
        bets = {seat: [(bet, units * 100, units * 100 if won else -units * 100) for bet, (units, won) in w.items()]
                for seat, w in coup.items()}  # fmt: skip
        t.play(bets, void=i % 7 == 6)
    a, surveillance = _shared_archive()
    n = next(_examples)
    figures = []
    for name, size in ((f"one{n}", len(t.records)), (f"steps{n}", step)):
        archive_in_steps(a, surveillance, as_table(t.records, name), step=size)
        report = _without_table([f.to_dict() for f in shift_report(a, UTC_PLAN, *WIDE, table=name)])
        figures.append((report, _without_table([x.to_dict() for x in ratings(a, name)])))
    assert figures[0] == figures[1]
    handle = sum(r.body["stake"] for r in t.records if r.kind == "settlement")
    assert sum(f["handle"] for f in figures[0][0]) == handle == sum(x["wagered"] for x in figures[0][1])
    collected = sum(r.body["collected"] for r in t.records if r.kind == "commission")
    assert sum(f["win"] for f in figures[0][0]) == -sum(r.body["net"] for r in t.records if r.kind == "settlement") + (
        collected
    )


@pytest.mark.dialects
def test_a_quiet_table_s_ended_shift_is_one_alert_once_its_grace_is_past(archive_url: str) -> None:
    """A table that stops dealing sends no record after its shift's end: the collector's sweep
    (ended_shift_alerts) judges the shift once SHIFT_CLOSE_GRACE has passed and surveillance has read all it
    archived, under the watch's key, so the table's next record (the watch's own look) adds nothing."""
    t = MoneyChain("T1", hour=13)  # the 06:00-14:00 shift
    t.start()
    for _ in range(30):  # far outside its interval
        t.play({1: [("banker", 1000, 950)], 2: [("player", 1000, 1000)]})
    u = MoneyChain("T2", hour=13)
    u.start()
    for i in range(30):  # an ordinary run
        u.play({1: [("banker", 1000, 950 if i % 2 else -1000)]})
    end = datetime.fromisoformat(f"{TODAY}T14:00:00+00:00")
    with Archive(archive_url) as a:
        s = Surveillance(a, watches=[Accounting(UTC_PLAN)])
        archive_in_steps(a, s, t.records, step=97)
        archive_in_steps(a, s, u.records, step=97)
        assert ended_shift_alerts(a, UTC_PLAN, end - timedelta(minutes=1)) == []  # the shift is still on
        assert ended_shift_alerts(a, UTC_PLAN, end + SHIFT_CLOSE_GRACE - timedelta(seconds=1)) == []
        # a record of T1 archived but not yet read by surveillance: not judged from a half-read shift
        t.play({1: [("banker", 1000, -1000)]})
        a.store(t.records[-3:])
        a.advance("T1", "s1")
        assert ended_shift_alerts(a, UTC_PLAN, end + SHIFT_CLOSE_GRACE) == []
        s.process("T1", "s1")
        (alert,) = ended_shift_alerts(a, UTC_PLAN, end + SHIFT_CLOSE_GRACE)
        assert (alert.table, alert.kind, alert.site, alert.seq) == (
            "T1",
            AlertKind.HOLD_OUTSIDE_INTERVAL,
            "s1",
            len(t.records),
        )
        assert alert.extra["outside"] is True and alert.extra["win"] == -(30 * 950 + 30 * 1000) + 1000
        assert [i.table for i in a.alert([alert])] == ["T1"]
        assert a.alert(ended_shift_alerts(a, UTC_PLAN, end + timedelta(hours=2))) == []  # a minute later: once
        t.hour = 15  # T1 deals again in the next shift: the watch's alert is the sweep's, stored once
        t.play({1: [("banker", 1000, -1000)]})
        archive_in_steps(a, s, t.records[-3:], step=97)
        feed = [i for i in a.feed() if i.kind == AlertKind.HOLD_OUTSIDE_INTERVAL]
    assert [i.table for i in feed] == ["T1"]
