"""Dealers swapped through the real daemon: ``shoe-sim --players 3 --dealer-swap 3`` puts its dealers' badges at
the dealer's position of the bet-spot reader, ``shoe-controller run`` signs each in and out against the staff
list kept beside its journal (signed by the floor's key): every truth ``dealer_in`` / ``dealer_out`` has its
record, in order, and the scripted unknown badge is refused (a ``badge_refused`` record), never a crash."""

from __future__ import annotations

import json

import pytest

from controller.game.chips import format_uid
from controller.journal import Journal
from controller.table.staff_list import staff_list_path
from floor_protocol.staff import StaffEntry, StaffList
from hw_sim.money import staff
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table
from tests.floor_link.floorside import TEST_FLOOR_KEY, TEST_FLOOR_PUBLIC

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
SEED = 25


def test_every_dealer_of_the_truth_is_signed_in_and_out_by_the_table(harness: Harness) -> None:
    options = money_table(harness, decks=1, commission="payout")
    config = harness.tmp / "config.toml"
    config.write_text(config.read_text() + f'[floor]\nfloor_public_key = "{TEST_FLOOR_PUBLIC}"\n')
    entries = tuple(StaffEntry(id=i, role="dealer", badge=format_uid(uid)) for i, uid in staff(SEED))
    listed = StaffList.signed(TEST_FLOOR_KEY, "casino", "2026-12-01T06:00:00.000Z", entries)
    staff_list_path(harness.journal).write_text(listed.to_json())  # the last list the table verified
    script = harness.tmp / "faults.jsonl"
    script.write_text(json.dumps({"at_coup": 2, "fault": "unknown_badge", "shoe": 1}) + "\n")
    harness.start_sim(
        "--decks", "1", "--spots-link", str(harness.tmp / "spots"), "--players", "3", "--shoes", "1",
        "--dealer-swap", "3", "--script", str(script), pace="0.03", seed=SEED,
    )  # fmt: skip
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=180) == 0
    assert harness.daemon is not None and harness.daemon.poll() is None, "the table died"
    assert harness.stop_daemon() == 0
    truth = harness.truth_events()
    with Journal.open(harness.journal, read_only=True) as journal:
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
    said = [(e["event"], e["staff_id"]) for e in truth if e["event"] in ("dealer_in", "dealer_out")]
    journaled = [(k, b["staff_id"]) for k, b in records if k in ("dealer_in", "dealer_out")]
    assert len(said) >= 5, "the dealers were hardly swapped"
    assert journaled == said
    assert {b["reason"] for k, b in records if k == "dealer_out"} == {"badge_out"}
    unknown = [e["badge"] for e in truth if e["event"] == "fault" and e["kind"] == "unknown_badge"]
    assert [b["badge"] for k, b in records if k == "badge_refused"] == unknown and len(unknown) == 1
