"""The chip tray's firmware side, for the simulator, and the feed that joins it to the tray's tubes: sans-I/O.

:class:`TrayDevice` is what the tray's board is, minus the antennas and the wire: it keeps each tube's debounced
reading and speaks ``docs/tray.md`` through the same :class:`~firmware_protocol.session.ShoeSession` as the shoe
and the bet-spot reader (``dialect=TRAY``): HELLO at boot and after RESET (a new session id each time), a STATUS
when a flag is set (the lid is open while the table plays), a full snapshot (SNAPSHOT_BEGIN, one TUBE per tube
that holds chips, SNAPSHOT_END) right after HELLO and on every COUNT_REQUEST, a TUBE with a tube's whole set of
UIDs whenever what it reports of the tube changes, heartbeats and resends. Bounded as the reader: while the table
acknowledges nothing it holds at most ``max_unacked`` events, and owes a snapshot for what did not fit.

:class:`TrayFeed` carries the tray's reads (:meth:`hw_sim.tray.ChipTray.due_reads`: a tube read the same for the
debounce, a flicker of the tray's faults, a flicker put right) to the device, and the table's bytes back.
"""

from __future__ import annotations

import random

from firmware_protocol.binary import MAX_SEQ
from firmware_protocol.session import CommandReceived, ResetRequested, ShoeSession
from firmware_protocol.tray import (
    TRAY,
    TRAY_PROTOCOL_VERSION,
    CountRequest,
    TrayFlags,
    TrayHello,
    TrayMessage,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TubeReport,
)
from hw_sim.device import SessionDevice
from hw_sim.tray import TUBES, ChipTray, TubeRead

__all__ = ["TrayDevice", "TrayFeed"]


class TrayDevice(SessionDevice):
    """A simulated chip tray's firmware; see the module's docstring. ``seed`` draws the boot session ids."""

    def __init__(
        self,
        *,
        seed: int | str = 0,
        tubes: int = TUBES,
        firmware_version: str = "sim-tray-1.0",
        serial_number: str = "SIM-CT-0001",
        resend_after: float = 0.5,
        heartbeat_every: float = 1.0,
        max_unacked: int = 256,
        flags: TrayFlags = TrayFlags.LID_OPEN,
    ) -> None:
        TrayHello(firmware_version, serial_number, TRAY_PROTOCOL_VERSION, 0, tubes)  # checks
        self.tubes = tubes
        self.firmware_version = firmware_version
        self.serial_number = serial_number
        self.resend_after = resend_after
        self.heartbeat_every = heartbeat_every
        self.max_unacked = max_unacked
        self.flags = flags
        self._rng = random.Random(f"{seed}:tray-session")
        #: Each tube's debounced reading (what a snapshot reports); a tube absent is empty.
        self.reading: dict[int, frozenset[int]] = {}
        self._said: dict[int, frozenset[int]] = {}  # what the table was last told of each tube
        self.session: ShoeSession | None = None
        self.reboots = 0
        self.snapshots_sent = 0
        self.count_requests = 0
        self.owed = False  # a snapshot is owed: something did not fit in the session's window
        self._count_due = False
        self._snapshot_id = 0

    # -- power -------------------------------------------------------------------------------------------
    def start(self, now: float) -> None:
        """Boot: a new session (HELLO; STATUS if a flag is set), then at once a full snapshot."""
        session = ShoeSession(
            self._rng.getrandbits(32),
            firmware_version=self.firmware_version,
            serial_number=self.serial_number,
            resend_after=self.resend_after,
            heartbeat_every=self.heartbeat_every,
            max_unacked=self.max_unacked,
            dialect=TRAY,
            hello=self._hello,
        )
        session.start(now)
        self.session = session
        if self.flags:
            self._send([TrayStatus(self.flags)], now)
        self._snapshot(now)

    def reboot(self, now: float) -> None:
        """Power-cycle (or obey RESET): a new session; what was not acknowledged is lost, the tubes are not."""
        self.reboots += 1
        self.start(now)

    def _hello(self, session_id: int) -> TrayHello:
        return TrayHello(self.firmware_version, self.serial_number, TRAY_PROTOCOL_VERSION, session_id, self.tubes)

    # -- the table's side -------------------------------------------------------------------------------
    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the table: ACKs release, RESEND is served on the next poll, RESET reboots, COUNT_REQUEST
        asks for a snapshot (begun on the next poll; several requests before it are answered by one)."""
        if self.session is None or not data:
            return
        for event in self.session.receive(data, now):
            if isinstance(event, ResetRequested):
                self.reboot(now)
                return  # the rest was for the old session
            if isinstance(event, CommandReceived) and isinstance(event.message, CountRequest):
                self.count_requests += 1
                self._count_due = True

    def poll(self, now: float) -> bytes:
        """Every byte due now: a snapshot asked for (or owed), reports, resends, the heartbeat."""
        if self.session is None:
            return b""
        if self._count_due or self.owed:
            self._count_due = False
            self._snapshot(now)
        return self.session.poll(now)

    def next_deadline(self) -> float | None:
        if self.session is None:
            return None
        return self.session.next_deadline()

    # -- the tubes --------------------------------------------------------------------------------------
    def load(self, tubes: dict[int, frozenset[int]]) -> None:
        """Before boot: the tubes read as they hold (the snapshot after HELLO reports them)."""
        self.reading = {t: uids for t, uids in tubes.items() if uids}

    def read(self, tube: int, reading: frozenset[int] | None, seen: frozenset[int], now: float) -> bool:
        """A read of ``tube``: its debounced reading becomes ``reading`` (None: unchanged), and ``seen`` is
        reported if the table was last told otherwise. Returns whether a TUBE went out."""
        if not 1 <= tube <= self.tubes:
            raise ValueError(f"tube {tube}: this tray has tubes 1-{self.tubes}")
        if reading is not None:
            if reading:
                self.reading[tube] = reading
            else:
                self.reading.pop(tube, None)
        if seen == self._said.get(tube, frozenset()):
            return False
        if self._send([TubeReport(tube, tuple(sorted(seen)))], now):
            self._said[tube] = seen
            return True
        return False

    # -- sending ------------------------------------------------------------------------------------------
    def _snapshot(self, now: float) -> None:
        self._snapshot_id = (self._snapshot_id + 1) & MAX_SEQ
        reports = [TubeReport(t, tuple(sorted(self.reading[t]))) for t in sorted(self.reading) if self.reading[t]]
        messages: list[TrayMessage] = [TraySnapshotBegin(self._snapshot_id), *reports]
        messages.append(TraySnapshotEnd(self._snapshot_id, len(reports)))
        self.owed = False
        if self._send(messages, now):
            self.snapshots_sent += 1
            self._said = dict(self.reading)

    def _send(self, messages: list[TrayMessage], now: float) -> bool:
        """Queue ``messages`` if they all fit in the session's window; otherwise owe a snapshot."""
        assert self.session is not None
        if self.session.unacked + len(messages) > self.max_unacked:
            self.owed = True
            return False
        for message in messages:
            self.session.send(message, now)
        return True


class TrayFeed:
    """The tray's antennas: the chip tray's reads in, the tray device's bytes out."""

    def __init__(self, tray: ChipTray, device: TrayDevice) -> None:
        tray.keep_reads = True
        self.tray = tray
        self.device = device
        self.reads = 0

    @property
    def started(self) -> bool:
        return self.device.session is not None

    @property
    def pending(self) -> bool:
        """Reads are still to be carried out."""
        return self.tray.next_read_at() is not None

    @property
    def settled(self) -> bool:
        """Everything the tray has to tell the table has been told and acknowledged."""
        return self.started and not self.pending and self.device.unacked == 0 and not self.device.owed

    def start(self, now: float) -> None:
        """Power on: the device reads the tubes as they hold now, then boots (its snapshot reports them)."""
        self.device.load(self.tray.content())
        self.device.start(now)

    def receive(self, data: bytes, now: float) -> None:
        self.device.receive(data, now)

    def poll(self, now: float) -> bytes:
        """Carry out the reads due by ``now``, then the device's bytes due now."""
        if not self.started:
            return b""
        for read in self.tray.due_reads(now):
            self._apply(read, now)
        return self.device.poll(now)

    def next_deadline(self) -> float | None:
        times = [t for t in (self.device.next_deadline(), self.tray.next_read_at()) if t is not None]
        return min(times) if times else None

    def _apply(self, read: TubeRead, now: float) -> None:
        self.reads += 1
        base = read.reading if read.reading is not None else self.device.reading.get(read.tube, frozenset())
        seen = (read.seen if read.seen is not None else base) | read.extra
        self.device.read(read.tube, read.reading, seen, now)
