"""The rulebook: reads the pay tables (``rulesets.toml``) into validated :class:`Ruleset` values.

This is the I/O edge for the rules: the pure core (:mod:`controller.game.rules`) defines what a ruleset
is; this module reads the shipped ``controller/rulesets.toml`` (through :mod:`importlib.resources`, so it
works from a wheel) or a file the operator names, checks it with pydantic, and turns every mistake into a
one-line :class:`RulebookError` that names the file, the ruleset and the key::

    rulesets.toml: [ez].tie_pays: pays must not be negative, got '-8'

Pays are exact: strings such as ``"11"``, ``"1/2"`` or ``"0.05"`` (TOML integers are accepted too); a TOML
float is refused, because money is never a float here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainValidator,
    StrictBool,
    StrictStr,
    TypeAdapter,
    ValidationError,
)

from controller.game.rules import CommissionCollection, DragonBonus, Ruleset

__all__ = ["SHIPPED_NAME", "RulebookError", "get_ruleset", "load_rulesets", "parse_pays", "parse_rulesets"]

#: The shipped file, inside the ``controller`` package.
SHIPPED_NAME = "rulesets.toml"

_NUMBER = re.compile(r"[+-]?(\d+(/\d+)?|\d*\.\d+|\d+\.\d*)")


class RulebookError(ValueError):
    """A rulesets file that cannot be used. ``str()`` is one line naming the file, ruleset and key."""

    def __init__(self, source: str, reason: str, ruleset: str | None = None, key: str | None = None) -> None:
        where = ""
        if ruleset is not None:
            where = f"[{ruleset}]" + (f".{key}" if key else "") + ": "
        super().__init__(f"{source}: {where}{reason}")
        self.source = source
        self.ruleset = ruleset
        self.key = key
        self.reason = reason


def parse_pays(value: object) -> Fraction:
    """An exact, non-negative "N to 1" from ``"11"``, ``"1/2"``, ``"0.05"`` or an integer.

    Raises :class:`ValueError` (with the reason) for floats, booleans, malformed text and negatives.
    """
    if isinstance(value, bool):
        raise ValueError(f'expected a pay such as "11" or "1/2", got {value!r}')
    if isinstance(value, Fraction):
        pays = value
    elif isinstance(value, int):
        pays = Fraction(value)
    elif isinstance(value, float):
        raise ValueError(f'write pays as a string ("{value}"), not a float: money is exact')
    elif isinstance(value, str):
        text = value.strip()
        if not _NUMBER.fullmatch(text):
            raise ValueError(f'not a pay (expected "11", "1/2" or "0.05"), got {value!r}')
        try:
            pays = Fraction(text)
        except ZeroDivisionError:
            raise ValueError(f"division by zero in {value!r}") from None
    else:
        raise ValueError(f'expected a pay such as "11" or "1/2", got {value!r}')
    if pays < 0:
        raise ValueError(f"pays must not be negative, got {value!r}")
    return pays


def _parse_optional_pays(value: object) -> Fraction | None:
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    return parse_pays(value)


def _parse_rate(value: object) -> Fraction:
    rate = parse_pays(value)
    if rate >= 1:
        raise ValueError(f'a rate must be below 1 ("0.05" is 5 %), got {value!r}')
    return rate


def _parse_margin(value: object) -> int:
    # TOML table keys are strings; "9" is the margin 9.
    if isinstance(value, str) and value.isdigit() and value == str(int(value)):
        margin = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        margin = value
    else:
        raise ValueError(f"a margin is a number of points 1-9, got {value!r}")
    if not 1 <= margin <= 9:
        raise ValueError(f"margin {margin} outside 1-9")
    return margin


_Pays = Annotated[Fraction, PlainValidator(parse_pays)]
_OptionalPays = Annotated[Fraction | None, PlainValidator(_parse_optional_pays)]
_Rate = Annotated[Fraction, PlainValidator(_parse_rate)]
_Margin = Annotated[int, PlainValidator(_parse_margin)]


class _DragonBonusTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    natural_win: _Pays
    natural_tie_pushes: StrictBool
    ladder: dict[_Margin, _Pays]


class _RulesetTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: StrictStr = ""
    banker_pays: _Pays
    commission_rate: _Rate
    commission_collection: CommissionCollection
    banker_three_card_seven_pushes: StrictBool
    banker_six_pays: _OptionalPays = None
    player_pays: _Pays
    tie_pays: _Pays
    tie_pushes_main_bets: StrictBool
    pair_pays: _Pays
    dragon_7_pays: _Pays
    panda_8_pays: _Pays
    dragon_bonus: _DragonBonusTable

    def to_ruleset(self, name: str) -> Ruleset:
        ladder = dict(sorted(self.dragon_bonus.ladder.items(), reverse=True))
        return Ruleset(
            name=name,
            description=self.description,
            banker_pays=self.banker_pays,
            commission_rate=self.commission_rate,
            banker_three_card_seven_pushes=self.banker_three_card_seven_pushes,
            banker_six_pays=self.banker_six_pays,
            player_pays=self.player_pays,
            tie_pays=self.tie_pays,
            tie_pushes_main_bets=self.tie_pushes_main_bets,
            pair_pays=self.pair_pays,
            dragon_bonus=DragonBonus(
                natural_win=self.dragon_bonus.natural_win,
                natural_tie_pushes=self.dragon_bonus.natural_tie_pushes,
                ladder=MappingProxyType(ladder),
            ),
            dragon_7_pays=self.dragon_7_pays,
            panda_8_pays=self.panda_8_pays,
            commission_collection=self.commission_collection,
        )


_FILE = TypeAdapter(dict[str, _RulesetTable])


def _first_error(source: str, error: ValidationError) -> RulebookError:
    """The first pydantic error as a one-line :class:`RulebookError` naming the ruleset and key."""
    errors = error.errors()
    first = errors[0]
    loc = [str(part) for part in first["loc"] if part != "[key]"]
    kind = first["type"]
    if kind == "extra_forbidden":
        reason = "unknown key"
    elif kind == "missing":
        reason = "missing key"
    else:
        reason = str(first["msg"]).removeprefix("Value error, ")
    if len(errors) > 1:
        reason += f" (and {len(errors) - 1} more)"
    if not loc:
        return RulebookError(source, reason)
    ruleset = loc[0]
    key = ".".join(loc[1:]) or None
    if key is None and kind in ("dict_type", "model_type"):
        reason = f"expected a table [{ruleset}], got a plain value"
    return RulebookError(source, reason, ruleset=ruleset, key=key)


def parse_rulesets(document: Mapping[str, Any], source: str = SHIPPED_NAME) -> dict[str, Ruleset]:
    """Validate an already-parsed TOML document into rulesets (name -> :class:`Ruleset`)."""
    if not document:
        raise RulebookError(source, "no rulesets defined")
    try:
        tables = _FILE.validate_python(dict(document))
    except ValidationError as error:
        raise _first_error(source, error) from None
    rulesets: dict[str, Ruleset] = {}
    for name, table in tables.items():
        try:
            rulesets[name] = table.to_ruleset(name)
        except ValueError as error:  # an invariant Ruleset or DragonBonus checks itself
            raise RulebookError(source, str(error), ruleset=name) from None
    return rulesets


def load_rulesets(path: str | Path | None = None) -> dict[str, Ruleset]:
    """Read the shipped ``rulesets.toml`` (or the file at ``path``): ruleset name -> :class:`Ruleset`.

    Raises :class:`RulebookError` for an unreadable file, bad TOML, an unknown or missing key, or a bad
    value; the message is one line naming the file, the ruleset and the key.
    """
    if path is None:
        source = SHIPPED_NAME
        try:
            text = resources.files("controller").joinpath(SHIPPED_NAME).read_text(encoding="utf-8")
        except OSError as error:
            raise RulebookError(source, f"cannot read the shipped rulesets: {error}") from None
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise RulebookError(source, f"cannot read: {error.strerror or error}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RulebookError(source, f"not valid TOML: {error}") from None
    return parse_rulesets(document, source)


@lru_cache(maxsize=1)
def _shipped() -> Mapping[str, Ruleset]:
    return MappingProxyType(load_rulesets())


def get_ruleset(name: str, tie_pays: Fraction | int | str | None = None) -> Ruleset:
    """The shipped ruleset called ``name``, optionally with another Tie pay (``8``, ``9``, ``"9"``).

    Raises :class:`RulebookError` for an unknown name or a bad ``tie_pays``.
    """
    shipped = _shipped()
    try:
        ruleset = shipped[name]
    except KeyError:
        known = ", ".join(sorted(shipped))
        raise RulebookError(SHIPPED_NAME, f"unknown ruleset {name!r} (known: {known})") from None
    if tie_pays is None:
        return ruleset
    try:
        pays = parse_pays(tie_pays)
    except ValueError as error:
        raise RulebookError(SHIPPED_NAME, str(error), ruleset=name, key="tie_pays") from None
    return ruleset.with_tie_pays(pays)
