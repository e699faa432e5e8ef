"""A press lost at the table loop's full queue is shown to the dealer.

The loop's queue is bounded (``QUEUE_BOUND``): a panel press that finds it full is dropped at once (a GPIO
callback never blocks). Once the loop gets going again it raises PRESS AGAIN (``Alarm.INPUT_LOST``): the
FAULT lamp and the buzzer on the dealer's panel (gpiozero's mock pins), the alarm on the terminal display,
a "raised" record naming what was lost in the journal (a real SQLite file) and an alarm record for the
floor. The next press the loop accepts clears it, or a hold of ``INPUT_LOST_HOLD`` seconds of the loop's
clock; the clearing is journaled too. The loop is stalled the simplest honest way: it is not running yet.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from controller.game.table import Alarm, Lamp, TableRules, TableState
from controller.journal import Journal
from controller.metrics import TableMetrics
from controller.table.loop import (
    INPUT_LOST_HOLD,
    PUT_WAIT,
    Inbox,
    LoopConfig,
    PanelPress,
    PortState,
    ShoePort,
    Stop,
    TableLoop,
)
from controller.table.panel import ButtonAction, Panel, PanelSink, PinMap, make_pin_factory
from controller.table.terminal import TerminalDisplay
from controller.table.wire import AsciiWire
from tests.waiting import until

RULES = TableRules(decks=1)
PINS = PinMap()
FAULT = PINS.lamp_pin(Lamp.FAULT)
BUTTON = {"declare": PINS.declare, "new_shoe": PINS.new_shoe}


class Clock:
    """The loop's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Buttons:
    """The panel's ``on_button``: what the daemon does, a press put in the loop's inbox."""

    def __init__(self) -> None:
        self.inbox: Inbox | None = None

    def __call__(self, action: ButtonAction) -> None:
        assert self.inbox is not None
        self.inbox.put(PanelPress(action))


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[Any, Buttons, Panel]]:
    """One mock panel for the module (gpiozero takes ~0.3 s to close a panel's buttons)."""
    factory = make_pin_factory("mock")
    buttons = Buttons()
    panel = Panel(PINS, factory, buttons, bounce_seconds=0)
    yield factory, buttons, panel
    panel.close()
    factory.reset()
    factory.close()


@pytest.fixture
def table(rig: tuple[Any, Buttons, Panel], tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Table]:
    """The table; a test may give the loop's options (``put_wait``, ``max_batch``) by indirect parametrization."""
    options: dict[str, float] = getattr(request, "param", {})
    factory, buttons, panel = rig
    for gpio in BUTTON.values():
        factory.pin(gpio).drive_high()
    panel.off()
    for gpio in [FAULT, PINS.buzzer, *BUTTON.values()]:
        factory.pin(gpio).clear_states()
    with Journal.open(tmp_path / "journal.db") as journal:
        t = Table(factory, panel, journal, **options)
        buttons.inbox = t.loop.inbox
        try:
            yield t
        finally:
            t.stop()
            buttons.inbox = None
            panel.off()


class Table:
    """A real table loop with a queue of two, the panel's sink and the terminal display as its sinks."""

    def __init__(
        self, factory: Any, panel: Panel, journal: Journal, put_wait: float = PUT_WAIT, max_batch: float = 64
    ) -> None:
        self.factory = factory
        self.journal = journal
        self.clock = Clock()
        self.terminal_out = io.StringIO()
        self.metrics = TableMetrics()
        self.loop = TableLoop(
            TableState(RULES),
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            [PanelSink(panel), TerminalDisplay(self.terminal_out)],
            LoopConfig(
                inbox=Inbox(2, put_wait=put_wait),
                metrics=self.metrics,
                clock=self.clock,
                tick=0.02,
                max_batch=int(max_batch),
            ),
        )
        self.runner: threading.Thread | None = None
        self.ticks = 0  # the loop's wake-ups and idle ticks (its on_tick)

    def press(self, action: str) -> None:
        pin = self.factory.pin(BUTTON[action])
        pin.drive_low()
        pin.drive_high()

    def start(self) -> None:
        self.runner = threading.Thread(target=self.loop.run, kwargs={"on_tick": self._tick}, name="test-loop")
        self.runner.start()

    def _tick(self) -> None:
        self.ticks += 1

    def wait_ticks(self, n: int) -> None:
        """Until the loop has gone round ``n`` more times (it has then seen whatever was changed before)."""
        since = self.ticks
        until(lambda: self.ticks >= since + n, 10, f"{n} ticks of the loop")

    def stop(self) -> None:
        if self.runner is not None:
            self.loop.put(Stop())
            self.runner.join(10)
            assert not self.runner.is_alive()
            self.runner = None

    def terminal(self) -> list[str]:
        return self.terminal_out.getvalue().splitlines()

    def fault_lamp(self) -> list[bool]:
        return [s.state for s in self.factory.pin(FAULT).states]

    def buzzer(self) -> list[bool]:
        return [s.state for s in self.factory.pin(PINS.buzzer).states]

    def lost_records(self) -> list[dict[str, Any]]:
        """The journal's records of the alarm: raised and cleared (inputs of the shell's faults)."""
        with Journal.open(self.journal.path, read_only=True) as reader:
            return [b for _i, b in reader.inputs() if b.get("alarm") == "input_lost"]

    def alarm_records(self) -> list[dict[str, Any]]:
        import json

        with Journal.open(self.journal.path, read_only=True) as reader:
            return [json.loads(r.body) for r in reader.records() if r.kind == "alarm"]

    def dropped(self, kind: str) -> float | None:
        return self.metrics.registry.get_sample_value("shoe_events_dropped_total", {"kind": kind})


def wait_for(what: str, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    until(condition, timeout, what, every=0.01)


@contextmanager
def stalled_then_running(table: Table) -> Iterator[None]:
    """The queue filled while the loop is stalled (two harmless port reports), then the loop runs."""
    table.loop.put(PortState(True, "port opened"))
    table.loop.put(PortState(True, "port opened"))
    assert table.loop.inbox.full()
    yield
    table.start()


def raised(table: Table) -> bool:
    return any(b["event"] == "raised" for b in table.lost_records())


def cleared(table: Table) -> bool:
    return any(b["event"] == "cleared" for b in table.lost_records())


def test_a_press_lost_at_the_full_queue_shows_press_again_until_the_next_press(table: Table) -> None:
    with stalled_then_running(table):
        table.press("declare")  # the queue is full: dropped at once, the callback does not block
        assert table.loop.inbox.dropped == 1
        assert table.fault_lamp() == [False] and table.buzzer() == [False]  # stalled: nothing shown yet

    wait_for("the raised record", lambda: raised(table))
    assert Alarm.INPUT_LOST.value == "PRESS AGAIN"
    assert Alarm.INPUT_LOST in table.loop.view().alarms
    assert not Alarm.INPUT_LOST.halts_coup
    # The dealer's panel: FAULT lit (steady: no other alarm stands) and the buzzer sounded.
    wait_for("the FAULT lamp", lambda: table.fault_lamp() == [False, True])
    wait_for("the buzzer", lambda: True in table.buzzer())
    # The terminal display says so, and what was lost.
    alarm_lines = [line for line in table.terminal() if line.startswith("ALARM PRESS AGAIN")]
    assert len(alarm_lines) == 1 and "declare x1" in alarm_lines[0]
    [record] = table.lost_records()
    assert record["kind"] == "journal_fault" and record["event"] == "raised"
    assert "1 event lost" in record["detail"] and "declare x1" in record["detail"]
    # The floor sees it like any alarm raised.
    [alarm] = table.alarm_records()
    assert alarm["alarm"] == "input_lost" and alarm["text"] == "PRESS AGAIN" and "declare x1" in alarm["detail"]
    assert table.dropped("declare") == 1.0
    assert table.dropped("link") is None

    table.press("new_shoe")  # the dealer presses again: the loop takes it, and the alarm clears
    wait_for("the cleared record", lambda: cleared(table))
    assert [b["event"] for b in table.lost_records()] == ["raised", "cleared"]
    assert "press" in table.lost_records()[1]["detail"]
    assert Alarm.INPUT_LOST not in table.loop.view().alarms
    wait_for("the FAULT lamp off", lambda: table.fault_lamp() == [False, True, False])
    assert "cleared PRESS AGAIN" in table.terminal()
    with Journal.open(table.journal.path, read_only=True) as reader:
        presses = [b["kind"] for _i, b in reader.inputs() if b.get("source") == "panel"]
    assert presses == ["new_shoe"]  # the lost declare is not in the journal; the press after it is


def test_the_alarm_clears_itself_after_the_hold_on_the_loops_clock(table: Table) -> None:
    with stalled_then_running(table):
        table.press("declare")
    wait_for("the raised record", lambda: raised(table))
    table.clock.now += INPUT_LOST_HOLD - 1.0
    table.wait_ticks(10)  # not yet
    assert not cleared(table) and Alarm.INPUT_LOST in table.loop.view().alarms
    table.clock.now += 1.5
    wait_for("the cleared record", lambda: cleared(table))
    assert Alarm.INPUT_LOST not in table.loop.view().alarms
    assert f"{INPUT_LOST_HOLD:g} s" in table.lost_records()[-1]["detail"]
    wait_for("the FAULT lamp off", lambda: table.fault_lamp() == [False, True, False])
    assert "cleared PRESS AGAIN" in table.terminal()


@pytest.mark.parametrize("table", [{"max_batch": 1}], indirect=True)
def test_presses_queued_before_the_loss_do_not_clear_it(table: Table) -> None:
    """Presses that were waiting in the queue when the press was lost are not the dealer's answer to the
    alarm: with one event taken per batch, the two queued ones are applied after the alarm is raised and it
    still stands; only a later press clears it."""
    table.press("new_shoe")
    table.press("new_shoe")
    table.press("declare")  # lost
    table.start()
    wait_for("the raised record", lambda: raised(table))
    wait_for("the queue drained", lambda: table.loop.inbox.empty() and table.loop.idle.is_set())
    table.wait_ticks(5)
    with Journal.open(table.journal.path, read_only=True) as reader:
        assert [b["kind"] for _i, b in reader.inputs() if b.get("source") == "panel"] == ["new_shoe", "new_shoe"]
    assert not cleared(table) and Alarm.INPUT_LOST in table.loop.view().alarms
    table.press("new_shoe")
    wait_for("the cleared record", lambda: cleared(table))


@pytest.mark.parametrize("table", [{"put_wait": 0.05}], indirect=True)
def test_a_lost_link_report_is_named_in_the_detail_and_counted(table: Table) -> None:
    """A report from the port's opener waits PUT_WAIT for room (shortened here) before it is dropped; the
    detail says a report was lost, not a press, and the counter names its kind."""
    with stalled_then_running(table):
        table.loop.put(PortState(False, "port lost"))  # waits, then is dropped
    wait_for("the raised record", lambda: raised(table))
    detail = table.lost_records()[0]["detail"]
    assert "shoe port report x1" in detail and "not a press" in detail
    assert table.dropped("link") == 1.0
    assert table.loop.inbox.dropped == 1


def test_the_floor_does_not_count_a_lost_press_as_a_dealer_error(table: Table) -> None:
    """Surveillance counts dealer errors per hour from the alarm records; PRESS AGAIN is the controller's
    fault, not the dealer's: the floor reads its alarm record and counts nothing."""
    from floor.surveillance import ShoeState, scan

    with stalled_then_running(table):
        table.press("declare")
    wait_for("the raised record", lambda: raised(table))
    table.stop()
    with Journal.open(table.journal.path, read_only=True) as reader:
        records = [r.for_floor("T1") for r in reader.records()]
    assert any(r.kind == "alarm" and r.body["alarm"] == "input_lost" for r in records)
    assert scan(ShoeState(), records).errors == {}  # an error counted would open the hour's counters


def test_a_further_loss_while_the_alarm_stands_is_journaled_sounds_again_and_holds_anew(table: Table) -> None:
    """The running loop stalled for real: the terminal display writes to a full pipe nobody reads. While it
    is stuck a press is lost again; once the pipe is read the loop journals a second "raised" record, shows
    the raise again (the notice that sounds the buzzer) and holds the alarm for INPUT_LOST_HOLD from then."""
    import os

    r, w = os.pipe()
    out = os.fdopen(w, "w")
    table.loop.sinks[1] = TerminalDisplay(out)
    drained: list[bytes] = []
    drainer = threading.Thread(target=lambda: drained.extend(iter(lambda: os.read(r, 65536), b"")), name="drain")
    try:
        with stalled_then_running(table):
            table.press("declare")
        wait_for("the raised record", lambda: raised(table))
        table.clock.now += INPUT_LOST_HOLD - 2.0  # the first hold nearly over
        table.wait_ticks(5)
        os.set_blocking(w, False)  # fill the pipe while the loop is idle: its next line will block it
        with contextlib.suppress(BlockingIOError):
            while True:
                os.write(w, b"x")
        os.set_blocking(w, True)
        table.loop.put(PortState(False, "port lost"))  # LINK DOWN: the panel beeps, the terminal blocks
        wait_for("the loop stuck in the terminal", lambda: table.loop.inbox.empty() and not table.loop.idle.is_set())
        time.sleep(0.1)
        assert not table.loop.idle.is_set()  # still stuck
        table.loop.put(PortState(True, "port opened"))
        table.loop.put(PortState(True, "port opened"))
        table.press("declare")  # lost again
        assert table.loop.inbox.dropped == 2
        drainer.start()
        wait_for("the second raised record", lambda: len(table.lost_records()) == 2)
        assert [b["event"] for b in table.lost_records()] == ["raised", "raised"]
        assert "1 event lost" in table.lost_records()[1]["detail"]
        # The terminal (as the panel's buzzer) was handed the alarm's raise again: two lines in what it wrote.
        wait_for("the second line", lambda: b"".join(drained).count(b"ALARM PRESS AGAIN") == 2)
        table.clock.now += 3.0  # past the first hold's end, within the second's
        table.wait_ticks(10)
        assert not cleared(table) and Alarm.INPUT_LOST in table.loop.view().alarms
        table.clock.now += INPUT_LOST_HOLD
        wait_for("the cleared record", lambda: cleared(table))
        assert [b["event"] for b in table.lost_records()] == ["raised", "raised", "cleared"]
    finally:
        table.stop()
        out.close()
        if drainer.is_alive():
            drainer.join(5)
        os.close(r)
