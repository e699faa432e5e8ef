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


FLOOR = '[floor]\nenabled = true\nbroker = "mqtt://127.0.0.1:1883"\n'


def test_a_floor_link_without_its_keys_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """The link will not start without the table's signing key or the floor's public key: check-config says so
    (it said ok, and the summary's "no signing key: the link will not start" was the only sign)."""
    from tests.keys import key_file

    table, floor = key_file(tmp_path, "table"), key_file(tmp_path, "floor")
    tls = tmp_path / "tls.key"
    tls.write_text("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n")
    cases = [
        (FLOOR, "floor.key_file: not set: the floor archives only signed records"),
        (FLOOR + f'key_file = "{table.path}"\n', "floor.floor_public_key: not set"),
        (FLOOR + f'floor_public_key = "{floor.public}"\n', "floor.key_file: not set"),
        (FLOOR + f'key_file = "{tmp_path}/none.key"\nfloor_public_key = "{floor.public}"\n', "floor.key_file: "),
        (FLOOR + f'key_file = "{tls}"\nfloor_public_key = "{floor.public}"\n', "move this one to floor.cert_key_file"),
    ]
    path = tmp_path / "config.toml"
    for text, expected in cases:
        path.write_text(text, encoding="utf-8")
        result = check(str(path))
        assert result.returncode == 2, (text, result.stdout)
        assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith(f"{path}: ") and expected in result.stderr, result.stderr
    path.write_text(FLOOR + f'key_file = "{table.path}"\nfloor_public_key = "{table.public}"\n', encoding="utf-8")
    result = check(str(path))  # the table's own public key as the floor's: no ack would ever be believed
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "floor.floor_public_key: is this table's own key" in result.stderr
    path.write_text(FLOOR + f'key_file = "{table.path}"\nfloor_public_key = "{floor.public}"\n', encoding="utf-8")
    result = check(str(path))
    assert result.returncode == 0, result.stderr
    assert f"records signed with {table.path}" in result.stdout


@pytest.mark.parametrize(
    ("extra", "key", "problem"),
    [
        ('username = "t1"\npassword_file = "{tmp}/no/pw"\n', "password_file", "{tmp}/no/pw does not exist"),
        ('broker = "mqtts://h:8883"\nca_file = "{tmp}/ca.crt"\n', "ca_file", "{tmp}/ca.crt does not exist"),
        (
            'broker = "mqtts://h:8883"\ncert_file = "{tmp}"\ncert_key_file = "{tmp}/k"\n',
            "cert_file",
            "{tmp} is a directory",
        ),
    ],
    ids=["password_file", "ca_file", "cert_file"],
)
def test_a_file_the_floor_link_needs_that_is_not_there_is_one_line(
    tmp_path: Path, extra: str, key: str, problem: str
) -> None:
    """The link reads these at its start and stops on a missing one: check-config said ok."""
    from tests.keys import key_file

    table, floor = key_file(tmp_path, "table"), key_file(tmp_path, "floor")
    path = tmp_path / "config.toml"
    keys = f'key_file = "{table.path}"\nfloor_public_key = "{floor.public}"\n'
    head = FLOOR if "broker" not in extra else "[floor]\nenabled = true\n"
    path.write_text(head + keys + extra.format(tmp=tmp_path), encoding="utf-8")
    result = check(str(path))
    assert result.returncode == 2 and result.stdout == "", result.stdout
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{path}: floor.{key}: {problem.format(tmp=tmp_path)}"), line
