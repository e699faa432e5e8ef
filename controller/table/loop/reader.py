"""The bet-spot reader on the table loop: its port, its wire, what its events do, and the betting window.

A table with RFID bet spots has a second serial link (``[spots] port``): the loop waits on the reader's port
beside the shoe's, and its events become table inputs by the same path as the shoe's (``TableState.apply``,
the sinks, one commit, the reader's ACK only after it). What this module holds:

* :class:`ReaderWire`, what the port needs of the reader's codec (:class:`controller.table.spot_wire.SpotWire`):
  bytes in, its events (:data:`~controller.table.spot_wire.SpotWireEvent`) out; the ACK; and the WINDOW message.
* :class:`ReaderPort`, the reader as one of the loop's ports (:class:`~controller.table.loop.ports.Port`): its
  port, wire and writer, and what each event does (:meth:`ReaderPort.event`): the money's inputs applied, a
  snapshot that changes nothing the wager book knows counted and acknowledged, not journaled (within
  :data:`READER_ACK_SLACK`), READER DOWN / up, noise counted.
* The **cap** on the reader's work: at most :data:`READER_READ_SIZE` bytes are read from the reader per
  wake-up, after the shoe's port has been served, and its events are handled one by one until the shoe's
  port has bytes waiting (:meth:`ReaderPort.work`), so a reader flooding its line costs a card at most one
  small read's decoding, never a backlog.
* :func:`window_of`: the betting window the reader is told (``Window``), from the money's view: locked at the
  coup's first card, payout at the declare, open again at the next betting time, once the dealer has paid
  and taken every spot.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from controller.game.records import InputKind, input_body, record_body
from controller.game.table import Notice, TableInput, TableView
from controller.game.wagers import MoneyView, Phase, ReaderLinkChanged, SpotsSnapshot, SpotState
from controller.table.loop.ports import PortReader, TableSide, WirePort, log
from controller.table.spot_wire import SpotInput, SpotRecord, SpotWireEvent
from controller.table.wire import WireNoise, WireNoiseSummary, WireNoisy, WireReboot
from firmware_protocol.spots import WindowState

__all__ = ["READER_ACK_SLACK", "READER_READ_SIZE", "ReaderPort", "ReaderWire", "window_of"]

#: The most event numbers of the reader left unacknowledged because they were taken without a journal record
#: (no-news snapshots): well inside a reader's window (256 events in docs/spots.md's reference).
READER_ACK_SLACK = 64

#: Most bytes read from the reader's port per wake-up of the loop (a SpotReport of a 35-chip stack is some
#: 300 bytes). The shoe's port is read first at every wake-up, so this bounds what stands before a card.
READER_READ_SIZE = 512


class ReaderWire(Protocol):
    """The reader's codec as its port uses it (:class:`controller.table.spot_wire.SpotWire`)."""

    def receive(self, data: bytes, now: float) -> list[SpotWireEvent]: ...

    def acknowledge(self, number: int, session: int | None = None) -> bytes: ...

    def poll(self, now: float) -> tuple[list[SpotWireEvent], bytes]: ...

    def window(self, state: WindowState) -> bytes: ...


@dataclass
class ReaderPort(WirePort[SpotWireEvent]):
    """The bet-spot reader as the loop is given it: the port it waits on, the codec, and the port's writer;
    and what the reader's port keeps between wake-ups (the events one capped read gave, the window told, the
    last event journaled)."""

    port: PortReader
    wire: ReaderWire
    write: Callable[[bytes], None]
    read_size: int = READER_READ_SIZE
    device: Literal["reader"] = field(default="reader", init=False)
    #: The reader's events decoded but not handled yet (what one capped read gave: a few dozen at most).
    backlog: deque[SpotWireEvent] = field(default_factory=deque, init=False)
    #: The betting window the reader was last told (None: to be told again).
    window: WindowState | None = field(default=None, init=False)
    #: (session, number) of the reader's last event staged for the journal: what its ACK may cover.
    journaled: tuple[int | None, int] | None = field(default=None, init=False)

    # -- the loop's calls (receive and poll: WirePort's) -------------------------------------------
    def port_state(self, table: TableSide, up: bool, detail: str) -> None:
        log.info("bet-spot reader port %s: %s", "open" if up else "down", detail)
        if up:
            self.window = None  # tell the reader the window again

    def shown(self, table: TableSide, view: TableView | None) -> None:
        """Tell the reader the betting window when it changed (locked at the first card, payout at the
        declare, open at the next betting time), from ``view``, the one last shown (the money's view is not
        built twice)."""
        if table.state.money is None or view is None:
            return
        window = window_of(view.money)
        if window is not None and window != self.window:
            self.window = window
            self.write(self.wire.window(window))

    def work(self, table: TableSide, readable: bool, shoe_waiting: Callable[[], bool]) -> bool:
        """The reader's share of one wake-up: one capped read of its port (only when what the last read gave is
        done), then its events in order until ``shoe_waiting()`` says the shoe has bytes waiting; the rest waits
        for the next wake-up, which serves the shoe first. False when the port is gone."""
        backlog = self.backlog
        if not backlog and readable:
            table.stats.reader_reads += 1
            data = self.port.read(self.read_size)
            if data is None:  # the port is gone
                return False
            if data:
                backlog.extend(self.wire.receive(data, table.clock()))
        while backlog:
            if shoe_waiting():
                table.stats.reader_yields += 1
                break
            self.event(table, backlog.popleft())
        return True

    def waiting(self) -> bool:
        """Whether events one capped read gave still wait to be handled."""
        return bool(self.backlog)

    def caught_up(self, table: TableSide, readable: bool) -> bool:
        """At start: the reader's link is up and nothing more waits on its port. After a restart both devices
        send what they held meanwhile at once; the reader's bets went down before the shoe's first card, so
        they are taken first, or the card would lock the wagers the journal last knew."""
        money = table.state.money
        return money is not None and money.reader_up and not readable and not self.backlog

    def acknowledge(self, number: int, session: int | None) -> None:
        """After the commit: the reader's cumulative ACK."""
        self.write(self.wire.acknowledge(number, session))

    def assume_down(self, table: TableSide, detail: str) -> None:
        """At start the reader's link is down until it is heard (READER DOWN shows until then)."""
        if table.state.money is not None and table.state.money.reader_up:
            self.link(table, False, detail)

    # -- the reader's events ---------------------------------------------------------------------
    def event(self, table: TableSide, ev: SpotWireEvent) -> None:
        """One event of the reader's wire: its inputs go the shoe's way (applied, shown, staged, the ACK after
        the commit); a snapshot that changes nothing the wager book knows is counted and acknowledged, not
        journaled; the link's changes are READER DOWN / up; noise is counted."""
        metrics = table.metrics
        if isinstance(ev, WireNoise):
            table.stats.reader_noise += 1
            if metrics is not None:
                metrics.spots_frame_rejected(ev.reason)
            if log.isEnabledFor(logging.DEBUG):
                log.debug("reader wire noise %s: %s (%d bytes)", ev.reason, ev.detail, len(ev.raw))
            return
        if metrics is not None:
            metrics.spots_frame()
        if isinstance(ev, SpotInput):
            table_input = ev.table_input
            if isinstance(table_input, ReaderLinkChanged):
                self.link(table, table_input.up, str(ev.facts.get("detail", "")))
                return
            if isinstance(table_input, SpotsSnapshot):
                money = table.state.money
                news = money is None or money.differs(table_input)
                if news:
                    table.stats.snapshots_journaled += 1
                else:
                    table.stats.snapshots_ignored += 1
                if metrics is not None:
                    metrics.spots_snapshot(news)
                if not news and not self.withhold(ev.session, ev.number):
                    # so many withheld that the reader's window would fill: journaled after all (a no-op for the
                    # book), so that its ACK is the journal's and a restart resumes the reader's session here
                    table.stats.snapshots_kept += 1
                elif not news:
                    return
            self._apply(table, table_input, input_body(table_input, **ev.facts), ev.session, ev.number)
        elif isinstance(ev, SpotRecord):
            try:
                kind = InputKind(ev.kind)
            except ValueError:
                kind = None
            if kind is None or kind.replayed:
                # A fact the record vocabulary has no kind for (a refused snapshot: the next one corrects it):
                # said on the log, acknowledged, not journaled.
                log.warning("bet-spot reader: %s %s", ev.kind, ev.facts)
                if not self.withhold(ev.session, ev.number) and ev.number is not None:
                    table.commit.stage_ack(ev.session, ev.number, "reader")
                return
            notices: list[Notice] = []
            if kind is InputKind.DEALER_CARD:  # a badge: the dealer on duty signs in or out (or it is refused)
                notices = table.badge(str(ev.facts.get("uid", "")), bool(ev.facts.get("present")))
            self._apply(table, None, record_body(kind, **ev.facts), ev.session, ev.number, notices)
        elif isinstance(ev, WireReboot):
            # Reports the reader held unacknowledged are lost with its reboot; its next snapshot restores what
            # the spots hold (the book keeps its last readings meanwhile).
            log.warning("bet-spot reader rebooted (session %s -> %s): %s", ev.old_session, ev.new_session, ev.detail)
        elif isinstance(ev, WireNoisy):
            log.warning("bet-spot reader line %s: %s", "NOISY" if ev.noisy else "quiet again", ev.detail)
        elif isinstance(ev, WireNoiseSummary):
            log.warning(
                "bet-spot reader line: %d frames (%d bytes) rejected: %s", ev.rejected, ev.discarded, ev.reasons
            )

    def _apply(
        self,
        table: TableSide,
        table_input: TableInput | None,
        body: dict[str, Any],
        session: int | None,
        number: int | None,
        notices: Sequence[Notice] = (),
    ) -> None:
        staged = table.apply(table_input, body, session, number, device="reader", notices=notices)
        if staged and number is not None:
            self.journaled = (session, number)

    def withhold(self, session: int | None, number: int | None) -> bool:
        """Whether the reader's event ``number``, taken without a journal record, may go unacknowledged for now:
        the ACK of the next event journaled covers it (ACKs are cumulative). Until then the reader holds it, so
        the journal's last reader event stays the reader's resume point (a restart resumes the reader's
        session there, and the reader still holds everything after it). False once :data:`READER_ACK_SLACK`
        numbers wait so: the caller journals it (or, for a fact without a record kind, acknowledges it)."""
        if number is None:
            return True
        base = self.journaled
        if base is None or base[0] != session:
            base = self.journaled = (session, number - 1)
        return number - base[1] <= READER_ACK_SLACK

    def link(self, table: TableSide, up: bool, detail: str) -> None:
        """READER DOWN (the bets cannot be checked) or up again: a table input like the shoe's link."""
        log.log(logging.INFO if up else logging.WARNING, "bet-spot reader link %s: %s", "up" if up else "DOWN", detail)
        if table.metrics is not None:
            table.metrics.spots_link(up)
        if up:
            self.window = None  # a reader that comes (back) is told the window
        change = ReaderLinkChanged(up)
        self._apply(table, change, input_body(change, detail=detail), None, None)


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
