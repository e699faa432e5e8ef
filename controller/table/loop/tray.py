"""The chip tray on the table loop: its port, its wire, what its events do, and the settle rule's edge.

A table with an RFID chip tray has one more serial link (``[tray] port``, ``docs/tray.md``): the loop waits on
the tray's port beside the shoe's and the bet-spot reader's, and its events become table inputs by the same
path (``TableState.apply``, the sinks, one commit, the tray's ACK only after it). What this module holds:

* :class:`TrayWireLike`, what the port needs of the tray's codec (:class:`controller.table.tray_wire.TrayWire`):
  bytes in, its events (:data:`~controller.table.tray_wire.TrayWireEvent`) out; the ACK; and COUNT_REQUEST.
* :class:`TrayPort`, the tray as one of the loop's queued ports (:class:`~controller.table.loop.ports.QueuedPort`):
  capped reads after the shoe's port, yielding to the shoe between its events, TRAY DOWN at start until the
  tray is heard, and what each event does (:meth:`TrayPort.event`).
* **The settle rule's edge** (:meth:`TrayPort.poll`): the port remembers when the last tube report or snapshot
  came. Once the tray's book would count a still moment (:meth:`~controller.game.tray.TrayBook.ready`: the
  link up, the tubes known, a coup's reconciliation due with its payout over) and no report has come for
  ``settle`` seconds, it applies one :class:`~controller.game.tray.TrayStill` as a journaled table input, at most
  once per report: the journal says when the tray was still, so a replay makes the same decisions. While the
  book wants a recount (:attr:`~controller.game.tray.TrayBook.recount_wanted`) the port asks the tray for a
  full count (COUNT_REQUEST) once, and again every :data:`COUNT_RETRY` seconds while none has come.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from controller.game.notation import money_text
from controller.game.records import InputKind, input_body, record_body
from controller.game.table import TableInput, TableView
from controller.game.tray import TrayLinkChanged, TraySnapshot, TrayStill, TubeSeen
from controller.table.loop.ports import PortReader, TableSide, WirePort, log
from controller.table.tray_wire import TrayCountOwed, TrayRecord, TrayWireEvent, TrayWireInput
from controller.table.wire import WireNoise, WireNoiseSummary, WireNoisy, WireReboot

__all__ = ["COUNT_RETRY", "DEFAULT_SETTLE", "TRAY_READ_SIZE", "TrayPort", "TrayWireLike"]

#: Most bytes read from the tray's port per wake-up of the loop: more than a TUBE of 100 chips (815 bytes on
#: the wire). The shoe's port is read first at every wake-up, so this bounds what stands before a card.
TRAY_READ_SIZE = 1024

#: The settle time (``[tray] settle_seconds``): no tube report for this long after a payout, and the tray is
#: still (``docs/tray.md`` section 6).
DEFAULT_SETTLE = 2.0

#: How long the port waits for the snapshot that answers its COUNT_REQUEST before it asks again (a request
#: is not acknowledged: one lost on the line is asked again). A full tray's snapshot is about 1.1 s of line.
COUNT_RETRY = 5.0


class TrayWireLike(Protocol):
    """The tray's codec as its port uses it (:class:`controller.table.tray_wire.TrayWire`)."""

    def receive(self, data: bytes, now: float) -> list[TrayWireEvent]: ...

    def acknowledge(self, number: int, session: int | None = None) -> bytes: ...

    def poll(self, now: float) -> tuple[list[TrayWireEvent], bytes]: ...

    def count_request(self) -> bytes: ...


@dataclass
class TrayPort(WirePort[TrayWireEvent]):
    """The chip tray as the loop is given it: the port it waits on, the codec, the port's writer and the settle
    time; and what the port keeps between wake-ups (the events one capped read gave, when the last report came,
    whether the tray was found still since, when a count was last asked)."""

    port: PortReader
    wire: TrayWireLike
    write: Callable[[bytes], None]
    settle: float = DEFAULT_SETTLE
    read_size: int = TRAY_READ_SIZE
    count_retry: float = COUNT_RETRY
    device: Literal["tray"] = field(default="tray", init=False)
    #: The tray's events decoded but not handled yet (what one capped read gave).
    backlog: deque[TrayWireEvent] = field(default_factory=deque, init=False)
    #: Monotonic time of the last tube report or snapshot applied (None: none yet since the start).
    last_report: float | None = field(default=None, init=False)
    #: Whether a TrayStill was applied since the last report (one still per report).
    stilled: bool = field(default=False, init=False)
    #: When a recount was last asked (None: not since the last still).
    asked: float | None = field(default=None, init=False)
    #: COUNT_REQUESTs written, TrayStill inputs applied, snapshots refused (for the tests and the log).
    count_requests: int = field(default=0, init=False)
    stills: int = field(default=0, init=False)
    refused: int = field(default=0, init=False)

    # -- the loop's calls (receive is WirePort's) --------------------------------------------------
    def port_state(self, table: TableSide, up: bool, detail: str) -> None:
        log.info("chip tray port %s: %s", "open" if up else "down", detail)

    def shown(self, table: TableSide, view: TableView | None) -> None:
        """Nothing: the tray is told nothing of the game."""

    def work(self, table: TableSide, readable: bool, shoe_waiting: Callable[[], bool]) -> bool:
        """The tray's share of one wake-up: one capped read of its port (only when what the last read gave is
        done), then its events in order until ``shoe_waiting()`` says the shoe has bytes waiting; the rest waits
        for the next wake-up. False when the port is gone."""
        backlog = self.backlog
        if not backlog and readable:
            table.stats.tray_reads += 1
            data = self.port.read(self.read_size)
            if data is None:  # the port is gone
                return False
            if data:
                backlog.extend(self.wire.receive(data, table.clock()))
        while backlog:
            if shoe_waiting():
                table.stats.tray_yields += 1
                break
            self.event(table, backlog.popleft())
        return True

    def waiting(self) -> bool:
        """Whether events one capped read gave still wait to be handled."""
        return bool(self.backlog)

    def caught_up(self, table: TableSide, readable: bool) -> bool:
        """At start the shoe never waits for the tray: the tray's reports do not change what a card does."""
        return True

    def acknowledge(self, number: int, session: int | None) -> None:
        """After the commit: the tray's cumulative ACK."""
        self.write(self.wire.acknowledge(number, session))

    def assume_down(self, table: TableSide, detail: str) -> None:
        """At start the tray's link is down until it is heard (TRAY DOWN shows until then)."""
        tray = table.state.tray
        if tray is not None and tray.link_up:
            self.link(table, False, detail)

    def poll(self, table: TableSide, now: float) -> None:
        """The wire's timers (WirePort's), then the settle rule's edge and the recount (see the module's
        docstring)."""
        super().poll(table, now)
        tray = table.state.tray
        if tray is None:
            return
        if (
            self.last_report is not None
            and not self.stilled
            and now - self.last_report >= self.settle
            and tray.ready(table.state.payout_over)
        ):
            self._still(table, now - self.last_report)
            tray = table.state.tray
            if tray is None:
                return
        due = self.asked is None or now - self.asked >= self.count_retry
        if tray.recount_wanted and not tray.recounted and tray.link_up and due:
            self.asked = now
            self.ask(table, "a variance to confirm: recount")

    def _still(self, table: TableSide, quiet: float) -> None:
        """The tray is still: one journaled TrayStill; what it counted is said on the log and in the metrics."""
        self.stilled = True
        self.asked = None
        self.stills += 1
        before = table.state.tray
        assert before is not None
        was = (before.expected, before.due, before.discrepancy)
        still = TrayStill()
        self._apply(table, still, input_body(still, detail=f"no tube report for {quiet:.1f} s"), None, None)
        after = table.state.tray
        if after is None:
            return
        expected, due, discrepancy = was
        counted = (expected is None and after.expected is not None) or (due is not None and after.due is None)
        if not counted:
            if after.recount_wanted:
                log.warning("chip tray does not add up after coup %s: recount asked", due[1] if due else "?")
            return
        variance = 0 if expected is None else after.discrepancy - discrepancy
        metrics = table.metrics
        if metrics is not None:
            metrics.tray_count(variance)
        coup = "anchor" if expected is None else f"coup {due[1] if due else '?'}"
        log.info("chip tray counted (%s): %s", coup, money_text(after.counted_cents))
        if variance:
            log.warning("chip tray: %s (confirmed by a recount)", after.alarm)

    def ask(self, table: TableSide, why: str) -> None:
        """COUNT_REQUEST: the tray sends a full snapshot."""
        self.count_requests += 1
        log.info("chip tray: count requested (%s)", why)
        self.write(self.wire.count_request())

    # -- the tray's events -------------------------------------------------------------------------
    def event(self, table: TableSide, ev: TrayWireEvent) -> None:
        """One event of the tray's wire: its inputs go the shoe's way (applied, shown, staged, the ACK after the
        commit); the link's changes are TRAY DOWN / up; a count owed is asked for; noise is counted."""
        metrics = table.metrics
        if isinstance(ev, WireNoise):
            table.stats.tray_noise += 1
            if metrics is not None:
                metrics.tray_frame_rejected(ev.reason)
            if log.isEnabledFor(logging.DEBUG):
                log.debug("tray wire noise %s: %s (%d bytes)", ev.reason, ev.detail, len(ev.raw))
            return
        if isinstance(ev, TrayCountOwed):
            tray = table.state.tray
            if tray is None or tray.link_up:
                self.ask(table, ev.detail)
            return
        if metrics is not None and not isinstance(ev, WireNoisy | WireNoiseSummary):
            metrics.tray_frame()
        if isinstance(ev, TrayWireInput):
            table_input = ev.table_input
            if isinstance(table_input, TrayLinkChanged):
                self.link(table, table_input.up, str(ev.facts.get("detail", "")))
                return
            if isinstance(table_input, TubeSeen | TraySnapshot):
                self.last_report = table.clock()
                self.stilled = False
                if isinstance(table_input, TraySnapshot):
                    table.stats.tray_snapshots += 1
                    if metrics is not None:
                        metrics.tray_snapshot(True)
            self._apply(table, table_input, input_body(table_input, **ev.facts), ev.session, ev.number)
        elif isinstance(ev, TrayRecord):
            kind = InputKind(ev.kind)
            if kind is InputKind.SNAPSHOT_REFUSED:
                self.refused += 1
                if metrics is not None:
                    metrics.tray_snapshot(False)
                log.warning("chip tray: %s", ev.facts.get("detail"))
            self._apply(table, None, record_body(kind, **ev.facts), ev.session, ev.number)
        elif isinstance(ev, WireReboot):
            # Reports the tray held unacknowledged are lost with its reboot; the snapshot after its HELLO tells
            # the table the truth again.
            log.warning("chip tray rebooted (session %s -> %s): %s", ev.old_session, ev.new_session, ev.detail)
        elif isinstance(ev, WireNoisy):
            log.warning("chip tray line %s: %s", "NOISY" if ev.noisy else "quiet again", ev.detail)
        elif isinstance(ev, WireNoiseSummary):
            log.warning("chip tray line: %d frames (%d bytes) rejected: %s", ev.rejected, ev.discarded, ev.reasons)

    def _apply(
        self,
        table: TableSide,
        table_input: TableInput | None,
        body: dict[str, Any],
        session: int | None,
        number: int | None,
    ) -> None:
        table.apply(table_input, body, session, number, device="tray")

    def link(self, table: TableSide, up: bool, detail: str) -> None:
        """TRAY DOWN (what the tubes hold is not known) or up again: a journaled table input like the reader's
        link; a full count is asked for once the link is up (the wire says so)."""
        log.log(logging.INFO if up else logging.WARNING, "chip tray link %s: %s", "up" if up else "DOWN", detail)
        if table.metrics is not None:
            table.metrics.tray_link(up)
        if not up:
            self.last_report = None  # no still moment is counted from reports before the gap
        change = TrayLinkChanged(up)
        self._apply(table, change, input_body(change, detail=detail), None, None)
