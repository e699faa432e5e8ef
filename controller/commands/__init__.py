"""Subcommands of ``shoe-controller``; see :mod:`controller.cli` for how they are registered."""

from __future__ import annotations

import argparse
from typing import Any

Subparsers = Any  # argparse's _SubParsersAction is private; its methods are what we use


class UsageError(Exception):
    """A user mistake on the command line: printed as one line, exit code 2."""


def read_tokens(source: str) -> list[str]:
    """Whitespace-separated tokens from a file path, or stdin for ``-``."""
    import sys

    if source == "-":
        return sys.stdin.read().split()
    try:
        with open(source, encoding="utf-8") as fh:
            return fh.read().split()
    except OSError as exc:
        raise UsageError(f"shoe-controller: cannot read {source}: {exc.strerror}") from None


def add_rules_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules",
        choices=("commission", "ez", "super6"),
        default="commission",
        help="ruleset for pricing and payout hints (default: commission)",
    )
