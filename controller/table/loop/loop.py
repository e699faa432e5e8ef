"""The one table loop: the only owner of the table's state, gluing the inbox, the wire, the core and the commit.

The loop waits (:mod:`selectors`) on the shoe's port itself and on the inbox's wake-up pipe for everything
else. When the port is readable it reads what is there (at most :data:`~controller.table.loop.inbox.READ_SIZE`
bytes) and decodes it in this thread: one wake-up per card, and the bytes waiting are bounded by the kernel's
buffer. Other threads only put events in the :class:`~controller.table.loop.inbox.Inbox`. Each event runs through
the wire codec and the pure :class:`~controller.game.table.TableState`, the new view goes to every sink (LEDs
first), and the input and its derived records are staged for the write-ahead commit
(:class:`~controller.table.loop.commit.WriteAhead`: one transaction per batch, and only then the ACK). The shell's
own alarms (:mod:`~controller.table.loop.shell_alarms`) are merged into every view shown. At quiet moments the loop
checks the journal's file and gives its retention one bounded step.

Everything the loop uses is passed to its constructor; nothing is set on it afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import math
import select
import selectors
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.game.edges import EdgeWatch
from controller.game.records import InputKind, RecordKind, Source, derived_records, input_body, record_body
from controller.game.rules import Ruleset
from controller.game.table import (
    Alarm,
    CardDrawn,
    DeclarePressed,
    Due,
    LineNoise,
    LinkChanged,
    NewShoePressed,
    Notice,
    ShoeRebooted,
    TableInput,
    TableState,
    TableView,
    VoidPressed,
)
from controller.game.wagers import ReaderLinkChanged, SpotsSnapshot
from controller.journal import JournalError
from controller.journal.ack import AckRefusals, refusal
from controller.table.clock import ClockStatus
from controller.table.loop.commit import JOURNAL_RETRY_SECONDS, MAX_STAGED, CommitJournal, CommitMetrics, WriteAhead
from controller.table.loop.inbox import (
    READ_SIZE,
    Device,
    FloorAck,
    Inbox,
    LoopEvent,
    PanelPress,
    PortState,
    Stop,
    WireBytes,
)
from controller.table.loop.reader import ReaderPort, window_of
from controller.table.loop.resume import ReplayJournal, resume
from controller.table.loop.shell_alarms import INPUT_LOST_HOLD, ShellAlarms
from controller.table.panel import ButtonAction
from controller.table.sinks import Sink
from controller.table.spot_wire import SpotInput, SpotRecord, SpotWireEvent
from controller.table.wire import (
    Wire,
    WireDuplicate,
    WireInput,
    WireLink,
    WireNoise,
    WireNoiseSummary,
    WireNoisy,
    WireReboot,
)
from firmware_protocol.messages import MessageType
from firmware_protocol.spots import WindowState
from floor_protocol.ack import Ack as FloorAckMessage

log = logging.getLogger(__name__)

#: The most event numbers of the reader left unacknowledged because they were taken without a journal record
#: (no-news snapshots): well inside a reader's window (256 events in docs/spots.md's reference).
READER_ACK_SLACK = 64
#: At start, the longest the shoe's port waits for the bet-spot reader to catch up (seconds; the shoe holds its
#: events meanwhile, and its link timeout is longer).
READER_CATCH_UP = 1.5

#: How often a quiet loop makes the journal's pre-commit checks (file still at its path, disk headroom).
JOURNAL_CHECK_SECONDS = 2.0
#: How often, at a quiet moment, the loop asks the kernel whether the clock is synchronised.
CLOCK_CHECK_SECONDS = 60.0
#: Distinct refused-HELLO problems said on the log (each once); past it they are only counted.
_HELLOS_SAID = 8

_PANEL_INPUTS: dict[ButtonAction, Callable[[], TableInput]] = {
    ButtonAction.DECLARE: DeclarePressed,
    ButtonAction.NEW_SHOE: NewShoePressed,
    ButtonAction.VOID: VoidPressed,
}


class JournalLike(CommitJournal, ReplayJournal, Protocol):
    """Everything the loop uses of the journal (controller.journal.Journal): the commit, the replay, the
    quiet-time check of its file, and the floor's ack."""

    def check_file(self) -> None: ...

    def store_floor_ack(self, ack: FloorAckMessage) -> bool: ...

    def head(self) -> tuple[int, str]: ...

    def anchor(self) -> tuple[int, str]: ...

    def record_hash(self, seq: int) -> str | None: ...


class LoopMetrics(CommitMetrics, Protocol):
    """What the loop reports to the health metrics (controller.metrics.TableMetrics)."""

    def card_read(self, seconds_to_led: float) -> None: ...

    def frame_rejected(self, reason: str) -> None: ...

    def link(self, up: bool) -> None: ...

    def events_dropped(self, kind: str, count: int) -> None: ...

    def spots_frame(self) -> None: ...

    def spots_frame_rejected(self, reason: str) -> None: ...

    def spots_snapshot(self, journaled: bool) -> None: ...

    def spots_link(self, up: bool) -> None: ...


class Pruner(Protocol):
    """The journal's retention on the loop (controller.journal.Retention): one bounded step at a quiet time."""

    def step(self, now: float) -> int: ...


class PortReader(Protocol):
    """The shoe's port as the loop reads it (controller.table.shoe_link.ShoeLink)."""

    def fileno(self) -> tuple[int, int] | None: ...

    def read(self, size: int = ...) -> bytes | None: ...


def wall_clock() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass
class LoopStats:
    """The loop's own counters (the commit's are :attr:`WriteAhead.stats`, the drops :attr:`Inbox.dropped`)."""

    noise: int = 0  # frames or lines the decoder rejected
    reads: int = 0  # reads of the shoe's port by the loop
    reader_reads: int = 0  # reads of the bet-spot reader's port by the loop
    reader_noise: int = 0  # the reader's frames rejected
    reader_yields: int = 0  # times the reader's events waited because the shoe's port had bytes
    snapshots_journaled: int = 0  # the reader's snapshots that changed what the wager book knew
    snapshots_ignored: int = 0  # ... and those that did not (counted, not journaled)
    snapshots_kept: int = 0  # no-news snapshots journaled all the same, to keep the reader's window open


class TableLoop:
    """Owns the table state; everything else talks to it through its :class:`Inbox`.

    ``sinks`` are shown every view (in order: the panel first); ``after_commit`` callbacks run after each
    commit that wrote records, after the ACK (cheap, never blocking); ``ruleset`` goes into each shoe's start
    record; ``edges`` (None: off) is fed every derived record and prices the shoe at each betting time;
    ``pruner`` (None: never) gets one step at quiet moments. :attr:`idle` is clear while the loop has
    something to apply, commit and acknowledge (for tools and tests that wait for a quiet table)."""

    def __init__(
        self,
        state: TableState,
        wire: Wire,
        journal: JournalLike,
        write: Callable[[bytes], None],
        sinks: Sequence[Sink] = (),
        *,
        inbox: Inbox | None = None,
        port: PortReader | None = None,
        after_commit: Sequence[Callable[[], None]] = (),
        metrics: LoopMetrics | None = None,
        pruner: Pruner | None = None,
        ruleset: Ruleset | None = None,
        edges: EdgeWatch | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = wall_clock,
        watchdog: Callable[[], object] | None = None,
        floor_table: str = "",
        floor_key: Ed25519PublicKey | None = None,
        watchdog_interval: float | None = None,
        tick: float = 0.25,
        max_batch: int = 64,
        max_staged: int = MAX_STAGED,
        journal_retry: float = JOURNAL_RETRY_SECONDS,
        input_lost_hold: float = INPUT_LOST_HOLD,
        reader: ReaderPort | None = None,
        reader_catch_up: float = READER_CATCH_UP,
        clock_status: Callable[[], ClockStatus] | None = None,
    ) -> None:
        self.state = state
        #: Asks the kernel whether the clock is synchronised (None: not watched); journaled at start and on
        #: each change (:meth:`_watch_clock`, every ``CLOCK_CHECK_SECONDS`` at a quiet moment).
        self.clock_status = clock_status
        self._clock_said: ClockStatus | None = None
        self._next_clock_check = -math.inf
        #: The bet-spot reader (None: the table has none, and works exactly as without one).
        self.reader = reader
        #: At start, how long the shoe's port may wait for the reader to catch up (:meth:`_holding_shoe`).
        self.reader_catch_up = reader_catch_up
        self._catch_up_until: float | None = None
        self._window: WindowState | None = None  # the betting window the reader was last told
        #: The reader's events decoded but not handled yet (what one capped read gave: a few dozen at most).
        self._reader_backlog: deque[SpotWireEvent] = deque()
        self._shown: TableView | None = None  # the view the sinks were last shown
        #: (session, number) of the reader's last event staged for the journal: what its ACK may cover.
        self._reader_journaled: tuple[int | None, int] | None = None
        self.wire = wire
        self.journal = journal
        self.write = write
        self.sinks: list[Sink] = list(sinks)
        self.inbox = inbox if inbox is not None else Inbox()
        self.idle = threading.Event()
        self.idle.set()
        self.port = port
        self.metrics = metrics
        self.pruner = pruner
        #: The table's ruleset: each shoe's start record carries it (the journal alone prices every wager).
        self.ruleset = ruleset
        #: The live exact edge (None: off); replaced by the one the journal leaves at a replay.
        self.edges = edges
        #: Clear while the loop applies, commits and acknowledges what it read: a thread with bulk work (the
        #: floor link flushing a backlog) waits on it between messages, so the loop gets the interpreter back
        #: at once at each of its I/O waits instead of after the other thread's switch interval.
        #: The floor's ack: stored only when it verifies with ``floor_key`` for ``floor_table`` and names the
        #: journal's own record (controller.journal.ack.refusal); what is refused is counted here.
        self.floor_table = floor_table
        self.floor_key = floor_key
        self.ack_refusals = AckRefusals("table")
        self.clock = clock
        self.watchdog = watchdog
        self.watchdog_interval = watchdog_interval
        self.tick = tick
        self.max_batch = max_batch
        self.stats = LoopStats()
        self._hellos_refused: set[str] = set()  # the refused HELLOs' problems already said on the log
        self.alarms = ShellAlarms(clock, input_lost_hold=input_lost_hold)
        self.commit = WriteAhead(
            journal,
            wire,
            write,
            alarm=self.alarms.journal,
            show=self.show,
            prompt=self._prompt_bytes,
            rebuild=self._rebuild,
            clock=clock,
            wall=wall,
            metrics=metrics,
            after_commit=after_commit,
            max_staged=max_staged,
            retry=journal_retry,
            reader_ack=self._reader_ack if reader is not None else None,
        )
        self.running = False
        self._next_watchdog = 0.0
        self._next_journal_check = 0.0
        self._read_at = 0.0  # monotonic time the bytes being decoded were read

    # -- for threads -----------------------------------------------------------------------------
    def put(self, event: LoopEvent) -> None:
        """Put an event in the loop's inbox (:meth:`Inbox.put`: bounded, a drop shows PRESS AGAIN)."""
        self.inbox.put(event)

    # -- start-up --------------------------------------------------------------------------------
    def replay(self) -> int:
        """Rebuild the state (and the edge watch) from the journal through the pure core
        (:func:`~controller.table.loop.resume.resume`, from the newest shoe's start). Returns inputs replayed."""
        resumed = resume(self.journal, self.state.rules, self.edges)
        self.state = resumed.state
        self.edges = resumed.edges
        return resumed.inputs

    def view(self) -> TableView:
        """The pure state's view, with the shell's alarms (the journal's, PRESS AGAIN) added to its alarms."""
        view = self.state.view()
        for alarm in self.alarms.standing():
            if alarm not in view.alarms:
                view = replace(view, alarms=(*view.alarms, alarm))
        return view

    def assume_link_down(self, detail: str) -> None:
        """At start the link is down until the shoe is heard: LINK DOWN shows (and is journaled) until then."""
        self._link(False, detail)

    def journal_failed(self, exc: JournalError) -> None:
        """The journal cannot take commits (a journal opened on a full disk): JOURNAL FULL, retried."""
        self.commit.failed(exc)

    def show(self, notices: Sequence[Notice] = ()) -> None:
        """Hand the current view to every sink; a failing sink is detached, never fatal."""
        view = self._shown = self.view()
        for sink in list(self.sinks):
            try:
                sink.update(view, notices)
            except Exception:
                log.exception("sink %s failed; detaching it", sink.name)
                self.sinks.remove(sink)

    # -- the loop --------------------------------------------------------------------------------
    def run(self, on_tick: Callable[[], None] | None = None) -> None:
        """Process events until :class:`Stop`; ``on_tick`` runs after each wake-up or idle tick."""
        self.running = True
        selector = selectors.DefaultSelector()
        watched: tuple[int, int] | None = None  # (generation, fd) of the port registered
        watched_reader: tuple[int, int] | None = None  # ... and of the bet-spot reader's port
        reader_port = self.reader.port if self.reader is not None else None
        try:
            with self.inbox.wakeup() as wake_r:
                selector.register(wake_r, selectors.EVENT_READ, "wake")
                if Alarm.NOISY_LINE in self.state.alarms:
                    self.wire.noise.assume_noisy(self.clock())  # cleared once the line is quiet
                self.show()
                self._send_prompt()
                if self.reader is not None:
                    self._catch_up_until = self.clock() + self.reader_catch_up
                reader_ready = True  # until a look at the reader's port says otherwise
                while True:
                    watched = self._watch_port(selector, watched, gone=self._holding_shoe(reader_ready))
                    watched_reader = self._watch_port(selector, watched_reader, port=reader_port, tag="reader")
                    port_ready = reader_ready = False
                    busy = not self.inbox.empty() or bool(self._reader_backlog)
                    for key, _mask in selector.select(0.0 if busy else self.tick):
                        if key.data == "wake":
                            self.inbox.drain_wakeup(wake_r)
                        elif key.data == "reader":
                            reader_ready = True
                        else:
                            port_ready = True
                    if port_ready or reader_ready or busy:
                        self.idle.clear()  # set again by flush() below
                    # Group commit: everything read or queued now is applied event by event, then committed
                    # in one transaction and acknowledged once.
                    if port_ready and self.port is not None:
                        self.stats.reads += 1
                        data = self.port.read(READ_SIZE)
                        if data is None:  # the port is gone: stop watching it now (its number may come back)
                            watched = self._watch_port(selector, watched, gone=True)
                        elif data:
                            self.handle(WireBytes(data, self.clock()))
                    stop = self._handle_waiting()
                    if (reader_ready or self._reader_backlog) and self.reader is not None:
                        # After the shoe's port and the inbox, capped, and yielding to the shoe between its
                        # events: a flooding reader delays no card.
                        watched_reader = self._reader_work(selector, watched_reader, watched, reader_ready)
                    self._check_dropped()
                    self._poll()
                    self.flush()
                    if stop:
                        break
                    self._tell_window()
                    if not port_ready:
                        self._quiet_time()
                    if on_tick is not None:
                        on_tick()
        finally:
            self.running = False
            selector.close()

    def _handle_waiting(self) -> bool:
        """Handle up to ``max_batch`` events from the inbox, in order; True when one of them was Stop."""
        for _ in range(self.max_batch):
            event = self.inbox.take()
            if event is None:
                return False
            if isinstance(event, Stop):
                return True
            self.handle(event)
            self.alarms.input_lost.taken()
        return False

    def _watch_port(
        self,
        selector: selectors.BaseSelector,
        watched: tuple[int, int] | None,
        gone: bool = False,
        *,
        port: PortReader | Literal["shoe"] | None = "shoe",
        tag: str = "port",
    ) -> tuple[int, int] | None:
        """Keep the selector on a port's current descriptor (or none): the shoe's, or ``port`` under ``tag``;
        returns what is watched."""
        reader = self.port if port == "shoe" else port
        current = None if gone or reader is None else reader.fileno()
        if current == watched:
            return watched
        if watched is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(watched[1])
        if current is not None:
            selector.register(current[1], selectors.EVENT_READ, tag)
        return current

    def _reader_work(
        self,
        selector: selectors.BaseSelector,
        watched: tuple[int, int] | None,
        shoe: tuple[int, int] | None,
        readable: bool,
    ) -> tuple[int, int] | None:
        """The bet-spot reader's share of one wake-up: one capped read of its port (only when what the last
        read gave is done), then its events in order until the shoe's port has bytes waiting; the rest waits
        for the next wake-up, which serves the shoe first. Returns the reader's port as watched after it."""
        assert self.reader is not None
        backlog = self._reader_backlog
        if not backlog and readable:
            self.stats.reader_reads += 1
            data = self.reader.port.read(self.reader.read_size)
            if data is None:  # the port is gone
                return self._watch_port(selector, watched, gone=True, port=self.reader.port, tag="reader")
            if data:
                backlog.extend(self.reader.wire.receive(data, self.clock()))
        while backlog:
            if self._shoe_waiting(shoe):
                self.stats.reader_yields += 1
                break
            self._reader_event(backlog.popleft())
        return watched

    def _holding_shoe(self, reader_ready: bool) -> bool:
        """At start only: whether the shoe's port still waits for the bet-spot reader to catch up (its link up
        and nothing more waiting on its port), at most :attr:`reader_catch_up` seconds. After a restart both
        devices send what they held meanwhile at once; the reader's bets went down before the shoe's first
        card, so they are taken first, or the card would lock the wagers the journal last knew."""
        if self._catch_up_until is None:
            return False
        money = self.state.money
        caught_up = money is not None and money.reader_up and not reader_ready and not self._reader_backlog
        if caught_up or self.clock() >= self._catch_up_until:
            self._catch_up_until = None
            log.info("bet-spot reader %s; the shoe's port is read", "caught up" if caught_up else "not heard in time")
            return False
        return True

    def _shoe_waiting(self, shoe: tuple[int, int] | None) -> bool:
        """Whether the shoe's port (or the inbox, for a port read by a thread) has something waiting now."""
        if not self.inbox.empty():
            return True
        if shoe is None:
            return False
        try:
            ready, _, _ = select.select([shoe[1]], [], [], 0.0)
        except (OSError, ValueError):
            return False
        return bool(ready)

    def _floor_ack(self, ack: FloorAckMessage) -> None:
        """Store the floor's ack the link handed on, once it is judged again here: the link is another process
        and the journal's records are this one's to delete (retention prunes on the stored ack)."""
        reason = refusal(ack, self.journal, table=self.floor_table, floor_key=self.floor_key)
        if reason is not None:
            self.ack_refusals.refuse(reason, ack)
            return
        try:
            self.journal.store_floor_ack(ack)
        except JournalError as exc:  # the link keeps the ack in memory; the next one is stored again
            log.warning("floor ack %d not stored: %s", ack.seq, exc)

    def handle(self, event: LoopEvent) -> None:
        if isinstance(event, WireBytes) and event.device == "reader":
            if self.reader is not None:
                for reader_event in self.reader.wire.receive(event.data, event.at):
                    self._reader_event(reader_event)
        elif isinstance(event, PortState) and event.device == "reader":
            log.info("bet-spot reader port %s: %s", "open" if event.up else "down", event.detail)
            if event.up:
                self._window = None  # tell the reader the window again
        elif isinstance(event, WireBytes):
            self._read_at = event.at
            for wire_event in self.wire.receive(event.data, event.at):
                self._wire_event(wire_event)
        elif isinstance(event, PanelPress):
            table_input = _PANEL_INPUTS[event.action]()
            self._apply(table_input, input_body(table_input, source=Source.PANEL), None, None)
            change = self.alarms.input_lost.press_accepted(event.action)
            if change is not None:  # the dealer pressed again after the loss
                self.commit.apply_change(change)
        elif isinstance(event, FloorAck):
            self._floor_ack(event.ack)
        elif isinstance(event, PortState):
            log.info("shoe port %s: %s", "open" if event.up else "down", event.detail)
            link_down = Alarm.LINK_DOWN in self.state.alarms
            if not self.wire.reports_link and event.up == link_down:
                # A dialect without a heartbeat: the port's state is all we know of the link.
                self._link(event.up, event.detail)
            if event.up:
                self._send_prompt()

    def _poll(self) -> None:
        now = self.clock()
        events, data = self.wire.poll(now)
        for wire_event in events:
            self._wire_event(wire_event)
        if data:
            self.write(data)
        if self.reader is not None:
            reader_events, data = self.reader.wire.poll(now)
            for reader_event in reader_events:
                self._reader_event(reader_event)
            if data:
                self.reader.write(data)
        if self.watchdog is not None and self.watchdog_interval and now >= self._next_watchdog:
            self.watchdog()
            self._next_watchdog = now + self.watchdog_interval

    def _wire_event(self, ev: object) -> None:
        if isinstance(ev, WireInput):
            self._apply(ev.table_input, ev.body, ev.session, ev.number)
            if self.metrics is not None and isinstance(ev.table_input, CardDrawn):
                self.metrics.card_read(self.clock() - self._read_at)  # the sinks (LEDs first) are updated
        elif isinstance(ev, WireDuplicate):
            # A resend of an event already delivered: nothing to apply. The session itself re-ACKs it once
            # it is committed (never before: write-ahead).
            pass
        elif isinstance(ev, WireLink):
            self._link(ev.up, ev.detail)  # staged: the PROMPT follows the commit
        elif isinstance(ev, WireReboot):
            body = input_body(ShoeRebooted(), old_session=ev.old_session, new_session=ev.new_session)
            self._apply(ShoeRebooted(), body, None, None)
        elif isinstance(ev, WireNoise):
            self.stats.noise += 1
            if self.metrics is not None:
                self.metrics.frame_rejected(ev.reason)
            said = self._hellos_refused
            if ev.message_type == MessageType.HELLO and ev.detail not in said and len(said) < _HELLOS_SAID:
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
            self._apply(LineNoise(ev.noisy), input_body(LineNoise(ev.noisy), detail=ev.detail), None, None)
        elif isinstance(ev, WireNoiseSummary):
            summary = record_body(
                InputKind.NOISE,
                rejected=ev.rejected,
                bytes=ev.discarded,
                reasons=ev.reasons,
                seconds=round(ev.seconds, 3),
            )
            self._apply(None, summary, None, None)

    # -- the bet-spot reader ---------------------------------------------------------------------
    def _reader_event(self, ev: object) -> None:
        """One event of the reader's wire (:mod:`controller.table.spot_wire`): its inputs go the shoe's way (applied,
        shown, staged, the ACK after the commit); a snapshot that changes nothing the wager book knows is
        counted and acknowledged, not journaled; the link's changes are READER DOWN / up; noise is counted."""
        metrics = self.metrics
        if isinstance(ev, WireNoise):
            self.stats.reader_noise += 1
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
                self._reader_link(table_input.up, str(ev.facts.get("detail", "")))
                return
            if isinstance(table_input, SpotsSnapshot):
                news = self.state.money is None or self.state.money.differs(table_input)
                if news:
                    self.stats.snapshots_journaled += 1
                else:
                    self.stats.snapshots_ignored += 1
                if metrics is not None:
                    metrics.spots_snapshot(news)
                if not news and not self._withhold(ev.session, ev.number):
                    # so many withheld that the reader's window would fill: journaled after all (a no-op for the
                    # book), so that its ACK is the journal's and a restart resumes the reader's session here
                    self.stats.snapshots_kept += 1
                elif not news:
                    return
            self._apply(table_input, input_body(table_input, **ev.facts), ev.session, ev.number, device="reader")
        elif isinstance(ev, SpotRecord):
            try:
                kind = InputKind(ev.kind)
            except ValueError:
                kind = None
            if kind is None or kind.replayed:
                # A fact the record vocabulary has no kind for (a refused snapshot: the next one corrects it):
                # said on the log, acknowledged, not journaled.
                log.warning("bet-spot reader: %s %s", ev.kind, ev.facts)
                if not self._withhold(ev.session, ev.number) and ev.number is not None:
                    self.commit.stage_ack(ev.session, ev.number, "reader")
                return
            self._apply(None, record_body(kind, **ev.facts), ev.session, ev.number, device="reader")
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

    def _withhold(self, session: int | None, number: int | None) -> bool:
        """Whether the reader's event ``number``, taken without a journal record, may go unacknowledged for now:
        the ACK of the next event journaled covers it (ACKs are cumulative). Until then the reader holds it, so
        the journal's last reader event stays the reader's resume point (a restart resumes the reader's
        session there, and the reader still holds everything after it). False once :data:`READER_ACK_SLACK`
        numbers wait so: the caller journals it (or, for a fact without a record kind, acknowledges it)."""
        if number is None:
            return True
        base = self._reader_journaled
        if base is None or base[0] != session:
            base = self._reader_journaled = (session, number - 1)
        return number - base[1] <= READER_ACK_SLACK

    def _reader_link(self, up: bool, detail: str) -> None:
        """READER DOWN (the bets cannot be checked) or up again: a table input like the shoe's link."""
        log.log(logging.INFO if up else logging.WARNING, "bet-spot reader link %s: %s", "up" if up else "DOWN", detail)
        if self.metrics is not None:
            self.metrics.spots_link(up)
        if up:
            self._window = None  # a reader that comes (back) is told the window
        change = ReaderLinkChanged(up)
        self._apply(change, input_body(change, detail=detail), None, None)

    def assume_reader_down(self, detail: str) -> None:
        """At start the reader's link is down until it is heard (READER DOWN shows until then)."""
        if self.reader is not None and self.state.money is not None and self.state.money.reader_up:
            self._reader_link(False, detail)

    def _reader_ack(self, number: int, session: int | None) -> None:
        """After the commit: the reader's cumulative ACK."""
        if self.reader is not None:
            self.reader.write(self.reader.wire.acknowledge(number, session))

    def _tell_window(self) -> None:
        """Tell the reader the betting window when it changed (locked at the first card, payout at the
        declare, open at the next betting time)."""
        if self.reader is None or self.state.money is None or self._shown is None:
            return
        window = window_of(self._shown.money)  # the view last shown: the money's view is not built twice
        if window is not None and window != self._window:
            self._window = window
            self.reader.write(self.reader.wire.window(window))

    def _link(self, up: bool, detail: str) -> None:
        log.log(logging.INFO if up else logging.WARNING, "shoe link %s: %s", "up" if up else "DOWN", detail)
        if self.metrics is not None:
            self.metrics.link(up)
        self._apply(LinkChanged(up), input_body(LinkChanged(up), detail=detail), None, None)

    def _apply(
        self,
        table_input: TableInput | None,
        body: dict[str, Any],
        session: int | None,
        number: int | None,
        device: Device = "shoe",
    ) -> None:
        """Apply one input and stage it for the next commit; the LEDs change now, the ACK after the commit."""
        self.idle.clear()  # until the flush
        if self.commit.refuse(body):
            return  # the journal has refused commits for a long while: the input is neither applied nor kept
        notices: list[Notice] = []
        if table_input is not None:
            notices = self.state.apply(table_input)
            self.show(notices)  # LEDs may change before the commit ...
        self.commit.stage(body, session, number, self._derived(notices), device)
        if device == "reader" and number is not None:
            self._reader_journaled = (session, number)

    def _derived(self, notices: Sequence[Notice]) -> list[tuple[RecordKind, dict[str, Any]]]:
        """The records an input gave rise to; with the edge watch on, its advantage records too. Called after
        the sinks were shown the input (the LEDs are set): pricing the shoe is never on the card -> LED path."""
        if self.edges is None:
            return derived_records(notices, self.ruleset)
        # The wagers locked now carry their EVs at the betting time the edge watch priced last (this coup's).
        records = derived_records(notices, self.ruleset, self.edges.betting_evs, self.edges.betting_variances)
        out: list[tuple[RecordKind, dict[str, Any]]] = []
        for kind, body in records:
            out.append((kind, body))
            out += self._surveillance(self.edges.record(kind, body))
        state = self.state
        if state.due is Due.DEAL and state.coup.cards_dealt == 0 and not state.dummy_hand:
            out += self._surveillance(self.edges.betting_time(state.shoe_number, state.coup_number))
        return out

    @staticmethod
    def _surveillance(records: list[tuple[RecordKind, dict[str, Any]]]) -> list[tuple[RecordKind, dict[str, Any]]]:
        """A surveillance notice: a log line at WARNING for each advantage record (the floor gets the record)."""
        for kind, body in records:
            what = "ADVANTAGE" if kind is RecordKind.ADVANTAGE else "advantage cleared"
            log.warning(
                "surveillance: %s shoe %s coup %s: %s EV %+.4f%% per unit staked (%s cards left)%s",
                what,
                body["shoe"],
                body["coup"],
                body["bet"],
                100 * body["ev"],
                body["cards_left"],
                " (shoe ended)" if body.get("shoe_ended") else "",
            )
        return records

    def flush(self) -> None:
        """Commit and acknowledge what is staged (:meth:`WriteAhead.flush`); the loop is idle again after it."""
        try:
            self.commit.flush()
        finally:
            self.idle.set()

    def _rebuild(self) -> None:
        """The journal refused a duplicate event: the state becomes the journal's replay, shown at once."""
        self.state = TableState(self.state.rules)
        self.replay()
        self.show()

    # -- quiet moments ---------------------------------------------------------------------------
    def _quiet(self) -> bool:
        """Nothing staged or waiting, and the journal healthy."""
        return not self.commit.staged and not self.commit.at_fault and self.inbox.empty()

    def _quiet_time(self) -> None:
        """After an iteration that read nothing from the port: the retention's step, the journal's check, the
        clock's synchronisation."""
        if self.pruner is not None:
            self._prune_step()
        self._check_journal_file()
        self._watch_clock()

    def _watch_clock(self) -> None:
        """At a quiet moment, every ``CLOCK_CHECK_SECONDS``: whether the kernel says the clock is synchronised.
        The first answer and every change are journaled (a ``clock`` record, which the floor turns into an
        alert when the clock is not synchronised) and said on the log: a WARNING while it is not."""
        if self.clock_status is None or not self._quiet():
            return
        now = self.clock()
        if now < self._next_clock_check:
            return
        self._next_clock_check = now + CLOCK_CHECK_SECONDS
        status = self.clock_status()
        said = self._clock_said
        if said is not None and said.synchronised == status.synchronised:
            return
        self._clock_said = status
        if status.synchronised is False:
            log.warning(
                "the table's clock is not synchronised (%s): the journal's times may not match the casino's"
                " cameras; sync it from the floor's NTP server (docs/install.md)",
                status.detail,
            )
        elif status.synchronised and said is not None:
            log.info("the table's clock is synchronised again")
        body = record_body(
            InputKind.CLOCK,
            synchronised=status.synchronised,
            max_error_us=status.max_error_us,
            detail=status.detail,
        )
        self._apply(None, body, None, None)
        self.flush()  # committed now, not at the next wake-up

    def _prune_step(self) -> None:
        """One bounded step of the journal's retention, only at a quiet moment: nothing staged or queued, the
        journal healthy, and no card of a coup on the table (between coups). A failure is logged and the
        table deals on (the pruner tries again at its next plan)."""
        if self.pruner is None or not self._quiet():
            return
        view = self.state.view()
        if view.player or view.banker:
            return
        try:
            self.pruner.step(self.clock())
        except (JournalError, ValueError, sqlite3.Error) as exc:
            log.error("journal retention: prune step failed, tried again later: %s", exc)

    def _check_journal_file(self) -> None:
        """At a quiet moment, every ``JOURNAL_CHECK_SECONDS``: the checks the journal makes before each commit.
        A journal deleted (or a disk filled) while the table stands idle is then shown and mended within
        seconds, not at the next card: the deleted file lives only in the open connection until it is put
        back, and a power cut meanwhile would lose it. A fault takes the commit's path (the alarm, a journaled
        record, the retries that restore the file)."""
        if not self._quiet():
            return
        now = self.clock()
        if now < self._next_journal_check:
            return
        self._next_journal_check = now + JOURNAL_CHECK_SECONDS
        try:
            self.journal.check_file()
        except JournalError as exc:
            self.commit.failed(exc)

    # -- PRESS AGAIN: events dropped at the full queue ----------------------------------------------
    def _check_dropped(self) -> None:
        """Once per loop iteration: raise PRESS AGAIN for events the inbox dropped since the last look, or
        clear it when its hold is over."""
        kinds = self.inbox.take_dropped()
        if kinds:
            if self.metrics is not None:
                for kind, n in sorted(kinds.items()):
                    self.metrics.events_dropped(kind, n)
            # the events waiting now were put before the loss was seen: not the dealer's answer
            self.commit.apply_change(self.alarms.input_lost.lost(kinds, self.inbox.bound, self.inbox.waiting()))
            return
        change = self.alarms.input_lost.hold_over()
        if change is not None:
            self.commit.apply_change(change)

    def _prompt_bytes(self) -> bytes:
        return self.wire.prompt(self.state.due)

    def _send_prompt(self) -> None:
        data = self._prompt_bytes()
        if data:
            self.write(data)

    def close_sinks(self) -> None:
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                log.exception("closing sink %s failed", sink.name)
