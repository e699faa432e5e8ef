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
from controller import __version__
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
    "journal",
    "check_config",
    "selftest",
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="shoe-controller", description="Baccarat table controller.")
    parser.add_argument("--version", action="version", version=f"shoe-controller {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES:
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


def _needs_extra(sub: Any, command: str, line: str) -> None:
    """Register ``command``, whose module needs a library that is not installed: listed in ``--help`` as such, and
    whatever its arguments (none is an option to it, not even ``--help``), it prints ``line`` and exits 2."""
    p = sub.add_parser(command, help="(not installed: pip install 'shoe-controller[table]')", prefix_chars="\0")
    p.add_argument("arguments", nargs="*")

    def handler(_args: argparse.Namespace) -> int:
        print(line, file=sys.stderr)
        return 2

    p.set_defaults(handler=handler)


def main(argv: list[str] | None = None) -> int:
    return run_command("shoe-controller", lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
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
