"""What the table's two companion processes share: the board (:mod:`controller.board`) and the link
(:mod:`controller.link`), each facing one network.

Neither holds a device or writes the journal; each reads the table process's feed (:mod:`controller.feed`)
and may die, stall or be attacked without costing the table a card. Both open, run until SIGTERM or SIGINT
(``SystemExit`` in the main thread) or their :attr:`Companion.stop_event`, and then close everything: that
life is :class:`Companion`'s; a companion that cannot do its job raises :class:`CompanionError` (one line,
exit 1).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from commandline.signals import STOP_SIGNALS, raise_system_exit


def _wait_for_a_signal(stop: threading.Event) -> None:
    """Block the main thread until SIGTERM/SIGINT/SIGHUP (SystemExit) or ``stop``."""
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, raise_system_exit)
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Companion:
    """What both companions do with their life: open, run until a signal (or :attr:`stop_event`), close."""

    stop_event: threading.Event

    def open(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            self.open()
            _wait_for_a_signal(self.stop_event)
        finally:
            self.close()


class CompanionError(Exception):
    """A companion cannot do its job (the board's address taken, nothing configured): one line, exit 1."""
