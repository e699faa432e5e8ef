"""Tests for controller.config: defaults, every validation naming its key, overrides, and no drift between
the model, config/config.example.toml and docs/configuration.md."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from controller.config import (
    DEFAULT_PATH,
    MAX_CONFIG_BYTES,
    PHYSICAL_PIN,
    ConfigError,
    Settings,
    default_settings,
    format_cents,
    load_config,
    parse_cents,
    parse_config,
    setting_keys,
)
from controller.game.shoe import BurnMode, CutCardRule
from controller.game.table import TableRules
from tests.wiring_doc import wired_pins

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "config" / "config.example.toml"
DOC = ROOT / "docs" / "configuration.md"
#: The pin map as docs/wiring.md wires it (a test names a pin by its function, never by a restated number).
WIRED = wired_pins()

#: A commented setting line of the example file: ``# key = value``.
SETTING_LINE = re.compile(r"^# ([a-z_0-9]+) = (.+)$", re.MULTILINE)


def error_of(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    return info.value


def assert_error(text: str, key: str, fragment: str) -> None:
    error = error_of(text)
    message = str(error)
    assert "\n" not in message
    assert message.startswith(f"config.toml: {key}: "), message
    assert fragment in message, message
    assert error.key == key
    assert error.source == "config.toml"


# ---------------------------------------------------------------------------------------------------------
# Defaults


def test_empty_file_is_the_default_configuration() -> None:
    s = parse_config("")
    assert s == default_settings() == Settings()
    assert s.table.name == "Table 1"
    assert (s.table.decks, s.table.rules, s.table.tie_pays) == (8, "commission", 8)
    assert (s.table.burn, s.table.burn_ace, s.table.burn_fixed_count) == ("exposed", 1, 0)
    assert (s.table.cut_card, s.table.auto_declare) == ("one_more", False)
    lim = s.table.limits
    assert (lim.unit_cents, lim.minimum_cents, lim.maximum_cents) == (500, 2_500, 500_000)
    assert (s.shoe.port, s.shoe.dialect, s.shoe.baud) == ("/dev/shoe", "binary", 115200)
    assert (s.shoe.link_timeout, s.shoe.reconnect_backoff_max) == (3.0, 5.0)
    assert s.journal.path == Path("/var/lib/shoe-controller/journal.db")
    assert (s.gpio.pin_factory, s.gpio.void_hold_seconds, s.gpio.bounce_seconds) == ("lgpio", 2.0, 0.05)
    assert s.gpio.active_high is True
    assert s.gpio.pins.as_dict() == wired_pins()  # docs/wiring.md's table
    assert (s.lcd.enabled, s.lcd.cols, s.lcd.rows, s.lcd.i2c_address, s.lcd.i2c_bus) == (
        False,
        16,
        2,
        0x27,
        1,
    )
    assert s.lcd.expander == "PCF8574"
    assert (s.scoreboard.enabled, s.scoreboard.bind, s.scoreboard.reveal) == (
        True,
        "127.0.0.1:8080",
        "on_read",
    )
    assert (s.scoreboard.host, s.scoreboard.port) == ("127.0.0.1", 8080)
    assert s.service.log_level == "info"
    assert Path("/etc/shoe-controller/config.toml") == DEFAULT_PATH


def test_empty_sections_are_the_defaults() -> None:
    text = "[table]\n[table.limits]\n[shoe]\n[journal]\n[gpio]\n[gpio.pins]\n[lcd]\n[scoreboard]\n[service]\n"
    assert parse_config(text) == default_settings()


def test_settings_are_frozen() -> None:
    s = default_settings()
    with pytest.raises(ValidationError):
        s.table.decks = 6
    with pytest.raises(ValidationError):
        s.gpio.pins.fault = 26
    with pytest.raises(ValidationError):
        s.shoe = s.shoe


def test_values_are_read() -> None:
    s = parse_config(
        """
        [table]
        name = "Salon Privé 3"
        decks = 6
        rules = "super6"
        tie_pays = 9
        burn = "fixed"
        burn_fixed_count = 5
        cut_card = "finish"
        auto_declare = true
        [table.limits]
        unit = "25"
        minimum = 100
        maximum = "10000.00"
        [shoe]
        port = "socket://localhost:7777"
        dialect = "ascii"
        link_timeout = 1
        [gpio]
        pin_factory = "mock"
        active_high = false
        [gpio.pins]
        fault = 26
        [lcd]
        enabled = true
        cols = 20
        rows = 4
        i2c_address = 0x3f
        [scoreboard]
        bind = "[::1]:9000"
        reveal = "on_declare"
        [service]
        log_level = "debug"
        """
    )
    assert (s.table.name, s.table.decks, s.table.rules, s.table.tie_pays) == ("Salon Privé 3", 6, "super6", 9)
    assert (s.table.limits.unit_cents, s.table.limits.minimum_cents, s.table.limits.maximum_cents) == (
        2_500,
        10_000,
        1_000_000,
    )
    assert (s.shoe.port, s.shoe.dialect, s.shoe.baud, s.shoe.link_timeout) == (
        "socket://localhost:7777",
        "ascii",
        9600,
        1.0,
    )
    assert isinstance(s.shoe.link_timeout, float)
    assert (s.gpio.pin_factory, s.gpio.active_high, s.gpio.pins.fault) == ("mock", False, 26)
    assert (s.lcd.enabled, s.lcd.cols, s.lcd.rows, s.lcd.i2c_address) == (True, 20, 4, 0x3F)
    assert (s.scoreboard.host, s.scoreboard.port, s.scoreboard.reveal) == ("::1", 9000, "on_declare")
    assert s.service.log_level == "debug"


@pytest.mark.parametrize(
    ("text", "baud", "given"),
    [
        ("", 115200, False),
        ('dialect = "binary"', 115200, False),
        ('dialect = "ascii"', 9600, False),
        ('dialect = "ascii"\nbaud = 19200', 19200, True),
        ("baud = 9600", 9600, True),
    ],
)
def test_baud_follows_the_dialect_unless_given(text: str, baud: int, given: bool) -> None:
    shoe = parse_config(f"[shoe]\n{text}\n").shoe
    assert shoe.baud == baud
    assert shoe.baud_given is given


def test_table_rules() -> None:
    assert default_settings().table_rules() == TableRules()
    rules = parse_config(
        '[table]\ndecks = 6\nburn = "fixed"\nburn_fixed_count = 3\ncut_card = "finish"\nauto_declare = true\n'
    ).table_rules()
    assert rules.decks == 6
    assert rules.burn_rule.mode is BurnMode.FIXED
    assert rules.burn_rule.fixed_count == 3
    assert rules.cut_card_rule is CutCardRule.FINISH
    assert rules.auto_declare is True
    ace = parse_config("[table]\nburn_ace = 11\n").table_rules()
    assert ace.burn_rule.ace_burns == 11
    assert ace.burn_rule.mode is BurnMode.EXPOSED
    assert parse_config('[table]\nburn = "none"\n').table_rules().burn_rule.mode is BurnMode.NONE


def test_table_limits_and_ruleset() -> None:
    s = parse_config('[table]\nrules = "ez"\ntie_pays = 9\n[table.limits]\nunit = "10"\nminimum = "50.00"\n')
    limits = s.table_limits()
    assert (limits.unit_cents, limits.minimum_cents, limits.maximum_cents) == (1_000, 5_000, 500_000)
    ruleset = s.ruleset()
    assert ruleset.name == "ez"
    assert ruleset.tie_pays == 9


# ---------------------------------------------------------------------------------------------------------
# Every validation names its key


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("[table]\nname = ''", "table.name", "must not be empty"),
        ("[table]\nname = 7", "table.name", "must be a string"),
        ("[table]\nname = '" + "x" * 41 + "'", "table.name", "at most 40"),
        ("[table]\ndecks = 9", "table.decks", "must be 1-8"),
        ("[table]\ndecks = 0", "table.decks", "must be 1-8"),
        ('[table]\ndecks = "8"', "table.decks", "must be an integer 1-8"),
        ("[table]\ndecks = 8.0", "table.decks", "must be an integer 1-8"),
        ("[table]\ndecks = true", "table.decks", "got true"),
        ('[table]\nrules = "punto"', "table.rules", '"commission", "ez" or "super6"'),
        ("[table]\ntie_pays = 10", "table.tie_pays", "must be 8 or 9"),
        ("[table]\ntie_pays = true", "table.tie_pays", "must be 8 or 9, got true"),
        ('[table]\nburn = "all"', "table.burn", "must be"),
        ("[table]\nburn_ace = 10", "table.burn_ace", "must be 1 or 11"),
        ("[table]\nburn_fixed_count = 21", "table.burn_fixed_count", "must be 0-20"),
        ('[table]\nburn = "fixed"', "table.burn_fixed_count", 'must be 1-20 when burn = "fixed"'),
        ('[table]\ncut_card = "two_more"', "table.cut_card", '"one_more" or "finish"'),
        ('[table]\nauto_declare = "yes"', "table.auto_declare", "must be true or false"),
        ("[table]\nauto_declare = 1", "table.auto_declare", "must be true or false"),
        ('[table.limits]\nunit = "0.001"', "table.limits.unit", "fractions of a cent"),
        ('[table.limits]\nunit = "5.005"', "table.limits.unit", "fractions of a cent"),
        ('[table.limits]\nunit = "0"', "table.limits.unit", "must be more than 0"),
        ('[table.limits]\nunit = "-5"', "table.limits.unit", "must be an amount"),
        ('[table.limits]\nunit = "$5"', "table.limits.unit", "must be an amount"),
        ('[table.limits]\nunit = "5e2"', "table.limits.unit", "must be an amount"),
        ("[table.limits]\nunit = true", "table.limits.unit", "must be an amount"),
        ("[table.limits]\nminimum = 25.005", "table.limits.minimum", "fractions of a cent"),
        ('[table.limits]\nminimum = "6000.00"', "table.limits.minimum", "above the maximum 5000.00"),
        ('[table.limits]\nminimum = "27.00"', "table.limits.minimum", "not a multiple of the unit 5.00"),
        ('[table.limits]\nmaximum = "4999.00"', "table.limits.maximum", "not a multiple of the unit 5.00"),
        ('[table.limits]\nmaximum = "1000000000"', "table.limits.maximum", "must be at most"),
        ('[shoe]\nport = ""', "shoe.port", "must be a device path"),
        ('[shoe]\nport = "COM3"', "shoe.port", "absolute device path"),
        ('[shoe]\nport = "dev/shoe"', "shoe.port", "absolute device path"),
        ('[shoe]\nport = "/dev/my shoe"', "shoe.port", "spaces"),
        ('[shoe]\nport = "tcp://localhost:7777"', "shoe.port", "unknown pyserial URL scheme tcp://"),
        ('[shoe]\nport = "socket://localhost"', "shoe.port", "needs host:port"),
        ('[shoe]\nport = "socket://localhost:99999"', "shoe.port", "needs host:port"),
        ('[shoe]\nport = "socket://:7777"', "shoe.port", "needs host:port"),
        ('[shoe]\ndialect = "json"', "shoe.dialect", '"binary" or "ascii"'),
        ("[shoe]\nbaud = 11520", "shoe.baud", "standard rate"),
        ('[shoe]\nbaud = "9600"', "shoe.baud", "standard rate"),
        ("[shoe]\nlink_timeout = 0", "shoe.link_timeout", "more than 0"),
        ("[shoe]\nlink_timeout = 61", "shoe.link_timeout", "at most 60"),
        ('[shoe]\nlink_timeout = "3"', "shoe.link_timeout", "number of seconds"),
        ("[shoe]\nlink_timeout = nan", "shoe.link_timeout", "number of seconds"),
        ("[shoe]\nreconnect_backoff_max = -1", "shoe.reconnect_backoff_max", "more than 0"),
        ('[journal]\npath = ""', "journal.path", "must be a file path"),
        ("[journal]\npath = 5", "journal.path", "must be a file path"),
        ('[gpio]\npin_factory = "pigpio"', "gpio.pin_factory", '"lgpio", "rpigpio", "native" or "mock"'),
        ("[gpio]\nvoid_hold_seconds = 0", "gpio.void_hold_seconds", "more than 0"),
        ("[gpio]\nbounce_seconds = -0.1", "gpio.bounce_seconds", "at least 0"),
        (
            "[gpio]\nbounce_seconds = 0.5\nvoid_hold_seconds = 0.5",
            "gpio.bounce_seconds",
            "less than void_hold",
        ),
        ('[gpio]\nactive_high = "high"', "gpio.active_high", "must be true or false"),
        ("[gpio.pins]\nfault = 99", "gpio.pins.fault", "99 is not a BCM GPIO number (0-27)"),
        ("[gpio.pins]\nvoid = -1", "gpio.pins.void", "-1 is not a BCM GPIO number (0-27)"),
        ('[gpio.pins]\ntie = "24"', "gpio.pins.tie", "must be a BCM GPIO number"),
        ("[gpio.pins]\nbuzzer = 2", "gpio.pins.buzzer", "I2C SDA"),
        ("[gpio.pins]\nbuzzer = 3", "gpio.pins.buzzer", "I2C SCL"),
        ("[gpio.pins]\ndeclare = 14", "gpio.pins.declare", "UART TXD"),
        ("[gpio.pins]\nnew_shoe = 15", "gpio.pins.new_shoe", "UART RXD"),
        (
            f"[gpio.pins]\ntie = {WIRED['player_draw']}",
            "gpio.pins.tie",
            f"BCM {WIRED['player_draw']} is already used by gpio.pins.player_draw",
        ),
        (
            f"[gpio.pins]\nplayer_draw = {WIRED['void']}",
            "gpio.pins.void",
            f"BCM {WIRED['void']} is already used by gpio.pins.player_draw",
        ),
        ('[lcd]\nenabled = "no"', "lcd.enabled", "must be true or false"),
        ("[lcd]\ncols = 40", "lcd.cols", "must be 16 or 20"),
        ("[lcd]\nrows = 3", "lcd.rows", "must be 2 or 4"),
        ('[lcd]\ni2c_address = "0x27"', "lcd.i2c_address", "TOML integer such as 0x27"),
        ("[lcd]\ni2c_address = 0x78", "lcd.i2c_address", "0x08-0x77, got 0x78"),
        ("[lcd]\ni2c_bus = 32", "lcd.i2c_bus", "must be 0-31"),
        ('[lcd]\nexpander = "PCF8575"', "lcd.expander", "must be"),
        ('[scoreboard]\nbind = "8080"', "scoreboard.bind", "host:port"),
        ('[scoreboard]\nbind = "localhost:0"', "scoreboard.bind", "port must be 1-65535"),
        ('[scoreboard]\nbind = "localhost:http"', "scoreboard.bind", "port must be 1-65535"),
        ('[scoreboard]\nbind = "::1:8080"', "scoreboard.bind", "IPv6 host in brackets"),
        ('[scoreboard]\nbind = "[nonsense]:8080"', "scoreboard.bind", "not an IPv6 address"),
        ('[scoreboard]\nbind = "bad_host!:8080"', "scoreboard.bind", "not a host name"),
        ('[scoreboard]\nreveal = "never"', "scoreboard.reveal", '"on_read" or "on_declare"'),
        ('[scoreboard]\nbilingual = "yes"', "scoreboard.bilingual", "true"),
        ('[service]\nlog_level = "trace"', "service.log_level", "must be"),
        ("table = 5", "table", "must be a table, got 5"),
        ("[table]\nlimits = 5", "table.limits", "must be a table"),
        ('gpio = { pins = "none" }', "gpio.pins", "must be a table"),
    ],
)
def test_validation_error_names_the_key(text: str, key: str, fragment: str) -> None:
    assert_error(text, key, fragment)


def test_the_briefs_examples_verbatim() -> None:
    assert (
        str(error_of("[gpio.pins]\nfault = 99")) == "config.toml: gpio.pins.fault: 99 is not a BCM GPIO number (0-27)"
    )
    assert str(error_of("[table]\ndecks = 9")).startswith("config.toml: table.decks: must be 1-8")
    assert str(error_of("[shoe]\ndialects = 'x'")).startswith("config.toml: shoe.dialects: unknown key")


def test_several_errors_report_the_first_and_count_the_rest() -> None:
    message = str(error_of("[table]\ndecks = 9\ntie_pays = 7\nburn_ace = 2\n"))
    assert message == "config.toml: table.decks: must be 1-8, got 9 (and 2 more)"


def test_accepted_edge_values() -> None:
    s = parse_config(
        "[table]\ndecks = 1\n[shoe]\nport = 'loop://'\nlink_timeout = 60\n"
        "[gpio]\nbounce_seconds = 0\n[gpio.pins]\nplayer_draw = 4\nbanker_draw = 27\n"
        "[lcd]\ni2c_address = 0x08\n[scoreboard]\nbind = 'scoreboard.local:65535'\n"
    )
    assert (s.table.decks, s.shoe.port, s.shoe.link_timeout, s.gpio.bounce_seconds) == (
        1,
        "loop://",
        60.0,
        0.0,
    )
    assert (s.gpio.pins.player_draw, s.gpio.pins.banker_draw, s.lcd.i2c_address) == (4, 27, 0x08)
    assert (s.scoreboard.host, s.scoreboard.port) == ("scoreboard.local", 65535)
    assert parse_config("[shoe]\nport = 'rfc2217://10.0.0.5:4001'").shoe.port == "rfc2217://10.0.0.5:4001"


# ---------------------------------------------------------------------------------------------------------
# Unknown keys at every level


def _tables(model: type[BaseModel] = Settings, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every table path of the model: (), ("table",), ("table", "limits"), ..."""
    found = [prefix]
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            found += _tables(ann, (*prefix, info.alias or name))
    return found


@pytest.mark.parametrize("table", _tables(), ids=lambda t: ".".join(t) or "top")
def test_unknown_key_is_refused_at_every_level(table: tuple[str, ...]) -> None:
    header = f"[{'.'.join(table)}]\n" if table else ""
    key = ".".join((*table, "colour"))
    assert_error(f'{header}colour = "red"\n', key, "unknown key")


def test_unknown_table_and_a_suggestion() -> None:
    assert_error("[tabel]\ndecks = 8\n", "tabel", "unknown table (did you mean table?)")
    assert_error("[gpio.pins]\nfualt = 26\n", "gpio.pins.fualt", "unknown key (did you mean fault?)")
    assert_error("[table.limits]\nminimum_cents = 2500\n", "table.limits.minimum_cents", "unknown key")


def test_an_array_of_tables_is_not_a_table() -> None:
    assert_error("[[table]]\ndecks = 8\n", "table", "must be a table")


# ---------------------------------------------------------------------------------------------------------
# TOML syntax errors and files


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[table]\nname = 'x'\n\ndecks 8\n", 4),
        ("[table]\ndecks = \n", 2),
        ("[table]\ndecks = 8\n[table]\n", 3),
        ('[table]\nname = "Table 1\n', 2),
        ("[table]\nname = 'x'\n\n\nrules = [1,\n", 5),
    ],
)
def test_toml_syntax_error_is_one_line_with_the_line_number(text: str, line: int) -> None:
    error = error_of(text)
    message = str(error)
    assert "\n" not in message
    assert message.startswith(f"config.toml: line {line}: "), message
    assert error.line == line
    assert error.key is None
    assert "(at line" not in message  # tomllib's own position is rewritten, not repeated


def test_load_config_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[table]\nname = "Baccarat 2"\n', encoding="utf-8")
    assert load_config(path).table.name == "Baccarat 2"
    assert load_config(str(path)).table.name == "Baccarat 2"


def test_load_config_names_the_file_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[table]\ndecks = 9\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: table\.decks: must be 1-8"):
        load_config(path)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: cannot read: No such file or directory"
    assert info.value.source == str(path)


def test_a_directory_and_bad_encoding_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r": not a regular file \(a directory\)$"):
        load_config(tmp_path)
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[table]\nname = "Salon Priv\xe9"\n')
    with pytest.raises(ConfigError, match=r": line 2: not UTF-8 text$"):
        load_config(path)


def test_config_error_is_a_value_error_carrying_data() -> None:
    error = error_of(f"[gpio.pins]\ntie = {WIRED['player_draw']}\n")
    assert isinstance(error, ValueError)
    assert (error.source, error.key, error.line) == ("config.toml", "gpio.pins.tie", None)
    assert error.reason == f"BCM {WIRED['player_draw']} is already used by gpio.pins.player_draw"


# ---------------------------------------------------------------------------------------------------------
# Overrides


def test_overrides_replace_only_what_is_given() -> None:
    base = parse_config('[shoe]\nport = "/dev/ttyUSB0"\nlink_timeout = 1.5\n[table]\ndecks = 6\n')
    assert base.with_overrides() == base
    s = base.with_overrides(port="socket://localhost:7777", journal="/tmp/j.db", pin_factory="mock")
    assert s.shoe.port == "socket://localhost:7777"
    assert s.shoe.link_timeout == 1.5
    assert s.journal.path == Path("/tmp/j.db")
    assert s.gpio.pin_factory == "mock"
    assert s.gpio.pins == base.gpio.pins
    assert s.table == base.table
    assert base.shoe.port == "/dev/ttyUSB0"  # the original is untouched
    assert base.with_overrides(journal=Path("/x/j.db")).journal.path == Path("/x/j.db")


def test_dialect_override_moves_the_default_baud_but_not_a_given_one() -> None:
    s = default_settings().with_overrides(dialect="ascii")
    assert (s.shoe.dialect, s.shoe.baud) == ("ascii", 9600)
    assert s.with_overrides(dialect="binary").shoe.baud == 115200
    fixed = parse_config("[shoe]\nbaud = 57600\n").with_overrides(dialect="ascii")
    assert (fixed.shoe.dialect, fixed.shoe.baud) == ("ascii", 57600)


@pytest.mark.parametrize(
    ("kwargs", "prefix"),
    [
        ({"port": "COM3"}, "--port: shoe.port: "),
        ({"dialect": "json"}, "--dialect: shoe.dialect: "),
        ({"journal": ""}, "--journal: journal.path: "),
        ({"pin_factory": "pigpio"}, "--pin-factory: gpio.pin_factory: "),
    ],
)
def test_a_bad_override_names_the_option(kwargs: dict[str, Any], prefix: str) -> None:
    with pytest.raises(ConfigError) as info:
        default_settings().with_overrides(**kwargs)
    assert str(info.value).startswith(prefix), str(info.value)


# ---------------------------------------------------------------------------------------------------------
# Money


@given(st.integers(min_value=1, max_value=100_000_000_00))
def test_cents_round_trip_through_their_decimal_text(cents: int) -> None:
    """Any amount written as the configuration writes it reads back as the same cents."""
    assert parse_cents(format_cents(cents)) == cents


@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=1, max_value=9))
def test_a_fraction_of_a_cent_is_always_refused(cents: int, mills: int) -> None:
    """Any amount with a non-zero third decimal place is refused, however it is written."""
    text = f"{format_cents(cents)}{mills}"
    with pytest.raises(ValueError, match="fractions of a cent"):
        parse_cents(text)


@given(st.integers(min_value=1, max_value=10**7), st.integers(min_value=0, max_value=99))
def test_a_float_amount_is_read_by_its_decimal_text(dollars: int, cents: int) -> None:
    """A TOML float such as 25.1 is 2510 cents exactly, never 2509 from binary rounding."""
    value = float(f"{dollars}.{cents:02d}")
    assert parse_cents(value) == dollars * 100 + cents


def test_amount_forms() -> None:
    assert parse_cents("25") == parse_cents("25.00") == parse_cents(25) == parse_cents("25.0") == 2500
    assert parse_cents(" 5.50 ") == 550
    assert parse_cents("5.500") == 550  # trailing zeros are not a fraction of a cent
    assert format_cents(-150) == "-1.50"


# ---------------------------------------------------------------------------------------------------------
# The example file and the documentation cannot drift


def _uncommented_example() -> str:
    return SETTING_LINE.sub(lambda m: f"{m.group(1)} = {m.group(2)}", EXAMPLE.read_text(encoding="utf-8"))


def _example_defaults() -> dict[str, str]:
    """Dotted key -> the value text written in the example file."""
    values: dict[str, str] = {}
    table = ""
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        header = re.fullmatch(r"\[([a-z_.0-9]+)\]", line)
        if header:
            table = header.group(1)
            continue
        setting = SETTING_LINE.fullmatch(line)
        if setting:
            values[f"{table}.{setting.group(1)}"] = setting.group(2)
    return values


def test_the_example_as_shipped_is_the_default_configuration() -> None:
    assert load_config(EXAMPLE) == default_settings()


def test_the_example_uncommented_is_the_default_configuration() -> None:
    text = _uncommented_example()
    assert parse_config(text, source=str(EXAMPLE)) == default_settings()


def test_the_example_lists_every_key_once() -> None:
    listed = list(_example_defaults())
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(setting_keys())
    # And the uncommented file really sets them all (no key hidden under the wrong table).
    document = tomllib.loads(_uncommented_example())
    for key in setting_keys():
        node: Any = document
        for part in key.split("."):
            node = node[part]


def test_the_doc_describes_every_key_with_the_examples_default() -> None:
    doc = DOC.read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_.0-9]+)` \|.*$", doc, re.MULTILINE)}
    defaults = _example_defaults()
    for key in setting_keys():
        assert key in rows, f"docs/configuration.md has no row for {key}"
        assert f"`{defaults[key]}`" in rows[key], f"{key}: doc row does not show the default {defaults[key]}"


def test_the_doc_names_the_override_options() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for option, key in (
        ("--port", "shoe.port"),
        ("--dialect", "shoe.dialect"),
        ("--journal", "journal.path"),
        ("--pin-factory", "gpio.pin_factory"),
    ):
        assert re.search(rf"^\| `{option} [A-Z]+` \| `{re.escape(key)}` \|", doc, re.MULTILINE), option


def test_the_doc_pin_map_matches_the_defaults_and_the_header() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for name, bcm in default_settings().gpio.pins.as_dict().items():
        row = rf"^\| `{name}` \| {bcm} \| {PHYSICAL_PIN[bcm]} \|"
        assert re.search(row, doc, re.MULTILINE), f"pin map row for {name} (BCM {bcm})"
    # The full BCM -> header table.
    cells = re.findall(r"^\| (BCM|header pin) \|((?: \d+ \|)+)$", doc, re.MULTILINE)
    bcms = [int(n) for label, row in cells if label == "BCM" for n in row.split("|") if n.strip()]
    pins = [int(n) for label, row in cells if label == "header pin" for n in row.split("|") if n.strip()]
    assert dict(zip(bcms, pins, strict=True)) == dict(PHYSICAL_PIN)


def test_the_physical_pin_map_is_a_bijection_onto_gpio_header_pins() -> None:
    # 40-pin header: power and ground pins are never GPIO.
    not_gpio = {1, 2, 4, 6, 9, 14, 17, 20, 25, 30, 34, 39}
    assert sorted(PHYSICAL_PIN) == list(range(28))
    assert len(set(PHYSICAL_PIN.values())) == 28
    assert set(PHYSICAL_PIN.values()) == set(range(1, 41)) - not_gpio


def test_side_bets_choose_what_the_table_offers() -> None:
    from controller.game.rules import Bet

    everything = default_settings().ruleset()
    assert all(everything.offers(b) for b in Bet)
    some = parse_config('[table]\nside_bets = ["dragon_bonus", "panda_8"]\n').ruleset()
    assert some.offers(Bet.DRAGON_BONUS_PLAYER)
    assert some.offers(Bet.DRAGON_BONUS_BANKER)
    assert some.offers(Bet.PANDA_8)
    assert some.offers(Bet.TIE)
    assert not some.offers(Bet.DRAGON_7)
    assert not some.offers(Bet.PLAYER_PAIR)
    assert not parse_config("[table]\nside_bets = []\n").ruleset().offers(Bet.BANKER_PAIR)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[table]\nside_bets = ["lucky_6"]\n', 'table.side_bets: unknown side bet "lucky_6"'),
        ('[table]\nside_bets = ["dragon_7", "dragon_7"]\n', "table.side_bets: a side bet is listed twice"),
        ('[table]\nside_bets = "dragon_7"\n', "table.side_bets: must be a list"),
    ],
)
def test_bad_side_bets_name_the_key(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    assert fragment in str(err.value)


# ---------------------------------------------------------------------------------------------------------
# Hostile files: refused at once, in one line (the console-script matrix is tests/cli/test_hostile_input.py)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as info:
        load_config(fifo)  # opening a FIFO for reading would block until a writer came
    assert str(info.value) == f"{fifo}: not a regular file (a FIFO (named pipe))"


def test_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(ConfigError, match=r"^/dev/zero: not a regular file \(a character device\)$"):
        load_config("/dev/zero")


def test_a_file_over_the_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    with path.open("wb") as fh:
        fh.truncate(MAX_CONFIG_BYTES + 1)  # sparse
    with pytest.raises(ConfigError, match=r": too large \(more than 1 MiB\)$"):
        load_config(path)


@pytest.mark.parametrize("opening", ["[", "{x = "])
def test_nesting_too_deep_for_the_parser_is_one_error(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    text = "[table]\nname = " + opening * 900 + "1" + closing * 900 + "\n"
    with pytest.raises(ConfigError) as info:  # tomllib recurses: a RecursionError before this fix
        parse_config(text)
    assert str(info.value) == "config.toml: arrays or inline tables nested too deeply"


def test_a_long_value_is_cut_in_the_message() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("[table]\nname = [" + "1, " * 10_000 + "]\n")
    assert str(info.value) == "config.toml: table.name: must be a string, got [1, 1, 1, 1, 1, 1, ...]"


def test_scoreboard_bilingual_is_off_by_default_and_reaches_the_board() -> None:
    assert parse_config("").scoreboard.bilingual is False
    settings = parse_config("[scoreboard]\nbilingual = true\n")
    assert settings.scoreboard.bilingual is True
    from controller.board.scoreboard import ScoreboardSink

    sink = ScoreboardSink(
        settings.scoreboard, table_name="T", limits=settings.table_limits(), ruleset=settings.ruleset()
    )
    assert sink.snapshot()["table"]["bilingual"] is True
