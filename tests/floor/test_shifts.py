"""The casino's shifts (floor/shifts.py): boundaries in local time, across midnight and daylight saving."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from floor.shifts import ShiftError, ShiftPlan, bucket_of, bucket_time, parse_time


def test_three_shifts_in_utc() -> None:
    plan = ShiftPlan.parse("06:00,14:00,22:00")
    s = plan.shift_of(datetime(2026, 12, 1, 3, 0, tzinfo=UTC))
    assert (s.start, s.end) == (datetime(2026, 11, 30, 22, tzinfo=UTC), datetime(2026, 12, 1, 6, tzinfo=UTC))
    assert s.name == "2026-11-30 22:00 UTC"
    assert s.buckets() == ("2026-11-30T22:00Z", "2026-12-01T06:00Z")


def test_a_local_plan_follows_daylight_saving() -> None:
    plan = ShiftPlan.parse("02:00,10:00,18:00", "Europe/London")
    # 2026-03-29: the clocks go forward at 01:00 UTC; the night shift starting 18:00 GMT on the 28th ends at
    # 02:00 BST = 01:00 UTC, seven hours later.
    night = plan.shift_of(datetime(2026, 3, 28, 23, tzinfo=UTC))
    assert night.start == datetime(2026, 3, 28, 18, tzinfo=UTC)
    assert night.end == datetime(2026, 3, 29, 1, tzinfo=UTC)
    summer = plan.shift_of(datetime(2026, 7, 1, 9, tzinfo=UTC))
    assert summer.start == datetime(2026, 7, 1, 9, tzinfo=UTC) and summer.name == "2026-07-01 10:00 BST"


@given(st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1)))
def test_every_moment_lies_in_exactly_one_shift(naive: datetime) -> None:
    plan = ShiftPlan.parse("06:00,14:15,22:30", "America/New_York")
    moment = naive.replace(tzinfo=UTC)
    s = plan.shift_of(moment)
    assert s.contains(moment)
    assert plan.shift_of(s.end).start == s.end  # the next shift starts where this one ends
    assert timedelta(hours=6) <= s.end - s.start <= timedelta(hours=10)
    assert bucket_time(bucket_of(moment)) <= moment < bucket_time(bucket_of(moment)) + timedelta(minutes=15)


def test_shifts_over_a_range() -> None:
    plan = ShiftPlan.parse()
    found = list(plan.shifts(parse_time("2026-12-01"), parse_time("2026-12-02")))
    assert [s.name for s in found] == [
        "2026-11-30 22:00 UTC",
        "2026-12-01 06:00 UTC",
        "2026-12-01 14:00 UTC",
        "2026-12-01 22:00 UTC",
    ]


@pytest.mark.parametrize(
    ("shifts", "zone", "says"),
    [
        ("6:00", "UTC", "not HH:MM"),
        ("06:10", "UTC", "quarter hour"),
        ("06:00,06:00", "UTC", "twice"),
        ("06:00", "Mars/Olympus", "unknown time zone"),
    ],
)
def test_a_bad_plan_is_one_line(shifts: str, zone: str, says: str) -> None:
    with pytest.raises(ShiftError, match=says):
        ShiftPlan.parse(shifts, zone)


def test_a_bad_time_is_one_line() -> None:
    with pytest.raises(ShiftError, match="not an ISO"):
        parse_time("yesterday")
