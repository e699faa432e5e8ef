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
    A failure inside the inner sink is logged and the sink carries on with the next update.

    The queue is bounded (``max_pending`` updates). At the bound nothing is lost and the table loop is never
    held up: the new update is folded into the newest waiting one (its view replaces that view, its notices
    are appended), so the inner sink still sees every notice in order, only in fewer, bigger updates. That is
    counted in ``coalesced`` and logged once per episode: a display that far behind is stuck, and the
    technician should know."""

    def __init__(self, inner: Sink, *, gather_seconds: float = 0.0, max_pending: int = 4096) -> None:
        """``gather_seconds``: after an update arrives, wait this long for more before handing them over
        together (a display needs no more than some 50 frames a second, and fewer frames leave the GIL to
        the table loop while cards arrive fast). Only for an inner sink with ``update_many``."""
        import threading
        from collections import deque

        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.inner = inner
        self.gather_seconds = gather_seconds
        self.max_pending = max_pending
        self.name = f"{inner.name} (own thread)"
        self.coalesced = 0
        self._behind = False
        self._cond = threading.Condition()
        self._pending: deque[tuple[TableView, list[Notice]]] = deque()
        self._busy = False
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=f"sink-{inner.name}", daemon=True)
        self._thread.start()

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        with self._cond:
            if len(self._pending) >= self.max_pending:
                _, kept = self._pending.pop()
                self._pending.append((view, [*kept, *notices]))
                self.coalesced += 1
                if not self._behind:
                    self._behind = True
                    import logging

                    logging.getLogger(__name__).warning(
                        "sink %s is %d updates behind: folding new updates into the last",
                        self.inner.name,
                        len(self._pending),
                    )
            else:
                self._pending.append((view, list(notices)))
            self._cond.notify()

    def _take(self, wait: bool) -> list[tuple[TableView, list[Notice]]] | None:
        """Everything waiting (None when closing and nothing is left)."""
        with self._cond:
            while wait and not self._pending and not self._closing:
                self._cond.wait()
            if not self._pending:
                return None if self._closing else []
            batch = list(self._pending)
            self._pending.clear()
            self._busy = True
            self._behind = False
            return batch

    def _run(self) -> None:
        import logging
        import time

        update_many = getattr(self.inner, "update_many", None)
        while True:
            batch = self._take(wait=True)
            if batch is None:
                return
            if update_many is not None and self.gather_seconds > 0:
                time.sleep(self.gather_seconds)  # take what queues up meanwhile: the inner sink coalesces it
                batch += self._take(wait=False) or []
            try:
                if update_many is not None:
                    update_many(batch)
                else:
                    for view, notices in batch:
                        self.inner.update(view, notices)
            except Exception:
                logging.getLogger(__name__).exception("sink %s failed on an update", self.inner.name)
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued update has been handed to the inner sink."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout=5.0)
        self.inner.close()
