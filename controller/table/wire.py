"""The shoe's two dialects behind one face, for the table loop: bytes in, shoe events out.

:class:`BinaryWire` wraps the sans-I/O :class:`~firmware_protocol.session.ControllerSession` (dedup by
session and event number, ACK, RESEND, heartbeats, reboot detection); :class:`AsciiWire` wraps the ASCII
line decoder (no sequence numbers, no acknowledgements, no heartbeat). Both turn what arrives into
:class:`WireInput` (an event to journal, apply and acknowledge), :class:`WireLink` (the link came up or
went down), :class:`WireReboot`, :class:`WireDuplicate` and :class:`WireNoise` (a rejected frame or line,
typed, never silence).

Noise has a budget (:class:`NoiseGate`): past ``budget`` rejections within ``window`` seconds the line is
*noisy*: :class:`WireNoisy` raises the NOISY LINE alarm, further rejections are only counted (an ASCII line
no longer becomes an unreadable card, so a flood cannot halt coup after coup), one :class:`WireNoiseSummary`
per ``summary_every`` seconds carries the counts to the journal, and after ``quiet`` seconds without a
rejection a last summary and :class:`WireNoisy` (quiet) clear the alarm.

No I/O here: the link thread hands bytes to the table loop, which calls these and writes what they return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from controller.game.cards import Card
from controller.game.records import InputKind, Source, input_body, record_body
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    NewShoePressed,
    ShoeProtocol,
    TableInput,
    UnreadableCard,
    VoidPressed,
)
from firmware_protocol import messages as m
from firmware_protocol.ascii import AsciiCard, AsciiDecoder, LineRejected, LineRejectReason
from firmware_protocol.binary import FrameRejected, RejectReason
from firmware_protocol.session import (
    ControllerSession,
    DuplicateDropped,
    GapDetected,
    HeartbeatSeen,
    LinkDown,
    LinkUp,
    SessionJoined,
    ShoeEvent,
    session_key,
)
from firmware_protocol.session import ShoeRebooted as SessionRebooted


@dataclass(frozen=True)
class WireInput:
    """One event from the shoe: journal ``body`` under (session, number), apply ``table_input`` if any,
    then acknowledge ``number``."""

    body: dict[str, Any]
    table_input: TableInput | None
    session: int | None = None
    number: int | None = None

    @classmethod
    def of(cls, table_input: TableInput, **facts: Any) -> WireInput:
        """A table input with its journal body (the record vocabulary's), not sequenced by the shoe."""
        return cls(input_body(table_input, **facts), table_input)


@dataclass(frozen=True)
class WireLink:
    up: bool
    detail: str


@dataclass(frozen=True)
class WireReboot:
    old_session: int | None
    new_session: int
    detail: str


@dataclass(frozen=True)
class WireDuplicate:
    session: int
    number: int


@dataclass(frozen=True)
class WireNoise:
    """A frame or line the decoder rejected: typed, with the reason and the raw bytes."""

    reason: str
    raw: bytes
    detail: str
    message_type: int | None = None  # the frame's type, when its CRC was good (a refused HELLO: 0x01)


@dataclass(frozen=True)
class WireNoisy:
    """The line turned noisy (rejections beyond the budget) or quiet again."""

    noisy: bool
    detail: str


@dataclass(frozen=True)
class WireNoiseSummary:
    """What was rejected on a noisy line since the last summary: one journal record, not one per line."""

    rejected: int  # frames or lines rejected
    discarded: int  # bytes they held
    reasons: dict[str, int]
    seconds: float


WireEvent = WireInput | WireLink | WireReboot | WireDuplicate | WireNoise | WireNoisy | WireNoiseSummary


#: Rejections that are the rest of one already reported (an over-long line or frame): bytes, not events.
_TAILS = frozenset({"too_long_tail", "oversize_tail"})


class NoiseGate:
    """The noise budget of one line; time is passed in. See the module's docstring."""

    def __init__(
        self, *, budget: int = 10, window: float = 1.0, quiet: float = 5.0, summary_every: float = 10.0
    ) -> None:
        self.budget = budget
        self.window = window
        self.quiet = quiet
        self.summary_every = summary_every
        self.noisy = False
        self.rejected_total = 0
        self._window_start = float("-inf")
        self._window_count = 0
        self._last = 0.0
        self._since = 0.0  # start of the counts below
        self._summary_at = 0.0
        self._rejected = 0
        self._discarded = 0
        self._reasons: dict[str, int] = {}

    def assume_noisy(self, now: float) -> None:
        """Start noisy (the alarm stands from before a restart): it clears after ``quiet`` quiet seconds."""
        self.noisy = True
        self._last = self._since = now
        self._summary_at = now + self.summary_every

    def reject(self, reason: str, size: int, now: float) -> tuple[bool, list[WireEvent]]:
        """Count one rejection. Returns whether to act on it on its own (within the budget) and the events
        to pass on (the line turning noisy)."""
        self._discarded += size
        if reason in _TAILS:
            return False, []  # part of a frame or line already counted
        self.rejected_total += 1
        self._rejected += 1
        self._reasons[reason] = self._reasons.get(reason, 0) + 1
        self._last = now
        if now - self._window_start >= self.window:
            self._window_start = now
            self._window_count = 0
        self._window_count += 1
        if self.noisy:
            return False, []
        if self._window_count <= self.budget:
            return True, []
        self.noisy = True
        self._summary_at = now + self.summary_every
        detail = f"more than {self.budget} rejected frames or lines within {self.window:g} s"
        return False, [WireNoisy(True, detail)]

    def poll(self, now: float) -> list[WireEvent]:
        """The periodic summary while noisy, and the all-clear after ``quiet`` seconds without noise."""
        if not self.noisy:
            if now - self._last >= self.window:
                self._clear_counts(now)  # isolated rejections within the budget need no summary
            return []
        if now - self._last >= self.quiet:
            out: list[WireEvent] = []
            if self._rejected:
                out.append(self._summary(now))
            self.noisy = False
            out.append(WireNoisy(False, f"no rejected frame or line for {self.quiet:g} s"))
            return out
        if now >= self._summary_at:
            self._summary_at = now + self.summary_every
            return [self._summary(now)]
        return []

    def _summary(self, now: float) -> WireNoiseSummary:
        summary = WireNoiseSummary(self._rejected, self._discarded, dict(self._reasons), now - self._since)
        self._clear_counts(now)
        return summary

    def _clear_counts(self, now: float) -> None:
        self._since = now
        self._rejected = self._discarded = 0
        self._reasons = {}


#: The table's "what is due" as the shoe's PROMPT code.
PROMPT_FOR_DUE: dict[Due, m.Due] = {
    Due.BURN: m.Due.BURN,
    Due.DEAL: m.Due.DEAL,
    Due.PLAYER_THIRD: m.Due.PLAYER_THIRD,
    Due.BANKER_THIRD: m.Due.BANKER_THIRD,
    Due.DECLARE: m.Due.NOTHING,
    Due.VOID: m.Due.HALTED,
    Due.NEW_SHOE: m.Due.SHOE_CLOSED,
}

_BUTTON_INPUT: dict[m.Button, type[DeclarePressed | NewShoePressed | VoidPressed]] = {
    m.Button.DECLARE: DeclarePressed,
    m.Button.NEW_SHOE: NewShoePressed,
    m.Button.VOID: VoidPressed,
}


def shoe_message_input(message: object, **facts: Any) -> tuple[dict[str, Any], TableInput | None]:
    """The journal body (with ``facts`` such as the shoe's seq) and the table input for one message (any other
    message of the line is journaled by its name)."""
    if isinstance(message, m.CardRead):
        card = Card.parse(message.token)
        return input_body(CardDrawn(card), **facts), CardDrawn(card)
    if isinstance(message, m.Unreadable):
        return input_body(UnreadableCard(), **facts), UnreadableCard()
    if isinstance(message, m.CutCard):
        return input_body(CutCardOut(), **facts), CutCardOut()
    if isinstance(message, m.ButtonPressed):
        table_input = _BUTTON_INPUT[message.button]()
        return input_body(table_input, source=Source.SHOE, **facts), table_input
    if isinstance(message, m.Status):
        flags = [f.name.lower() for f in m.StatusFlags if f and f in message.flags and f.name]
        return record_body(InputKind.STATUS, flags=flags, **facts), None
    if isinstance(message, m.Hello):
        return record_body(
            InputKind.HELLO,
            firmware_version=message.firmware_version,
            serial_number=message.serial_number,
            protocol_version=message.protocol_version,
            session_id=message.session_id,
            **facts,
        ), None
    return record_body(InputKind.MESSAGE, message=type(message).__name__.lower(), **facts), None


#: Bytes of a rejected line kept in its journal record.
_RAW_KEPT = 64


class Wire(Protocol):
    """What the table loop needs from a dialect."""

    #: Whether the wire itself reports the link (:class:`WireLink`, from the shoe's heartbeats and their
    #: silence). Without it the port's state is all the loop knows of the link.
    reports_link: bool
    noise: NoiseGate

    def receive(self, data: bytes, now: float) -> list[WireEvent]: ...

    def acknowledge(self, number: int, session: int | None = None) -> bytes: ...

    def prompt(self, due: Due) -> bytes: ...

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]: ...


class BinaryWire:
    """The binary dialect: a :class:`ControllerSession` with its events translated for the table."""

    reports_link = True  # HELLO and heartbeats bring the link up; their silence takes it down

    def __init__(self, session: ControllerSession, noise: NoiseGate | None = None) -> None:
        self.session = session
        self.foreign_version: int | None = None  # the version of the shoe's frames while it is not ours
        self.noise = noise or NoiseGate()

    def _translate(self, events: list[Any], now: float) -> list[WireEvent]:
        out: list[WireEvent] = []
        for ev in events:
            if self.foreign_version is not None and isinstance(ev, ShoeEvent | HeartbeatSeen):
                # a valid version-1 frame again: the alarm clears
                self.foreign_version = None
                out.append(WireInput.of(ShoeProtocol(1)))
            if isinstance(ev, ShoeEvent):
                body, table_input = shoe_message_input(ev.message, seq=ev.seq)
                out.append(WireInput(body, table_input, ev.key, ev.number))
            elif isinstance(ev, DuplicateDropped):
                out.append(WireDuplicate(session_key(ev.session_id, ev.epoch), ev.number))
            elif isinstance(ev, SessionRebooted) and ev.old_session is not None:
                # (old_session None is first contact with a fresh controller, not a reboot)
                detail = f"shoe session {ev.old_session} replaced by {ev.new_session}"
                out.append(WireReboot(ev.old_session, ev.new_session, detail))
            elif isinstance(ev, LinkUp):
                out.append(WireLink(True, f"shoe session {ev.session_id}"))
            elif isinstance(ev, LinkDown):
                out.append(WireLink(False, f"no frame for {ev.silent_for:.1f} s"))
            elif isinstance(ev, FrameRejected):
                _alone, noisy = self.noise.reject(ev.reason.value, len(ev.raw), now)
                out.append(WireNoise(ev.reason.value, ev.raw, ev.detail, ev.message_type))
                if ev.reason is RejectReason.UNSUPPORTED_VERSION and ev.version != self.foreign_version:
                    # §2.5: not acknowledged, not guessed at, but the dealer is told (once per version)
                    self.foreign_version = ev.version
                    version = ev.version if ev.version is not None else 0
                    out.append(WireInput.of(ShoeProtocol(version), raw=ev.raw.hex()))
                out += noisy
                if ev.reason is RejectReason.BAD_PAYLOAD and ev.message_type == m.MessageType.CARD:
                    # A sequenced CARD frame with a good CRC whose payload we cannot read: a card left the
                    # shoe and we do not know which. The session acknowledges it in turn; the table halts.
                    out.append(WireInput.of(UnreadableCard(), reason="bad_payload", seq=ev.seq, raw=ev.raw.hex()))
            elif isinstance(ev, SessionJoined):
                detail = f"joined shoe session {ev.session_id} at event {ev.first_number}; earlier events unseen"
                out.append(WireNoise("session_joined", b"", detail))
            elif isinstance(ev, GapDetected):
                out.append(WireNoise("gap", b"", f"expected seq {ev.expected_seq}, got {ev.got_seq}"))
        return out

    def receive(self, data: bytes, now: float) -> list[WireEvent]:
        return self._translate(list(self.session.receive(data, now)), now)

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        """The ACK for event ``number`` of ``session`` (a journal key); empty if the shoe has moved on to
        another session since (its old events are journaled; the shoe no longer holds them)."""
        return self.session.acknowledge(number, session)

    def prompt(self, due: Due) -> bytes:
        return self.session.prompt(PROMPT_FOR_DUE[due])

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]:
        events, data = self.session.poll(now)
        return self._translate(list(events), now) + self.noise.poll(now), data


class AsciiWire:
    """The ASCII dialect: one card per line, no sequence numbers, nothing sent back.

    A damaged line is reported as noise AND applied as an unreadable card: a card very likely passed the
    reader, and a halted coup is safer than a coup missing a card. But a flood must not halt the table nor
    slip it phantom cards (random bytes spell a valid card line now and then, and there is no CRC), so a
    read with a rejected line in it, and what follows it, is held for ``hold`` seconds: if the line turns
    noisy meanwhile (past the :class:`NoiseGate`'s budget) what came with garbage is dropped (counted in the
    noise summary) and only clean reads' cards pass; otherwise it is all released in order. While the line
    is noisy a clean read (a real shoe's line after the flood) is dealt at once. The rest of an over-long
    line is part of that line (one line, one unreadable card).
    """

    reports_link = False  # no heartbeat: the loop takes the port's state for the link

    #: An unfinished line older than this is dropped when more bytes come (a shoe sends a line at once:
    #: 5 bytes take 5 ms at 9600 baud): the tail of a flood must not glue itself to the next card's line.
    stale_after = 0.2
    #: How long a read with a rejected line in it waits for the verdict "flood" or "one damaged line".
    hold = 0.25

    def __init__(self, decoder: AsciiDecoder | None = None, noise: NoiseGate | None = None) -> None:
        self.decoder = decoder or AsciiDecoder()
        self.noise = noise or NoiseGate()
        self._last_rx = float("-inf")
        self._held: list[tuple[bool, list[WireEvent]]] = []  # (read had garbage, its inputs), in order
        self._hold_until = 0.0

    def receive(self, data: bytes, now: float) -> list[WireEvent]:
        out: list[WireEvent] = []
        if now - self._last_rx > self.stale_after and self.decoder.mid_line:
            stale = self.decoder.discard()
            _alone, noisy = self.noise.reject("stale_line", len(stale), now)
            out.append(WireNoise("stale_line", stale, f"unfinished line {now - self._last_rx:.1f} s old dropped"))
            out += noisy
        self._last_rx = now
        inputs: list[WireEvent] = []
        dirty = False
        for ev in self.decoder.feed(data):
            if isinstance(ev, AsciiCard):
                card = Card.parse(ev.card.token)
                inputs.append(WireInput.of(CardDrawn(card)))
            elif isinstance(ev, LineRejected):
                dirty = True
                _alone, noisy = self.noise.reject(ev.reason.value, len(ev.raw), now)
                out.append(WireNoise(ev.reason.value, ev.raw, ev.detail))
                out += noisy
                if ev.reason is not LineRejectReason.TOO_LONG_TAIL:
                    raw = ev.raw[:_RAW_KEPT].hex()
                    inputs.append(WireInput.of(UnreadableCard(), raw=raw, reason=ev.reason.value))
        if self.noise.noisy:
            out += self._release(now)
            out += self._trusted(dirty, inputs, now)
        elif dirty or self._held:
            if not self._held:
                self._hold_until = now + self.hold
            self._held.append((dirty, inputs))
            out += self._release(now)
        else:
            out += inputs
        return out

    def _trusted(self, dirty: bool, inputs: list[WireEvent], now: float) -> list[WireEvent]:
        """On a noisy line: a clean read's inputs; nothing that came with garbage (its cards are counted)."""
        if not dirty:
            return inputs
        for ev in inputs:
            if isinstance(ev, WireInput) and isinstance(ev.table_input, CardDrawn):
                self.noise.reject("card_in_noise", 0, now)
        return []

    def _release(self, now: float) -> list[WireEvent]:
        if not self._held or (not self.noise.noisy and now < self._hold_until):
            return []
        held, self._held = self._held, []
        if not self.noise.noisy:
            return [ev for _dirty, inputs in held for ev in inputs]
        return [ev for dirty, inputs in held for ev in self._trusted(dirty, inputs, now)]

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        return b""

    def prompt(self, due: Due) -> bytes:
        return b""

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]:
        return self._release(now) + self.noise.poll(now), b""
