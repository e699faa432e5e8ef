"""How a process of ours is told to stop: SIGTERM (systemd's ``stop``, the demo's supervisor) and SIGHUP (the
terminal gone) become ``SystemExit(128 + signal)`` in the main thread, so that every ``finally`` on the way
out runs (the journal committed, the ports closed, STOPPING sent, the children stopped), and the exit code is
the shell's for a process ended by that signal (143 for SIGTERM).

The table's process, the board and the link, and the demo's supervisor install it; neutral and standard
library only, like the rest of ``commandline``.
"""

from __future__ import annotations

import signal
from types import FrameType

__all__ = ["STOP_SIGNALS", "raise_system_exit"]

#: The signals that ask a process of ours to stop (SIGINT is Python's own KeyboardInterrupt).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def raise_system_exit(signum: int, frame: FrameType | None) -> None:
    """A signal handler: ``SystemExit(128 + signum)``."""
    raise SystemExit(128 + signum)
