"""``shoe-controller journal verify [--journal PATH | --config FILE]``: check the journal's hash chain and
SQLite integrity.

Opens the journal read-only, so it runs beside the live daemon. Prints ``PATH: intact, N records`` and
exits 0; or prints each problem found and exits 1; a file that cannot be opened as a journal (missing,
damaged, newer schema, not a regular file) is one line on stderr and exit 2.

Which journal: ``--journal PATH``; else ``journal.path`` of ``--config FILE``; else that of the daemon's
default configuration file when it exists; else the built-in default. The same for every command that
reads the journal (``history`` too), so they read the journal the daemon writes.
"""

from __future__ import annotations

import argparse
import os

from controller.commands import Subparsers, UsageError
from controller.config import DEFAULT_JOURNAL_PATH, DEFAULT_PATH, default_settings, load_config
from controller.journal import Journal, JournalError
from controller.userfile import UserFileError, check_regular


def add_journal_argument(parser: argparse.ArgumentParser) -> None:
    """``--journal PATH`` and ``--config FILE``; :func:`journal_path` resolves them."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--journal",
        metavar="PATH",
        help=f"the journal file (default: journal.path of the configuration, {DEFAULT_JOURNAL_PATH} unless set)",
    )
    where.add_argument(
        "--config",
        metavar="FILE",
        help=f"read journal.path from this configuration file (default: {DEFAULT_PATH} if it exists)",
    )


def journal_path(args: argparse.Namespace) -> str:
    """The journal the command reads: ``--journal``, else the configuration's ``journal.path``."""
    if args.journal is not None:
        return str(args.journal)
    if args.config is not None:
        settings = load_config(args.config)
    elif os.path.exists(DEFAULT_PATH):
        settings = load_config(DEFAULT_PATH)
    else:
        settings = default_settings()
    return str(settings.journal.path)


def open_read_only(path: str) -> Journal:
    """The journal at ``path`` opened read-only; a JournalError becomes a one-line UsageError.

    A FIFO or device there is refused before SQLite opens it (opening a FIFO would block)."""
    try:
        check_regular(path)
    except UserFileError as exc:
        raise UsageError(f"shoe-controller: journal {exc}") from None
    try:
        return Journal.open(path, create=False, read_only=True)
    except JournalError as exc:
        raise UsageError(f"shoe-controller: {exc}") from None


def register(sub: Subparsers) -> None:
    p = sub.add_parser("journal", help="check the table journal", description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    v = actions.add_parser(
        "verify", help="walk the hash chain and check the file", description="Verify the journal's chain."
    )
    add_journal_argument(v)
    v.set_defaults(handler=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    path = journal_path(args)
    with open_read_only(path) as journal:
        problems = journal.verify()
        count = journal.count()
    if not problems:
        print(f"{path}: intact, {count} records")
        return 0
    for problem in problems:
        print(f"{path}: {problem}")
    print(f"{path}: NOT INTACT, {len(problems)} problem(s) in {count} records")
    return 1
