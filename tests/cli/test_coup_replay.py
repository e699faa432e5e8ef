"""`shoe-controller coup` and `replay`: the command-line contract and clean errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import main


def test_coup_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coup", "2h", "3s", "ad", "kc", "8d"]) == 0
    assert capsys.readouterr().out.startswith("Banker wins · P 1 – B 3  P 2♥ A♦ 8♦  ")
    assert main(["coup", "--json", "9H", "2S", "KD", "5C"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["player"] == ["9H", "KD"]
    assert data["winner"] == "player"
    assert data["natural"] is True


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["coup", "2H", "3S", "XX"], "'XX'"),
        (["coup", "2H", "3S", "AD"], "incomplete coup: BANKER CARD is due"),
        (["coup", "9H", "2S", "KD", "5C", "3H"], "complete before 3H"),
        (["coup"], "required"),
        (["coup", "--frobnicate", "2H"], "unrecognized arguments"),
    ],
)
def test_coup_errors_exit_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_replay_json_lines_and_leftover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "cards.txt"
    src.write_text("2h 3s ad kc 8d\n9h 2s\nkd 5c   3c 10h\n")
    assert main(["replay", str(src), "--json"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(x) for x in captured.out.splitlines()]
    assert [x["coup"] for x in lines] == [1, 2]
    assert lines[0]["player"] == ["2H", "AD", "8D"]
    assert lines[0]["banker"] == ["3S", "KC"]
    assert (lines[0]["player_total"], lines[0]["banker_total"], lines[0]["winner"]) == (1, 3, "banker")
    assert lines[1]["natural"] is True
    for key in ("player_pair", "banker_pair", "natural"):
        assert isinstance(lines[1][key], bool)
    assert "2 card(s) left over" in captured.err
    assert "3♣ 10♥" in captured.err  # the notation people read (docs/notation.md)


def test_replay_bad_token_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "cards.txt"
    src.write_text("2h 3s 1x kc")
    assert main(["replay", str(src)]) == 2
    assert "'1x'" in capsys.readouterr().err


@pytest.mark.e2e
def test_replay_from_stdin_as_a_real_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", "-", "--json", "--rules", "ez"],
        input="9H 2S KD 5C 4H",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["coup"] == 1
    assert "1 card(s) left over" in proc.stderr


@pytest.mark.e2e
def test_user_mistake_is_never_a_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", "/no/such/file"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "shoe-controller replay: /no/such/file: cannot read: No such file or directory"


def test_replay_text_is_in_the_notation_people_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "cards.txt"
    src.write_text("2H 3S AD KC 8D  9H 2S KD 5C\n")
    assert main(["replay", str(src)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("   1  Banker wins · P 1 – B 3  P 2♥ A♦ 8♦     B 3♠ K♣"), first
    assert second.startswith("   2  Player wins · P 9 – B 7  P 9♥ K♦        B 2♠ 5♣"), second
    assert second.endswith("[natural (player)]")
