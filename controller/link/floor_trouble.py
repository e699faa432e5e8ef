"""Why the floor link is not connected, in words a technician can act on, said once and again on change.

paho-mqtt retries a failed connection on its own and keeps the reason to itself: a broker host that does not
resolve, a port that refuses, a TLS handshake that fails and a broker that refuses the table's credentials all
looked the same from the table, which logged nothing after "floor link to ..." (issue 18). This module turns
what paho saw into a :class:`Trouble` (its cause and one line naming it) and :class:`TroubleLog` decides when
to say it: at the first failure, whenever the cause changes, and every ``repeat`` seconds (10 minutes) while
it lasts; and once more, at INFO, when the link connects again. The link shows the current cause on its
``Status:`` line and in the metrics (``shoe_floor_link_trouble{cause}``, ``shoe_floor_connect_failures_total``).

Pure but for the clock the caller passes in: :func:`from_error` reads the exception paho's connect raised,
:func:`from_refusal` the CONNACK reason code of a broker that answered no.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["REPEAT", "Cause", "Trouble", "TroubleLog", "from_error", "from_refusal"]

#: How often a trouble that lasts is said again (seconds).
REPEAT = 600.0


class Cause(Enum):
    """Why the link is not connected. The value is the metrics' ``cause`` label."""

    DNS = "dns"  # the broker's host name does not resolve
    REFUSED = "refused"  # nothing listens on the broker's port (connection refused)
    UNREACHABLE = "unreachable"  # no route to the host, network down
    TIMEOUT = "timeout"  # the host did not answer in time
    TLS = "tls"  # the TLS handshake failed (certificate, CA, protocol)
    CREDENTIALS = "credentials"  # the broker refused the user name or password
    NOT_AUTHORISED = "not_authorised"  # the broker refused this client (ACL, certificate identity)
    BROKER = "broker"  # the broker refused the connection for another reason
    LOST = "lost"  # connected, then the connection was lost
    OTHER = "other"  # any other socket error


@dataclass(frozen=True, slots=True)
class Trouble:
    cause: Cause
    #: One line for the log and the Status line, naming the broker and the cause.
    text: str


def from_error(exc: BaseException, broker: str) -> Trouble:
    """The trouble behind an exception paho's connect raised (``broker`` as the configuration names it)."""
    if isinstance(exc, socket.gaierror):
        return Trouble(Cause.DNS, f"the broker's host in {broker} does not resolve ({exc.strerror or exc})")
    if isinstance(exc, ssl.SSLCertVerificationError):
        detail = exc.verify_message or exc.reason or str(exc)
        return Trouble(
            Cause.TLS, f"TLS to {broker} failed: the broker's certificate is not trusted ({detail}); check ca_file"
        )
    if isinstance(exc, ssl.SSLError):
        detail = exc.reason or str(exc)
        return Trouble(
            Cause.TLS, f"TLS to {broker} failed ({detail}): is that port TLS, and are the certificates right?"
        )
    if isinstance(exc, ConnectionRefusedError):
        return Trouble(Cause.REFUSED, f"{broker} refused the connection: is the broker running on that port?")
    if isinstance(exc, TimeoutError | socket.timeout):
        return Trouble(Cause.TIMEOUT, f"{broker} did not answer in time (a firewall, or the wrong host?)")
    if isinstance(exc, OSError) and exc.errno in _UNREACHABLE:
        return Trouble(Cause.UNREACHABLE, f"{broker} cannot be reached ({exc.strerror}): check the network")
    if isinstance(exc, ConnectionError):
        return Trouble(Cause.LOST, f"the connection to {broker} broke ({exc.__class__.__name__})")
    text = str(exc)[:160] or exc.__class__.__name__
    return Trouble(Cause.OTHER, f"cannot connect to {broker}: {text}")


_UNREACHABLE = {101, 113, 65}  # ENETUNREACH, EHOSTUNREACH (Linux), EHOSTUNREACH (BSD)

#: MQTT 5 CONNACK reason codes (and their MQTT 3.1.1 equivalents, as paho maps them) for credentials.
_BAD_CREDENTIALS = {134, 4}  # Bad user name or password
_NOT_AUTHORISED = {135, 5}  # Not authorized


def from_refusal(reason: Any, broker: str) -> Trouble:
    """The trouble behind a CONNACK that refused (paho's ``ReasonCode``, or its int)."""
    value = getattr(reason, "value", reason)
    words = str(reason)[:80]
    if value in _BAD_CREDENTIALS:
        return Trouble(
            Cause.CREDENTIALS,
            f"{broker} refused the table's user name or password ({words}): check floor.username and "
            "floor.password_file",
        )
    if value in _NOT_AUTHORISED:  # Mosquitto says this of a wrong password too
        return Trouble(
            Cause.NOT_AUTHORISED,
            f"{broker} does not let this table connect ({words}): check floor.username and floor.password_file "
            "(or the client certificate) against the broker's users",
        )
    return Trouble(Cause.BROKER, f"{broker} refused the connection ({words})")


class TroubleLog:
    """When to say a trouble: the first time, on a change of cause, every ``repeat`` seconds while it lasts."""

    __slots__ = ("_said_at", "current", "failures", "repeat", "since_connected")

    def __init__(self, repeat: float = REPEAT) -> None:
        self.repeat = repeat
        self.current: Trouble | None = None
        #: Failed connection attempts by cause, ever (the metrics' counter).
        self.failures: dict[Cause, int] = {}
        #: ... and since the link was last connected.
        self.since_connected = 0
        self._said_at = 0.0

    def failed(self, trouble: Trouble, now: float) -> str | None:
        """A connection attempt failed: the WARNING line to log now, or None to stay quiet."""
        self.failures[trouble.cause] = self.failures.get(trouble.cause, 0) + 1
        self.since_connected += 1
        previous, self.current = self.current, trouble
        if previous is None or previous.cause is not trouble.cause or now - self._said_at >= self.repeat:
            self._said_at = now
            n = self.since_connected
            again = f" ({n} failed attempts since the last connection)" if n > 1 else ""
            return f"floor link: {trouble.text}; records wait in the journal{again}"
        return None

    def connected(self, broker: str) -> str | None:
        """The link connected: the INFO line to log if there was trouble, else None."""
        if self.current is None:
            return None
        cause, self.current = self.current.cause, None
        attempts, self.since_connected = self.since_connected, 0
        return f"floor link connected to {broker} after {attempts} failed attempt(s) (last: {cause.value})"
