"""``shoe-floor``: the casino floor's side of the floor link.

  shoe-floor serve --broker URL --archive URL --key FILE [--bind HOST:PORT] [--site S] [--share GROUP]
                   [--client-id ID] [--ca-file F]
                   [--username U --password-file F --pit-username U --pit-password-file F]
  shoe-floor keygen --out FILE
  shoe-floor enroll --archive URL --table T --public-key ed25519:... [--statement FILE | --replace]
  shoe-floor enroll --archive URL --table T --revoke
  shoe-floor keys --archive URL [--table T]
  shoe-floor pit --broker URL --archive URL [--bind HOST:PORT]
  shoe-floor history --archive URL [--table T] [--last N] [--json]
  shoe-floor verify --archive URL [--table T] [--json]
  shoe-floor alerts --archive URL [--table T] [--last N] [--json]
  shoe-floor errors --archive URL [--table T] [--hours N] [--json]
  shoe-floor faults --archive URL [--table T] --from ISO --to ISO [--shifts HH:MM,...] [--zone IANA] [--by-dealer]
                    [--json]
  shoe-floor report --archive URL [--table T] --from ISO --to ISO [--shifts HH:MM,...] [--zone IANA] [--json]
  shoe-floor ratings --archive URL [--table T] [--since ISO] [--open] [--decisions-per-hour N] [--json]
  shoe-floor cashlog --archive URL --day DATE [--json]
  shoe-floor slips --archive URL [--table T] [--player REF] [--since ISO] [--open] [--window-minutes M]
                   [--decisions-per-hour N] [--house-edge F] [--json]
  shoe-floor staff add|disable|enable|set-pin|set-badge|list --archive URL ...   (floor/people_cli.py)
  shoe-floor user add|disable|enable|unlock|set-password|list --archive URL ...
  shoe-floor audit --archive URL [--subject S] [--last N] [--json]

Bad input (a URL, a number, an archive that cannot be opened) is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from types import FrameType
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from commandline import Parser, UsageError
from commandline.exits import run_command
from commandline.keyfile import KeyFileError, read_key_file, write_key_file
from commandline.times import local_time_text
from controller.game.notation import hand_text, money_text, result_text
from controller.game.slips import DEFAULT_DECISIONS_PER_HOUR as SLIP_DECISIONS_PER_HOUR
from controller.game.slips import DEFAULT_HOUSE_EDGE, PAUSE_WINDOW_SECONDS, Estimate, slip_line, slips_table
from floor.accounting import (
    DEFAULT_DECISIONS_PER_HOUR,
    DEFAULT_LEAVE_AFTER_COUPS,
    ShiftFigures,
    floor_totals,
    ratings,
    shift_report,
)
from floor.archive import SQLITE, Archive, ArchiveError, ArchiveLost, parse_url
from floor.cash_watch import DEFAULT_GAMING_DAY_START, CashThresholds, cash_day, day_line, gaming_days, mtl_line
from floor.collector import Collector, Settings
from floor.counting import DEFAULT_THRESHOLD
from floor.dealer_faults import DEALER_KINDS, dealer_faults
from floor.money_watch import fault_rates
from floor.people_cli import add_parsers as add_people_parsers
from floor.pit import Pit
from floor.pit_auth import GateError, SessionRules
from floor.shifts import DEFAULT_SHIFTS, DEFAULT_ZONE, ShiftError, ShiftPlan, parse_time
from floor.slips import floor_slips
from floor.surveillance import ERROR_COUNTERS, Thresholds, stats_of
from floor_protocol.addresses import AddressError, parse_broker, parse_host_port
from floor_protocol.admission import MAX_RECORD_BYTES
from floor_protocol.signing import (
    KeyStatement,
    SigningError,
    format_public_key,
    generate_key,
    key_id,
    private_key_from_pem,
    private_key_pem,
)
from floor_protocol.topics import is_level

DEFAULT_BIND = ("127.0.0.1", 8470)

log = logging.getLogger("shoe-floor")
T = TypeVar("T", int, float)


def _bounded(convert: Callable[[str], T], low: T, high: T, what: str, between: str) -> Callable[[str], T]:
    """An argparse type: ``convert`` the text, then hold it to ``low``..``high`` (one line naming the problem)."""

    def parse(text: str) -> T:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text[:40]!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {between}, not {text[:40]}")
        return value

    return parse


_count = _bounded(int, 1, 2**62, "a whole number", "between 1 and 2^62")
_seconds = _bounded(float, 0.0, 3600.0, "a number of seconds", "0-3600 seconds")
_days = _bounded(int, 1, 3660, "a whole number of days", "1-3660 days")
_score = _bounded(float, 20.0, 1e12, "a number", "between 20 and 1e12")
_DOLLARS = re.compile(r"^([0-9]{1,9})(\.[0-9]{2})?$")


def _dollars(text: str) -> int:
    """An amount in dollars (``3000`` or ``3000.00``, at most $999,999,999.99) as integer cents."""
    m = _DOLLARS.match(text.strip().removeprefix("$").replace(",", ""))
    if m is None:
        raise argparse.ArgumentTypeError(f"not an amount in dollars like 3000 or 3000.00: {text[:40]!r}")
    return int(m.group(1)) * 100 + int((m.group(2) or ".00")[1:])


def _day(text: str) -> str:
    """A gaming day: an ISO date (``2026-12-01``)."""
    try:
        return date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date like 2026-12-01: {text[:40]!r}") from None


def _bind(text: str) -> tuple[str, int]:
    try:
        return parse_host_port(text, any_port=True)
    except AddressError as exc:
        raise argparse.ArgumentTypeError(f"write HOST:PORT: {exc}") from None


def _topic_level(text: str) -> str:
    if not is_level(text):
        raise argparse.ArgumentTypeError(f"not one MQTT topic level: {text[:60]!r}")
    return text


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="shoe-floor", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    s = sub.add_parser("serve", help="archive every table's records and publish the acks")
    s.add_argument("--broker", required=True, help="mqtt://host:port or mqtts://host:port")
    s.add_argument("--archive", required=True, help="postgresql://user@host:port/db or sqlite:///path")
    s.add_argument("--key", help="the floor's private key, signing every ack (shoe-floor keygen); required")
    s.add_argument(
        "--bind",
        type=_bind,
        default=DEFAULT_BIND,
        metavar="HOST:PORT",
        help="serve the pit page, its API and Prometheus /metrics here (default 127.0.0.1:8470, loopback)",
    )
    s.add_argument("--site", type=_topic_level, help="only this site's tables (default: every site)")
    s.add_argument("--share", type=_topic_level, default="shoe-floor", help="shared-subscription group")
    s.add_argument(
        "--client-id",
        type=_topic_level,
        help="MQTT client id, one per collector (default: shoe-floor-HOST; a broker that binds client ids to user"
        " names, as the shipped one, uses --username instead)",
    )
    s.add_argument("--ca-file", help="CA certificate for mqtts://")
    s.add_argument("--username", help="the collector's broker user name (one per collector)")
    s.add_argument("--password-file", help="file holding the collector's broker password")
    s.add_argument(
        "--pit-username",
        help="the pit view's own broker user name (needed with --username: a broker that binds client ids to"
        " user names would let the collector and its pit view take each other's session)",
    )
    s.add_argument("--pit-password-file", help="file holding the pit view's broker password")
    s.add_argument("--batch", type=_count, default=1000, help="most records per transaction (default 1000)")
    _max_record_bytes_option(s)
    s.add_argument("--gap-grace", type=_seconds, default=2.0, help="seconds a gap lasts before it is an alert")
    s.add_argument(
        "--refused-alerts",
        type=_bounded(int, 1, 10_000, "a whole number", "between 1 and 10000"),
        default=5,
        metavar="N",
        help="refused or conflicting messages of one table that are an alert each, per minute; the rest are"
        " counted and said in one alert at the minute's end (default 5)",
    )
    s.add_argument(
        "--repeat-days", type=_days, default=30, help="repeated-shoe check: shoes of the last N days (default 30)"
    )
    s.add_argument(
        "--count-threshold",
        type=_score,
        default=DEFAULT_THRESHOLD,
        metavar="SCORE",
        help="betting with the count: the betting score that is an alert; a seat whose stakes ignore the edge"
        f" reaches it with probability at most 1/SCORE per seat session and wager (default {DEFAULT_THRESHOLD:g})",
    )
    _shift_options(s, "the shifts whose win is checked against its 95 %% interval")
    s.add_argument(
        "--leave-after-coups",
        type=_bounded(int, 1, 1000, "a whole number", "between 1 and 1000"),
        default=DEFAULT_LEAVE_AFTER_COUPS,
        metavar="N",
        help="a seat session ends at the N-th coup running with the seat's spots empty: the tables'"
        f" spots.leave_after_coups (default {DEFAULT_LEAVE_AFTER_COUPS})",
    )
    s.add_argument(
        "--gaming-day-start",
        default=DEFAULT_GAMING_DAY_START,
        metavar="HH:MM",
        help=f"the cash log's gaming day starts at this local time, in --zone (default {DEFAULT_GAMING_DAY_START})",
    )
    cash = CashThresholds()
    s.add_argument("--mtl-over", type=_dollars, default=cash.mtl_over_cents, metavar="DOLLARS",
                   help="a cash buy-in over this is a multiple transaction log entry (default 3000)")  # fmt: skip
    s.add_argument("--cash-alert-at", type=_dollars, default=cash.approaching_cents, metavar="DOLLARS",
                   help="a player's cash in for the gaming day at this is an alert (default 8000)")  # fmt: skip
    s.add_argument("--ctr-over", type=_dollars, default=cash.ctr_over_cents, metavar="DOLLARS",
                   help="... and over this a currency transaction report is due, an alert (default 10000)")  # fmt: skip
    s.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    _session_options(s)
    s.set_defaults(handler=serve)
    kg = sub.add_parser("keygen", help="write the floor's private key (mode 0600) and print its public key")
    kg.add_argument("--out", required=True, help="the key file to write (never over an existing one)")
    kg.set_defaults(handler=keygen)
    en = sub.add_parser("enroll", help="enroll, rotate, replace or revoke a table's key (an alert each)")
    en.add_argument("--archive", required=True, help="postgresql://user@host:port/db or sqlite:///path")
    en.add_argument("--table", required=True, type=_topic_level, help="the table id")
    en.add_argument("--public-key", help="the table's public key as shoe-controller keygen prints it")
    how = en.add_mutually_exclusive_group()
    how.add_argument("--statement", help="a key statement for the new key, signed by the table's current key")
    how.add_argument("--replace", action="store_true", help="the operator's word for a lost or stolen key")
    how.add_argument("--revoke", action="store_true", help="revoke the table's key: nothing more is archived")
    en.set_defaults(handler=enroll)
    ks = sub.add_parser("keys", help="every table key the archive holds, and its state")
    ks.add_argument("--archive", required=True)
    ks.add_argument("--table", help="only this table")
    ks.set_defaults(handler=keys)
    pit = sub.add_parser("pit", help="the read-only pit view alone (no archiving)")
    pit.add_argument("--broker", required=True, help="mqtt://host:port or mqtts://host:port")
    pit.add_argument("--archive", required=True, help="postgresql://user@host:port/db or sqlite:///path")
    pit.add_argument("--bind", type=_bind, default=DEFAULT_BIND, metavar="HOST:PORT", help="default 127.0.0.1:8470")
    pit.add_argument("--ca-file", help="CA certificate for mqtts://")
    pit.add_argument("--username", help="broker user name")
    pit.add_argument("--password-file", help="file holding the broker password")
    pit.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    _max_record_bytes_option(pit)
    _shift_options(pit, "the shift whose handle and win the tiles show")
    _session_options(pit)
    pit.set_defaults(handler=pit_view)
    h = sub.add_parser("history", help="the coups in the archive (one JSON object per line with --json)")
    h.add_argument("--archive", required=True)
    h.add_argument("--table", help="only this table")
    h.add_argument("--last", type=_count, metavar="N", help="only the last N coups of each table")
    h.add_argument("--json", action="store_true")
    h.add_argument("--zone", metavar="IANA", help="the time zone the times are written in (default this machine's)")
    h.set_defaults(handler=history)
    al = sub.add_parser("alerts", help="the alert feed, newest first (one JSON object per line with --json)")
    al.add_argument("--archive", required=True)
    al.add_argument("--table", help="only this table")
    al.add_argument("--last", type=_count, default=50, metavar="N", help="the last N alerts (default 50)")
    al.add_argument("--json", action="store_true")
    al.set_defaults(handler=alerts)
    de = sub.add_parser("errors", help="dealer errors per table and hour (one JSON object per line with --json)")
    de.add_argument("--archive", required=True)
    de.add_argument("--table", help="only this table")
    de.add_argument("--hours", type=_count, default=24, metavar="N", help="the last N hours with coups (default 24)")
    de.add_argument("--json", action="store_true")
    de.set_defaults(handler=errors)
    mf = sub.add_parser(
        "faults",
        help="money faults (past-posts, pulled bets, mispays, foreign chips) per table and shift, with their rates",
    )
    _shift_range_options(mf, "the shifts counted")
    mf.add_argument("--json", action="store_true", help="one JSON object per table and shift")
    mf.add_argument(
        "--by-dealer",
        action="store_true",
        help="per dealer on duty (the tables' dealer_in/dealer_out records): coups, misdraws, mispays, past-posts",
    )
    mf.set_defaults(handler=faults)
    v = sub.add_parser(
        "verify", help="every record's hash chain and signature: one line per problem; exit 1 on a problem"
    )
    v.add_argument("--archive", required=True)
    v.add_argument("--table", help="only this table")
    v.add_argument("--json", action="store_true", help="one JSON object per table")
    v.set_defaults(handler=verify)
    rp = sub.add_parser("report", help="each table's money per shift: handle, win, hold, commission, theo, interval")
    _shift_range_options(rp, "the shifts reported on")
    rp.add_argument("--json", action="store_true", help="one JSON object per table and shift, then the floor's")
    rp.set_defaults(handler=report)
    ra = sub.add_parser("ratings", help="seat sessions: time, coups, wagered, average bet, theo, win, commission")
    ra.add_argument("--archive", required=True)
    ra.add_argument("--table", help="only this table")
    ra.add_argument("--since", metavar="ISO", help="only the sessions open or ended since then")
    ra.add_argument("--open", action="store_true", help="only the open sessions")
    ra.add_argument(
        "--decisions-per-hour",
        type=_bounded(int, 1, 1000, "a whole number", "between 1 and 1000"),
        default=DEFAULT_DECISIONS_PER_HOUR,
        metavar="N",
        help=f"the usual theo's pace (default {DEFAULT_DECISIONS_PER_HOUR}, a mini-baccarat table's)",
    )
    ra.add_argument("--json", action="store_true", help="one JSON object per session")
    ra.set_defaults(handler=rate)
    cl = sub.add_parser(
        "cashlog",
        help="a gaming day's cash log: the multiple transaction log, and each player's cash in across the tables",
    )
    cl.add_argument("--archive", required=True)
    cl.add_argument("--day", required=True, type=_day, metavar="DATE", help="the gaming day (the date it starts on)")
    cl.add_argument("--json", action="store_true", help="one JSON object per MTL entry, then one per player and day")
    cl.set_defaults(handler=cashlog)
    sl = sub.add_parser(
        "slips", help="rating slips from measured play: per player, visit and table (the tables' own, across tables)"
    )
    sl.add_argument("--archive", required=True)
    sl.add_argument("--table", help="only this table's slips")
    sl.add_argument("--player", metavar="REF", help="only this player's slips (the player_ref)")
    sl.add_argument("--since", metavar="ISO", help="only the slips that ended at or after then")
    sl.add_argument("--open", action="store_true", help="also the visits still seated, marked open")
    sl.add_argument(
        "--window-minutes",
        type=_bounded(int, 0, 1440, "a whole number", "between 0 and 1440"),
        default=PAUSE_WINDOW_SECONDS // 60,
        metavar="M",
        help=f"a player back within M minutes continues the visit (default {PAUSE_WINDOW_SECONDS // 60})",
    )
    sl.add_argument(
        "--decisions-per-hour",
        type=_bounded(int, 1, 1000, "a whole number", "between 1 and 1000"),
        default=SLIP_DECISIONS_PER_HOUR,
        metavar="N",
        help=f"the usual estimate's assumed pace (default {SLIP_DECISIONS_PER_HOUR})",
    )
    sl.add_argument(
        "--house-edge",
        type=_bounded(float, 0.0, 0.5, "a number", "a fraction between 0 and 0.5"),
        default=DEFAULT_HOUSE_EDGE,
        metavar="F",
        help=f"the usual estimate's assumed house edge (default {DEFAULT_HOUSE_EDGE})",
    )
    sl.add_argument("--json", action="store_true", help="one JSON object per slip (the table's fields, and table)")
    sl.set_defaults(handler=slips)
    add_people_parsers(sub, _count)
    return p


def _shift_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--shifts",
        default=DEFAULT_SHIFTS,
        metavar="HH:MM,...",
        help=f"{what}: the shifts' local start times (default {DEFAULT_SHIFTS})",
    )
    p.add_argument(
        "--zone", default=DEFAULT_ZONE, metavar="IANA", help=f"the shifts' time zone (default {DEFAULT_ZONE})"
    )


def _session_options(p: argparse.ArgumentParser) -> None:
    """How long a pit user's session lasts (floor/pit_auth.py; only when the pit has users)."""
    hours = _bounded(float, 0.01, 24 * 7, "a number of hours", "0.01-168 hours")
    minutes = _bounded(float, 0.1, 24 * 60, "a number of minutes", "0.1-1440 minutes")
    p.add_argument("--session-hours", type=hours, default=8.0, metavar="H",
                   help="a pit session ends H hours after its sign-in (default 8)")  # fmt: skip
    p.add_argument("--session-idle-minutes", type=minutes, default=30.0, metavar="M",
                   help="... or M minutes after its last request (default 30)")  # fmt: skip


def _shift_range_options(p: argparse.ArgumentParser, what: str) -> None:
    """The options of a per-shift command (``report``, ``faults``): the archive, a table, the shifts from
    ``--from`` to ``--to`` and the shift plan."""
    p.add_argument("--archive", required=True)
    p.add_argument("--table", help="only this table")
    p.add_argument("--from", dest="start", required=True, metavar="ISO", help="the first shift holding this time")
    p.add_argument("--to", dest="end", required=True, metavar="ISO", help="up to the shift holding this time")
    _shift_options(p, what)


def _max_record_bytes_option(parser: argparse.ArgumentParser) -> None:
    """The one record size limit, the collector's and the pit's (the pit never refuses what the archive keeps)."""
    parser.add_argument(
        "--max-record-bytes",
        type=_bounded(int, 1024, 16 * 1024 * 1024, "a whole number of bytes", "between 1024 and 16777216"),
        default=MAX_RECORD_BYTES,
        metavar="N",
        help=f"refuse a record message longer than N bytes (default {MAX_RECORD_BYTES}; the largest genuine"
        " record is about 1 KiB)",
    )


def _plan(args: argparse.Namespace) -> ShiftPlan:
    try:
        return ShiftPlan.parse(args.shifts, args.zone)
    except ShiftError as exc:
        raise UsageError(f"shoe-floor {args.command}: {exc}") from None


def _gaming_days(args: argparse.Namespace) -> ShiftPlan:
    try:
        return gaming_days(args.gaming_day_start, args.zone)
    except ShiftError as exc:
        raise UsageError(f"shoe-floor {args.command}: --gaming-day-start {exc}") from None


def _cash_thresholds(args: argparse.Namespace) -> CashThresholds:
    try:
        return CashThresholds(args.mtl_over, args.cash_alert_at, args.ctr_over)
    except ValueError as exc:
        raise UsageError(f"shoe-floor {args.command}: --cash-alert-at: {exc}") from None


def _time(args: argparse.Namespace, option: str, text: str) -> datetime:
    try:
        return parse_time(text)
    except ShiftError as exc:
        raise UsageError(f"shoe-floor {args.command}: {option} {exc}") from None


def _shift_range(args: argparse.Namespace) -> tuple[ShiftPlan, datetime, datetime]:
    """The shift plan and the ``--from``/``--to`` range of ``report`` and ``faults`` (``_shift_range_options``)."""
    plan = _plan(args)
    start, end = _time(args, "--from", args.start), _time(args, "--to", args.end)
    if end <= start:
        raise UsageError(f"shoe-floor {args.command}: --to must be after --from ({args.end} is not after {args.start})")
    return plan, start, end


def _json_lines(items: Iterable[Mapping[str, Any]]) -> int:
    """``--json``: one compact JSON object a line; exit 0."""
    for item in items:
        sys.stdout.write(json.dumps(item, separators=(",", ":")) + "\n")
    return 0


def _broker_password(args: argparse.Namespace) -> str | None:
    """Check the broker URL; the password from ``--password-file`` (None without one)."""
    try:
        parse_broker(args.broker)
    except AddressError as exc:
        raise UsageError(f"shoe-floor {args.command}: {exc}") from None
    return _read_password(args, args.password_file)


def _read_password(args: argparse.Namespace, path: str | None) -> str | None:
    """The password in the file at ``path`` (its first line), None without a file; a file that cannot be read
    is one line and exit 2. A password is never an argument: it would show in ``ps``."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline(4096).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"shoe-floor {args.command}: password file {path}: {exc}") from None


def _pit_credentials(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``serve``'s pit view's user name and password: its own, never the collector's (the shipped broker makes
    a client's id its user name, so a pit view connecting as the collector's user would end the collector's
    connection and, connecting clean, throw its session away with the records queued in it)."""
    if args.pit_password_file and not args.pit_username:
        raise UsageError(f"shoe-floor {args.command}: --pit-password-file needs --pit-username")
    if args.username and not args.pit_username:
        raise UsageError(
            f"shoe-floor {args.command}: --username needs --pit-username, the pit view's own broker user"
            " (one user name per connection)"
        )
    if args.pit_username and args.pit_username == args.username:
        raise UsageError(
            f"shoe-floor {args.command}: --pit-username must differ from --username (one user name per connection)"
        )
    return args.pit_username, _read_password(args, args.pit_password_file)


def _start_pit(
    args: argparse.Namespace,
    username: str | None,
    password: str | None,
    metrics: Callable[[], bytes] | None,
    *,
    say_broker: bool = True,
) -> Pit:
    try:
        sessions = SessionRules(args.session_hours * 3600, args.session_idle_minutes * 60)
    except GateError as exc:
        raise UsageError(f"shoe-floor {args.command}: {exc}") from None
    pit = Pit(args.archive, plan=_plan(args), max_record_bytes=args.max_record_bytes, sessions=sessions)
    try:
        pit.start(
            args.bind,
            args.broker,
            metrics=metrics,
            ca_file=args.ca_file,
            username=username,
            password=password,
            say_broker=say_broker,
        )
    except OSError as exc:
        pit.close()
        host, port = args.bind
        raise UsageError(f"shoe-floor {args.command}: cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    except GateError as exc:
        pit.close()
        raise UsageError(f"shoe-floor {args.command}: {exc}") from None
    return pit


def _until_signal() -> threading.Event:
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return stop


def pit_view(args: argparse.Namespace) -> int:
    password = _broker_password(args)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    stop = _until_signal()
    pit = _start_pit(args, args.username, password, None)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        pit.close()
    return 0


def _floor_key(args: argparse.Namespace) -> Ed25519PrivateKey:
    if not args.key:
        raise UsageError("shoe-floor serve: --key FILE is required (the floor's key; write one with shoe-floor keygen)")
    try:
        return private_key_from_pem(read_key_file(args.key), args.key)
    except (KeyFileError, SigningError) as exc:
        raise UsageError(f"shoe-floor serve: --key {exc}") from None


def _not_a_table_key(path: str, key: Ed25519PrivateKey, archive: Archive) -> None:
    """Refuse a table's signing key (one the archive has enrolled, now or before) as the floor's: its acks would
    be signed by a key a table holds, and every table believes only the floor's (one line, exit 2)."""
    public = format_public_key(key)
    tables = sorted({k.table for k in archive.table_keys() if k.public_key == public})
    if tables:
        raise UsageError(
            f"shoe-floor serve: --key {path} is table {', '.join(tables)}'s signing key (enrolled in the archive),"
            " not the floor's: make the floor's with shoe-floor keygen --out FILE"
        )


def serve(args: argparse.Namespace) -> int:
    password = _broker_password(args)
    pit_username, pit_password = _pit_credentials(args)
    key = _floor_key(args)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    settings = Settings(
        broker=args.broker,
        archive=args.archive,
        key=key,
        site=args.site or "+",
        share=args.share,
        client_id=args.client_id or f"shoe-floor-{socket.gethostname()}"[:100],
        batch=args.batch,
        max_record_bytes=args.max_record_bytes,
        gap_grace=args.gap_grace,
        refused_per_table=args.refused_alerts,
        ca_file=args.ca_file,
        username=args.username,
        password=password,
        thresholds=Thresholds(repeat_days=args.repeat_days),
        count_threshold=args.count_threshold,
        shift_plan=_plan(args),
        leave_after_coups=args.leave_after_coups,
        gaming_days=_gaming_days(args),
        cash_thresholds=_cash_thresholds(args),
    )
    with Archive(args.archive) as archive:
        _not_a_table_key(args.key, key, archive)
        log.info(
            "archive %s, id %s; acks signed by floor key %s", _where(args.archive), archive.archive_id, key_id(key)
        )
        collector = Collector(settings)
        from floor.metrics import CollectorCounts, exposition

        pit = _start_pit(
            args, pit_username, pit_password, exposition(CollectorCounts(lambda: collector.stats)), say_broker=False
        )  # the collector says it

        def stop(signum: int, frame: FrameType | None) -> None:
            collector.stop()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            collector.run(archive)
        except ArchiveLost as exc:  # deleted or replaced under us: said once, nothing more acked from it
            log.error("%s; stopping (a restart opens the archive at its path, with its own id)", exc)
            return 1
        except Exception as exc:  # the archive failed mid-run: nothing uncommitted was acknowledged
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.error(
                "archive %s failed: %s; stopping (what was not archived will be delivered again)",
                _where(args.archive),
                first,
            )
            return 1
        finally:
            pit.close()
    log.info("stopped: %s", collector.stats)
    return 0


def _where(url: str) -> str:
    """An archive URL without its credentials."""
    return url.split("@")[-1]


def keygen(args: argparse.Namespace) -> int:
    """The floor's key: mode 0600, never over an existing file; its public key on stdout (``ed25519:...``),
    what each table's ``[floor] floor_public_key`` holds."""
    key = generate_key()
    try:
        write_key_file(args.out, private_key_pem(key))
    except KeyFileError as exc:
        raise UsageError(f"shoe-floor keygen: {exc}") from None
    print(format_public_key(key))
    return 0


def enroll(args: argparse.Namespace) -> int:
    if args.revoke:
        if args.public_key:
            raise UsageError("shoe-floor enroll: --revoke takes no --public-key (enroll the new one with --replace)")
    elif not args.public_key:
        raise UsageError("shoe-floor enroll: --public-key ed25519:... is required (or --revoke)")
    statement = None
    if args.statement:
        try:
            with open(args.statement, "rb") as f:
                statement = KeyStatement.from_json(f.read(4096))
        except OSError as exc:
            raise UsageError(f"shoe-floor enroll: --statement {args.statement}: {exc.strerror}") from None
        except SigningError as exc:
            raise UsageError(f"shoe-floor enroll: --statement {args.statement}: {exc}") from None
    if not args.revoke:  # a key that is not one is refused before anything is made
        try:
            key_id(args.public_key)
        except SigningError as exc:
            raise UsageError(f"shoe-floor enroll: --public-key: {exc}") from None
    # Enrolling the first table's key is the set-up's first use of a new archive (docs/floor.md, Running it:
    # keygen, enroll, serve): it makes the archive, as serve would, and says so. A revoke needs one already.
    dialect, target = parse_url(args.archive)
    new = dialect is SQLITE and not args.revoke and not os.path.exists(target)
    with Archive(args.archive, create=not args.revoke) as archive:
        if args.revoke:
            item = archive.revoke(args.table)
        else:
            _not_another_tables_key(args.table, args.public_key, archive)
            item = archive.enroll(args.table, args.public_key, statement=statement, replace=args.replace)
    if new:
        print(f"shoe-floor enroll: made a new archive, {target}", file=sys.stderr)
    print(item.line())
    return 0


def _not_another_tables_key(table: str, public_key: str, archive: Archive) -> None:
    """Each table signs with its own key: one another table holds (a key file copied to a second table) would let
    either table's holder sign the other's records. Refused in one line naming the table."""
    wanted = key_id(public_key)
    others = sorted({k.table for k in archive.table_keys() if k.key_id == wanted and k.table != table})
    if others:
        raise UsageError(
            f"shoe-floor enroll: key {wanted} is table {', '.join(others)}'s: each table has a key of its own"
            " (shoe-controller keygen on the table)"
        )


def keys(args: argparse.Namespace) -> int:
    with Archive(args.archive, create=False, read_only=True) as archive:
        found = archive.table_keys(args.table)
    if not found:
        print("no keys enrolled", file=sys.stderr)
    for k in found:
        print(f"{k.table} {k.key_id} {k.status()} enrolled {k.enrolled_at} {k.public_key}")
    return 0


def history(args: argparse.Namespace) -> int:
    """The coups in the archive; without ``--json`` in the notation people read (docs/notation.md): the local
    time with its zone, the result in words with the score Player first, the cards as ``10♠``."""
    zone = None
    if args.zone is not None:
        try:
            zone = ZoneInfo(args.zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"shoe-floor history: unknown time zone {args.zone!r:.40} (an IANA name)") from None
    with Archive(args.archive, create=False, read_only=True) as archive:
        coups = archive.coups(args.table, args.last)
    if args.json:
        for c in coups:
            sys.stdout.write(json.dumps(c) + "\n")
        return 0
    if not coups:
        print("no coups", file=sys.stderr)
        return 0
    print(f"{'table':<10} {'time':<23}  {'shoe':>4} {'coup':>4}  {'result':<24} {'player':<12} banker")
    for c in coups:
        result = ("cards set aside" if c.get("set_aside") else "void") if c["void"] else coup_result(c)
        coup = "-" if c["coup"] is None else c["coup"]
        print(
            f"{c['table']!s:<10} {local_time_text(str(c['ts']), zone):<23}  {c['shoe']!s:>4} {coup!s:>4}  {result:<24}"
            f" {hand_text(c['player']):<12} {hand_text(c['banker']):<12}".rstrip()
        )
    return 0


def coup_result(c: dict[str, Any]) -> str:
    return result_text(c.get("winner"), c.get("player_total"), c.get("banker_total"))


def alerts(args: argparse.Namespace) -> int:
    with Archive(args.archive, create=False, read_only=True) as archive:
        items = archive.feed(args.last, args.table)
    if args.json:
        for item in items:
            sys.stdout.write(item.to_json() + "\n")
        return 0
    if not items:
        print("no alerts", file=sys.stderr)
    for item in items:
        print(item.line())
    return 0


def errors(args: argparse.Namespace) -> int:
    """The dealer-error counts surveillance keeps (misdraws, early declares, voids, unreadable cards), per
    table and UTC hour, with the rate per 100 coups: what a ``dealer_errors`` alert was judged on."""
    with Archive(args.archive, create=False, read_only=True) as archive:
        if "dealer_errors" not in archive.tables_present():
            print("no dealer-error counts in this archive yet (shoe-floor serve keeps them)", file=sys.stderr)
            return 0
        rows = stats_of(archive, args.table)
    hours = sorted({r["hour"] for r in rows})[-args.hours :]
    rows = [r for r in rows if r["hour"] in hours]
    for r in rows:
        r["errors"] = sum(r[c] for c in ERROR_COUNTERS)
        r["per_100_coups"] = round(100 * r["errors"] / r["coups"], 2) if r["coups"] else None
    if args.json:
        for r in rows:
            sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")
        return 0
    if not rows:
        print("no coups counted", file=sys.stderr)
        return 0
    print(f"{'hour (UTC)':<18} {'table':<12} coups misdraw early void unread   /100")
    for r in rows:
        rate = "-" if r["per_100_coups"] is None else f"{r['per_100_coups']:.1f}"
        print(
            f"{r['hour']:<18} {r['table']:<12} {r['coups']:>5} {r['misdraws']:>7} {r['early_declares']:>5}"
            f" {r['voids']:>4} {r['unreadable']:>6} {rate:>6}"
        )
    return 0


def faults(args: argparse.Namespace) -> int:
    """The money's faults surveillance counts per table and quarter hour, added up per shift, with their rates
    per 100 coups and per 1,000 wagers: what a ``money_faults`` alert was judged on."""
    plan, start, end = _shift_range(args)
    if args.by_dealer:
        return _faults_by_dealer(args, plan, start, end)
    with Archive(args.archive, create=False, read_only=True) as archive:
        rows = fault_rates(archive, plan, start, end, args.table)
    if args.json:
        return _json_lines(row.to_dict() for row in rows)
    if not rows:
        print("no wagers or coups counted in that time (shoe-floor serve counts them)", file=sys.stderr)
        return 0
    print(f"{'shift':<24} {'table':<12} coups wagers past-post pulled mispay {'mispaid':>11} foreign stolen")
    for r in rows:
        c = r.counts
        print(
            f"{r.shift.name:<24} {r.table:<12} {c['coups']:>5} {c['wagers']:>6} {c['past_posts']:>9}"
            f" {c['pulled_bets']:>6} {c['mispays']:>6} {money_text(c['mispay_cents']):>11}"
            f" {c['foreign_chips']:>7} {c['stolen_chips']:>6}"
        )
    return 0


def _faults_by_dealer(args: argparse.Namespace, plan: ShiftPlan, start: datetime, end: datetime) -> int:
    """``faults --by-dealer``: each dealer's coups and faults per table and shift (floor/dealer_faults.py)."""
    with Archive(args.archive, create=False, read_only=True) as archive:
        rows = dealer_faults(archive.records_of_kinds(DEALER_KINDS, args.table), plan, start, end, args.table)
    if args.json:
        return _json_lines(row.to_dict() for row in rows)
    if not rows:
        print("no coups or faults in that time", file=sys.stderr)
        return 0
    print(f"{'shift':<24} {'table':<12} {'dealer':<12} coups misdraw past-post mispay {'mispaid':>11} void")
    for r in rows:
        c = r.counts
        print(
            f"{r.shift.name:<24} {r.table:<12} {r.dealer or '(none)':<12} {c['coups']:>5} {c['misdraws']:>7}"
            f" {c['past_posts']:>9} {c['mispays']:>6} {money_text(c['mispay_cents']):>11} {c['voids']:>4}"
        )
    return 0


def verify(args: argparse.Namespace) -> int:
    """Every stored record: its hash chain and its signature (by a key enrolled for its table). One line per
    problem, one per table, and a summary; exit 0 only when all is well."""
    with Archive(args.archive, create=False, read_only=True) as archive:
        archive_id = archive.archive_id
        reports = archive.verify(args.table)
    reports = [r for r in reports if r.records or args.table is None]
    for r in reports:
        if args.json:
            print(json.dumps(r.to_dict()))
            continue
        for problem in r.problems:
            print(problem)
        gaps = ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in r.gaps) or "none"
        broken = ", ".join(map(str, r.broken)) or "none"
        forged = f", forged {len(r.forged)}" if r.forged else ""
        state = "OK" if r.ok else "PROBLEM"
        print(
            f"table {r.table}: {r.records} records, head {r.head}, last {r.last},"
            f" gaps {gaps}, broken links {broken}{forged}: {state}"
        )
    if not args.json:
        if not reports:
            print("archive holds no records" + (f" of table {args.table}" if args.table else ""))
        bad = sum(len(r.problems) for r in reports)
        print(f"archive {archive_id}: {sum(r.records for r in reports)} records, {len(reports)} tables, {bad} bad")
    return 0 if all(r.ok for r in reports) else 1


def report(args: argparse.Namespace) -> int:
    """Each table's money per shift (floor/accounting.py), then the floor's per shift (``"total": true``,
    ``"table": null``)."""
    plan, start, end = _shift_range(args)
    with Archive(args.archive, create=False, read_only=True) as archive:
        figures = shift_report(archive, plan, start, end, args.table)
    lines = [*figures, *floor_totals(figures)]
    if args.json:
        return _json_lines(f.to_dict() for f in lines)
    if not figures:
        print("no money in these shifts" + (f" at table {args.table}" if args.table else ""), file=sys.stderr)
        return 0
    print(
        f"{'shift':<22} {'table':<10} {'handle':>13} {'win':>12} {'hold':>7} {'theo':>11} {'95 % interval':>25}"
        f" {'collected':>10} {'uncollected':>11} {'coups':>5}"
    )
    for f in lines:
        print(_report_line(f))
    return 0


def _report_line(f: ShiftFigures) -> str:
    hold = "-" if f.hold_pct is None else f"{f.hold_pct:.2f}%"
    low, high = (money_text(round(x)) for x in f.interval)
    interval = f"{low}..{high}" + (" OUTSIDE" if f.outside else "")
    return (
        f"{f.shift:<22} {f.table or 'FLOOR':<10} {money_text(f.handle):>13} {money_text(f.win):>12} {hold:>7}"
        f" {money_text(round(f.theo_cents)):>11} {interval:>25} {money_text(f.commission_collected):>10}"
        f" {money_text(f.commission_uncollected):>11} {f.coups:>5}"
    )


def rate(args: argparse.Namespace) -> int:
    """Seat sessions (ratings), oldest first."""
    since = None if args.since is None else _time(args, "--since", args.since)
    with Archive(args.archive, create=False, read_only=True) as archive:
        sessions = ratings(archive, args.table, since, args.open, args.decisions_per_hour)
    if args.json:
        return _json_lines(x.to_dict() for x in sessions)
    if not sessions:
        print("no seat sessions", file=sys.stderr)
        return 0
    print(
        f"{'table':<10} {'seat':>4} {'start (UTC)':<19} {'end':<8} {'hours':>5} {'coups':>5} {'wagered':>12}"
        f" {'avg bet':>10} {'usual theo':>10} {'exact theo':>10} {'win':>11} {'commission':>10}"
    )
    for x in sessions:
        end = "open" if x.end is None else x.end[11:19]
        print(
            f"{x.table:<10} {x.seat:>4} {x.start[:19].replace('T', ' '):<19} {end:<8} {x.hours:>5.2f} {x.coups:>5}"
            f" {money_text(x.wagered):>12} {money_text(x.average_bet):>10}"
            f" {money_text(round(x.usual_theo_cents)):>10} {money_text(round(x.exact_theo_cents)):>10}"
            f" {money_text(x.win):>11} {money_text(x.commission):>10}"
        )
    print(
        f"usual theo: average bet x {args.decisions_per_hour} decisions/hour x hours x the wagers' house edge off the"
        " top; exact theo: the sum of each wager's theo at its betting time"
    )
    return 0


def cashlog(args: argparse.Namespace) -> int:
    """The gaming day's multiple transaction log (each cash buy-in over the floor's threshold), then each
    player's cash in that day across the tables (a carded player by reference, an uncarded one by table and
    seat)."""
    with Archive(args.archive, create=False, read_only=True) as archive:
        entries, totals = cash_day(archive, args.day)
    if args.json:
        return _json_lines([*(mtl_line(e) for e in entries), *(day_line(t) for t in totals)])
    if not entries and not totals:
        print(f"no cash buy-ins on gaming day {args.day}", file=sys.stderr)
        return 0
    print(f"multiple transaction log, gaming day {args.day}")
    print(f"{'time (UTC)':<19} {'table':<10} {'seat':>4} {'player':<16} {'cash in':>12} {'day so far':>12}")
    for e in entries:
        print(
            f"{e.at[:19].replace('T', ' '):<19} {e.table:<10} {e.seat:>4} {e.player_ref or 'uncarded':<16}"
            f" {money_text(e.cents):>12} {money_text(e.day_cash):>12}"
        )
    print(f"cash in per player, gaming day {args.day}")
    print(f"{'player':<24} {'cash in':>12} {'buy-ins':>7} {'tables':>6}")
    for t in totals:
        who = t.player_ref if t.player_ref is not None else f"uncarded, {t.table} seat {t.seat}"
        print(f"{who:<24} {money_text(t.cash):>12} {t.buy_ins:>7} {t.tables:>6}")
    return 0


def slips(args: argparse.Namespace) -> int:
    """The rating slips across the tables (floor/slips.py), in the order they started."""
    since = None if args.since is None else _time(args, "--since", args.since)
    try:
        estimate = Estimate(args.decisions_per_hour, args.house_edge)
    except ValueError as exc:
        raise UsageError(f"shoe-floor slips: {exc}") from None
    with Archive(args.archive, create=False, read_only=True) as archive:
        found = floor_slips(
            archive,
            table=args.table,
            player=args.player,
            since=since,
            window_seconds=args.window_minutes * 60,
            estimate=estimate,
            include_open=args.open,
        )
    if args.json:
        for slip in found:
            sys.stdout.write(slip_line(slip, table=True) + "\n")
        return 0
    if not found:
        print("no closed rating slips", file=sys.stderr)
        return 0
    sys.stdout.write("".join(line + "\n" for line in slips_table(found, with_table=True)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("shoe-floor", lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = parser().parse_args(argv)
        return int(args.handler(args))
    except (UsageError, ArchiveError) as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
