"""Tell systemd how the table controller is doing: sd_notify without a dependency.

The service runs as ``Type=notify`` with ``WatchdogSec=``. The daemon sends

* ``READY=1`` once, when the serial link to the shoe, the GPIO panel and the journal are up, so that
  ``systemctl start`` returns only when the table can really take cards;
* ``WATCHDOG=1`` from the table loop, at least every :meth:`Notifier.watchdog_interval` seconds; a loop
  stuck mid-coup stops the pings and systemd restarts the service (the journal replays the shoe);
* ``STATUS=...`` with a one-line summary (``shoe 3, coup 41: banker third due``) for ``systemctl status``;
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
from collections.abc import Mapping

__all__ = ["Notifier"]

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
