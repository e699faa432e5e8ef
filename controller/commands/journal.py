"""``shoe-controller journal verify [--journal PATH]``: check the journal's hash chain and SQLite integrity.

Opens the journal read-only, so it runs beside the live daemon. Prints ``PATH: intact, N records`` and
exits 0; or prints each problem found and exits 1; a file that cannot be opened as a journal (missing,
damaged, newer schema) is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse

from controller.commands import Subparsers, UsageError
from controller.journal import DEFAULT_JOURNAL_PATH, Journal, JournalError


def add_journal_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--journal",
        default=DEFAULT_JOURNAL_PATH,
        metavar="PATH",
        help=f"the journal file (default: {DEFAULT_JOURNAL_PATH})",
    )


def open_read_only(path: str) -> Journal:
    """The journal at ``path`` opened read-only; a JournalError becomes a one-line UsageError."""
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
    with open_read_only(args.journal) as journal:
        problems = journal.verify()
        count = journal.count()
    if not problems:
        print(f"{args.journal}: intact, {count} records")
        return 0
    for problem in problems:
        print(f"{args.journal}: {problem}")
    print(f"{args.journal}: NOT INTACT, {len(problems)} problem(s) in {count} records")
    return 1
