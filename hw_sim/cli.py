"""The ``shoe-sim`` command: the software shoe on a pty or a TCP port, in real time.

    shoe-sim (--link PATH | --tcp HOST:PORT) [--dialect binary|ascii] [--decks N] [--seed N] [--shoes N]
             [--pace real|fast|SECONDS] [--fault NAME=RATE ...] [--script FILE] [--truth FILE]
             [--dealer prompt|self] [--cut-card K] [--disconnect-for SECONDS] [--linger SECONDS]
             [--settle SECONDS] [--no-extra-coup] [--order FILE]
             [--players N [--uncarded K] | --bets FILE] [--rules NAME] [--commission payout|shoe_end] [--tie-pays 8|9]
             [--side-bets NAMES] [--unit D] [--minimum D] [--maximum D] [--seats N] [--leave-after N]
             [--chips-out FILE] [--spots-link PATH | --spots-tcp HOST:PORT] [--buy-ins PATH]
             [--dealer-swap K [--staff-out FILE]]
             [--tray-link PATH | --tray-tcp HOST:PORT] [--float FILE] [--tray-still SECONDS]
    shoe-sim --chips-out FILE        (write the chip registry and exit)

Prints one line saying where it listens, then runs until every shoe is dealt (and, in the binary
dialect, acknowledged) or it is interrupted: SIGINT or SIGTERM exit 0 after removing the symlink. Bad
arguments exit 2 with one line naming the problem. Time comes only from ``time.monotonic``; the shoe
itself is :class:`hw_sim.core.ShoeSimulator`, which this module only feeds with bytes and the time.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import re
import select
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import IO, NoReturn, cast

from commandline import UsageError
from controller.game.cards import Card
from controller.game.chips import format_uid
from controller.game.errors import CardError
from controller.game.rules import (
    BUILTIN_RULESETS,
    DEFAULT_RULESET,
    SIDE_BET_NAMES,
    SIDE_BETS,
    Bet,
    CommissionCollection,
    wagers_named,
)
from controller.game.settlement import TableLimits
from controller.game.wagers import MAX_SEATS
from controller.userfile import UserFileError, check_regular, one_line, read_text
from floor_protocol.addresses import AddressError, parse_host_port
from hw_sim.buy_in_line import BuyInLine
from hw_sim.chipset import ChipSet
from hw_sim.core import ConfigError, DealerMode, Dialect, ShoeSimulator, SimConfig
from hw_sim.dealer import PromptDealer
from hw_sim.faults import Fault, FaultPlan, FaultSpecError, ScriptedFault, parse_rate, parse_script
from hw_sim.money import MoneyConfig, MoneyConfigError, SplitCash, approvers, key_line, staff
from hw_sim.players import BetsError, Counting, parse_amount, parse_bets
from hw_sim.reader_feed import ReaderFeed
from hw_sim.shoe import DEFAULT_CUT_FROM_BACK, MAX_DECKS, MIN_DECKS, OrderError, check_order, shoe_size
from hw_sim.spot_reader import SpotReader
from hw_sim.transport import PtyTransport, TcpTransport, TransportError
from hw_sim.tray import DEFAULT_STILL, MAX_FLOAT_BYTES, FloatError, TrayConfig, parse_float
from hw_sim.tray_device import TrayDevice, TrayFeed
from hw_sim.truth import TruthLog

PROG = "shoe-sim"
#: Pause between the chunks of a frame cut by a ``split`` fault.
CHUNK_GAP = 0.002
#: Longest sleep of the main loop, so that a controller plugging in is noticed quickly.
TICK = 0.05
#: After the last shoe, the bet-spot reader's last reports wait this long at most for their ACKs.
READER_LINGER = 2.0
#: ``--key-cards``: how long the dealer waits for the table to offer KEY CARD before voiding the coup instead.
KEY_WAIT = 10.0
#: Largest ``--script`` read (a script is a few lines; a larger file is refused rather than read whole).
MAX_SCRIPT_BYTES = 1024 * 1024


class _Parser(argparse.ArgumentParser):
    """Errors are the bare message: :func:`main` prints ``shoe-sim: error: <message>``."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _pace(text: str) -> float:
    if text == "real":
        return 1.0
    if text == "fast":
        return 0.0
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not real, fast or a number of seconds") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds per card cannot be negative")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: seconds per card must be a finite number")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} cannot be negative")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds")
    return value


def _dollars(text: str) -> int:
    """``"25.00"`` (or ``"25"``) -> 2500 cents."""
    try:
        return parse_amount(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _tcp(text: str) -> tuple[str, int]:
    try:
        return parse_host_port(text, any_port=True)
    except AddressError as exc:
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not HOST:PORT: {exc}") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="The software card-reading shoe, for the controller and its tests.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--link", type=Path, help="make a pty and symlink its slave here (e.g. /tmp/shoe0)")
    where.add_argument("--tcp", type=_tcp, metavar="HOST:PORT", help="listen here (port 0: any free port)")
    p.add_argument("--dialect", choices=[d.value for d in Dialect], default=Dialect.BINARY.value)
    p.add_argument("--decks", type=int, default=8, help="decks in the shoe, 1-8 (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffle, session ids and faults")
    p.add_argument("--shoes", type=int, default=1, help="shoes to deal before exiting (default 1)")
    p.add_argument("--pace", type=_pace, default=1.0, help="real (1 card/s), fast, or SECONDS per card")
    p.add_argument("--dealer", choices=[m.value for m in DealerMode], help="prompt (binary default) or self")
    p.add_argument("--cut-card", type=int, default=DEFAULT_CUT_FROM_BACK, metavar="K", help="cards behind it")
    p.add_argument("--no-extra-coup", action="store_true", help="end the shoe with the cut card's coup")
    p.add_argument("--fault", action="append", default=[], metavar="NAME=RATE", help="inject a fault by rate")
    p.add_argument("--script", type=Path, help="JSON Lines of scripted faults ({'at_card': 17, 'fault': ...})")
    p.add_argument("--truth", type=Path, help="write the record of truth here (JSON Lines)")
    p.add_argument("--order", type=Path, metavar="FILE", help="deal every shoe's first cards in this order")
    p.add_argument("--disconnect-for", type=_seconds, default=4.0, metavar="SECONDS")
    p.add_argument("--linger", type=_seconds, metavar="SECONDS", help="after the last shoe (see docs)")
    p.add_argument(
        "--repeat-session-id",
        action="store_true",
        help="draw the same session id at every boot (a firmware with a fixed random seed; breaks the spec)",
    )
    p.add_argument("--settle", type=_seconds, default=0.3, metavar="SECONDS", help="wait after a client appears")
    p.add_argument(
        "--serial-number",
        type=_hello_text,
        default="SIM-0001",
        metavar="TEXT",
        help="the serial number the shoe's HELLO sends (\\xNN for a byte: play a faulty shoe, e.g. 'SN-1\\x00\\x00')",
    )
    p.add_argument(
        "--firmware-version", type=_hello_text, default="sim-1.0", metavar="TEXT", help="likewise, its firmware"
    )
    money = p.add_argument_group("players and chips (docs/simulator.md, Players and the dealer's payouts)")
    bettors = money.add_mutually_exclusive_group()
    bettors.add_argument("--players", type=int, metavar="N", help=f"N players on seats 1..N (1-{MAX_SEATS})")
    bettors.add_argument("--bets", type=Path, metavar="FILE", help="scripted wagers, one JSON line per coup and seat")
    money.add_argument(
        "--uncarded",
        type=int,
        default=0,
        metavar="K",
        help="the last K of the --players have no player's card (the others insert one on sitting down)",
    )
    money.add_argument("--rules", choices=sorted(BUILTIN_RULESETS), default=DEFAULT_RULESET, help="the table's game")
    money.add_argument(
        "--commission",
        choices=[c.value for c in CommissionCollection],
        help="when Banker commission is collected (default: the game's own rule)",
    )
    money.add_argument("--tie-pays", type=int, choices=(8, 9), help="the Tie pays 8:1 (the game's) or 9:1")
    money.add_argument(
        "--side-bets",
        metavar="NAMES",
        help=f"the side bets offered, comma-separated (default all: {','.join(SIDE_BET_NAMES)})",
    )
    money.add_argument(
        "--unit", type=_dollars, default=500, metavar="DOLLARS", help="every wager a multiple of it (5.00)"
    )
    money.add_argument("--minimum", type=_dollars, default=2_500, metavar="DOLLARS", help="the table minimum (25.00)")
    money.add_argument(
        "--maximum", type=_dollars, default=500_000, metavar="DOLLARS", help="the table maximum (5000.00)"
    )
    money.add_argument("--seats", type=int, default=9, metavar="N", help=f"seats at the table (1-{MAX_SEATS})")
    money.add_argument(
        "--leave-after", type=int, default=3, metavar="N", help="empty coups after which a seat has left (default 3)"
    )
    money.add_argument(
        "--counter",
        metavar="SEAT:WAGER[:FACTOR]",
        help="one of the --players bets WAGER (a side bet) with the count: FACTOR (default 10) times its base when"
        " the wager's edge, as the cards seen price it, is positive; FACTOR 0: the wager only then",
    )
    money.add_argument("--chips-out", type=Path, metavar="FILE", help="write the chip registry (TOML) here")
    money.add_argument(
        "--dealer-swap",
        type=int,
        default=0,
        metavar="K",
        help="a dealer's badge at the dealer's position, swapped for the next dealer's every K coups",
    )
    money.add_argument(
        "--staff-out", type=Path, metavar="FILE", help="write the dealers and their badges here (JSON lines)"
    )
    money.add_argument(
        "--key-cards",
        action="store_true",
        help="the dealer keys an unreadable coup card on the dealer screen for the supervisor to approve (the"
        " table's KEY CARD), instead of voiding the coup; needs --buy-ins (and --dealer-swap for the supervisor)",
    )
    money.add_argument(
        "--split-cash",
        metavar="UID:DOLLARS:COUP",
        help="a carded player (card UID, hex) sits down on the seat after the --players' at COUP of the first shoe"
        " and buys in DOLLARS in cash: run at several tables with one UID, the player who splits cash across them",
    )
    spots = money.add_mutually_exclusive_group()
    spots.add_argument("--spots-link", type=Path, metavar="PATH", help="the bet-spot reader on a second pty here")
    spots.add_argument("--spots-tcp", type=_tcp, metavar="HOST:PORT", help="the bet-spot reader on this TCP port")
    tray = money.add_mutually_exclusive_group()
    tray.add_argument("--tray-link", type=Path, metavar="PATH", help="the dealer's chip tray on a pty here")
    tray.add_argument("--tray-tcp", type=_tcp, metavar="HOST:PORT", help="the chip tray on this TCP port")
    money.add_argument("--float", type=Path, metavar="FILE", help='the tray\'s starting float (TOML: "25.00" = 60 ...)')
    money.add_argument(
        "--tray-still",
        type=_seconds,
        default=DEFAULT_STILL,
        metavar="SECONDS",
        help=f"with a tray the dealer holds still this long after each payout, times --pace (default {DEFAULT_STILL})",
    )
    money.add_argument(
        "--buy-ins",
        type=Path,
        metavar="PATH",
        help="send the --players' cash buy-ins to the table's money.sock here (as the dealer screen enters them)",
    )
    return p


def _hello_text(text: str) -> str:
    """A HELLO string as the shoe sends it: ``\\xNN`` escapes for bytes a command line cannot carry (NUL ...);
    at most 32 bytes. Not checked for printable text: the simulator can play a shoe that breaks the rule."""
    try:
        value = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a HELLO string: {text[:40]!r}") from None
    if len(value.encode()) > 32:
        raise argparse.ArgumentTypeError(f"longer than 32 bytes: {text[:40]!r}")
    return value


def config_from_args(args: argparse.Namespace) -> SimConfig:
    """Turn parsed arguments into a validated :class:`SimConfig`; raise UsageError naming the problem."""
    rates: dict[Fault, float] = {}
    try:
        for spec in args.fault:
            fault, rate = parse_rate(spec)
            rates[fault] = rate
        script: tuple[ScriptedFault, ...] = ()
        if args.script is not None:
            try:
                text = read_text(args.script, limit=MAX_SCRIPT_BYTES)
            except UserFileError as exc:
                raise UsageError(f"--script {exc}") from None
            try:
                script = tuple(parse_script(text.splitlines(), str(args.script)))
            except FaultSpecError as exc:  # names the file and line
                raise UsageError(f"--script {exc}") from None
    except FaultSpecError as exc:
        raise UsageError(f"--fault {exc}") from None
    decks = args.decks if MIN_DECKS <= args.decks <= MAX_DECKS else MAX_DECKS  # a bad --decks is named below
    order = None if args.order is None else read_order(args.order, decks)
    money = money_from_args(args)
    tray = tray_from_args(args)
    try:
        return SimConfig(
            dialect=Dialect(args.dialect),
            decks=args.decks,
            seed=args.seed,
            shoes=args.shoes,
            pace=args.pace,
            dealer=DealerMode(args.dealer) if args.dealer else None,
            cut_card=args.cut_card,
            faults=FaultPlan(rates, script),
            disconnect_for=args.disconnect_for,
            one_more_coup=not args.no_extra_coup,
            linger=args.linger,
            repeat_session_id=args.repeat_session_id,
            serial_number=args.serial_number,
            firmware_version=args.firmware_version,
            order=order,
            money=money,
            key_cards=args.key_cards,
            tray=tray,
        )
    except ConfigError as exc:
        raise UsageError(f"--{exc.key.replace('_', '-')}: {exc.reason}") from None


def money_from_args(args: argparse.Namespace) -> MoneyConfig | None:
    """The players and the house from ``--players``/``--bets`` and friends (None without players)."""
    if args.uncarded and args.players is None:
        raise UsageError("--uncarded: leaves some of the --players without a card; give --players N")
    if args.buy_ins is not None and args.players is None:
        raise UsageError("--buy-ins: the players buy in (--players N)")
    if args.key_cards and args.buy_ins is None:
        raise UsageError("--key-cards: the card is keyed on the dealer screen, the table's money.sock (--buy-ins)")
    if args.split_cash is not None and args.players is None:
        raise UsageError("--split-cash: the split-cash player sits after the --players' (--players N)")
    if args.dealer_swap and args.players is None and args.bets is None:
        raise UsageError("--dealer-swap: the badges go through the bet-spot reader (--players N or --bets FILE)")
    if args.players is None and args.bets is None:
        if args.spots_link is not None or args.spots_tcp is not None:
            which = "--spots-link" if args.spots_link is not None else "--spots-tcp"
            raise UsageError(f"{which}: the bet-spot reader needs players at the table (--players N or --bets FILE)")
        return None
    rules = BUILTIN_RULESETS[args.rules]
    if args.commission is not None:
        rules = dataclasses.replace(rules, commission_collection=CommissionCollection(args.commission))
    if args.tie_pays is not None:
        rules = rules.with_tie_pays(args.tie_pays)
    if args.side_bets is not None:
        offered: set[Bet] = set()
        for name in (n.strip() for n in args.side_bets.split(",")):
            if not name:
                continue
            try:
                named = wagers_named(name)
            except ValueError as exc:
                raise UsageError(f"--side-bets: {exc}") from None
            if not named <= SIDE_BETS:
                raise UsageError(f"--side-bets: {name} is not a side bet (the table always offers it)")
            offered |= named
        rules = rules.with_side_bets(frozenset(offered))
    try:
        limits = TableLimits(unit_cents=args.unit, minimum_cents=args.minimum, maximum_cents=args.maximum)
    except ValueError as exc:
        raise UsageError(f"--unit/--minimum/--maximum: {exc}") from None
    for option, cents in (("--minimum", args.minimum), ("--maximum", args.maximum)):
        if cents % args.unit:
            raise UsageError(f"{option}: not a multiple of the unit")
    bets = None
    if args.bets is not None:
        try:
            text = read_text(args.bets, limit=MAX_SCRIPT_BYTES)
        except UserFileError as exc:
            raise UsageError(f"--bets {exc}") from None
        try:
            bets = tuple(parse_bets(text.splitlines(), str(args.bets)))
        except BetsError as exc:
            raise UsageError(f"--bets {exc}") from None
    try:
        return MoneyConfig(
            players=args.players or 0,
            bets=bets,
            rules=rules,
            limits=limits,
            seats=args.seats,
            leave_after_coups=args.leave_after,
            counter=_counter(args.counter),
            uncarded=args.uncarded,
            dealer_swap=args.dealer_swap,
            split_cash=_split_cash(args.split_cash),
        )
    except MoneyConfigError as exc:
        key = {"leave_after_coups": "leave-after", "limits": "unit", "split_cash": "split-cash"}.get(exc.key, exc.key)
        raise UsageError(f"--{key}: {exc.reason}") from None


def tray_from_args(args: argparse.Namespace) -> TrayConfig | None:
    """The chip tray from ``--tray-link``/``--tray-tcp``, ``--float`` and ``--tray-still`` (None: no tray)."""
    attached = args.tray_link is not None or args.tray_tcp is not None
    if not attached:
        if args.float is not None:
            raise UsageError("--float: the float of the chip tray (--tray-link PATH or --tray-tcp HOST:PORT)")
        return None
    which = "--tray-link" if args.tray_link is not None else "--tray-tcp"
    if args.players is None and args.bets is None:
        raise UsageError(f"{which}: the chip tray needs players at the table (--players N or --bets FILE)")
    counts = None
    if args.float is not None:
        try:
            text = read_text(args.float, limit=MAX_FLOAT_BYTES)
        except UserFileError as exc:
            raise UsageError(f"--float {exc}") from None
        try:
            counts = tuple(sorted(parse_float(text, str(args.float)).items()))
        except FloatError as exc:
            raise UsageError(f"--float {exc}") from None
    return TrayConfig(float_counts=counts, still=args.tray_still)


def _split_cash(text: str | None) -> SplitCash | None:
    """``--split-cash UID:DOLLARS:COUP`` (UsageError naming the problem)."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) != 3 or not re.fullmatch(r"[0-9A-Fa-f]{1,16}", parts[0]) or not all(p.isdigit() for p in parts[1:]):
        raise UsageError(f"--split-cash: UID:DOLLARS:COUP (a hex card UID, whole dollars, a coup), not {text[:40]!r}")
    return SplitCash(int(parts[0], 16), int(parts[1]) * 100, int(parts[2]))


def _counter(text: str | None) -> Counting | None:
    """``--counter SEAT:WAGER[:FACTOR]`` (UsageError naming the problem)."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0].isdigit() or (len(parts) == 3 and not parts[2].isdigit()):
        raise UsageError(f"--counter: SEAT:WAGER[:FACTOR], not {text[:40]!r}")
    try:
        bet = Bet(parts[1])
    except ValueError:
        raise UsageError(f"--counter: not a wager: {parts[1][:40]!r}") from None
    try:
        return Counting(int(parts[0]), bet, int(parts[2]) if len(parts) == 3 else 10)
    except ValueError as exc:
        raise UsageError(f"--counter: {exc}") from None


def write_chips(path: Path) -> None:
    """``--chips-out``: the chip registry file (a regular file; UsageError naming it otherwise)."""
    try:
        check_regular(path)
        path.write_text(ChipSet().registry_toml(), encoding="utf-8")
    except UserFileError as exc:
        raise UsageError(f"--chips-out {exc}") from None
    except OSError as exc:
        raise UsageError(f"--chips-out {path}: {exc.strerror or exc}") from None


def read_order(path: Path, decks: int) -> tuple[Card, ...]:
    """The ``--order`` file: one card token per line (``9H``, ``TS`` ...), blank lines and ``#`` comments
    allowed. A bad line raises UsageError naming its number."""
    try:
        text = read_text(path, limit=MAX_SCRIPT_BYTES)
    except UserFileError as exc:
        raise UsageError(f"--order {exc}") from None
    cards: list[Card] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        token = line.split("#", 1)[0].strip()
        if not token:
            continue
        try:
            cards.append(Card.parse(token))
        except CardError as exc:
            raise UsageError(f"--order {path}:{number}: {exc}") from None
        lines.append(number)
    if not cards:
        raise UsageError(f"--order {path}: no cards (one card per line, e.g. 9H)")
    try:
        check_order(cards, decks)
    except OrderError as exc:
        where = "" if exc.index is None else f":{lines[exc.index]}"
        raise UsageError(f"--order {path}{where}: {exc}") from None
    return tuple(cards)


def order_note(order: tuple[Card, ...], config: SimConfig) -> str | None:
    """One line saying so when the order holds fewer cards than the shoe deals before its cut card."""
    needed = shoe_size(config.decks) - config.cut_card
    if len(order) >= needed:
        return None
    return (
        f"{PROG}: note: --order holds {len(order)} cards, the shoe deals {needed} before its cut card: the other"
        f" {shoe_size(config.decks) - len(order)} cards of the {config.decks} decks follow,"
        f" shuffled (seed {config.seed})"
    )


class _TruthWriteError(Exception):
    """Writing the record of truth failed; the message is ``--truth PATH: reason``."""


class _TruthFile:
    """The ``--truth`` file: a regular file (a FIFO would block the open, a device never fill), opened for
    writing; a failed write becomes :class:`_TruthWriteError` naming the file."""

    def __init__(self, path: Path) -> None:
        check_regular(path)
        self._path = path
        try:
            self._stream = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise UserFileError(str(path), exc.strerror or str(exc)) from None

    def _failed(self, exc: OSError) -> _TruthWriteError:
        return _TruthWriteError(f"--truth {self._path}: {exc.strerror or exc}")

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._failed(exc) from None

    def close(self) -> None:
        try:
            self._stream.close()
        except OSError as exc:
            raise self._failed(exc) from None


class _Stop(Exception):
    """SIGTERM arrived."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Stop()


Transport = PtyTransport | TcpTransport


def run(
    sim: ShoeSimulator,
    transport: Transport,
    settle: float,
    reader: tuple[ReaderFeed, Transport] | None = None,
    buy_ins: BuyInLine | None = None,
    tray: tuple[TrayFeed, Transport] | None = None,
) -> None:
    """The real-time loop: move bytes between the transport and the core until the core is finished (and,
    with a bet-spot reader, between its transport and the reader, which powers on with the shoe; with
    ``buy_ins``, the players' buy-ins to the table's money.sock)."""
    first_seen: float | None = None
    keying: float | None = None  # --key-cards: since when an unreadable card waits to be keyed
    was_disconnected = False
    finished_at: float | None = None
    while True:
        now = time.monotonic()
        if sim.finished:
            # the reader's last reports still want their ACKs (at most READER_LINGER seconds)
            finished_at = now if finished_at is None else finished_at
            feed = reader[0] if reader is not None else None
            owed = feed is not None and (feed.reader.unacked or feed.pending)
            owed = owed or (buy_ins is not None and buy_ins.pending)
            owed = owed or (tray is not None and (tray[0].device.unacked > 0 or tray[0].pending))
            if now - finished_at > READER_LINGER or not owed:
                break
        if not sim.started:
            if transport.connected:
                first_seen = now if first_seen is None else first_seen
                if now - first_seen >= settle:
                    sim.start(now)
            else:
                first_seen = None
        if reader is not None and sim.started and not reader[0].started:
            reader[0].start(now)
        if tray is not None and sim.started and not tray[0].started:
            tray[0].start(now)
        due = (
            sim.next_deadline(),
            reader[0].next_deadline() if reader else None,
            tray[0].next_deadline() if tray else None,
        )
        deadlines = [d for d in due if d is not None]
        timeout = TICK if not deadlines else min(max(min(deadlines) - now, 0.0), TICK)
        rfds, wfds = transport.read_fds(), transport.write_fds()
        if reader is not None:
            rfds, wfds = rfds + reader[1].read_fds(), wfds + reader[1].write_fds()
        if tray is not None:
            rfds, wfds = rfds + tray[1].read_fds(), wfds + tray[1].write_fds()
        if buy_ins is not None:
            rfds = rfds + buy_ins.read_fds()
            if buy_ins.pending:
                timeout = min(timeout, 0.05)  # waiting for the table's socket
        readable, writable, _ = select.select(rfds, wfds, [], timeout)
        now = time.monotonic()
        if set(readable) & set(transport.read_fds()):
            data = transport.read()
            if data:
                sim.receive(data, now)
        if set(writable) & set(transport.write_fds()):
            transport.flush()
        if reader is not None:
            _run_reader(reader[0], reader[1], set(readable), set(writable), now)
        if tray is not None:
            _run_reader(tray[0], tray[1], set(readable), set(writable), now)
        items = sim.poll(now)
        if sim.disconnected and not was_disconnected:
            transport.drop_client()
        elif was_disconnected and not sim.disconnected and isinstance(transport, TcpTransport):
            transport.allow_clients()
        was_disconnected = sim.disconnected
        for i, chunk in enumerate(items):
            if i:
                time.sleep(CHUNK_GAP)
            transport.write(chunk)
        if reader is not None:
            out = reader[0].poll(now)
            if out:
                reader[1].write(out)
        if tray is not None:
            out = tray[0].poll(now)
            if out:
                tray[1].write(out)
        if buy_ins is not None:
            if set(readable) & set(buy_ins.read_fds()):
                buy_ins.readable()
            if isinstance(sim.dealer, PromptDealer):
                keying = _key_card(sim, buy_ins, keying, now)
            if sim.money is not None:
                sim.money.approval_shown(buy_ins.approval, now)  # the supervisor answers the dealer screen
                buy_ins.send_lines(sim.money.take_pins(), now)
                buy_ins.send(sim.money.take_buy_ins(), now)
    transport.flush()
    if reader is not None:
        reader[1].flush()
    if tray is not None:
        tray[1].flush()


def _key_card(sim: ShoeSimulator, buy_ins: BuyInLine, since: float | None, now: float) -> float | None:
    """``--key-cards``: the unreadable card the dealer stopped at, keyed once the table offers KEY CARD (a ``key``
    line on money.sock, a truth ``card_keyed`` line), or given up for a void after :data:`KEY_WAIT` seconds without
    the offer. Returns since when a card waits (None: none)."""
    assert isinstance(sim.dealer, PromptDealer)
    card = sim.dealer.key_due
    if card is None:
        return None
    since = now if since is None else since
    if buy_ins.keyable:
        buy_ins.send_lines([key_line(card.token)], now)
        sim.dealer.key_sent()
        sim.truth.write("card_keyed", now, shoe=sim.shoe_number, coup=sim.dealer.current_coup, card=card.token)
        return None
    if now - since > KEY_WAIT:
        sim.dealer.give_up_key()
        sim.truth.write("key_given_up", now, shoe=sim.shoe_number, coup=sim.dealer.current_coup, card=card.token)
        return None
    return since


def _run_reader(
    feed: ReaderFeed | TrayFeed, line: Transport, readable: set[int], writable: set[int], now: float
) -> None:
    if readable & set(line.read_fds()):
        data = line.read()
        if data:
            feed.receive(data, now)
    if writable & set(line.write_fds()):
        line.flush()


def write_staff(path: Path, seed: int) -> None:
    """``--staff-out``: the simulated dealers, one JSON line each (``id``, ``role``, ``badge``), then the supervisor
    and the pit manager who approve voids, with their ``pin`` too, for the floor's registry (``shoe-floor staff add
    --id ID --name ... --role ROLE --badge BADGE``, ``set-pin``)."""
    lines = [json.dumps({"id": i, "role": "dealer", "badge": format_uid(uid)}) + "\n" for i, uid in staff(seed)]
    lines += [
        json.dumps({"id": i, "role": role, "badge": format_uid(uid), "pin": pin}) + "\n"
        for i, role, uid, pin in approvers(seed)
    ]
    try:
        path.write_text("".join(lines))
    except OSError as exc:
        raise UsageError(f"--staff-out {path}: {exc.strerror or exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.link is None and args.tcp is None:
            if args.chips_out is None or args.players is not None or args.bets is not None:
                raise UsageError("one of the arguments --link --tcp is required")
            write_chips(args.chips_out)
            return 0
        config = config_from_args(args)
        if args.chips_out is not None:
            write_chips(args.chips_out)
        if args.staff_out is not None:
            write_staff(args.staff_out, args.seed)
    except UsageError as exc:
        print(one_line(f"{PROG}: error: {exc}"), file=sys.stderr)
        return 2
    transport: Transport = PtyTransport(args.link) if args.link else TcpTransport(*args.tcp)
    spots: Transport | None = None
    if args.spots_link is not None:
        spots = PtyTransport(args.spots_link)
    elif args.spots_tcp is not None:
        spots = TcpTransport(*args.spots_tcp)
    tray_line: Transport | None = None
    if args.tray_link is not None:
        tray_line = PtyTransport(args.tray_link)
    elif args.tray_tcp is not None:
        tray_line = TcpTransport(*args.tray_tcp)
    try:
        stream = _TruthFile(args.truth) if args.truth else None
    except UserFileError as exc:
        print(one_line(f"{PROG}: error: --truth {exc}"), file=sys.stderr)
        return 2
    truth = TruthLog(cast(IO[str], stream))
    try:
        transport.open()
    except TransportError as exc:
        truth.close()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if spots is not None:
        try:
            spots.open()
        except TransportError as exc:
            transport.close()
            truth.close()
            where = "--spots-link" if args.spots_link is not None else "--spots-tcp"
            print(one_line(f"{PROG}: error: {where} {str(exc).split(' ', 1)[1]}"), file=sys.stderr)
            return 2
    if tray_line is not None:
        try:
            tray_line.open()
        except TransportError as exc:
            transport.close()
            if spots is not None:
                spots.close()
            truth.close()
            where = "--tray-link" if args.tray_link is not None else "--tray-tcp"
            print(one_line(f"{PROG}: error: {where} {str(exc).split(' ', 1)[1]}"), file=sys.stderr)
            return 2
    note = None if config.order is None else order_note(config.order, config)
    if note is not None:
        print(note, file=sys.stderr, flush=True)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    sim = ShoeSimulator(config, truth)
    reader: tuple[ReaderFeed, Transport] | None = None
    if spots is not None and sim.money is not None:
        seats = range(1, sim.money.config.seats + 1)
        feed = ReaderFeed(sim.money, SpotReader(seed=config.seed, seats=seats))
        sim.reader_settled = lambda: feed.settled
        reader = (feed, spots)
    tray: tuple[TrayFeed, Transport] | None = None
    if tray_line is not None and sim.tray is not None:
        tray = (TrayFeed(sim.tray, TrayDevice(seed=config.seed)), tray_line)
    try:
        print(
            f"{PROG}: listening on {transport.describe()}, {config.dialect.value} dialect, {config.decks} decks, "
            f"seed {config.seed}",
            flush=True,
        )
        if reader is not None:
            print(f"{PROG}: bet-spot reader on {reader[1].describe()}, {len(reader[0].reader.seats)} seats", flush=True)
        if tray is not None:
            tubes = sum(1 for n in tray[0].tray.float_counts.values() if n)
            print(
                f"{PROG}: chip tray on {tray[1].describe()}, {tray[0].device.tubes} tubes ({tubes} filled),"
                f" float {tray[0].tray.cents // 100}.{tray[0].tray.cents % 100:02d}",
                flush=True,
            )
        line = BuyInLine(args.buy_ins) if args.buy_ins is not None and sim.money is not None else None
        try:
            run(sim, transport, args.settle, reader, line, tray)
        finally:
            if line is not None:
                line.close()
        print(f"{PROG}: done: {sim.shoe_number} shoe(s), {sim.cards_in_run} cards", flush=True)
    except (KeyboardInterrupt, _Stop):
        truth.write("interrupted", time.monotonic())
    except _TruthWriteError as exc:  # the disk is full, a file size limit ...: stop, say so in one line
        print(one_line(f"{PROG}: error: {exc}"), file=sys.stderr)
        return 1
    except OSError as exc:  # stdout cannot be written (``> /dev/full``), or the transport failed
        print(one_line(f"{PROG}: error: {exc.strerror or exc}"), file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        transport.close()
        if spots is not None:
            spots.close()
        if tray_line is not None:
            tray_line.close()
        with contextlib.suppress(_TruthWriteError):
            truth.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
