"""`shoe-controller roads`: the JSON contract, the ways to write results, the drawing, and clean errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main

ROOT = Path(__file__).resolve().parents[2]


def roads_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["roads", "--json", *argv]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)  # type: ignore[no-any-return]


def test_json_is_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    # B B P T P B: big road B,B | P(1 tie),P | B; h = [2, 2, 1].
    # Big eye boy: (2,2) p=h1=2, m<=p red; (3,1) h2=2 vs h1=2 red. Small road would start at (3,2)/(4,1).
    # Ask banker (3,2): BEB p=h2=2 red, SR p=h1=2 red.
    # Ask player (4,1): BEB h3=1 vs h2=2 blue, SR h3=1 vs h1=2 blue.
    data = roads_json(["B", "B", "P", "T", "P", "B"], capsys)
    assert data == {
        "bead_plate": ["banker", "banker", "player", "tie", "player", "banker"],
        "big_road": [
            [
                {"winner": "banker", "ties": 0, "player_pair": False, "banker_pair": False},
                {"winner": "banker", "ties": 0, "player_pair": False, "banker_pair": False},
            ],
            [
                {"winner": "player", "ties": 1, "player_pair": False, "banker_pair": False},
                {"winner": "player", "ties": 0, "player_pair": False, "banker_pair": False},
            ],
            [{"winner": "banker", "ties": 0, "player_pair": False, "banker_pair": False}],
        ],
        "big_eye_boy": [["red", "red"]],
        "small_road": [],
        "cockroach_pig": [],
        "ask": {
            "banker": {"big_eye_boy": "red", "small_road": "red", "cockroach_pig": None},
            "player": {"big_eye_boy": "blue", "small_road": "blue", "cockroach_pig": None},
        },
    }


def test_runs_words_and_any_case_mean_the_same_coups(capsys: pytest.CaptureFixture[str]) -> None:
    separate = roads_json(["B", "B", "P", "T", "P", "B"], capsys)
    assert roads_json(["BBPTPB"], capsys) == separate
    assert roads_json(["bb", "Player", "tie", "p", "BANKER"], capsys) == separate


def test_text_draws_the_big_road_with_its_dragon_tail(capsys: pytest.CaptureFixture[str]) -> None:
    # Eight Bankers (six down, two along the bottom row), a Player with a tie on it, a Banker.
    assert main(["roads", "BBBBBBBB", "P", "T", "B"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("11 coups: Banker 9  Player 1  Tie 1\n")
    big = out.split("Big road")[1].split("\n\n")[0].splitlines()[1:]
    assert big == [
        "  B  P1 B",
        "  B  .  .",
        "  B  .  .",
        "  B  .  .",
        "  B  .  .",
        "  B  B  B",
    ]
    # Big eye boy: (2,1) no mark; (3,1) h2=1 vs h1=8 blue. Cockroach pig and small road: nothing yet.
    beb = out.split("Big eye boy")[1].split("\n\n")[0].splitlines()[1:]
    assert beb == ["  B", "  .", "  .", "  .", "  .", "  ."]
    assert "Small road (R red, B blue)\n  (empty)" in out
    # Ask Banker (3,2): BEB p=h2=1, m=p+1 blue; small road p=h1=8, m<=p red; cockroach pig not yet.
    # Ask Player (4,1): BEB h3=1 vs h2=1 red; small road h3=1 vs h1=8 blue; cockroach pig not yet.
    assert "  Banker: big eye boy B,  small road R,  cockroach pig -" in out
    assert "  Player: big eye boy R,  small road B,  cockroach pig -" in out


def test_rows_sets_the_board_height(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", "--rows", "2", "BBBP"]) == 0
    big = capsys.readouterr().out.split("Big road")[1].split("\n\n")[0].splitlines()[1:]
    assert big == ["  B P", "  B B"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["B", "X", "P"], "shoe-controller roads: 'X' is not a result"),
        (["BBQ"], "shoe-controller roads: 'BBQ' is not a result"),
        (["bankers"], "shoe-controller roads: 'bankers' is not a result"),
        (["--rows", "0", "B"], "shoe-controller roads: --rows must be 1-50, not 0"),
        (["--rows", "100000000", "B"], "shoe-controller roads: --rows must be 1-50, not 100000000"),
    ],
)
def test_a_bad_result_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message)
    assert captured.err.count("\n") == 1


@pytest.mark.e2e
def test_as_a_process_json_and_a_clean_error() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "controller.cli", "roads", "--json", "TBP"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    big_road = json.loads(ok.stdout)["big_road"]
    assert big_road == [
        [{"winner": "banker", "ties": 1, "player_pair": False, "banker_pair": False}],
        [{"winner": "player", "ties": 0, "player_pair": False, "banker_pair": False}],
    ]
    bad = subprocess.run(
        [sys.executable, "-m", "controller.cli", "roads", "B", "Z"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.splitlines() == [
        "shoe-controller roads: 'Z' is not a result (use B, P, T, banker, player, tie or a run like BBPT)"
    ]
