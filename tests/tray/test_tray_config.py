"""``[tray]``: its keys checked, the chip registry it needs, ``run --tray`` overriding ``tray.port``, and what the
table's rules become with and without a tray; each mistake one line."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from controller.commands import UsageError, check_config
from controller.config import ConfigError, default_settings, parse_config


def test_a_tray_port_without_a_chip_registry_is_one_line() -> None:
    with pytest.raises(ConfigError) as error:
        parse_config('[tray]\nport = "/dev/ttyUSB2"\n')
    assert str(error.value) == "config.toml: tray.port: a chip tray needs the chip registry: set spots.chips"


def test_check_config_says_it_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[tray]\nport = "/dev/ttyUSB2"\n', encoding="utf-8")
    with pytest.raises(UsageError) as error:
        check_config.run(argparse.Namespace(path=str(path)))
    assert "\n" not in str(error.value)
    assert str(error.value) == f"{path}: tray.port: a chip tray needs the chip registry: set spots.chips"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tray]\nsettle_seconds = 0.05\n", "tray.settle_seconds: must be at least 0.1 and at most 30 seconds"),
        ("[tray]\nsettle_seconds = 31\n", "tray.settle_seconds: must be at least 0.1 and at most 30 seconds"),
        ("[tray]\nbaud = 12345\n", "tray.baud:"),
        ("[tray]\nsettle = 2\n", "tray.settle: unknown key"),
    ],
)
def test_bad_tray_keys_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(text)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_tray_makes_the_table_count_it_and_none_leaves_the_table_as_it_was() -> None:
    assert default_settings().table_rules().tray is False
    assert default_settings().tray.enabled is False
    settings = parse_config('[spots]\nchips = "/etc/shoe-controller/chips.toml"\n[tray]\nport = "/dev/ttyUSB2"\n')
    assert settings.table_rules().tray is True and settings.table_rules().money is None
    assert settings.tray.settle_seconds == 2.0
    assert any(line.startswith("tray:       /dev/ttyUSB2") for line in settings.summary())


def test_run_tray_overrides_the_port_and_needs_the_registry() -> None:
    with pytest.raises(ConfigError) as error:
        default_settings().with_overrides(tray="/dev/ttyUSB3")
    assert str(error.value) == "--tray: tray.port: a chip tray needs the chip registry: set spots.chips"
    base = parse_config('[spots]\nchips = "/etc/shoe-controller/chips.toml"\n')
    assert base.with_overrides(tray="socket://127.0.0.1:7000").tray.port == "socket://127.0.0.1:7000"
