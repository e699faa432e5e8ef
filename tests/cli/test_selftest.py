"""``shoe-controller selftest``: bring-up on gpiozero's mock pins (the test presses the buttons and watches the
lamps), the LCD through the LCD tests' double, and the shoe through the real simulator on a pty; a shoe that
never answers, devices another program holds, and bad input."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import threading
import time
import tty
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from controller.commands import UsageError
from controller.commands.selftest import (
    STOP_HINT,
    Pace,
    ShoeListener,
    ShoeReport,
    SpotsListener,
    SpotsReport,
    lcd_test,
    run_selftest,
)
from controller.config import LcdSection, Settings, load_config
from controller.game.table import Lamp
from controller.pinmap import DEFAULT_PINS
from controller.table.panel import make_pin_factory
from controller.table.shoe_link import open_port
from firmware_protocol.spots import SpotCode
from hw_sim.spot_reader import SpotReader
from tests.console import run_main, run_script
from tests.displays.test_lcd import FakeLcd
from tests.e2e.harness import Harness
from tests.waiting import until

LAMP_PINS = [DEFAULT_PINS[lamp.value] for lamp in Lamp]
BUTTON_PINS = {"DECLARE": DEFAULT_PINS["declare"], "NEW SHOE": DEFAULT_PINS["new_shoe"], "VOID": DEFAULT_PINS["void"]}
VOID_HOLD = 0.3


class Lines(io.TextIOBase):
    """What the selftest prints, readable from another thread while it runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._text: list[str] = []

    def write(self, s: str) -> int:
        with self._lock:
            self._text.append(s)
        return len(s)

    def text(self) -> str:
        with self._lock:
            return "".join(self._text)


def wait_for(condition: Any, timeout: float = 20.0) -> None:
    until(condition, timeout, "the selftest's output", every=0.01)


def write_config(tmp: Path, port: Path | str, **lcd: object) -> Path:
    lcd_lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in lcd.items())
    path = tmp / "table.toml"
    path.write_text(
        f'[table]\nname = "Table 7"\n[shoe]\nport = "{port}"\n[journal]\npath = "{tmp / "journal.db"}"\n'
        f'[gpio]\npin_factory = "mock"\nvoid_hold_seconds = {VOID_HOLD}\n[lcd]\n{lcd_lines}'
    )
    return path


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with Harness(tmp_path) as h:
        yield h


def dealt(h: Harness) -> list[str]:
    """The cards the simulator dealt (burn cards included), from its record of truth."""
    return [e["card"] for e in h.truth_events() if e["event"] == "card"]


def no_journal(tmp: Path) -> None:
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("journal")], "selftest made a journal"


@pytest.mark.e2e
def test_every_part_answers_lamps_in_turn_buttons_echoed_lcd_pattern_and_the_shoe(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp = harness.tmp
    opened: list[object] = []  # no journal opened at all: not even a SQLite database

    def connect(*a: object, **k: object) -> NoReturn:
        opened.append(a)
        pytest.fail("SQLite opened")

    monkeypatch.setattr(sqlite3, "connect", connect)
    harness.start_sim("--dealer", "self", "--decks", "1", "--linger", "5")
    settings = load_config(write_config(tmp, harness.link, enabled=True, cols=16, rows=2))
    factory = make_pin_factory("mock")
    fake = FakeLcd(16, 2)
    out, err = Lines(), io.StringIO()
    result: dict[str, int] = {}

    def selftest() -> None:
        result["code"] = run_selftest(
            settings, out=out, err=err, listen_seconds=3.0, buttons=20.0, pin_factory=factory, lcd_opener=lambda s: fake
        )

    runner = threading.Thread(target=selftest)
    runner.start()
    try:
        # Watch the lamps while they are tested: which are lit, sampled, in the order they changed.
        wait_for(lambda: "Lamps:" in out.text(), timeout=30)
        lit_in_turn: list[list[int]] = []
        while "Buzzer:" not in out.text():
            lit = [pin for pin in LAMP_PINS if factory.pin(pin).state]
            if lit and (not lit_in_turn or lit_in_turn[-1] != lit):
                lit_in_turn.append(lit)
            time.sleep(0.01)
        wait_for(lambda: "Buttons:" in out.text())
        for name, pin in BUTTON_PINS.items():  # the buttons are pulled up: a press pulls the pin low
            factory.pin(pin).drive_low()
            time.sleep(VOID_HOLD + 0.3 if name == "VOID" else 0.15)
            factory.pin(pin).drive_high()
            time.sleep(0.1)
    finally:
        runner.join(timeout=60)
    text = out.text()
    assert result["code"] == 0, text + err.getvalue()
    assert lit_in_turn == [[pin] for pin in LAMP_PINS]  # one lamp at a time, each in turn
    for lamp, pin in zip(Lamp, LAMP_PINS, strict=True):
        assert f"{lamp.name.replace('_', ' ')} (GPIO {pin})" in text
        assert [s.state for s in factory.pin(pin).states] == [False, True, False]
    assert True in [s.state for s in factory.pin(DEFAULT_PINS["buzzer"]).states]
    assert not factory.pin(DEFAULT_PINS["buzzer"]).state
    for echo in ("DECLARE pressed", "NEW SHOE pressed", "VOID held", "every button seen"):
        assert echo in text
    assert "HELLO firmware 'sim-1.0' serial 'SIM-0001'" in text
    assert "CARD " in text
    writes = [value for call, value in fake.calls if call == "write"]
    assert writes[:2] == ["#" * 16] * 2  # every cell
    assert writes[2:] == ["Table 7".ljust(16), "FW sim-1.0".ljust(16)]
    no_journal(tmp)
    assert opened == []


@pytest.mark.e2e
def test_json_report_holds_the_simulators_hello_and_cards_and_no_journal_is_made(harness: Harness) -> None:
    tmp = harness.tmp
    harness.start_sim("--dealer", "self", "--decks", "1", "--serial-number", "SN-4242", "--linger", "5")
    config = write_config(tmp, harness.link)
    r = run_script(
        ["shoe-controller", "selftest", "--config", str(config), "--json", "--listen", "4", "--buttons", "0"]
    )
    report = json.loads(r.stdout)
    harness.wait_sim(timeout=30)
    shoe = report["shoe"]
    assert shoe["hello"]["serial_number"] == "SN-4242"
    assert shoe["hello"]["protocol_version"] == 1
    assert shoe["cards"] == dealt(harness)  # every card the simulator dealt, in order, once
    assert shoe["cut_card"] == 1
    assert "NEW_SHOE" in shoe["buttons"]
    assert shoe["heartbeats"]["count"] >= 1
    assert shoe["problem"] is None
    # ACKed: the simulator ended with nothing unacknowledged (it would linger, resending, otherwise)
    (end,) = [e for e in harness.truth_events() if e["event"] == "end"]
    assert end["unacked"] == 0
    # nobody pressed the buttons and the LCD is not configured: exit 1, naming the buttons only
    assert r.returncode == 1
    assert report["buttons"] == {"seen": [], "not_seen": ["DECLARE", "NEW SHOE", "VOID"]}
    assert report["lcd"] == {"state": "absent"}
    assert report["failed"] == ["buttons: not seen within 0 s: DECLARE, NEW SHOE, VOID"]
    assert r.stderr == "selftest: buttons: not seen within 0 s: DECLARE, NEW SHOE, VOID\n"
    assert [lamp["lamp"] for lamp in report["lamps"]["lit"]] == [lamp.value for lamp in Lamp]
    no_journal(tmp)


@pytest.mark.e2e
def test_a_shoe_that_never_answers(tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        config = write_config(tmp_path, os.ttyname(slave))
        r = run_script(["shoe-controller", "selftest", "--config", str(config), "--json", "--listen", "1"])
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 1
    assert "selftest: shoe: no HELLO within 1 s" in r.stderr.splitlines()
    report = json.loads(r.stdout)
    assert report["shoe"]["hello"] is None
    assert "shoe: no HELLO within 1 s" in report["failed"]
    no_journal(tmp_path)


@pytest.mark.e2e
def test_a_port_the_table_holds_is_refused_in_one_line(harness: Harness) -> None:
    harness.start_sim("--dealer", "self", "--decks", "1")
    held = open_port(str(harness.link), 115200)  # as the table's service opens it: exclusively
    try:
        config = write_config(harness.tmp, harness.link)
        r = run_main(["shoe-controller", "selftest", "--config", str(config), "--json", "--listen", "1"])
    finally:
        held.close()
    assert r.returncode == 2
    assert r.stderr == f"shoe-controller: selftest: the shoe's port {harness.link} is busy; {STOP_HINT}\n"
    assert r.stdout == ""


def test_a_gpio_the_table_holds_is_refused_in_one_line(tmp_path: Path) -> None:
    from gpiozero import LED

    master, slave = os.openpty()
    factory = make_pin_factory("mock")
    taken = LED(DEFAULT_PINS["fault"], pin_factory=factory)
    try:
        settings = load_config(write_config(tmp_path, os.ttyname(slave)))
        with pytest.raises(UsageError) as caught:
            run_selftest(settings, out=io.StringIO(), err=io.StringIO(), pin_factory=factory)
    finally:
        taken.close()
        os.close(master)
        os.close(slave)
    message = str(caught.value)
    assert message.startswith(f"shoe-controller: selftest: cannot open fault on GPIO {DEFAULT_PINS['fault']}: ")
    assert message.endswith(STOP_HINT)
    assert "\n" not in message


@pytest.mark.parametrize(
    ("args", "config", "expected"),
    [
        (["--port", "/nonexistent/shoe"], None, "cannot open the shoe's port /nonexistent/shoe"),
        (["--port", "/dev/zero"], None, "cannot open the shoe's port /dev/zero: "),  # not a serial port
        (["--port", "socket://127.0.0.1:1"], None, "cannot open the shoe's port socket://127.0.0.1:1: "),
        ([], "[table]\ndecks = 9\n", "table.decks"),
        ([], "[gpio]\npin_factory = 'abacus'\n", "gpio.pin_factory"),
        (["--listen", "soon"], None, "not a number of seconds"),
        (["--pin-factory", "abacus"], None, "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], config: str | None, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(config if config is not None else '[gpio]\npin_factory = "mock"\n')
    r = run_main(["shoe-controller", "selftest", "--config", str(path), "--json", *args])
    assert r.returncode == 2, r
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert expected in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


@pytest.mark.e2e
def test_a_missing_config_file_is_one_line(tmp_path: Path) -> None:
    r = run_script(["shoe-controller", "selftest", "--config", str(tmp_path / "none.toml"), "--json"])
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1 and "none.toml" in r.stderr
    assert "Traceback" not in r.stderr


def test_an_lcd_that_does_not_answer_is_an_error_naming_the_bus() -> None:
    settings = Settings().model_copy(update={"lcd": LcdSection(enabled=True, i2c_bus=3)})

    def no_bus(s: LcdSection) -> Any:
        raise FileNotFoundError(2, "No such file or directory")

    said: list[str] = []
    result = lcd_test(settings, no_bus, None, Pace(None), said.append, hold=0)
    assert result == {"state": "error", "stage": "open", "reason": "no /dev/i2c-3 (is I2C enabled?)"}
    assert said == ["LCD: cannot open: no /dev/i2c-3 (is I2C enabled?)"]


def test_an_lcd_without_a_shoe_says_so_on_its_firmware_line() -> None:
    fake = FakeLcd(20, 4)
    settings = Settings().model_copy(update={"lcd": LcdSection(enabled=True, cols=20, rows=4)})
    pace = Pace(None)
    assert lcd_test(settings, lambda s: fake, None, pace, lambda _: None, hold=0)["state"] == "ok"
    writes = [value for call, value in fake.calls if call == "write"]
    assert writes[:4] == ["#" * 20] * 4
    assert writes[4:6] == ["Table 1".ljust(20), "SHOE: NO HELLO".ljust(20)]


def test_the_listener_acks_each_event_and_prompts_only_shoe_closed() -> None:
    from firmware_protocol import messages as m
    from firmware_protocol.binary import BinaryDecoder, FrameReceived
    from firmware_protocol.session import ShoeSession

    shoe = ShoeSession(0x1234, firmware_version="fw-9", serial_number="SN-9")
    shoe.start(0.0)
    listener = ShoeListener(ShoeReport(port="pty", seconds=1.0))
    lines = listener.receive(shoe.poll(0.0), 0.0)
    shoe.send(m.CardRead(12, "S"), 0.1)
    lines += listener.receive(shoe.poll(0.1), 0.1)
    lines += listener.receive(b"\x07garbage\x00", 0.2)
    sent = [f.message for f in BinaryDecoder().feed(listener.take_output()) if isinstance(f, FrameReceived)]
    assert lines[:2] == ["link up: shoe session 4660", "HELLO firmware 'fw-9' serial 'SN-9' protocol 1 session 4660"]
    assert "CARD QS" in lines
    assert [line for line in lines if line.startswith("noise: ")]
    assert sent == [m.Ack(1), m.Prompt(m.Due.SHOE_CLOSED), m.Ack(2)]
    assert listener.report.noise["rejected"] == 1


FIRST_CHIP = 0xE004000000001000


@contextlib.contextmanager
def simulated_reader(reader: Any, unacked: list[int]) -> Iterator[str]:
    """The simulated bet-spot reader on a pty's master, run by a thread; yields the slave's path. ``unacked``
    gets the events it holds unacknowledged, sampled as it runs."""
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            now = time.monotonic()
            data = reader.poll(now)
            with contextlib.suppress(BlockingIOError, OSError):
                if data:
                    os.write(master, data)
            with contextlib.suppress(BlockingIOError, OSError):
                reader.receive(os.read(master, 65536), now)
            unacked.append(reader.unacked)
            time.sleep(0.01)

    reader.start(time.monotonic())
    reader.place(1, SpotCode.BANKER, [FIRST_CHIP, FIRST_CHIP + 1], time.monotonic())
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield os.ttyname(slave)
    finally:
        stop.set()
        thread.join(timeout=5)
        os.close(master)
        os.close(slave)


def test_the_bet_spot_reader_is_listened_to_with_its_chips_as_the_registry_knows_them(tmp_path: Path) -> None:
    from controller.game.chips import ChipRange, ChipRegistry, ChipStatus

    registry = ChipRegistry([ChipRange(FIRST_CHIP, FIRST_CHIP + 0xFFF, 500, ChipStatus.IN_PLAY)])
    reader = SpotReader(seed=5, seats=(1, 2, 3), snapshot_every=1.0)
    shoe_master, shoe_slave = os.openpty()  # a shoe that says nothing
    out = io.StringIO()
    try:
        held: list[int] = []
        with simulated_reader(reader, held) as spots:

            def later() -> None:  # chips put down while the selftest listens, one of them no casino's
                time.sleep(0.8)
                reader.place(3, SpotCode.TIE, [0xDEAD000000000001], time.monotonic())

            threading.Thread(target=later, daemon=True).start()
            settings = load_config(write_config(tmp_path, os.ttyname(shoe_slave)))
            code = run_selftest(
                settings,
                out=out,
                err=io.StringIO(),
                as_json=True,
                listen_seconds=2.5,
                buttons=0,
                spots=spots,
                registry=registry,
                pin_factory=make_pin_factory("mock"),
            )
    finally:
        os.close(shoe_master)
        os.close(shoe_slave)
    report = json.loads(out.getvalue())
    assert code == 1 and "shoe: no HELLO within 2.5 s" in report["failed"]
    assert not [line for line in report["failed"] if line.startswith("spots")]
    got = report["spots"]
    assert got["hello"]["serial_number"] == "SIM-SR-0001"
    assert got["hello"]["seats"] == [1, 2, 3]
    assert got["heartbeats"]["count"] >= 1
    assert got["snapshots"] >= 2 and got["snapshots_refused"] == 0
    banker = {"seat": 1, "spot": "banker", "chips": [
        {"uid": f"{uid:016X}", "cents": 500, "status": "in_play"} for uid in (FIRST_CHIP, FIRST_CHIP + 1)
    ]}  # fmt: skip
    tie = {"seat": 3, "spot": "tie", "chips": [{"uid": "DEAD000000000001", "cents": 0, "status": "unknown"}]}
    assert banker in got["reports"]
    assert tie in got["reports"]
    assert held[0] >= 1 and 0 in held  # its HELLO and reports were acknowledged while it was listened to
    no_journal(tmp_path)


def test_the_spot_lines_name_the_chips() -> None:
    listener = SpotsListener(SpotsReport(port="pty", seconds=1.0))
    from firmware_protocol.spots import SpotReport

    assert listener.message(SpotReport(2, SpotCode.PLAYER, (FIRST_CHIP,))) == [
        "SPOT seat 2 player: 1 chip: E004000000001000"
    ]
    assert listener.message(SpotReport(2, SpotCode.PLAYER, ())) == ["SPOT seat 2 player: empty"]


def test_the_card_lines_name_the_position_and_the_card() -> None:
    from firmware_protocol.spots import CardIn, CardOut

    listener = SpotsListener(SpotsReport(port="pty", seconds=1.0))
    assert listener.message(CardIn(4, 0xA1B2C3D4)) == ["CARD IN seat 4: 00000000A1B2C3D4"]
    assert listener.message(CardOut(0, 0x04A1B2C3D4E5F6)) == ["CARD OUT the dealer's position: 0004A1B2C3D4E5F6"]


def test_an_ascii_shoe_shows_its_card_lines_and_the_lines_it_refused() -> None:
    listener = ShoeListener(ShoeReport(port="pty", seconds=1.0, dialect="ascii"))
    assert not listener.answered and listener.silence == "no card line within 1 s"
    lines = listener.receive(b"SQ\r\nh10\r\nhello\r\n", 0.0)
    assert lines[:2] == ["CARD QS", "CARD TH"]
    assert lines[2].startswith("noise: not_a_card: ")
    assert listener.answered and listener.take_output() == b""  # an ASCII shoe is sent nothing
    assert listener.report.noise["reasons"] == {"not_a_card": 1}


def test_a_snapshot_is_one_line_and_an_inconsistent_one_is_named() -> None:
    from firmware_protocol.spots import SnapshotBegin, SnapshotEnd, SpotReport

    listener = SpotsListener(SpotsReport(port="pty", seconds=1.0))
    assert listener.message(SnapshotBegin(7)) == []
    assert listener.message(SpotReport(1, SpotCode.BANKER, (FIRST_CHIP,))) == []
    assert listener.message(SpotReport(2, SpotCode.TIE, ())) == []
    assert listener.message(SnapshotEnd(7, 2)) == ["snapshot 7: 1 spot holds chips: seat 1 banker (1)"]
    assert listener.message(SnapshotEnd(8, 3)) == ["snapshot 8 inconsistent: its end counts 3 spots, no SNAPSHOT_BEGIN"]
    assert (listener.spots.snapshots, listener.spots.snapshots_refused, listener.spots.reports_seen) == (1, 1, 2)


HAS_SPOTS_SECTION = hasattr(Settings(), "spots")  # issue 16's [spots] configuration (port, chips)


@pytest.mark.skipif(not HAS_SPOTS_SECTION, reason="this branch has no [spots] configuration yet")
def test_the_configured_reader_and_its_chip_file_are_used(tmp_path: Path) -> None:
    reader = SpotReader(seed=6, seats=(1, 2, 3), snapshot_every=1.0)
    chips = tmp_path / "chips.toml"
    chips.write_text(f'[[range]]\nfirst = "{FIRST_CHIP:016X}"\nlast = "{FIRST_CHIP + 0xFFF:016X}"\nvalue = "25.00"\n')
    shoe_master, shoe_slave = os.openpty()
    try:
        with simulated_reader(reader, []) as spots:
            config = write_config(tmp_path, os.ttyname(shoe_slave))
            config.write_text(config.read_text() + f'[spots]\nport = "{spots}"\nchips = "{chips}"\n')
            r = run_main(["shoe-controller", "selftest", "--config", str(config), "--json", "--listen", "2"])
    finally:
        os.close(shoe_master)
        os.close(shoe_slave)
    report = json.loads(r.stdout)
    assert report["spots"]["registry"] is True
    assert {"uid": f"{FIRST_CHIP:016X}", "cents": 2500, "status": "in_play"} in report["spots"]["reports"][0]["chips"]


@pytest.mark.skipif(not HAS_SPOTS_SECTION, reason="this branch has no [spots] configuration yet")
def test_a_bad_chip_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    chips = tmp_path / "chips.toml"
    chips.write_text('[[range]]\nfirst = "XYZ"\nvalue = "25.00"\n')
    config = write_config(tmp_path, "/dev/null")
    config.write_text(config.read_text() + f'[spots]\nport = "/dev/null"\nchips = "{chips}"\n')
    r = run_main(["shoe-controller", "selftest", "--config", str(config), "--json"])
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "chips.toml" in r.stderr, r
    assert "Traceback" not in r.stderr
