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
