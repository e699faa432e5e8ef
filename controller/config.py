"""The daemon's configuration: a TOML file read into validated, frozen settings.

``shoe-controller run --config FILE`` and ``shoe-controller check-config FILE`` read the operator's file
(default ``/etc/shoe-controller/config.toml``) with :mod:`tomllib` and check it with pydantic. Every key is
optional and has a default, so an empty file is a valid configuration (:func:`default_settings`). Unknown
keys are refused at every level, so a misspelt key is an error rather than a silently ignored setting.

Every mistake becomes one :class:`ConfigError` whose message is one line naming the file and the key::

    config.toml: gpio.pins.fault: 99 is not a BCM GPIO number (0-27)
    config.toml: table.decks: must be 1-8, got 9
    config.toml: shoe.dialects: unknown key (did you mean dialect?)
    config.toml: line 4: Expected '=' after a key in a key/value pair (column 7)

Money (the table limits) is written as decimal strings such as ``"25.00"`` (TOML integers and floats are
accepted too and read through their decimal text) and held as integer cents, never as a float.

The reference for every key is ``docs/configuration.md``; ``config/config.example.toml`` lists every key
with its default. Tests keep both in step with the models below.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
import reprlib
import tomllib
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from controller.game.flag_limits import DEFAULT_MARGIN, DEFAULT_STEP, DEFAULT_THRESHOLD
from controller.game.rules import (
    DEFAULT_RULESET,
    RULESET_NAMES,
    SIDE_BET_NAMES,
    WAGER_GROUPS,
    WAGER_NAMES,
    CommissionCollection,
    wagers_named,
)
from controller.game.shoe import MAX_DECKS, MIN_DECKS, BurnMode, BurnRule, CutCardRule
from controller.game.table import TableRules
from controller.game.wagers import MAX_SEATS
from controller.pinmap import DEFAULT_PINS, PHYSICAL_PIN, RESERVED_GPIOS, PinMapError, check_pin_map, pin_problem
from controller.userfile import UserFileError, read_bytes
from floor_protocol.addresses import Broker, parse_broker, parse_host_port
from floor_protocol.signing import SigningError, key_id, parse_public_key
from floor_protocol.topics import ID_PATTERN, Leaf, table_prefix, table_topic

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from controller.game.rules import Ruleset
    from controller.game.settlement import TableLimits
    from controller.game.wagers import MoneyRules

__all__ = [
    "DEFAULT_BAUD",
    "DEFAULT_JOURNAL_PATH",
    "DEFAULT_PATH",
    "MAX_CONFIG_BYTES",
    "PHYSICAL_PIN",
    "RESERVED_GPIOS",
    "ConfigError",
    "FloorSection",
    "GpioPins",
    "GpioSection",
    "JournalSection",
    "LcdSection",
    "LimitsSection",
    "ScoreboardSection",
    "ServiceSection",
    "Settings",
    "ShoeSection",
    "SpotsSection",
    "SurveillanceSection",
    "TableSection",
    "TraySection",
    "default_settings",
    "format_cents",
    "load_config",
    "parse_cents",
    "parse_config",
    "setting_keys",
]

#: Where the daemon looks when ``--config`` is not given.
DEFAULT_PATH = Path("/etc/shoe-controller/config.toml")
#: ``journal.path`` when the file does not set it (the service's ``StateDirectory=``). Written only here:
#: ``run``, ``history`` and ``journal verify`` all take it from the settings.
DEFAULT_JOURNAL_PATH = Path("/var/lib/shoe-controller/journal.db")
#: A configuration file is a few kilobytes; anything larger than this is not one (and is not read whole).
MAX_CONFIG_BYTES = 1024 * 1024

BurnName = Literal["exposed", "fixed", "none"]
CutCardName = Literal["one_more", "finish"]
DialectName = Literal["binary", "ascii"]
PinFactoryName = Literal["lgpio", "rpigpio", "native", "mock"]
ExpanderName = Literal["PCF8574", "MCP23008", "MCP23017"]
RevealName = Literal["on_read", "on_declare"]
CommissionName = Literal["", "payout", "shoe_end"]
LogLevelName = Literal["info", "debug", "warning", "error"]

#: The shoe's line speed when ``shoe.baud`` is not given, by dialect.
DEFAULT_BAUD: Mapping[str, int] = MappingProxyType({"binary": 115200, "ascii": 9600})
STANDARD_BAUDS = (
    1200,
    2400,
    4800,
    9600,
    19200,
    38400,
    57600,
    115200,
    230400,
    460800,
    500000,
    921600,
    1000000,
)

#: pyserial's URL handlers (``serial.serial_for_url``): ``scheme://...``.
SERIAL_URL_SCHEMES = ("socket", "rfc2217", "loop", "spy", "hwgrep", "alt", "cp2110")

_MAX_CENTS = 100_000_000_00  # a hundred million: anything above is a typo
_DECIMAL = re.compile(r"\d+(\.\d+)?")


# ---------------------------------------------------------------------------------------------------------
# The error


class ConfigError(ValueError):
    """A configuration that cannot be used. ``str()`` is one line naming the file and the key path.

    ``source`` is the file (or ``--option`` for a command-line override), ``key`` the dotted key path
    (``None`` for a whole-file problem), ``line`` the line of a TOML syntax error, ``reason`` the rest.
    """

    def __init__(self, source: str, reason: str, key: str | None = None, line: int | None = None) -> None:
        where = f"line {line}: " if line is not None else ""
        if key:
            where += f"{key}: "
        super().__init__(f"{source}: {where}{reason}")
        self.source = source
        self.reason = reason
        self.key = key
        self.line = line


class _KeyedError(ValueError):
    """Raised by a table-level check to blame one key of that table (pydantic would blame the table)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


# ---------------------------------------------------------------------------------------------------------
# Value checks (each raises ValueError with the reason; the key is added from pydantic's location)


#: Longest value quoted back in an error message; a longer one is cut (the message stays one short line).
_SHOW_MAX = 60
_REPR = reprlib.Repr()  # bounded nesting and length (Python 3.11's Repr takes no arguments)
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 3, 6, 4
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = _SHOW_MAX


def _show(value: object) -> str:
    """A value as TOML would write it: ``true``, ``"text"``, ``8``; a long one cut to :data:`_SHOW_MAX`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    text = json.dumps(value[: _SHOW_MAX + 1]) if isinstance(value, str) else _REPR.repr(value)
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."


def _int_in(lo: int, hi: int) -> Callable[[object], int]:
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer {lo}-{hi}, got {_show(value)}")
        if not lo <= value <= hi:
            raise ValueError(f"must be {lo}-{hi}, got {value}")
        return value

    return check


def _side_bets(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of side bet names, got {_show(value)}")
    for name in value:
        if name not in SIDE_BET_NAMES:
            raise ValueError(f"unknown side bet {_show(name)} (choose from {', '.join(SIDE_BET_NAMES)})")
    if len(set(value)) != len(value):
        raise ValueError("a side bet is listed twice")
    return tuple(value)


#: What may wait for a supervisor's approval (``[table] supervisor_approves``; controller.game.approvals.
#: Approvable): ``void`` (VOID held, or NEW SHOE pressed, with a coup in progress), ``close_box`` (NEW SHOE pressed
#: while a commission box still owes: it closes uncollected).
APPROVABLE = ("void", "close_box")


def _approvable(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of actions, got {_show(value)}")
    for name in value:
        if name not in APPROVABLE:
            raise ValueError(f"unknown action {_show(name)} (choose from {', '.join(APPROVABLE)})")
    if len(set(value)) != len(value):
        raise ValueError("an action is listed twice")
    return tuple(value)


def _one_of(choices: tuple[Any, ...]) -> Callable[[object], Any]:
    def check(value: object) -> Any:
        if isinstance(value, bool) or value not in choices:
            shown = [_show(c) for c in choices]
            listed = f"{', '.join(shown[:-1])} or {shown[-1]}" if len(shown) > 1 else shown[0]
            raise ValueError(f"must be {listed}, got {_show(value)}")
        return value

    return check


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {_show(value)}")
    return value


def _seconds(lo: float, hi: float, *, lo_inclusive: bool = False) -> Callable[[object], float]:
    def check(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"must be a number of seconds, got {_show(value)}")
        ok = (lo <= value if lo_inclusive else lo < value) and value <= hi
        if not ok:
            low = f"at least {lo:g}" if lo_inclusive else f"more than {lo:g}"
            raise ValueError(f"must be {low} and at most {hi:g} seconds, got {value:g}")
        return float(value)

    return check


def _text(max_len: int) -> Callable[[object], str]:
    def check(value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(f"must be a string, got {_show(value)}")
        if not value.strip():
            raise ValueError("must not be empty")
        if len(value) > max_len:
            raise ValueError(f"must be at most {max_len} characters, got {len(value)}")
        if not value.isprintable():
            raise ValueError(f"must be printable text, got {_show(value)}")
        return value

    return check


def parse_cents(value: object) -> int:
    """Money from a decimal string (``"25.00"``), an integer or a float, as positive integer cents.

    Refuses fractions of a cent, zero, negatives, booleans and anything that is not a plain decimal
    (no sign, exponent or currency symbol). A float is read through its shortest decimal text, so
    ``25.1`` is 2510 cents, never 2509.
    """
    if isinstance(value, bool):
        raise ValueError(f'must be an amount such as "25.00", got {_show(value)}')
    if isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f'must be an amount such as "25.00", got {_show(value)}')
        amount = Decimal(repr(value))
    elif isinstance(value, str):
        if not _DECIMAL.fullmatch(value.strip()):
            raise ValueError(f'must be an amount such as "25.00", got {_show(value)}')
        try:
            amount = Decimal(value.strip())
        except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
            raise ValueError(f'must be an amount such as "25.00", got {_show(value)}') from None
    else:
        raise ValueError(f'must be an amount such as "25.00", got {_show(value)}')
    cents = amount * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"fractions of a cent are not allowed, got {_show(value)}")
    if cents <= 0:
        raise ValueError(f"must be more than 0, got {_show(value)}")
    if cents > _MAX_CENTS:
        raise ValueError(f"must be at most {format_cents(_MAX_CENTS)}, got {_show(value)}")
    return int(cents)


def format_cents(cents: int) -> str:
    """Cents as the decimal text the configuration uses: 2500 -> ``"25.00"``."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _bcm_pin(value: object) -> int:
    # The panel's own check (controller.pinmap), so that check-config refuses exactly what the daemon would.
    problem = pin_problem(value)
    if problem is not None:
        raise ValueError(problem)
    assert isinstance(value, int)
    return value


def _serial_port(value: object) -> str:
    """A device path or a pyserial URL (``socket://host:port``, ``loop://``, ``rfc2217://host:port``...)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a device path such as /dev/shoe or a pyserial URL, got {_show(value)}")
    if any(ch.isspace() for ch in value) or not value.isprintable():
        raise ValueError(f"must not contain spaces or control characters, got {_show(value)}")
    if "://" in value:
        scheme = value.split("://", 1)[0].lower()
        if scheme not in SERIAL_URL_SCHEMES:
            known = ", ".join(f"{s}://" for s in SERIAL_URL_SCHEMES)
            raise ValueError(f"unknown pyserial URL scheme {scheme}:// (known: {known})")
        if scheme in ("socket", "rfc2217"):
            parts = urlsplit(value)
            try:
                port = parts.port
            except ValueError:
                port = None
            if not parts.hostname or port is None or not 1 <= port <= 65535:
                raise ValueError(
                    f"a {scheme}:// URL needs host:port, e.g. {scheme}://localhost:7777, got {_show(value)}"
                )
        return value
    if not value.startswith("/"):
        raise ValueError(
            f"must be an absolute device path such as /dev/shoe or a pyserial URL "
            f"(socket://host:port, loop://), got {_show(value)}"
        )
    return value


def _path(value: object) -> Path:
    if isinstance(value, Path):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a file path, got {_show(value)}")
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return Path(value)


def _split_bind(value: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` -> (host, port) (:func:`floor_protocol.addresses.parse_host_port`)."""
    return parse_host_port(value)


def _bind(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be host:port such as 127.0.0.1:8080, got {_show(value)}")
    _split_bind(value)
    return value


def _i2c_address(value: object) -> int:
    if isinstance(value, str):
        raise ValueError(f"write the address as a TOML integer such as 0x27 (no quotes), got {_show(value)}")
    if isinstance(value, bool) or not isinstance(value, int) or not 0x08 <= value <= 0x77:
        shown = f"0x{value:02x}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        raise ValueError(f"must be a 7-bit I2C address 0x08-0x77, got {shown}")
    return value


def _baud(value: object, info: ValidationInfo) -> int:
    if value is None:  # not given: the dialect's rate (the dialect is validated first)
        dialect = info.data.get("dialect")
        if dialect is None:  # the dialect itself is invalid; that error is reported
            return 0
        return DEFAULT_BAUD[dialect]
    if isinstance(value, bool) or not isinstance(value, int) or value not in STANDARD_BAUDS:
        listed = ", ".join(str(b) for b in STANDARD_BAUDS)
        raise ValueError(f"must be a standard rate ({listed}), got {_show(value)}")
    return value


def _choice(literal: Any) -> PlainValidator:
    return PlainValidator(_one_of(get_args(literal)))


# ---------------------------------------------------------------------------------------------------------
# The models (frozen; unknown keys refused everywhere)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=False)


class _Listening(_Section):
    """A section with a ``bind = "HOST:PORT"`` listener (each declares its own field and default): its
    :attr:`host` and :attr:`port`."""

    if TYPE_CHECKING:
        bind: str

    @property
    def host(self) -> str:
        """The address to bind (without brackets for IPv6)."""
        return _split_bind(self.bind)[0]

    @property
    def port(self) -> int:
        return _split_bind(self.bind)[1]


class LimitsSection(_Section):
    """``[table.limits]``: the table unit and the main-wager limits, in integer cents."""

    unit_cents: Annotated[int, PlainValidator(parse_cents)] = Field(500, alias="unit")
    minimum_cents: Annotated[int, PlainValidator(parse_cents)] = Field(2_500, alias="minimum")
    maximum_cents: Annotated[int, PlainValidator(parse_cents)] = Field(500_000, alias="maximum")
    #: The side wagers' limits (Tie, pairs, Dragon Bonus, Dragon 7, Panda 8): what the bet-spot reader checks.
    side_minimum_cents: Annotated[int, PlainValidator(parse_cents)] = Field(500, alias="side_minimum")
    side_maximum_cents: Annotated[int, PlainValidator(parse_cents)] = Field(50_000, alias="side_maximum")
    #: Whether one seat may wager on Banker and Player in the same coup.
    allow_both_sides: Annotated[bool, PlainValidator(_bool)] = False

    @model_validator(mode="after")
    def _consistent(self) -> LimitsSection:
        unit = format_cents(self.unit_cents)
        if self.minimum_cents > self.maximum_cents:
            raise _KeyedError(
                "minimum",
                f"{format_cents(self.minimum_cents)} is above the maximum {format_cents(self.maximum_cents)}",
            )
        if self.side_minimum_cents > self.side_maximum_cents:
            raise _KeyedError(
                "side_minimum",
                f"{format_cents(self.side_minimum_cents)} is above the side maximum "
                f"{format_cents(self.side_maximum_cents)}",
            )
        for key, cents in (("minimum", self.minimum_cents), ("maximum", self.maximum_cents)):
            if cents % self.unit_cents:
                raise _KeyedError(key, f"{format_cents(cents)} is not a multiple of the unit {unit}")
        return self


class TableSection(_Section):
    """``[table]``: the game, the shoe's house rules and the limits."""

    name: Annotated[str, PlainValidator(_text(40))] = "Table 1"
    decks: Annotated[int, PlainValidator(_int_in(MIN_DECKS, MAX_DECKS))] = 8
    rules: Annotated[str, PlainValidator(_one_of(RULESET_NAMES))] = DEFAULT_RULESET
    tie_pays: Annotated[int, PlainValidator(_one_of((8, 9)))] = 8
    burn: Annotated[BurnName, _choice(BurnName)] = "exposed"
    burn_ace: Annotated[int, PlainValidator(_one_of((1, 11)))] = 1
    burn_fixed_count: Annotated[int, PlainValidator(_int_in(0, 20))] = 0
    cut_card: Annotated[CutCardName, _choice(CutCardName)] = "one_more"
    auto_declare: Annotated[bool, PlainValidator(_bool)] = False
    side_bets: Annotated[tuple[str, ...], PlainValidator(_side_bets)] = SIDE_BET_NAMES
    #: When Banker commission is collected: "" (the game's own rule), at the payout, or into each seat's
    #: commission box, collected at the shoe's end (what the bet-spot reader's table settles by).
    commission: Annotated[CommissionName, PlainValidator(_one_of(("", "payout", "shoe_end")))] = ""
    limits: LimitsSection = Field(default_factory=lambda: LimitsSection.model_validate({}))
    #: What waits for a supervisor's badge and PIN at the dealer's position (a table with a bet-spot reader,
    #: whose dealer screen takes the PIN, and a staff list with a supervisor on it); [] : the dealer alone.
    supervisor_approves: Annotated[tuple[str, ...], PlainValidator(_approvable)] = APPROVABLE

    @model_validator(mode="after")
    def _fixed_burn_has_count(self) -> TableSection:
        if self.burn == "fixed" and self.burn_fixed_count == 0:
            raise _KeyedError("burn_fixed_count", 'must be 1-20 when burn = "fixed" (use burn = "none" for no burn)')
        return self


class ShoeSection(_Section):
    """``[shoe]``: the serial link to the card-reading shoe."""

    port: Annotated[str, PlainValidator(_serial_port)] = "/dev/shoe"
    dialect: Annotated[DialectName, _choice(DialectName)] = "binary"
    #: Always an int once validated: when not given, the dialect's rate from :data:`DEFAULT_BAUD`.
    baud: Annotated[int, PlainValidator(_baud)] = Field(None, validate_default=True)
    link_timeout: Annotated[float, PlainValidator(_seconds(0, 60))] = 3.0
    reconnect_backoff_max: Annotated[float, PlainValidator(_seconds(0, 300))] = 5.0

    @property
    def baud_given(self) -> bool:
        """Whether the file (or an override) chose the rate, rather than the dialect's default."""
        return "baud" in self.model_fields_set


class JournalSection(_Section):
    """``[journal]``: where the SQLite journal lives."""

    path: Annotated[Path, PlainValidator(_path)] = DEFAULT_JOURNAL_PATH


#: Where ``journal backup`` and the daily timer put their dated copies unless told.
DEFAULT_BACKUP_DIR = Path("/var/backups/shoe-controller")


def _keep(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
        raise ValueError(f"must be a whole number of copies, 1-10000 (got {value!r})")
    return value


class BackupSection(_Section):
    """``[backup]``: where the journal's dated copies go (``shoe-controller journal backup``, the daily timer)."""

    dir: Annotated[Path, PlainValidator(_path)] = DEFAULT_BACKUP_DIR
    keep: Annotated[int, PlainValidator(_keep)] = 14


class GpioPins(_Section):
    """``[gpio.pins]``: BCM GPIO numbers of the panel's lamps, buzzer and buttons."""

    player_draw: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["player_draw"]
    banker_draw: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["banker_draw"]
    player_win: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["player_win"]
    banker_win: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["banker_win"]
    tie: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["tie"]
    fault: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["fault"]
    buzzer: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["buzzer"]
    declare: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["declare"]
    new_shoe: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["new_shoe"]
    void: Annotated[int, PlainValidator(_bcm_pin)] = DEFAULT_PINS["void"]

    @model_validator(mode="after")
    def _usable(self) -> GpioPins:
        try:
            check_pin_map(self.as_dict(), prefix="gpio.pins.")
        except PinMapError as error:
            raise _KeyedError(error.function, error.reason) from None
        return self

    def as_dict(self) -> dict[str, int]:
        """Function name -> BCM number, in the file's order (``PinMap(**pins.as_dict())``)."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class GpioSection(_Section):
    """``[gpio]``: the panel's pin factory, button timing and lamp polarity."""

    pin_factory: Annotated[PinFactoryName, _choice(PinFactoryName)] = "lgpio"
    void_hold_seconds: Annotated[float, PlainValidator(_seconds(0, 10))] = 2.0
    bounce_seconds: Annotated[float, PlainValidator(_seconds(0, 1, lo_inclusive=True))] = 0.05
    active_high: Annotated[bool, PlainValidator(_bool)] = True
    pins: GpioPins = Field(default_factory=GpioPins)

    @model_validator(mode="after")
    def _bounce_below_hold(self) -> GpioSection:
        if self.bounce_seconds >= self.void_hold_seconds:
            raise _KeyedError(
                "bounce_seconds",
                f"{self.bounce_seconds:g} must be less than void_hold_seconds ({self.void_hold_seconds:g})",
            )
        return self


class LcdSection(_Section):
    """``[lcd]``: the dealer's character LCD on I2C."""

    enabled: Annotated[bool, PlainValidator(_bool)] = False
    cols: Annotated[int, PlainValidator(_one_of((16, 20)))] = 16
    rows: Annotated[int, PlainValidator(_one_of((2, 4)))] = 2
    i2c_address: Annotated[int, PlainValidator(_i2c_address)] = 0x27
    i2c_bus: Annotated[int, PlainValidator(_int_in(0, 31))] = 1
    expander: Annotated[ExpanderName, _choice(ExpanderName)] = "PCF8574"


class ScoreboardSection(_Listening):
    """``[scoreboard]``: the scoreboard web page."""

    enabled: Annotated[bool, PlainValidator(_bool)] = True
    bind: Annotated[str, PlainValidator(_bind)] = "127.0.0.1:8080"
    reveal: Annotated[RevealName, _choice(RevealName)] = "on_read"
    #: 莊 閒 和 beside Banker, Player and Tie on the page.
    bilingual: Annotated[bool, PlainValidator(_bool)] = False


def _optional_bind(value: object) -> str:
    if value == "":
        return ""
    return _bind(value)


class BoardSection(_Section):
    """``[board]``: what the board process serves besides the scoreboard: the dealer screen."""

    #: The dealer screen's own listener (the money at the table: never the public scoreboard's); "": none.
    dealer_listen: Annotated[str, PlainValidator(_optional_bind)] = "127.0.0.1:8081"

    @property
    def dealer_address(self) -> tuple[str, int] | None:
        """``(host, port)`` of the dealer screen, None when it is off."""
        return _split_bind(self.dealer_listen) if self.dealer_listen else None


class MetricsSection(_Listening):
    """``[metrics]``: the Prometheus endpoint (``/metrics``) of the table's health."""

    enabled: Annotated[bool, PlainValidator(_bool)] = False
    bind: Annotated[str, PlainValidator(_bind)] = "127.0.0.1:9108"


class ServiceSection(_Section):
    """``[service]``: the daemon itself."""

    log_level: Annotated[LogLevelName, _choice(LogLevelName)] = "info"
    #: Whether the table journals the kernel's word on its clock's synchronisation (controller/table/clock.py).
    clock_check: Annotated[bool, PlainValidator(_bool)] = True


def _expectation(value: object) -> float:
    """A player expectation per unit staked, as a number between -1 and 1 (0.01 = the player wins 1 %)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a number (an expectation per unit staked, e.g. 0.0 or 0.01), got {_show(value)}")
    if not -1 <= value <= 1:
        raise ValueError(f"must be between -1 and 1 (an expectation per unit staked), got {value:g}")
    return float(value)


def _expectation_step(value: object) -> float:
    """A difference of expectations, between 0 and 1 (0.005 = half a percent of the stake)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a number (a difference of expectations, e.g. 0.005), got {_show(value)}")
    if not 0 <= value <= 1:
        raise ValueError(f"must be between 0 and 1 (a difference of expectations), got {value:g}")
    return float(value)


def _bet_thresholds(value: object) -> dict[str, float]:
    """``[surveillance.bet_thresholds]``: a wager's own threshold, by the wager's name or a group's
    (``dragon_bonus``: both sides, as in ``table.side_bets``); a side's own entry beats its group's. The
    result is keyed by the wagers themselves (:data:`controller.game.rules.WAGER_NAMES`)."""
    if not isinstance(value, dict):
        raise ValueError(f"must be a table of wager = threshold (e.g. dragon_7 = 0.02), got {_show(value)}")
    out: dict[str, float] = {}
    for name, threshold in sorted(value.items(), key=lambda item: item[0] not in WAGER_GROUPS):  # groups first
        if name not in WAGER_NAMES and name not in WAGER_GROUPS:
            known = ", ".join(sorted([*WAGER_NAMES, *WAGER_GROUPS]))
            raise ValueError(f"{_show(name)} is not a wager: use {known}")
        wagers = wagers_named(name)
        try:
            limit = _expectation(threshold)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        out |= {bet.value: limit for bet in wagers}
    return out


class SurveillanceSection(_Section):
    """``[surveillance]``: the live exact edge of every offered wager (docs/operations.md)."""

    advantage_threshold: Annotated[float, PlainValidator(_expectation)] = DEFAULT_THRESHOLD
    advantage_margin: Annotated[float, PlainValidator(_expectation_step)] = DEFAULT_MARGIN
    advantage_step: Annotated[float, PlainValidator(_expectation_step)] = DEFAULT_STEP
    bet_thresholds: Annotated[dict[str, float], PlainValidator(_bet_thresholds)] = Field(default_factory=dict)


def _topic_id(value: object) -> str:
    """A site or table id: one MQTT topic level (no ``/``, ``+``, ``#``, spaces), 1-64 characters."""
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {_show(value)}")
    if not ID_PATTERN.fullmatch(value):
        raise ValueError(
            f"{_show(value)} is not an id: 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit"
        )
    return value


def _broker(value: object) -> str:
    """``mqtt://host[:port]`` or ``mqtts://host[:port]`` (TLS): :func:`floor_protocol.addresses.parse_broker`."""
    parse_broker(value)
    return str(value)


def _optional_path(value: object) -> Path | None:
    """A path, or ``""`` (the default): none."""
    return None if value is None or value == "" else _path(value)


def _optional_public_key(value: object) -> str | None:
    """An Ed25519 public key as keygen prints it (``ed25519:<base64>``), or ``""`` (the default): none."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"must be a string 'ed25519:<base64>', got {_show(value)}")
    try:
        parse_public_key(value)
    except SigningError as exc:
        raise ValueError(str(exc)) from None
    return value.strip()


def _optional_text(value: object) -> str | None:
    """Text, or ``""`` (the default): none."""
    return None if value is None or value == "" else _text(64)(value)


def _optional_group(value: object) -> str:
    if value == "":
        return ""
    name = _text(32)(value)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
        raise ValueError(f"must be a group name such as shoe-board, got {_show(value)}")
    return name


class FeedSection(_Section):
    """``[feed]``: where the table process puts its feed's Unix sockets (``feed.sock``, ``link.sock``) for the
    board and the floor link. ``""`` (the default): beside the journal."""

    dir: Annotated[Path | None, PlainValidator(_optional_path)] = None
    #: The group given ``money.sock`` (the board's, so that its dealer screen reads the money); "": the table's.
    money_group: Annotated[str, PlainValidator(_optional_group)] = ""


class FloorSection(_Section):
    """``[floor]``: the floor link (every journal record to the casino's MQTT broker). Off by default."""

    enabled: Annotated[bool, PlainValidator(_bool)] = False
    broker: Annotated[str, PlainValidator(_broker)] = "mqtt://127.0.0.1:1883"
    site: Annotated[str, PlainValidator(_topic_id)] = "casino"
    table: Annotated[str, PlainValidator(_topic_id)] = "table-1"
    username: Annotated[str | None, PlainValidator(_optional_text)] = None
    password_file: Annotated[Path | None, PlainValidator(_optional_path)] = None
    ca_file: Annotated[Path | None, PlainValidator(_optional_path)] = None
    cert_file: Annotated[Path | None, PlainValidator(_optional_path)] = None
    cert_key_file: Annotated[Path | None, PlainValidator(_optional_path)] = None
    #: The table's signing key (``shoe-controller keygen``): the floor link signs every record with it.
    key_file: Annotated[Path | None, PlainValidator(_optional_path)] = None
    #: The floor's public key (``shoe-floor keygen`` prints it): an ack is believed only when it verifies.
    floor_public_key: Annotated[str | None, PlainValidator(_optional_public_key)] = None
    keepalive: Annotated[int, PlainValidator(_int_in(5, 3600))] = 30
    retain_days: Annotated[int, PlainValidator(_int_in(1, 3650))] = 90

    @model_validator(mode="after")
    def _consistent(self) -> FloorSection:
        for key in ("ca_file", "cert_file", "cert_key_file"):
            if getattr(self, key) is not None and not self.tls:
                raise _KeyedError(key, "needs a TLS broker (mqtts://host:port)")
        if (self.cert_file is None) != (self.cert_key_file is None):
            missing = "cert_key_file" if self.cert_key_file is None else "cert_file"
            raise _KeyedError(
                missing,
                "cert_file and cert_key_file go together (the table's client certificate;"
                " key_file is now the table's signing key: the TLS key moved to cert_key_file)",
            )
        if self.password_file is not None and self.username is None:
            raise _KeyedError("username", "password_file needs a username")
        return self

    @property
    def address(self) -> Broker:
        return parse_broker(self.broker)

    @property
    def tls(self) -> bool:
        return self.address.tls

    @property
    def host(self) -> str:
        return self.address.host

    @property
    def port(self) -> int:
        return self.address.port

    def floor_key(self) -> Ed25519PublicKey | None:
        """The floor's public key (``floor_public_key``, validated at load), or None when not set."""
        return None if self.floor_public_key is None else parse_public_key(self.floor_public_key)

    def topic(self, leaf: Leaf) -> str:
        """``baccarat/<site>/<table>/<leaf>`` (:func:`floor_protocol.topics.table_topic`)."""
        return table_topic(self.site, self.table, leaf)


def _optional_port(value: object) -> str | None:
    """A serial port as for ``shoe.port``, or ``""`` (the default): none."""
    return None if value is None or value == "" else _serial_port(value)


class SpotsSection(_Section):
    """``[spots]``: the bet-spot reader (RFID antennas under the betting spots). Off unless
    ``port`` is set; then ``chips`` (the chip registry, :mod:`controller.chipfile`) is required."""

    port: Annotated[str | None, PlainValidator(_optional_port)] = None
    baud: Annotated[int, PlainValidator(_one_of(STANDARD_BAUDS))] = 115200
    link_timeout: Annotated[float, PlainValidator(_seconds(0, 60))] = 3.0
    chips: Annotated[Path | None, PlainValidator(_optional_path)] = None
    seats: Annotated[int, PlainValidator(_int_in(1, MAX_SEATS))] = 9
    leave_after_coups: Annotated[int, PlainValidator(_int_in(1, 1000))] = 3

    @model_validator(mode="after")
    def _chips_with_port(self) -> SpotsSection:
        if self.port is not None and self.chips is None:
            raise _KeyedError("chips", "the chip registry file is required when spots.port is set")
        return self

    @property
    def enabled(self) -> bool:
        """Whether the table has a bet-spot reader."""
        return self.port is not None


class TraySection(_Section):
    """``[tray]``: the RFID chip tray (the dealer's float, ``docs/tray.md``). Off unless ``port`` is set; then the
    chip registry (``[spots] chips``) is required: the tray reports UIDs and the registry values them."""

    port: Annotated[str | None, PlainValidator(_optional_port)] = None
    baud: Annotated[int, PlainValidator(_one_of(STANDARD_BAUDS))] = 115200
    link_timeout: Annotated[float, PlainValidator(_seconds(0, 60))] = 3.0
    settle_seconds: Annotated[float, PlainValidator(_seconds(0.1, 30, lo_inclusive=True))] = 2.0

    @property
    def enabled(self) -> bool:
        """Whether the table has a chip tray."""
        return self.port is not None


class Settings(_Section):
    """The whole configuration, validated and frozen. ``Settings()`` is the default configuration."""

    table: TableSection = Field(default_factory=TableSection)
    shoe: ShoeSection = Field(default_factory=lambda: ShoeSection.model_validate({}))
    journal: JournalSection = Field(default_factory=JournalSection)
    backup: BackupSection = Field(default_factory=BackupSection)
    feed: FeedSection = Field(default_factory=FeedSection)
    gpio: GpioSection = Field(default_factory=GpioSection)
    lcd: LcdSection = Field(default_factory=LcdSection)
    scoreboard: ScoreboardSection = Field(default_factory=ScoreboardSection)
    board: BoardSection = Field(default_factory=BoardSection)
    service: ServiceSection = Field(default_factory=ServiceSection)
    metrics: MetricsSection = Field(default_factory=MetricsSection)
    floor: FloorSection = Field(default_factory=FloorSection)
    surveillance: SurveillanceSection = Field(default_factory=SurveillanceSection)
    spots: SpotsSection = Field(default_factory=SpotsSection)
    tray: TraySection = Field(default_factory=TraySection)

    @model_validator(mode="after")
    def _tray_with_chips(self) -> Settings:
        if self.tray.port is not None and self.spots.chips is None:
            raise _KeyedError("tray.port", "a chip tray needs the chip registry: set spots.chips")
        return self

    def table_rules(self) -> TableRules:
        """The house rules :class:`~controller.game.table.TableState` needs (with the money rules when the
        table has a bet-spot reader)."""
        t = self.table
        return TableRules(
            decks=t.decks,
            burn_rule=BurnRule(mode=BurnMode(t.burn), ace_burns=t.burn_ace, fixed_count=t.burn_fixed_count),
            cut_card_rule=CutCardRule(t.cut_card),
            auto_declare=t.auto_declare,
            money=self.money_rules(),
            tray=self.tray.enabled,
        )

    def table_limits(self) -> TableLimits:
        """The table's limits for settlement and the bet-spot reader's checks (``[table.limits]``)."""
        from controller.game.settlement import TableLimits

        lim = self.table.limits
        return TableLimits(
            unit_cents=lim.unit_cents,
            minimum_cents=lim.minimum_cents,
            maximum_cents=lim.maximum_cents,
            side_minimum_cents=lim.side_minimum_cents,
            side_maximum_cents=lim.side_maximum_cents,
            allow_both_sides=lim.allow_both_sides,
        )

    def money_rules(self) -> MoneyRules | None:
        """What the table's wager book needs (``[spots]`` and the table's game and limits), or None when the
        table has no bet-spot reader (the table then works exactly as without one)."""
        if not self.spots.enabled:
            return None
        from controller.game.wagers import MoneyRules

        return MoneyRules(
            ruleset=self.ruleset(),
            limits=self.table_limits(),
            seats=self.spots.seats,
            leave_after_coups=self.spots.leave_after_coups,
        )

    def ruleset(self) -> Ruleset:
        """The shipped ruleset named by ``table.rules``, with ``table.tie_pays``, the side bets this table
        offers (``table.side_bets``) and, when ``table.commission`` is set, its commission collection."""
        from controller.rulebook import get_ruleset

        offered = frozenset().union(*(wagers_named(name) for name in self.table.side_bets))
        ruleset = get_ruleset(self.table.rules, self.table.tie_pays).with_side_bets(frozenset(offered))
        if self.table.commission:
            ruleset = dataclasses.replace(ruleset, commission_collection=CommissionCollection(self.table.commission))
        return ruleset

    def with_overrides(
        self,
        port: str | None = None,
        dialect: str | None = None,
        journal: str | Path | None = None,
        pin_factory: str | None = None,
        feed_dir: str | Path | None = None,
        spots: str | None = None,
        tray: str | None = None,
    ) -> Settings:
        """These settings with the command line's ``--port``, ``--dialect``, ``--journal``, ``--pin-factory``,
        ``--feed-dir``, ``--spots`` (the bet-spot reader's port) and ``--tray`` (the chip tray's).

        ``None`` keeps the file's value. An override is validated like the file's key; a bad one raises
        :class:`ConfigError` naming the option. Changing the dialect also changes the baud rate unless
        the file set ``shoe.baud``.
        """
        shoe = _override(self.shoe, {"port": ("--port", port), "dialect": ("--dialect", dialect)}, "shoe")
        journal_section = _override(self.journal, {"path": ("--journal", journal)}, "journal")
        gpio = _override(self.gpio, {"pin_factory": ("--pin-factory", pin_factory)}, "gpio")
        feed = _override(self.feed, {"dir": ("--feed-dir", feed_dir)}, "feed")
        spots_section = _override(self.spots, {"port": ("--spots", spots)}, "spots")
        tray_section = _override(self.tray, {"port": ("--tray", tray)}, "tray")
        if tray_section.port is not None and spots_section.chips is None:
            raise ConfigError("--tray", "a chip tray needs the chip registry: set spots.chips", key="tray.port")
        update = {"shoe": shoe, "journal": journal_section, "gpio": gpio, "feed": feed, "spots": spots_section}
        return self.model_copy(update={**update, "tray": tray_section})

    def with_scoreboard(
        self, *, bind: str | None = None, reveal: str | None = None, enabled: bool | None = None
    ) -> Settings:
        """These settings with the command line's ``--scoreboard``, ``--reveal`` and ``--no-scoreboard``."""
        changes = {
            "bind": ("--scoreboard", bind),
            "reveal": ("--reveal", reveal),
            "enabled": ("--no-scoreboard", enabled),
        }
        return self.model_copy(update={"scoreboard": _override(self.scoreboard, changes, "scoreboard")})

    def with_board(self, *, dealer_listen: str | None = None) -> Settings:
        """These settings with the board's ``--dealer HOST:PORT`` (``""``: no dealer screen)."""
        changes = {"dealer_listen": ("--dealer", dealer_listen)}
        return self.model_copy(update={"board": _override(self.board, changes, "board")})

    def with_floor(
        self,
        *,
        broker: str | None = None,
        site: str | None = None,
        table: str | None = None,
        key_file: str | Path | None = None,
        floor_public_key: str | None = None,
    ) -> Settings:
        """These settings with the command line's ``--floor URL`` (which also turns the link on), ``--site``,
        ``--table-id``, ``--floor-key FILE`` and ``--floor-public-key KEY``."""
        changes: dict[str, tuple[str, object]] = {
            "broker": ("--floor", broker),
            "site": ("--site", site),
            "table": ("--table-id", table),
            "enabled": ("--floor", True if broker is not None else None),
            "key_file": ("--floor-key", key_file),
            "floor_public_key": ("--floor-public-key", floor_public_key),
        }
        return self.model_copy(update={"floor": _override(self.floor, changes, "floor")})

    def with_table(self, *, decks: int | None = None, auto_declare: bool | None = None) -> Settings:
        """These settings with another deck count or auto-declare (the demo's options)."""
        changes = {"decks": ("--decks", decks), "auto_declare": ("--auto-declare", auto_declare)}
        return self.model_copy(update={"table": _override(self.table, changes, "table")})

    def summary(self) -> list[str]:
        """A few lines for ``check-config`` and the daemon's start-up log."""
        t, s = self.table, self.shoe
        lim = t.limits
        burn = {
            "exposed": f"exposed (ace burns {t.burn_ace})",
            "fixed": f"fixed {t.burn_fixed_count}",
            "none": "none",
        }
        lcd = f"{self.lcd.cols}x{self.lcd.rows} at 0x{self.lcd.i2c_address:02x}" if self.lcd.enabled else "off"
        board = f"http://{self.scoreboard.bind}/ (reveal {self.scoreboard.reveal})"
        return [
            f"table:      {t.name}: {t.decks} decks, {t.rules} (tie {t.tie_pays}:1), burn {burn[t.burn]}, "
            f"cut card {t.cut_card}, auto declare {'on' if t.auto_declare else 'off'}",
            f"limits:     {format_cents(lim.minimum_cents)}-{format_cents(lim.maximum_cents)} "
            f"in units of {format_cents(lim.unit_cents)}",
            f"shoe:       {s.port}, {s.dialect} at {s.baud} baud",
            f"journal:    {self.journal.path}",
            f"feed:       {self.feed_dir()} (feed.sock for the board, link.sock for the floor link)",
            f"gpio:       pin factory {self.gpio.pin_factory}",
            f"lcd:        {lcd}",
            f"scoreboard: {board if self.scoreboard.enabled else 'off'}",
            f"floor:      {self._floor_summary()}",
            f"spots:      {self._spots_summary()}",
            f"tray:       {self._tray_summary()}",
        ]

    def feed_dir(self) -> Path:
        """The directory of the feed's sockets: ``feed.dir``, or the journal's own directory."""
        return self.feed.dir if self.feed.dir is not None else self.journal.path.parent

    def _spots_summary(self) -> str:
        sp = self.spots
        if not sp.enabled:
            return "off (no bet-spot reader)"
        lim = self.table.limits
        return (
            f"{sp.port} at {sp.baud} baud, {sp.seats} seats, chips {sp.chips}, side bets "
            f"{format_cents(lim.side_minimum_cents)}-{format_cents(lim.side_maximum_cents)}"
        )

    def _tray_summary(self) -> str:
        tr = self.tray
        if not tr.enabled:
            return "off (no chip tray)"
        return f"{tr.port} at {tr.baud} baud, chips {self.spots.chips}, settle {tr.settle_seconds:g} s"

    def _floor_summary(self) -> str:
        f = self.floor
        if not f.enabled:
            return "off"
        auth = "client certificate" if f.cert_file else f"user {f.username}" if f.username else "anonymous"
        signs = f"records signed with {f.key_file}" if f.key_file else "no signing key: the link will not start"
        acks = (
            f"acks verified with floor key {key_id(f.floor_public_key)}"
            if f.floor_public_key
            else "no floor_public_key: no ack is stored"
        )
        return f"{f.broker} as {table_prefix(f.site, f.table)} ({auth}; {signs}; {acks})"


_S = TypeVar("_S", bound=BaseModel)


def _override(section: _S, changes: Mapping[str, tuple[str, object]], table: str) -> _S:
    """Revalidate ``section`` with the given keys replaced; unchanged when every value is None."""
    given = {key: value for key, (_, value) in changes.items() if value is not None}
    if not given:
        return section
    data = {key: getattr(section, key) for key in section.model_fields_set} | given
    try:
        return type(section).model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else next(iter(given))
        option = changes[key][0] if key in changes else "command line"
        raise ConfigError(option, _reason(first), key=f"{table}.{key}") from None


# ---------------------------------------------------------------------------------------------------------
# Reading


def default_settings() -> Settings:
    """The configuration when no file is given: every key at its default."""
    return Settings()


def parse_config(text: str, source: str = "config.toml") -> Settings:
    """Validate TOML text into :class:`Settings`; raise :class:`ConfigError` (one line) for any mistake."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line, reason = _toml_error_line(str(error), text)
        raise ConfigError(source, reason, line=line) from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively: a few hundred levels exhaust the stack.
        raise ConfigError(source, "arrays or inline tables nested too deeply") from None
    try:
        return Settings.model_validate(document)
    except ValidationError as error:
        raise _config_error(source, error) from None
    except RecursionError:  # a value nested just below tomllib's limit, quoted back in a message
        raise ConfigError(source, "arrays or inline tables nested too deeply") from None


def load_config(path: str | Path = DEFAULT_PATH) -> Settings:
    """Read and validate the file at ``path``; a missing or unreadable file is a :class:`ConfigError`, and
    so is a FIFO or device (refused at once, never read) or a file over :data:`MAX_CONFIG_BYTES`."""
    source = str(path)
    try:
        raw = read_bytes(path, limit=MAX_CONFIG_BYTES)
    except UserFileError as error:
        raise ConfigError(source, error.reason) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(source, "not UTF-8 text", line=line) from None
    return parse_config(text, source)


_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


def _toml_error_line(message: str, text: str) -> tuple[int, str]:
    """tomllib's message ``Invalid value (at line 4, column 8)`` -> (4, ``Invalid value (column 8)``)."""
    match = _TOML_AT.search(message)
    reason = message[: match.start()] if match else message
    if match and match.group(1):
        return int(match.group(1)), f"{reason} (column {match.group(2)})"
    last_line = max(1, len(text.splitlines()))
    return last_line, f"{reason} (at the end of the file)"


def _reason(error: Mapping[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, _KeyedError):
        return cause.reason
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown table" if isinstance(error.get("input"), dict) else "unknown key"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a table, got {_show(error.get('input'))}"
    return str(error["msg"]).removeprefix("Value error, ")


def _config_error(source: str, error: ValidationError) -> ConfigError:
    """The first pydantic error as a one-line :class:`ConfigError` naming the dotted key."""
    errors = error.errors()
    first = errors[0]
    loc = [str(part) for part in first["loc"]]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, _KeyedError):
        loc.append(cause.key)
    reason = _reason(first)
    if first["type"] == "extra_forbidden":
        known = _known_keys(loc[:-1])
        close = difflib.get_close_matches(loc[-1], known, n=1)
        if close:
            reason += f" (did you mean {close[0]}?)"
    if len(errors) > 1:
        reason += f" (and {len(errors) - 1} more)"
    return ConfigError(source, reason, key=".".join(loc) or None)


def _known_keys(table: list[str]) -> list[str]:
    """The keys the table at the dotted path ``table`` accepts (TOML names, i.e. aliases)."""
    model: type[BaseModel] = Settings
    for part in table:
        field = _fields_by_key(model).get(part)
        if field is None or not (isinstance(field, type) and issubclass(field, BaseModel)):
            return []
        model = field
    return list(_fields_by_key(model))


def _fields_by_key(model: type[BaseModel]) -> dict[str, Any]:
    return {(info.alias or name): info.annotation for name, info in model.model_fields.items()}


def setting_keys(model: type[BaseModel] = Settings, prefix: str = "") -> Iterator[str]:
    """Every leaf key as a dotted TOML path (``table.limits.unit``), in declaration order."""
    for key, annotation in _fields_by_key(model).items():
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from setting_keys(annotation, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"
