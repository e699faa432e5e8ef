"""Tell systemd how the table controller is doing: sd_notify without a dependency.

The service runs as ``Type=notify`` with ``WatchdogSec=``. The daemon sends

* ``READY=1`` once, when the serial link to the shoe, the GPIO panel and the journal are up, so that
  ``systemctl start`` returns only when the table can really take cards;
* ``WATCHDOG=1`` from the table loop, at least every :meth:`Notifier.watchdog_interval` seconds; a loop
  stuck mid-coup stops the pings and systemd restarts the service (the journal replays the shoe);
* ``STATUS=...`` with a one-line summary (``shoe 3, coup 41: banker third due``, ``... | LINK DOWN``) for
  ``systemctl status``, each time it changes but at most :attr:`StatusSink.min_interval` apart
  (:class:`StatusSink`, a sink of the table loop);
* ``STOPPING=1`` in the ``finally`` that runs after SIGTERM has become ``SystemExit``.

Outside systemd (``NOTIFY_SOCKET`` unset, for example ``shoe-controller run`` from a shell or the tests)
every call is a silent no-op. The protocol is one AF_UNIX datagram per message to the path in
``NOTIFY_SOCKET``; a leading ``@`` names a socket in the abstract namespace. Modelled on piwheels'
``systemd.py``; see sd_notify(3).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence

from controller.game.table import Due, Notice, TableView

__all__ = ["Notifier", "StatusSink", "status_line"]

log = logging.getLogger(__name__)


class Notifier:
    """Sends sd_notify messages to the socket named by ``NOTIFY_SOCKET``.

    *environ* defaults to :data:`os.environ` and *pid* to :func:`os.getpid`; both are read once, here.
    Sending never raises: a failed notification must not stop the table mid-coup (systemd notices a
    missing READY or WATCHDOG by itself), so a failure is logged and reported as ``False``.
    """

    __slots__ = ("_address", "_sock", "_watchdog_usec")

    def __init__(self, environ: Mapping[str, str] | None = None, pid: int | None = None) -> None:
        env = os.environ if environ is None else environ
        self._address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self._watchdog_usec = _watchdog_usec(env, os.getpid() if pid is None else pid)
        self._sock: socket.socket | None = None
        if self._address is not None:
            # Opened once, here, so that the table loop and other threads share it without a race.
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @property
    def enabled(self) -> bool:
        """True when there is a notification socket to talk to (running under systemd)."""
        return self._sock is not None

    def notify(self, message: str) -> bool:
        """Send one raw sd_notify message (``KEY=value`` lines); True if it was sent."""
        if self._sock is None or self._address is None:
            return False
        try:
            self._sock.sendto(message.encode("utf-8"), self._address)
        except OSError as exc:
            log.warning("sd_notify %r to %r failed: %s", message, self._address, exc)
            return False
        return True

    def ready(self) -> bool:
        """Startup is complete: the shoe link, the panel and the journal are up."""
        return self.notify("READY=1")

    def watchdog(self) -> bool:
        """Ping the watchdog; call from the table loop at least every :meth:`watchdog_interval` seconds."""
        return self.notify("WATCHDOG=1")

    def stopping(self) -> bool:
        """The service is shutting down (SIGTERM received)."""
        return self.notify("STOPPING=1")

    def status(self, text: str) -> bool:
        """Set the one-line status shown by ``systemctl status``; line breaks become spaces."""
        return self.notify("STATUS=" + " ".join(text.splitlines()))

    def watchdog_interval(self) -> float | None:
        """Seconds between watchdog pings: half of ``WATCHDOG_USEC``, or None if no watchdog is ours.

        The watchdog is ours when ``WATCHDOG_USEC`` is set and ``WATCHDOG_PID`` is unset or our pid.
        """
        if self._watchdog_usec is None:
            return None
        return self._watchdog_usec / 2_000_000

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the socket; later messages are no-ops."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None


_DUE_TEXT = {
    Due.BURN: "burn due",
    Due.DEAL: "deal",
    Due.PLAYER_THIRD: "player third due",
    Due.BANKER_THIRD: "banker third due",
    Due.DECLARE: "declare due",
    Due.VOID: "void due",
    Due.NEW_SHOE: "shoe ended, new shoe due",
}


def status_line(view: TableView, *, hide_cards: bool = False) -> str:
    """The one line for ``systemctl status``: ``shoe 3, coup 41: banker third due``, then the standing
    alarms (``| LINK DOWN, MISDRAW``), and on a table with a bet-spot reader its link (``| reader up`` or
    ``| reader down``). With *hide_cards* (``reveal = on_declare``, a squeeze game) a coup in
    progress shows only how many cards are out: what is due next would tell a reader the totals."""
    dealt = len(view.player) + len(view.banker)
    if hide_cards and dealt and view.due in (Due.PLAYER_THIRD, Due.BANKER_THIRD, Due.DECLARE):
        what = f"{dealt} cards dealt"
    elif view.due is Due.DEAL and dealt:
        what = f"deal ({dealt} of 4 cards)"
    else:
        what = _DUE_TEXT[view.due]
    line = f"shoe {view.shoe_number}, coup {view.coup_number}: {what}"
    if view.alarms:
        line += " | " + ", ".join(alarm.value for alarm in view.alarms)
    if view.money is not None:  # a table with a bet-spot reader
        line += " | reader up" if view.money.reader_up else " | reader down"
    return line


class StatusSink:
    """Keeps the ``Status:`` line of ``systemctl status`` current: a sink of the table loop.

    Each view is turned into :func:`status_line`; a line that differs from the last one sent goes out at
    once if the last was sent at least :attr:`min_interval` seconds ago, else it waits and :meth:`tick`
    (called by the table loop after every event and idle tick, a quarter second at most) sends the newest
    one when the interval is over. So a fast shoe costs at most ``1 / min_interval`` datagrams a second and
    the line is never more than ``min_interval`` plus a tick behind the table.
    """

    name = "systemd status"

    def __init__(
        self,
        notifier: Notifier,
        *,
        hide_cards: bool = False,
        min_interval: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.notifier = notifier
        self.hide_cards = hide_cards
        self.min_interval = min_interval
        self.clock = clock
        self.sent = 0
        self._last_text: str | None = None
        self._last_at = float("-inf")
        self._pending: str | None = None

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        text = status_line(view, hide_cards=self.hide_cards)
        self._pending = None if text == self._last_text else text
        self.tick()

    def tick(self) -> None:
        """Send the waiting line if the interval since the last one is over."""
        if self._pending is None:
            return
        now = self.clock()
        if now - self._last_at < self.min_interval:
            return
        text, self._pending = self._pending, None
        self._last_text, self._last_at = text, now
        self.sent += 1
        self.notifier.status(text)

    def close(self) -> None:
        """Nothing to release: the daemon closes the notifier after STOPPING."""


def _socket_address(value: str) -> str | None:
    """The address to send to: a path, or an abstract name (``@`` becomes a leading NUL byte)."""
    if value.startswith("/") and len(value) > 1:
        return value
    if value.startswith("@") and len(value) > 1:
        return "\0" + value[1:]
    if value:
        # vsock: and other transports of newer systemd are not used on the Pi.
        log.warning("NOTIFY_SOCKET=%r is not an AF_UNIX path or abstract name; not notifying", value)
    return None


def _watchdog_usec(env: Mapping[str, str], pid: int) -> int | None:
    usec = env.get("WATCHDOG_USEC", "")
    if not usec:
        return None
    owner = env.get("WATCHDOG_PID", "")
    try:
        value = int(usec)
        if owner and int(owner) != pid:
            return None
    except ValueError:
        log.warning("ignoring malformed WATCHDOG_USEC=%r / WATCHDOG_PID=%r", usec, owner)
        return None
    return value if value > 0 else None
