"""``shoe-controller check-config [FILE]``: validate the daemon's configuration file without starting it.

Prints ``FILE: ok`` and a short summary (table, shoe port and dialect, journal, pin factory) and exits 0;
a bad file prints one line naming the file and the key (``FILE: table.decks: must be 1-8, got 9``) on
stderr and exits 2. When ``[spots]`` names a chip registry (``chips``), that file is checked too
(:mod:`controller.chipfile`; ``CHIPS: range 3: value: ...``), and the summary says how many ranges it has.
"""

from __future__ import annotations

import argparse

from controller.chipfile import ChipFileError, load_chips
from controller.commands import Subparsers, UsageError
from controller.config import DEFAULT_PATH, ConfigError, load_config


def register(sub: Subparsers) -> None:
    p = sub.add_parser("check-config", help="validate a configuration file", description=__doc__)
    p.add_argument(
        "path",
        nargs="?",
        default=str(DEFAULT_PATH),
        metavar="FILE",
        help=f"the configuration file (default: {DEFAULT_PATH})",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_config(args.path)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    chips = settings.spots.chips
    registry = None
    if chips is not None:
        try:
            registry = load_chips(chips)
        except ChipFileError as error:
            raise UsageError(str(error)) from None
    print(f"{args.path}: ok")
    for line in settings.summary():
        print(f"  {line}")
    if registry is not None:
        print(f"  chips:      {chips}: {len(registry)} ranges")
    return 0
