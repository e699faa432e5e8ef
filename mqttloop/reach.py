"""Whether an MQTT client reaches its broker, said in one line: at the first failed attempt (at once, not when a
keepalive or a table's silence would tell), again when the reason changes and every ``repeat`` seconds while it
lasts, and once when the client connects. paho retries on its own and keeps the reason to itself (its
``on_connect_fail`` says only that an attempt failed): :class:`Reach` keeps the exception of the client's last
``reconnect()``. The floor's collector and pit use it (``shoe-floor serve`` with no broker said nothing for 40 s
while its pit read "0 tables").

Neutral: the standard library only (the client is paho's, passed in); the clock is injected.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["REPEAT", "Reach"]

#: How often a failure that lasts is said again (seconds).
REPEAT = 60.0


class Reach:
    """Hooks ``client`` (before its loop starts) so that each failed connection attempt is judged here.
    :attr:`problem` is the current line (None while connected or before the first attempt); ``on_change`` is
    called with it whenever it changes (from paho's thread). The owner calls :meth:`connected` from its
    ``on_connect`` on a successful CONNACK and :meth:`refused` on a failed one."""

    def __init__(
        self,
        client: Any,
        broker: str,
        log: logging.Logger,
        *,
        level: int = logging.WARNING,
        repeat: float = REPEAT,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[str | None], None] | None = None,
    ) -> None:
        self.broker = broker
        self.problem: str | None = None
        self.attempts = 0  # failed attempts since the last connection
        self._log, self._level, self._repeat, self._clock = log, level, repeat, clock
        self._on_change = on_change
        self._said_at = -float("inf")
        self._lock = threading.Lock()
        self._last_error: BaseException | None = None
        reconnect = client.reconnect

        def keeping_the_error() -> Any:
            try:
                return reconnect()
            except OSError as exc:
                self._last_error = exc
                raise

        client.reconnect = keeping_the_error
        client.on_connect_fail = lambda _client, _userdata: self.failed(self._last_error)

    def failed(self, error: BaseException | None) -> None:
        """An attempt failed (``error``: what its connect raised, if known)."""
        why = "no answer" if error is None else (getattr(error, "strerror", None) or str(error) or type(error).__name__)
        self._say(f"cannot reach the broker {self.broker} ({why}); retrying")

    def refused(self, reason: object) -> None:
        """The broker answered and refused the connection (a CONNACK reason code)."""
        self._say(f"the broker {self.broker} refused the connection ({reason}); retrying", logging.ERROR)

    def connected(self) -> None:
        with self._lock:
            was, self.problem, self.attempts = self.problem, None, 0
            self._said_at = -float("inf")
        if was is not None:
            self._log.log(min(self._level, logging.INFO), "reached the broker %s again", self.broker)
            if self._on_change is not None:
                self._on_change(None)

    def _say(self, line: str, level: int | None = None) -> None:
        now = self._clock()
        with self._lock:
            self.attempts += 1
            changed = line != self.problem
            due = changed or now - self._said_at >= self._repeat
            self.problem = line
            if due:
                self._said_at = now
        if due:
            more = "" if changed or self.attempts == 1 else f" (still, after {self.attempts} attempts)"
            self._log.log(max(self._level, level or 0), "%s%s", line, more)
        if changed and self._on_change is not None:
            self._on_change(line)
