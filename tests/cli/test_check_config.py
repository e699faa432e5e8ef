"""``shoe-controller check-config FILE``: ``FILE: ok`` and a summary, or one line and exit 2 (in process; the shipped
example through the installed script)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config import DEFAULT_PATH
from tests.console import Result, run_main, run_script


def check(*args: str) -> Result:
    return run_main(["shoe-controller", "check-config", *args])


def test_a_good_file_prints_ok_and_a_summary(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[table]\nname = "Baccarat 2"\ndecks = 6\n'
        '[shoe]\nport = "socket://localhost:7777"\ndialect = "ascii"\n'
        '[journal]\npath = "/srv/journal.db"\n[gpio]\npin_factory = "mock"\n',
        encoding="utf-8",
    )
    result = check(str(path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == f"{path}: ok"
    summary = "\n".join(lines[1:])
    assert "Baccarat 2: 6 decks, commission" in summary
    assert "socket://localhost:7777, ascii at 9600 baud" in summary
    assert "journal:    /srv/journal.db" in summary
    assert "pin factory mock" in summary


@pytest.mark.e2e
def test_the_shipped_example_checks_ok() -> None:
    result = run_script(["shoe-controller", "check-config", "config/config.example.toml"])  # from the checkout
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("config/config.example.toml: ok\n")
    assert "/dev/shoe, binary at 115200 baud" in result.stdout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[table]\ndecks = 9\n", "table.decks: must be 1-8, got 9"),
        ("[gpio.pins]\nfault = 99\n", "gpio.pins.fault: 99 is not a BCM GPIO number (0-27)"),
        # Refused by the panel at start-up, so refused here too (one validation: controller.pinmap).
        ("[gpio.pins]\nfault = 0\n", "gpio.pins.fault: BCM 0 (header pin 27) is reserved for the HAT ID EEPROM"),
        ("[gpio.pins]\nvoid = 1\n", "gpio.pins.void: BCM 1 (header pin 28) is reserved for the HAT ID EEPROM"),
        ("[gpio.pins]\ntie = 25\n", "gpio.pins.fault: BCM 25 is already used by gpio.pins.tie"),
        ("[shoe]\ndialects = 'ascii'\n", "shoe.dialects: unknown key (did you mean dialect?)"),
        ("[table]\nname = 'x'\n\ndecks 8\n", "line 4: "),
    ],
)
def test_a_bad_file_prints_one_line_and_exits_2(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    result = check(str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"{path}: {expected}"), result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_a_missing_file_names_the_path_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    result = check(str(path))
    assert result.returncode == 2
    assert result.stderr == f"{path}: cannot read: No such file or directory\n"


def test_the_default_path_is_the_daemons() -> None:
    result = check()  # no FILE: the daemon's default path (absent on a development machine)
    assert (result.stdout + result.stderr).startswith(f"{DEFAULT_PATH}: ")
    assert result.returncode == (0 if DEFAULT_PATH.exists() else 2)
