"""Supervisor approvals through the real daemon: ``shoe-sim --players 3 --dealer-swap 3 --buy-ins money.sock`` with
two unreadable cards (two halted coups, each voided by the dealer's VOID) against ``shoe-controller run`` whose
staff list (signed by the floor's key, kept beside its journal) holds the simulator's dealers, its supervisor
and its pit manager with their PINs' real Argon2 hashes. Each void waits for the simulated supervisor, who
answers the dealer screen's money line: a badge at the dealer's position, then the PIN on ``money.sock``. At the
first, the scripted ``wrong_pin`` fault: three wrong PINs, the supervisor locked out, the pit manager approves
(and the second too: the lock lasts until the floor's next staff list).
Every halted coup is voided once, after its approval, and every step is in the journal; never a PIN."""

from __future__ import annotations

import json

import pytest

from controller.game.chips import format_uid
from controller.journal import Journal
from controller.table.staff_list import staff_list_path
from floor.passwords import hash_secret
from floor_protocol.staff import StaffEntry, StaffList
from hw_sim.money import approvers, staff
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table
from tests.floor_link.floorside import TEST_FLOOR_KEY, TEST_FLOOR_PUBLIC

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
SEED = 25


def test_each_halted_coup_is_voided_once_a_supervisor_approves(harness: Harness) -> None:
    options = money_table(harness, decks=1, commission="payout")
    config = harness.tmp / "config.toml"
    config.write_text(config.read_text() + f'[floor]\nfloor_public_key = "{TEST_FLOOR_PUBLIC}"\n')
    entries = [StaffEntry(id=i, role="dealer", badge=format_uid(uid)) for i, uid in staff(SEED)]
    pins = {i: pin for i, _role, _uid, pin in approvers(SEED)}
    entries += [
        StaffEntry(id=i, role=role, badge=format_uid(uid), pin_hash=hash_secret(pin))  # type: ignore[arg-type]
        for i, role, uid, pin in approvers(SEED)
    ]
    listed = StaffList.signed(TEST_FLOOR_KEY, "casino", "2026-12-03T06:00:00.000Z", tuple(entries))
    staff_list_path(harness.journal).write_text(listed.to_json())  # the last list the table verified
    script = harness.tmp / "faults.jsonl"
    script.write_text(
        json.dumps({"at_card": 16, "fault": "unreadable"}) + "\n"
        + json.dumps({"at_card": 34, "fault": "unreadable"}) + "\n"
        + json.dumps({"at_coup": 1, "fault": "wrong_pin", "shoe": 1}) + "\n"
    )  # fmt: skip
    harness.start_sim(
        "--decks", "1", "--spots-link", str(harness.tmp / "spots"), "--players", "3", "--shoes", "1",
        "--dealer-swap", "3", "--buy-ins", str(harness.tmp / "money.sock"), "--script", str(script),
        pace="0.03", seed=SEED,
    )  # fmt: skip
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=240) == 0
    assert harness.daemon is not None and harness.daemon.poll() is None, "the table died"
    assert harness.stop_daemon() == 0
    truth = harness.truth_events()
    with Journal.open(harness.journal, read_only=True) as journal:
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
    voids = [b for k, b in records if k == "coup" and b["void"]]
    asked = [b for k, b in records if k == "approval_asked"]
    approved = [b for k, b in records if k == "approval"]
    assert len(voids) == 2 and len(asked) == 2, (voids, asked)
    assert [(b["shoe"], b["coup"]) for b in approved] == [(b["shoe"], b["coup"]) for b in voids]
    # S1 locked out at the first (until the floor's next staff list): the pit manager approves both
    assert [b["approver"] for b in approved] == ["P1", "P1"]
    refused = [(b["why"], b["staff_id"]) for k, b in records if k == "approval_refused"]
    assert refused == [("wrong_pin", "S1"), ("wrong_pin", "S1"), ("locked_out", "S1")]
    # Every voided coup follows its approval, never before it.
    order = [(k, b.get("coup")) for k, b in records if k in ("approval", "coup") and (k == "approval" or b["void"])]
    assert order == [(k, c) for v in voids for k, c in (("approval", v["coup"]), ("coup", v["coup"]))]
    pins_typed = [e for e in truth if e["event"] == "approval_pin"]
    assert [(e["staff_id"], e["right"]) for e in pins_typed][:4] == [("S1", False)] * 3 + [("P1", True)]
    # The dealers' duty is untouched by the supervisors' badges: truth and journal agree.
    said = [(e["event"], e["staff_id"]) for e in truth if e["event"] in ("dealer_in", "dealer_out")]
    assert [(k, b["staff_id"]) for k, b in records if k in ("dealer_in", "dealer_out")] == said
    data = harness.journal.read_bytes()
    assert not any(f'"{pin}"'.encode() in data for pin in pins.values())


def test_an_unreadable_card_keyed_on_the_dealer_screen_is_placed_once_a_supervisor_approves(harness: Harness) -> None:
    """``shoe-sim --key-cards``: at each unreadable coup card the dealer stops, keys the card on the dealer screen
    once the table offers KEY CARD, and the supervisor approves; no coup is voided, every coup the table declared
    has the cards the simulator dealt (the keyed ones where the reader failed), and the keyed cards are journaled
    as card_keyed inputs after their approvals."""
    options = money_table(harness, decks=1, commission="payout")
    config = harness.tmp / "config.toml"
    config.write_text(config.read_text() + f'[floor]\nfloor_public_key = "{TEST_FLOOR_PUBLIC}"\n')
    entries = [StaffEntry(id=i, role="dealer", badge=format_uid(uid)) for i, uid in staff(SEED)]
    entries += [
        StaffEntry(id=i, role=role, badge=format_uid(uid), pin_hash=hash_secret(pin))  # type: ignore[arg-type]
        for i, role, uid, pin in approvers(SEED)
    ]
    listed = StaffList.signed(TEST_FLOOR_KEY, "casino", "2026-12-03T06:00:00.000Z", tuple(entries))
    staff_list_path(harness.journal).write_text(listed.to_json())
    script = harness.tmp / "faults.jsonl"
    script.write_text(
        json.dumps({"at_card": 16, "fault": "unreadable"}) + "\n" + json.dumps({"at_card": 34, "fault": "unreadable"})
    )
    harness.start_sim(
        "--decks", "1", "--spots-link", str(harness.tmp / "spots"), "--players", "3", "--shoes", "1",
        "--dealer-swap", "3", "--buy-ins", str(harness.tmp / "money.sock"), "--script", str(script), "--key-cards",
        pace="0.03", seed=SEED,
    )  # fmt: skip
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=240) == 0
    assert harness.stop_daemon() == 0
    truth = harness.truth_events()
    unread = [e["card"] for e in truth if e["event"] == "fault" and e["kind"] == "unreadable"]
    assert len(unread) == 2
    assert [e["card"] for e in truth if e["event"] == "card_keyed"] == unread
    assert not [e for e in truth if e["event"] == "key_given_up"]
    with Journal.open(harness.journal, read_only=True) as journal:
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
    assert not [b for k, b in records if k == "coup" and b["void"]]  # no coup voided
    assert [(b["action"], b["card"]) for k, b in records if k == "approval_asked"] == [("key_card", c) for c in unread]
    assert [(b["action"], b["card"]) for k, b in records if k == "approval"] == [("key_card", c) for c in unread]
    keyed = [b["card"] for k, b in records if k == "input" and b["kind"] == "card_keyed"]
    assert keyed == unread
    # every coup the simulator settled is the table's, card for card (the keyed ones in the unread cards' places)
    dealt = [(e["coup"], e["player"], e["banker"]) for e in truth if e["event"] == "settle"]
    declared = [(b["coup"], b["player"], b["banker"]) for k, b in records if k == "coup" and b["declared"]]
    assert declared == dealt and len(dealt) >= 5
