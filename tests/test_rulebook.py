"""The rulebook: the shipped rulesets.toml agrees with rules.py, and a bad file gives one line naming the key."""

from fractions import Fraction
from pathlib import Path

import pytest

from controller.game.rules import BUILTIN_RULESETS, COMMISSION, EZ, SUPER6, CommissionCollection
from controller.rulebook import RulebookError, get_ruleset, load_rulesets, parse_pays

SHIPPED = Path(__file__).resolve().parents[1] / "controller" / "rulesets.toml"


def test_shipped_toml_equals_the_builtin_rulesets() -> None:
    loaded = load_rulesets()
    assert loaded == dict(BUILTIN_RULESETS)
    assert list(loaded) == ["commission", "ez", "super6"]
    # Spot-check the values that differ between the games, so equality cannot hide behind defaults.
    assert loaded["commission"].commission_rate == Fraction(1, 20)
    assert loaded["ez"].banker_three_card_seven_pushes is True
    assert loaded["super6"].banker_six_pays == Fraction(1, 2)
    assert loaded["commission"].banker_six_pays is None
    assert dict(loaded["ez"].dragon_bonus.ladder) == {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1}


def test_a_given_path_reads_the_same_as_the_shipped_file(tmp_path: Path) -> None:
    copy = tmp_path / "house.toml"
    copy.write_text(SHIPPED.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_rulesets(copy) == dict(BUILTIN_RULESETS)
    assert load_rulesets(str(copy)) == dict(BUILTIN_RULESETS)


def test_get_ruleset() -> None:
    assert get_ruleset("commission") == COMMISSION
    assert get_ruleset("ez") == EZ
    assert get_ruleset("super6") == SUPER6
    assert get_ruleset("ez", tie_pays=9).tie_pays == 9
    assert get_ruleset("ez", tie_pays="9").tie_pays == 9
    assert get_ruleset("super6", tie_pays=Fraction(9)).banker_six_pays == Fraction(1, 2)
    assert get_ruleset("commission").tie_pays == 8  # the override did not leak into the cache


def test_get_ruleset_refusals() -> None:
    with pytest.raises(RulebookError, match=r"unknown ruleset 'baccarat' \(known: commission, ez, super6\)"):
        get_ruleset("baccarat")
    with pytest.raises(RulebookError, match=r"\[ez\]\.tie_pays: pays must not be negative") as info:
        get_ruleset("ez", tie_pays=-1)
    assert info.value.key == "tie_pays"


@pytest.mark.parametrize(
    ("text", "pays"),
    [("11", 11), ("1/2", Fraction(1, 2)), ("0.05", Fraction(1, 20)), (" 8 ", 8), (25, 25), ("1.5", Fraction(3, 2))],
)
def test_parse_pays(text: object, pays: Fraction) -> None:
    assert parse_pays(text) == pays


@pytest.mark.parametrize("bad", ["-1", "one", "1/0", "1e3", "nan", "", 8.0, True, None, "1//2"])
def test_parse_pays_refuses(bad: object) -> None:
    with pytest.raises(ValueError, match=r"pay|division"):
        parse_pays(bad)


def edited(tmp_path: Path, old: str, new: str, section: str = "[ez]") -> Path:
    """The shipped file with one line changed inside ``section`` (the first match after its header)."""
    text = SHIPPED.read_text(encoding="utf-8")
    start = text.index(section + "\n")
    at = text.index(old, start)
    path = tmp_path / "rulesets.toml"
    path.write_text(text[:at] + new + text[at + len(old) :], encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "section", "message", "key"),
    [
        (
            'tie_pays = "8"',
            'tie_pays = "8"\ntie_pay = "9"',
            "[ez]",
            "rulesets.toml: [ez].tie_pay: unknown key",
            "tie_pay",
        ),
        (
            'tie_pays = "8"',
            'tie_pays = "-8"',
            "[ez]",
            "rulesets.toml: [ez].tie_pays: pays must not be negative, got '-8'",
            "tie_pays",
        ),
        (
            'banker_six_pays = "1/2"',
            'banker_six_pays = "1/2x"',
            "[super6]",
            'rulesets.toml: [super6].banker_six_pays: not a pay (expected "11", "1/2" or "0.05"), got \'1/2x\'',
            "banker_six_pays",
        ),
        (
            'banker_six_pays = "1/2"',
            'banker_six_pays = "1/0"',
            "[super6]",
            "rulesets.toml: [super6].banker_six_pays: division by zero in '1/0'",
            "banker_six_pays",
        ),
        (
            '9 = "30"',
            '12 = "30"',
            "[ez.dragon_bonus.ladder]",
            "rulesets.toml: [ez].dragon_bonus.ladder.12: margin 12 outside 1-9",
            "dragon_bonus.ladder.12",
        ),
        (
            '4 = "1"',
            '4 = "-1"',
            "[commission.dragon_bonus.ladder]",
            "rulesets.toml: [commission].dragon_bonus.ladder.4: pays must not be negative, got '-1'",
            "dragon_bonus.ladder.4",
        ),
        (
            'tie_pays = "8"',
            "tie_pays = 8.5",
            "[ez]",
            'rulesets.toml: [ez].tie_pays: write pays as a string ("8.5"), not a float: money is exact',
            "tie_pays",
        ),
        (
            'pair_pays = "11"\n',
            "",
            "[ez]",
            "rulesets.toml: [ez].pair_pays: missing key",
            "pair_pays",
        ),
        (
            'commission_rate = "0.05"',
            'commission_rate = "5"',
            "[commission]",
            "rulesets.toml: [commission].commission_rate: a rate must be below 1 (\"0.05\" is 5 %), got '5'",
            "commission_rate",
        ),
        (
            'commission_collection = "payout"',
            'commission_collection = "later"',
            "[ez]",
            "rulesets.toml: [ez].commission_collection: Input should be 'payout' or 'shoe_end'",
            "commission_collection",
        ),
        (
            "natural_tie_pushes = true",
            'natural_tie_pushes = "yes"',
            "[ez.dragon_bonus]",
            "rulesets.toml: [ez].dragon_bonus.natural_tie_pushes: Input should be a valid boolean",
            "dragon_bonus.natural_tie_pushes",
        ),
    ],
    ids=[
        "unknown-key",
        "negative-pay",
        "bad-fraction",
        "zero-denominator",
        "margin-12",
        "negative-ladder-pay",
        "float",
        "missing-key",
        "rate-not-below-1",
        "bad-collection",
        "bool-as-string",
    ],
)
def test_bad_files_give_one_line_naming_the_key(
    tmp_path: Path, old: str, new: str, section: str, message: str, key: str
) -> None:
    path = edited(tmp_path, old, new, section)
    with pytest.raises(RulebookError) as info:
        load_rulesets(path)
    error = info.value
    assert isinstance(error, ValueError)
    assert "\n" not in str(error)
    assert str(error) == message.replace("rulesets.toml", str(path), 1)
    assert error.source == str(path)
    assert error.ruleset == section.strip("[]").split(".")[0]
    assert error.key == key


def test_several_mistakes_report_the_first_and_count_the_rest(tmp_path: Path) -> None:
    path = edited(tmp_path, 'panda_8_pays = "25"', 'panda_8_pays = "-25"\nbogus = 1')
    with pytest.raises(RulebookError, match=r"\[ez\]\.panda_8_pays: pays must not be negative.*\(and 1 more\)$"):
        load_rulesets(path)


def test_pays_as_toml_integers_and_none_six_pay_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text(
        "[nine]\n"
        'banker_pays = 1\ncommission_rate = "1/20"\ncommission_collection = "shoe_end"\n'
        "banker_three_card_seven_pushes = false\nplayer_pays = 1\ntie_pays = 9\n"
        "tie_pushes_main_bets = true\npair_pays = 11\ndragon_7_pays = 40\npanda_8_pays = 25\n"
        '[nine.dragon_bonus]\nnatural_win = 1\nnatural_tie_pushes = false\nladder = { 9 = "30", 4 = 1 }\n',
        encoding="utf-8",
    )
    nine = load_rulesets(path)["nine"]
    assert nine.name == "nine" and nine.description == ""
    assert nine.tie_pays == 9 and nine.banker_six_pays is None
    assert nine.commission_collection is CommissionCollection.AT_SHOE_END
    assert dict(nine.dragon_bonus.ladder) == {9: 30, 4: 1}
    assert nine.dragon_bonus.natural_tie_pushes is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no rulesets defined"),
        ("[ez\n", "not valid TOML"),
        ("ez = 3\n", "[ez]: expected a table [ez], got a plain value"),
    ],
)
def test_unusable_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rulesets.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulebookError) as info:
        load_rulesets(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    with pytest.raises(RulebookError, match=r"nowhere\.toml: cannot read"):
        load_rulesets(path)


def test_the_ruleset_names_are_stated_once() -> None:
    """The core's RULESET_NAMES is the one list: the shipped file, the configuration, the commands' --rules and
    the configuration reference all say exactly these names."""
    import argparse
    import re

    from controller.commands import add_rules_argument
    from controller.config import ConfigError, parse_config
    from controller.game.rules import DEFAULT_RULESET, RULESET_NAMES

    assert tuple(load_rulesets()) == RULESET_NAMES == tuple(BUILTIN_RULESETS)
    for name in RULESET_NAMES:
        assert parse_config(f'[table]\nrules = "{name}"\n').table.rules == name
        assert get_ruleset(name).name == name
    with pytest.raises(ConfigError, match=" or ".join(f'"{n}"' for n in RULESET_NAMES[-2:])):
        parse_config('[table]\nrules = "punto"\n')
    assert parse_config("").table.rules == DEFAULT_RULESET
    parser = argparse.ArgumentParser()
    add_rules_argument(parser)
    action = next(a for a in parser._actions if a.dest == "rules")
    assert tuple(action.choices or ()) == RULESET_NAMES and action.default == DEFAULT_RULESET
    doc = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| `table.rules`"))
    assert tuple(re.findall(r'`"(\w+)"`', row.split("|")[4])) == RULESET_NAMES
