"""``shoe-controller journal verify [--journal PATH | --config FILE]``: check the journal's hash chain and
SQLite integrity. ``shoe-controller journal archive --before-days N --out FILE``: write whole shoes older
than N days to a file, then prune them from the journal (on a stopped table). ``shoe-controller journal
backup [--out FILE | --dir DIR [--keep N]]``: a consistent copy while the table deals, verified
(:mod:`controller.journal.backup`); without ``--out`` a dated copy in ``--dir`` or ``[backup] dir``, the newest
``keep`` kept.

Opens the journal read-only, so it runs beside the live daemon. Prints ``PATH: intact, N records`` and
exits 0; or prints each problem found and exits 1; a file that cannot be opened as a journal (missing,
damaged, newer schema, not a regular file) is one line on stderr and exit 2.

Which journal: ``--journal PATH``; else ``journal.path`` of ``--config FILE``; else that of the daemon's
default configuration file when it exists; else the built-in default. The same for every command that
reads the journal (``history`` too), so they read the journal the daemon writes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from datetime import UTC, datetime, timedelta

from controller.commands import Subparsers, UsageError
from controller.config import DEFAULT_JOURNAL_PATH, DEFAULT_PATH, Settings, default_settings, load_config
from controller.journal import Journal, JournalError
from controller.journal.backup import BackupError, copy_journal, dated_name, rotate
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


def _settings(args: argparse.Namespace) -> Settings:
    if args.config is not None:
        return load_config(args.config)
    if os.path.exists(DEFAULT_PATH):
        return load_config(DEFAULT_PATH)
    return default_settings()


def journal_path(args: argparse.Namespace) -> str:
    """The journal the command reads: ``--journal``, else the configuration's ``journal.path``."""
    if args.journal is not None:
        return str(args.journal)
    return str(_settings(args).journal.path)


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
    a = actions.add_parser(
        "archive",
        help="write old shoes to a file, then prune them (stopped table)",
        description="Write every whole shoe older than --before-days to --out (JSON Lines, one record as the"
        " floor receives it per line, fsynced), then prune those shoes from the journal. The newest shoe is"
        " never pruned; records the floor has not acknowledged (when a floor link stored an ack) are kept."
        " Run it on a stopped table: the daemon is the journal's only writer.",
    )
    add_journal_argument(a)
    a.add_argument("--before-days", metavar="N", type=_days, required=True, help="archive shoes older than N days")
    a.add_argument("--out", metavar="FILE", required=True, help="the archive file to write (must not exist)")
    a.set_defaults(handler=run_archive)
    b = actions.add_parser(
        "backup",
        help="a consistent, verified copy of the journal (while the table deals)",
        description="Copy the journal with SQLite's online backup (consistent while the daemon writes), then"
        " verify the copy's chain; a copy that does not verify is deleted (exit 1). --out FILE writes that file"
        " (it must not exist); else a dated copy journal-YYYYMMDDTHHMMSSZ.db goes into --dir (default: [backup]"
        " dir of the configuration) and only the newest --keep (default [backup] keep) dated copies stay there.",
    )
    add_journal_argument(b)
    dest = b.add_mutually_exclusive_group()
    dest.add_argument("--out", metavar="FILE", help="the copy to write (must not exist)")
    dest.add_argument("--dir", metavar="DIR", help="write a dated copy here (default: [backup] dir)")
    b.add_argument("--keep", metavar="N", type=_keep, help="dated copies to keep in the directory")
    b.set_defaults(handler=run_backup)


def _days(text: str) -> int:
    if not text.isdigit() or int(text) > 36500:
        raise argparse.ArgumentTypeError(f"must be a whole number of days (0-36500), got {text!r}")
    return int(text)


def _keep(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise argparse.ArgumentTypeError(f"must be a whole number of copies (1-10000), got {text!r}")
    return int(text)


def run_backup(args: argparse.Namespace) -> int:
    path = journal_path(args)
    deleted: list[str] = []
    try:
        check_regular(path)
    except UserFileError as exc:
        raise UsageError(f"shoe-controller: journal {exc}") from None
    if args.out is not None:
        if args.keep is not None:
            raise UsageError("shoe-controller: --keep goes with --dir (a dated copy), not with --out")
        out = str(args.out)
        keep = None
    else:
        settings = _settings(args)
        directory = str(args.dir) if args.dir is not None else str(settings.backup.dir)
        keep = args.keep if args.keep is not None else settings.backup.keep
        if not os.path.isdir(directory):
            raise UsageError(f"shoe-controller: backup directory {directory} does not exist")
        out = os.path.join(directory, dated_name(datetime.now(UTC)))
    try:
        made = copy_journal(path, out)
    except BackupError as exc:
        print(f"shoe-controller: backup of {path}: {exc}", file=sys.stderr)
        return 1
    if keep is not None:
        deleted = rotate(os.path.dirname(out), keep)
    print(f"{path}: backed up to {made.path}: {made.records} records, {made.bytes} bytes, verified")
    for old in deleted:
        print(f"{path}: deleted the old copy {old}")
    return 0


def run_archive(args: argparse.Namespace) -> int:
    path = journal_path(args)
    settings = _settings(args)
    # The floor link's table id when one is configured ([floor] table), else the table's name.
    table_id = str(getattr(getattr(settings, "floor", None), "table", "") or settings.table.name)
    out = str(args.out)
    if os.path.lexists(out):
        raise UsageError(f"shoe-controller: {out} already exists: choose a new archive file")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise UsageError(f"shoe-controller: directory {parent} does not exist")
    try:
        check_regular(path)
    except UserFileError as exc:
        raise UsageError(f"shoe-controller: journal {exc}") from None
    try:
        journal = Journal.open(path, create=False)
    except JournalError as exc:
        raise UsageError(f"shoe-controller: {exc}") from None
    with journal:
        ack = journal.floor_ack()
        cutoff = datetime.now(UTC) - timedelta(days=args.before_days)
        plan = journal.prunable(older_than=cutoff, ack=ack, floor=ack is not None)
        if plan is None:
            print(
                f"{path}: nothing to archive (no whole shoe older than {args.before_days} days"
                f"{', acknowledged by the floor' if ack is not None else ''}, besides the newest)"
            )
            return 0
        before, shoes = plan
        first = journal.anchor()[0] + 1
        tmp = f"{out}.partial"
        try:
            with open(tmp, "x", encoding="utf-8") as f:
                for record in journal.records(after=first - 1):
                    if record.id >= before:
                        break
                    f.write(record.for_floor(table_id).to_json() + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, out)
            fd = os.open(parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise UsageError(f"shoe-controller: cannot write {out}: {exc.strerror or exc}; nothing pruned") from None
        try:
            deleted = journal.prune(before, keep_from_ack=ack, archive=os.path.abspath(out))
        except (JournalError, ValueError) as exc:
            raise UsageError(f"shoe-controller: archived to {out} but the prune failed: {exc}") from None
    print(f"{path}: archived records {first}-{before - 1} ({shoes} shoes) to {out}; pruned {deleted} records")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    path = journal_path(args)
    with open_read_only(path) as journal:
        problems = journal.verify()
        count = journal.count()
        ack = journal.floor_ack_record()
    # The floor's stored (verified) ack: what retention may prune up to, and which archive said so.
    held = None if ack is None else f"{path}: floor ack: archive {ack.archive} holds records through {ack.seq}"
    if not problems:
        print(f"{path}: intact, {count} records")
        if held is not None:
            print(held)
        return 0
    for problem in problems:
        print(f"{path}: {problem}")
    if held is not None:
        print(held)
    print(f"{path}: NOT INTACT, {len(problems)} problem(s) in {count} records")
    return 1
