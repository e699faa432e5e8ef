"""How a process of ours is told to stop: SIGTERM (systemd's ``stop``, the demo's supervisor) and SIGHUP (the
terminal gone) become ``SystemExit(128 + signal)`` in the main thread, so that every ``finally`` on the way
out runs (the journal committed, the ports closed, STOPPING sent, the children stopped), and the exit code is
the shell's for a process ended by that signal (143 for SIGTERM).

The table's process, the board and the link, and the demo's supervisor install it; neutral and standard
library only, like the rest of ``commandline``.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

__all__ = ["STOP_SIGNALS", "raise_system_exit", "stop_deferred"]

#: The signals that ask a process of ours to stop (SIGINT is Python's own KeyboardInterrupt).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def raise_system_exit(signum: int, frame: FrameType | None) -> None:
    """A signal handler: ``SystemExit(128 + signum)``."""
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def stop_deferred() -> Iterator[None]:
    """While a child process is started and given its name: a stop signal is noted, not acted on, and acted on
    (``SystemExit``) as the block ends. Raised between the fork and the assignment, the ``SystemExit`` would leave
    a child no ``finally`` knows of, running on (the demo's board did: tests/cli/test_demo_cli.py). Main thread
    only (where Python runs signal handlers)."""
    got: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        got.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if got:
        raise SystemExit(128 + got[0])
