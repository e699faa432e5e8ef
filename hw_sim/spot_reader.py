"""The bet-spot reader's firmware side, for the simulator: sans-I/O, the time injected.

:class:`SpotReader` is what the RFID board under the layout is, minus the antennas and the wire: it holds
the chips on each spot (the *truth*: :meth:`~SpotReader.place`), and speaks ``docs/spots.md`` through the
same :class:`~firmware_protocol.session.ShoeSession` the software shoe runs (``dialect=READER``): HELLO at
boot, a SpotReport whenever a spot changes, a full snapshot (SNAPSHOT_BEGIN, one SpotReport per occupied
spot, SNAPSHOT_END) right after HELLO and every ``snapshot_every`` seconds, heartbeats, resends; it obeys
ACK, RESEND and RESET and keeps the betting window the table sends (:attr:`~SpotReader.window`). Its card
readers (``docs/spots.md`` section 5.5) hold a card per position (:meth:`~SpotReader.card`: CARD_IN and
CARD_OUT), and after every HELLO it sends a CARD_IN for each card held, after the first snapshot.

:meth:`~SpotReader.place` is the debounced reading (a real reader reports a change once it has been stable
for two read cycles). The fault hooks helper "sim" drives: :meth:`~SpotReader.report` sends a report
without changing the truth (a dropped read is a report with a chip missing, then the truth again; a ghost
is a UID also reported on a neighbouring spot), and :meth:`~SpotReader.duplicate` writes the next frame
twice.

Bounded: while the table acknowledges nothing the session holds at most ``max_unacked`` events; a change or
a snapshot that does not fit is not sent but owed, and one snapshot carries the truth once there is room.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from firmware_protocol.binary import MAX_SEQ
from firmware_protocol.session import CommandReceived, ResetRequested, ShoeSession
from firmware_protocol.spots import (
    ALL_SEATS,
    ALL_SPOTS,
    READER,
    READER_PROTOCOL_VERSION,
    CardIn,
    CardOut,
    ReaderFlags,
    ReaderHello,
    ReaderMessage,
    ReaderStatus,
    SnapshotBegin,
    SnapshotEnd,
    SpotCode,
    SpotReport,
    Window,
    WindowState,
)
from hw_sim.device import SessionDevice

SpotKey = tuple[int, SpotCode]


class SpotReader(SessionDevice):
    """A simulated bet-spot reader; see the module's docstring. ``seed`` draws the boot session ids."""

    def __init__(
        self,
        *,
        seed: int | str = 0,
        seats: Iterable[int] = ALL_SEATS[:7],
        spots: Iterable[SpotCode] = ALL_SPOTS,
        firmware_version: str = "sim-reader-1.0",
        serial_number: str = "SIM-SR-0001",
        snapshot_every: float = 5.0,
        resend_after: float = 0.5,
        heartbeat_every: float = 1.0,
        max_unacked: int = 256,
    ) -> None:
        self.seats = tuple(sorted(set(seats)))
        self.spots = tuple(sorted(set(SpotCode(s) for s in spots)))
        ReaderHello(firmware_version, serial_number, READER_PROTOCOL_VERSION, 0, self.seats, self.spots)  # checks
        if snapshot_every <= 0:
            raise ValueError(f"snapshot_every {snapshot_every} must be positive")
        self.firmware_version = firmware_version
        self.serial_number = serial_number
        self.snapshot_every = snapshot_every
        self.resend_after = resend_after
        self.heartbeat_every = heartbeat_every
        self.max_unacked = max_unacked
        self._rng = random.Random(f"{seed}:reader-session")
        #: What lies on each spot (occupied spots only).
        self.truth: dict[SpotKey, frozenset[int]] = {}
        #: The card in each card position's reader (0 the dealer's, 1-14 a seat's).
        self.cards: dict[int, int] = {}
        #: The betting window as the table last said (None before it said anything).
        self.window: WindowState | None = None
        self.session: ShoeSession | None = None
        self.reboots = 0
        self.snapshots_sent = 0
        self.owed = False  # a snapshot is owed: something did not fit in the session's window
        self._snapshot_id = 0
        self._next_snapshot: float | None = None
        self._duplicate = 0
        self._flags = ReaderFlags.NONE

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
            dialect=READER,
            hello=self._hello,
        )
        session.start(now)
        self.session = session
        if self._flags:
            self._send([ReaderStatus(self._flags)], now)  # a condition that outlived the reboot
        self._snapshot(now)
        self._send([CardIn(position, uid) for position, uid in sorted(self.cards.items())], now)

    def reboot(self, now: float) -> None:
        """Power-cycle (or obey RESET): a new session; what was not acknowledged is lost, the truth is not."""
        self.reboots += 1
        self.start(now)

    def _hello(self, session_id: int) -> ReaderHello:
        return ReaderHello(
            self.firmware_version, self.serial_number, READER_PROTOCOL_VERSION, session_id, self.seats, self.spots
        )

    # -- the table's side -------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the table: ACKs release, RESEND is served on the next poll, RESET reboots, WINDOW is kept."""
        if self.session is None or not data:
            return
        for event in self.session.receive(data, now):
            if isinstance(event, ResetRequested):
                self.reboot(now)
                return  # the rest was for the old session
            if isinstance(event, CommandReceived) and isinstance(event.message, Window):
                self.window = event.message.state

    def poll(self, now: float) -> bytes:
        """Every byte due now: the periodic (or owed) snapshot, reports, resends, the heartbeat."""
        if self.session is None:
            return b""
        if self.owed or (self._next_snapshot is not None and now >= self._next_snapshot):
            self._snapshot(now)
        out = self.session.poll(now)
        if self._duplicate and out:
            frames = out.split(b"\x00")[:-1]
            extra = b"".join(f + b"\x00" for f in frames[: self._duplicate])
            self._duplicate = max(0, self._duplicate - len(frames))
            out += extra
        return out

    def next_deadline(self) -> float | None:
        """When :meth:`poll` next has something to do."""
        if self.session is None:
            return None
        times = [t for t in (self.session.next_deadline(), self._next_snapshot) if t is not None]
        return min(times) if times else None

    # -- the layout -------------------------------------------------------------------------------------

    def place(self, seat: int, spot: SpotCode, uids: Iterable[int], now: float) -> bool:
        """The chips on ``seat``'s ``spot`` are now ``uids`` (the debounced reading). A change is reported;
        returns whether it was a change."""
        key = self._key(seat, spot)
        chips = frozenset(uids)
        if chips == self.truth.get(key, frozenset()):
            return False
        if chips:
            self.truth[key] = chips
        else:
            self.truth.pop(key, None)
        self._send([SpotReport(seat, key[1], tuple(sorted(chips)))], now)
        return True

    def card(self, position: int, uid: int | None, now: float) -> None:
        """The card reader at ``position`` now holds ``uid`` (None: no card): a CARD_OUT of the card it held,
        then a CARD_IN of the new one."""
        held = self.cards.get(position)
        if held == uid:
            return
        messages: list[ReaderMessage] = []
        if held is not None:
            del self.cards[position]
            messages.append(CardOut(position, held))
        if uid is not None:
            self.cards[position] = uid
            messages.append(CardIn(position, uid))
        self._send(messages, now)

    def clear(self, now: float) -> None:
        """Every spot emptied (the table cleared at the end of a coup's payout, or a test's reset)."""
        for seat, spot in sorted(self.truth):
            self.place(seat, spot, (), now)

    def report(self, seat: int, spot: SpotCode, uids: Iterable[int], now: float) -> None:
        """A fault: report ``uids`` on the spot without changing the truth (a dropped read, a ghost)."""
        key = self._key(seat, spot)
        self._send([SpotReport(seat, key[1], tuple(sorted(set(uids))))], now)

    def duplicate(self, frames: int = 1) -> None:
        """A fault: the next ``frames`` frames that go out are written twice."""
        self._duplicate += frames

    def status(self, flags: ReaderFlags, now: float) -> None:
        """The reader's condition changed (antenna fault, tamper ...): a STATUS goes out."""
        self._flags = flags
        self._send([ReaderStatus(flags)], now)

    def _key(self, seat: int, spot: SpotCode) -> SpotKey:
        code = SpotCode(spot)
        if seat not in self.seats or code not in self.spots:
            raise ValueError(f"seat {seat} {code.name.lower()} is not a spot of this reader")
        return seat, code

    # -- sending ------------------------------------------------------------------------------------------

    def _snapshot(self, now: float) -> None:
        self._next_snapshot = now + self.snapshot_every
        self._snapshot_id = (self._snapshot_id + 1) & MAX_SEQ
        reports = [SpotReport(seat, spot, tuple(sorted(self.truth[seat, spot]))) for seat, spot in sorted(self.truth)]
        messages: list[ReaderMessage] = [SnapshotBegin(self._snapshot_id), *reports]
        messages.append(SnapshotEnd(self._snapshot_id, len(reports)))
        self.owed = False
        if self._send(messages, now):
            self.snapshots_sent += 1

    def _send(self, messages: list[ReaderMessage], now: float) -> bool:
        """Queue ``messages`` if they all fit in the session's window; otherwise owe a snapshot."""
        assert self.session is not None
        if self.session.unacked + len(messages) > self.max_unacked:
            self.owed = True
            return False
        for message in messages:
            self.session.send(message, now)
        return True
