"""How a command line ends: its errors as one line, and the endings every ``main`` shares (Ctrl-C, a reader
that went away, an output that cannot be written). One place for ``shoe-controller`` and ``shoe-floor``.

Standard library only, as the rest of :mod:`commandline`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from commandline.stdout import drop_stdout

__all__ = ["MAX_MESSAGE", "one_line", "run_command"]

#: Longest error line a command prints; the middle of a longer one (a megabyte "card" quoted back) is cut.
MAX_MESSAGE = 400

#: A run of this many non-space characters in a message is a value quoted back (a megabyte "card"), not a
#: word or a path: its middle is cut so that the words around it survive.
_LONG_WORD = re.compile(r"\S{201,}")


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """An error ``message`` as one line of at most ``limit`` characters: line breaks become spaces, the
    middle of each overlong quoted value is cut, then the middle of a message still too long (its start
    names the command and file, its end the problem)."""
    text = " ".join(message.splitlines())
    text = _LONG_WORD.sub(lambda m: f"{m[0][:40]}...{m[0][-20:]}", text)
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]}"


def run_command(program: str, body: Callable[[], int]) -> int:
    """Run a command's ``body`` (its own user mistakes already turned into one line and exit 2) and return
    its exit code, flushing stdout here, not at exit, so that a write error is one line too: Ctrl-C is 130;
    a reader gone away (``| head``) is no error (0); an output that cannot be written (``> /dev/full``, a
    disk error) or another error of the system is one line naming ``program``, exit 1."""
    try:
        code = body()
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        drop_stdout()
        return 0
    except OSError as exc:
        drop_stdout()
        where = f"{exc.filename}: " if exc.filename else ""
        print(one_line(f"{program}: {where}{exc.strerror or exc}"), file=sys.stderr)
        return 1
