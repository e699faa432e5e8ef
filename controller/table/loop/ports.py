"""The table loop's ports: each device on a serial line (the shoe, the bet-spot reader) as one typed port.

A port is a device's serial link, its wire (the codec turning the device's bytes into one typed event union,
:data:`~controller.table.wire.WireEvent` for the shoe, :data:`~controller.table.spot_wire.SpotWireEvent` for
the reader) and what its events do to the table. The loop owns the scheduling (which port is read when, the
shoe first and the others capped behind it) and the one state; a port owns its device's logic and reaches the
table only through :class:`TableSide`, the part of the loop it is lent on each call.

What a port is to the loop is :class:`Port`. The shoe's is :class:`~controller.table.loop.shoe_port.ShoePort`
(exactly one per loop, read first at every wake-up); every other device's is a :class:`QueuedPort`, served
after the shoe and the inbox, capped, yielding to the shoe between its events: the bet-spot reader's is
:class:`~controller.table.loop.reader.ReaderPort`. Both are a :class:`WirePort`, which holds what every port does
the same way (the bytes decoded and each event handled, the wire's timers polled), so that each port module holds
only what its device does. A new device (a chip tray, a seat's card reader) is a new wire and a new port module of
this shape (a :class:`WirePort` over its wire's event union, a :class:`QueuedPort`), added to the loop's list.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from controller.game.table import Notice, TableInput, TableState, TableView
from controller.table.loop.inbox import Device

if TYPE_CHECKING:
    from controller.table.loop.commit import WriteAhead
    from controller.table.loop.loop import LoopMetrics, LoopStats

__all__ = ["Port", "PortReader", "PortWire", "QueuedPort", "TableSide", "WirePort"]

#: The loop's log: the ports say what their devices do on it (one logger name, as before the ports had modules).
log = logging.getLogger("controller.table.loop.loop")

#: One wire's event union (:data:`~controller.table.wire.WireEvent`, :data:`~controller.table.spot_wire.SpotWireEvent`).
E = TypeVar("E")


class PortReader(Protocol):
    """A device's serial port as the loop reads it (controller.table.shoe_link.ShoeLink)."""

    def fileno(self) -> tuple[int, int] | None: ...

    def read(self, size: int = ...) -> bytes | None: ...


class TableSide(Protocol):
    """What the loop lends a port: the state (read only: a port changes it through :meth:`apply`), the
    counters, the metrics, the commit (for an ACK staged without a record), the clock, and the one way in."""

    @property
    def state(self) -> TableState: ...

    @property
    def stats(self) -> LoopStats: ...

    @property
    def metrics(self) -> LoopMetrics | None: ...

    @property
    def commit(self) -> WriteAhead: ...

    def clock(self) -> float: ...

    def apply(
        self,
        table_input: TableInput | None,
        body: dict[str, Any],
        session: int | None,
        number: int | None,
        device: Device = "shoe",
        *,
        notices: Sequence[Notice] = (),
    ) -> bool:
        """Apply one input (None: a record only) and stage it for the next commit; False when the journal
        refused it (neither applied nor kept). ``notices``: what a record-only input gave rise to."""
        ...

    def badge(self, uid: str, present: bool) -> list[Notice]:
        """A badge at the dealer's position: the dealer on duty in or out, or the badge refused (the notices)."""
        ...

    def show(self, notices: Sequence[Notice] = ()) -> None: ...

    def send_prompt(self) -> None: ...


class Port(Protocol):
    """One device on the loop: its device name (the journal's keys and the inbox's events name it), the serial
    port the loop waits on (None: a port read by a thread, whose bytes come through the inbox), and what the
    loop calls on it."""

    @property
    def device(self) -> Device: ...

    @property
    def port(self) -> PortReader | None: ...

    def receive(self, table: TableSide, data: bytes, now: float) -> None:
        """Bytes from the device (read by the loop, or handed through the inbox): decode and handle them."""
        ...

    def poll(self, table: TableSide, now: float) -> None:
        """The wire's timers (link timeouts, resends, ACKs owed), once per wake-up, in the loop's port order."""
        ...

    def port_state(self, table: TableSide, up: bool, detail: str) -> None:
        """The device's serial port opened or failed."""
        ...

    def shown(self, table: TableSide, view: TableView | None) -> None:
        """After each wake-up's commit: ``view`` is the one the sinks were last shown (the reader is told the
        betting window from it)."""
        ...


class QueuedPort(Port, Protocol):
    """A port served after the shoe's and the inbox at every wake-up (the bet-spot reader's; a chip tray's or a
    seat's card reader's next): one capped read at a time, its events handled until the shoe has bytes
    waiting, the rest kept for the next wake-up; acknowledged after the commit like the shoe."""

    def waiting(self) -> bool:
        """Whether events decoded at an earlier wake-up still wait to be handled."""
        ...

    def work(self, table: TableSide, readable: bool, shoe_waiting: Callable[[], bool]) -> bool:
        """This port's share of one wake-up (``readable``: its port has bytes); False when the port is gone."""
        ...

    def caught_up(self, table: TableSide, readable: bool) -> bool:
        """At start: whether the device has sent what it held while the table was down (the shoe's port is
        read once every queued port has caught up, or after ``LoopConfig.reader_catch_up`` seconds)."""
        ...

    def acknowledge(self, number: int, session: int | None) -> None:
        """After the commit: the device's cumulative ACK."""
        ...


class PortWire(Protocol[E]):
    """What every port needs of its device's codec: bytes in, the wire's events out; and its timers, polled
    (events of their own, and bytes to send: a heartbeat, a resend)."""

    def receive(self, data: bytes, now: float) -> list[E]: ...

    def poll(self, now: float) -> tuple[list[E], bytes]: ...


class WirePort(Generic[E]):
    """What a port on a wire does the same way whatever its device: the bytes it is handed decoded and each
    event handled in order (:meth:`receive`), the wire's timers polled and what they say sent (:meth:`poll`).
    A device's port (the shoe's, the reader's) subclasses it with its ``wire``, its ``write`` and what each of
    its events does (:meth:`event`)."""

    wire: PortWire[E]
    write: Callable[[bytes], None]

    def receive(self, table: TableSide, data: bytes, now: float) -> None:
        """Bytes from the device (read by the loop, or handed through the inbox): decoded, each event handled."""
        for ev in self.wire.receive(data, now):
            self.event(table, ev)

    def poll(self, table: TableSide, now: float) -> None:
        """The wire's timers: their events handled, their bytes (a heartbeat, a resend) written to the device."""
        events, data = self.wire.poll(now)
        for ev in events:
            self.event(table, ev)
        if data:
            self.write(data)

    def event(self, table: TableSide, ev: E) -> None:
        """One event of the device's wire: what it does to the table (each device's own)."""
        raise NotImplementedError
