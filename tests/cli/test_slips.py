"""``shoe-controller slips`` on a real journal a real table loop wrote (tests/slip_journal.py: a seat move, a
pause, an uncarded seat, an open visit, buy-ins): the JSON Lines contract, each slip's money equal to
``settle --json``'s sums over the player's seat time, the table in dollars, ``--shoe`` and ``--open``, a
read-only copy, and the one-line refusals."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from controller.journal import Journal
from tests.console import Result, run_main
from tests.slip_journal import CARD_A, CARD_B, CARD_C, slip_journal


def cli(*args: str) -> Result:
    return run_main(["shoe-controller", *args])


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("slips") / "journal.db"
    slip_journal(path).close()
    return path


def test_json_lines_are_the_closed_slips_with_the_issues_fields(journal: Path) -> None:
    r = cli("slips", "--journal", str(journal), "--json")
    assert r.returncode == 0, r.stderr
    a, b = lines(r.stdout)
    assert [x for x in r.stdout.splitlines()] == [json.dumps(x, sort_keys=True, separators=(",", ":")) for x in (a, b)]
    assert (a["player_ref"], a["seat"], a["seats"], a["coups"], a["handle_cents"]) == (CARD_A, 1, [1, 4], 5, 40_000)
    assert (a["avg_bet_cents"], a["buy_in_cents"], a["buy_ins"], a["paused_seconds"]) == (8_000, 50_000, 1, 6.0)
    assert (a["start"], a["end"]) == ("2026-12-01T20:00:12.000+00:00", "2026-12-01T20:05:18.000+00:00")
    assert (b["player_ref"], b["seats"], b["coups"], b["handle_cents"], b["win_cents"]) == (
        CARD_B,
        [2],
        6,
        16_000,
        -6_000,
    )
    assert b["paused_seconds"] == 552.0 and b["rated_seconds"] == 336.0  # away ten minutes: not rated
    assert b["decisions_per_hour"] == 64.29 and b["open"] is False
    assert a["estimate"] == {
        "decisions_per_hour": 70,
        "house_edge": 0.0106,
        "formula": "avg_bet_cents x decisions_per_hour x rated hours x house_edge",
    }


def test_each_slips_handle_win_and_theo_are_the_sums_over_its_players_wagers(journal: Path) -> None:
    """settle --json's wagers of the seats in the player's seat time (the journal's player_in and player_out
    coups), and the theo of the wager records: the uncarded seat 3 is on no slip."""
    slips = lines(cli("slips", "--journal", str(journal), "--json", "--open").stdout)
    settled = [w for w in lines(cli("settle", "--journal", str(journal), "--json").stdout) if "bet" in w]
    with Journal.open(journal, create=False, read_only=True) as j:
        theo = {
            (b["coup"], b["seat"], b["bet"]): b["theo_cents"]
            for b in (json.loads(r.body) for r in j.records() if r.kind == "wager")
        }
    seat_time: dict[str, dict[int, Any]] = {
        CARD_A: {1: range(1, 4), 4: range(4, 6)},
        CARD_B: {2: [*range(1, 5), 14, 15]},
        CARD_C: {5: range(5, 16)},
    }
    assert {s["player_ref"] for s in slips} == set(seat_time)
    for s in slips:
        mine = [w for w in settled if w["coup"] in seat_time[s["player_ref"]].get(w["seat"], ())]
        assert s["handle_cents"] == sum(w["stake"] for w in mine) > 0
        assert s["win_cents"] == sum(w["net"] for w in mine)
        assert s["theo_cents"] == pytest.approx(sum(theo[(w["coup"], w["seat"], w["bet"])] for w in mine), abs=1e-9)
        assert s["wagers"] == len(mine)
    assert all(s["open"] == (s["player_ref"] == CARD_C) for s in slips)


def test_the_table_in_dollars_shoe_and_a_replay_is_byte_for_byte_the_same(journal: Path) -> None:
    text = cli("slips", "--journal", str(journal))
    assert text.returncode == 0
    assert text.stdout.splitlines()[1].split()[:3] == [CARD_A, "1,4", "2026-12-01"]
    assert "$400" in text.stdout.splitlines()[1] and "$500" in text.stdout.splitlines()[1]
    assert "70 decisions/hour" in text.stdout and CARD_C not in text.stdout
    assert (
        cli("slips", "--journal", str(journal), "--json").stdout
        == cli("slips", "--journal", str(journal), "--json", "--shoe", "1").stdout
    )
    assert cli("slips", "--journal", str(journal), "--json", "--shoe", "2").stdout == ""
    none = cli("slips", "--journal", str(journal), "--shoe", "2")
    assert none.returncode == 0 and none.stderr == f"{journal}: no closed rating slips in shoe 2\n"


def test_a_read_only_copy_in_a_read_only_folder_reads_and_nothing_is_written_beside_it(
    journal: Path, tmp_path: Path
) -> None:
    handed = tmp_path / "handed"
    handed.mkdir()
    copy = handed / "journal.db"
    shutil.copyfile(journal, copy)
    copy.chmod(0o444)
    handed.chmod(0o555)
    try:
        got = cli("slips", "--journal", str(copy), "--json")
        assert got.returncode == 0, got.stderr
        assert got.stdout == cli("slips", "--journal", str(journal), "--json").stdout != ""
        assert os.listdir(handed) == ["journal.db"]
    finally:
        handed.chmod(0o755)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--house-edge", "2"], "--house-edge: must be a fraction between 0 and 0.5"),
        (["--house-edge", "much"], "--house-edge: not a number"),
        (["--decisions-per-hour", "0"], "decisions per hour 0 is not 1-1000"),
        (["--window-minutes", "-3"], "--window-minutes"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(journal: Path, args: list[str], said: str) -> None:
    r = cli("slips", "--journal", str(journal), *args)
    assert r.returncode == 2 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_a_missing_journal_is_one_line(tmp_path: Path) -> None:
    r = cli("slips", "--journal", str(tmp_path / "nope.db"), "--json")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "nope.db" in r.stderr
