"""The reliability layer of the binary dialect, sans-I/O: the shoe's sender and the controller's receiver.

Both sides follow ``docs/protocol.md`` ("Reliability"). Time is injected as a monotonic ``now`` (seconds)
on every call and never read here; bytes come in through ``receive`` and go out as return values.

:class:`ShoeSession` is the firmware side (the simulator runs it): it numbers reliable events 1, 2, ...
(HELLO is 1, wrapping 0xFFFF -> 1), keeps every unacknowledged one, resends them all 500 ms after the
last send or at once on RESEND, and sends a HEARTBEAT every second.

:class:`ControllerSession` is the controller side: it accepts events only in order (go-back-N), reports
each exactly once per (session, number) as a :class:`ShoeEvent`, drops duplicates (re-ACKing them), asks
for a RESEND on a gap, watches the link (down after 3 s without a valid frame) and notices a shoe that
rebooted. It ACKs an event only when the caller says it is committed (:meth:`ControllerSession.acknowledge`).

Both run over a :class:`~firmware_protocol.framing.Dialect` (``dialect=``, the shoe's by default): the bet-spot
reader (:data:`firmware_protocol.spots.READER`) runs the very same rules with its own messages, so "shoe" in
the names below means the device, whichever it is. This layer knows no dialect's messages: a message is any
object of the dialect (``object`` here), and each device's port on the table narrows it to its own union.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .binary import SHOE
from .framing import (
    MAX_SEQ,
    Dialect,
    FrameDecoder,
    FrameReceived,
    FrameRejected,
    RejectReason,
    encode,
    message_type,
)
from .messages import Ack, Due, Prompt, Resend, Reset

#: RESEND with this from_seq asks for every event the shoe still holds.
RESEND_ALL = 0


def seq_of(number: int) -> int:
    """The 16-bit wire seq of per-session event ``number`` (1 -> 1, 65535 -> 65535, 65536 -> 1)."""
    return (number - 1) % MAX_SEQ + 1


def session_key(session_id: int, epoch: int = 0) -> int:
    """The journal's key for a shoe session: the 32-bit session id, plus ``epoch << 32`` when a shoe that
    repeats its session id at boot has started the same id again (``epoch`` counts those restarts, 0 first)."""
    return (epoch << 32) | session_id


def split_key(key: int) -> tuple[int, int]:
    """Inverse of :func:`session_key`: ``(session_id, epoch)``."""
    return key & 0xFFFFFFFF, key >> 32


#: Delivered frames kept per session (its first events) to tell a resent HELLO from a shoe that rebooted
#: with the same session id. A HELLO is resent only while the shoe holds it, so only a session's first
#: window of events can come again behind it.
KEEP_FRAMES = 512


def next_seq(seq: int) -> int:
    """The seq after ``seq`` (0xFFFF -> 1; 0 is never an event's seq)."""
    return 1 if seq >= MAX_SEQ else seq + 1


# ------------------------------------------------------------------------------------------ errors


class SessionError(Exception):
    """Base of the session layer's errors: each is a misuse by the caller, never the peer's doing."""


class NotStarted(SessionError):
    """``ShoeSession.send`` before ``start``."""

    def __init__(self) -> None:
        super().__init__("the shoe session has not been started")


class NotReliable(SessionError, TypeError):
    """Only reliable events (HELLO, CARD, UNREADABLE, CUT_CARD, BUTTON, STATUS; the reader's HELLO, SPOT,
    SNAPSHOT_BEGIN, SNAPSHOT_END, STATUS) are sent with ``send``."""

    def __init__(self, message: object, dialect: str = "shoe") -> None:
        super().__init__(f"{message!r} is not a reliable {dialect} event")
        self.message = message


class WindowFull(SessionError):
    """The shoe holds ``limit`` unacknowledged events; real firmware locks its card gate here."""

    def __init__(self, held: int, limit: int) -> None:
        super().__init__(f"{held} events unacknowledged, limit {limit}")
        self.held = held
        self.limit = limit


class AcknowledgeAhead(SessionError, ValueError):
    """``acknowledge(number)`` for an event that was never delivered."""

    def __init__(self, number: int, last_number: int) -> None:
        super().__init__(f"cannot acknowledge event {number}: last delivered is {last_number}")
        self.number = number
        self.last_number = last_number


# ------------------------------------------------------------------------------- shoe-side events


@dataclass(frozen=True, slots=True)
class PromptReceived:
    """The controller says what is due (advisory: the shoe may show it or lock its gate)."""

    due: Due


@dataclass(frozen=True, slots=True)
class ResetRequested:
    """The controller asks for a new session. The caller decides (the simulator reboots)."""


@dataclass(frozen=True, slots=True)
class Acked:
    """An ACK arrived: everything up to ``up_to`` is committed on the controller."""

    up_to: int


@dataclass(frozen=True, slots=True)
class ResendRequested:
    """A RESEND arrived; the held events from ``from_seq`` (0: all) go out on the next ``poll``."""

    from_seq: int


@dataclass(frozen=True, slots=True)
class CommandReceived:
    """Another message of the dialect for the device (the reader's WINDOW); the caller acts on it."""

    message: object  # a message of the dialect to the device


ShoeSideEvent = PromptReceived | ResetRequested | Acked | ResendRequested | CommandReceived | FrameRejected


class ShoeSession:
    """The device firmware's side of the reliability rules (the shoe's, or with ``dialect=READER`` the
    bet-spot reader's). ``hello`` builds the HELLO for a session id (default: the dialect's HELLO class with
    ``firmware_version``, ``serial_number``, the dialect's version and the id)."""

    def __init__(
        self,
        session_id: int,
        *,
        firmware_version: str = "sim-1.0",
        serial_number: str = "SIM-0001",
        resend_after: float = 0.5,
        heartbeat_every: float = 1.0,
        max_unacked: int = 256,
        dialect: Dialect | None = None,
        hello: Callable[[int], object] | None = None,
    ) -> None:
        if not 0 <= session_id <= 0xFFFFFFFF:
            raise ValueError(f"session_id {session_id} outside 32 bits")
        if not 1 <= max_unacked < MAX_SEQ // 2:
            raise ValueError(f"max_unacked {max_unacked} outside 1..{MAX_SEQ // 2 - 1}")
        self.session_id = session_id
        self.firmware_version = firmware_version
        self.serial_number = serial_number
        self.resend_after = resend_after
        self.heartbeat_every = heartbeat_every
        self.max_unacked = max_unacked
        self.dialect = dialect or SHOE
        self._make_hello = hello
        #: Seq of the latest reliable event sent (0 before the first).
        self.last_seq = 0
        self._decoder = FrameDecoder(dialect=self.dialect)
        self._held: deque[tuple[int, bytes]] = deque()  # (seq, frame), oldest first
        self._unsent = 0  # how many of the newest held frames never went on the wire
        self._resend_from: int | None = None  # a RESEND to serve on the next poll
        self._last_send: float | None = None
        self._next_heartbeat: float | None = None
        self._now = 0.0
        self._started = False

    @property
    def unacked(self) -> int:
        """How many reliable events are held, waiting for an ACK."""
        return len(self._held)

    def start(self, now: float) -> None:
        """Begin the session: forget everything held, queue HELLO as seq 1 and a HEARTBEAT right after."""
        self._now = now
        self._decoder = FrameDecoder(dialect=self.dialect)
        self._held.clear()
        self._unsent = 0
        self._resend_from = None
        self._last_send = None
        self.last_seq = 0
        self._started = True
        if self._make_hello is not None:
            hello = self._make_hello(self.session_id)
        else:
            hello = self.dialect.hello(self.firmware_version, self.serial_number, self.dialect.version, self.session_id)
        self.send(hello, now)
        self._next_heartbeat = now  # announce the session at once, before any other event

    def send(self, message: object, now: float) -> int:
        """Queue a reliable event; it goes out on the next ``poll``. Returns its wire seq."""
        if not self._started:
            raise NotStarted()
        if not isinstance(message, self.dialect.reliable):
            raise NotReliable(message, self.dialect.name)
        if len(self._held) >= self.max_unacked:
            raise WindowFull(len(self._held), self.max_unacked)
        self._now = now
        seq = next_seq(self.last_seq)
        self._held.append((seq, encode(seq, message, dialect=self.dialect)))
        self._unsent += 1
        self.last_seq = seq
        return seq

    def receive(self, data: bytes, now: float) -> list[ShoeSideEvent]:
        """Bytes from the controller in; events out. ACKs release held events at once; a RESEND is served
        on the next ``poll``."""
        self._now = now
        events: list[ShoeSideEvent] = []
        for event in self._decoder.feed(data):
            if isinstance(event, FrameRejected):
                events.append(event)
                continue
            message = event.message
            if isinstance(message, Ack):
                self._release(message.up_to)
                events.append(Acked(message.up_to))
            elif isinstance(message, Resend):
                self._resend_from = message.from_seq
                events.append(ResendRequested(message.from_seq))
            elif isinstance(message, Prompt):
                events.append(PromptReceived(message.due))
            elif isinstance(message, Reset):
                events.append(ResetRequested())
            elif isinstance(message, self.dialect.to_device):
                events.append(CommandReceived(message))
            else:
                detail = f"a {self.dialect.name} does not receive {self.dialect.name} messages"
                events.append(_wrong_direction(event, detail, self.dialect))
        return events

    def _release(self, up_to: int) -> None:
        sent = len(self._held) - self._unsent
        for index in range(sent):
            if self._held[index][0] == up_to:
                for _ in range(index + 1):
                    self._held.popleft()
                return
        # an ACK naming nothing we hold (already acknowledged, or stale): nothing to release

    def poll(self, now: float) -> bytes:
        """Every byte due now: new events, resends (asked for or timed out), the heartbeat."""
        self._now = now
        if not self._started:
            return b""
        frames: list[bytes] = []
        if self._resend_from is not None:
            start = 0
            for index, (seq, _) in enumerate(self._held):
                if seq == self._resend_from:
                    start = index
                    break
            frames = [frame for _, frame in list(self._held)[start:]]
            self._resend_from = None
        elif self._unsent:
            frames = [frame for _, frame in list(self._held)[-self._unsent :]]
        elif self._held and self._last_send is not None and now - self._last_send >= self.resend_after:
            frames = [frame for _, frame in self._held]
        if frames:
            self._unsent = 0
            self._last_send = now
        if self._next_heartbeat is not None and now >= self._next_heartbeat:
            frames.append(encode(self.last_seq, self.dialect.heartbeat(self.session_id), dialect=self.dialect))
            self._next_heartbeat += self.heartbeat_every
            if self._next_heartbeat <= now:  # a long pause between polls: no burst of stale heartbeats
                self._next_heartbeat = now + self.heartbeat_every
        return b"".join(frames)

    def next_deadline(self) -> float | None:
        """When ``poll`` next has something to send (a time already past means: now)."""
        if not self._started:
            return None
        if self._unsent or (self._resend_from is not None and self._held):
            return self._now
        deadlines = [] if self._next_heartbeat is None else [self._next_heartbeat]
        if self._held and self._last_send is not None:
            deadlines.append(self._last_send + self.resend_after)
        return min(deadlines) if deadlines else None


# -------------------------------------------------------------------------- controller-side events


@dataclass(frozen=True, slots=True)
class ShoeEvent:
    """A reliable shoe event, delivered in order and exactly once per (session_id, number). ``seq`` is the
    16-bit wire seq; ``number`` the per-session count (1, 2, ...) that survives the 0xFFFF wrap."""

    session_id: int
    seq: int
    number: int
    message: object  # a device event of the dialect (the port narrows it to its union)
    epoch: int = 0  # > 0 when the shoe started this session id again (a repeated id)

    @property
    def key(self) -> int:
        """The journal's key for the session (:func:`session_key`)."""
        return session_key(self.session_id, self.epoch)


@dataclass(frozen=True, slots=True)
class DuplicateDropped:
    """An event already delivered came again (a resend); dropped, and re-ACKed if committed."""

    session_id: int
    seq: int
    number: int
    epoch: int = 0


@dataclass(frozen=True, slots=True)
class GapDetected:
    """An event (or a heartbeat) named a seq beyond the one expected: RESEND from ``expected_seq`` sent;
    later events are dropped until the gap fills."""

    expected_seq: int
    got_seq: int


@dataclass(frozen=True, slots=True)
class ShoeRebooted:
    """A HELLO with a new session id: the shoe rebooted (or obeyed RESET). Events of the old session
    that were not yet acknowledged are lost."""

    old_session: int | None
    new_session: int
    hello: Any  # the dialect's HELLO (its ``hello`` class)
    epoch: int = 0  # of the new session: > 0 when the shoe repeated the old session's id


@dataclass(frozen=True, slots=True)
class SessionJoined:
    """The controller joined session ``session_id`` mid-way, without its HELLO (no journal state for it):
    delivery starts at ``first_number``; earlier events were never seen by this controller."""

    session_id: int
    first_number: int


@dataclass(frozen=True, slots=True)
class LinkUp:
    """A valid frame arrived from a known session while the link was down (or at first contact)."""

    session_id: int


@dataclass(frozen=True, slots=True)
class LinkDown:
    """No valid frame for ``silent_for`` seconds (at least the link timeout)."""

    silent_for: float


@dataclass(frozen=True, slots=True)
class HeartbeatSeen:
    """A heartbeat: the shoe's session and the seq of the latest event it has sent."""

    session_id: int
    latest_seq: int


LinkEvent = (
    ShoeEvent
    | DuplicateDropped
    | GapDetected
    | ShoeRebooted
    | SessionJoined
    | LinkUp
    | LinkDown
    | FrameRejected
    | HeartbeatSeen
)


def _wrong_direction(event: FrameReceived, detail: str, dialect: Dialect) -> FrameRejected:
    return FrameRejected(
        RejectReason.WRONG_DIRECTION,
        event.raw,
        detail,
        seq=event.seq,
        message_type=message_type(event.message, dialect),
    )


class ControllerSession:
    """The controller's receiving side of the reliability rules; time is injected, never read. ``dialect``
    is the device's (the shoe's by default; :data:`firmware_protocol.spots.READER` for a bet-spot reader)."""

    def __init__(
        self,
        *,
        known_session: int | None = None,
        last_number: int = 0,
        link_timeout: float = 3.0,
        resend_every: float = 0.5,
        dialect: Dialect | None = None,
    ) -> None:
        if last_number < 0:
            raise ValueError(f"last_number {last_number} is negative")
        #: The session whose numbering is tracked (from the journal until the shoe names one). ``known_session``
        #: is the journal's key (:func:`session_key`): the session id, and the epoch of a repeated id.
        self.session_id = None if known_session is None else split_key(known_session)[0]
        self.epoch = 0 if known_session is None else split_key(known_session)[1]
        #: Highest event number committed by the caller (ACKed, or to be ACKed).
        self.committed = last_number if known_session is not None else 0
        self.link_up = False
        self.link_timeout = link_timeout
        self.resend_every = resend_every
        self.dialect = dialect or SHOE
        self._expected = self.committed + 1
        self._confirmed = False  # has the shoe named session_id on the wire since we started?
        self._joining: int | None = None  # a session learned from a heartbeat, awaiting its first event
        self._join_resend_at: float | None = None
        self._gap_at: int | None = None  # the number missing when the current gap was detected
        self._gap_resend_at: float | None = None
        self._consumed: set[int] = set()  # numbers taken by frames we could not deliver (auto-ACKed)
        self._frames: dict[int, bytes] = {}  # raw frames of this session's first events, by number
        self._suspect: tuple[int, Any, bytes] | None = None  # a HELLO naming the current session again
        self._suspect_next = 2  # the next number a resend behind that HELLO would carry
        self._ack_owed = False
        self._out: list[bytes] = []
        self._last_valid: float | None = None
        self._tx_seq = 0
        self._now = 0.0
        self._decoder = FrameDecoder(dialect=self.dialect)

    @property
    def session_key(self) -> int | None:
        """The journal's key for the current session, or None before one is known."""
        return None if self.session_id is None else session_key(self.session_id, self.epoch)

    @property
    def last_number(self) -> int:
        """Highest event number delivered in order (committed or not)."""
        return self._expected - 1

    # ---------------------------------------------------------------------------- outgoing frames

    def _frame(self, message: object) -> bytes:
        frame = encode(self._tx_seq, message, dialect=self.dialect)
        self._tx_seq = (self._tx_seq + 1) & MAX_SEQ
        return frame

    def acknowledge(self, number: int, key: int | None = None) -> bytes:
        """Call AFTER committing event ``number`` (write-ahead); returns the ACK frame to send.

        ``key`` is the session (:attr:`ShoeEvent.key`) the event came from. If the shoe has started another
        session since (a HELLO right behind a card not yet committed), the old session's events are in the
        journal but the shoe no longer holds them: nothing is acknowledged and ``b""`` is returned."""
        if number < 1:
            raise ValueError(f"event numbers start at 1, got {number}")
        if key is not None and key != self.session_key:
            return b""
        if number > self.last_number:
            raise AcknowledgeAhead(number, self.last_number)
        if number > self.committed:
            self.committed = number
            self._advance_committed()
        self._ack_owed = False
        return self._frame(Ack(seq_of(self.committed)))

    def prompt(self, due: Due) -> bytes:
        """A PROMPT frame telling the shoe what is due."""
        return self._frame(Prompt(due))

    def reset(self) -> bytes:
        """A RESET frame: the shoe starts a new session (a HELLO with a new id follows)."""
        return self._frame(Reset())

    def command(self, message: object) -> bytes:
        """A frame for another message of the dialect to the device (the reader's WINDOW). ACK and RESEND
        are the session's own: they go out through :meth:`acknowledge` and :meth:`poll`."""
        if isinstance(message, Ack | Resend) or not isinstance(message, self.dialect.to_device):
            raise ValueError(f"{message!r} is not a {self.dialect.name} command")
        return self._frame(message)

    def _advance_committed(self) -> None:
        while self.committed + 1 in self._consumed:
            self._consumed.discard(self.committed + 1)
            self.committed += 1
            self._ack_owed = True

    # ----------------------------------------------------------------------------- incoming bytes

    def receive(self, data: bytes, now: float) -> list[LinkEvent]:
        """Bytes from the shoe in; link events out (replies, if any, come from the next ``poll``)."""
        self._now = now
        events: list[LinkEvent] = []
        for frame in self._decoder.feed(data):
            was_up = self.link_up
            mark = len(events)
            if isinstance(frame, FrameRejected):
                events.append(frame)
                if (
                    frame.reason in (RejectReason.UNKNOWN_TYPE, RejectReason.BAD_PAYLOAD)
                    and frame.seq is not None
                    and frame.message_type is not None
                    and frame.message_type in self.dialect.device_codes
                    and frame.message_type != self.dialect.heartbeat_code
                ):
                    # intact (CRC good) but undeliverable: it takes its number and is ACKed in turn
                    self._valid(now)
                    self._sequenced(frame.seq, None, frame.raw, events)
                else:
                    continue
            else:
                message = frame.message
                if isinstance(message, self.dialect.to_device):
                    detail = "a controller does not receive controller messages"
                    events.append(_wrong_direction(frame, detail, self.dialect))
                    continue
                self._valid(now)
                if isinstance(message, self.dialect.heartbeat):
                    self._heartbeat(frame.seq, message.session_id, events)
                elif isinstance(message, self.dialect.hello):
                    self._hello(frame.seq, message, frame.raw, events)
                else:  # the dialect's decoder gave it and it is not for the device: the device's event
                    self._sequenced(frame.seq, message, frame.raw, events)
            if not was_up and self._confirmed and self.session_id is not None:
                self.link_up = True
                events.insert(mark, LinkUp(self.session_id))
        return events

    def _valid(self, now: float) -> None:
        self._last_valid = now

    def _number(self, seq: int) -> int:
        """The event number nearest to the expected one whose wire seq is ``seq``."""
        delta = (seq - seq_of(self._expected)) % MAX_SEQ
        if delta >= MAX_SEQ // 2:
            delta -= MAX_SEQ
        return self._expected + delta

    def _heartbeat(self, seq: int, session_id: int, events: list[LinkEvent]) -> None:
        events.append(HeartbeatSeen(session_id, seq))
        if session_id == self.session_id and self._joining is None:
            self._confirmed = True
            if self._suspect is not None:
                if seq != 0 and seq >= self.last_number:
                    return  # as far as the shoe has sent: consistent with a resend, the frames decide
                # A heartbeat names the latest event its boot has sent: below what this session delivered,
                # it cannot come from the boot that sent those events. The shoe rebooted with the same id.
                self._rebooted_with_same_id(events)
            if seq != 0 and self._number(seq) >= self._expected:
                self._open_gap(seq, events)
            return
        if self._joining != session_id:
            # a session we have no state for: the shoe rebooted unseen, or we have no journal for it
            self._joining = session_id
            self._confirmed = False
            self._suspect = None
            self._gap_at = None
            self._out.append(self._frame(Resend(RESEND_ALL)))
            self._join_resend_at = self._now + self.resend_every

    def _hello(self, seq: int, hello: Any, raw: bytes, events: list[LinkEvent]) -> None:
        if hello.session_id == self.session_id and self._joining is None:
            self._confirmed = True
            if self.last_number < 2:
                # Nothing but the HELLO itself was delivered: a resend and a reboot with the same id mean the
                # same thing (the next event is number 2); take it as the duplicate.
                self._sequenced(seq, hello, raw, events)
                return
            # The same id again after later events: either the shoe resends a HELLO it still holds (its ACKs
            # were lost, or this controller restarted) or it rebooted and repeated its id. Hold everything,
            # ACK nothing, until the evidence decides (_suspected).
            self._suspect = (seq, hello, raw)
            self._suspect_next = 2
            self._gap_at = None
            self._gap_resend_at = None
            events.append(DuplicateDropped(hello.session_id, seq, 1, self.epoch))
            return
        self._start_session(seq, hello, raw, events, epoch=0)

    def _start_session(self, seq: int, hello: Any, raw: bytes, events: list[LinkEvent], *, epoch: int) -> None:
        old = self.session_id
        self.epoch = epoch
        self._suspect = None
        self._frames.clear()
        self.session_id = hello.session_id
        self._confirmed = True
        self._joining = None
        self._join_resend_at = None
        self._gap_at = None
        self._gap_resend_at = None
        self._consumed.clear()
        self._ack_owed = False
        start = seq if seq != 0 else 1  # HELLO is seq 1; a firmware that numbers it otherwise starts there
        self._expected = start
        self.committed = start - 1
        events.append(ShoeRebooted(old, hello.session_id, hello, epoch))
        self._sequenced(seq, hello, raw, events)

    def _rebooted_with_same_id(self, events: list[LinkEvent]) -> None:
        """The evidence says the suspected HELLO was a new boot: start the session again, one epoch on."""
        assert self._suspect is not None
        seq, hello, raw = self._suspect
        self._start_session(seq, hello, raw, events, epoch=self.epoch + 1)

    def _suspected(self, seq: int, message: object | None, raw: bytes, events: list[LinkEvent]) -> bool:
        """A sequenced event while a HELLO naming the current session is unexplained. A resend of that HELLO
        brings the frames delivered before, byte for byte, in order; a shoe that rebooted with the same id
        sends other events. Returns True when the event was dealt with here."""
        assert self.session_id is not None
        number = seq  # behind a HELLO, numbering restarts at 1
        if number != self._suspect_next:
            return True  # out of order: dropped; the shoe resends everything from the HELLO on its timer
        known = self._frames.get(number)
        if known is not None and known != raw:
            self._rebooted_with_same_id(events)  # a different event: a new boot
            self._sequenced(seq, message, raw, events)
            return True
        events.append(DuplicateDropped(self.session_id, seq, number, self.epoch))
        self._suspect_next += 1
        if number >= self.last_number:
            self._suspect = None  # every delivered event came again: it was a resend; ACK it all again
            self._ack_owed = self.committed >= 1
        return True

    def _sequenced(self, seq: int, message: object | None, raw: bytes, events: list[LinkEvent]) -> None:
        if seq == 0:
            events.append(FrameRejected(RejectReason.BAD_SEQ, raw, "a sequenced event with seq 0", seq=0))
            return
        if not self._confirmed:
            if self._joining is None:
                return  # session unknown: hold nothing, accept nothing (the shoe resends)
            self.session_id = self._joining
            self._joining = None
            self._join_resend_at = None
            self._confirmed = True
            self._consumed.clear()
            self._frames.clear()
            self.epoch = 0
            self._expected = seq
            self.committed = seq - 1
            events.append(SessionJoined(self.session_id, seq))
        assert self.session_id is not None
        if self._suspect is not None and self._suspected(seq, message, raw, events):
            return
        number = self._number(seq)
        if number < self._expected:
            events.append(DuplicateDropped(self.session_id, seq, number, self.epoch))
            if number <= self.committed:
                self._ack_owed = True
            return
        if number > self._expected:
            self._open_gap(seq, events)
            return
        self._expected += 1
        self._gap_at = None
        self._gap_resend_at = None
        if number <= KEEP_FRAMES:
            self._frames[number] = raw
        if message is None:
            self._consumed.add(number)
            self._advance_committed()
        else:
            events.append(ShoeEvent(self.session_id, seq, number, message, self.epoch))

    def _open_gap(self, got_seq: int, events: list[LinkEvent]) -> None:
        if self._gap_at == self._expected:
            return  # this gap is reported and its RESEND is out; poll repeats it while it persists
        self._gap_at = self._expected
        expected_seq = seq_of(self._expected)
        events.append(GapDetected(expected_seq, got_seq))
        self._out.append(self._frame(Resend(expected_seq)))
        self._gap_resend_at = self._now + self.resend_every

    # ------------------------------------------------------------------------------------ timers

    def poll(self, now: float) -> tuple[list[LinkEvent], bytes]:
        """Timers: link down after ``link_timeout`` without a valid frame; RESEND repeated while a gap (or
        a join) persists; ACKs owed for duplicates. Returns the events and the bytes to send now."""
        self._now = now
        events: list[LinkEvent] = []
        out, self._out = self._out, []
        if self.link_up and self._last_valid is not None and now - self._last_valid >= self.link_timeout:
            self.link_up = False
            events.append(LinkDown(now - self._last_valid))
        if self._gap_at is not None and self._gap_resend_at is not None and now >= self._gap_resend_at:
            out.append(self._frame(Resend(seq_of(self._expected))))
            self._gap_resend_at = now + self.resend_every
        if self._joining is not None and self._join_resend_at is not None and now >= self._join_resend_at:
            out.append(self._frame(Resend(RESEND_ALL)))
            self._join_resend_at = now + self.resend_every
        if self._ack_owed and self.committed >= 1:
            out.append(self._frame(Ack(seq_of(self.committed))))
        self._ack_owed = False
        return events, b"".join(out)

    def next_deadline(self) -> float | None:
        """When ``poll`` next has something to do (a time already past means: now)."""
        if self._out or (self._ack_owed and self.committed >= 1):
            return self._now
        deadlines = [t for t in (self._gap_resend_at, self._join_resend_at) if t is not None]
        if self.link_up and self._last_valid is not None:
            deadlines.append(self._last_valid + self.link_timeout)
        return min(deadlines) if deadlines else None
