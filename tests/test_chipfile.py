"""controller.chipfile: the chip registry file (chips.toml) read into a ChipRegistry, every mistake one line
naming the range; [spots] in the configuration; check-config checking the registry too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.chipfile import MAX_CHIPS_BYTES, ChipFileError, load_chips, parse_chips
from controller.config import ConfigError, default_settings, format_cents, parse_config
from controller.game.chips import ChipStatus, format_uid
from controller.game.rules import Bet
from tests.console import run_main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "config" / "chips.example.toml"


def one_range(first: str, value: str = '"25.00"', last: str | None = None, status: str | None = None) -> str:
    text = f'[[range]]\nfirst = "{first}"\nvalue = {value}\n'
    if last is not None:
        text += f'last = "{last}"\n'
    if status is not None:
        text += f'status = "{status}"\n'
    return text


def error_of(text: str) -> str:
    with pytest.raises(ChipFileError) as info:
        parse_chips(text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("chips.toml: ")
    return message


def test_the_shipped_example_reads_and_resolves() -> None:
    registry = load_chips(EXAMPLE)
    assert len(registry) == 6
    assert registry.resolve("E004015000000000").cents == 500
    assert registry.resolve("e00401500001ffff").cents == 2500  # either case
    assert registry.resolve("E004015000020000").cents == 10_000
    assert registry.resolve("E004015000100001").status is ChipStatus.RETIRED
    stolen = registry.resolve("E004015000200042")
    assert (stolen.cents, stolen.status) == (50_000, ChipStatus.STOLEN)
    assert registry.resolve("E004015000200043").status is ChipStatus.UNKNOWN
    assert registry.resolve("E004015000040000").status is ChipStatus.UNKNOWN


def test_one_chip_when_last_is_absent_and_in_play_by_default() -> None:
    registry = parse_chips(one_range("00000000000000AA", "5"))
    assert registry.resolve("00000000000000AA").cents == 500
    assert registry.resolve("00000000000000AA").status is ChipStatus.IN_PLAY
    assert registry.resolve("00000000000000AB").status is ChipStatus.UNKNOWN
    assert registry.resolve("00000000000000A9").status is ChipStatus.UNKNOWN


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (one_range("E0040150000"), "chips.toml: range 1: first: UID 'E0040150000' is not 16 hex digits"),
        (one_range("E00401500000000G"), "range 1: first: UID 'E00401500000000G' is not 16 hex digits"),
        ('[[range]]\nfirst = 12\nvalue = "1"\n', "range 1: first: must be a UID as a string"),
        (one_range("E004015000000000", '"25.001"'), "range 1: value: fractions of a cent are not allowed"),
        (one_range("E004015000000000", '"-5"'), 'range 1: value: must be an amount such as "25.00"'),
        (one_range("E004015000000000", "0"), "range 1: value: must be more than 0"),
        (one_range("E004015000000000", "true"), 'range 1: value: must be an amount such as "25.00"'),
        (one_range("E004015000000000", status="lost"), 'range 1: status: must be "in_play", "retired" or "stolen"'),
        (one_range("E004015000000000", status="unknown"), "range 1: status: must be"),
        ('[[range]]\nfirst = "E004015000000000"\n', "range 1: value: missing"),
        ('[[range]]\nvalue = "5"\n', "range 1: first: missing"),
        (one_range("E004015000000000") + "colour = 1\n", "range 1: colour: unknown key"),
        (
            one_range("E004015000000009", last="E004015000000001"),
            "range 1: last E004015000000001 is below first E004015000000009",
        ),
        ("", "chips.toml: no [[range]]: every chip would be unknown"),
        ("[range]\nfirst = 1\n", "chips.toml: range must be an array of tables ([[range]])"),
        ("chips = 1\n", "chips.toml: chips: unknown key"),
        ("[[range\n", "chips.toml: Expected ']]' at the end of an array declaration"),
        (
            one_range("0000000000000001", last="00000000000000FF")
            + one_range("0000000000001000")
            + one_range("0000000000000080", last="0000000000000090"),
            "chips.toml: range 3: overlaps range 1 (0000000000000001-00000000000000FF)",
        ),
        (
            # The later range in the file is blamed, whatever the order of the UIDs.
            one_range("0000000000000080") + one_range("0000000000000001", last="00000000000000FF"),
            "chips.toml: range 2: overlaps range 1 (0000000000000080-0000000000000080)",
        ),
    ],
)
def test_each_mistake_is_one_line_naming_the_range(text: str, expected: str) -> None:
    assert expected in error_of(text)


def test_the_file_is_read_bounded_and_regular(tmp_path: Path) -> None:
    with pytest.raises(ChipFileError, match=r"cannot read: No such file or directory$"):
        load_chips(tmp_path / "absent.toml")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ChipFileError, match=r"not a regular file \(a FIFO"):
        load_chips(fifo)  # refused at once, never waits for a writer
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (MAX_CHIPS_BYTES + 1))
    with pytest.raises(ChipFileError, match="too large"):
        load_chips(big)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"# caf\xe9\n")
    with pytest.raises(ChipFileError, match="line 1: not UTF-8 text"):
        load_chips(latin)


@given(
    st.lists(
        st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 1000), st.integers(1, 10_000_00)), min_size=1, max_size=12
    )
)
def test_a_registry_resolves_every_uid_to_the_one_range_holding_it(spans: list[tuple[int, int, int]]) -> None:
    """Ranges written in any order: an overlap is refused naming a later range, otherwise every UID at a
    range's edges resolves to that range's value and the UIDs just outside resolve to another or to none."""
    ranges = [(first, min(first + width, 2**64 - 1), cents) for first, width, cents in spans]
    text = "".join(
        one_range(format_uid(first), f'"{format_cents(cents)}"', last=format_uid(last)) for first, last, cents in ranges
    )
    overlapping = any(a[0] <= b[1] and b[0] <= a[1] for i, a in enumerate(ranges) for b in ranges[i + 1 :])
    if overlapping:
        assert "overlaps range" in error_of(text)
        return
    registry = parse_chips(text)
    for first, last, cents in ranges:
        for uid in (first, last, (first + last) // 2):
            assert registry.resolve(uid).cents == cents
    holders = {uid for first, last, _ in ranges for uid in (first, last)}
    for first, last, _ in ranges:
        for outside in (first - 1, last + 1):
            if 0 <= outside < 2**64 and not any(f <= outside <= la for f, la, _ in ranges):
                assert outside not in holders
                assert registry.resolve(outside).status is ChipStatus.UNKNOWN


# -- [spots] in the configuration ------------------------------------------------------------------------


def test_no_reader_by_default_and_no_money_rules() -> None:
    settings = default_settings()
    assert settings.spots.port is None
    assert not settings.spots.enabled
    assert settings.money_rules() is None
    assert "spots:      off (no bet-spot reader)" in settings.summary()


def test_a_reader_gives_money_rules_from_the_table() -> None:
    settings = parse_config(
        '[table]\nrules = "ez"\nside_bets = ["dragon_7"]\n'
        '[table.limits]\nunit = "10"\nminimum = "50"\nmaximum = "1000"\n'
        'side_minimum = "10"\nside_maximum = "200"\nallow_both_sides = true\n'
        '[spots]\nport = "socket://localhost:7780"\nchips = "/etc/shoe-controller/chips.toml"\n'
        "seats = 7\nleave_after_coups = 5\n"
    )
    rules = settings.money_rules()
    assert rules is not None
    assert rules.ruleset.name == "ez"
    assert rules.ruleset.offered_side_bets == frozenset({Bet.DRAGON_7})
    assert (rules.seats, rules.leave_after_coups) == (7, 5)
    lim = rules.limits
    assert (lim.unit_cents, lim.minimum_cents, lim.maximum_cents) == (1000, 5000, 100_000)
    assert (lim.side_minimum_cents, lim.side_maximum_cents, lim.allow_both_sides) == (1000, 20_000, True)
    assert settings.table_limits() == lim
    summary = "\n".join(settings.summary())
    assert "spots:      socket://localhost:7780 at 115200 baud, 7 seats" in summary


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ('[spots]\nport = "/dev/spots"\n', "spots.chips", "required when spots.port is set"),
        ('[spots]\nport = "spots"\nchips = "/c"\n', "spots.port", "must be an absolute device path"),
        ('[spots]\nport = "ftp://x"\nchips = "/c"\n', "spots.port", "unknown pyserial URL scheme"),
        ("[spots]\nseats = 15\n", "spots.seats", "must be 1-14, got 15"),
        ("[spots]\nseats = 0\n", "spots.seats", "must be 1-14, got 0"),
        ("[spots]\nleave_after_coups = 0\n", "spots.leave_after_coups", "must be 1-1000"),
        ("[spots]\nbaud = 1234\n", "spots.baud", "must be"),
        ("[spots]\nprot = 1\n", "spots.prot", "unknown key (did you mean port?)"),
        (
            '[table.limits]\nside_minimum = "600"\n',
            "table.limits.side_minimum",
            "600.00 is above the side maximum 500.00",
        ),
        ('[table.limits]\nallow_both_sides = "yes"\n', "table.limits.allow_both_sides", "must be true or false"),
    ],
)
def test_spots_mistakes_name_their_key(text: str, key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert str(info.value).startswith(f"config.toml: {key}: "), str(info.value)
    assert fragment in str(info.value)


def test_run_spots_overrides_the_port() -> None:
    settings = parse_config('[spots]\nchips = "/etc/shoe-controller/chips.toml"\n')
    assert settings.with_overrides(spots="/dev/pts/9").spots.port == "/dev/pts/9"
    assert settings.with_overrides().spots.port is None
    with pytest.raises(ConfigError, match=r"^--spots: spots.port: must be an absolute device path"):
        settings.with_overrides(spots="pts/9")
    needs_chips = r"^--spots: spots.port: the chip registry file is required when spots.port is set$"
    with pytest.raises(ConfigError, match=needs_chips):
        default_settings().with_overrides(spots="/dev/pts/9")


# -- check-config reads the registry ---------------------------------------------------------------------


def test_check_config_reads_the_registry(tmp_path: Path) -> None:
    chips = tmp_path / "chips.toml"
    chips.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[spots]\nport = "/dev/spots"\nchips = "{chips}"\n', encoding="utf-8")
    good = run_main(["shoe-controller", "check-config", str(config)])
    assert good.returncode == 0, good.stderr
    assert f"  chips:      {chips}: 6 ranges" in good.stdout.splitlines()

    chips.write_text(one_range("0000000000000001", last="00000000000000FF") + one_range("0000000000000010"))
    bad = run_main(["shoe-controller", "check-config", str(config)])
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr == f"{chips}: range 2: overlaps range 1 (0000000000000001-00000000000000FF)\n"

    chips.unlink()
    missing = run_main(["shoe-controller", "check-config", str(config)])
    assert (missing.returncode, missing.stderr) == (2, f"{chips}: cannot read: No such file or directory\n")


def test_table_commission_chooses_the_boxes() -> None:
    from controller.game.rules import CommissionCollection

    assert default_settings().ruleset().commission_collection is CommissionCollection.AT_PAYOUT  # the game's own
    boxes = parse_config('[table]\ncommission = "shoe_end"\n[spots]\nport = "/dev/spots"\nchips = "/c.toml"\n')
    assert boxes.ruleset().commission_collection is CommissionCollection.AT_SHOE_END
    rules = boxes.money_rules()
    assert rules is not None and rules.ruleset.commission_collection is CommissionCollection.AT_SHOE_END
    assert boxes.table_rules().money == rules
    with pytest.raises(ConfigError, match=r'^config.toml: table.commission: must be "", "payout" or "shoe_end"'):
        parse_config('[table]\ncommission = "weekly"\n')


def test_run_refuses_a_bad_registry_in_one_line(tmp_path: Path) -> None:
    chips = tmp_path / "chips.toml"
    chips.write_text(one_range("E0040150000"), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[spots]\nchips = "{chips}"\n', encoding="utf-8")
    args = ["--config", str(config), "--journal", str(tmp_path / "j.db"), "--pin-factory", "mock"]
    result = run_main(["shoe-controller", "run", *args, "--spots", "/dev/null/spots"])
    assert result.returncode == 2
    assert result.stderr == (
        f"shoe-controller: chip registry {chips}: range 1: first: UID 'E0040150000' is not 16 hex digits\n"
    )
    assert not (tmp_path / "j.db").exists()  # refused before anything was opened
    bad_port = run_main(["shoe-controller", "run", *args, "--spots", "spots"])
    assert bad_port.returncode == 2
    assert bad_port.stderr.startswith("shoe-controller: --spots: spots.port: must be an absolute device path")
