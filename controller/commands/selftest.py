"""``shoe-controller selftest``: bring-up before a table opens, with the table's service stopped.

A technician sees every part of the table work without dealing a shoe, in this order: the shoe in a
*listen mode* first (its HELLO, heartbeats, each card read, unreadable cards, the cut card, its buttons and
status flags, and the noise: rejected frames with their reasons; first, because a shoe starts sending as soon
as its port opens), then each lamp lit in turn (its name printed), the buzzer sounded once, each button
echoed as it is pressed until every one was seen (or a time limit), and an LCD test pattern (every cell, then
the table's name and the shoe's firmware line).

The listen mode runs the controller's side of the protocol
(:class:`~firmware_protocol.session.ControllerSession`): it ACKs what it receives at once, so that the shoe
does not resend for ever, and its only PROMPT is SHOE_CLOSED, so that a real dealer is never told to deal.
With ``--spots URL`` the bet-spot reader (``docs/spots.md``) is listened to at the same time: its HELLO,
heartbeats, each spot report (seat, spot, the chips' UIDs and, given a chip registry, what it says of each),
snapshots and status flags; it is sent ACKs only. It **journals nothing**: no journal is opened at all.

The devices are opened first, and a device another program holds (the table's service: its GPIO lines, or
the shoe's port, which the table locks) is refused in one line naming it, exit code 2, as is a port that does
not exist or a bad configuration. On a terminal each step says what to look at or press, and Enter skips it;
``--json`` runs every step with its time limit and prints one JSON report, exit code 0 when every part that
is configured answered, 1 otherwise (each part that did not is named on stderr and in ``failed``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import json
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, TextIO

from controller.commands import Subparsers, UsageError
from controller.config import DEFAULT_PATH, LcdSection, Settings
from controller.game.chips import ChipRegistry
from controller.game.table import Alarm, Lamp
from controller.table.panel import ButtonAction, Panel, PanelError, PinFactory, PinMap, make_pin_factory
from controller.userfile import one_line

__all__ = ["LcdOpener", "Listener", "ShoeListener", "SpotsListener", "run_selftest"]

#: How long each lamp stays lit (the docs say "about a second").
LAMP_SECONDS = 1.0
#: The same with ``--json``, where nobody need read a name.
JSON_LAMP_SECONDS = 0.5
#: How long the LCD shows each of its two frames.
LCD_SECONDS = 1.5
#: Default time limits (seconds) for the buttons and the shoe's listen mode, on a terminal and with --json.
BUTTONS_SECONDS = (60.0, 10.0)
LISTEN_SECONDS = (60.0, 10.0)
#: Cards and rejected frames the report keeps (counted beyond): an eight-deck shoe holds 416 cards.
MAX_CARDS_KEPT = 1024
MAX_NOISE_KEPT = 32
#: The bet-spot reader's line speed (docs/spots.md: 115200 baud, MUST).
SPOTS_BAUD = 115200
#: The unit that holds the devices while the table is open.
SERVICE = "shoe-controller"
STOP_HINT = f"is the table's service running? stop it first: sudo systemctl stop {SERVICE}"

#: The buttons' names as the dealer reads them on the panel.
BUTTON_NAMES = {ButtonAction.DECLARE: "DECLARE", ButtonAction.NEW_SHOE: "NEW SHOE", ButtonAction.VOID: "VOID"}


class Output(Protocol):
    """Where the selftest prints (a terminal, or a test's recorder)."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


#: Opens the LCD the settings describe (RPLCD's ``CharLCD`` or a test double); raises when it cannot.
LcdOpener = Callable[[LcdSection], Any]


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "selftest",
        help="bring-up: lamps, buzzer, buttons, LCD and the shoe in listen mode (service stopped)",
        description="Bring-up before a table opens, with the table's service stopped: the shoe (and the bet-spot"
        " reader) in listen mode, each lamp in turn, the buzzer, each button echoed, the LCD's test pattern;"
        " nothing is journaled.",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help=f"configuration file (default {DEFAULT_PATH} if it exists, else built-in defaults)",
    )
    p.add_argument("--port", metavar="URL", help="the shoe's port: device path or pyserial URL (socket://h:p)")
    p.add_argument("--dialect", choices=("binary", "ascii"), help="the shoe's protocol")
    p.add_argument(
        "--spots",
        metavar="URL",
        help="the bet-spot reader's port, device path or pyserial URL: listened to with the shoe (default: none)",
    )
    p.add_argument("--pin-factory", choices=("lgpio", "rpigpio", "native", "mock"), help="GPIO backend")
    p.add_argument("--json", action="store_true", help="non-interactive: every step with its time limit, one report")
    p.add_argument(
        "--listen",
        type=_seconds,
        metavar="SECONDS",
        help=f"how long to listen to the shoe (default {LISTEN_SECONDS[0]:g} on a terminal, {LISTEN_SECONDS[1]:g}"
        " with --json)",
    )
    p.add_argument(
        "--buttons",
        type=_seconds,
        metavar="SECONDS",
        help=f"how long to wait for every button (default {BUTTONS_SECONDS[0]:g} on a terminal,"
        f" {BUTTONS_SECONDS[1]:g} with --json)",
    )
    p.set_defaults(handler=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be 0-3600 seconds, got {text}")
    return value


def run(args: argparse.Namespace) -> int:
    from controller.commands.run import settings_from_args

    settings = settings_from_args(args, journal=False)  # a bad file or option: one line, exit 2
    spots, registry, spots_baud = reader_settings(settings, args.spots)
    interactive = not args.json and sys.stdin.isatty()
    mode = 1 if args.json else 0
    return run_selftest(
        settings,
        out=sys.stdout,
        err=sys.stderr,
        as_json=args.json,
        stdin=sys.stdin if interactive else None,
        listen_seconds=args.listen if args.listen is not None else LISTEN_SECONDS[mode],
        buttons=args.buttons if args.buttons is not None else BUTTONS_SECONDS[mode],
        spots=spots,
        registry=registry,
        spots_baud=spots_baud,
    )


def reader_settings(settings: Settings, url: str | None) -> tuple[str | None, ChipRegistry | None, int]:
    """The bet-spot reader's port (``--spots``, else ``[spots] port``), its chip registry (``[spots] chips``,
    read by ``controller.chipfile``) and its speed. A configuration without a ``[spots]`` section (issue 16's)
    has a reader only when ``--spots`` names one, and no registry: its UIDs are shown as they come."""
    section = getattr(settings, "spots", None)
    port = url if url is not None else getattr(section, "port", None)
    chips = getattr(section, "chips", None)
    baud = int(getattr(section, "baud", SPOTS_BAUD))
    if port is None or chips is None:
        return port, None, baud
    load_chips = importlib.import_module("controller.chipfile").load_chips
    registry: ChipRegistry = load_chips(chips)  # a bad file: a ChipFileError (a ValueError): one line, exit 2
    return port, registry, baud


# ---------------------------------------------------------------------------------------------------------
# Pacing: time limits, and Enter to skip on a terminal


class Pace:
    """Waits for a step's time limit, a condition, or (on a terminal) Enter, which skips the step."""

    def __init__(self, stdin: TextIO | None) -> None:
        self.stdin = stdin

    def wait(self, seconds: float, done: Callable[[], bool] = lambda: False) -> str:
        """``"done"`` when ``done()`` became true, ``"skipped"`` on Enter, ``"timeout"`` after ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            if done():
                return "done"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            if self.enter(min(left, 0.05)):
                return "skipped"

    def enter(self, timeout: float) -> bool:
        """Whether Enter was pressed within ``timeout`` seconds (always False off a terminal)."""
        if self.stdin is None:
            time.sleep(timeout)
            return False
        ready, _, _ = select.select([self.stdin], [], [], timeout)
        if ready:
            self.stdin.readline()
            return True
        return False


# ---------------------------------------------------------------------------------------------------------
# The shoe and the bet-spot reader in listen mode


@dataclass
class DeviceReport:
    """What a device (the shoe, the bet-spot reader) said while it was listened to."""

    port: str
    seconds: float
    hello: dict[str, Any] | None = None
    heartbeats: dict[str, Any] = field(default_factory=lambda: {"count": 0, "last_gap_s": None, "max_gap_s": None})
    status: list[list[str]] = field(default_factory=list)
    duplicates: int = 0
    noise: dict[str, Any] = field(default_factory=lambda: {"rejected": 0, "reasons": {}, "examples": []})
    link: str | None = None  # the port was lost: why
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ShoeReport(DeviceReport):
    """What the shoe said: its HELLO, heartbeats, cards, buttons, status flags and noise."""

    dialect: str = "binary"
    cards: list[str] = field(default_factory=list)
    cards_read: int = 0
    unreadable: int = 0
    cut_card: int = 0
    buttons: list[str] = field(default_factory=list)


@dataclass
class SpotsReport(DeviceReport):
    """What the bet-spot reader said: its HELLO, heartbeats, each spot report (with the chips as the
    registry knows them, when there is one), the snapshots, status flags and noise."""

    registry: bool = False
    reports: list[dict[str, Any]] = field(default_factory=list)
    reports_seen: int = 0
    snapshots: int = 0
    snapshots_refused: int = 0


class Listener:
    """The controller's side of a device's binary protocol with nothing behind it: each event is printed,
    counted and acknowledged at once (nothing is journaled). No I/O here: bytes in, printable lines out, the
    bytes to write back from :meth:`take_output`. Subclasses say what each of the device's messages means."""

    name = "device"

    def __init__(self, report: DeviceReport, *, dialect: Any = None, link_timeout: float = 3.0) -> None:
        from firmware_protocol.session import ControllerSession

        self.report = report
        self.session = ControllerSession(link_timeout=link_timeout, dialect=dialect)
        self._out: list[bytes] = []
        self._last_heartbeat: float | None = None

    @property
    def answered(self) -> bool:
        return self.report.hello is not None

    @property
    def silence(self) -> str:
        return f"no HELLO within {self.report.seconds:g} s"

    def take_output(self) -> bytes:
        out, self._out = self._out, []
        return b"".join(out)

    def receive(self, data: bytes, now: float) -> list[str]:
        from firmware_protocol.binary import FrameRejected
        from firmware_protocol.session import (
            DuplicateDropped,
            GapDetected,
            HeartbeatSeen,
            LinkUp,
            SessionJoined,
            ShoeEvent,
            ShoeRebooted,
        )

        lines: list[str] = []
        ack: tuple[int, int] | None = None
        hello = False
        for ev in self.session.receive(data, now):
            if isinstance(ev, ShoeEvent):
                lines += self.message(ev.message)
                ack = (ev.number, ev.key)
                hello = hello or type(ev.message) is self.session.dialect.hello
            elif isinstance(ev, HeartbeatSeen):
                lines.append(self._heartbeat(ev.latest_seq, now))
            elif isinstance(ev, FrameRejected):
                lines.append(self.noise(ev.reason.value, ev.detail, ev.raw))
            elif isinstance(ev, DuplicateDropped):
                self.report.duplicates += 1
            elif isinstance(ev, GapDetected):
                lines.append(f"gap: expected seq {ev.expected_seq}, got {ev.got_seq} (RESEND sent)")
            elif isinstance(ev, ShoeRebooted) and ev.old_session is not None:
                lines.append(f"{self.name} rebooted: session {ev.old_session} replaced by {ev.new_session}")
            elif isinstance(ev, SessionJoined):
                lines.append(f"joined {self.name} session {ev.session_id} at event {ev.first_number}")
            elif isinstance(ev, LinkUp):
                lines.append(f"link up: {self.name} session {ev.session_id}")
        if ack is not None:
            # Nothing to commit: acknowledged at once, so that the device does not resend for ever.
            self._out.append(self.session.acknowledge(*ack))
            if hello:
                self._out.append(self.after_hello())
        return lines

    def poll(self, now: float) -> list[str]:
        from firmware_protocol.session import LinkDown

        events, data = self.session.poll(now)
        if data:
            self._out.append(data)
        return [f"link down: no frame for {ev.silent_for:.1f} s" for ev in events if isinstance(ev, LinkDown)]

    def message(self, message: Any) -> list[str]:
        raise NotImplementedError

    def after_hello(self) -> bytes:
        """What to send the device once its HELLO is acknowledged (nothing by default)."""
        return b""

    def hello_line(self, hello: Any) -> str:
        self.report.hello = {
            "firmware_version": hello.firmware_version,
            "serial_number": hello.serial_number,
            "protocol_version": hello.protocol_version,
            "session_id": hello.session_id,
        }
        return (
            f"HELLO firmware {hello.firmware_version!r} serial {hello.serial_number!r}"
            f" protocol {hello.protocol_version} session {hello.session_id}"
        )

    def status_line(self, names: list[str]) -> str:
        if len(self.report.status) < MAX_NOISE_KEPT:
            self.report.status.append(names)
        return f"STATUS {', '.join(names) or 'clear'}"

    def _heartbeat(self, latest_seq: int, now: float) -> str:
        beats = self.report.heartbeats
        beats["count"] += 1
        text = f"heartbeat {beats['count']} (latest seq {latest_seq})"
        if self._last_heartbeat is not None:
            gap = round(now - self._last_heartbeat, 3)
            beats["last_gap_s"] = gap
            beats["max_gap_s"] = max(gap, beats["max_gap_s"] or 0.0)
            text += f", {gap:.2f} s after the last"
        self._last_heartbeat = now
        return text

    def noise(self, reason: str, detail: str, raw: bytes) -> str:
        noise = self.report.noise
        noise["rejected"] += 1
        noise["reasons"][reason] = noise["reasons"].get(reason, 0) + 1
        if len(noise["examples"]) < MAX_NOISE_KEPT:
            noise["examples"].append({"reason": reason, "detail": detail, "raw": raw[:32].hex()})
        return f"noise: {reason}: {detail}"


class ShoeListener(Listener):
    """The shoe: its only PROMPT is SHOE_CLOSED, so that a real dealer is never told to deal. The ASCII
    dialect has no HELLO, heartbeat or acknowledgement: its card lines (and rejected lines) are shown."""

    name = "shoe"

    def __init__(self, report: ShoeReport, *, link_timeout: float = 3.0) -> None:
        from firmware_protocol.ascii import AsciiDecoder

        super().__init__(report, link_timeout=link_timeout)
        self.shoe = report
        self.binary = report.dialect == "binary"
        self.ascii = AsciiDecoder()
        self.lines_seen = 0  # ASCII: valid card lines

    @property
    def answered(self) -> bool:
        return super().answered if self.binary else self.lines_seen > 0

    @property
    def silence(self) -> str:
        return super().silence if self.binary else f"no card line within {self.report.seconds:g} s"

    def receive(self, data: bytes, now: float) -> list[str]:
        return super().receive(data, now) if self.binary else self._ascii(data)

    def poll(self, now: float) -> list[str]:
        return super().poll(now) if self.binary else []

    def after_hello(self) -> bytes:
        from firmware_protocol import messages as m

        return self.session.prompt(m.Due.SHOE_CLOSED)

    def message(self, message: Any) -> list[str]:
        from firmware_protocol import messages as m

        r = self.shoe
        if isinstance(message, m.Hello):
            return [self.hello_line(message)]
        if isinstance(message, m.CardRead):
            return [self._card(message.token)]
        if isinstance(message, m.Unreadable):
            r.unreadable += 1
            return ["UNREADABLE card"]
        if isinstance(message, m.CutCard):
            r.cut_card += 1
            return ["CUT CARD out"]
        if isinstance(message, m.ButtonPressed):
            name = message.button.name
            if len(r.buttons) < MAX_CARDS_KEPT:
                r.buttons.append(name)
            return [f"shoe button {name}"]
        if isinstance(message, m.Status):
            return [self.status_line([f.name.lower() for f in m.StatusFlags if f and f in message.flags and f.name])]
        return [f"message {type(message).__name__}"]

    def _card(self, token: str) -> str:
        r = self.shoe
        r.cards_read += 1
        if len(r.cards) < MAX_CARDS_KEPT:
            r.cards.append(token)
        return f"CARD {token}"

    def _ascii(self, data: bytes) -> list[str]:
        from firmware_protocol.ascii import AsciiCard, LineRejected

        lines: list[str] = []
        for ev in self.ascii.feed(data):
            if isinstance(ev, AsciiCard):
                self.lines_seen += 1
                lines.append(self._card(ev.card.token))
            elif isinstance(ev, LineRejected):
                lines.append(self.noise(ev.reason.value, ev.detail, ev.raw))
        return lines


#: Spots a snapshot's line names before it says "and N more".
SNAPSHOT_NAMED = 8


class SpotsListener(Listener):
    """The bet-spot reader: its HELLO, each spot report with the chips' UIDs and, when a registry is given
    (``[spots] chips``), what the registry says of each; a snapshot as one line. It is sent nothing but ACKs
    (no betting window: the table is not open)."""

    name = "reader"

    def __init__(self, report: SpotsReport, registry: Any = None, *, link_timeout: float = 3.0) -> None:
        from firmware_protocol.spots import READER

        super().__init__(report, dialect=READER, link_timeout=link_timeout)
        self.spots = report
        self.registry = registry
        report.registry = registry is not None
        self._snapshot: list[dict[str, Any]] | None = None  # the open snapshot's reports (the first ones)
        self._in_snapshot = 0  # how many it had

    def message(self, message: Any) -> list[str]:
        from controller.table.spot_wire import SPOT_OF_CODE
        from firmware_protocol.spots import (
            DEALER_POSITION,
            CardIn,
            CardOut,
            ReaderFlags,
            ReaderHello,
            ReaderStatus,
            SnapshotBegin,
            SnapshotEnd,
            SpotReport,
        )

        if isinstance(message, ReaderHello):
            line = self.hello_line(message)
            assert self.report.hello is not None
            self.report.hello["seats"] = list(message.seats)
            self.report.hello["spots"] = [SPOT_OF_CODE[c].value for c in message.spots]
            return [f"{line}, seats {', '.join(map(str, message.seats))}, {len(message.spots)} spots a seat"]
        if isinstance(message, SpotReport):
            entry = self._spot(message)
            if self._snapshot is not None:
                self._in_snapshot += 1
                if len(self._snapshot) < MAX_CARDS_KEPT:  # bounded: a reader that never ends its snapshot
                    self._snapshot.append(entry)
                return []
            return [self._spot_line(entry)]
        if isinstance(message, SnapshotBegin):
            self._snapshot, self._in_snapshot = [], 0
            return []
        if isinstance(message, SnapshotEnd):
            held, self._snapshot = self._snapshot, None
            return [self._snapshot_line(message.snapshot, message.spots, held)]
        if isinstance(message, ReaderStatus):
            return [self.status_line([f.name.lower() for f in ReaderFlags if f and f in message.flags and f.name])]
        if isinstance(message, CardIn | CardOut):
            from controller.game.chips import format_uid

            where = "the dealer's position" if message.position == DEALER_POSITION else f"seat {message.position}"
            return [f"CARD {'IN' if isinstance(message, CardIn) else 'OUT'} {where}: {format_uid(message.uid)}"]
        return [f"message {type(message).__name__}"]

    def _spot(self, report: Any) -> dict[str, Any]:
        from controller.game.chips import format_uid
        from controller.table.spot_wire import SPOT_OF_CODE

        entry: dict[str, Any] = {"seat": report.seat, "spot": SPOT_OF_CODE[report.spot].value}
        if self.registry is not None:
            entry["chips"] = [chip.to_dict() for chip in self.registry.resolve_all(report.uids).chips]
        else:
            entry["uids"] = [format_uid(uid) for uid in report.uids]
        self.spots.reports_seen += 1
        if len(self.spots.reports) < MAX_CARDS_KEPT:
            self.spots.reports.append(entry)
        return entry

    @staticmethod
    def _spot_line(entry: dict[str, Any]) -> str:
        from controller.config import format_cents

        where = f"seat {entry['seat']} {entry['spot']}"
        if "chips" in entry:
            chips = [f"{c['uid']} {format_cents(c['cents'])} {c['status']}" for c in entry["chips"]]
        else:
            chips = list(entry["uids"])
        if not chips:
            return f"SPOT {where}: empty"
        return f"SPOT {where}: {len(chips)} chip{'s' if len(chips) > 1 else ''}: {', '.join(chips)}"

    def _snapshot_line(self, number: int, counted: int, held: list[dict[str, Any]] | None) -> str:
        if held is None or self._in_snapshot != counted:
            self.spots.snapshots_refused += 1
            got = "no SNAPSHOT_BEGIN" if held is None else f"{self._in_snapshot} reports"
            return f"snapshot {number} inconsistent: its end counts {counted} spots, {got}"
        self.spots.snapshots += 1
        occupied = [e for e in held if e.get("chips", e.get("uids"))]
        named = [f"seat {e['seat']} {e['spot']} ({len(e.get('chips', e.get('uids', [])))})" for e in occupied]
        more = f" and {len(named) - SNAPSHOT_NAMED} more" if len(named) > SNAPSHOT_NAMED else ""
        listed = ", ".join(named[:SNAPSHOT_NAMED]) + more
        holds = "1 spot holds" if len(occupied) == 1 else f"{len(occupied)} spots hold"
        return f"snapshot {number}: {holds} chips" + (f": {listed}" if listed else "")


def open_device_port(what: str, url: str, baud: int) -> Any:
    """A device's port, opened as the table opens it (a device path exclusively); a missing or busy port is a
    one-line :class:`UsageError` (a busy one names the table's service)."""
    import serial

    from controller.table.shoe_link import open_port

    try:
        return open_port(url, baud, timeout=0.05)
    except (serial.SerialException, OSError, ValueError) as exc:
        text = one_line(str(exc)) or type(exc).__name__
        if "exclusively lock" in text or getattr(exc, "errno", None) in (errno.EBUSY, errno.EAGAIN):
            raise UsageError(f"shoe-controller: selftest: {what} {url} is busy; {STOP_HINT}") from None
        raise UsageError(f"shoe-controller: selftest: cannot open {what} {url}: {text}") from None


@dataclass
class Listening:
    """One device being listened to: its open port, its listener, and the label its lines carry."""

    port: Any
    listener: Listener
    label: str
    fd: int | None = None
    done: bool = False


def listen(devices: list[Listening], seconds: float, pace: Pace, say: Callable[[str], None]) -> None:
    """Read every device for ``seconds`` (Enter ends it early on a terminal), printing what each says."""
    from controller.table.shoe_link import port_fileno

    for d in devices:
        d.fd = port_fileno(d.port)
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0 and not all(d.done for d in devices):
        watched: list[Any] = [d.fd for d in devices if d.fd is not None and not d.done]
        if pace.stdin is not None:
            watched.append(pace.stdin)
        ready = select.select(watched, [], [], min(left, 0.05))[0] if watched else []
        if not watched:
            time.sleep(min(left, 0.05))
        if pace.stdin is not None and pace.stdin in ready:
            pace.stdin.readline()
            say("  (ended)")
            return
        for d in devices:
            if not d.done:
                _listen_once(d, d.fd in ready, say)


def _listen_once(d: Listening, readable: bool, say: Callable[[str], None]) -> None:
    report = d.listener.report
    data = b""
    try:
        if d.fd is None:
            data = d.port.read(max(1, d.port.in_waiting))
        elif readable:
            data = os.read(d.fd, 4096)
            if not data:
                raise OSError("end of file (the device hung up)")
    except BlockingIOError:
        data = b""
    except OSError as exc:
        report.link = f"port lost: {one_line(str(exc))}"
        say(f"  {d.label}: {report.link}")
        d.done = True
        return
    now = time.monotonic()
    lines = d.listener.receive(data, now) if data else []
    lines += d.listener.poll(now)
    for line in lines:
        say(f"  {d.label}: {line}")
    out = d.listener.take_output()
    if out:
        try:
            d.port.write(out)
        except OSError as exc:
            report.link = f"write failed: {one_line(str(exc))}"
            say(f"  {d.label}: {report.link}")
            d.done = True


# ---------------------------------------------------------------------------------------------------------
# The LCD


def _rom_safe(text: str, cols: int) -> str:
    """``text`` in what every HD44780 ROM draws (ASCII but the backslash), cut or padded to ``cols``."""
    safe = "".join(ch if " " <= ch < "~" and ch != "\\" else "?" for ch in text)
    return safe[:cols].ljust(cols)


def lcd_frames(settings: Settings, hello: dict[str, Any] | None) -> list[list[str]]:
    """The LCD's test pattern: every cell (``#``), then the table's name and the shoe's firmware line."""
    s = settings.lcd
    every = ["#" * s.cols] * s.rows
    if hello is None:
        firmware, serial_line = "SHOE: NO HELLO", ""
    else:
        firmware, serial_line = f"FW {hello['firmware_version']}", f"SN {hello['serial_number']}"
    named = [settings.table.name, firmware, serial_line, "SELFTEST"][: s.rows]
    return [[_rom_safe(line, s.cols) for line in every], [_rom_safe(line, s.cols) for line in named]]


def lcd_test(
    settings: Settings,
    opener: LcdOpener,
    hello: dict[str, Any] | None,
    pace: Pace,
    say: Callable[[str], None],
    *,
    hold: float = LCD_SECONDS,
) -> dict[str, Any]:
    """Draw the test pattern; ``{"state": "ok"}``, ``absent`` (not configured) or ``error`` with the reason."""
    from controller.table.lcd import fault_reason  # the LCD sink's own words for a fault

    s = settings.lcd
    if not s.enabled:
        say("LCD: not configured ([lcd] enabled = false): skipped")
        return {"state": "absent"}
    try:
        lcd = opener(s)
    except Exception as exc:  # any driver or bus trouble: reported, not raised
        reason = fault_reason(exc, s)
        say(f"LCD: cannot open: {reason}")
        return {"state": "error", "stage": "open", "reason": reason}
    stage = "write"
    try:
        lcd.clear()
        for i, frame in enumerate(lcd_frames(settings, hello)):
            for row, text in enumerate(frame):
                lcd.cursor_pos = (row, 0)
                lcd.write_string(text)
            say(
                "LCD: every cell should show '#' (Enter: next)"
                if i == 0
                else "LCD: the table's name, then the shoe's firmware line (Enter: next)"
            )
            pace.wait(hold)
        stage = "close"
        lcd.clear()
        lcd.close(clear=False)
    except Exception as exc:
        reason = fault_reason(exc, s)
        say(f"LCD: {stage} failed: {reason}")
        return {"state": "error", "stage": stage, "reason": reason}
    return {"state": "ok", "cols": s.cols, "rows": s.rows, "address": f"0x{s.i2c_address:02x}"}


# ---------------------------------------------------------------------------------------------------------
# The panel


@contextlib.contextmanager
def open_panel(
    settings: Settings, factory: PinFactory | None, on_button: Callable[[ButtonAction], None]
) -> Iterator[Panel]:
    """The panel on its pins; a pin another program holds (the table's service) is one line with the hint."""
    g = settings.gpio
    try:
        pin_factory = factory if factory is not None else make_pin_factory(g.pin_factory)
        panel = Panel(
            PinMap(**g.pins.as_dict()),
            pin_factory,
            on_button,
            void_hold_seconds=g.void_hold_seconds,
            bounce_seconds=g.bounce_seconds,
            active_high=g.active_high,
        )
    except PanelError as exc:
        text = one_line(str(exc))
        hint = f"; {STOP_HINT}" if exc.pin is not None else ""
        raise UsageError(f"shoe-controller: selftest: {text}{hint}") from None
    try:
        yield panel
    finally:
        panel.close()


class ButtonsSeen:
    """The buttons pressed so far (gpiozero's threads add, the step reads)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._lock = threading.Lock()
        self.seen: list[ButtonAction] = []

    def __call__(self, action: ButtonAction) -> None:
        verb = "held" if action is ButtonAction.VOID else "pressed"
        self._say(f"  {BUTTON_NAMES[action]} {verb}")
        with self._lock:
            if action not in self.seen:
                self.seen.append(action)

    def all_seen(self) -> bool:
        with self._lock:
            return len(self.seen) == len(ButtonAction)


# ---------------------------------------------------------------------------------------------------------
# The whole test


def run_selftest(
    settings: Settings,
    *,
    out: Output,
    err: Output,
    as_json: bool = False,
    stdin: TextIO | None = None,
    listen_seconds: float = LISTEN_SECONDS[1],
    buttons: float = BUTTONS_SECONDS[1],
    spots: str | None = None,
    registry: ChipRegistry | None = None,
    spots_baud: int = SPOTS_BAUD,
    pin_factory: PinFactory | None = None,
    lcd_opener: LcdOpener | None = None,
) -> int:
    """Every step in order; returns the exit code (0: every configured part answered, 1: not). Devices that
    cannot be opened raise :class:`UsageError` before any step runs. ``spots`` is the bet-spot reader's port
    (None: no reader), ``registry`` the chip registry its UIDs are looked up in (None: UIDs only);
    ``pin_factory`` and ``lcd_opener`` replace the configured ones (tests)."""
    lock = threading.Lock()

    def say(text: str) -> None:
        if as_json:
            return
        with lock:
            print(text, file=out, flush=True)

    pace = Pace(stdin)
    g = settings.gpio
    pins = PinMap(**g.pins.as_dict())
    seen = ButtonsSeen(say)
    report: dict[str, Any] = {"table": settings.table.name}
    failed: list[str] = []
    say(f"selftest of {settings.table.name!r}: the table's service must be stopped (sudo systemctl stop {SERVICE})")
    with contextlib.ExitStack() as stack:
        panel = stack.enter_context(open_panel(settings, pin_factory, seen))
        s = settings.shoe
        shoe = ShoeReport(port=s.port, dialect=s.dialect, seconds=listen_seconds)
        devices = [
            Listening(
                open_device_port("the shoe's port", s.port, s.baud),
                ShoeListener(shoe, link_timeout=s.link_timeout),
                "shoe",
            )
        ]
        stack.callback(devices[0].port.close)
        reader: SpotsReport | None = None
        if spots is not None:
            reader = SpotsReport(port=spots, seconds=listen_seconds)
            port = open_device_port("the bet-spot reader's port", spots, spots_baud)
            stack.callback(port.close)
            devices.append(Listening(port, SpotsListener(reader, registry), "spots"))
        if stdin is not None:
            say("Each step says what to look at or press; Enter skips it.")

        # 1. the shoe (and the reader), listened to first: a device starts sending as soon as its port opens
        what = f"Shoe on {s.port} ({s.dialect})" + (f" and the bet-spot reader on {spots}" if spots else "")
        hint = "deal or pass cards past the reader" + (", put chips on the spots" if spots else "")
        say(f"{what}: listening {listen_seconds:g} s; {hint} (Enter: end)")
        listen(devices, listen_seconds, pace, say)
        for d in devices:
            if not d.listener.answered:
                d.listener.report.problem = d.listener.silence
                failed.append(f"{d.label}: {d.listener.silence}")
                say(f"  {d.label}: {d.listener.silence}")
        report["shoe"] = shoe.to_dict()
        report["spots"] = reader.to_dict() if reader is not None else None

        # 2. the lamps, one at a time
        say("Lamps: each lights for about a second, its name first (Enter: skip)")
        lamp_seconds = JSON_LAMP_SECONDS if as_json else LAMP_SECONDS
        shown: list[dict[str, Any]] = []
        for lamp in Lamp:
            say(f"  {lamp.name.replace('_', ' ')} (GPIO {pins.lamp_pin(lamp)})")
            panel.show(frozenset({lamp}), ())
            shown.append({"lamp": lamp.value, "gpio": pins.lamp_pin(lamp)})
            if pace.wait(lamp_seconds) == "skipped":
                break
        panel.off()
        report["lamps"] = {"lit": shown, "all": len(shown) == len(Lamp)}

        # 3. the buzzer, once
        say(f"Buzzer: one short beep (GPIO {pins.buzzer})")
        panel.sound(Alarm.NOTHING_TO_DECLARE)
        pace.wait(0.5)
        panel.off()
        report["buzzer"] = {"gpio": pins.buzzer, "sounded": True}

        # 4. the buttons, echoed as they are pressed (VOID acts when held, as at the table)
        hold = f"hold VOID {g.void_hold_seconds:g} s"
        say(f"Buttons: press DECLARE and NEW SHOE, {hold} (Enter: skip; {buttons:g} s at most)")
        outcome = pace.wait(buttons, seen.all_seen)
        names = [BUTTON_NAMES[a] for a in ButtonAction]
        seen_names = [BUTTON_NAMES[a] for a in ButtonAction if a in seen.seen]
        missing = [n for n in names if n not in seen_names]
        report["buttons"] = {"seen": seen_names, "not_seen": missing}
        if missing:
            why = "(skipped)" if outcome == "skipped" else f"within {buttons:g} s"
            failed.append(f"buttons: not seen {why}: {', '.join(missing)}")
            say(f"  not seen: {', '.join(missing)}")
        else:
            say("  every button seen")

        # 5. the LCD: every cell, then the table's name and the shoe's firmware line
        from controller.table.lcd import open_rplcd

        report["lcd"] = lcd_test(settings, lcd_opener or open_rplcd, shoe.hello, pace, say)
        if report["lcd"]["state"] == "error":
            failed.append(f"lcd: {report['lcd']['reason']}")

    report["ok"] = not failed
    report["failed"] = failed
    if as_json:
        print(json.dumps(report, indent=2), file=out, flush=True)
    else:
        say("selftest: every part answered" if not failed else "selftest: not every part answered")
    for line in failed:
        print(f"selftest: {line}", file=err)
    return 0 if not failed else 1
