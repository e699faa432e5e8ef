"""`shoe-controller odds`: the JSON contract, the published 8-deck figures, and clean errors."""

import json
import subprocess
import sys

import pytest

from controller.cli import main

BET_NAMES = {
    "banker",
    "player",
    "tie",
    "player_pair",
    "banker_pair",
    "dragon_bonus_player",
    "dragon_bonus_banker",
    "dragon_7",
    "panda_8",
}


def odds_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    assert main(["odds", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_eight_decks_published_figures(capsys: pytest.CaptureFixture[str]) -> None:
    data = odds_json(["--decks", "8"], capsys)
    assert set(data["bets"]) == BET_NAMES
    p = data["probabilities"]
    assert round(p["banker"], 6) == 0.458597
    assert round(p["player"], 6) == 0.446247
    assert round(p["tie"], 6) == 0.095156
    edges = {k: round(v["house_edge"] * 100, 4) for k, v in data["bets"].items()}
    assert edges["banker"] == 1.0579
    assert edges["player"] == 1.2351
    assert edges["tie"] == 14.3596
    assert edges["dragon_7"] == 7.6113
    assert edges["panda_8"] == 10.1876
    for v in data["bets"].values():
        assert v["house_edge"] == -v["ev"]


def test_rules_and_tie_pay_change_the_priced_bets(capsys: pytest.CaptureFixture[str]) -> None:
    assert round(odds_json(["--tie-pays", "9"], capsys)["bets"]["tie"]["house_edge"] * 100, 4) == 4.8440
    assert round(odds_json(["--rules", "ez"], capsys)["bets"]["banker"]["house_edge"] * 100, 4) == 1.0183
    assert round(odds_json(["--rules", "super6"], capsys)["bets"]["banker"]["house_edge"] * 100, 4) == 1.4581


def test_remaining_composition(capsys: pytest.CaptureFixture[str]) -> None:
    full = odds_json(["--remaining", ",".join(f"{r}=32" for r in "A23456789TJQK")], capsys)
    eight = odds_json(["--decks", "8"], capsys)
    assert full == eight


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["odds", "--remaining", "A=3,X=2"], "'X=2'"),
        (["odds", "--remaining", "A=-1"], "A=-1"),
        (["odds", "--decks", "0"], "--decks must be 1-8"),
        (["odds", "--decks", "8", "--remaining", "A=1"], "not allowed with"),
        (["odds", "--rules", "macao"], "invalid choice"),
        (["odds", "--tie-pays", "7"], "invalid choice"),
    ],
)
def test_bad_input_exit_2_one_line(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert err.count("\n") == 1


@pytest.mark.e2e
def test_odds_as_a_real_process_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "odds", "--remaining", "A=,2=3"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
