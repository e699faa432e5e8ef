"""The dealer's panel: six lamps, a buzzer and three buttons, driven through gpiozero.

This is the only module of the controller that imports gpiozero. The pin factory is injected
(:func:`make_pin_factory` builds one by name), so the same code drives a Raspberry Pi's header through
lgpio and, in tests, gpiozero's mock pins.

* **Lamps** - :meth:`Panel.show` makes the lamps match a :class:`~controller.game.table.TableView`'s
  ``lamps`` and ``alarms``. The FAULT lamp's pattern follows the most severe standing alarm
  (:data:`ALARM_SIGNALS`). Showing the same state twice touches no pin and restarts no blink.
* **Buzzer** - :meth:`Panel.sound` plays the pattern of a newly raised alarm, in the background.
* **Buttons** - DECLARE and NEW SHOE act on press; VOID acts only when held (a brush of the hand must
  not void a coup). A button's callback calls the ``on_button`` it was given and nothing else: the
  daemon's one table loop owns all state, and GPIO threads only enqueue.

:data:`ALARM_SIGNALS` is the one table of what each alarm looks and sounds like; ``docs/wiring.md``
reproduces it (``alarm_table_markdown()``) and a test keeps the two equal.
"""

from __future__ import annotations

import importlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from types import MappingProxyType
from typing import Any

from gpiozero import LED, Button, Buzzer, DigitalInputDevice

from controller.game.table import Alarm, AlarmRaised, Lamp, Notice, TableView
from controller.pinmap import DEFAULT_PINS, PinMapError, check_pin_map

# gpiozero ships without type information; a pin factory is whatever gpiozero accepts as pin_factory.
PinFactory = Any

__all__ = [
    "ALARM_SIGNALS",
    "AlarmSignal",
    "BeepPattern",
    "ButtonAction",
    "LampPattern",
    "Panel",
    "PanelError",
    "PanelSink",
    "PinMap",
    "PinMapError",
    "alarm_table_markdown",
    "fault_pattern",
    "make_pin_factory",
]


# ---------------------------------------------------------------------------------------------------------
# Errors


class PanelError(RuntimeError):
    """The panel cannot drive its GPIO: an unknown or unavailable pin factory, a pin already in use,
    or a call on a closed panel. Carries the factory name and/or the panel function and BCM pin."""

    def __init__(
        self, message: str, *, factory: str | None = None, function: str | None = None, pin: int | None = None
    ) -> None:
        super().__init__(message)
        self.factory = factory
        self.function = function
        self.pin = pin


# ---------------------------------------------------------------------------------------------------------
# Pin map


@dataclass(frozen=True, slots=True)
class PinMap:
    """BCM GPIO numbers of the panel's parts. Field names are the config keys (``[gpio.pins]``).

    Refuses (:class:`~controller.pinmap.PinMapError`) what ``check-config`` refuses: a number that is not
    a header GPIO, a reserved GPIO (:data:`controller.pinmap.RESERVED_GPIOS`) or one used twice."""

    player_draw: int = DEFAULT_PINS["player_draw"]
    banker_draw: int = DEFAULT_PINS["banker_draw"]
    player_win: int = DEFAULT_PINS["player_win"]
    banker_win: int = DEFAULT_PINS["banker_win"]
    tie: int = DEFAULT_PINS["tie"]
    fault: int = DEFAULT_PINS["fault"]
    buzzer: int = DEFAULT_PINS["buzzer"]
    declare: int = DEFAULT_PINS["declare"]
    new_shoe: int = DEFAULT_PINS["new_shoe"]
    void: int = DEFAULT_PINS["void"]

    def __post_init__(self) -> None:
        # The one validation of a pin map, shared with the configuration's [gpio.pins] (controller.pinmap).
        check_pin_map(dict(self.items()))

    def items(self) -> Iterator[tuple[str, int]]:
        """(function, BCM GPIO) for every part, in field order."""
        for f in fields(self):
            yield f.name, getattr(self, f.name)

    def lamp_pin(self, lamp: Lamp) -> int:
        """The BCM GPIO of a lamp (the lamp's value is the field name)."""
        pin: int = getattr(self, lamp.value)
        return pin


# ---------------------------------------------------------------------------------------------------------
# Pin factories

_FACTORIES: Mapping[str, tuple[str, str, str]] = MappingProxyType(
    {
        # name: (module, class, hint shown when it cannot be loaded)
        "mock": ("gpiozero.pins.mock", "MockFactory", "it ships with gpiozero"),
        "lgpio": ("gpiozero.pins.lgpio", "LGPIOFactory", "install the [pi] extra on a Raspberry Pi"),
        "rpigpio": (
            "gpiozero.pins.rpigpio",
            "RPiGPIOFactory",
            "install RPi.GPIO, or rpi-lgpio on a Pi 5, on a Raspberry Pi",
        ),
        "native": ("gpiozero.pins.native", "NativeFactory", "it needs /dev/gpiomem on a Pi 4 or older"),
    }
)


#: State changes each mock pin remembers (gpiozero's ``MockPin.states``): the newest ones, oldest dropped first.
#: gpiozero keeps them all, which a daemon on mock pins (the demo, the benchmarks, a bench table) would
#: accumulate without end: the busiest lamp changes some 80 times a shoe. 1024 is a dozen shoes of it, more
#: than any test or benchmark reads back.
MOCK_PIN_HISTORY = 1024


def _mock_factory(module: Any) -> PinFactory:
    """gpiozero's MockFactory making mock pins whose state history is bounded (:data:`MOCK_PIN_HISTORY`)."""
    mock_pin = module.MockPin

    def clear_states(pin: Any) -> None:  # MockPin.clear_states, then the history in a bounded deque
        mock_pin.clear_states(pin)
        pin.states = deque(pin.states, maxlen=MOCK_PIN_HISTORY)

    pin_class = type("BoundedMockPin", (mock_pin,), {"clear_states": clear_states})
    return module.MockFactory(pin_class=pin_class)


def make_pin_factory(name: str) -> PinFactory:
    """Build the gpiozero pin factory called ``name`` (mock, lgpio, rpigpio, native).

    ``mock`` is gpiozero's MockFactory, but its pins remember only their last :data:`MOCK_PIN_HISTORY`
    state changes. Raises :class:`PanelError` with one line naming the factory when it is unknown or
    cannot be loaded here (its library missing, or not on a Raspberry Pi).
    """
    try:
        module_name, class_name, hint = _FACTORIES[name]
    except KeyError:
        known = ", ".join(_FACTORIES)
        raise PanelError(f"unknown pin factory {name!r} (known: {known})", factory=name) from None
    try:
        module = importlib.import_module(module_name)
        if name == "mock":
            return _mock_factory(module)
        return getattr(module, class_name)()
    except Exception as exc:  # the libraries raise anything from ImportError to RuntimeError or OSError
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise PanelError(f"pin factory {name!r} is not available: {reason} ({hint})", factory=name) from exc


# ---------------------------------------------------------------------------------------------------------
# What each alarm looks and sounds like: the one table


class LampPattern(Enum):
    """How a lamp is lit. Declared from least to most severe; the FAULT lamp shows the most severe."""

    OFF = "off"
    STEADY = "steady"
    SLOW_BLINK = "slow blink"
    FAST_BLINK = "fast blink"

    @property
    def severity(self) -> int:
        return _PATTERN_ORDER.index(self)

    @property
    def blink_seconds(self) -> tuple[float, float] | None:
        """(on, off) seconds of a blinking pattern; None for off and steady."""
        return _BLINK_SECONDS.get(self)

    def describe(self) -> str:
        blink = self.blink_seconds
        if blink is None:
            return self.value
        return f"{self.value} ({blink[0]:g} s on / {blink[1]:g} s off)"


_PATTERN_ORDER: tuple[LampPattern, ...] = tuple(LampPattern)
_BLINK_SECONDS: Mapping[LampPattern, tuple[float, float]] = MappingProxyType(
    {LampPattern.SLOW_BLINK: (0.5, 0.5), LampPattern.FAST_BLINK: (0.1, 0.1)}
)


@dataclass(frozen=True, slots=True)
class BeepPattern:
    """``count`` beeps of ``on_seconds`` separated by ``off_seconds`` of silence."""

    on_seconds: float
    off_seconds: float
    count: int

    def __post_init__(self) -> None:
        if self.on_seconds <= 0 or self.off_seconds < 0 or self.count < 1:
            raise ValueError(f"not a beep pattern: {self!r}")

    def describe(self) -> str:
        length = "short" if self.on_seconds < 0.5 else "long"
        plural = "s" if self.count > 1 else ""
        return f"{self.count} {length} beep{plural} ({self.on_seconds:g} s)"


SHORT_BEEPS_1 = BeepPattern(0.1, 0.1, 1)
SHORT_BEEPS_2 = BeepPattern(0.1, 0.1, 2)
SHORT_BEEPS_3 = BeepPattern(0.1, 0.1, 3)
LONG_BEEP = BeepPattern(1.0, 0.0, 1)


@dataclass(frozen=True, slots=True)
class AlarmSignal:
    """What an alarm looks like on the FAULT lamp and how it sounds when raised."""

    fault: LampPattern
    beeps: BeepPattern


ALARM_SIGNALS: Mapping[Alarm, AlarmSignal] = MappingProxyType(
    {
        # the coup is halted until the dealer holds VOID: the loudest and fastest
        Alarm.UNREADABLE: AlarmSignal(LampPattern.FAST_BLINK, SHORT_BEEPS_3),
        Alarm.FOREIGN_CARD: AlarmSignal(LampPattern.FAST_BLINK, SHORT_BEEPS_3),
        Alarm.SHOE_REBOOTED: AlarmSignal(LampPattern.FAST_BLINK, SHORT_BEEPS_3),
        # the shoe is not talking to the controller: no card can be acknowledged
        Alarm.LINK_DOWN: AlarmSignal(LampPattern.SLOW_BLINK, LONG_BEEP),
        # the journal cannot take a commit: no card can be acknowledged either (call the technician)
        Alarm.JOURNAL_FULL: AlarmSignal(LampPattern.SLOW_BLINK, LONG_BEEP),
        Alarm.JOURNAL_FAULT: AlarmSignal(LampPattern.SLOW_BLINK, LONG_BEEP),
        # garbage on the shoe's line: cards may be lost in it
        Alarm.NOISY_LINE: AlarmSignal(LampPattern.SLOW_BLINK, LONG_BEEP),
        # call the supervisor, but the shoe carries on
        Alarm.FOREIGN_BURN_CARD: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_3),
        Alarm.SHOE_PROTOCOL_V2: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_3),  # wrong firmware in the shoe
        # dealer errors with a house procedure
        Alarm.MISDRAW: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_2),
        Alarm.EARLY_DECLARE: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_2),
        Alarm.SHOE_CLOSED: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_2),
        Alarm.UNREADABLE_EXPOSED: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_2),
        # notices
        Alarm.NOTHING_TO_DECLARE: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_1),
        Alarm.INPUT_LOST: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_1),  # a press was lost: press again
        Alarm.UNKNOWN_BADGE: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_1),  # a badge not on the staff list
        # a void waits for a supervisor's badge, then PIN: the coup is held meanwhile
        Alarm.SUPERVISOR_CALLED: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_2),
        Alarm.SUPERVISOR_PIN: AlarmSignal(LampPattern.STEADY, SHORT_BEEPS_1),
    }
)


def fault_pattern(alarms: tuple[Alarm, ...] | frozenset[Alarm]) -> LampPattern:
    """The FAULT lamp's pattern for the standing alarms: the most severe one's, OFF for none."""
    return max((ALARM_SIGNALS[a].fault for a in alarms), key=lambda p: p.severity, default=LampPattern.OFF)


def alarm_table_markdown() -> str:
    """:data:`ALARM_SIGNALS` as the Markdown table that ``docs/wiring.md`` carries verbatim."""
    lines = [
        "| Alarm | LCD text | Halts the coup | FAULT lamp | Buzzer |",
        "|---|---|---|---|---|",
    ]
    for alarm, signal in ALARM_SIGNALS.items():
        lines.append(
            f"| `{alarm.name}` | {alarm.value} | {'yes' if alarm.halts_coup else 'no'} "
            f"| {signal.fault.describe()} | {signal.beeps.describe()} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------
# The panel


class ButtonAction(Enum):
    """What a panel button asks the table to do."""

    DECLARE = "declare"
    NEW_SHOE = "new_shoe"
    VOID = "void"


class Panel:
    """The dealer's panel on one pin factory. Not thread-safe: call it from the table loop only.

    ``on_button`` is called from gpiozero's threads with the :class:`ButtonAction`; it must only
    enqueue. ``active_high=False`` is for lamps and buzzer wired to sink current (lit when the pin is low).
    """

    def __init__(
        self,
        pins: PinMap,
        factory: PinFactory,
        on_button: Callable[[ButtonAction], None],
        *,
        void_hold_seconds: float = 2.0,
        bounce_seconds: float = 0.05,
        active_high: bool = True,
    ) -> None:
        if void_hold_seconds <= 0:
            raise ValueError(f"void_hold_seconds must be positive, not {void_hold_seconds!r}")
        if bounce_seconds < 0:
            raise ValueError(f"bounce_seconds must not be negative, not {bounce_seconds!r}")
        self.pins = pins
        self._on_button = on_button
        self._closed = False
        self._devices: list[Any] = []
        self._lamps: dict[Lamp, Any] = {}
        self._shown: dict[Lamp, LampPattern] = {}
        try:
            for lamp in Lamp:
                self._lamps[lamp] = self._open(
                    LED,
                    lamp.value,
                    pins.lamp_pin(lamp),
                    factory,
                    active_high=active_high,
                    initial_value=False,
                )
                self._shown[lamp] = LampPattern.OFF
            self._buzzer = self._open(
                Buzzer, "buzzer", pins.buzzer, factory, active_high=active_high, initial_value=False
            )
            self._declare = self._open(
                DigitalInputDevice, "declare", pins.declare, factory, pull_up=True, bounce_time=bounce_seconds or None
            )
            self._new_shoe = self._open(
                DigitalInputDevice, "new_shoe", pins.new_shoe, factory, pull_up=True, bounce_time=bounce_seconds or None
            )
            self._void = self._open(
                Button,
                "void",
                pins.void,
                factory,
                pull_up=True,
                bounce_time=bounce_seconds or None,
                hold_time=void_hold_seconds,
                hold_repeat=False,
            )
        except BaseException:
            self._close_devices()
            raise
        # DECLARE and NEW SHOE act on the press: plain inputs, without the hold thread (10 wake-ups a second
        # each) that gpiozero's Button runs; only VOID, which must be held, is a Button.
        self._declare.when_activated = self._declare_pressed
        self._new_shoe.when_activated = self._new_shoe_pressed
        self._void.when_held = self._void_held

    def _open(self, cls: Any, function: str, pin: int, factory: PinFactory, **kwargs: Any) -> Any:
        try:
            device = cls(pin, pin_factory=factory, **kwargs)
        except Exception as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise PanelError(f"cannot open {function} on GPIO {pin}: {reason}", function=function, pin=pin) from exc
        self._devices.append(device)
        return device

    # -- buttons (run on gpiozero's threads: enqueue only) -------------------------------------------------

    def _declare_pressed(self) -> None:
        self._on_button(ButtonAction.DECLARE)

    def _new_shoe_pressed(self) -> None:
        self._on_button(ButtonAction.NEW_SHOE)

    def _void_held(self) -> None:
        self._on_button(ButtonAction.VOID)

    # -- outputs ---------------------------------------------------------------------------------------

    @property
    def shown(self) -> Mapping[Lamp, LampPattern]:
        """The pattern each lamp was last set to."""
        return MappingProxyType(dict(self._shown))

    def show(self, lamps: frozenset[Lamp], alarms: tuple[Alarm, ...]) -> None:
        """Light exactly ``lamps``; FAULT follows the most severe of ``alarms`` (steady if it is in
        ``lamps`` with no alarm). A lamp already showing its pattern is left alone."""
        self._check_open()
        for lamp in Lamp:
            if lamp is Lamp.FAULT:
                pattern = fault_pattern(alarms)
                if pattern is LampPattern.OFF and Lamp.FAULT in lamps:
                    pattern = LampPattern.STEADY
            else:
                pattern = LampPattern.STEADY if lamp in lamps else LampPattern.OFF
            self._set(lamp, pattern)

    def _set(self, lamp: Lamp, pattern: LampPattern) -> None:
        if self._shown[lamp] is pattern:
            return
        led = self._lamps[lamp]
        blink = pattern.blink_seconds
        if pattern is LampPattern.OFF:
            led.off()
        elif blink is None:
            led.on()
        else:
            led.blink(on_time=blink[0], off_time=blink[1], n=None, background=True)
        self._shown[lamp] = pattern

    def sound(self, alarm: Alarm) -> None:
        """Play the buzzer pattern of a newly raised ``alarm``; returns at once (a running pattern is cut)."""
        self._check_open()
        beeps = ALARM_SIGNALS[alarm].beeps
        self._buzzer.beep(on_time=beeps.on_seconds, off_time=beeps.off_seconds, n=beeps.count, background=True)

    def off(self) -> None:
        """Every lamp and the buzzer off."""
        self._check_open()
        for lamp in Lamp:
            self._lamps[lamp].off()
            self._shown[lamp] = LampPattern.OFF
        self._buzzer.off()

    def close(self) -> None:
        """Everything off, then release every pin. Safe to call twice."""
        if self._closed:
            return
        try:
            self.off()
        finally:
            self._closed = True
            self._close_devices()

    @property
    def closed(self) -> bool:
        return self._closed

    def _close_devices(self) -> None:
        errors: list[Exception] = []
        while self._devices:
            device = self._devices.pop()
            try:
                device.close()
            except Exception as exc:  # close the rest before reporting
                errors.append(exc)
        if errors:
            raise PanelError(f"closing the panel's pins failed: {errors[0]}") from errors[0]

    def _check_open(self) -> None:
        if self._closed:
            raise PanelError("the panel is closed")

    def __enter__(self) -> Panel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PanelSink:
    """The dealer's LEDs and buzzer as a table sink: lamps follow the view; each new alarm sounds once."""

    name = "panel"

    def __init__(self, panel: Panel) -> None:
        self.panel = panel

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        self.panel.show(view.lamps, view.alarms)
        for n in notices:
            if isinstance(n, AlarmRaised):
                self.panel.sound(n.alarm)

    def close(self) -> None:
        self.panel.close()
