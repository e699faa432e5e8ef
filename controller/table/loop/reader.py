"""The bet-spot reader on the table loop: its port, its wire, and the betting window it is told.

A table with RFID bet spots has a second serial link (``[spots] port``): the loop waits on the reader's port
beside the shoe's, and its events become table inputs by the same path as the shoe's (``TableState.apply``,
the sinks, one commit, the reader's ACK only after it). What this module holds:

* :class:`ReaderWire`, what the loop needs of the reader's codec (:class:`controller.table.spot_wire.SpotWire`):
  bytes in, its events out (the money's inputs, records, and the shoe wire's noise and duplicates); the ACK;
  and the WINDOW message.
* :class:`ReaderPort`, the reader's port, wire and writer as the loop is given them.
* The **cap** on the reader's work: at most :data:`READER_READ_SIZE` bytes are read from the reader per
  wake-up, after the shoe's port has been served, so a reader flooding its line costs a card at most one
  small read's decoding, never a backlog.
* :func:`window_of`: the betting window the reader is told (``Window``), from the money's view: locked at the
  coup's first card, payout at the declare, open again at the next betting time, once the dealer has paid
  and taken every spot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from controller.game.wagers import MoneyView, Phase, SpotState
from controller.table.spot_wire import SpotWireEvent
from firmware_protocol.spots import WindowState

__all__ = ["READER_READ_SIZE", "ReaderPort", "ReaderWire", "window_of"]

#: Most bytes read from the reader's port per wake-up of the loop (a SpotReport of a 35-chip stack is some
#: 300 bytes). The shoe's port is read first at every wake-up, so this bounds what stands before a card.
READER_READ_SIZE = 512


class ReaderWire(Protocol):
    """The reader's codec as the loop uses it (:class:`controller.table.spot_wire.SpotWire`)."""

    def receive(self, data: bytes, now: float) -> list[SpotWireEvent]: ...

    def acknowledge(self, number: int, session: int | None = None) -> bytes: ...

    def poll(self, now: float) -> tuple[list[SpotWireEvent], bytes]: ...

    def window(self, state: WindowState) -> bytes: ...


class PortLike(Protocol):
    """A port the loop reads (controller.table.shoe_link.ShoeLink)."""

    def fileno(self) -> tuple[int, int] | None: ...

    def read(self, size: int = ...) -> bytes | None: ...


@dataclass
class ReaderPort:
    """The bet-spot reader as the loop is given it: the port it waits on, the codec, and the port's writer."""

    port: PortLike
    wire: ReaderWire
    write: Callable[[bytes], None]
    read_size: int = READER_READ_SIZE


#: What a spot shows while the dealer still has to pay, take or collect it.
_TO_SETTLE = frozenset({SpotState.PAY, SpotState.TAKE, SpotState.COLLECT})


def window_of(money: MoneyView | None) -> WindowState | None:
    """The betting window for the money now (None: the table keeps no money). Locked from the coup's first
    card to its declare; payout from the declare while a spot still waits for the dealer (PAY, TAKE, or a
    commission box to COLLECT); open otherwise: the next coup's betting time (bets placed on a spot that has
    passed its payout check are the next coup's)."""
    if money is None:
        return None
    if money.phase is Phase.LOCKED:
        return WindowState.LOCKED
    if money.phase in (Phase.PAYOUT, Phase.COLLECTION) and any(
        spot.state in _TO_SETTLE for seat in money.seats for spot in seat.spots
    ):
        return WindowState.PAYOUT
    return WindowState.OPEN
