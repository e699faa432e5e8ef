"""The ``shoe-controller`` command line: one argparse hub; each subcommand lives in controller/commands/.

Every subcommand module exposes ``register(subparsers)``, which adds its parser and sets ``handler`` to a
function ``(args) -> int``. User mistakes raise :class:`~controller.commands.UsageError` (or a ValueError
subclass from the core) and become one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from controller import __version__
from controller.commands import UsageError

#: Subcommand modules, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "coup",
    "replay",
    "odds",
    "roads",
    "demo",
    "run",
    "history",
    "journal",
    "check_config",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="shoe-controller", description="Baccarat table controller.")
    parser.add_argument("--version", action="version", version=f"shoe-controller {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"controller.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"controller.commands.{name}":
                continue  # not built yet
            raise
        module.register(sub)
    return parser


#: Longest error line printed; the rest of a longer one (a megabyte "card" quoted back) is cut.
MAX_MESSAGE = 400


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` as one line of at most ``limit`` characters: line breaks become spaces, the middle of a
    long message is cut (its start names the command and file, its end the problem)."""
    text = " ".join(message.split("\n"))
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]}"


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args))
    except UsageError as exc:
        print(one_line(str(exc)), file=sys.stderr)
        return 2
    except ValueError as exc:
        # Core validation errors (CardError, CompositionError, ConfigError ...) are user mistakes.
        print(one_line(f"shoe-controller: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
