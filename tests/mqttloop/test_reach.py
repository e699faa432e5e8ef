"""mqttloop.reach: a client that cannot reach its broker is said in one line at the first failed attempt, again
when the reason changes and every minute while it lasts, and once when it connects; the reason is the exception
of the client's own reconnect(), which paho keeps to itself. A stand-in client and clock: no broker, no paho."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mqttloop.reach import Reach

BROKER = "mqtt://127.0.0.1:1883"


class Client:
    """What Reach uses of paho's client: ``reconnect`` (raising what the socket raised) and ``on_connect_fail``."""

    def __init__(self) -> None:
        self.error: OSError | None = ConnectionRefusedError(111, "Connection refused")
        self.on_connect_fail: Any = None

    def reconnect(self) -> int:
        if self.error is not None:
            raise self.error
        return 0

    def attempt(self) -> None:
        """One attempt as paho's loop makes it: reconnect(), and on an OSError, on_connect_fail."""
        try:
            self.reconnect()
        except OSError:
            self.on_connect_fail(self, None)


def test_a_failure_is_said_at_once_then_on_change_and_every_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    client = Client()
    changes: list[str | None] = []
    log = logging.getLogger("test-reach")
    reach = Reach(client, BROKER, log, clock=lambda: now[0], on_change=changes.append)
    with caplog.at_level(logging.INFO, logger="test-reach"):
        client.attempt()
        line = f"cannot reach the broker {BROKER} (Connection refused); retrying"
        assert [r.getMessage() for r in caplog.records] == [line]
        assert caplog.records[0].levelno == logging.WARNING
        assert reach.problem == line and changes == [line]
        for _ in range(5):  # paho retries every few seconds: not a line each
            now[0] += 5.0
            client.attempt()
        assert len(caplog.records) == 1 and changes == [line]
        now[0] += 60.0
        client.attempt()
        assert caplog.records[-1].getMessage() == f"{line} (still, after 7 attempts)"
        client.error = TimeoutError("timed out")
        client.attempt()
        assert caplog.records[-1].getMessage() == f"cannot reach the broker {BROKER} (timed out); retrying"
        client.error = None
        client.attempt()  # reconnect() succeeded: the owner's on_connect says so
        reach.connected()
        assert caplog.records[-1].getMessage() == f"reached the broker {BROKER} again"
        assert reach.problem is None and changes[-1] is None
        count = len(caplog.records)
        reach.connected()  # connected again without a failure between: nothing to say
        assert len(caplog.records) == count


def test_a_refusal_is_an_error_line_even_when_failures_are_quiet(caplog: pytest.LogCaptureFixture) -> None:
    client = Client()
    reach = Reach(client, BROKER, logging.getLogger("test-reach"), level=logging.DEBUG)
    with caplog.at_level(logging.DEBUG, logger="test-reach"):
        client.attempt()
        assert caplog.records[-1].levelno == logging.DEBUG
        reach.refused("Not authorized")
        assert caplog.records[-1].levelno == logging.ERROR
        assert caplog.records[-1].getMessage() == (
            f"the broker {BROKER} refused the connection (Not authorized); retrying"
        )
