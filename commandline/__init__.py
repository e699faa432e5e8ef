"""What the three command lines share (``shoe-controller``, ``shoe-sim``, ``shoe-floor``): the one
:class:`UsageError` and an argparse parser that raises it instead of printing and exiting.

Neutral and standard library only, so that the floor's server, which imports nothing of the table's shell,
uses the same class as the table's commands.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["Parser", "UsageError"]


class UsageError(Exception):
    """A user mistake on the command line: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are a :class:`UsageError` ``"<prog>: <message>"``
    (the caller prints it as one line and exits 2), not a usage text and ``SystemExit``."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")
