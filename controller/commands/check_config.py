"""``shoe-controller check-config [FILE]``: validate the daemon's configuration file without starting it.

Prints ``FILE: ok`` and a short summary (table, shoe port and dialect, journal, pin factory) and exits 0;
a bad file prints one line naming the file and the key (``FILE: table.decks: must be 1-8, got 9``) on
stderr and exits 2. When ``[spots]`` names a chip registry (``chips``), that file is checked too
(:mod:`controller.chipfile`; ``CHIPS: range 3: value: ...``), and the summary says how many ranges it has.
A chip tray (``[tray] port``) needs that registry: without ``[spots] chips`` the file is refused in one line
(``FILE: tray.port: a chip tray needs the chip registry: set spots.chips``).
A floor link turned on needs the table's signing key (``floor.key_file``, a key file) and the floor's public key
(``floor.floor_public_key``), as ``shoe-controller link`` does at its start, and each file it names
(``password_file``, ``ca_file``, ``cert_file``, ``cert_key_file``) must be there; a file this user may not read
(the link's own user's, docs/install.md) is left to the link.
"""

from __future__ import annotations

import argparse
import os
import stat

from controller.chipfile import ChipFileError, load_chips
from controller.commands import Subparsers, UsageError
from controller.config import DEFAULT_PATH, ConfigError, FloorSection, load_config


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
    problem = _floor_problem(settings.floor)
    if problem is not None:
        raise UsageError(f"{args.path}: {problem}")
    print(f"{args.path}: ok")
    for line in settings.summary():
        print(f"  {line}")
    if registry is not None:
        print(f"  chips:      {chips}: {len(registry)} ranges")
    return 0


def _floor_problem(floor: FloorSection) -> str | None:
    """What keeps the floor link from starting with these settings (its own words), or None."""
    if not floor.enabled:
        return None
    from controller.link.floor_link import FloorKeyError, floor_public_key, signing_key
    from floor_protocol.signing import key_id

    readable = True
    if floor.key_file is not None:
        try:
            with open(floor.key_file, "rb"):
                pass
        except PermissionError:  # the link's user's key, in its 0700 folder: the link checks it
            readable = False
        except OSError:
            pass  # signing_key names the problem
    try:
        own = signing_key(floor) if readable else None
        theirs = floor_public_key(floor)
    except FloorKeyError as exc:
        return str(exc)
    if own is not None and key_id(own) == key_id(theirs):
        return (
            f"floor.floor_public_key: is this table's own key (key_file's, {key_id(own)}), not the floor's:"
            " the floor's is what shoe-floor keygen printed"
        )
    for key in ("password_file", "ca_file", "cert_file", "cert_key_file"):
        path = getattr(floor, key)
        if path is None:
            continue
        try:
            if stat.S_ISDIR(os.stat(path).st_mode):
                return f"floor.{key}: {path} is a directory, not a file"
        except (FileNotFoundError, NotADirectoryError):
            return f"floor.{key}: {path} does not exist (the link will not start without it)"
        except OSError:  # the link's own user's folder: the link reads it
            continue
    return None
