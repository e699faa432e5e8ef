"""Sinks: where the table loop fans its results out (LEDs and buzzer, displays, the terminal, ...).

A sink receives the table's view after every applied input, with the notices that input produced. Sinks
run on the table loop's thread, so they must be quick and must never block on I/O for long; a sink that
fails is reported and detached, never allowed to stop the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from controller.game.table import Notice, TableView


class Sink(Protocol):
    """Receives every view change of the table."""

    name: str

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        """Show ``view``; ``notices`` say what just happened (alarms raised, coups declared ...)."""

    def close(self) -> None:
        """Turn off and release whatever the sink holds."""


class LatestViewSink:
    """Runs a slow sink (an I2C display: tens of milliseconds a frame) on its own thread, so that it never
    holds up the table loop. Only the newest view matters to such a sink: views that arrive while it is busy
    are coalesced into the latest one. Not for sinks that need every notice."""

    def __init__(self, inner: Sink) -> None:
        import threading

        self.inner = inner
        self.name = f"{inner.name} (own thread)"
        self._cond = threading.Condition()
        self._pending: tuple[TableView, Sequence[Notice]] | None = None
        self._closing = False
        self.frames = 0
        self._thread = threading.Thread(target=self._run, name=f"sink-{inner.name}", daemon=True)
        self._thread.start()

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        with self._cond:
            self._pending = (view, notices)
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closing:
                    self._cond.wait()
                if self._pending is None:
                    return
                view, notices = self._pending
                self._pending = None
            self.inner.update(view, notices)
            self.frames += 1

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until the latest view has been handed to the inner sink (for tests and shutdown)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                if self._pending is None:
                    return True
            time.sleep(0.005)
        return False

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join(timeout=5.0)
        self.inner.close()


class QueuedSink:
    """Runs a sink that needs every update, in order (the scoreboard: its history follows the notices), on its
    own thread, so that building and encoding its snapshots never delays the journal commit and the shoe's ACK.
    A failure inside the inner sink is logged and the sink carries on with the next update."""

    def __init__(self, inner: Sink, *, gather_seconds: float = 0.0) -> None:
        """``gather_seconds``: after an update arrives, wait this long for more before handing them over
        together (a display needs no more than some 50 frames a second, and fewer frames leave the GIL to
        the table loop while cards arrive fast). Only for an inner sink with ``update_many``."""
        import queue
        import threading

        self.inner = inner
        self.gather_seconds = gather_seconds
        self.name = f"{inner.name} (own thread)"
        self._queue: queue.SimpleQueue[tuple[TableView, Sequence[Notice]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"sink-{inner.name}", daemon=True)
        self._thread.start()

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        self._queue.put((view, notices))

    def _run(self) -> None:
        import logging
        import queue

        update_many = getattr(self.inner, "update_many", None)
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            closing = False
            if update_many is not None and self.gather_seconds > 0:
                import time

                time.sleep(self.gather_seconds)
            if update_many is not None:  # take what queued up meanwhile: the inner sink coalesces it
                while True:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        closing = True
                        break
                    batch.append(more)
            try:
                if update_many is not None:
                    update_many(batch)
                else:
                    self.inner.update(*item)
            except Exception:
                logging.getLogger(__name__).exception("sink %s failed on an update", self.inner.name)
            if closing:
                return

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued update has been handed to the inner sink."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._queue.empty():
                return True
            time.sleep(0.005)
        return False

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5.0)
        self.inner.close()
