"""The one table loop: the only owner of the table's state.

The loop waits (:mod:`selectors`) on the shoe's port itself and on a wake-up pipe for everything else. When
the port is readable it reads what is there (at most :data:`READ_SIZE` bytes) and
decodes it in this thread: one wake-up per card, and the bytes waiting are bounded by the kernel's buffer.
Other threads (the panel's GPIO callbacks, the link's opener, the signal handler; the reader thread of a
port without a descriptor) only put events on the loop's bounded queue. Each event runs through the wire
codec and the pure :class:`~controller.game.table.TableState`, the new view goes to every sink (LEDs
first), the input and its derived records are committed to the journal in one transaction, and only then
is the shoe acknowledged (write-ahead). After a restart :meth:`TableLoop.replay` rebuilds the state from
the journal through the same pure core.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import selectors
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from controller.game.edges import EdgeWatch
from controller.game.records import (
    InputKind,
    RecordKind,
    Source,
    derived_records,
    input_body,
    input_from_body,
    record_body,
)
from controller.game.rules import Ruleset
from controller.game.table import (
    Alarm,
    AlarmCleared,
    AlarmRaised,
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
from controller.journal import JournalError, JournalFault, PendingInput
from controller.sinks import Sink
from controller.wire import (
    Wire,
    WireDuplicate,
    WireInput,
    WireLink,
    WireNoise,
    WireNoiseSummary,
    WireNoisy,
    WireReboot,
)

log = logging.getLogger(__name__)

#: Inputs kept in memory while the journal cannot take a commit (some 12 shoes of cards, a few MB). The binary
#: shoe stops long before (it holds at most its window of unacknowledged events); the bound is for the ASCII
#: dialect, which has no ACK, and for panel presses. An input beyond it is refused: neither applied nor kept.
MAX_STAGED = 5000

#: How often a commit is retried while the journal is at fault (seconds, monotonic).
JOURNAL_RETRY_SECONDS = 1.0
#: How often a quiet loop makes the journal's pre-commit checks (file still at its path, disk headroom).
JOURNAL_CHECK_SECONDS = 2.0


# -- what threads put on the queue -------------------------------------------------------------------------
@dataclass(frozen=True)
class WireBytes:
    """Bytes read from the shoe's port."""

    data: bytes
    at: float  # monotonic time of the read


@dataclass(frozen=True)
class PortState:
    """The serial port opened or failed."""

    up: bool
    detail: str


@dataclass(frozen=True)
class PanelPress:
    """A button on the dealer's panel: "declare", "new_shoe" or "void"."""

    action: str


@dataclass(frozen=True)
class Stop:
    """Ask the loop to finish."""


@dataclass(frozen=True)
class FloorAck:
    """The floor's ack (controller.floor_link): the loop, the journal's one writer, stores it."""

    seq: int


LoopEvent = WireBytes | PortState | PanelPress | FloorAck | Stop

#: How a dropped event that is not a panel press is named: the metrics' ``kind`` label, and the words of the
#: alarm's detail. A panel press is named by its action ("declare", "new_shoe", "void").
_DROPPED_KINDS: dict[type, tuple[str, str]] = {
    PortState: ("link", "shoe port report"),
    WireBytes: ("shoe_bytes", "shoe bytes read"),
    FloorAck: ("floor_ack", "floor ack"),
    Stop: ("stop", "stop request"),
}

_PANEL_INPUTS: dict[str, Callable[[], TableInput]] = {
    "declare": DeclarePressed,
    "new_shoe": NewShoePressed,
    "void": VoidPressed,
}


class JournalLike(Protocol):
    """What the loop needs of the journal (controller.journal.Journal; a fake in tests)."""

    def append_many(self, inputs: Sequence[PendingInput]) -> list[int | None]: ...

    def inputs(self, *, after: int = 0) -> Iterable[tuple[int, dict[str, Any]]]: ...

    def last_shoe_start(self) -> tuple[int, int] | None: ...

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None: ...


def wall_clock() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass
class LoopStats:
    """Counters read by the tests and the benchmarks."""

    inputs: int = 0  # inputs committed to the journal
    commits: int = 0  # journal transactions
    noise: int = 0  # frames or lines the decoder rejected
    reads: int = 0  # reads of the shoe's port by the loop
    dropped: int = 0  # events refused because the queue was full (see TableLoop.put)
    journal_faults: int = 0  # commits that failed (each raises or keeps the JOURNAL alarm)
    refused: int = 0  # inputs refused because MAX_STAGED inputs were waiting for the journal


class LoopMetrics(Protocol):
    """What the loop reports to the health metrics (controller.metrics.TableMetrics)."""

    def card_read(self, seconds_to_led: float) -> None: ...

    def frame_rejected(self, reason: str) -> None: ...

    def link(self, up: bool) -> None: ...

    def committed(self, seconds: float) -> None: ...

    def events_dropped(self, kind: str, count: int) -> None: ...


class Pruner(Protocol):
    """The journal's retention on the loop (controller.journal.Retention): one bounded step at a quiet time."""

    def step(self, now: float) -> int: ...


class PortReader(Protocol):
    """The shoe's port as the loop reads it (controller.shoe_link.ShoeLink)."""

    def fileno(self) -> tuple[int, int] | None: ...

    def read(self, size: int = ...) -> bytes | None: ...


#: Events the other threads may have waiting at once. Panel presses are a few a minute and the link's
#: opener posts one per change; a full queue means the loop is stalled (the watchdog's business).
QUEUE_BOUND = 256
#: Longest a thread waits for room on a full queue for an event that must not be dropped.
PUT_WAIT = 5.0
#: Most bytes the loop reads from the port at once (one read, then commit and acknowledge).
READ_SIZE = 4096
#: Longest PRESS AGAIN (``Alarm.INPUT_LOST``) stands when no press clears it (seconds of the loop's clock).
INPUT_LOST_HOLD = 10.0


class TableLoop:
    """Owns the table state; everything else talks to it through :meth:`put`."""

    def __init__(
        self,
        state: TableState,
        wire: Wire,
        journal: JournalLike,
        write: Callable[[bytes], None],
        sinks: Sequence[Sink] = (),
        *,
        port: PortReader | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = wall_clock,
        watchdog: Callable[[], object] | None = None,
        watchdog_interval: float | None = None,
        tick: float = 0.25,
        max_batch: int = 64,
        queue_bound: int = QUEUE_BOUND,
    ) -> None:
        self.state = state
        self.wire = wire
        self.journal = journal
        self.write = write
        self.sinks: list[Sink] = list(sinks)
        #: Called (on the loop's thread) after each commit that wrote records, after the ACK: cheap, never blocking.
        self.after_commit: list[Callable[[], None]] = []
        self.port = port
        self.clock = clock
        self.wall = wall
        self.watchdog = watchdog
        self.watchdog_interval = watchdog_interval
        self.tick = tick
        self.queue: queue.Queue[LoopEvent] = queue.Queue(maxsize=queue_bound)
        self.stats = LoopStats()
        self.max_batch = max_batch
        self._pending: list[PendingInput] = []
        self._ack_after_commit: tuple[int | None, int] | None = None  # (session key, event number)
        self._next_watchdog = 0.0
        self._wake_lock = threading.Lock()
        self._wake_w: int | None = None  # the write end of the wake-up pipe while the loop runs
        self.running = False
        # The journal's own fault (a shell fault, not a dealer input): merged into every view shown.
        self.journal_alarm: Alarm | None = None
        self.journal_retry = JOURNAL_RETRY_SECONDS
        self._journal_fault = ""
        self._next_journal_try = 0.0
        self._next_journal_check = 0.0
        # PRESS AGAIN: events dropped at the full queue (see put); the loop raises the alarm when it sees them.
        self.input_alarm: Alarm | None = None
        self._drop_lock = threading.Lock()
        self._dropped_kinds: Counter[str] = Counter()  # what put() dropped since the loop last looked
        self._input_alarm_until = 0.0  # when the hold ends (the loop's clock)
        self._queued_before_loss = 0  # events that waited in the queue when the loss was seen
        #: Health metrics (None: off); the daemon sets them.
        self.metrics: LoopMetrics | None = None
        #: The journal's retention (None: the table never prunes by itself); the daemon sets it with a floor.
        self.pruner: Pruner | None = None
        self._read_at = 0.0  # monotonic time the bytes being decoded were read
        #: Clear while the loop applies, commits and acknowledges what it read: a thread with bulk work (the
        #: floor link flushing a backlog) waits on it between messages, so the loop gets the interpreter back
        #: at once at each of its I/O waits instead of after the other thread's switch interval.
        self.idle = threading.Event()
        self.idle.set()
        #: The table's ruleset: each shoe's start record carries it (the journal alone prices every wager).
        self.ruleset: Ruleset | None = None
        #: The live exact edge (None: off). Fed every derived record; at each betting time it prices the shoe
        #: and returns the advantage records, journaled with the input after which the betting time came.
        self.edges: EdgeWatch | None = None

    # -- for threads -----------------------------------------------------------------------------
    def put(self, event: LoopEvent) -> None:
        """Queue an event for the loop and wake it. The queue is bounded: a panel press that finds it full
        is dropped at once (a GPIO callback never blocks); other events wait up to ``PUT_WAIT`` seconds for
        room (a reader thread is held back: the bytes wait in the driver), then are dropped the same way.
        A drop is logged and counted; once the loop gets going again it shows PRESS AGAIN (``INPUT_LOST``)."""
        try:
            if isinstance(event, PanelPress):
                self.queue.put_nowait(event)
            else:
                self.queue.put(event, timeout=PUT_WAIT)
        except queue.Full:
            kind = event.action if isinstance(event, PanelPress) else _DROPPED_KINDS.get(type(event), ("other", ""))[0]
            with self._drop_lock:
                self._dropped_kinds[kind] += 1
                self.stats.dropped += 1
            log.error("table loop queue full (%d waiting): %r dropped", self.queue.qsize(), event)
        with self._wake_lock:
            if self._wake_w is not None:
                with contextlib.suppress(BlockingIOError):  # a full pipe: the loop is awake already
                    os.write(self._wake_w, b"\0")

    # -- start-up --------------------------------------------------------------------------------
    def replay(self) -> int:
        """Rebuild the state from the journal's inputs through the pure core. Returns inputs replayed.

        A new shoe resets the table but for the link's state, so the replay starts at the input that started
        the newest shoe, with the link as it was then: a restart costs one shoe's inputs, however old the
        journal, and ends in exactly the state a replay from the first input would."""
        n = 0
        after = 0
        start = self.journal.last_shoe_start()
        if start is not None:
            after, shoe_number = start
            self.state = TableState.at_shoe_start(self.state.rules, shoe_number)
            link = self.journal.last_input(InputKind.LINK, before=after)
            if link is not None and not link.get("up", True):
                self.state.apply(LinkChanged(False))
            noise = self.journal.last_input(InputKind.LINE_NOISE, before=after)
            if noise is not None and noise.get("noisy", False):
                self.state.apply(LineNoise(True))
        for _record, body in self.journal.inputs(after=after):
            table_input = input_from_body(body)
            if table_input is not None:
                self.state.apply(table_input)
                n += 1
        self._replay_edges(after)
        return n

    def _replay_edges(self, after: int) -> None:
        """The edge watch as the journal leaves it: the current shoe's cards left and the flags standing
        (from the records after the input that started the shoe; the whole journal if none did)."""
        if self.edges is None:
            return
        watch = self.edges
        self.edges = EdgeWatch(
            watch.flags.threshold, watch.tracker.default_rules, watch.tracker.default_decks, watch.flags.per_bet
        )
        records = getattr(self.journal, "records", None)  # a table journal has it; test fakes may not
        if records is None:
            return
        for record in records(after=after):
            if record.kind != RecordKind.INPUT:
                self.edges.replayed(record.kind, record.data())

    def view(self) -> TableView:
        """The pure state's view, with the shell's alarms (the journal's, PRESS AGAIN) added to its alarms."""
        view = self.state.view()
        for alarm in (self.journal_alarm, self.input_alarm):
            if alarm is not None and alarm not in view.alarms:
                view = replace(view, alarms=(*view.alarms, alarm))
        return view

    def assume_link_down(self, detail: str) -> None:
        """At start the link is down until the shoe is heard: LINK DOWN shows (and is journaled) until then."""
        self._link(False, detail)

    def show(self, notices: Sequence[Notice] = ()) -> None:
        """Hand the current view to every sink; a failing sink is detached, never fatal."""
        view = self.view()
        for sink in list(self.sinks):
            try:
                sink.update(view, notices)
            except Exception:
                log.exception("sink %s failed; detaching it", getattr(sink, "name", sink))
                self.sinks.remove(sink)

    # -- the loop --------------------------------------------------------------------------------
    def run(self, on_tick: Callable[[], None] | None = None) -> None:
        """Process events until :class:`Stop`; ``on_tick`` runs after each wake-up or idle tick."""
        self.running = True
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        selector = selectors.DefaultSelector()
        selector.register(wake_r, selectors.EVENT_READ, "wake")
        with self._wake_lock:
            self._wake_w = wake_w
        watched: tuple[int, int] | None = None  # (generation, fd) of the port registered
        try:
            if Alarm.NOISY_LINE in self.state.alarms:
                self.wire.noise.assume_noisy(self.clock())  # cleared once the line is quiet
            self.show()
            self._send_prompt()
            while True:
                watched = self._watch_port(selector, watched)
                timeout = 0.0 if not self.queue.empty() else self.tick
                port_ready = False
                for key, _mask in selector.select(timeout):
                    if key.data == "wake":
                        with contextlib.suppress(BlockingIOError):
                            os.read(wake_r, 512)
                    else:
                        port_ready = True
                if port_ready or not self.queue.empty():
                    self.idle.clear()  # set again by flush() below
                stop = False
                # Group commit: everything read or queued now is applied event by event, then committed
                # in one transaction and acknowledged once.
                if port_ready and self.port is not None:
                    self.stats.reads += 1
                    data = self.port.read(READ_SIZE)
                    if data is None:  # the port is gone: stop watching it now (its number may come back)
                        watched = self._watch_port(selector, watched, gone=True)
                    elif data:
                        self.handle(WireBytes(data, self.clock()))
                for _ in range(self.max_batch):
                    try:
                        event = self.queue.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(event, Stop):
                        stop = True
                        break
                    self.handle(event)
                    if self._queued_before_loss:
                        self._queued_before_loss -= 1
                self._check_dropped()
                self._poll()
                self.flush()
                if stop:
                    break
                if self.pruner is not None and not port_ready:
                    self._prune_step()
                if not port_ready:
                    self._check_journal_file()
                if on_tick is not None:
                    on_tick()
        finally:
            self.running = False
            with self._wake_lock:
                self._wake_w = None
            selector.close()
            os.close(wake_r)
            os.close(wake_w)

    def _watch_port(
        self, selector: selectors.BaseSelector, watched: tuple[int, int] | None, gone: bool = False
    ) -> tuple[int, int] | None:
        """Keep the selector on the port's current descriptor (or none); returns what is watched."""
        current = None if gone or self.port is None else self.port.fileno()
        if current == watched:
            return watched
        if watched is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(watched[1])
        if current is not None:
            selector.register(current[1], selectors.EVENT_READ, "port")
        return current

    def handle(self, event: LoopEvent) -> None:
        if isinstance(event, WireBytes):
            self._read_at = event.at
            for wire_event in self.wire.receive(event.data, event.at):
                self._wire_event(wire_event)
        elif isinstance(event, PanelPress):
            factory = _PANEL_INPUTS.get(event.action)
            if factory is None:
                log.warning("unknown panel action %r", event.action)
                return
            table_input = factory()
            body = input_body(table_input, source=Source.PANEL)
            self._apply(table_input, body, None, None)
            if self.input_alarm is not None and not self._queued_before_loss:
                # The dealer pressed again after the loss (a press that waited in the queue before it is not).
                self._clear_input_alarm(f"a panel press ({event.action}) was accepted")
        elif isinstance(event, FloorAck):
            store = getattr(self.journal, "store_floor_ack", None)  # a table journal has it; test fakes may not
            if store is not None:
                try:
                    store(event.seq)
                except JournalError as exc:  # the link keeps the ack in memory; the next one is stored again
                    log.warning("floor ack %d not stored: %s", event.seq, exc)
        elif isinstance(event, PortState):
            log.info("shoe port %s: %s", "open" if event.up else "down", event.detail)
            link_down = Alarm.LINK_DOWN in self.state.alarms
            if self.wire.dialect == "ascii" and event.up == link_down:
                # The ASCII dialect has no heartbeat: the port state is all we know of the link.
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

    def _link(self, up: bool, detail: str) -> None:
        log.log(logging.INFO if up else logging.WARNING, "shoe link %s: %s", "up" if up else "DOWN", detail)
        if self.metrics is not None:
            self.metrics.link(up)
        self._apply(LinkChanged(up), input_body(LinkChanged(up), detail=detail), None, None)

    def _apply(
        self, table_input: TableInput | None, body: dict[str, Any], session: int | None, number: int | None
    ) -> None:
        """Apply one input and stage it for the next commit; the LEDs change now, the ACK after the commit."""
        self.idle.clear()  # until the flush: the floor link's flush waits (see :attr:`idle`)
        if len(self._pending) >= MAX_STAGED:
            # The journal has refused commits for a long while: the alarm stands; the input is neither applied
            # nor kept (binary: never acknowledged, so the shoe still holds it and resends it after a restart).
            self.stats.refused += 1
            if self.stats.refused == 1 or self.stats.refused % 100 == 0:
                refused = self.stats.refused
                log.error("journal fault: %d inputs waiting, input refused (%d so far): %s", MAX_STAGED, refused, body)
            return
        notices: list[Notice] = []
        if table_input is not None:
            notices = self.state.apply(table_input)
            self.show(notices)  # LEDs may change before the commit ...
        self._pending.append(PendingInput(body, session, number, self.wall(), self._derived(notices)))
        if number is not None:
            # One ACK per commit, for the newest session's highest event: a HELLO may follow an uncommitted
            # card in the same batch, and the old session's events are then journaled but not acknowledged.
            pending = self._ack_after_commit
            if pending is None or pending[0] != session or number > pending[1]:
                self._ack_after_commit = (session, number)

    def _derived(self, notices: Sequence[Notice]) -> list[tuple[RecordKind, dict[str, Any]]]:
        """The records an input gave rise to; with the edge watch on, its advantage records too. Called after
        the sinks were shown the input (the LEDs are set): pricing the shoe is never on the card -> LED path."""
        records = derived_records(notices, self.ruleset)
        if self.edges is None:
            return records
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
        """Commit and acknowledge what is staged (:meth:`_flush`); the loop is idle again after it."""
        try:
            self._flush()
        finally:
            self.idle.set()

    def _flush(self) -> None:
        """Commit what is staged (one transaction), then ACK the highest event number and send the PROMPT.

        Write-ahead: if the commit fails nothing is acknowledged and the staged inputs stay staged, in order,
        to be retried every :attr:`journal_retry` seconds; the table state (which already holds them) stays
        the journal plus the staged inputs, so it never diverges from what the journal will hold. The fault
        shows as JOURNAL FULL or JOURNAL FAULT and is journaled (raised, then cleared) once a commit passes.
        """
        out = b""
        committed = False
        if self._pending and (self.journal_alarm is None or self.clock() >= self._next_journal_try):
            batch = self._pending
            if self.journal_alarm is not None:
                batch = [*batch, self._journal_record("cleared", self.journal_alarm, "the journal takes commits again")]
            started = time.perf_counter()
            try:
                ids = self.journal.append_many(batch)
            except JournalError as exc:
                self._journal_failed(exc)
                return
            if self.metrics is not None:
                self.metrics.committed(time.perf_counter() - started)
            self._pending = []
            committed = True
            if self.journal_alarm is not None:
                self._journal_recovered()
            self.stats.inputs += len(batch)
            self.stats.commits += 1
            if any(i is None for i in ids):
                # The journal already had an event the session did not flag as a duplicate. The journal is
                # the truth: rebuild the state from it rather than keep a card applied twice.
                log.error("journal refused a duplicate event; rebuilding the table state from the journal")
                self.state = TableState(self.state.rules)
                self.replay()
                self.show()
            if self._ack_after_commit is not None:
                session, number = self._ack_after_commit
                out += self.wire.acknowledge(number, session)  # ... the commit gates the ACK.
                self._ack_after_commit = None
            # PROMPT is state, not an edge: repeat it after every commit so that a shoe that missed one (or
            # that waits for a prompt per card) always knows what is due. One write for both.
            out += self._prompt_bytes()
        if out:
            self.write(out)
        if committed:
            for wake in self.after_commit:
                wake()  # e.g. the floor link: a new record to send (it sets an event; never blocks)

    def _prune_step(self) -> None:
        """One bounded step of the journal's retention, only at a quiet moment: nothing staged or queued, the
        journal healthy, and no card of a coup on the table (between coups). A failure is logged and the
        table deals on (the pruner tries again at its next plan)."""
        if self._pending or not self.queue.empty() or self.journal_alarm is not None:
            return
        view = self.state.view()
        if view.player or view.banker:
            return
        assert self.pruner is not None
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
        if self._pending or self.journal_alarm is not None or not self.queue.empty():
            return
        now = self.clock()
        if now < self._next_journal_check:
            return
        self._next_journal_check = now + JOURNAL_CHECK_SECONDS
        check = getattr(self.journal, "check_file", None)  # a table journal has it; test fakes may not
        if check is None:
            return
        try:
            check()
        except JournalError as exc:
            self._journal_failed(exc)

    def journal_failed(self, exc: JournalError) -> None:
        """The journal cannot take commits (a failed commit, or a journal opened on a full disk)."""
        self._journal_failed(exc)

    def _journal_failed(self, exc: JournalError) -> None:
        self.stats.journal_faults += 1
        self._next_journal_try = self.clock() + self.journal_retry
        alarm = Alarm.JOURNAL_FULL if exc.fault is JournalFault.FULL else Alarm.JOURNAL_FAULT
        if alarm is self.journal_alarm and exc.fault.value == self._journal_fault:
            log.debug("journal still at fault: %s", exc)
            return
        log.error("%s: nothing acknowledged, %d inputs waiting: %s", alarm.value, len(self._pending), exc)
        notices: list[Notice] = []
        previous = self.journal_alarm
        if previous is not alarm:
            if previous is not None:
                notices.append(AlarmCleared(previous))
            notices.append(AlarmRaised(alarm, exc.problem))
        self.journal_alarm = alarm
        self._journal_fault = exc.fault.value  # a new record and log line only when the fault changes
        # Kept in order with the inputs: the journal will say when the fault began, and why.
        self._pending.append(self._journal_record("raised", alarm, exc.problem, fault=exc.fault.value))
        if notices:
            self.show(notices)

    def _journal_recovered(self) -> None:
        alarm = self.journal_alarm
        assert alarm is not None
        log.warning("journal writes again: %s cleared", alarm.value)
        self.journal_alarm = None
        self._journal_fault = ""
        self.show([AlarmCleared(alarm)])

    def _journal_record(
        self, event: str, alarm: Alarm, detail: str, notices: Sequence[Notice] = (), **extra: str
    ) -> PendingInput:
        """A record of a fault of the shell (the journal's own, or PRESS AGAIN): an input of kind
        "journal_fault", never replayed; ``notices`` give its derived records (an alarm record)."""
        body = record_body(InputKind.JOURNAL_FAULT, event=event, alarm=alarm.name.lower(), detail=detail, **extra)
        return PendingInput(body, None, None, self.wall(), derived_records(notices))

    # -- PRESS AGAIN: events dropped at the full queue ----------------------------------------------
    def _check_dropped(self) -> None:
        """Once per loop iteration: raise PRESS AGAIN for events :meth:`put` dropped since the last look, or
        clear it when its hold is over. Cheap when nothing was dropped: one truth test (and one clock read
        while the alarm stands)."""
        if self._dropped_kinds:  # put() fills it under the lock; a look without it is enough to notice
            with self._drop_lock:
                kinds, self._dropped_kinds = self._dropped_kinds, Counter()
            self._raise_input_lost(sum(kinds.values()), kinds)
        elif self.input_alarm is not None and self.clock() >= self._input_alarm_until:
            self._clear_input_alarm(f"held {INPUT_LOST_HOLD:g} s without a press")

    def _raise_input_lost(self, lost: int, kinds: Counter[str]) -> None:
        """Show PRESS AGAIN (each loss sounds the buzzer again) and journal it, with what was lost."""
        presses = [f"{k} x{n}" for k, n in sorted(kinds.items()) if k in _PANEL_INPUTS]
        words = {label: text for label, text in _DROPPED_KINDS.values()}
        others = [f"{words.get(k, k)} x{n}" for k, n in sorted(kinds.items()) if k not in _PANEL_INPUTS]
        detail = (
            f"{lost} event{'s' if lost != 1 else ''} lost at the table loop's full queue "
            f"({self.queue.maxsize} waiting: the loop was stalled)"
        )
        if presses:
            detail += ": " + ", ".join(presses) + "; press again"
        if others:
            detail += f"; not a press: {', '.join(others)} (see the log)"
        log.error("PRESS AGAIN: %s", detail)
        if self.metrics is not None:
            for kind, n in sorted(kinds.items()):
                self.metrics.events_dropped(kind, n)
        notice = AlarmRaised(Alarm.INPUT_LOST, detail)
        self.input_alarm = Alarm.INPUT_LOST
        self._input_alarm_until = self.clock() + INPUT_LOST_HOLD
        self._queued_before_loss = self.queue.qsize()  # these were put before the loss: not the dealer's answer
        self._pending.append(self._journal_record("raised", Alarm.INPUT_LOST, detail, [notice]))
        self.show([notice])

    def _clear_input_alarm(self, why: str) -> None:
        log.warning("PRESS AGAIN cleared: %s", why)
        self.input_alarm = None
        self._queued_before_loss = 0
        self._pending.append(self._journal_record("cleared", Alarm.INPUT_LOST, why))
        self.show([AlarmCleared(Alarm.INPUT_LOST)])

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
                log.exception("closing sink %s failed", getattr(sink, "name", sink))
