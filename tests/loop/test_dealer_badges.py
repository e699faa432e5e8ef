"""The dealer on duty at the table: the floor's staff list verified and kept by the table, a badge at the dealer's
position (over the bet-spot reader's real session) signing a dealer in and out, a badge not on the list refused
(a record, and UNKNOWN BADGE on the dealer's displays for a while), and the duty and the list kept over a restart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import Alarm, TableRules, TableState
from controller.game.wagers import MoneyRules
from controller.journal import Journal
from controller.table.loop import LoopConfig, ReaderPort, ShoePort, StaffListIn, TableLoop, WireBytes
from controller.table.loop.resume import on_duty
from controller.table.loop.shell_alarms import BADGE_HOLD
from controller.table.spot_wire import SpotWire
from controller.table.staff_list import StaffListKeeper, staff_list_path
from controller.table.wire import AsciiWire
from firmware_protocol.session import ControllerSession, ShoeSession
from firmware_protocol.spots import DEALER_POSITION, READER, CardIn, CardOut
from floor_protocol.signing import generate_key
from floor_protocol.staff import StaffEntry, StaffList

REGISTRY = ChipRegistry([ChipRange(0x1000, 0x1FFF, 2500, ChipStatus.IN_PLAY)])
RULES = TableRules(burn_rule=BurnRule(BurnMode.NONE), money=MoneyRules(seats=9))
FLOOR = generate_key()
D1, D2, UNKNOWN = 0x0004A1B2C3D4E501, 0x0004A1B2C3D4E502, 0x0004A1B2C3D4E5FF


def staff_list(
    key: Ed25519PrivateKey = FLOOR, site: str = "casino", as_of: str = "2026-12-01T06:00:00.000Z"
) -> StaffList:
    entries = (
        StaffEntry(id="D1", role="dealer", badge="04A1B2C3D4E501"),
        StaffEntry(id="D2", role="dealer", badge="0004A1B2C3D4E502"),
    )
    return StaffList.signed(key, site, as_of, entries)


class NoPort:
    def fileno(self) -> tuple[int, int] | None:
        return None

    def read(self, size: int = 512) -> bytes | None:
        return b""


@dataclass
class Table:
    loop: TableLoop
    journal: Journal
    device: ShoeSession
    now: list[float]

    def badge(self, uid: int, present: bool) -> None:
        self.device.send((CardIn if present else CardOut)(DEALER_POSITION, uid), self.now[0])
        self.loop.handle(WireBytes(self.device.poll(self.now[0]), self.now[0], device="reader"))
        self.loop.flush()

    def records(self, kind: str) -> list[dict[str, Any]]:
        return [json.loads(r.body) for r in self.journal.records() if r.kind == kind]


def open_table(path: Path, device: ShoeSession | None = None) -> tuple[TableLoop, Journal, list[float]]:
    journal = Journal.open(path / "j.db")
    keeper = StaffListKeeper(staff_list_path(path / "j.db"), FLOOR.public_key(), "casino")
    keeper.load()
    now = [0.0]
    reader = ReaderPort(NoPort(), SpotWire(REGISTRY, ControllerSession(dialect=READER)), lambda data: None)
    loop = TableLoop(
        TableState(RULES),
        journal,
        [ShoePort(AsciiWire(), lambda data: None), reader],
        config=LoopConfig(clock=lambda: now[0], staff=keeper, duty=on_duty(journal)),
    )
    return loop, journal, now


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    loop, journal, now = open_table(tmp_path)
    device = ShoeSession(0xBE7, dialect=READER)
    device.start(0.0)
    try:
        yield Table(loop, journal, device, now)
    finally:
        journal.close()


def test_a_verified_list_is_kept_and_signs_the_dealers_in(table: Table, tmp_path: Path) -> None:
    table.loop.handle(StaffListIn(staff_list()))
    assert table.loop.staff.current == staff_list()
    kept = staff_list_path(tmp_path / "j.db")
    assert StaffList.verify(json_list(kept), FLOOR.public_key())
    table.badge(D1, True)
    table.badge(D2, True)  # the swap
    table.badge(D2, False)
    assert table.records("dealer_in") == [
        {"shoe": 1, "coup": 1, "staff_id": "D1", "role": "dealer", "badge": "0004A1B2C3D4E501",
         "staff_as_of": "2026-12-01T06:00:00.000Z"},
        {"shoe": 1, "coup": 1, "staff_id": "D2", "role": "dealer", "badge": "0004A1B2C3D4E502",
         "staff_as_of": "2026-12-01T06:00:00.000Z"},
    ]  # fmt: skip
    assert [b["reason"] for b in table.records("dealer_out")] == ["replaced", "badge_out"]
    inputs = [b for _id, b in table.journal.inputs() if b["kind"] == "dealer_card"]
    assert len(inputs) == 3  # each badge's input is journaled, with its records derived from it


def json_list(path: Path) -> StaffList:
    from floor_protocol.staff import parse_staff

    return parse_staff(path.read_bytes())


def test_a_badge_not_on_the_list_is_refused_and_shown_to_the_dealer(table: Table) -> None:
    table.loop.handle(StaffListIn(staff_list()))
    table.badge(D1, True)
    table.badge(UNKNOWN, True)
    [refused] = table.records("badge_refused")
    assert refused["why"] == "unknown_badge" and refused["badge"] == "0004A1B2C3D4E5FF"
    assert Alarm.UNKNOWN_BADGE in table.loop.view().alarms
    assert table.loop.duty.on_duty == "D1"  # the dealer on duty stays
    table.now[0] += BADGE_HOLD + 0.1
    table.loop._check_dropped()  # the loop's once-an-iteration look: the hold is over
    assert Alarm.UNKNOWN_BADGE not in table.loop.view().alarms


def test_a_list_not_signed_by_the_floor_or_of_another_site_is_refused_and_counted(table: Table) -> None:
    table.loop.handle(StaffListIn(staff_list()))
    table.loop.handle(StaffListIn(staff_list(key=generate_key(), as_of="2026-12-02T06:00:00.000Z")))
    table.loop.handle(StaffListIn(staff_list(site="elsewhere")))
    assert table.loop.staff.refused == {"bad_signature": 1, "wrong_site": 1}
    assert table.loop.staff.current == staff_list()  # the list kept stays


def test_an_older_list_than_the_one_kept_is_refused_and_counted(table: Table, tmp_path: Path) -> None:
    """A list the floor once signed, said again after a newer one (a replay by whoever may publish on the
    staff topic): refused, counted, and the newer one stays, in memory and on disk."""
    newer = staff_list(as_of="2026-12-02T06:00:00.000Z")
    table.loop.handle(StaffListIn(newer))
    table.loop.handle(StaffListIn(staff_list()))  # as of 2026-12-01: older
    assert table.loop.staff.refused == {"stale": 1}
    assert table.loop.staff.current == newer
    assert json_list(staff_list_path(tmp_path / "j.db")) == newer


def test_without_a_list_every_badge_is_refused(table: Table) -> None:
    table.badge(D1, True)
    assert [b["why"] for b in table.records("badge_refused")] == ["unknown_badge"]
    assert table.records("dealer_in") == []


def test_the_list_and_the_dealer_on_duty_survive_a_restart_with_the_floor_away(tmp_path: Path) -> None:
    loop, journal, now = open_table(tmp_path)
    device = ShoeSession(0xBE7, dialect=READER)
    device.start(0.0)
    first = Table(loop, journal, device, now)
    loop.handle(StaffListIn(staff_list()))
    first.badge(D1, True)
    journal.close()
    loop, journal, now = open_table(tmp_path)  # no link, no floor: the list from its file
    try:
        assert loop.staff.current == staff_list() and loop.duty.on_duty == "D1"
        again = Table(loop, journal, ShoeSession(0xBE8, dialect=READER), now)
        again.device.start(0.0)
        again.badge(D1, False)
        assert [b["reason"] for b in again.records("dealer_out")] == ["badge_out"]
    finally:
        journal.close()


def test_a_kept_list_changed_by_hand_is_refused_at_start(tmp_path: Path) -> None:
    path = staff_list_path(tmp_path / "j.db")
    data = staff_list().to_dict()
    data["staff"][0]["role"] = "supervisor"
    path.write_text(json.dumps(data))
    keeper = StaffListKeeper(path, FLOOR.public_key(), "casino")
    keeper.load()
    assert keeper.current is None and keeper.refused == {"bad_signature": 1}
