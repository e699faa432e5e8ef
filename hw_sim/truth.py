"""The record of truth: what the software shoe really did, as JSON Lines, one object per event.

Every card that left the shoe (``card``; a card the reader could not identify is ``unreadable``
instead), every fault injected (``fault``), and the shoe's life (``shoe_start``, ``cut_card``, ``button``,
``declare``, ``shoe_end``, ``reboot``, ``hello``, ``lost``, ``end``); with players at the table also the money
(:mod:`hw_sim.money`: ``spot``, ``wager``, ``lock``, ``settle``, ``payout``, ``void``, ``seat_left``,
``commission``, and the money faults with what the table should see). Each line is flushed as it is written so
that a test or a person tailing the file sees it at once. Field names are a contract (docs/simulator.md).
"""

from __future__ import annotations

import json
from typing import IO, Any


class TruthLog:
    """Writes truth events to a text stream (flushed per line) and, if asked, keeps them in memory."""

    def __init__(self, stream: IO[str] | None = None, *, keep: bool = False) -> None:
        self._stream = stream
        self._keep = keep
        self.events: list[dict[str, Any]] = []
        self.t0: float | None = None

    def write(self, event: str, now: float | None = None, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"event": event}
        record.update(fields)
        if now is not None:
            if self.t0 is None:
                self.t0 = now
            record["t"] = round(now - self.t0, 4)
        if self._keep:
            self.events.append(record)
        if self._stream is not None:
            self._stream.write(json.dumps(record, separators=(", ", ": ")) + "\n")
            self._stream.flush()
        return record

    def of(self, event: str) -> list[dict[str, Any]]:
        """The kept events of one kind (requires ``keep=True``)."""
        return [e for e in self.events if e["event"] == event]

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def read_truth(path: str) -> list[dict[str, Any]]:
    """Read a truth file back (a partly written last line is ignored)."""
    events: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):
                events.append(json.loads(line))
    return events
