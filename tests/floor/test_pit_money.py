"""This shift's money on the pit's tiles equals the accounting's shift report for the same shift.

A real journal (the demo's seven players: real wagers and settlements) is archived half-way through the real
surveillance step with the real :class:`floor.accounting.Accounting` watch, on both archives; a pit started then
seeds each tile's handle and win from :func:`floor.accounting.shift_report`; the rest of the journal reaches it
live (:meth:`Pit.on_message`, the broker callback's entry) while the archive takes it too. At every step the
tile's figures are the report's. A record of a later shift starts that shift's figures afresh, and a record of
an earlier shift (late) leaves this shift's alone.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from controller.game.records import TableRecord
from floor.accounting import Accounting, shift_report
from floor.archive import Archive
from floor.pit import Pit
from floor.shifts import ShiftPlan, parse_time
from floor.surveillance import Surveillance
from tests.floor.feeding import archive_in_steps

PLAN = ShiftPlan.parse("06:00,14:00,22:00", "UTC")
TOPIC = "baccarat/s1/T1/record"


def tile_money(pit: Pit, table: str = "T1") -> tuple[int, int, int, int]:
    m = next(t for t in pit.snapshot()["tables"] if t["table"] == table)["money"]
    return m["handle"], m["win"], m["commission_collected"], m["wagers"]


def report_money(archive: Archive, at: str) -> tuple[int, int, int, int]:
    shift = PLAN.shift_of(parse_time(at))
    (f,) = [f for f in shift_report(archive, PLAN, shift.start, shift.end) if f.table == "T1"]
    return f.handle, f.win, f.commission_collected, f.wagers


def test_the_tile_s_shift_figures_are_the_shift_report_s(archive_url: str, journal_records: list[TableRecord]) -> None:
    records = journal_records
    half = len(records) // 2
    with Archive(archive_url) as archive:
        surveillance = Surveillance(archive, watches=[Accounting(PLAN)])
        archive_in_steps(archive, surveillance, records[:half], step=97)
        wall = int(parse_time(records[-1].at).timestamp() * 1000)
        pit = Pit(archive_url, wall_ms=lambda: wall, plan=PLAN)
        try:
            seeded = tile_money(pit)
            assert seeded[0] > 0, "the first half of the shoe has settled wagers"
            assert seeded == report_money(archive, records[half - 1].at)
            for r in records[half:]:
                pit.on_message(TOPIC, r.to_json().encode())
            archive_in_steps(archive, surveillance, records[half:], step=97)
            assert tile_money(pit) == report_money(archive, records[-1].at)
            assert tile_money(pit)[0] > seeded[0]
            assert tile_money(pit)[0] == sum(r.body["stake"] for r in records if r.kind == "settlement")
        finally:
            pit.close()


def _at(record: TableRecord, hours: float) -> TableRecord:
    moment = parse_time(record.at) + timedelta(hours=hours)
    return replace(record, at=moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


def test_a_later_shift_starts_afresh_and_a_late_record_is_not_this_shift_s(
    tmp_path: Path, journal_records: list[TableRecord]
) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    settlements = [r for r in journal_records if r.kind == "settlement"]
    first, second, third = settlements[0], settlements[1], settlements[2]
    wall = int(parse_time(first.at).timestamp() * 1000)
    pit = Pit(url, wall_ms=lambda: wall, plan=PLAN)
    try:
        pit.on_message(TOPIC, first.to_json().encode())
        assert tile_money(pit)[0] == first.body["stake"]
        pit.on_message(TOPIC, _at(second, -8).to_json().encode())  # the shift before: late, not counted here
        assert tile_money(pit)[0] == first.body["stake"]
        pit.on_message(TOPIC, _at(third, 8).to_json().encode())  # the next shift: its own figures
        handle, win, _c, wagers = tile_money(pit)
        assert (handle, win, wagers) == (third.body["stake"], -third.body["net"], 1)
        shift = next(t for t in pit.snapshot()["tables"] if t["table"] == "T1")["money"]["shift"]
        assert shift == PLAN.shift_of(parse_time(third.at) + timedelta(hours=8)).name
    finally:
        pit.close()
