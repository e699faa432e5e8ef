"""``shoe-controller board``: the scoreboard in its own process, fed by the table's public feed (what the
``shoe-controller-board`` service starts). No device, no journal: it serves the page and its event stream on
the LAN from the table process's ``feed.sock``."""

from __future__ import annotations

import argparse
import logging
import sys

from controller.commands import Subparsers
from controller.commands.run import add_common_options, settings_from_args, setup_logging
from controller.config import DEFAULT_PATH


def register(sub: Subparsers) -> None:
    p = sub.add_parser("board", help="serve the scoreboard (its own process, fed by the table)", description=__doc__)
    p.add_argument("--config", metavar="FILE", help=f"the table's configuration file (default {DEFAULT_PATH})")
    p.add_argument("--journal", metavar="PATH", help="the table's journal (its directory holds the feed by default)")
    add_common_options(p)
    p.add_argument("--scoreboard", metavar="HOST:PORT", help="serve the scoreboard here (overrides scoreboard.bind)")
    p.add_argument(
        "--dealer",
        metavar="HOST:PORT",
        help='serve the dealer screen here (overrides board.dealer_listen; "" for none)',
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from controller.board.process import BoardProcess
    from controller.companions import CompanionError

    settings = settings_from_args(args, journal=False)
    settings = settings.with_board(dealer_listen=args.dealer)  # a bad address: ConfigError, one line, exit 2
    setup_logging(args.log_level or settings.service.log_level)
    try:
        BoardProcess(settings).run()
    except CompanionError as exc:
        print(f"shoe-controller: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # SIGTERM: a clean stop
        return 0 if exc.code in (None, 0, 128 + 15, 128 + 1) else int(exc.code or 1)
    logging.getLogger("controller").info("board stopped")
    return 0
