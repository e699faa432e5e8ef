"""``shoe-controller run``: the table daemon (what the systemd service starts)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from controller.commands import Subparsers, UsageError
from controller.config import DEFAULT_PATH, Settings, default_settings, load_config
from controller.userfile import UserFileError, check_regular


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help="run the table daemon", description=__doc__)
    add_daemon_options(p)
    p.add_argument(
        "--config",
        metavar="FILE",
        help=f"configuration file (default {DEFAULT_PATH} if it exists, else built-in defaults)",
    )
    add_floor_public_key_option(p)
    p.add_argument(
        "--spots",
        metavar="PORT",
        help="the bet-spot reader's port: device path, pty or pyserial URL (overrides spots.port; needs spots.chips)",
    )
    p.add_argument(
        "--tray",
        metavar="PORT",
        help="the chip tray's port: device path, pty or pyserial URL (overrides tray.port; needs spots.chips)",
    )
    p.add_argument(
        "--table-id",
        metavar="ID",
        help="this table's id on the floor (overrides floor.table): an ack of another table is not stored",
    )
    p.set_defaults(handler=run)


def add_floor_public_key_option(p: argparse.ArgumentParser) -> None:
    """``--floor-public-key KEY``: whichever process receives the floor's acks verifies them with it."""
    p.add_argument(
        "--floor-public-key",
        metavar="KEY",
        help="the floor's public key, ed25519:... (overrides floor.floor_public_key): acks are believed only when it"
        " signed them",
    )


def add_daemon_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", metavar="URL", help="the shoe's port: device path or pyserial URL (socket://h:p)")
    p.add_argument("--dialect", choices=("binary", "ascii"), help="the shoe's protocol")
    p.add_argument("--journal", metavar="PATH", help="the journal's SQLite file")
    p.add_argument("--pin-factory", choices=("lgpio", "rpigpio", "native", "mock"), help="GPIO backend")
    add_common_options(p)
    p.add_argument("--reveal", choices=("on_read", "on_declare"), help="scoreboard reveal (on_declare: squeeze)")


def add_common_options(p: argparse.ArgumentParser) -> None:
    """What the table and its two companions (board, link) all take: their one configuration file."""
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), help="log level")
    p.add_argument(
        "--feed-dir",
        metavar="DIR",
        help="the directory of the table's feed sockets (overrides feed.dir; default: the journal's directory)",
    )


def settings_from_args(args: argparse.Namespace, *, journal: bool = True) -> Settings:
    """The settings of ``--config`` (or the default file, or the defaults) with the command line's overrides;
    with ``journal`` the journal's path is checked (the board has no business with it: it cannot see it)."""
    path = getattr(args, "config", None)
    if path is not None:
        settings = load_config(path)
    elif os.path.exists(DEFAULT_PATH):
        settings = load_config(DEFAULT_PATH)
    else:
        settings = default_settings()
    settings = settings.with_overrides(
        port=getattr(args, "port", None),
        dialect=getattr(args, "dialect", None),
        journal=getattr(args, "journal", None),
        pin_factory=getattr(args, "pin_factory", None),
        feed_dir=getattr(args, "feed_dir", None),
        spots=getattr(args, "spots", None),
        tray=getattr(args, "tray", None),
    )
    if journal:
        check_journal_file(settings.journal.path)
    settings = settings.with_floor(
        broker=getattr(args, "floor", None),
        site=getattr(args, "site", None),
        table=getattr(args, "table_id", None),
        key_file=getattr(args, "floor_key", None),
        floor_public_key=getattr(args, "floor_public_key", None),
    )
    return settings.with_scoreboard(bind=getattr(args, "scoreboard", None), reveal=getattr(args, "reveal", None))


#: syslog priorities (sd-daemon(3)) for the logging levels, highest level first: what ``journalctl -p`` filters on.
JOURNALD_PRIORITY = (
    (logging.CRITICAL, 2),  # crit
    (logging.ERROR, 3),  # err
    (logging.WARNING, 4),  # warning
    (logging.INFO, 6),  # info
)


class JournaldFormatter(logging.Formatter):
    """Every line of a record gets a ``<N>`` priority prefix, which journald takes off and keeps as the
    entry's PRIORITY (a traceback's lines keep the record's priority too); no timestamp, journald adds it."""

    def __init__(self) -> None:
        super().__init__("%(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        priority = next((p for level, p in JOURNALD_PRIORITY if record.levelno >= level), 7)  # else debug
        return "\n".join(f"<{priority}>{line}" for line in super().format(record).splitlines() or [""])


def stderr_is_journal(environ: Mapping[str, str], stream: TextIO) -> bool:
    """True when *stream* is the journald stream systemd connected (``JOURNAL_STREAM`` names its device
    and inode, systemd.exec(5)); false for a shell, a pipe or a file even if the variable was inherited."""
    value = environ.get("JOURNAL_STREAM", "")
    try:
        dev, ino = (int(part) for part in value.split(":"))
        st = os.fstat(stream.fileno())
    except (ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def log_handler(environ: Mapping[str, str], stream: TextIO) -> logging.Handler:
    """A handler for *stream*: journald priorities and no timestamp when it is the journal, else plain
    lines with a timestamp."""
    handler = logging.StreamHandler(stream)
    if stderr_is_journal(environ, stream):
        handler.setFormatter(JournaldFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    return handler


def check_journal_file(path: str | os.PathLike[str]) -> None:
    """Refuse a journal path that exists and is not a regular file (a FIFO would block SQLite's open)."""
    try:
        check_regular(path)
    except UserFileError as exc:
        raise UsageError(f"shoe-controller: journal {exc}") from None


def setup_logging(level: str) -> None:
    """The daemon's logging: to stderr, which systemd connects to the journal."""
    handler = log_handler(os.environ, sys.stderr)
    logging.basicConfig(level=getattr(logging, level.upper()), handlers=[handler], force=True)


def run(args: argparse.Namespace) -> int:
    from controller.journal import JournalError
    from controller.link.floor_link import FloorLinkError
    from controller.table.daemon import Daemon
    from controller.table.panel import PanelError

    settings = settings_from_args(args)
    chips = None
    if settings.spots.chips is not None and (settings.spots.enabled or settings.tray.enabled):
        from controller.chipfile import ChipFileError, load_chips

        try:
            chips = load_chips(settings.spots.chips)  # a bad registry is the user's mistake: one line, exit 2
        except ChipFileError as exc:
            raise UsageError(f"shoe-controller: chip registry {exc}") from None
    setup_logging(args.log_level or settings.service.log_level)
    for line in settings.summary():
        logging.getLogger("controller").info("%s", line)
    daemon = Daemon(settings, chips=chips)
    try:
        daemon.run()
    except (JournalError, PanelError, FloorLinkError) as exc:
        print(f"shoe-controller: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except SystemExit as exc:  # SIGTERM: a clean stop
        return 0 if exc.code in (None, 0, 128 + 15, 128 + 1) else int(exc.code or 1)
    return 0
