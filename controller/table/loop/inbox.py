"""The table loop's inbox: what the other threads hand the loop, bounded, with a wake-up pipe.

The panel's GPIO callbacks, the links' port openers (the shoe's, and the bet-spot reader's: each event
names its :data:`Device`), the floor link and the signal handler (and the reader thread of a port without a
descriptor) never touch the table: they :meth:`Inbox.put` a :data:`LoopEvent`
and write a byte to the wake-up pipe the loop waits on beside the shoe's port. The queue holds at most
``bound`` events. A panel press that finds it full is dropped at once (a GPIO callback never blocks); the
other events wait up to ``put_wait`` seconds for room, then are dropped the same way. A drop is logged and
counted by kind (:meth:`Inbox.take_dropped`): the loop shows the loss as PRESS AGAIN
(:mod:`controller.table.loop.shell_alarms`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from controller.game.cash import BuyIn
from controller.table.panel import ButtonAction
from floor_protocol.ack import Ack
from floor_protocol.staff import StaffList

log = logging.getLogger(__name__)

#: Events the other threads may have waiting at once. Panel presses are a few a minute and the link's
#: opener posts one per change; a full queue means the loop is stalled (the watchdog's business).
QUEUE_BOUND = 256
#: Longest a thread waits for room on a full queue for an event that must not be dropped.
PUT_WAIT = 5.0
#: Most bytes read from the shoe's port at once (by the loop, or by the reader thread of a port without a
#: descriptor): one read, then commit and acknowledge.
READ_SIZE = 4096


# -- what threads put in the inbox -------------------------------------------------------------------------
#: The devices on the table's serial ports: the card-reading shoe, and the bet-spot reader and the chip tray when
#: configured.
Device = Literal["shoe", "reader", "tray"]


@dataclass(frozen=True)
class WireBytes:
    """Bytes read from a device's port (by the reader thread of a port without a descriptor)."""

    data: bytes
    at: float  # monotonic time of the read
    device: Device = "shoe"


@dataclass(frozen=True)
class PortState:
    """A device's serial port opened or failed."""

    up: bool
    detail: str
    device: Device = "shoe"


@dataclass(frozen=True)
class PanelPress:
    """A button on the dealer's panel."""

    action: ButtonAction


@dataclass(frozen=True)
class Stop:
    """Ask the loop to finish."""


@dataclass(frozen=True)
class FloorAck:
    """The floor's signed ack, as the floor link handed it on: the loop, the journal's one writer, judges it
    again and stores it."""

    ack: Ack


@dataclass(frozen=True)
class BuyInEntry:
    """A buy-in entered for a seat (on ``money.sock``: the dealer screen's, the simulator's), its shape checked
    by the feed: the loop checks it against the table (:func:`~controller.game.cash.buy_in_refusal`)."""

    buy_in: BuyIn


@dataclass(frozen=True)
class StaffListIn:
    """The floor's signed staff list, as the floor link handed it on: the loop verifies it again and keeps it."""

    staff: StaffList


@dataclass(frozen=True)
class PinEntry:
    """A supervisor's PIN entered on the dealer screen for the pending approval (on ``money.sock``, its shape
    checked by the feed: 4 to 8 digits). Never logged: not even a dropped event's line shows it."""

    pin: str = field(repr=False)


@dataclass(frozen=True)
class RateEntry:
    """The dealer screen's RATE: the uncarded player at ``seat`` to be rated (a supervisor approves it)."""

    seat: int


@dataclass(frozen=True)
class KeyEntry:
    """The dealer screen's correction of an unreadable coup card: ``card``, the token of the card lying face up (a
    supervisor approves it; its shape checked by the feed)."""

    card: str


@dataclass(frozen=True)
class PinVerdict:
    """The PIN checker's verdict on a PIN entered for ``staff_id`` (:mod:`controller.table.pin_check`)."""

    staff_id: str
    right: bool


LoopEvent = (
    WireBytes
    | PortState
    | PanelPress
    | FloorAck
    | BuyInEntry
    | StaffListIn
    | PinEntry
    | PinVerdict
    | RateEntry
    | KeyEntry
    | Stop
)

#: How a dropped event that is not a panel press is named: the metrics' ``kind`` label, and the words of the
#: alarm's detail. A panel press is named by its action's value ("declare", "new_shoe", "void").
DROPPED_KINDS: dict[type, tuple[str, str]] = {
    PortState: ("link", "shoe port report"),
    WireBytes: ("shoe_bytes", "shoe bytes read"),
    FloorAck: ("floor_ack", "floor ack"),
    BuyInEntry: ("buy_in", "buy-in entered"),
    StaffListIn: ("staff_list", "staff list"),
    PinEntry: ("pin", "supervisor's PIN entered"),
    PinVerdict: ("pin_verdict", "supervisor's PIN checked"),
    RateEntry: ("rate", "rating of an uncarded player asked"),
    KeyEntry: ("key", "unreadable card keyed"),
    Stop: ("stop", "stop request"),
}
#: The same for the bet-spot reader's port.
READER_DROPPED_KINDS: dict[type, tuple[str, str]] = {
    PortState: ("reader_link", "bet-spot reader port report"),
    WireBytes: ("reader_bytes", "bet-spot reader bytes read"),
}

#: The same for the chip tray's port.
TRAY_DROPPED_KINDS: dict[type, tuple[str, str]] = {
    PortState: ("tray_link", "chip tray port report"),
    WireBytes: ("tray_bytes", "chip tray bytes read"),
}


def dropped_kind(event: LoopEvent) -> str:
    """The kind a dropped event is counted under (see :data:`DROPPED_KINDS`)."""
    if isinstance(event, PanelPress):
        return event.action.value
    if isinstance(event, PortState | WireBytes) and event.device == "reader":
        return READER_DROPPED_KINDS[type(event)][0]
    if isinstance(event, PortState | WireBytes) and event.device == "tray":
        return TRAY_DROPPED_KINDS[type(event)][0]
    return DROPPED_KINDS[type(event)][0]


class Inbox:
    """The loop's bounded queue and wake-up pipe; :meth:`put` is safe from any thread."""

    def __init__(self, bound: int = QUEUE_BOUND, *, put_wait: float = PUT_WAIT) -> None:
        self._queue: queue.Queue[LoopEvent] = queue.Queue(maxsize=bound)
        self.bound = bound
        self.put_wait = put_wait
        #: Events dropped at the full queue since the inbox was made (all kinds).
        self.dropped = 0
        self._drop_lock = threading.Lock()
        self._dropped_kinds: Counter[str] = Counter()  # what put() dropped since the loop last took them
        self._wake_lock = threading.Lock()
        self._wake_w: int | None = None  # the write end of the wake-up pipe while the loop waits on it

    # -- for threads -----------------------------------------------------------------------------
    def put(self, event: LoopEvent) -> None:
        """Queue an event for the loop and wake it. A panel press that finds the queue full is dropped at once;
        another event waits up to :attr:`put_wait` seconds for room (a reader thread is held back: the bytes
        wait in the driver), then is dropped the same way. A drop is logged and counted by kind."""
        try:
            if isinstance(event, PanelPress):
                self._queue.put_nowait(event)
            else:
                self._queue.put(event, timeout=self.put_wait)
        except queue.Full:
            with self._drop_lock:
                self._dropped_kinds[dropped_kind(event)] += 1
                self.dropped += 1
            log.error("table loop queue full (%d waiting): %r dropped", self._queue.qsize(), event)
        with self._wake_lock:
            if self._wake_w is not None:
                with contextlib.suppress(BlockingIOError):  # a full pipe: the loop is awake already
                    os.write(self._wake_w, b"\0")

    # -- for the loop ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def wakeup(self) -> Iterator[int]:
        """While the loop runs: the read end of a fresh wake-up pipe, written to by every :meth:`put`."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        with self._wake_lock:
            self._wake_w = wake_w
        try:
            yield wake_r
        finally:
            with self._wake_lock:
                self._wake_w = None
            os.close(wake_r)
            os.close(wake_w)

    @staticmethod
    def drain_wakeup(wake_r: int) -> None:
        """Empty the wake-up pipe the loop was woken by (the events themselves are in the queue)."""
        with contextlib.suppress(BlockingIOError):
            os.read(wake_r, 512)

    def take(self) -> LoopEvent | None:
        """The oldest event waiting, or None."""
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return None

    def take_dropped(self) -> Counter[str]:
        """The drops counted by kind since the last call (empty: none). Cheap when nothing was dropped: one
        truth test without the lock (put() fills the counter under it; a look without it is enough to notice)."""
        if not self._dropped_kinds:
            return Counter()
        with self._drop_lock:
            kinds, self._dropped_kinds = self._dropped_kinds, Counter()
        return kinds

    def waiting(self) -> int:
        """How many events wait."""
        return self._queue.qsize()

    def empty(self) -> bool:
        return self._queue.empty()

    def full(self) -> bool:
        return self._queue.full()
