"""The bet-spot reader's wire protocol: its messages, as frozen dataclasses, and its :data:`READER` dialect.

A bet-spot reader is the RFID board under the layout: one antenna per betting spot, reading the tag UIDs of
the chips on it. It speaks the shoe's framing, sequencing and resend rules (:mod:`firmware_protocol.framing`,
:mod:`firmware_protocol.session`, run with ``dialect=READER``) with its own type codes, so that a reader on
the shoe's port, or a shoe on the reader's, is a typed protocol error (UNKNOWN_TYPE), never a working link.

Reader to table, reliable: :class:`ReaderHello`, :class:`SpotReport`, :class:`SnapshotBegin`,
:class:`SnapshotEnd`, :class:`ReaderStatus`, and the card readers' :class:`CardIn` and :class:`CardOut` (a
player's card at a seat's reader, a badge at the dealer's position); not reliable: :class:`ReaderHeartbeat`.
Table to reader: the shoe's :class:`~firmware_protocol.messages.Ack`, :class:`~firmware_protocol.messages.Resend`
and :class:`~firmware_protocol.messages.Reset` (with the reader's codes), and :class:`Window`.

Byte layouts and the rules for when to report are in ``docs/spots.md``; the test vectors in
:mod:`firmware_protocol.spot_vectors`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any

from .framing import CRC_SIZE, HEADER_SIZE, BadPayload, Dialect, need, read_seq, read_text
from .messages import Ack, Resend, Reset

#: The version of the reader's protocol (the frame's version byte).
READER_PROTOCOL_VERSION = 1
#: Seats a reader may serve (big-table baccarat has 14).
MAX_SEAT = 14
#: Most chips one SpotReport may carry: a 35-chip stack fits with room for a neighbour's ghosts.
MAX_CHIPS = 48
#: Bytes of one tag UID on the wire.
UID_SIZE = 8
_MAX_UID = (1 << 64) - 1


class ReaderType(IntEnum):
    """Wire code of each reader message. Reader to table 0x11-0x1F; table to reader 0x91-0x9F."""

    HELLO = 0x11
    SPOT = 0x12
    SNAPSHOT_BEGIN = 0x13
    SNAPSHOT_END = 0x14
    STATUS = 0x16
    HEARTBEAT = 0x17
    CARD_IN = 0x19
    CARD_OUT = 0x1A
    ACK = 0x91
    RESEND = 0x92
    WINDOW = 0x93
    RESET = 0x94


class SpotCode(IntEnum):
    """A betting spot of one seat, as a byte. Same names as ``controller.game.wagers.Spot`` (a test checks)."""

    BANKER = 1
    PLAYER = 2
    TIE = 3
    PLAYER_PAIR = 4
    BANKER_PAIR = 5
    DRAGON_BONUS_PLAYER = 6
    DRAGON_BONUS_BANKER = 7
    DRAGON_7 = 8
    PANDA_8 = 9
    COMMISSION = 10  # the seat's commission box: the chips that pay the seat's commission when asked


class ReaderFlags(IntFlag):
    """Reader condition flags carried by STATUS."""

    NONE = 0
    ANTENNA_FAULT = 0x01  # an antenna does not answer: its spot reads empty whatever lies on it
    TAMPER = 0x02  # the enclosure was opened or the layout lifted
    READ_ERRORS = 0x04  # many failed tag reads (collisions, interference): reports may miss chips
    OVERHEAT = 0x08
    LOW_POWER = 0x10


class WindowState(IntEnum):
    """The betting window, as the table sees it (WINDOW). The reader may light "no more bets"."""

    OPEN = 0  # bets may be placed
    LOCKED = 1  # the coup's first card is out: no more bets
    PAYOUT = 2  # the coup is declared: the dealer pays and takes


#: The card position of the dealer (a position byte: 0 the dealer, 1-14 a seat's player-card reader).
DEALER_POSITION = 0


def _check_session(session_id: int) -> None:
    if not 0 <= session_id <= 0xFFFFFFFF:
        raise ValueError(f"session_id {session_id} outside 32 bits")


def _check_u16(value: int, name: str) -> None:
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"{name} {value} outside 16 bits")


def _check_seat(seat: int) -> None:
    if not 1 <= seat <= MAX_SEAT:
        raise ValueError(f"seat {seat} outside 1-{MAX_SEAT}")


ALL_SEATS = tuple(range(1, MAX_SEAT + 1))
ALL_SPOTS = tuple(SpotCode)


@dataclass(frozen=True, slots=True)
class ReaderHello:
    """Sent by the reader after boot and after RESET: who it is, which boot session, and what it reads:
    the ``seats`` (1-14) and the ``spots`` each of them has, both ascending."""

    firmware_version: str
    serial_number: str
    protocol_version: int
    session_id: int
    seats: tuple[int, ...] = ALL_SEATS
    spots: tuple[SpotCode, ...] = ALL_SPOTS

    def __post_init__(self) -> None:
        _check_session(self.session_id)
        if not 0 <= self.protocol_version <= 0xFF:
            raise ValueError(f"protocol_version {self.protocol_version} outside a byte")
        for name in ("firmware_version", "serial_number"):
            if len(getattr(self, name).encode()) > 32:
                raise ValueError(f"{name} longer than 32 bytes")
        for seat in self.seats:
            _check_seat(seat)
        if list(self.seats) != sorted(set(self.seats)):
            raise ValueError("seats must be ascending, each once")
        codes = [SpotCode(s) for s in self.spots]
        if codes != sorted(set(codes)):
            raise ValueError("spots must be ascending, each once")


@dataclass(frozen=True, slots=True)
class SpotReport:
    """What one spot holds now: the set of tag UIDs (8-byte integers) the reader sees on it, in any order,
    each once. An empty tuple is an empty spot."""

    seat: int
    spot: SpotCode
    uids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_seat(self.seat)
        SpotCode(self.spot)
        if len(self.uids) > MAX_CHIPS:
            raise ValueError(f"{len(self.uids)} chips on one spot, at most {MAX_CHIPS}")
        for uid in self.uids:
            _check_uid(uid)
        if len(set(self.uids)) != len(self.uids):
            raise ValueError("a UID reported twice on one spot")


def _check_uid(uid: int) -> None:
    if not 0 <= uid <= _MAX_UID:
        raise ValueError(f"UID {uid:#x} outside 8 bytes")


@dataclass(frozen=True, slots=True)
class _CardAt:
    position: int
    uid: int

    def __post_init__(self) -> None:
        if self.position != DEALER_POSITION:
            _check_seat(self.position)
        _check_uid(self.uid)


@dataclass(frozen=True, slots=True)
class CardIn(_CardAt):
    """A card arrived at a card position: ``position`` 1-14 is a seat's player-card reader (a player's card),
    :data:`DEALER_POSITION` (0) the dealer's (a badge); ``uid`` is the card's UID (8 bytes, as a chip's)."""


@dataclass(frozen=True, slots=True)
class CardOut(_CardAt):
    """The card ``uid`` left the card position ``position`` (taken out of the reader)."""


@dataclass(frozen=True, slots=True)
class SnapshotBegin:
    """A full snapshot starts: the SpotReports up to the matching :class:`SnapshotEnd` are every occupied
    spot; a spot not reported in it is empty."""

    snapshot: int

    def __post_init__(self) -> None:
        _check_u16(self.snapshot, "snapshot")


@dataclass(frozen=True, slots=True)
class SnapshotEnd:
    """The snapshot ``snapshot`` is complete: ``spots`` SpotReports were sent since its SnapshotBegin."""

    snapshot: int
    spots: int

    def __post_init__(self) -> None:
        _check_u16(self.snapshot, "snapshot")
        _check_u16(self.spots, "spots")


@dataclass(frozen=True, slots=True)
class ReaderStatus:
    """The reader's condition changed (or is being repeated)."""

    flags: ReaderFlags


@dataclass(frozen=True, slots=True)
class ReaderHeartbeat:
    """Sent every second; the frame's seq field carries the latest event sent (as the shoe's HEARTBEAT)."""

    session_id: int

    def __post_init__(self) -> None:
        _check_session(self.session_id)


@dataclass(frozen=True, slots=True)
class Window:
    """Table to reader: the betting window's state now."""

    state: WindowState


ReaderMessage = (
    ReaderHello | SpotReport | SnapshotBegin | SnapshotEnd | ReaderStatus | ReaderHeartbeat | CardIn | CardOut
)
ReaderCommand = Ack | Resend | Window | Reset
SpotsMessage = ReaderMessage | ReaderCommand

#: Reader events that are sequenced, kept until acknowledged and resent (HEARTBEAT is not).
READER_RELIABLE: tuple[type, ...] = (
    ReaderHello,
    SpotReport,
    SnapshotBegin,
    SnapshotEnd,
    ReaderStatus,
    CardIn,
    CardOut,
)

# ------------------------------------------------------------------------------------------ codecs

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_HELLO_FIXED = struct.Struct(">BI")
_SNAPSHOT_END = struct.Struct(">HH")
_CARD = struct.Struct(">BQ")


def _mask(values: tuple[int, ...], shift: int) -> bytes:
    bits = 0
    for value in values:
        bits |= 1 << (int(value) - shift)
    return _U16.pack(bits)


def _unmask(bits: int, shift: int) -> tuple[int, ...]:
    return tuple(i + shift for i in range(16) if bits >> i & 1)


def _hello_payload(m: ReaderHello) -> bytes:
    fw = m.firmware_version.encode()
    sn = m.serial_number.encode()
    head = _HELLO_FIXED.pack(m.protocol_version, m.session_id)
    return head + bytes([len(fw)]) + fw + bytes([len(sn)]) + sn + _mask(m.seats, 1) + _mask(m.spots, 1)


def _spot_payload(m: SpotReport) -> bytes:
    return bytes([m.seat, SpotCode(m.spot), len(m.uids)]) + b"".join(_U64.pack(u) for u in m.uids)


def _hello(p: bytes) -> ReaderHello:
    need(p, _HELLO_FIXED.size, "HELLO")
    protocol_version, session_id = _HELLO_FIXED.unpack_from(p)
    firmware_version, at = read_text(p, _HELLO_FIXED.size, "firmware version")
    serial_number, at = read_text(p, at, "serial number")
    if len(p) < at + 4:
        raise BadPayload(f"HELLO seat and spot masks need 4 bytes, got {len(p) - at}")
    seats = _unmask(_U16.unpack_from(p, at)[0], 1)
    spot_bits = _U16.unpack_from(p, at + 2)[0]
    if spot_bits >> len(SpotCode):
        raise BadPayload(f"HELLO spot mask 0x{spot_bits:04x} names a spot code above {len(SpotCode)}")
    spots = tuple(SpotCode(code) for code in _unmask(spot_bits, 1))
    return ReaderHello(firmware_version, serial_number, protocol_version, session_id, seats, spots)


def _spot(p: bytes) -> SpotReport:
    need(p, 3, "SPOT")
    seat, code, count = p[0], p[1], p[2]
    if count > MAX_CHIPS:
        raise BadPayload(f"SPOT with {count} chips, at most {MAX_CHIPS}")
    if len(p) < 3 + count * UID_SIZE:
        raise BadPayload(f"SPOT declares {count} UIDs ({count * UID_SIZE} bytes), only {len(p) - 3} bytes follow")
    try:
        spot = SpotCode(code)
    except ValueError:
        raise BadPayload(f"SPOT spot code {code} unknown") from None
    uids = tuple(_U64.unpack_from(p, 3 + i * UID_SIZE)[0] for i in range(count))
    return SpotReport(seat, spot, uids)


def _card(name: str, cls: type[CardIn] | type[CardOut]) -> Any:
    def decode(p: bytes) -> CardIn | CardOut:
        need(p, _CARD.size, name)
        position, uid = _CARD.unpack_from(p)
        if position != DEALER_POSITION and not 1 <= position <= MAX_SEAT:
            raise BadPayload(f"{name} position {position}: 0 (the dealer) or a seat 1-{MAX_SEAT}")
        return cls(position, uid)

    return decode


def _snapshot_begin(p: bytes) -> SnapshotBegin:
    need(p, 2, "SNAPSHOT_BEGIN")
    return SnapshotBegin(_U16.unpack_from(p)[0])


def _snapshot_end(p: bytes) -> SnapshotEnd:
    need(p, 4, "SNAPSHOT_END")
    return SnapshotEnd(*_SNAPSHOT_END.unpack_from(p))


def _status(p: bytes) -> ReaderStatus:
    need(p, 1, "STATUS")
    return ReaderStatus(ReaderFlags(p[0]))


def _heartbeat(p: bytes) -> ReaderHeartbeat:
    need(p, 4, "HEARTBEAT")
    return ReaderHeartbeat(_U32.unpack_from(p)[0])


def _ack(p: bytes) -> Ack:
    return Ack(read_seq(p, "ACK"))


def _resend(p: bytes) -> Resend:
    return Resend(read_seq(p, "RESEND"))


def _window(p: bytes) -> Window:
    need(p, 1, "WINDOW")
    return Window(WindowState(p[0]))


def _status_payload(m: ReaderStatus) -> bytes:
    flags = int(m.flags)
    if not 0 <= flags <= 0xFF:
        raise ValueError("status flags outside a byte")
    return bytes([flags])


_PAYLOADS: dict[type, Any] = {
    ReaderHello: _hello_payload,
    SpotReport: _spot_payload,
    SnapshotBegin: lambda m: _U16.pack(m.snapshot),
    SnapshotEnd: lambda m: _SNAPSHOT_END.pack(m.snapshot, m.spots),
    ReaderStatus: _status_payload,
    ReaderHeartbeat: lambda m: _U32.pack(m.session_id),
    CardIn: lambda m: _CARD.pack(m.position, m.uid),
    CardOut: lambda m: _CARD.pack(m.position, m.uid),
    Ack: lambda m: _U16.pack(m.up_to),
    Resend: lambda m: _U16.pack(m.from_seq),
    Window: lambda m: bytes([WindowState(m.state)]),
    Reset: lambda _m: b"",
}

_CODES: dict[type, int] = {
    ReaderHello: ReaderType.HELLO,
    SpotReport: ReaderType.SPOT,
    SnapshotBegin: ReaderType.SNAPSHOT_BEGIN,
    SnapshotEnd: ReaderType.SNAPSHOT_END,
    ReaderStatus: ReaderType.STATUS,
    ReaderHeartbeat: ReaderType.HEARTBEAT,
    CardIn: ReaderType.CARD_IN,
    CardOut: ReaderType.CARD_OUT,
    Ack: ReaderType.ACK,
    Resend: ReaderType.RESEND,
    Window: ReaderType.WINDOW,
    Reset: ReaderType.RESET,
}

_DECODERS: dict[int, Any] = {
    ReaderType.HELLO: _hello,
    ReaderType.SPOT: _spot,
    ReaderType.SNAPSHOT_BEGIN: _snapshot_begin,
    ReaderType.SNAPSHOT_END: _snapshot_end,
    ReaderType.STATUS: _status,
    ReaderType.HEARTBEAT: _heartbeat,
    ReaderType.CARD_IN: _card("CARD_IN", CardIn),
    ReaderType.CARD_OUT: _card("CARD_OUT", CardOut),
    ReaderType.ACK: _ack,
    ReaderType.RESEND: _resend,
    ReaderType.WINDOW: _window,
    ReaderType.RESET: lambda _p: Reset(),
}

#: The longest valid body: a SpotReport of MAX_CHIPS chips (395 bytes; its frame is 398 with COBS and the
#: delimiter, well under the decoder's 1024-byte buffer).
MAX_BODY = HEADER_SIZE + 3 + MAX_CHIPS * UID_SIZE + CRC_SIZE

#: The bet-spot reader's dialect (``docs/spots.md``).
READER = Dialect(
    name="bet-spot reader",
    version=READER_PROTOCOL_VERSION,
    codes=_CODES,
    payloads=_PAYLOADS,
    decoders=_DECODERS,
    reliable=READER_RELIABLE,
    to_device=(Ack, Resend, Window, Reset),
    hello=ReaderHello,
    heartbeat=ReaderHeartbeat,
    device_codes=range(0x11, 0x20),
    max_body=MAX_BODY,
)
