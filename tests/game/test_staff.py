"""controller/game/staff.py: who is on duty, given the badges at the dealer's position, and who dealt record N."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from controller.game.records import derived_records
from controller.game.staff import (
    BadgeRefused,
    DealerIn,
    DealerOut,
    DutyBook,
    OutWhy,
    RefusedWhy,
    Roster,
    badge_key,
    dealers_by_record,
)

D1, D2, SUP, PIT = "0004A1B2C3D4E501", "0004A1B2C3D4E502", "0004A1B2C3D4E503", "0004A1B2C3D4E504"
ROSTER = Roster.of(
    [
        ("D1", "dealer", D1),
        ("D2", "dealer", "04A1B2C3D4E502"),
        ("S1", "supervisor", SUP),
        ("P1", "pit_manager", PIT),
        ("T1", "technician", None),
    ],
    "2026-12-01T06:00:00.000Z",
)


def test_a_badge_is_compared_as_sixteen_hex_digits_whatever_the_registry_wrote() -> None:
    assert badge_key("04a1b2c3d4e502") == badge_key("0004A1B2C3D4E502") == "0004A1B2C3D4E502"
    assert ROSTER.find(D2) is not None and ROSTER.find(D2).staff_id == "D2"  # type: ignore[union-attr]
    for bad in ("", "XYZ", "0" * 21, "04A1B2C"):
        with pytest.raises(ValueError, match="hex digits"):
            badge_key(bad)
    assert ROSTER.find("not hex") is None


def test_a_dealer_signs_in_and_out_with_the_badge() -> None:
    duty = DutyBook()
    assert duty.badge(ROSTER, D1, True, 1, 3) == [DealerIn(1, 3, "D1", "dealer", D1, ROSTER.as_of)]
    assert duty.on_duty == "D1"
    assert duty.badge(ROSTER, D1, True, 1, 3) == []  # the reader repeats its cards after a HELLO
    assert duty.badge(ROSTER, D2, False, 1, 4) == []  # a badge not on duty went out: nothing ends
    assert duty.badge(ROSTER, D1, False, 1, 4) == [DealerOut(1, 4, "D1", OutWhy.BADGE_OUT)]
    assert duty.on_duty is None
    assert duty.badge(ROSTER, D1, False, 1, 4) == []


def test_a_swap_signs_the_previous_dealer_out_first_and_costs_no_coup() -> None:
    duty = DutyBook()
    duty.badge(ROSTER, D1, True, 2, 10)
    assert duty.badge(ROSTER, D2, True, 2, 10) == [
        DealerOut(2, 10, "D1", OutWhy.REPLACED),
        DealerIn(2, 10, "D2", "dealer", D2, ROSTER.as_of),
    ]
    assert duty.on_duty == "D2"
    assert duty.badge(ROSTER, D1, False, 2, 11) == []  # the old badge taken out late ends nothing
    assert duty.badge(ROSTER, SUP, True, 2, 12)[-1] == DealerIn(2, 12, "S1", "supervisor", SUP, ROSTER.as_of)


@pytest.mark.parametrize(
    ("uid", "why"),
    [
        ("0004A1B2C3D4E5FF", RefusedWhy.UNKNOWN_BADGE),  # not on the list (unknown, or its member disabled)
        (PIT, RefusedWhy.NOT_A_DEALER),  # on it, in a role that does not deal
        ("garbage", RefusedWhy.UNKNOWN_BADGE),
    ],
)
def test_a_badge_that_signs_no_one_in_is_refused_and_the_dealer_on_duty_stays(uid: str, why: RefusedWhy) -> None:
    duty = DutyBook("D1", D1)
    assert duty.badge(ROSTER, uid, True, 1, 5) == [BadgeRefused(1, 5, uid, why, ROSTER.as_of)]
    assert duty.on_duty == "D1"


def test_without_a_staff_list_every_badge_is_refused() -> None:
    [refused] = DutyBook().badge(Roster(), D1, True, 1, 1)
    assert isinstance(refused, BadgeRefused) and refused.reason is RefusedWhy.UNKNOWN_BADGE
    assert refused.text == "UNKNOWN BADGE" and refused.staff_as_of == ""


def test_the_notices_become_their_records() -> None:
    duty = DutyBook()
    notices = [*duty.badge(ROSTER, D1, True, 1, 1), *duty.badge(ROSTER, D2, True, 1, 2)]
    notices += duty.badge(ROSTER, "0004A1B2C3D4E5FF", True, 1, 2)
    assert derived_records(notices) == [
        ("dealer_in", {"shoe": 1, "coup": 1, "staff_id": "D1", "role": "dealer", "badge": D1,
                       "staff_as_of": ROSTER.as_of}),
        ("dealer_out", {"shoe": 1, "coup": 2, "staff_id": "D1", "reason": "replaced"}),
        ("dealer_in", {"shoe": 1, "coup": 2, "staff_id": "D2", "role": "dealer", "badge": D2,
                       "staff_as_of": ROSTER.as_of}),
        ("badge_refused", {"shoe": 1, "coup": 2, "badge": "0004A1B2C3D4E5FF", "why": "unknown_badge",
                           "staff_as_of": ROSTER.as_of}),
    ]  # fmt: skip


def _journal() -> list[tuple[int, str, Mapping[str, object]]]:
    return [
        (1, "shoe", {}),
        (2, "coup", {}),  # before anyone signed in
        (3, "dealer_in", {"staff_id": "D1"}),
        (4, "coup", {}),
        (5, "past_post", {}),
        (6, "dealer_out", {"staff_id": "D1", "reason": "replaced"}),
        (7, "dealer_in", {"staff_id": "D2"}),
        (8, "mispay", {}),
        (9, "dealer_out", {"staff_id": "D1", "reason": "badge_out"}),  # not on duty: D2 stays
        (10, "commission", {}),
        (11, "dealer_out", {"staff_id": "D2", "reason": "badge_out"}),
        (12, "coup", {}),
    ]


def test_each_record_is_the_dealer_on_duty_when_it_was_written() -> None:
    assert dict(dealers_by_record(_journal())) == {
        1: None, 2: None, 3: "D1", 4: "D1", 5: "D1", 6: "D1", 7: "D2", 8: "D2", 9: "D2", 10: "D2", 11: "D2", 12: None,
    }  # fmt: skip


def test_attribution_reads_only_the_journal_order() -> None:
    """The same records, any coup or fault kind: only dealer_in and dealer_out move the duty."""
    records = _journal()
    renamed = [(seq, kind if kind.startswith("dealer_") else "alarm", body) for seq, kind, body in records]
    assert list(dealers_by_record(renamed)) == list(dealers_by_record(records))
