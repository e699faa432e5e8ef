"""The one table loop: the only owner of the table's state, gluing the inbox, the ports, the core and the commit.

The loop waits (:mod:`selectors`) on its ports' serial lines itself and on the inbox's wake-up pipe for
everything else. Its ports (:mod:`~controller.table.loop.ports`) are the shoe's
(:class:`~controller.table.loop.shoe_port.ShoePort`) and the bet-spot reader's
(:class:`~controller.table.loop.reader.ReaderPort`), each with its own wire and event union and its device's
logic; the loop schedules them. When the shoe's port is readable it reads what is there (at most
:data:`~controller.table.loop.inbox.READ_SIZE` bytes) and decodes it in this thread: one wake-up per card, and
the bytes waiting are bounded by the kernel's buffer; the reader's port is read after the shoe's and the inbox,
capped, and yields to the shoe between its events. Other threads only put events in the
:class:`~controller.table.loop.inbox.Inbox`. Each event runs through its port and the pure
:class:`~controller.game.table.TableState`, the new view goes to every sink (LEDs
first), and the input and its derived records are staged for the write-ahead commit
(:class:`~controller.table.loop.commit.WriteAhead`: one transaction per batch, and only then the ACK). The shell's
own alarms (:mod:`~controller.table.loop.shell_alarms`) are merged into every view shown. At quiet moments the loop
checks the journal's file and gives its retention one bounded step.

Everything the loop uses is passed to its constructor (its state, journal, ports and sinks, and a
:class:`LoopConfig`); nothing is set on it afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import select
import selectors
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.game.approvals import Action, Approvable, Approved
from controller.game.cards import Card
from controller.game.cash import buy_in_refusal
from controller.game.edges import EdgeWatch
from controller.game.records import (
    InputKind,
    RecordKind,
    Source,
    buy_in_input,
    derived_records,
    input_body,
    record_body,
)
from controller.game.rules import Ruleset
from controller.game.seats import SeatCard, anonymous_player
from controller.game.staff import BadgeRefused, DealerIn, DutyBook
from controller.game.table import (
    Alarm,
    CardKeyed,
    DeclarePressed,
    Due,
    NewShoePressed,
    Notice,
    TableInput,
    TableState,
    TableView,
    VoidPressed,
)
from controller.journal import JournalError
from controller.journal.ack import AckRefusals, refusal
from controller.table.clock import ClockStatus
from controller.table.loop.approval import DEFAULT_APPROVE, Approvals
from controller.table.loop.commit import JOURNAL_RETRY_SECONDS, MAX_STAGED, CommitJournal, CommitMetrics, WriteAhead
from controller.table.loop.inbox import (
    READ_SIZE,
    BuyInEntry,
    Device,
    FloorAck,
    Inbox,
    KeyEntry,
    LoopEvent,
    PanelPress,
    PinEntry,
    PinVerdict,
    PortState,
    RateEntry,
    StaffListIn,
    Stop,
    WireBytes,
)
from controller.table.loop.ports import Port, PortReader, QueuedPort
from controller.table.loop.reader import ReaderPort
from controller.table.loop.resume import ReplayJournal, resume
from controller.table.loop.shell_alarms import INPUT_LOST_HOLD, ShellAlarms
from controller.table.loop.shoe_port import ShoePort
from controller.table.loop.tray import TrayPort
from controller.table.panel import ButtonAction
from controller.table.pin_check import PinChecker
from controller.table.sinks import Sink
from controller.table.staff_list import StaffListKeeper
from floor_protocol.ack import Ack as FloorAckMessage

log = logging.getLogger(__name__)

#: At start, the longest the shoe's port waits for the bet-spot reader to catch up (seconds; the shoe holds its
#: events meanwhile, and its link timeout is longer).
READER_CATCH_UP = 1.5

#: How often a quiet loop makes the journal's pre-commit checks (file still at its path, disk headroom).
JOURNAL_CHECK_SECONDS = 2.0
#: How often, at a quiet moment, the loop asks the kernel whether the clock is synchronised.
CLOCK_CHECK_SECONDS = 60.0
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

    def tray_frame(self) -> None: ...

    def tray_frame_rejected(self, reason: str) -> None: ...

    def tray_snapshot(self, applied: bool) -> None: ...

    def tray_link(self, up: bool) -> None: ...

    def tray_count(self, variance_cents: int) -> None: ...

    def buy_in(self, outcome: str) -> None: ...

    def approval(self, action: str, outcome: str) -> None: ...

    def approval_request_refused(self, what: str) -> None: ...


class Pruner(Protocol):
    """The journal's retention on the loop (controller.journal.Retention): one bounded step at a quiet time."""

    def step(self, now: float) -> int: ...


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
    tray_reads: int = 0  # reads of the chip tray's port by the loop
    tray_noise: int = 0  # the tray's frames rejected
    tray_yields: int = 0  # times the tray's events waited because the shoe's port had bytes
    tray_snapshots: int = 0  # the tray's full counts applied


@dataclass(frozen=True)
class LoopConfig:
    """How a loop runs, and what it is given besides its state, journal, ports and sinks; all of it fixed for the
    loop's life (nothing is set on a loop afterwards).

    ``after_commit`` callbacks run after each commit that wrote records, after the ACK (cheap, never
    blocking); ``ruleset`` goes into each shoe's start record; ``edges`` (None: off) is fed every derived record
    and prices the shoe at each betting time; ``pruner`` (None: never) gets one step at quiet moments;
    ``clock_status`` (None: not watched) asks the kernel whether the clock is synchronised; the floor's ack is
    stored only when it verifies with ``floor_key`` for ``floor_table``. ``inbox`` is the loop's own unless
    given (the daemon hands it to the panel and the ports' threads first)."""

    inbox: Inbox | None = None
    after_commit: Sequence[Callable[[], None]] = ()
    metrics: LoopMetrics | None = None
    pruner: Pruner | None = None
    ruleset: Ruleset | None = None
    edges: EdgeWatch | None = None
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], str] = wall_clock
    watchdog: Callable[[], object] | None = None
    watchdog_interval: float | None = None
    floor_table: str = ""
    floor_key: Ed25519PublicKey | None = None
    tick: float = 0.25
    max_batch: int = 64
    max_staged: int = MAX_STAGED
    journal_retry: float = JOURNAL_RETRY_SECONDS
    input_lost_hold: float = INPUT_LOST_HOLD
    reader_catch_up: float = READER_CATCH_UP
    clock_status: Callable[[], ClockStatus] | None = None
    #: The staff list the table believes and keeps (None: a list no one hands the loop; every badge refused).
    staff: StaffListKeeper | None = None
    #: The dealer on duty at start (the journal's newest dealer_in or dealer_out says it: ``resume.on_duty``).
    duty: DutyBook | None = None
    #: What waits for a supervisor's badge and PIN (``[table] supervisor_approves``; empty: nothing), the PIN
    #: checker (None: the table's own), and the members the journal says are locked out under the kept list
    #: (``resume.locked_out``).
    approve: frozenset[Approvable] = DEFAULT_APPROVE
    pin_checker: PinChecker | None = None
    locked_out: tuple[str, ...] = ()


class TableLoop:
    """Owns the table state; everything else talks to it through its :class:`Inbox`.

    ``ports`` are the table's devices on their serial lines, typed (:mod:`controller.table.loop.ports`):
    exactly one :class:`~controller.table.loop.shoe_port.ShoePort`, read first at every wake-up, and at most one
    :class:`~controller.table.loop.ports.QueuedPort` per other device (the bet-spot reader's
    :class:`~controller.table.loop.reader.ReaderPort`; none: the table works exactly as without one), read
    after the shoe and the inbox, capped, yielding to the shoe. ``sinks`` are shown every view (in order: the
    panel first). The rest is ``config`` (:class:`LoopConfig`). :attr:`idle` is clear while the loop has
    something to apply, commit and acknowledge (for tools and tests that wait for a quiet table)."""

    def __init__(
        self,
        state: TableState,
        journal: JournalLike,
        ports: Sequence[ShoePort | QueuedPort],
        sinks: Sequence[Sink] = (),
        config: LoopConfig = LoopConfig(),
    ) -> None:
        shoes = [p for p in ports if isinstance(p, ShoePort)]
        devices = [p.device for p in ports]
        if len(shoes) != 1 or len(set(devices)) != len(devices):
            given = ", ".join(devices) or "none"
            raise ValueError(f"a table loop takes one shoe and at most one port per device, not: {given}")
        #: The shoe's port: read first at every wake-up.
        self.shoe = shoes[0]
        #: The other devices' ports, in the order given: served after the shoe's and the inbox, capped.
        self.queued: tuple[QueuedPort, ...] = tuple(p for p in ports if not isinstance(p, ShoePort))
        #: Every port, the shoe's first (its timers are polled first).
        self.ports: tuple[Port, ...] = (self.shoe, *self.queued)
        #: The bet-spot reader (None: the table has none, and works exactly as without one).
        self.reader = next((p for p in self.queued if isinstance(p, ReaderPort)), None)
        #: The chip tray (None: the table has none, and works exactly as without one).
        self.tray = next((p for p in self.queued if isinstance(p, TrayPort)), None)
        self.config = config
        self.state = state
        #: Asks the kernel whether the clock is synchronised (None: not watched); journaled at start and on
        #: each change (:meth:`_watch_clock`, every ``CLOCK_CHECK_SECONDS`` at a quiet moment).
        self.clock_status = config.clock_status
        self._clock_said: ClockStatus | None = None
        self._next_clock_check = -math.inf
        #: At start, how long the shoe's port may wait for the reader to catch up (:meth:`_holding_shoe`).
        self.reader_catch_up = config.reader_catch_up
        self._catch_up_until: float | None = None
        self._shown: TableView | None = None  # the view the sinks were last shown
        self.journal = journal
        self.sinks: list[Sink] = list(sinks)
        self.inbox = config.inbox if config.inbox is not None else Inbox()
        self.idle = threading.Event()
        self.idle.set()
        self.metrics = config.metrics
        self.pruner = config.pruner
        #: The table's ruleset: each shoe's start record carries it (the journal alone prices every wager).
        self.ruleset = config.ruleset
        #: The live exact edge (None: off); replaced by the one the journal leaves at a replay.
        self.edges = config.edges
        #: Clear while the loop applies, commits and acknowledges what it read: a thread with bulk work (the
        #: floor link flushing a backlog) waits on it between messages, so the loop gets the interpreter back
        #: at once at each of its I/O waits instead of after the other thread's switch interval.
        #: The floor's ack: stored only when it verifies with ``floor_key`` for ``floor_table`` and names the
        #: journal's own record (controller.journal.ack.refusal); what is refused is counted here.
        self.floor_table = config.floor_table
        self.floor_key = config.floor_key
        self.ack_refusals = AckRefusals("table")
        #: Buy-ins refused because the table cannot take them (a seat not on it ...), each said in one line.
        self.buy_ins_refused = 0
        #: The staff list (verified, kept on disk) and the dealer on duty (controller.game.staff).
        self.staff = config.staff if config.staff is not None else StaffListKeeper(None, None)
        self.duty = config.duty if config.duty is not None else DutyBook()
        #: What needs a supervisor (controller.table.loop.approval); True while the approved action is applied.
        self._approved = False
        self.approvals = Approvals(
            self.staff,
            self.put,
            actions=config.approve,
            checker=config.pin_checker,
            locked=config.locked_out,
            metrics=config.metrics,
        )
        self.clock = config.clock
        self.watchdog = config.watchdog
        self.watchdog_interval = config.watchdog_interval
        self.tick = config.tick
        self.max_batch = config.max_batch
        self.stats = LoopStats()
        self.alarms = ShellAlarms(config.clock, input_lost_hold=config.input_lost_hold)
        self.commit = WriteAhead(
            journal,
            self.shoe.wire,
            self.shoe.write,
            alarm=self.alarms.journal,
            show=self.show,
            prompt=self._prompt_bytes,
            rebuild=self._rebuild,
            clock=config.clock,
            wall=config.wall,
            metrics=config.metrics,
            after_commit=config.after_commit,
            max_staged=config.max_staged,
            retry=config.journal_retry,
            device_acks={q.device: q.acknowledge for q in self.queued},
        )
        self.running = False
        self._next_watchdog = 0.0
        self._next_journal_check = 0.0

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
        """The pure state's view, with the shell's alarms (the journal's, PRESS AGAIN, an approval's) added to its
        alarms, and the approval pending on the money's view (the dealer screen's)."""
        view = self.state.view()
        standing = self.alarms.standing()
        approval = self.approvals.alarm()
        for alarm in (*standing, *(() if approval is None else (approval,))):
            if alarm not in view.alarms:
                view = replace(view, alarms=(*view.alarms, alarm))
        pending = self.approvals.view()
        if pending is not None and view.money is not None:
            view = replace(view, money=replace(view.money, approval=pending))
        if view.money is not None and self.approvals.keyable(self.state):
            view = replace(view, money=replace(view.money, keyable=True))
        if view.money is not None and self.approvals.refusals:
            told = replace(view.money, refusal=self.approvals.refusal, refusals=self.approvals.refusals)
            view = replace(view, money=told)
        return view

    def assume_link_down(self, detail: str) -> None:
        """At start the link is down until the shoe is heard: LINK DOWN shows (and is journaled) until then."""
        self.shoe.link(self, False, detail)

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
        watched: tuple[int, int] | None = None  # (generation, fd) of the shoe's port registered
        queued = self.queued
        watched_queued: list[tuple[int, int] | None] = [None] * len(queued)  # ... and of each queued port's
        try:
            with self.inbox.wakeup() as wake_r:
                selector.register(wake_r, selectors.EVENT_READ, "wake")
                if Alarm.NOISY_LINE in self.state.alarms:
                    self.shoe.wire.noise.assume_noisy(self.clock())  # cleared once the line is quiet
                self.show()
                self.send_prompt()
                if queued:
                    self._catch_up_until = self.clock() + self.reader_catch_up
                ready = set(range(len(queued)))  # until a look at their ports says otherwise
                while True:
                    watched = self._watch_port(selector, watched, gone=self._holding_shoe(ready))
                    for i, q in enumerate(queued):
                        watched_queued[i] = self._watch_port(selector, watched_queued[i], port=q.port, tag=i)
                    port_ready = False
                    ready = set()
                    busy = not self.inbox.empty() or self._queued_waiting()
                    for key, _mask in selector.select(0.0 if busy else self.tick):
                        if key.data == "wake":
                            self.inbox.drain_wakeup(wake_r)
                        elif isinstance(key.data, int):
                            ready.add(key.data)
                        else:
                            port_ready = True
                    if port_ready or ready or busy:
                        self.idle.clear()  # set again by flush() below
                    # Group commit: everything read or queued now is applied event by event, then committed
                    # in one transaction and acknowledged once.
                    if port_ready and self.shoe.port is not None:
                        self.stats.reads += 1
                        data = self.shoe.port.read(READ_SIZE)
                        if data is None:  # the port is gone: stop watching it now (its number may come back)
                            watched = self._watch_port(selector, watched, gone=True)
                        elif data:
                            self.handle(WireBytes(data, self.clock()))
                    stop = self._handle_waiting()
                    shoe_waiting = functools.partial(self._shoe_waiting, watched)
                    for i, q in enumerate(queued):
                        # After the shoe's port and the inbox, capped, and yielding to the shoe between its
                        # events: a flooding reader delays no card.
                        if (i in ready or q.waiting()) and not q.work(self, i in ready, shoe_waiting):
                            watched_queued[i] = self._watch_port(  # its port is gone
                                selector, watched_queued[i], gone=True, port=q.port, tag=i
                            )
                    self._check_dropped()
                    self._poll()
                    self.flush()
                    if stop:
                        break
                    for port in self.ports:
                        port.shown(self, self._shown)  # the reader is told the betting window when it changed
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
        tag: str | int = "port",
    ) -> tuple[int, int] | None:
        """Keep the selector on a port's current descriptor (or none): the shoe's, or ``port`` under ``tag``;
        returns what is watched."""
        reader = self.shoe.port if port == "shoe" else port
        current = None if gone or reader is None else reader.fileno()
        if current == watched:
            return watched
        if watched is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(watched[1])
        if current is not None:
            selector.register(current[1], selectors.EVENT_READ, tag)
        return current

    def _queued_waiting(self) -> bool:
        """Whether a queued port holds events decoded but not handled yet (one capped read's rest)."""
        return any(q.waiting() for q in self.queued)

    def _holding_shoe(self, ready: set[int]) -> bool:
        """At start only: whether the shoe's port still waits for the queued ports (the bet-spot reader) to
        catch up (:meth:`~controller.table.loop.ports.QueuedPort.caught_up`: its link up and nothing more
        waiting on its port; ``ready``: the queued ports the last look found readable), at most
        :attr:`reader_catch_up` seconds. After a restart every device sends what it held meanwhile at once; the
        reader's bets went down before the shoe's first card, so they are taken first, or the card would lock
        the wagers the journal last knew."""
        if self._catch_up_until is None:
            return False
        caught_up = all(q.caught_up(self, i in ready) for i, q in enumerate(self.queued))
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
        if isinstance(event, WireBytes):
            port = self._port(event.device)
            if port is not None:
                port.receive(self, event.data, event.at)
        elif isinstance(event, PortState):
            port = self._port(event.device)
            if port is not None:
                port.port_state(self, event.up, event.detail)
        elif isinstance(event, PanelPress):
            table_input = _PANEL_INPUTS[event.action]()
            self._apply(table_input, input_body(table_input, source=Source.PANEL), None, None)
            change = self.alarms.input_lost.press_accepted(event.action)
            if change is not None:  # the dealer pressed again after the loss
                self.commit.apply_change(change)
        elif isinstance(event, FloorAck):
            self._floor_ack(event.ack)
        elif isinstance(event, BuyInEntry):
            self._buy_in(event)
        elif isinstance(event, StaffListIn):
            if self.staff.take(event.staff):
                self.approvals.new_staff_list()
        elif isinstance(event, PinEntry):
            self.approvals.pin_entered(event.pin)
        elif isinstance(event, PinVerdict):
            self._pin_verdict(event)
        elif isinstance(event, RateEntry):
            asked = self.approvals.rate(self.state, self.duty.on_duty, event.seat)
            if asked is not None:
                self._approval_step(*asked)
        elif isinstance(event, KeyEntry):
            asked = self.approvals.key_card(self.state, self.duty.on_duty, event.card)
            if asked is not None:
                self._approval_step(*asked)

    def _pin_verdict(self, event: PinVerdict) -> None:
        """A PIN's verdict: its ``approval`` input and record; the action approved is carried out after it."""
        decided = self.approvals.verdict(event)
        if decided is None:
            return
        body, notices = decided
        self._approval_step(body, notices)
        for n in notices:
            if isinstance(n, Approved) and n.action in (Action.VOID, Action.NEW_SHOE):
                press = VoidPressed() if n.action is Action.VOID else NewShoePressed()
                self._approved = True  # the press itself, exactly as an unapproved table journals it
                try:
                    self._apply(press, input_body(press, source=Source.PANEL), None, None)
                finally:
                    self._approved = False
            elif isinstance(n, Approved) and n.action is Action.KEY_CARD and n.card is not None:
                keyed = CardKeyed(Card.parse(n.card))  # the card in the unread card's place (a replayed input)
                self._apply(keyed, input_body(keyed, source=Source.PANEL), None, None)
            elif isinstance(n, Approved) and n.action is Action.RATE_UNCARDED and n.seat is not None:
                # the rating's virtual card in the seat's reader: the anonymous player's visit (a replayed input)
                card = SeatCard(n.seat, anonymous_player(n.shoe, n.coup, n.seat), True)
                self._apply(card, input_body(card), None, None)

    def _approval_step(
        self,
        body: dict[str, Any],
        notices: Sequence[Notice],
        session: int | None = None,
        number: int | None = None,
        device: Device = "shoe",
    ) -> bool:
        """Journal an approval's step (a record only, its records derived; a shoe's press acknowledged with it) and
        show what it changed."""
        kept = self._apply(None, body, session, number, device, notices=notices)
        if not kept:
            log.warning("approval step %s not kept: the journal refuses commits", body.get("step"))
        self.show([*notices, *self.approvals.alarm_changes()])
        return kept

    def badge(self, uid: str, present: bool) -> list[Notice]:
        """A badge came in or went out at the dealer's position: the dealer on duty signed in or out, or the badge
        refused (UNKNOWN BADGE shows for a while); the notices give the records (:mod:`controller.game.staff`)."""
        state = self.state
        approval = self.approvals.badge(uid, present)
        if approval is not None:  # an approval is pending: the badge is its (a supervisor's), not a swap
            self.show([*approval, *self.approvals.alarm_changes()])
            return approval
        notices = self.duty.badge(self.staff.roster, uid, present, state.shoe_number, state.coup_number)
        shown: list[Notice] = []
        for n in notices:
            if isinstance(n, BadgeRefused):
                as_of = n.staff_as_of or "none verified yet"
                shown += self.alarms.badge.refused(f"badge {n.badge}: {n.reason.value} (staff list: {as_of})")
            elif isinstance(n, DealerIn):
                log.info("dealer %s on duty (shoe %d, coup %d)", n.staff_id, n.shoe, n.coup)
                shown += self.alarms.badge.signed_in()
        if shown:
            self.show(shown)
        return notices

    def _buy_in(self, event: BuyInEntry) -> None:
        """A buy-in entered for a seat: refused in one line (logged, counted) when the table cannot take it,
        else journaled as a ``buy_in`` input (a record only) with its ``buy_in`` record, which the pure core
        derives with the shoe and coup now (:meth:`TableState.buy_in`)."""
        reason = buy_in_refusal(event.buy_in, self.state.seat_count)
        if reason is not None:
            self.buy_ins_refused += 1
            log.warning("%s", reason)
            if self.metrics is not None:
                self.metrics.buy_in("refused")
            return
        notices = self.state.buy_in(event.buy_in)
        kept = self._apply(None, buy_in_input(event.buy_in), None, None, notices=notices)
        if not kept:
            b = event.buy_in
            log.warning("buy-in at seat %d of %d cents not kept: the journal refuses commits", b.seat, b.cents)
        if self.metrics is not None:
            self.metrics.buy_in("taken" if kept else "not_kept")

    def _port(self, device: Device) -> Port | None:
        """The port of ``device`` (None: the table has no such device)."""
        for port in self.ports:
            if port.device == device:
                return port
        return None

    def _poll(self) -> None:
        now = self.clock()
        for port in self.ports:  # the shoe's timers first
            port.poll(self, now)
        if self.watchdog is not None and self.watchdog_interval and now >= self._next_watchdog:
            self.watchdog()
            self._next_watchdog = now + self.watchdog_interval

    def assume_reader_down(self, detail: str) -> None:
        """At start the reader's link is down until it is heard (READER DOWN shows until then)."""
        if self.reader is not None:
            self.reader.assume_down(self, detail)

    def assume_tray_down(self, detail: str) -> None:
        """At start the chip tray's link is down until it is heard (TRAY DOWN shows until then)."""
        if self.tray is not None:
            self.tray.assume_down(self, detail)

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
        """Apply one input and stage it for the next commit; the LEDs change now, the ACK after the commit.
        False when the journal refused it (:meth:`WriteAhead.refuse`): neither applied nor kept. ``notices``: what
        a record-only input gave rise to without a transition (a buy-in's), its records derived with it."""
        self.idle.clear()  # until the flush
        if isinstance(table_input, VoidPressed | NewShoePressed) and not self._approved:  # may need a supervisor
            facts: dict[str, Any] = {k: body[k] for k in ("source", "seq") if k in body}
            if isinstance(table_input, VoidPressed):
                asked = self.approvals.void_held(self.state, self.duty.on_duty, facts)
            else:
                asked = self.approvals.new_shoe_pressed(self.state, self.duty.on_duty, facts)
            if asked is not None:
                return self._approval_step(*asked, session, number, device)
        if self.commit.refuse(body):
            return False  # the journal has refused commits for a long while: the input is neither applied nor kept
        given = list(notices)
        if table_input is not None:
            given += self.state.apply(table_input)
            self.approvals.moot(self.state)
            self.show([*given, *self.approvals.alarm_changes()])  # LEDs may change before the commit ...
        self.commit.stage(body, session, number, self._derived(given), device)
        return True

    _apply = apply  # the name the tests (and tools) drive the loop by

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
        badge_over = self.alarms.badge.hold_over()
        if badge_over:
            self.show(badge_over)

    def _prompt_bytes(self) -> bytes:
        return self.shoe.wire.prompt(self.state.due)

    def send_prompt(self) -> None:
        """Tell the shoe what is due now (its PROMPT; nothing for a dialect without one)."""
        data = self._prompt_bytes()
        if data:
            self.shoe.write(data)

    def close_sinks(self) -> None:
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                log.exception("closing sink %s failed", sink.name)
