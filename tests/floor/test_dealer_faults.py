"""``shoe-floor faults --by-dealer`` on a real archive: a table's journal in which dealer D1 deals a coup with a
past-post and a pulled bet, D2 takes over (a swap, the next shift) and deals a coup with an underpay, a loser left
and a misdraw; each fault is counted for the dealer on duty when it happened, per shift."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.game.records import InputKind, TableRecord, input_body, record_body
from controller.game.staff import Roster
from controller.game.table import DeclarePressed, TableState
from controller.journal import Journal
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from floor.archive import Archive
from tests.floor.conftest import shoe_floor
from tests.game.money import PLAYER_NATURAL, cards, every_money_kind, money, table_rules

D1, D2 = "0004A1B2C3D4E501", "0004A1B2C3D4E502"


def dealt_journal(path: Path) -> list[TableRecord]:
    """The journal (see the module's docstring), as the table publishes its records."""
    wall = ["2026-12-01T13:50:00.000+00:00"]
    with Journal.open(path) as journal:
        loop = TableLoop(
            TableState(table_rules(money(leave_after_coups=1))),
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            config=LoopConfig(wall=lambda: wall[0]),
        )
        loop.staff.roster = Roster.of([("D1", "dealer", D1), ("D2", "dealer", D2)], "2026-12-01T06:00:00.000Z")

        def badge(uid: str, present: bool) -> None:
            notices = loop.badge(uid, present)
            loop._apply(None, record_body(InputKind.DEALER_CARD, uid=uid, present=present), None, None, notices=notices)

        events = every_money_kind()
        declared = next(i for i, e in enumerate(events) if isinstance(e, DeclarePressed))
        loop._apply(events[0], input_body(events[0]), None, None)  # NEW SHOE
        badge(D1, True)
        for event in events[1 : declared + 1]:  # coup 1: a past-post, a pulled bet
            loop._apply(event, input_body(event), None, None)
        loop.flush()
        wall[0] = "2026-12-01T14:10:00.000+00:00"  # the next shift
        badge(D2, True)  # the swap, between coups
        for event in events[declared + 1 :]:  # the payouts (an underpay, a loser left), coup 2's lock
            loop._apply(event, input_body(event), None, None)
        for event in [*cards(PLAYER_NATURAL[1:]), *cards(("2H",))]:  # ... and a misdraw
            loop._apply(event, input_body(event), None, None)
        loop._apply(DeclarePressed(), input_body(DeclarePressed()), None, None)
        loop.flush()
        return [r.for_floor("T1") for r in journal.records()]


@pytest.fixture
def archive(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/archive.db"
    with Archive(url) as a:
        a.store(dealt_journal(tmp_path / "t1.db"))
    return url


def by_dealer(url: str, *extra: str) -> list[dict[str, object]]:
    got = shoe_floor("faults", "--archive", url, "--from", "2026-12-01T06:00Z", "--to", "2026-12-02T06:00Z",
                     "--shifts", "06:00,14:00,22:00", "--by-dealer", "--json", *extra)  # fmt: skip
    assert got.returncode == 0, got.stderr
    return [json.loads(line) for line in got.stdout.splitlines()]


def test_each_fault_is_the_dealer_on_duty_when_it_happened(archive: str) -> None:
    rows = by_dealer(archive)
    assert [(r["shift"], r["table"], r["dealer"]) for r in rows] == [
        ("2026-12-01 06:00 UTC", "T1", "D1"),
        ("2026-12-01 14:00 UTC", "T1", "D2"),
    ]
    d1, d2 = rows
    assert (d1["coups"], d1["past_posts"], d1["pulled_bets"], d1["mispays"], d1["misdraws"]) == (1, 1, 1, 0, 0)
    assert (d2["coups"], d2["past_posts"], d2["mispays"], d2["misdraws"]) == (1, 0, 2, 1)
    assert int(str(d2["mispay_cents"])) > 0 and d2["faults_per_100_coups"] == 300.0


def test_the_range_and_the_table_filter_what_is_counted(archive: str) -> None:
    late = shoe_floor("faults", "--archive", archive, "--from", "2026-12-01T14:00Z", "--to", "2026-12-01T22:00Z",
                      "--by-dealer", "--json")  # fmt: skip
    assert [json.loads(x)["dealer"] for x in late.stdout.splitlines()] == ["D2"]  # D1's duty began before
    assert by_dealer(archive, "--table", "T2") == []
    text = shoe_floor("faults", "--archive", archive, "--from", "2026-12-01T06:00Z", "--to", "2026-12-02T06:00Z",
                      "--by-dealer")  # fmt: skip
    lines = text.stdout.splitlines()
    assert lines[0].split()[:4] == ["shift", "table", "dealer", "coups"] and len(lines) == 3
    assert " D2 " in lines[2]
