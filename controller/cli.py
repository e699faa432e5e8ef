"""The ``shoe-controller`` command line: one argparse hub; each subcommand lives in controller/commands/.

Every subcommand module exposes ``register(subparsers)``, which adds its parser and sets ``handler`` to a
function ``(args) -> int``. User mistakes raise :class:`~controller.commands.UsageError` (or a ValueError
subclass from the core) and become one line on stderr and exit code 2, never a traceback.

On a base install (``pip install shoe-controller``, no extra) the pure commands (coup, replay, odds, roads) work;
a command that needs the table's libraries is still listed, and says in one line to install
``shoe-controller[table]`` (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from commandline import Parser, UsageError
from commandline.exits import run_command
from commandline.extras import missing_extra, run_needing
from controller.userfile import one_line

#: Subcommand modules, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "coup",
    "replay",
    "odds",
    "roads",
    "demo",
    "run",
    "board",
    "link",
    "keygen",
    "history",
    "edges",
    "settle",
    "slips",
    "tray",
    "journal",
    "check_config",
    "selftest",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or ``only`` that command's (its module alone imported: a
    table's board or link process does not load the daemon's libraries to parse its own arguments)."""
    parser = Parser(prog="shoe-controller", description="Baccarat table controller.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES if only is None else (only,):
        try:
            module = importlib.import_module(f"controller.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"controller.commands.{name}":
                continue  # not built yet
            line = missing_extra(f"shoe-controller {name.replace('_', '-')}", "table", exc)
            if line is None:
                raise
            _needs_extra(sub, name.replace("_", "-"), line)
            continue
        module.register(sub)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked for (controller.__version__)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **_kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any) -> None:
        import controller

        print(f"shoe-controller {controller.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


def _needs_extra(sub: Any, command: str, line: str) -> None:
    """Register ``command``, whose module needs a library that is not installed: listed in ``--help`` as such, and
    whatever its arguments (none is an option to it, not even ``--help``), it prints ``line`` and exits 2."""
    p = sub.add_parser(command, help="(not installed: pip install 'shoe-controller[table]')", prefix_chars="\0")
    p.add_argument("arguments", nargs="*")

    def handler(_args: argparse.Namespace) -> int:
        print(line, file=sys.stderr)
        return 2

    p.set_defaults(handler=handler)


def command_of(argv: list[str]) -> str | None:
    """The command module ``argv`` names first (None: an option comes first, ``--help``, ``--version``, or no
    known command: the whole parser says what is wrong)."""
    if not argv or argv[0].startswith("-") or "_" in argv[0]:  # the commands' names are written with "-"
        return None
    name = argv[0].replace("-", "_")
    return name if name in COMMAND_MODULES else None


def main(argv: list[str] | None = None) -> int:
    return run_command("shoe-controller", lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    try:
        given = sys.argv[1:] if argv is None else argv
        args = build_parser(command_of(given)).parse_args(given)
        return run_needing(f"shoe-controller {args.command}", "table", lambda: int(args.handler(args)))
    except UsageError as exc:
        print(one_line(str(exc)), file=sys.stderr)
        return 2
    except ValueError as exc:
        # Core validation errors (CardError, CompositionError, ConfigError ...) are user mistakes.
        print(one_line(f"shoe-controller: {exc}"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
