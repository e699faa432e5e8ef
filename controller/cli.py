"""The ``shoe-controller`` command line (placeholder until the subcommands land)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("shoe-controller: no command yet", file=sys.stderr)
    return 2
