"""``shoe-controller settle`` against a real journal a real table loop wrote from a scripted shoe with a
bet-spot reader: the JSON Lines contract (every settled wager, then each seat's commission box), the table,
the shoe filter, a journal without wagers, and the one-line refusals (exit 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.game.records import input_body
from controller.game.table import DeclarePressed, NewShoePressed, TableInput, TableState
from controller.journal import Journal
from controller.table.loop import ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.console import Result, run_main, run_script
from tests.game.money import PLAYER_NATURAL, cards, every_money_kind, money, table_rules


def cli(*args: str) -> Result:
    return run_main(["shoe-controller", *args])


def write(path: Path, events: list[TableInput]) -> None:
    with Journal.open(path) as journal:
        loop = TableLoop(
            TableState(table_rules(money(leave_after_coups=1))), journal, [ShoePort(AsciiWire(), lambda _d: None)]
        )
        for event in events:
            loop._apply(event, input_body(event), None, None)
        loop.flush()


#: The scripted shoe (coup 1 settled, seat 1's box paid as it left), coup 2 dealt and declared (seat 3's
#: loser left on the spot became its Player wager, and wins), then the next shoe.
EVENTS = [*every_money_kind(), *cards(PLAYER_NATURAL[1:]), DeclarePressed(), NewShoePressed()]

EXPECTED: list[dict[str, Any]] = [
    {"shoe": 1, "coup": 1, "seat": 1, "bet": "banker", "stake": 10000, "outcome": "win", "win": 10000,
     "commission": 500, "net": 10000},
    {"shoe": 1, "coup": 1, "seat": 3, "bet": "player", "stake": 5000, "outcome": "lose", "win": 0, "commission": 0,
     "net": -5000},
    {"shoe": 1, "coup": 1, "seat": 5, "bet": "player", "stake": 2500, "outcome": "lose", "win": 0, "commission": 0,
     "net": -2500},
    {"shoe": 1, "coup": 2, "seat": 3, "bet": "player", "stake": 7500, "outcome": "win", "win": 7500, "commission": 0,
     "net": 7500},
    {"shoe": 1, "seat": 1, "commission_box": 500, "collected": 500},
]  # fmt: skip


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("settle") / "journal.db"
    write(path, EVENTS)
    return path


def test_json_lines_give_every_settled_wager_then_each_seats_box(journal: Path) -> None:
    result = cli("settle", "--journal", str(journal), "--json")
    assert (result.returncode, result.stderr) == (0, "")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines == EXPECTED
    assert [list(line) for line in lines[:1]] == [list(EXPECTED[0])]  # the fields in the contract's order


def test_the_table_reads_in_dollars(journal: Path) -> None:
    result = cli("settle", "--journal", str(journal))
    assert result.returncode == 0
    assert "banker" in result.stdout and "$100" in result.stdout and "-$50" in result.stdout
    assert "players net" in result.stdout and "$100" in result.stdout.split("players net")[1]
    assert "commission box" in result.stdout


def test_a_shoe_without_wagers_says_so_on_stderr(journal: Path) -> None:
    result = cli("settle", "--journal", str(journal), "--shoe", "2", "--json")
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.strip() == f"{journal}: no settled wagers in shoe 2"


def test_a_journal_of_a_table_without_a_reader_has_no_wagers(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path) as j:
        j.append({"kind": "new_shoe"})
    result = cli("settle", "--journal", str(path), "--json")
    assert (result.returncode, result.stdout) == (0, "")
    assert "no settled wagers" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shoe", "two"], "not a whole number"),
        (["--journal", "/nonexistent/j.db"], "/nonexistent/j.db"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(journal: Path, args: list[str], message: str) -> None:
    argv = ["settle", *(["--journal", str(journal)] if "--journal" not in args else []), *args]
    result = cli(*argv)
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_record_it_cannot_read_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    bad = {"shoe": 1, "coup": 1, "seat": 1, "bet": "banker", "stake": "lots"}
    with Journal.open(path) as j:
        j.append({"kind": "declare"}, derived=[("settlement", bad)])
    result = cli("settle", "--journal", str(path), "--json")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "shoe-controller settle" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.e2e
def test_the_installed_script_says_the_same(journal: Path) -> None:
    result = run_script(["shoe-controller", "settle", "--journal", str(journal), "--json"])
    assert result.returncode == 0
    assert [json.loads(line) for line in result.stdout.splitlines()] == EXPECTED
