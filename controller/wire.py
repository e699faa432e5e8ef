"""The shoe's two dialects behind one face, for the table loop: bytes in, shoe events out.

:class:`BinaryWire` wraps the sans-I/O :class:`~firmware_protocol.session.ControllerSession` (dedup by
session and event number, ACK, RESEND, heartbeats, reboot detection); :class:`AsciiWire` wraps the ASCII
line decoder (no sequence numbers, no acknowledgements, no heartbeat). Both turn what arrives into
:class:`WireInput` (an event to journal, apply and acknowledge), :class:`WireLink` (the link came up or
went down), :class:`WireReboot`, :class:`WireDuplicate` and :class:`WireNoise` (a rejected frame or line,
typed, never silence).

No I/O here: the link thread hands bytes to the table loop, which calls these and writes what they return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from controller.game.cards import Card
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
from firmware_protocol.ascii import AsciiCard, AsciiDecoder, LineRejected
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


WireEvent = WireInput | WireLink | WireReboot | WireDuplicate | WireNoise

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


def shoe_message_input(message: m.ShoeMessage) -> tuple[dict[str, Any], TableInput | None]:
    """The journal body and the table input for one message from the shoe."""
    if isinstance(message, m.CardRead):
        card = Card.parse(message.token)
        return {"kind": "card", "card": card.token}, CardDrawn(card)
    if isinstance(message, m.Unreadable):
        return {"kind": "unreadable"}, UnreadableCard()
    if isinstance(message, m.CutCard):
        return {"kind": "cut_card"}, CutCardOut()
    if isinstance(message, m.ButtonPressed):
        cls = _BUTTON_INPUT[message.button]
        table_input = cls()
        return {"kind": _BUTTON_KIND[cls], "source": "shoe"}, table_input
    if isinstance(message, m.Status):
        flags = [f.name.lower() for f in m.StatusFlags if f and f in message.flags and f.name]
        return {"kind": "status", "flags": flags}, None
    if isinstance(message, m.Hello):
        return {
            "kind": "hello",
            "firmware_version": message.firmware_version,
            "serial_number": message.serial_number,
            "protocol_version": message.protocol_version,
            "session_id": message.session_id,
        }, None
    return {"kind": type(message).__name__.lower()}, None


_BUTTON_KIND: dict[type, str] = {DeclarePressed: "declare", NewShoePressed: "new_shoe", VoidPressed: "void"}


class Wire(Protocol):
    """What the table loop needs from a dialect."""

    dialect: str

    def receive(self, data: bytes, now: float) -> list[WireEvent]: ...

    def acknowledge(self, number: int, session: int | None = None) -> bytes: ...

    def prompt(self, due: Due) -> bytes: ...

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]: ...


class BinaryWire:
    """The binary dialect: a :class:`ControllerSession` with its events translated for the table."""

    dialect = "binary"

    def __init__(self, session: ControllerSession) -> None:
        self.session = session
        self.foreign_version: int | None = None  # the version of the shoe's frames while it is not ours

    def _translate(self, events: list[Any]) -> list[WireEvent]:
        out: list[WireEvent] = []
        for ev in events:
            if self.foreign_version is not None and isinstance(ev, ShoeEvent | HeartbeatSeen):
                # a valid version-1 frame again: the alarm clears
                self.foreign_version = None
                out.append(WireInput({"kind": "shoe_protocol", "version": 1}, ShoeProtocol(1)))
            if isinstance(ev, ShoeEvent):
                body, table_input = shoe_message_input(ev.message)
                body["seq"] = ev.seq
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
                out.append(WireNoise(ev.reason.value, ev.raw, ev.detail))
                if ev.reason is RejectReason.UNSUPPORTED_VERSION and ev.version != self.foreign_version:
                    # §2.5: not acknowledged, not guessed at, but the dealer is told (once per version)
                    self.foreign_version = ev.version
                    version = ev.version if ev.version is not None else 0
                    body = {"kind": "shoe_protocol", "version": version, "raw": ev.raw.hex()}
                    out.append(WireInput(body, ShoeProtocol(version)))
                if ev.reason is RejectReason.BAD_PAYLOAD and ev.message_type == m.MessageType.CARD:
                    # A sequenced CARD frame with a good CRC whose payload we cannot read: a card left the
                    # shoe and we do not know which. The session acknowledges it in turn; the table halts.
                    body = {"kind": "unreadable", "reason": "bad_payload", "seq": ev.seq, "raw": ev.raw.hex()}
                    out.append(WireInput(body, UnreadableCard()))
            elif isinstance(ev, SessionJoined):
                detail = f"joined shoe session {ev.session_id} at event {ev.first_number}; earlier events unseen"
                out.append(WireNoise("session_joined", b"", detail))
            elif isinstance(ev, GapDetected):
                out.append(WireNoise("gap", b"", f"expected seq {ev.expected_seq}, got {ev.got_seq}"))
        return out

    def receive(self, data: bytes, now: float) -> list[WireEvent]:
        return self._translate(list(self.session.receive(data, now)))

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        """The ACK for event ``number`` of ``session`` (a journal key); empty if the shoe has moved on to
        another session since (its old events are journaled; the shoe no longer holds them)."""
        return self.session.acknowledge(number, session)

    def prompt(self, due: Due) -> bytes:
        return self.session.prompt(PROMPT_FOR_DUE[due])

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]:
        events, data = self.session.poll(now)
        return self._translate(list(events)), data


class AsciiWire:
    """The ASCII dialect: one card per line, no sequence numbers, nothing sent back.

    A damaged line is reported as noise AND applied as an unreadable card: a card very likely passed the
    reader, and a halted coup is safer than a coup missing a card.
    """

    dialect = "ascii"

    def __init__(self, decoder: AsciiDecoder | None = None) -> None:
        self.decoder = decoder or AsciiDecoder()

    def receive(self, data: bytes, now: float) -> list[WireEvent]:
        out: list[WireEvent] = []
        for ev in self.decoder.feed(data):
            if isinstance(ev, AsciiCard):
                card = Card.parse(ev.card.token)
                out.append(WireInput({"kind": "card", "card": card.token}, CardDrawn(card)))
            elif isinstance(ev, LineRejected):
                out.append(WireNoise(ev.reason.value, ev.raw, ev.detail))
                body = {"kind": "unreadable", "raw": ev.raw.hex(), "reason": ev.reason.value}
                out.append(WireInput(body, UnreadableCard()))
        return out

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        return b""

    def prompt(self, due: Due) -> bytes:
        return b""

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]:
        return [], b""
