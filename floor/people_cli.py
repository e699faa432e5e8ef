"""``shoe-floor staff``, ``shoe-floor user`` and ``shoe-floor audit``: the staff registry, the pit page's users and
the audit log of every change to them (floor/archive/staff.py).

  shoe-floor staff add --archive URL --id ID --name NAME --role ROLE [--badge UID] [--pin-file F] [--by WHO]
  shoe-floor staff disable|enable --archive URL --id ID [--by WHO]
  shoe-floor staff set-pin --archive URL --id ID [--pin-file F] [--by WHO]      (asks for it without a file)
  shoe-floor staff set-badge --archive URL --id ID (--badge UID | --none) [--by WHO]
  shoe-floor staff list --archive URL [--json]
  shoe-floor user add --archive URL --name NAME --role ROLE [--password-file F] [--by WHO]
  shoe-floor user disable|enable|unlock --archive URL --name NAME [--by WHO]
  shoe-floor user set-password --archive URL --name NAME [--password-file F] [--by WHO]
  shoe-floor user list --archive URL [--json]
  shoe-floor audit --archive URL [--subject staff:ID|user:NAME] [--last N] [--json]

A PIN or a password is never an argument (it would show in ``ps`` and the shell's history): it is read from a
file (its first line) or asked for twice on the terminal. ``--by`` names who makes the change in the audit log
(default: the operator's login name).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from commandline import UsageError
from floor.archive import PIT_ROLES, SQLITE, STAFF_ROLES, Archive, parse_url


def add_parsers(sub: Any, count: Callable[[str], int]) -> None:
    """Add ``staff``, ``user`` and ``audit`` to ``shoe-floor``'s subcommands (``count``: its whole-number type)."""
    st = sub.add_parser("staff", help="the staff registry: add, disable, enable, list, set a PIN or a badge")
    st_sub = st.add_subparsers(dest="action", required=True, parser_class=type(st))
    add = _command(st_sub, "add", "add a member of staff (active)", staff_add)
    add.add_argument("--id", dest="member", required=True, help="the staff id (the casino's employee number)")
    add.add_argument("--name", required=True, help="the name, as the pit reads it (never sent to a table)")
    add.add_argument("--role", required=True, choices=list(STAFF_ROLES))
    add.add_argument("--badge", metavar="UID", help="the badge's card UID in hexadecimal")
    add.add_argument("--pin-file", metavar="F", help="a file whose first line is the PIN (4-12 digits)")
    for action, what in (("disable", "disable a member (badge and PIN stop working)"), ("enable", "enable again")):
        c = _command(st_sub, action, what, staff_active)
        c.add_argument("--id", dest="member", required=True)
    pin = _command(st_sub, "set-pin", "set a member's PIN (asked for twice without --pin-file)", staff_pin)
    pin.add_argument("--id", dest="member", required=True)
    pin.add_argument("--pin-file", metavar="F", help="a file whose first line is the PIN (4-12 digits)")
    bd = _command(st_sub, "set-badge", "give a member a badge, or take it away", staff_badge)
    bd.add_argument("--id", dest="member", required=True)
    which = bd.add_mutually_exclusive_group(required=True)
    which.add_argument("--badge", metavar="UID", help="the badge's card UID in hexadecimal")
    which.add_argument("--none", action="store_true", help="take the member's badge away")
    ls = _command(st_sub, "list", "every member, active and disabled", staff_list, by=False)
    ls.add_argument("--json", action="store_true", help="one JSON object per member")

    us = sub.add_parser("user", help="the pit page's users: add, disable, enable, unlock, set a password, list")
    us_sub = us.add_subparsers(dest="action", required=True, parser_class=type(us))
    ua = _command(us_sub, "add", "add a pit user (asked for the password twice without --password-file)", user_add)
    ua.add_argument("--name", required=True, help="the user name they sign in with")
    ua.add_argument("--role", required=True, choices=list(PIT_ROLES))
    ua.add_argument("--password-file", metavar="F", help="a file whose first line is the password")
    for action, what in (
        ("disable", "disable a user (their sessions end at their next request)"),
        ("enable", "enable a user again"),
        ("unlock", "end a user's lock-out after failed sign-ins"),
    ):
        c = _command(us_sub, action, what, user_change)
        c.add_argument("--name", required=True)
    sp = _command(us_sub, "set-password", "set a user's password (asked for twice without a file)", user_password)
    sp.add_argument("--name", required=True)
    sp.add_argument("--password-file", metavar="F", help="a file whose first line is the password")
    ul = _command(us_sub, "list", "every pit user, active and disabled", user_list, by=False)
    ul.add_argument("--json", action="store_true", help="one JSON object per user")

    au = sub.add_parser("audit", help="the audit log: staff and user changes, the pit's sign-ins and actions")
    au.add_argument("--archive", required=True)
    au.add_argument("--subject", metavar="staff:ID|user:NAME", help="only this member's or user's rows")
    au.add_argument("--last", type=count, default=100, metavar="N", help="the last N rows (default 100)")
    au.add_argument("--json", action="store_true", help="one JSON object per row")
    au.set_defaults(handler=audit)


def _command(sub: Any, name: str, help: str, handler: Callable[[argparse.Namespace], int], *, by: bool = True) -> Any:
    p = sub.add_parser(name, help=help, allow_abbrev=False)  # --pin must not be taken for --pin-file
    p.add_argument("--archive", required=True, help="postgresql://user@host:port/db or sqlite:///path")
    if by:
        p.add_argument("--by", metavar="WHO", help="who makes the change, for the audit log (default: your login)")
    p.set_defaults(handler=handler)
    return p


def _actor(args: argparse.Namespace) -> str:
    if args.by is not None:
        if not 1 <= len(args.by) <= 64 or not args.by.isprintable():
            raise UsageError(f"shoe-floor {args.command} {args.action}: --by: 1 to 64 printable characters")
        return str(args.by)
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return f"uid {os.getuid()}"


def _open(args: argparse.Namespace) -> Archive:
    """The archive a change is made in (made, as ``enroll`` makes it, when a SQLite file does not exist yet)."""
    dialect, target = parse_url(args.archive)
    if dialect is SQLITE and not os.path.exists(target):
        print(f"shoe-floor {args.command}: made a new archive, {target}", file=sys.stderr)
    return Archive(args.archive)


def _secret(args: argparse.Namespace, path: str | None, what: str, *, ask: bool = True) -> str | None:
    """A PIN or password: the first line of the file at ``path``, or asked for twice on the terminal (``ask``);
    never an argument."""
    where = f"shoe-floor {args.command} {args.action}"
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                return f.readline(4096).rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{where}: {what} file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not ask:
        return None
    if not sys.stdin.isatty():
        raise UsageError(f"{where}: no terminal to ask for the {what} on: give --{what.lower()}-file F")
    try:
        first = getpass.getpass(f"{what}: ")
        second = getpass.getpass(f"{what} again: ")
    except EOFError:
        raise UsageError(f"{where}: no {what} given") from None
    if first != second:
        raise UsageError(f"{where}: the two {what}s differ; nothing changed")
    return first


def staff_add(args: argparse.Namespace) -> int:
    pin = _secret(args, args.pin_file, "PIN", ask=False)
    with _open(args) as archive:
        m = archive.people.add_staff(args.member, args.name, args.role, actor=_actor(args), badge=args.badge, pin=pin)
    badge = f", badge {m.badge}" if m.badge else ""
    print(f"staff {m.id} added: {m.role}{badge}" + (", PIN set" if m.has_pin else ""))
    return 0


def staff_active(args: argparse.Namespace) -> int:
    active = args.action == "enable"
    with _open(args) as archive:
        m = archive.people.set_active(args.member, active, actor=_actor(args))
    print(f"staff {m.id} {'enabled' if m.active else 'disabled'}")
    return 0


def staff_pin(args: argparse.Namespace) -> int:
    pin = _secret(args, args.pin_file, "PIN")
    assert pin is not None
    with _open(args) as archive:
        m = archive.people.set_pin(args.member, pin, actor=_actor(args))
    print(f"staff {m.id}: PIN set")
    return 0


def staff_badge(args: argparse.Namespace) -> int:
    with _open(args) as archive:
        m = archive.people.set_badge(args.member, None if args.none else args.badge, actor=_actor(args))
    print(f"staff {m.id}: " + (f"badge {m.badge}" if m.badge else "no badge"))
    return 0


def staff_list(args: argparse.Namespace) -> int:
    with Archive(args.archive, create=False, read_only=True) as archive:
        members = archive.people.staff()
    if args.json:
        for m in members:
            sys.stdout.write(json.dumps(m.to_dict(), separators=(",", ":")) + "\n")
        return 0
    if not members:
        print("no staff in the registry", file=sys.stderr)
        return 0
    print(f"{'id':<12} {'role':<13} {'state':<9} {'badge':<21} {'pin':<4} name")
    for m in members:
        state = "active" if m.active else "disabled"
        print(f"{m.id:<12} {m.role:<13} {state:<9} {m.badge or '-':<21} {'set' if m.has_pin else '-':<4} {m.name}")
    return 0


def user_add(args: argparse.Namespace) -> int:
    password = _secret(args, args.password_file, "password")
    assert password is not None
    with _open(args) as archive:
        u = archive.people.add_user(args.name, args.role, password, actor=_actor(args))
    print(f"user {u.name} added: {u.role}")
    return 0


def user_change(args: argparse.Namespace) -> int:
    with _open(args) as archive:
        if args.action == "unlock":
            archive.people.unlock(args.name, actor=_actor(args))
            print(f"user {args.name} unlocked")
            return 0
        u = archive.people.set_user_active(args.name, args.action == "enable", actor=_actor(args))
    print(f"user {u.name} {'enabled' if u.active else 'disabled'}")
    return 0


def user_password(args: argparse.Namespace) -> int:
    password = _secret(args, args.password_file, "password")
    assert password is not None
    with _open(args) as archive:
        u = archive.people.set_password(args.name, password, actor=_actor(args))
    print(f"user {u.name}: password set")
    return 0


def user_list(args: argparse.Namespace) -> int:
    with Archive(args.archive, create=False, read_only=True) as archive:
        users = archive.people.users()
    if args.json:
        for u in users:
            sys.stdout.write(json.dumps(u.to_dict(), separators=(",", ":")) + "\n")
        return 0
    if not users:
        print("no pit users (the pit serves only on loopback without them)", file=sys.stderr)
        return 0
    print(f"{'name':<20} {'role':<13} state")
    for u in users:
        print(f"{u.name:<20} {u.role:<13} {'active' if u.active else 'disabled'}")
    return 0


def audit(args: argparse.Namespace) -> int:
    with Archive(args.archive, create=False, read_only=True) as archive:
        entries = archive.people.audit_log(args.last, args.subject)
    if args.json:
        for e in entries:
            sys.stdout.write(json.dumps(e.to_dict(), separators=(",", ":")) + "\n")
        return 0
    if not entries:
        print("no audit rows", file=sys.stderr)
    for e in entries:
        print(e.line())
    return 0
