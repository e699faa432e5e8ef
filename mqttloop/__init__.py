"""paho-mqtt's network loop, stopped without paho's ``loop_stop()`` race.

paho's ``loop_stop()`` can crash while stopping: its network thread clears ``client._thread`` as it exits, and
``loop_stop()`` may look at it just before and join ``None`` (``AttributeError: 'NoneType' object has no
attribute 'join'``; eclipse-paho/paho.mqtt.python#872, open). A client that disconnects and then stops, as
every clean stop does, meets it at random. :class:`NetworkLoop` starts paho's own threaded loop
(``loop_start()``: paho then queues each packet and wakes its loop, never writing from the caller's thread),
keeps a reference to paho's thread before anything can clear it, and stops with ``disconnect()``, paho's
``loop_stop()`` with that one race caught, and a join of the thread it kept: the thread has ended when
:meth:`NetworkLoop.stop` returns True, whichever way the race went.

paho has no public handle on its thread: the one private read is ``client._thread``, right after
``loop_start()`` made it.

Used by the table's floor link, the floor's collector and pit, and the tests' MQTT helpers. Neutral: it
imports the standard library only (the client is paho's, passed in).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

__all__ = ["NetworkLoop"]


class NetworkLoop:
    """``client``'s network loop. :meth:`start` once; :meth:`stop` (idempotent) ends it."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.client.loop_start()
        thread = self.client._thread  # made by loop_start(); only its own exit clears it
        if isinstance(thread, threading.Thread):
            thread.name = self.name
            self.thread = thread

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def stop(self, timeout: float = 10.0) -> bool:
        """Disconnect, stop paho's loop and join its thread; True if it ended within ``timeout`` seconds."""
        self.client.disconnect()
        with contextlib.suppress(AttributeError):  # paho#872: its thread ended, clearing _thread, as it looked
            self.client.loop_stop()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        return not self.running
