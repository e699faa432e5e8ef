"""``shoe-floor slips`` against both archives: the floor's rating slips of a real table journal
(tests/slip_journal.py) are the table's own (``shoe-controller slips``) plus ``table``, byte for byte; a player
who plays at a second table during a pause at the first has one visit with a slip at each; the filters keep
slips, they do not change them; bad input is one line."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from controller.game.slips import slip_line
from controller.journal import Journal
from floor.archive import Archive
from floor.slips import floor_slips, player_records
from tests.console import Result, run_main
from tests.floor.conftest import shoe_floor
from tests.slip_journal import CARD_A, CARD_B, CARD_C, START, slip_journal

#: Table T2's players: B (T1's B, away from T1 from 20:04 to 20:13) sits at T2 from 20:05 as its player A,
#: then two players of its own.
CARD_D, CARD_E = "E0040150D0000004", "E0040150E0000005"


def table(*args: str) -> Result:
    return run_main(["shoe-controller", *args])


def records(path: Path, name: str) -> list[TableRecord]:
    with Journal.open(path, create=False, read_only=True) as j:
        return [r.for_floor(name) for r in j.records()]


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("slip-journals")
    slip_journal(where / "t1.db").close()
    slip_journal(where / "t2.db", (CARD_B, CARD_D, CARD_E), START + timedelta(minutes=5)).close()
    return where / "t1.db", where / "t2.db"


def with_table(line: str, name: str) -> str:
    return json.dumps(json.loads(line) | {"table": name}, sort_keys=True, separators=(",", ":"))


@pytest.mark.dialects
def test_one_tables_floor_slips_are_the_tables_own_plus_table(archive_url: str, journals: tuple[Path, Path]) -> None:
    t1, _t2 = journals
    with Archive(archive_url) as a:
        a.store(records(t1, "T1"))
    for extra in ([], ["--open"]):
        own = table("slips", "--journal", str(t1), "--json", *extra)
        floor = shoe_floor("slips", "--archive", archive_url, "--json", *extra)
        assert floor.returncode == own.returncode == 0, floor.stderr
        assert floor.stdout.splitlines() == [with_table(x, "T1") for x in own.stdout.splitlines()]
        assert len(floor.stdout.splitlines()) == 2 + len(extra)
    text = shoe_floor("slips", "--archive", archive_url)
    assert text.stdout.splitlines()[1].startswith(f"T1         {CARD_A} 1,4 ")


@pytest.mark.dialects
def test_a_visit_across_two_tables_is_one_visit_with_a_slip_at_each(
    archive_url: str, journals: tuple[Path, Path]
) -> None:
    t1, t2 = journals
    with Archive(archive_url) as a:
        a.store(records(t2, "T2"))
        a.store(records(t1, "T1"))
    slips = [json.loads(x) for x in shoe_floor("slips", "--archive", archive_url, "--json").stdout.splitlines()]
    b = [s for s in slips if s["player_ref"] == CARD_B]
    assert [(s["table"], s["seats"]) for s in b] == [("T1", [2]), ("T2", [1, 4])]
    assert b[0]["visit_start"] == b[1]["visit_start"] == "2026-12-01T20:00:12.000+00:00"
    # T1's slips are still T1's own (B's slip there is its play there); T2's B slip names the visit's start at T1
    own_t1 = table("slips", "--journal", str(t1), "--json").stdout.splitlines()
    assert [json.dumps(s, sort_keys=True, separators=(",", ":")) for s in slips if s["table"] == "T1"] == [
        with_table(x, "T1") for x in own_t1
    ]
    own_t2 = [json.loads(x) for x in table("slips", "--journal", str(t2), "--json").stdout.splitlines()]
    assert [s["visit_start"] for s in own_t2 if s["player_ref"] == CARD_B] == ["2026-12-01T20:05:12.000+00:00"]
    # ... and the filters keep slips without changing them
    only = shoe_floor("slips", "--archive", archive_url, "--json", "--table", "T2", "--player", CARD_B)
    assert [json.loads(x) for x in only.stdout.splitlines()] == [b[1]]
    late = shoe_floor("slips", "--archive", archive_url, "--json", "--since", "2026-12-01T20:10:00Z")
    assert {(s["table"], s["player_ref"]) for s in map(json.loads, late.stdout.splitlines())} == {
        ("T1", CARD_B),
        ("T2", CARD_B),
        ("T2", CARD_D),
    }
    assert CARD_C not in shoe_floor("slips", "--archive", archive_url, "--json").stdout  # still seated: open


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--since", "soon"], "--since"),
        (["--house-edge", "0.9"], "--house-edge"),
        (["--window-minutes", "x"], "--window-minutes"),
    ],
)
def test_bad_input_is_one_line(archive_url: str, args: list[str], said: str) -> None:
    Archive(archive_url).close()
    r = shoe_floor("slips", "--archive", archive_url, *args)
    assert r.returncode == 2 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.dialects
def test_one_players_slips_read_only_where_they_sat_are_the_same_slips(
    archive_url: str, journals: tuple[Path, Path]
) -> None:
    """``--player REF`` reads the player's tables between their first record and the coup after their last
    (floor.slips.player_records): the same lines as every slip filtered to that player, open ones included."""
    t1, t2 = journals
    with Archive(archive_url) as a:
        a.store(records(t1, "T1"))
        a.store(records(t2, "T2"))
        every = floor_slips(a, include_open=True)
        refs = {s.player_ref for s in every}
        assert refs == {CARD_A, CARD_B, CARD_C, CARD_D, CARD_E}
        for ref in sorted(refs):
            for include_open in (False, True):
                want = [slip_line(s, table=True) for s in every if s.player_ref == ref and (include_open or not s.open)]
                got = [slip_line(s, table=True) for s in floor_slips(a, player=ref, include_open=include_open)]
                assert got == want, ref
        # ... and reads less: T2's money is not read for A, who never sat there
        seen = {(r.table, r.kind) for r in player_records(a, CARD_A)}
        assert ("T2", "wager") not in seen and ("T1", "wager") in seen
        a_money = [r for r in player_records(a, CARD_A) if r.kind == "wager"]
        assert len(a_money) < sum(1 for r in a.records("T1") if r.kind == "wager")
