"""commandline/times.py: a record's time as local time with its zone (docs/notation.md)."""

from __future__ import annotations


def test_a_record_time_reads_as_local_time_with_its_zone() -> None:
    from zoneinfo import ZoneInfo

    from commandline.times import local_time_text

    london = ZoneInfo("Europe/London")
    assert local_time_text("2026-12-01T17:04:05.123Z", london) == "2026-12-01 17:04:05 GMT"
    assert local_time_text("2026-07-01T17:04:05Z", london) == "2026-07-01 18:04:05 BST"  # the summer's offset
    assert local_time_text("2026-12-01T17:04:05Z", ZoneInfo("Asia/Macau")) == "2026-12-02 01:04:05 CST"
    assert local_time_text("not a time") == "not a time"
