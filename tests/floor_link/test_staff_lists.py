"""The floor link's side of the staff list: each payload on ``baccarat/<site>/floor/staff`` is bounded, validated
and verified before the table hears of it; a refused one is counted by reason (the link's metric) and the list
believed stays; the same list again is no news. (Over a real broker and link: tests/e2e/test_staff_list_e2e.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from controller.config import FloorSection
from controller.journal import Journal
from controller.link.floor_link import FloorLink
from controller.link.metrics import link_gauges
from floor_protocol.signing import generate_key
from floor_protocol.staff import MAX_STAFF_BYTES, StaffEntry, StaffList
from tests.floor_link.floorside import TEST_FLOOR_KEY

ENTRIES = (StaffEntry(id="D1", role="dealer", badge="0004A1B2C3D4E501"),)


class Feed:
    connected = True


def test_only_a_list_the_floor_signed_for_this_site_reaches_the_table(tmp_path: Path) -> None:
    Journal.open(tmp_path / "j.db").close()
    settings = FloorSection.model_validate(
        {"enabled": True, "broker": "mqtt://127.0.0.1:1", "site": "s1", "table": "t1"}
    )
    posted: list[StaffList] = []
    link = FloorLink(
        settings,
        tmp_path / "j.db",
        lambda ack: None,
        post_staff=posted.append,
        key=generate_key(),
        floor_key=TEST_FLOOR_KEY.public_key(),
        signer_process=False,
    )
    good = StaffList.signed(TEST_FLOOR_KEY, "s1", "2026-12-01T06:00:00.000Z", ENTRIES)
    link._staff_heard(good.to_json().encode())
    link._staff_heard(good.to_json().encode())  # the same again (a reconnect's retained copy): no news
    assert posted == [good] and link.staff == good
    refusals = [
        StaffList.signed(generate_key(), "s1", "2026-12-02T06:00:00.000Z", ENTRIES).to_json().encode(),  # wrong key
        json.dumps(good.to_dict() | {"sig": "A" * 88}).encode(),  # not the floor's signature
        StaffList.signed(TEST_FLOOR_KEY, "s2", "2026-12-02T06:00:00.000Z", ENTRIES).to_json().encode(),
        json.dumps(good.to_dict() | {"v": 2}).encode(),  # another version
        b"x" * (MAX_STAFF_BYTES + 1),
        b"{not json",
        # an older list the floor did sign, said again (a replay): the dealer it names may be struck off since
        StaffList.signed(TEST_FLOOR_KEY, "s1", "2026-11-30T06:00:00.000Z", ENTRIES).to_json().encode(),
    ]
    for payload in refusals:
        link._staff_heard(payload)
    assert posted == [good] and link.staff == good  # the list believed stays
    assert link.staff_refusals == {"bad_signature": 2, "wrong_site": 1, "malformed": 2, "too_long": 1, "stale": 1}
    registry = CollectorRegistry()
    link_gauges(registry, link, Feed())
    text = generate_latest(registry).decode()
    assert 'shoe_floor_staff_lists_refused_total{reason="bad_signature"} 2.0' in text
    assert 'shoe_floor_staff_lists_refused_total{reason="too_long"} 1.0' in text
    assert 'shoe_floor_staff_lists_refused_total{reason="stale"} 1.0' in text
    newer = StaffList.signed(TEST_FLOOR_KEY, "s1", "2026-12-01T07:00:00.000Z", ())  # D1 struck off
    link._staff_heard(newer.to_json().encode())
    assert posted == [good, newer]
