"""``shoe-controller tray``: the chip tray coup by coup from a real journal (tests/record_journals.py's
``every_tray``: the tray anchored, a coup paid from it, a chip palmed and its variance confirmed in coup 2), in
JSON and as a table; a table without a tray reader has its flows and no count; mistakes are one line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import run_main
from tests.game.tray_coups import FLOAT_CENTS
from tests.record_journals import every_money_journal, every_tray_journal


def _journal(tmp_path: Path, build=every_tray_journal) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / "journal.db"
    build(path).close()
    return path


def test_each_coup_is_a_line_with_its_flow_the_tray_it_must_hold_and_the_count(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    result = run_main(["shoe-controller", "tray", "--journal", str(path), "--json"])
    assert result.returncode == 0, result
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(x["shoe"], x["coup"], x["flow_cents"], x["expected_cents"], x["counted_cents"], x["variance_cents"])
            for x in lines] == [
        (1, 1, -2500, FLOAT_CENTS - 2500, FLOAT_CENTS - 2500, 0),
        (1, 2, 0, FLOAT_CENTS - 2500, FLOAT_CENTS - 3000, -500),
    ]  # fmt: skip
    assert lines[1]["denominations"] == [{"cents": 2500, "count": 19}, {"cents": 500, "count": 19}]
    assert sum(x["variance_cents"] for x in lines) == -500  # the $5 palmed
    assert list(lines[0]) == sorted(lines[0])


def test_the_table_in_dollars_and_one_shoe(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    result = run_main(["shoe-controller", "tray", "--journal", str(path)])
    assert result.returncode == 0, result
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["SHOE", "COUP", "FLOW", "EXPECTED", "COUNTED", "VARIANCE"]
    assert rows[2] == ["1", "2", "$0", "$575", "$570", "-$5"]
    assert run_main(["shoe-controller", "tray", "--journal", str(path), "--json", "--shoe", "2"]).stdout == ""
    none = run_main(["shoe-controller", "tray", "--journal", str(path), "--shoe", "2"])
    assert none.returncode == 0 and none.stderr == f"{path}: no coup declared in shoe 2\n"


def test_a_table_without_a_tray_reader_has_its_flows_and_no_count(tmp_path: Path) -> None:
    path = _journal(tmp_path, every_money_journal)
    result = run_main(["shoe-controller", "tray", "--journal", str(path), "--json"])
    assert result.returncode == 0, result
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines and all(x["counted_cents"] is None and x["expected_cents"] is None for x in lines)
    assert lines[0]["flow_cents"] != 0  # its settlements moved the tray


def test_a_missing_journal_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_main(["shoe-controller", "tray", "--journal", str(tmp_path / "none.db")])
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result
    assert "none.db" in result.stderr and "Traceback" not in result.stderr
