"""``shoe-controller keygen --out FILE``: make the table's signing key (``[floor] key_file``).

Writes a new Ed25519 private key to ``FILE`` (mode 0600; an existing file is never overwritten) and prints its
public key as one line ``ed25519:<base64>``, which the floor enrolls (``shoe-floor enroll --public-key``).

With ``--rotate-from OLD.key --table T`` it also hands the table over from its old key to the new one: a second
line, the key statement (the new public key signed by the old key) that ``shoe-floor enroll --statement FILE``
takes; ``--statement FILE`` writes that line to ``FILE`` instead of printing it. The old key and the table are
checked before anything is written. Every mistake is one line and exit code 2.
"""

from __future__ import annotations

import argparse
import os

from controller.commands import Subparsers, UsageError
from controller.keyfiles import load_private_key, write_private_key
from floor_protocol.signing import KeyStatement, format_public_key, generate_key
from floor_protocol.topics import ID_PATTERN


def register(sub: Subparsers) -> None:
    p = sub.add_parser("keygen", help="make the table's signing key (floor.key_file)", description=__doc__)
    p.add_argument("--out", metavar="FILE", required=True, help="where to write the new private key (mode 0600)")
    p.add_argument("--rotate-from", metavar="OLD.key", help="the table's current key: sign the new one with it")
    p.add_argument("--table", metavar="T", help="the table's id on the floor (floor.table); with --rotate-from")
    p.add_argument("--statement", metavar="FILE", help="write the key statement here instead of printing it")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    prog = "shoe-controller keygen"
    old = None
    if args.rotate_from is None:
        for option, value in (("--table", args.table), ("--statement", args.statement)):
            if value is not None:
                raise UsageError(f"{prog}: {option} goes with --rotate-from OLD.key")
    else:
        if args.table is None:
            raise UsageError(f"{prog}: --rotate-from needs --table T (the table whose key it is)")
        if not ID_PATTERN.fullmatch(args.table):
            raise UsageError(f"{prog}: --table {args.table[:40]!r} is not a table id of the floor's topics")
        try:
            old = load_private_key(args.rotate_from)
        except ValueError as exc:  # KeyFileError, SigningError
            raise UsageError(f"{prog}: --rotate-from {exc}") from None
        if args.statement is not None and os.path.lexists(args.statement):
            raise UsageError(f"{prog}: --statement {args.statement}: already exists")
        if os.path.abspath(args.rotate_from) == os.path.abspath(args.out):
            raise UsageError(f"{prog}: --out is the old key itself")
    key = generate_key()
    try:
        write_private_key(args.out, key)
    except ValueError as exc:  # KeyFileError
        raise UsageError(f"{prog}: --out {exc}") from None
    public = format_public_key(key)
    print(public)
    if old is not None:
        statement = KeyStatement.make(old, args.table, public).to_json()
        if args.statement is None:
            print(statement)
        else:
            try:
                with open(args.statement, "x", encoding="utf-8") as f:
                    f.write(statement + "\n")
            except OSError as exc:
                raise UsageError(f"{prog}: --statement {args.statement}: {exc.strerror or exc}") from None
    return 0
