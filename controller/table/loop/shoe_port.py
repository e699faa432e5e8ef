"""The card-reading shoe on the table loop: its port, its wire, and what each of its events does to the table.

The shoe's wire (:class:`~controller.table.wire.BinaryWire` or :class:`~controller.table.wire.AsciiWire`) turns
its bytes into :data:`~controller.table.wire.WireEvent`; :meth:`ShoePort.event` turns each into the table's
inputs: a card, a button, the link up or down (LINK DOWN), a reboot, the line's noise (counted; NOISY LINE and
its summary journaled). The loop reads the shoe's port first at every wake-up; the ACK goes out after the
commit (:class:`~controller.table.loop.commit.WriteAhead`, which holds the wire for it), the PROMPT after each
commit and whenever the port comes back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from controller.game.records import InputKind, input_body, record_body
from controller.game.table import Alarm, CardDrawn, LineNoise, LinkChanged, ShoeRebooted
from controller.table.loop.ports import PortReader, TableSide, WirePort, log
from controller.table.wire import (
    Wire,
    WireDuplicate,
    WireEvent,
    WireInput,
    WireLink,
    WireNoise,
    WireNoiseSummary,
    WireNoisy,
    WireReboot,
)
from firmware_protocol.messages import MessageType

__all__ = ["ShoePort"]

#: Distinct refused-HELLO problems said on the log (each once); past it they are only counted.
HELLOS_SAID = 8


@dataclass
class ShoePort(WirePort[WireEvent]):
    """The shoe as the loop is given it: its wire, the port's writer, and the port the loop waits on (None: a
    port read by a thread, its bytes handed through the inbox)."""

    wire: Wire
    write: Callable[[bytes], None]
    port: PortReader | None = None
    device: Literal["shoe"] = field(default="shoe", init=False)
    #: Monotonic time the bytes being decoded were read (the card -> LED figure starts there).
    read_at: float = field(default=0.0, init=False)
    #: The refused HELLOs' problems already said on the log.
    hellos_refused: set[str] = field(default_factory=set, init=False)

    def receive(self, table: TableSide, data: bytes, now: float) -> None:
        """The bytes decoded as every port's are, with the time they were read kept (the card -> LED figure)."""
        self.read_at = now
        super().receive(table, data, now)

    def port_state(self, table: TableSide, up: bool, detail: str) -> None:
        log.info("shoe port %s: %s", "open" if up else "down", detail)
        link_down = Alarm.LINK_DOWN in table.state.alarms
        if not self.wire.reports_link and up == link_down:
            # A dialect without a heartbeat: the port's state is all we know of the link.
            self.link(table, up, detail)
        if up:
            table.send_prompt()

    def shown(self, table: TableSide, view: object) -> None:
        """Nothing: the shoe's PROMPT goes with the commit."""

    def link(self, table: TableSide, up: bool, detail: str) -> None:
        """LINK DOWN, or up again: a table input (staged: the PROMPT follows the commit)."""
        log.log(logging.INFO if up else logging.WARNING, "shoe link %s: %s", "up" if up else "DOWN", detail)
        if table.metrics is not None:
            table.metrics.link(up)
        table.apply(LinkChanged(up), input_body(LinkChanged(up), detail=detail), None, None)

    def event(self, table: TableSide, ev: WireEvent) -> None:
        """One event of the shoe's wire."""
        metrics = table.metrics
        if isinstance(ev, WireInput):
            table.apply(ev.table_input, ev.body, ev.session, ev.number)
            if metrics is not None and isinstance(ev.table_input, CardDrawn):
                metrics.card_read(table.clock() - self.read_at)  # the sinks (LEDs first) are updated
        elif isinstance(ev, WireDuplicate):
            # A resend of an event already delivered: nothing to apply. The session itself re-ACKs it once
            # it is committed (never before: write-ahead).
            pass
        elif isinstance(ev, WireLink):
            self.link(table, ev.up, ev.detail)  # staged: the PROMPT follows the commit
        elif isinstance(ev, WireReboot):
            body = input_body(ShoeRebooted(), old_session=ev.old_session, new_session=ev.new_session)
            table.apply(ShoeRebooted(), body, None, None)
        elif isinstance(ev, WireNoise):
            table.stats.noise += 1
            if metrics is not None:
                metrics.frame_rejected(ev.reason)
            said = self.hellos_refused
            if ev.message_type == MessageType.HELLO and ev.detail not in said and len(said) < HELLOS_SAID:
                # A shoe whose HELLO breaks the spec (a serial padded with NULs ...) resends it at every join:
                # said once (per distinct problem, a few at most), counted like any rejected frame, never
                # journaled (docs/protocol.md 2.4).
                said.add(ev.detail)
                log.warning("shoe HELLO refused (a protocol error; the shoe's firmware is at fault): %s", ev.detail)
            if log.isEnabledFor(logging.DEBUG):
                # the length only: a rejected frame's bytes may spell a card not yet declared (squeeze games)
                log.debug("wire noise %s: %s (%d bytes)", ev.reason, ev.detail, len(ev.raw))
        elif isinstance(ev, WireNoisy):
            log.warning("shoe line %s: %s", "NOISY" if ev.noisy else "quiet again", ev.detail)
            table.apply(LineNoise(ev.noisy), input_body(LineNoise(ev.noisy), detail=ev.detail), None, None)
        elif isinstance(ev, WireNoiseSummary):
            summary = record_body(
                InputKind.NOISE,
                rejected=ev.rejected,
                bytes=ev.discarded,
                reasons=ev.reasons,
                seconds=round(ev.seconds, 3),
            )
            table.apply(None, summary, None, None)
