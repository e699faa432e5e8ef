"""The dealer's panel on gpiozero's mock pins: lamps, FAULT patterns, buzzer, buttons, close, wiring doc.

Pins record their whole state history (gpiozero's MockPin.states); the tests compare whole histories,
not a prefix. With ``SHOE_TEST_PIN_FACTORY=lgpio`` (or rpigpio, native) on a Raspberry Pi the tests that
only set and read outputs also run against the real header; the rest need mock pins to drive inputs.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.table import Alarm, Lamp
from controller.table.panel import (
    ALARM_SIGNALS,
    ButtonAction,
    LampPattern,
    Panel,
    PanelError,
    PinMap,
    PinMapError,
    alarm_table_markdown,
    fault_pattern,
    make_pin_factory,
)
from tests.waiting import until
from tests.wiring_doc import wired_lamps, wired_pins, wired_rows

WIRING_DOC = Path(__file__).resolve().parent.parent / "docs" / "wiring.md"
PINS = PinMap()
#: The pin map as docs/wiring.md wires it (the tests name a pin by its function, never by a restated number).
WIRED = wired_pins()
REAL_FACTORY = os.environ.get("SHOE_TEST_PIN_FACTORY")
HALTING = tuple(a for a in Alarm if a.halts_coup)
STEADY_ALARMS = tuple(a for a in Alarm if ALARM_SIGNALS[a].fault is LampPattern.STEADY)


# ---------------------------------------------------------------------------------------------------------
# Fixtures and helpers


@pytest.fixture
def fresh_factory() -> Iterator[Any]:
    """A mock pin factory of its own, for tests that open and close panels themselves."""
    factory = make_pin_factory("mock")
    yield factory
    factory.reset()
    factory.close()


@pytest.fixture(params=["mock", "real"])
def any_factory(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Mock pins always; the real header too when SHOE_TEST_PIN_FACTORY names a factory."""
    if request.param == "real" and not REAL_FACTORY:
        pytest.skip("set SHOE_TEST_PIN_FACTORY=lgpio to run against real pins")
    factory = make_pin_factory("mock" if request.param == "mock" else str(REAL_FACTORY))
    yield factory
    factory.close()


class Presses:
    """The on_button sink: records actions, like the daemon's queue would."""

    def __init__(self) -> None:
        self.actions: list[ButtonAction] = []

    def __call__(self, action: ButtonAction) -> None:
        self.actions.append(action)


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[Any, Presses, Panel]]:
    """One mock panel shared by the module's tests (gpiozero takes ~0.3 s to close a panel's buttons)."""
    factory = make_pin_factory("mock")
    presses = Presses()
    p = Panel(PINS, factory, presses, void_hold_seconds=0.05)
    yield factory, presses, p
    p.close()
    factory.reset()
    factory.close()


@pytest.fixture
def panel(rig: tuple[Any, Presses, Panel]) -> Iterator[Panel]:
    """The shared panel, reset: buttons released, everything off, histories and presses cleared. Turned off
    again afterwards, so that no blink thread outlives its test."""
    factory, presses, p = rig
    for gpio in INPUTS:
        factory.pin(gpio).drive_high()
    p.off()
    for gpio in OUTPUTS + INPUTS:
        factory.pin(gpio).clear_states()
    presses.actions.clear()
    yield p
    p.off()


@pytest.fixture
def mock_factory(rig: tuple[Any, Presses, Panel]) -> Any:
    return rig[0]


@pytest.fixture
def presses(rig: tuple[Any, Presses, Panel]) -> Presses:
    return rig[1]


def history(factory: Any, gpio: int) -> list[bool]:
    """The whole recorded state history of a mock pin (values only)."""
    return [s.state for s in factory.pin(gpio).states]


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """True as soon as ``condition`` holds (tests/waiting.py's until, which fails the test after ``timeout``)."""
    until(condition, timeout, "the pins", every=0.005)
    return True


def alternates(states: list[bool]) -> bool:
    return all(a != b for a, b in itertools.pairwise(states))


OUTPUTS = [PINS.lamp_pin(lamp) for lamp in Lamp] + [PINS.buzzer]
INPUTS = [PINS.declare, PINS.new_shoe, PINS.void]


# ---------------------------------------------------------------------------------------------------------
# Pin map


def test_pin_map_defaults_are_the_documented_bcm_numbers() -> None:
    """The panel's defaults are docs/wiring.md's table (read by tests/wiring_doc.py), lamp by lamp."""
    wired = wired_pins()
    assert len(wired) == 10 and list(wired)[:6] == [lamp.value for lamp in Lamp]  # the table was read
    assert dict(PINS.items()) == wired
    assert {lamp.value: PINS.lamp_pin(lamp) for lamp in Lamp} == wired_lamps()


@pytest.mark.parametrize(
    ("kwargs", "function", "pin", "words"),
    [
        ({"tie": WIRED["player_draw"]}, "tie", WIRED["player_draw"], "already used by player_draw"),
        ({"fault": 28}, "fault", 28, r"28 is not a BCM GPIO number \(0-27\)"),
        ({"buzzer": -1}, "buzzer", -1, r"-1 is not a BCM GPIO number \(0-27\)"),
        ({"fault": 0}, "fault", 0, "HAT ID EEPROM"),
        ({"tie": 1}, "tie", 1, "HAT ID EEPROM"),
        ({"declare": 2}, "declare", 2, "I2C SDA"),
        ({"void": 3}, "void", 3, "I2C SCL"),
        ({"new_shoe": 14}, "new_shoe", 14, "UART"),
    ],
)
def test_pin_map_rejects_unusable_pins_naming_the_function(
    kwargs: dict[str, int], function: str, pin: int, words: str
) -> None:
    with pytest.raises(PinMapError, match=words) as info:
        PinMap(**kwargs)
    assert (info.value.function, info.value.pin) == (function, pin)
    assert function in str(info.value)


@pytest.mark.parametrize("key", ["fault", "tie"])
@pytest.mark.parametrize("pin", range(-1, 29))
def test_check_config_refuses_exactly_the_pin_maps_the_panel_refuses(key: str, pin: int) -> None:
    """One validation: a [gpio.pins] value passes check-config if and only if the daemon's PinMap takes it
    (BCM 0 and 1, the HAT EEPROM bus, used to pass check-config and then stop the daemon at start)."""
    from controller.config import ConfigError, parse_config

    try:
        PinMap(**{key: pin})
        panel_error = None
    except PinMapError as error:
        panel_error = error
    try:
        settings = parse_config(f"[gpio.pins]\n{key} = {pin}\n")
        config_error = None
    except ConfigError as error:
        config_error = error
    assert (config_error is None) == (panel_error is None), (config_error, panel_error)
    if config_error is None:
        assert PinMap(**settings.gpio.pins.as_dict()).items() is not None  # the daemon's own construction
    else:
        assert panel_error is not None
        assert config_error.key == f"gpio.pins.{panel_error.function}"
        assert config_error.reason.replace("gpio.pins.", "") == panel_error.reason


def test_the_default_pins_are_stated_once() -> None:
    """controller.pinmap.DEFAULT_PINS is the one default pin map: the panel's PinMap, the configuration's
    [gpio.pins], the wiring table (with the header pins) and the configuration reference all say it."""
    import re
    from pathlib import Path

    from controller.config import GpioPins
    from controller.pinmap import DEFAULT_PINS, PHYSICAL_PIN

    assert dict(PinMap().items()) == dict(DEFAULT_PINS)
    assert list(PinMap().items()) == list(DEFAULT_PINS.items())  # the same order, too
    assert GpioPins().as_dict() == dict(DEFAULT_PINS) and list(GpioPins().as_dict()) == list(DEFAULT_PINS)
    docs = Path(__file__).resolve().parents[1] / "docs"
    wiring = {key: (bcm, header) for _function, key, bcm, header in wired_rows()}
    assert wiring == {name: (pin, PHYSICAL_PIN[pin]) for name, pin in DEFAULT_PINS.items()}
    reference = {
        m[1]: int(m[2])
        for m in re.finditer(
            r"^\| `gpio\.pins\.(\w+)` \| integer \| `(\d+)`", (docs / "configuration.md").read_text(), re.M
        )
    }
    assert reference == dict(DEFAULT_PINS)


def test_pin_map_rejects_a_bool() -> None:
    with pytest.raises(PinMapError):
        PinMap(tie=True)


# ---------------------------------------------------------------------------------------------------------
# Pin factories


def test_make_pin_factory_mock_gives_gpiozero_mock_factory() -> None:
    from gpiozero.pins.mock import MockFactory

    factory = make_pin_factory("mock")
    try:
        assert isinstance(factory, MockFactory)
    finally:
        factory.close()


def test_make_pin_factory_unknown_name_is_a_panel_error_naming_it() -> None:
    with pytest.raises(PanelError, match=r"unknown pin factory 'pigpiod'") as info:
        make_pin_factory("pigpiod")
    assert info.value.factory == "pigpiod"
    assert "lgpio" in str(info.value)  # lists what is known


def _loads_here(name: str) -> bool:
    try:
        make_pin_factory(name).close()
    except PanelError:
        return False
    return True


@pytest.mark.parametrize("name", ["lgpio", "rpigpio", "native"])
def test_make_pin_factory_unavailable_is_one_line_naming_it(name: str) -> None:
    if _loads_here(name):
        pytest.skip(f"{name} is available on this machine")
    with pytest.raises(PanelError) as info:
        make_pin_factory(name)
    message = str(info.value)
    assert message.startswith(f"pin factory {name!r} is not available: ")
    assert "\n" not in message
    assert info.value.factory == name
    assert info.value.__cause__ is not None  # the library's own error is kept


def test_lgpio_unavailable_message_says_how_to_install() -> None:
    import importlib.util

    if importlib.util.find_spec("lgpio") is not None:
        pytest.skip("lgpio is installed here")
    with pytest.raises(PanelError, match=r"No module named 'lgpio' \(install the \[pi\] extra"):
        make_pin_factory("lgpio")


# ---------------------------------------------------------------------------------------------------------
# Lamps


def test_a_new_panel_has_every_output_off_and_buttons_pulled_up(fresh_factory: Any) -> None:
    with Panel(PINS, fresh_factory, Presses()) as p:
        for gpio in OUTPUTS:
            assert history(fresh_factory, gpio) == [False]
            assert fresh_factory.pin(gpio).function == "output"
        for gpio in INPUTS:
            assert fresh_factory.pin(gpio).function == "input"
            assert fresh_factory.pin(gpio).pull == "up"
            assert fresh_factory.pin(gpio).state is True
        assert set(p.shown.values()) == {LampPattern.OFF}


ALL_LAMP_SETS = [frozenset(combo) for r in range(len(Lamp) + 1) for combo in itertools.combinations(Lamp, r)]


def test_every_lamp_combination_lights_exactly_its_pins(any_factory: Any) -> None:
    with Panel(PINS, any_factory, Presses()) as p:
        for lamps in ALL_LAMP_SETS:
            p.show(lamps, ())
            lit = {gpio for gpio in OUTPUTS if any_factory.pin(gpio).state}
            assert lit == {PINS.lamp_pin(lamp) for lamp in lamps}, sorted(lamp.name for lamp in lamps)


def test_active_low_lamps_are_lit_by_a_low_pin(fresh_factory: Any) -> None:
    with Panel(PINS, fresh_factory, Presses(), active_high=False) as p:
        for gpio in OUTPUTS:
            assert history(fresh_factory, gpio) == [False, True]  # unlit = high
        p.show(frozenset({Lamp.TIE}), ())
        assert history(fresh_factory, PINS.tie) == [False, True, False]
        assert history(fresh_factory, PINS.player_win) == [False, True]


@settings(max_examples=80, deadline=None)
@given(
    views=st.lists(
        st.tuples(
            st.frozensets(st.sampled_from([lamp for lamp in Lamp if lamp is not Lamp.FAULT])),
            st.lists(st.sampled_from(STEADY_ALARMS), max_size=3, unique=True).map(tuple),
        ),
        max_size=12,
    )
)
def test_any_sequence_of_views_gives_each_pin_exactly_the_wanted_changes(
    rig: tuple[Any, Presses, Panel], views: list[tuple[frozenset[Lamp], tuple[Alarm, ...]]]
) -> None:
    """Every pin's whole history is its wanted state per show, with repeats dropped (idempotence)."""
    factory, _, p = rig
    p.off()
    for gpio in OUTPUTS:
        factory.pin(gpio).clear_states()
    for lamps, alarms in views:
        p.show(lamps | ({Lamp.FAULT} if alarms else set()), alarms)
    for lamp in Lamp:
        wanted = [False]
        for lamps, alarms in views:
            on = bool(alarms) if lamp is Lamp.FAULT else lamp in lamps
            if on != wanted[-1]:
                wanted.append(on)
        assert history(factory, PINS.lamp_pin(lamp)) == wanted, lamp
    assert history(factory, PINS.buzzer) == [False]


def test_repeated_show_of_a_steady_state_changes_no_pin(panel: Panel, mock_factory: Any) -> None:
    lamps = frozenset({Lamp.BANKER_WIN, Lamp.FAULT})
    for _ in range(5):
        panel.show(lamps, (Alarm.MISDRAW,))
    for lamp in Lamp:
        expected = [False, True] if lamp in lamps else [False]
        assert history(mock_factory, PINS.lamp_pin(lamp)) == expected, lamp


# ---------------------------------------------------------------------------------------------------------
# FAULT patterns


@given(st.lists(st.sampled_from(list(Alarm)), max_size=6, unique=True))
def test_fault_pattern_is_the_most_severe_alarms(alarms: list[Alarm]) -> None:
    pattern = fault_pattern(tuple(alarms))
    if not alarms:
        assert pattern is LampPattern.OFF
    elif any(a.halts_coup for a in alarms):
        assert pattern is LampPattern.FAST_BLINK
    elif {Alarm.LINK_DOWN, Alarm.NOISY_LINE, Alarm.JOURNAL_FULL, Alarm.JOURNAL_FAULT} & set(alarms):
        assert pattern is LampPattern.SLOW_BLINK
    else:
        assert pattern is LampPattern.STEADY


def test_signal_table_covers_every_alarm_and_blinks_fast_exactly_for_halting_ones() -> None:
    assert set(ALARM_SIGNALS) == set(Alarm)
    fast = {a for a, s in ALARM_SIGNALS.items() if s.fault is LampPattern.FAST_BLINK}
    assert fast == set(HALTING) == {Alarm.UNREADABLE, Alarm.FOREIGN_CARD, Alarm.SHOE_REBOOTED}
    slow = {a for a, s in ALARM_SIGNALS.items() if s.fault is LampPattern.SLOW_BLINK}
    assert slow == {Alarm.LINK_DOWN, Alarm.NOISY_LINE, Alarm.JOURNAL_FULL, Alarm.JOURNAL_FAULT}
    assert LampPattern.OFF not in {s.fault for s in ALARM_SIGNALS.values()}
    assert LampPattern.FAST_BLINK.blink_seconds == (0.1, 0.1)
    assert LampPattern.SLOW_BLINK.blink_seconds == (0.5, 0.5)


@pytest.mark.parametrize(
    ("alarms", "pattern"),
    [
        ((Alarm.UNREADABLE,), LampPattern.FAST_BLINK),
        ((Alarm.LINK_DOWN, Alarm.FOREIGN_CARD), LampPattern.FAST_BLINK),
        ((Alarm.LINK_DOWN, Alarm.MISDRAW), LampPattern.SLOW_BLINK),
    ],
)
def test_blinking_fault_lamp_alternates(
    panel: Panel, mock_factory: Any, alarms: tuple[Alarm, ...], pattern: LampPattern
) -> None:
    panel.show(frozenset({Lamp.FAULT}), alarms)
    assert panel.shown[Lamp.FAULT] is pattern
    assert wait_for(lambda: len(mock_factory.pin(PINS.fault).states) >= 4)  # on, off, on
    states = history(mock_factory, PINS.fault)
    assert states[:2] == [False, True]
    assert alternates(states)
    for lamp in Lamp:
        if lamp is not Lamp.FAULT:
            assert history(mock_factory, PINS.lamp_pin(lamp)) == [False]


@pytest.mark.parametrize("alarm", STEADY_ALARMS)
def test_steady_fault_lamp_changes_once(panel: Panel, mock_factory: Any, alarm: Alarm) -> None:
    panel.show(frozenset({Lamp.FAULT}), (alarm,))
    panel.show(frozenset({Lamp.FAULT}), (alarm,))
    assert panel.shown[Lamp.FAULT] is LampPattern.STEADY
    assert history(mock_factory, PINS.fault) == [False, True]


def test_fault_lamp_goes_off_when_the_alarms_clear(panel: Panel, mock_factory: Any) -> None:
    panel.show(frozenset({Lamp.FAULT}), (Alarm.FOREIGN_CARD,))
    assert wait_for(lambda: len(mock_factory.pin(PINS.fault).states) >= 3)
    panel.show(frozenset(), ())
    settled = history(mock_factory, PINS.fault)
    assert settled[-1] is False
    assert alternates(settled)
    time.sleep(0.25)  # longer than a fast blink's period: a blink left running would add changes
    assert history(mock_factory, PINS.fault) == settled


def test_fault_lamp_from_blinking_to_steady(panel: Panel, mock_factory: Any) -> None:
    panel.show(frozenset({Lamp.FAULT}), (Alarm.UNREADABLE,))
    assert wait_for(lambda: len(mock_factory.pin(PINS.fault).states) >= 3)
    panel.show(frozenset({Lamp.FAULT}), (Alarm.MISDRAW,))
    settled = history(mock_factory, PINS.fault)
    assert settled[-1] is True
    time.sleep(0.25)
    assert history(mock_factory, PINS.fault) == settled


def test_fault_in_lamps_without_an_alarm_is_steady(panel: Panel, mock_factory: Any) -> None:
    panel.show(frozenset({Lamp.FAULT}), ())
    assert panel.shown[Lamp.FAULT] is LampPattern.STEADY
    assert history(mock_factory, PINS.fault) == [False, True]


def test_repeated_show_does_not_restart_a_blink(panel: Panel, mock_factory: Any) -> None:
    # Slow blink: wait for the first off phase (0.5 s long). Restarting the blink would light the lamp
    # at once, so the pin's history must not grow while the same state is shown again and again.
    panel.show(frozenset({Lamp.FAULT}), (Alarm.LINK_DOWN,))
    assert wait_for(lambda: len(mock_factory.pin(PINS.fault).states) >= 3)
    before = history(mock_factory, PINS.fault)
    assert before == [False, True, False]
    for _ in range(3):
        panel.show(frozenset({Lamp.FAULT}), (Alarm.LINK_DOWN,))
        panel.show(frozenset({Lamp.FAULT}), (Alarm.LINK_DOWN, Alarm.MISDRAW))  # same pattern
    assert history(mock_factory, PINS.fault) == before


# ---------------------------------------------------------------------------------------------------------
# Buzzer


# one alarm per distinct beep pattern (the table maps the rest onto the same patterns)
BEEP_EXAMPLES = list({ALARM_SIGNALS[a].beeps: a for a in Alarm}.values())


@pytest.mark.parametrize("alarm", BEEP_EXAMPLES)
def test_sound_plays_the_alarms_beeps_in_the_background(panel: Panel, mock_factory: Any, alarm: Alarm) -> None:
    beeps = ALARM_SIGNALS[alarm].beeps
    panel.sound(alarm)  # returns at once; the beeps run on gpiozero's thread
    expected = [False] + [True, False] * beeps.count
    assert wait_for(lambda: history(mock_factory, PINS.buzzer) == expected), history(mock_factory, PINS.buzzer)
    time.sleep(0.15)  # nothing after the last beep
    assert history(mock_factory, PINS.buzzer) == expected
    for lamp in Lamp:
        assert history(mock_factory, PINS.lamp_pin(lamp)) == [False]


def test_beep_counts_by_severity() -> None:
    counts = {a: ALARM_SIGNALS[a].beeps for a in Alarm}
    assert counts[Alarm.UNREADABLE].count == counts[Alarm.FOREIGN_CARD].count == 3
    assert counts[Alarm.LINK_DOWN].count == 1
    assert counts[Alarm.LINK_DOWN].on_seconds >= 0.5  # one long
    assert counts[Alarm.MISDRAW].count == counts[Alarm.EARLY_DECLARE].count == 2


# ---------------------------------------------------------------------------------------------------------
# Buttons


@pytest.mark.parametrize(
    ("gpio", "action"), [(PINS.declare, ButtonAction.DECLARE), (PINS.new_shoe, ButtonAction.NEW_SHOE)]
)
def test_press_buttons_fire_once_on_press(
    panel: Panel, mock_factory: Any, presses: Presses, gpio: int, action: ButtonAction
) -> None:
    pin = mock_factory.pin(gpio)
    pin.drive_low()
    assert presses.actions == [action]
    pin.drive_high()
    assert presses.actions == [action]  # release does nothing
    pin.drive_low()
    pin.drive_high()
    assert presses.actions == [action, action]


def test_buttons_only_enqueue_they_touch_no_output(panel: Panel, mock_factory: Any, presses: Presses) -> None:
    for gpio in (PINS.declare, PINS.new_shoe):
        mock_factory.pin(gpio).drive_low()
        mock_factory.pin(gpio).drive_high()
    assert presses.actions == [ButtonAction.DECLARE, ButtonAction.NEW_SHOE]
    for gpio in OUTPUTS:
        assert history(mock_factory, gpio) == [False]
    assert set(panel.shown.values()) == {LampPattern.OFF}


def test_a_short_void_press_does_nothing(panel: Panel, mock_factory: Any, presses: Presses) -> None:
    pin = mock_factory.pin(PINS.void)
    pin.drive_low()
    pin.drive_high()
    time.sleep(0.3)  # several hold times: a late VOID would show up
    assert presses.actions == []


def test_a_held_void_fires_exactly_once(panel: Panel, mock_factory: Any, presses: Presses) -> None:
    pin = mock_factory.pin(PINS.void)
    pin.drive_low()
    assert wait_for(lambda: presses.actions == [ButtonAction.VOID])
    time.sleep(0.3)  # still held: no repeat
    pin.drive_high()
    assert presses.actions == [ButtonAction.VOID]
    pin.drive_low()  # a second hold is a second void
    assert wait_for(lambda: len(presses.actions) == 2)
    pin.drive_high()
    assert presses.actions == [ButtonAction.VOID, ButtonAction.VOID]


def test_button_actions_are_the_daemons_words() -> None:
    assert {a.value for a in ButtonAction} == {"declare", "new_shoe", "void"}


# ---------------------------------------------------------------------------------------------------------
# off, close, reopen


def test_off_turns_everything_off(panel: Panel, mock_factory: Any) -> None:
    panel.show(frozenset({Lamp.PLAYER_WIN, Lamp.FAULT}), (Alarm.FOREIGN_CARD,))
    panel.sound(Alarm.LINK_DOWN)
    panel.off()
    for gpio in OUTPUTS:
        assert mock_factory.pin(gpio).state is False
    assert set(panel.shown.values()) == {LampPattern.OFF}
    settled = {gpio: history(mock_factory, gpio) for gpio in OUTPUTS}
    time.sleep(0.25)
    assert {gpio: history(mock_factory, gpio) for gpio in OUTPUTS} == settled


def test_close_leaves_outputs_low_and_releases_every_pin(fresh_factory: Any) -> None:
    threads_before = set(threading.enumerate())
    presses = Presses()
    p = Panel(PINS, fresh_factory, presses)
    p.show(frozenset(Lamp), (Alarm.UNREADABLE,))
    p.sound(Alarm.UNREADABLE)
    assert set(threading.enumerate()) > threads_before  # blink, beep and hold threads run
    p.close()
    p.close()  # idempotent
    assert p.closed
    assert set(threading.enumerate()) <= threads_before  # and none is left behind
    for gpio in OUTPUTS:
        pin = fresh_factory.pin(gpio)
        assert pin.state is False
        assert pin.function == "input"
    settled = {gpio: history(fresh_factory, gpio) for gpio in OUTPUTS}
    time.sleep(0.25)
    assert {gpio: history(fresh_factory, gpio) for gpio in OUTPUTS} == settled  # no blink or beep left
    fresh_factory.pin(PINS.declare).drive_low()  # a closed panel no longer reports presses
    assert presses.actions == []
    with pytest.raises(PanelError, match="closed"):
        p.show(frozenset(), ())
    with pytest.raises(PanelError, match="closed"):
        p.sound(Alarm.MISDRAW)


def test_a_new_panel_can_open_the_same_pins_after_close(any_factory: Any) -> None:
    first = Panel(PINS, any_factory, Presses())
    first.show(frozenset({Lamp.TIE}), ())
    first.close()
    with Panel(PINS, any_factory, Presses()) as second:
        second.show(frozenset({Lamp.PLAYER_DRAW}), ())
        assert any_factory.pin(PINS.player_draw).state
        assert not any_factory.pin(PINS.tie).state


def test_a_pin_in_use_is_a_panel_error_naming_it_and_nothing_stays_claimed(fresh_factory: Any) -> None:
    from gpiozero import LED

    blocker = LED(PINS.void, pin_factory=fresh_factory)
    with pytest.raises(PanelError, match=r"cannot open void on GPIO 13") as info:
        Panel(PINS, fresh_factory, Presses())
    assert (info.value.function, info.value.pin) == ("void", 13)
    blocker.close()
    # the lamps, buzzer and other buttons opened before the failure were released
    with Panel(PINS, fresh_factory, Presses()) as p:
        p.show(frozenset({Lamp.BANKER_DRAW}), ())
        assert fresh_factory.pin(PINS.banker_draw).state is True


def test_two_panels_cannot_share_pins(panel: Panel, mock_factory: Any) -> None:
    with pytest.raises(PanelError, match="player_draw on GPIO 17"):
        Panel(PINS, mock_factory, Presses())
    panel.show(frozenset({Lamp.PLAYER_DRAW}), ())  # the first panel is untouched
    assert mock_factory.pin(PINS.player_draw).state is True


def test_panel_rejects_bad_timings(fresh_factory: Any) -> None:
    with pytest.raises(ValueError, match="void_hold_seconds"):
        Panel(PINS, fresh_factory, Presses(), void_hold_seconds=0)
    with pytest.raises(ValueError, match="bounce_seconds"):
        Panel(PINS, fresh_factory, Presses(), bounce_seconds=-0.01)


# ---------------------------------------------------------------------------------------------------------
# docs/wiring.md agrees with the code


def test_wiring_doc_carries_the_alarm_table_verbatim() -> None:
    doc = WIRING_DOC.read_text(encoding="utf-8")
    assert alarm_table_markdown() in doc, (
        "docs/wiring.md's alarm table differs from controller.table.panel.ALARM_SIGNALS; paste the output of "
        '`.venv/bin/python -c "from controller.table.panel import alarm_table_markdown as t; print(t())"`'
    )


def _wiring_rows() -> dict[str, tuple[int, int]]:
    """{config key: (BCM GPIO, header pin)} from the wiring table's rows."""
    rows: dict[str, tuple[int, int]] = {}
    for line in WIRING_DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            continue
        key = re.fullmatch(r"`(\w+)`", cells[1])
        gpio = re.fullmatch(r"GPIO (\d+)", cells[2])
        header = re.fullmatch(r"(\d+)", cells[3])
        if key and gpio and header:
            rows[key.group(1)] = (int(gpio.group(1)), int(header.group(1)))
    return rows


def test_wiring_doc_table_matches_the_pin_map_and_the_header(fresh_factory: Any) -> None:
    rows = _wiring_rows()
    assert set(rows) == {name for name, _ in PINS.items()}
    for name, gpio in PINS.items():
        ((_header, info),) = fresh_factory.board_info.find_pin(f"GPIO{gpio}")
        assert rows[name] == (gpio, info.number), name
