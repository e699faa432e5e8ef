"""A command's output whose reader went away (``| head``) or that cannot be written (``> /dev/full``): the
command ends without a second failure at the interpreter's final flush. One function for the three command
lines (``shoe-controller``, ``shoe-sim``, ``shoe-floor``)."""

from __future__ import annotations

import os
import sys

__all__ = ["drop_stdout"]


def drop_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout closed or not a real file (in tests)
        pass
