"""The Raspberry Pi's 40-pin header as the panel sees it: which BCM GPIOs exist, where they are, and which
the panel may not take.

One validation of a pin map, used by both the configuration (``[gpio.pins]`` in :mod:`controller.config`,
so that ``check-config`` refuses what the daemon would refuse) and the panel
(:class:`controller.table.panel.PinMap`). Pure data and one function: no gpiozero, so that ``check-config`` does
not pay for importing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["DEFAULT_PINS", "PHYSICAL_PIN", "RESERVED_GPIOS", "PinMapError", "check_pin_map", "pin_problem"]

#: The panel's default pin map, stated once: function (a ``[gpio.pins]`` key) -> BCM GPIO, in the panel's order
#: (lamps, buzzer, buttons). The configuration's ``[gpio.pins]`` and :class:`controller.table.panel.PinMap` default
#: to it; docs/wiring.md and docs/configuration.md show it (tests/test_panel.py checks them all).
DEFAULT_PINS: Mapping[str, int] = MappingProxyType(
    {
        "player_draw": 17,
        "banker_draw": 27,
        "player_win": 22,
        "banker_win": 23,
        "tie": 24,
        "fault": 25,
        "buzzer": 18,
        "declare": 5,
        "new_shoe": 6,
        "void": 13,
    }
)

#: BCM GPIO number -> physical pin on the Raspberry Pi's 40-pin header.
PHYSICAL_PIN: Mapping[int, int] = MappingProxyType(
    {
        0: 27, 1: 28, 2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 7: 26, 8: 24, 9: 21, 10: 19, 11: 23, 12: 32, 13: 33,
        14: 8, 15: 10, 16: 36, 17: 11, 18: 12, 19: 35, 20: 38, 21: 40, 22: 15, 23: 16, 24: 18, 25: 22,
        26: 37, 27: 13,
    }
)  # fmt: skip

#: BCM GPIOs the panel may not use, and why: the HAT EEPROM's ID bus (read by the firmware at boot), the
#: dealer LCD's I2C bus and the UART (a shoe may be wired there).
RESERVED_GPIOS: Mapping[int, str] = MappingProxyType(
    {
        0: "HAT ID EEPROM (ID_SD)",
        1: "HAT ID EEPROM (ID_SC)",
        2: "I2C SDA (the dealer LCD's bus)",
        3: "I2C SCL (the dealer LCD's bus)",
        14: "UART TXD",
        15: "UART RXD",
    }
)


class PinMapError(ValueError):
    """A pin map entry is not a usable header GPIO, or two functions share one GPIO.

    ``function`` is the entry (a ``[gpio.pins]`` key), ``pin`` its value, ``reason`` the problem without
    the function's name; ``str()`` is ``pin FUNCTION: reason``.
    """

    def __init__(self, function: str, pin: object, reason: str) -> None:
        super().__init__(f"pin {function}: {reason}")
        self.function = function
        self.pin = pin
        self.reason = reason


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def pin_problem(pin: object) -> str | None:
    """Why ``pin`` cannot be one of the panel's GPIOs (not a BCM number 0-27, or reserved); None if it can."""
    if isinstance(pin, bool) or not isinstance(pin, int):
        return f"must be a BCM GPIO number (0-27), got {_shown(pin)}"
    if pin not in PHYSICAL_PIN:
        return f"{_shown(pin)} is not a BCM GPIO number (0-27)"
    if pin in RESERVED_GPIOS:
        return f"BCM {pin} (header pin {PHYSICAL_PIN[pin]}) is reserved for the {RESERVED_GPIOS[pin]}; choose another"
    return None


def check_pin_map(pins: Mapping[str, object], *, prefix: str = "") -> None:
    """Raise :class:`PinMapError` for the first function (in order) whose pin is unusable or already used
    by an earlier function; ``prefix`` is put before the other function's name (``gpio.pins.``)."""
    owner: dict[object, str] = {}
    for function, pin in pins.items():
        problem = pin_problem(pin)
        if problem is None and pin in owner:
            problem = f"BCM {pin} is already used by {prefix}{owner[pin]}"
        if problem is not None:
            raise PinMapError(function, pin, problem)
        owner[pin] = function
