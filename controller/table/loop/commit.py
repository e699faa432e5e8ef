"""The write-ahead commit: staged inputs, one journal transaction per batch, and only then the ACK.

The loop applies each input to the pure state and shows it (the LEDs change first), then stages it here with
its derived records (:meth:`WriteAhead.stage`). :meth:`WriteAhead.flush` commits everything staged in one
transaction (group commit: one fsync for what arrived together), then sends the shoe one cumulative ACK for
the newest session's highest event committed and the PROMPT (what is due), and wakes the after-commit
callbacks (the floor link); the bet-spot reader's ACK (when the table has one) goes out after the same commit.
Write-ahead: a batch the journal refuses acknowledges nothing; it stays staged, in
order, and is retried every ``retry`` seconds while JOURNAL FULL / FAULT stands (:mod:`.shell_alarms`). At
most ``max_staged`` inputs wait: one beyond that is refused (neither applied nor kept).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from controller.game.records import RecordKind
from controller.game.table import Notice
from controller.journal import JournalError, PendingInput
from controller.journal.queries import device_key
from controller.table.loop.inbox import Device
from controller.table.loop.shell_alarms import AlarmChange, JournalAlarm, ShellRecord
from controller.table.wire import Wire

log = logging.getLogger(__name__)

#: Inputs kept in memory while the journal cannot take a commit (some 12 shoes of cards, a few MB). The binary
#: shoe stops long before (it holds at most its window of unacknowledged events); the bound is for the ASCII
#: dialect, which has no ACK, and for panel presses. An input beyond it is refused: neither applied nor kept.
MAX_STAGED = 5000

#: How often a commit is retried while the journal is at fault (seconds, monotonic).
JOURNAL_RETRY_SECONDS = 1.0

#: Devices whose events are journaled without a (session, number) key, their wire seq kept as the body's
#: ``seq`` fact: the journal's key space holds the shoe's keys and the bet-spot reader's
#: (:data:`~controller.journal.queries.READER_KEYS`), and a third device under either would move that device's
#: resume point (:meth:`~controller.journal.queries.Queries.last_event`). The chip tray needs none: each of its
#: reports is a tube's whole contents (a report journaled twice changes nothing), and its session starts afresh
#: at every start of the table, which asks for a full count once the link is up (docs/tray.md section 4.3).
UNKEYED_DEVICES: frozenset[Device] = frozenset({"tray"})


class CommitJournal(Protocol):
    """What the commit needs of the journal."""

    def append_many(self, inputs: Sequence[PendingInput]) -> list[int | None]: ...


class CommitMetrics(Protocol):
    """What the commit reports to the health metrics."""

    def committed(self, seconds: float) -> None: ...


@dataclass
class CommitStats:
    """Counters read by the tests and the benchmarks."""

    inputs: int = 0  # inputs committed to the journal
    commits: int = 0  # journal transactions
    journal_faults: int = 0  # commits that failed (each raises or keeps the JOURNAL alarm)
    refused: int = 0  # inputs refused because max_staged inputs were waiting for the journal


class WriteAhead:
    """Staging, group commit, ACK gating and the retries of one table's journal.

    ``show`` hands notices to the sinks (the alarm's raise and clear), ``prompt`` gives the PROMPT's bytes
    for the state after the commit, and ``rebuild`` rebuilds the state from the journal when it refused an
    input as a duplicate the session had not flagged (the journal is the truth)."""

    def __init__(
        self,
        journal: CommitJournal,
        wire: Wire,
        write: Callable[[bytes], None],
        *,
        alarm: JournalAlarm,
        show: Callable[[Sequence[Notice]], None],
        prompt: Callable[[], bytes],
        rebuild: Callable[[], None],
        clock: Callable[[], float],
        wall: Callable[[], str],
        metrics: CommitMetrics | None = None,
        after_commit: Sequence[Callable[[], None]] = (),
        max_staged: int = MAX_STAGED,
        retry: float = JOURNAL_RETRY_SECONDS,
        device_acks: Mapping[Device, Callable[[int, int | None], None]] | None = None,
    ) -> None:
        self.journal = journal
        self.wire = wire
        self.write = write
        self.alarm = alarm
        self.show = show
        self.prompt = prompt
        self.rebuild = rebuild
        self.clock = clock
        self.wall = wall
        self.metrics = metrics
        #: Called after each commit that wrote records, after the ACK: cheap, never blocking.
        self.after_commit = tuple(after_commit)
        self.max_staged = max_staged
        self.retry = retry
        self.stats = CommitStats()
        self._pending: list[PendingInput] = []
        self._ack: tuple[int | None, int] | None = None  # (session key, event number) to acknowledge
        #: How each other device (the bet-spot reader) is acknowledged after the commit (number, session key).
        self.device_acks = dict(device_acks or {})
        self._device_ack: dict[Device, tuple[int | None, int]] = {}  # (session key, event number) per device
        self._next_try = 0.0

    # -- staging ---------------------------------------------------------------------------------
    def refuse(self, body: Mapping[str, Any]) -> bool:
        """True (counted, logged) when ``max_staged`` inputs wait already: the input must be neither applied
        nor kept (binary: never acknowledged, so the shoe still holds it and resends it after a restart)."""
        if len(self._pending) < self.max_staged:
            return False
        self.stats.refused += 1
        refused = self.stats.refused
        if refused == 1 or refused % 100 == 0:
            log.error("journal fault: %d inputs waiting, input refused (%d so far): %s", self.max_staged, refused, body)
        return True

    def stage(
        self,
        body: Mapping[str, Any],
        session: int | None,
        number: int | None,
        derived: Sequence[tuple[RecordKind, dict[str, Any]]],
        device: Device = "shoe",
    ) -> None:
        """Stage one applied input and its derived records for the next commit; the ACK waits for it. A
        reader's event is journaled under its own keys (:func:`~controller.journal.queries.device_key`); a chip
        tray's without any (:data:`UNKEYED_DEVICES`), its ACK staged all the same."""
        if device in UNKEYED_DEVICES:
            self._pending.append(PendingInput(body, None, None, self.wall(), derived))
        else:
            self._pending.append(PendingInput(body, device_key(device, session), number, self.wall(), derived))
        if number is not None:
            self.stage_ack(session, number, device)

    def stage_ack(self, session: int | None, number: int, device: Device = "shoe") -> None:
        """Acknowledge ``number`` after the next commit (with what is staged before it). Alone, for an event
        the table takes without journaling it (a reader's snapshot that changes nothing)."""
        # One ACK per commit, for the newest session's highest event: a HELLO may follow an uncommitted
        # card in the same batch, and the old session's events are then journaled but not acknowledged.
        ack = self._ack if device == "shoe" else self._device_ack.get(device)
        if ack is None or ack[0] != session or number > ack[1]:
            if device == "shoe":
                self._ack = (session, number)
            else:
                self._device_ack[device] = (session, number)

    def stage_record(self, record: ShellRecord) -> None:
        """Stage a record of the shell's own alarms, in order with the inputs."""
        self._pending.append(self._stamped(record))

    def apply_change(self, change: AlarmChange) -> None:
        """Stage an alarm change's record, then show its notices."""
        if change.record is not None:
            self.stage_record(change.record)
        if change.notices:
            self.show(change.notices)

    @property
    def staged(self) -> int:
        """Inputs and records waiting for a commit."""
        return len(self._pending)

    @property
    def at_fault(self) -> bool:
        """Whether the journal's alarm stands (commits are retried, nothing else is asked of the journal)."""
        return self.alarm.alarm is not None

    # -- committing ------------------------------------------------------------------------------
    def flush(self) -> bool:
        """Commit what is staged (one transaction), then ACK the highest event number and send the PROMPT.
        Returns whether a commit passed.

        If the commit fails nothing is acknowledged and the staged inputs stay staged, in order, to be retried
        every :attr:`retry` seconds; the table state (which already holds them) stays the journal plus the
        staged inputs, so it never diverges from what the journal will hold. The fault is journaled (raised,
        then cleared in the batch that finally commits)."""
        if not self._pending and self._device_ack and not self.at_fault:
            self._send_device_acks()  # only events taken without a record (snapshots that were no news)
            return False
        if not self._pending or (self.at_fault and self.clock() < self._next_try):
            return False
        batch = self._pending
        if self.at_fault:
            batch = [*batch, self._stamped(self.alarm.clearing())]
        started = time.perf_counter()
        try:
            ids = self.journal.append_many(batch)
        except JournalError as exc:
            self.failed(exc)
            return False
        if self.metrics is not None:
            self.metrics.committed(time.perf_counter() - started)
        self._pending = []
        if self.at_fault:
            self.apply_change(self.alarm.recovered())
        self.stats.inputs += len(batch)
        self.stats.commits += 1
        if any(i is None for i in ids):
            # The journal already had an event the session did not flag as a duplicate. The journal is the
            # truth: rebuild the state from it rather than keep a card applied twice.
            log.error("journal refused a duplicate event; rebuilding the table state from the journal")
            self.rebuild()
        out = b""
        if self._ack is not None:
            session, number = self._ack
            out += self.wire.acknowledge(number, session)  # ... the commit gates the ACK.
            self._ack = None
        # PROMPT is state, not an edge: repeat it after every commit so that a shoe that missed one (or that
        # waits for a prompt per card) always knows what is due. One write for both.
        out += self.prompt()
        if out:
            self.write(out)
        self._send_device_acks()
        for wake in self.after_commit:
            wake()  # e.g. the floor link: a new record to send (it sets an event; never blocks)
        return True

    def _send_device_acks(self) -> None:
        due, self._device_ack = self._device_ack, {}
        for device, (session, number) in due.items():
            send = self.device_acks.get(device)
            if send is not None:
                send(number, session)

    def failed(self, exc: JournalError) -> None:
        """The journal cannot take commits (a failed commit, a failed check, a journal opened on a full disk):
        the alarm is raised (or kept) and the next try is due in :attr:`retry` seconds."""
        self.stats.journal_faults += 1
        self._next_try = self.clock() + self.retry
        change = self.alarm.failed(exc, len(self._pending))
        if change is not None:
            self.apply_change(change)

    def _stamped(self, record: ShellRecord) -> PendingInput:
        return PendingInput(record.body, None, None, self.wall(), record.derived)
