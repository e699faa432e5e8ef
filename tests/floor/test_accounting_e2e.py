"""The floor's accounting on a real table's journal with commission boxes and players who leave: ``shoe-sim``
deals two shoes to simulated players (commission collected at the shoe's end), ``shoe-controller run --spots``
keeps the money, and the journal archived on both archives gives a shift report equal to
``shoe-controller settle`` (boxes included) and seat sessions that end where the simulator's players left."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest

from controller.journal import Journal
from floor.accounting import Accounting, ratings, shift_report
from floor.archive import Archive
from floor.shifts import ShiftPlan
from floor.surveillance import Surveillance
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table, settled, start_players

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

PLAN = ShiftPlan.parse("06:00,14:00,22:00", "UTC")
#: Every shift from two days before now to two days after: every record these tests report is dated today (the
#: demo's journals and the chains), and a record outside would miss the handle sums each test checks. (A century
#: made every report walk 110,000 empty shifts: 4-6 s a report on the 2-core machine.)
WIDE = (datetime.now(UTC) - timedelta(days=2), datetime.now(UTC) + timedelta(days=2))


def test_a_table_with_boxes_and_leaving_players_reports_as_it_settled(harness: Harness, archive_url: str) -> None:
    options = money_table(harness, decks=1, commission="shoe_end")
    start_players(harness, decks=1, commission="shoe_end", players=5, pace="0.02", seed=7)
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=240) == 0
    time.sleep(0.5)  # the last commit
    assert harness.stop_daemon() == 0
    wagers, boxes = settled(harness)
    assert any(b["commission_box"] > 0 for b in boxes), "no commission box owed: the boxes were not exercised"
    with Journal.open(harness.journal, read_only=True) as j:
        records = [r.for_floor("T1") for r in j.records()]
    with Archive(archive_url) as a:
        s = Surveillance(a, watches=[Accounting(PLAN, leave_after_coups=3)])  # the simulator's --leave-after
        for i in range(0, len(records), 250):
            a.store(records[i : i + 250])
            a.advance("T1", "s1")
            s.process("T1", "s1")
        report = shift_report(a, PLAN, *WIDE)
        sessions = ratings(a)
        ends = {x.end for x in sessions if x.end is not None}
        coup_at = {
            (r.body["shoe"], r.body["coup"]): r.at
            for r in a.records("T1")
            if r.kind == "coup" and r.body.get("declared")
        }
    collected = sum(b["collected"] for b in boxes)
    assert sum(f.handle for f in report) == sum(w["stake"] for w in wagers)
    assert sum(f.win for f in report) == -sum(w["net"] for w in wagers) + collected
    assert sum(f.commission_collected for f in report) == collected > 0
    assert sum(f.commission_uncollected for f in report) == sum(
        max(0, b["commission_box"] - b["collected"]) for b in boxes
    )
    # ratings: the sessions' totals are settle's per-seat sums ...
    by_seat: dict[int, Counter[str]] = defaultdict(Counter)
    for w in wagers:
        by_seat[w["seat"]].update(wagered=w["stake"], net=w["net"], wagers=1)
    for b in boxes:
        by_seat[b["seat"]].update(collected=b["collected"])
    rated: dict[int, Counter[str]] = defaultdict(Counter)
    for x in sessions:
        rated[x.seat].update(wagered=x.wagered, net=x.player_net, wagers=x.wagers, collected=x.commission_collected)
    assert {k: +v for k, v in rated.items()} == {k: +v for k, v in by_seat.items()}
    # ... and every seat the simulator's players left ends a session at that coup (the book's judgement)
    left = [e for e in harness.truth_events() if e["event"] == "seat_left"]
    assert left, "no player left: the sessions' ends were not exercised"
    for e in left:
        at = coup_at[(e["shoe"], e["coup"])]
        assert datetime.fromisoformat(at.replace("Z", "+00:00")).strftime("%Y-%m-%dT%H:%M:%S.%fZ") in ends, e
