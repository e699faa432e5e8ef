"""Subcommands of ``shoe-controller``; see :mod:`controller.cli` for how they are registered."""

from __future__ import annotations

import argparse
from typing import Any

from commandline import UsageError
from controller.game.rules import DEFAULT_RULESET, RULESET_NAMES

__all__ = ["Subparsers", "UsageError", "add_rules_argument", "read_tokens"]

Subparsers = Any  # argparse's _SubParsersAction is private; its methods are what we use


#: Largest card file ``replay`` reads: about 350,000 cards (some 850 eight-deck shoes), replayed in about
#: 90 MB (benchmarks/bench_input_bounds.py); a larger file is refused unread (4 MiB took 210 MB).
MAX_TOKEN_FILE_BYTES = 1024 * 1024


def read_tokens(source: str, prog: str = "shoe-controller") -> list[str]:
    """Whitespace-separated tokens from a file path, or stdin for ``-``; at most
    :data:`MAX_TOKEN_FILE_BYTES`. A missing, unreadable, non-regular (FIFO, device), too large or non-UTF-8
    file is a one-line :class:`UsageError` naming it."""
    import sys

    from controller.userfile import UserFileError, read_text

    try:
        return read_text(source, limit=MAX_TOKEN_FILE_BYTES, stdin=sys.stdin.buffer).split()
    except UserFileError as exc:
        name = "stdin" if source == "-" else source
        raise UsageError(f"{prog}: {name}: {exc.reason}") from None


def add_rules_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules",
        choices=RULESET_NAMES,
        default=DEFAULT_RULESET,
        help=f"ruleset for pricing and payout hints (default: {DEFAULT_RULESET})",
    )
