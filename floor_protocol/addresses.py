"""Network addresses as users write them: a broker URL (``mqtt://host:port``, ``mqtts://host:port``) and
``host:port`` (``[::1]:8080`` for IPv6). One parser each, used by the table's configuration and commands, the
floor's command line and the software shoe; errors are one line naming what is wrong (:class:`AddressError`).
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlsplit

__all__ = ["BROKER_SCHEMES", "AddressError", "Broker", "HostPort", "parse_broker", "parse_host_port"]

#: The broker URL schemes and their default ports (``mqtts``: TLS).
BROKER_SCHEMES = {"mqtt": 1883, "mqtts": 8883}
#: Longest address text read (a host name is at most 253 characters).
MAX_ADDRESS = 300
_HOSTNAME = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*")
_SHOW_MAX = 60


class AddressError(ValueError):
    """An address the user wrote that is not one; the message is one line."""


def _show(value: object) -> str:
    if not isinstance(value, str):
        return type(value).__name__
    text = json.dumps(value[: _SHOW_MAX + 1])
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."


class HostPort(NamedTuple):
    host: str  # an IPv6 address without its brackets
    port: int


def parse_host_port(text: object, *, any_port: bool = False) -> HostPort:
    """``host:port`` or ``[v6]:port``. The port is 1-65535, or with ``any_port`` also 0 (any free port)."""
    if not isinstance(text, str) or len(text) > MAX_ADDRESS:
        raise AddressError(f"must be host:port such as 127.0.0.1:8080, got {_show(text)}")
    if text.startswith("["):
        host, sep, port_text = text[1:].partition("]:")
        if not sep:
            raise AddressError(f"must be host:port (an IPv6 host in brackets: [::1]:8080), got {_show(text)}")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise AddressError(f"{_show(host)} is not an IPv6 address") from None
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep or not host:
            raise AddressError(f"must be host:port such as 127.0.0.1:8080, got {_show(text)}")
        if ":" in host:
            raise AddressError(f"write an IPv6 host in brackets, e.g. [::1]:8080, got {_show(text)}")
        if not _HOSTNAME.fullmatch(host):
            raise AddressError(f"{_show(host)} is not a host name or IP address")
    low = 0 if any_port else 1
    if not (port_text.isascii() and port_text.isdigit()) or not low <= int(port_text) <= 65535:
        span = "0-65535 (0: any free port)" if any_port else "1-65535"
        raise AddressError(f"port must be {span}, got {_show(port_text)}")
    return HostPort(host, int(port_text))


@dataclass(frozen=True)
class Broker:
    """Where the floor's MQTT broker is: host, port, and whether the link is TLS (``mqtts://``)."""

    host: str
    port: int
    tls: bool


def parse_broker(url: object) -> Broker:
    """``mqtt://host[:port]`` or ``mqtts://host[:port]`` (default ports 1883 and 8883); no credentials, path
    or query."""
    bad = f"{_show(url)} is not a broker URL (mqtt://host:port or mqtts://host:port)"
    if not isinstance(url, str) or len(url) > MAX_ADDRESS or not url.isprintable() or " " in url:
        raise AddressError(bad)
    try:
        parts = urlsplit(url)
    except ValueError:
        raise AddressError(bad) from None
    if parts.scheme not in BROKER_SCHEMES or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise AddressError(bad)
    if parts.username or parts.password:
        raise AddressError("put no credentials in the broker URL: give the user name and password file apart")
    if not parts.hostname:
        raise AddressError(f"{bad}: no host")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise AddressError(f"{_show(url)}: bad port, must be 1-65535")
    return Broker(parts.hostname, port or BROKER_SCHEMES[parts.scheme], parts.scheme == "mqtts")
