"""The floor's staff list (floor_protocol/staff.py): read from a broker the table does not control, so bounded,
validated, versioned and verified; the same registry signs to the same bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from floor.archive.staff import STAFF_ROLES as REGISTRY_ROLES
from floor.passwords import hash_secret
from floor_protocol.signing import generate_key
from floor_protocol.staff import (
    MAX_STAFF,
    MAX_STAFF_BYTES,
    STAFF_ROLES,
    StaffEntry,
    StaffList,
    StaffListError,
    parse_staff,
)
from floor_protocol.topics import parse_topic, staff_topic

PIN = hash_secret("4321")
ENTRIES = (
    StaffEntry(id="D2", role="dealer", badge="04A1B2C3D4E502", pin_hash=None),
    StaffEntry(id="D1", role="dealer", badge="0004A1B2C3D4E501", pin_hash=PIN),
    StaffEntry(id="S1", role="supervisor", badge=None, pin_hash=PIN),
)


def signed(key: Any = None, **change: Any) -> StaffList:
    return StaffList.signed(key or generate_key(), change.get("site", "casino"), "2026-12-01T06:00:00.000Z", ENTRIES)


def test_the_roles_are_the_registrys() -> None:
    assert tuple(REGISTRY_ROLES) == STAFF_ROLES


def test_the_topic_is_the_floors_own_and_no_tables() -> None:
    assert staff_topic("casino") == "baccarat/casino/floor/staff"
    assert parse_topic(staff_topic("casino")) is None  # no table's leaf: the collector and the pit never take it


def test_a_signed_list_reads_back_and_verifies_with_the_floors_key_only() -> None:
    floor, other = generate_key(), generate_key()
    staff = signed(floor)
    assert [e.id for e in staff.staff] == ["D1", "D2", "S1"]  # by id: the same registry, the same bytes
    back = parse_staff(staff.to_json())
    assert back == staff and back.verify(floor.public_key())
    assert not back.verify(other.public_key())  # the wrong key
    assert signed(floor).to_json() == staff.to_json()  # deterministic: every collector publishes the same
    assert "name" not in staff.to_json()
    assert back.by_badge()["0004A1B2C3D4E501"].id == "D1"


@pytest.mark.parametrize(
    "change",
    [
        {"site": "other"},
        {"as_of": "2026-12-02T06:00:00.000Z"},
        {"staff": [{"id": "D9", "role": "dealer", "badge": "0004A1B2C3D4E501", "pin_hash": None}]},
        {"staff": []},
    ],
)
def test_changing_anything_signed_breaks_the_signature(change: dict[str, Any]) -> None:
    floor = generate_key()
    forged = parse_staff(json.dumps(signed(floor).to_dict() | change))
    assert not forged.verify(floor.public_key())


def test_an_unsigned_list_does_not_verify() -> None:
    floor = generate_key()
    data = signed(floor).to_dict() | {"sig": "A" * 88}
    assert not parse_staff(json.dumps(data)).verify(floor.public_key())
    with pytest.raises(StaffListError, match="sig"):
        parse_staff(json.dumps(signed(floor).to_dict() | {"sig": ""}))


def _bad(**change: Any) -> bytes:
    return json.dumps(signed().to_dict() | change).encode()


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b"x" * (MAX_STAFF_BYTES + 1), "bytes"),
        (b"not json", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b"[" * 100_000, "nested|not JSON"),
        (_bad(v=2), "version"),
        (_bad(v="1"), "version"),
        (_bad(site="a/b"), "site"),
        (_bad(extra=1), "extra"),
        (_bad(staff=[{"id": "D1", "role": "croupier"}]), "role"),
        (_bad(staff=[{"id": "D1", "role": "dealer", "name": "Ann"}]), "name"),
        (_bad(staff=[{"id": "D1", "role": "dealer", "badge": "04a1b2c3"}]), "badge"),
        (_bad(staff=[{"id": "D1", "role": "dealer", "pin_hash": "1234"}]), "pin_hash"),
        (_bad(staff=[{"id": "D1", "role": "dealer"}, {"id": "D1", "role": "supervisor"}]), "id twice"),
        (
            _bad(
                staff=[
                    {"id": "D1", "role": "dealer", "badge": "04A1B2C3"},
                    {"id": "D2", "role": "dealer", "badge": "04A1B2C3"},
                ]
            ),
            "badge twice",
        ),
        (_bad(staff=[{"id": f"D{i}", "role": "dealer"} for i in range(MAX_STAFF + 1)]), "staff"),
    ],
    # named by what is wrong: a payload's bytes carry a fresh key's signature, which would make the test's id
    # differ from one xdist worker's collection to the other's
    ids=lambda value: value if isinstance(value, str) else "payload",
)
def test_what_is_not_a_staff_list_is_refused_in_one_line(payload: bytes, why: str) -> None:
    with pytest.raises(StaffListError, match=why) as caught:
        parse_staff(payload)
    assert "\n" not in str(caught.value) and len(str(caught.value)) <= 200
