"""``shoe-controller link``: the floor link and the metrics in their own process (what the
``shoe-controller-link`` service starts). It reads the table's journal read-only and sends every record to
the floor's MQTT broker, each signed with the table's key (``--floor-key``/``floor.key_file``), serves the
table's Prometheus metrics, and hands the floor's ack, once it verified with the floor's public key
(``--floor-public-key``/``floor.floor_public_key``), to the table over the table's ``link.sock`` (the table
checks it again and stores it). No device; it never writes the journal. Without either key it does not
start (one line, exit 2)."""

from __future__ import annotations

import argparse
import logging
import sys

from controller.commands import Subparsers, UsageError
from controller.commands.run import add_common_options, add_floor_public_key_option, settings_from_args, setup_logging
from controller.config import DEFAULT_PATH


def register(sub: Subparsers) -> None:
    p = sub.add_parser("link", help="the floor link and metrics (their own process)", description=__doc__)
    p.add_argument("--config", metavar="FILE", help=f"the table's configuration file (default {DEFAULT_PATH})")
    p.add_argument("--journal", metavar="PATH", help="the table's journal, read only")
    add_common_options(p)
    p.add_argument(
        "--floor",
        metavar="URL",
        help="publish every record to the floor's MQTT broker (mqtt://host:port or mqtts://host:port)",
    )
    p.add_argument("--site", metavar="ID", help="the casino's id in the floor's topics (overrides floor.site)")
    p.add_argument("--table-id", metavar="ID", help="this table's id in the floor's topics (overrides floor.table)")
    p.add_argument(
        "--floor-key",
        metavar="FILE",
        help="the table's signing key (overrides floor.key_file; shoe-controller keygen makes one)",
    )
    add_floor_public_key_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from controller.companions import CompanionError
    from controller.link.floor_link import FloorKeyError, FloorLinkError, floor_public_key, signing_key
    from controller.link.process import LinkProcess

    settings = settings_from_args(args)
    if settings.floor.enabled:  # both keys, before anything starts: a link without them cannot do its job
        try:
            signing_key(settings.floor)
            floor_public_key(settings.floor)
        except FloorKeyError as exc:
            raise UsageError(f"shoe-controller link: {exc}") from None
    setup_logging(args.log_level or settings.service.log_level)
    try:
        LinkProcess(settings).run()
    except (CompanionError, FloorLinkError) as exc:
        print(f"shoe-controller: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # SIGTERM: a clean stop
        return 0 if exc.code in (None, 0, 128 + 15, 128 + 1) else int(exc.code or 1)
    logging.getLogger("controller").info("link stopped")
    return 0
