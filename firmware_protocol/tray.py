"""The chip tray's wire protocol: its messages, as frozen dataclasses, and its :data:`TRAY` dialect.

A chip tray is the dealer's float: a row of tubes of chips, an RFID antenna along each tube reading the tag
UIDs of the chips in it. It tells the table, per tube, the set of chips it holds now, whenever a tube changes
and in a full snapshot when asked; the table turns UIDs into values with its chip registry and checks the
tray against what the coups' settlements say it should hold. It speaks the shoe's framing, sequencing and
resend rules (:mod:`firmware_protocol.framing`, :mod:`firmware_protocol.session`, run with
``dialect=TRAY``) with its own type codes (0x21-0x2F, 0xA1-0xAF), so a tray on the shoe's or the bet-spot
reader's port, or either of them on the tray's, is a typed protocol error (UNKNOWN_TYPE), never a working link.

Tray to table, reliable: :class:`TrayHello`, :class:`TubeReport`, :class:`TraySnapshotBegin`,
:class:`TraySnapshotEnd`, :class:`TrayStatus`; not reliable: :class:`TrayHeartbeat`. Table to tray: the
shoe's :class:`~firmware_protocol.messages.Ack`, :class:`~firmware_protocol.messages.Resend` and
:class:`~firmware_protocol.messages.Reset` (with the tray's codes), and :class:`CountRequest`.

The snapshot messages are the tray's own classes, not the reader's ``SnapshotBegin``/``SnapshotEnd``: the wire
layout is the same (``snapshot u16``; ``snapshot u16, reports u16``), but the reader's end counts "spots" and
SpotReports, the tray's counts TubeReports, and with classes of its own a message tells which device sent it
(``TrayMessage`` and the reader's union share no class). This module imports no other dialect.

Byte layouts and the rules for when to report are in ``docs/tray.md``; the test vectors in
:mod:`firmware_protocol.tray_vectors`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any

from .framing import CRC_SIZE, HEADER_SIZE, BadPayload, Dialect, need, read_seq, read_text
from .messages import Ack, Resend, Reset

#: The version of the tray's protocol (the frame's version byte).
TRAY_PROTOCOL_VERSION = 1
#: Most tubes a tray may have (tubes are numbered 1..tubes).
MAX_TUBES = 16
#: Most chips one TubeReport may carry: a full tube of standard chips (about 75) fits, with room.
MAX_TUBE_CHIPS = 100
#: Bytes of one tag UID on the wire.
UID_SIZE = 8
#: Longest HELLO string (firmware version, serial number), in bytes.
MAX_TEXT = 32
_MAX_UID = (1 << 64) - 1


class TrayType(IntEnum):
    """Wire code of each tray message. Tray to table 0x21-0x2F; table to tray 0xA1-0xAF. The low nibbles
    are the bet-spot reader's for the same kind of message (0x25 is unused, as the reader's 0x15)."""

    HELLO = 0x21
    TUBE = 0x22
    SNAPSHOT_BEGIN = 0x23
    SNAPSHOT_END = 0x24
    STATUS = 0x26
    HEARTBEAT = 0x27
    ACK = 0xA1
    RESEND = 0xA2
    COUNT_REQUEST = 0xA3
    RESET = 0xA4


class TrayFlags(IntFlag):
    """Tray condition flags carried by STATUS. Bits 0-4 mean what the bet-spot reader's mean; bits 6-7 are
    reserved (sent as 0, kept as they come)."""

    NONE = 0
    ANTENNA_FAULT = 0x01  # a tube's antenna does not answer: that tube reads empty whatever it holds
    TAMPER = 0x02  # the enclosure was opened or the tray lifted off its mount
    READ_ERRORS = 0x04  # many failed tag reads (collisions, interference): reports may miss chips
    OVERHEAT = 0x08
    LOW_POWER = 0x10
    LID_OPEN = 0x20  # the locking lid is open (it is locked between shifts and for a fill or credit transport)


def _check_session(session_id: int) -> None:
    if not 0 <= session_id <= 0xFFFFFFFF:
        raise ValueError(f"session_id {session_id} outside 32 bits")


def _check_u16(value: int, name: str) -> None:
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"{name} {value} outside 16 bits")


def _check_tube(tube: int) -> None:
    if not 1 <= tube <= MAX_TUBES:
        raise ValueError(f"tube {tube} outside 1-{MAX_TUBES}")


def _check_uid(uid: int) -> None:
    if not 0 <= uid <= _MAX_UID:
        raise ValueError(f"UID {uid:#x} outside 8 bytes")


@dataclass(frozen=True, slots=True)
class TrayHello:
    """Sent by the tray after boot and after RESET: who it is, which boot session this is, and how many tubes
    it has (1-16, numbered from 1). The default ``tubes`` serves a session's generic HELLO builder; a tray
    states its own."""

    firmware_version: str
    serial_number: str
    protocol_version: int
    session_id: int
    tubes: int = MAX_TUBES

    def __post_init__(self) -> None:
        _check_session(self.session_id)
        if not 0 <= self.protocol_version <= 0xFF:
            raise ValueError(f"protocol_version {self.protocol_version} outside a byte")
        for name in ("firmware_version", "serial_number"):
            text: str = getattr(self, name)
            if not (text.isascii() and text.isprintable()):
                raise ValueError(f"{name} is not printable ASCII (0x20-0x7e)")
            if len(text) > MAX_TEXT:
                raise ValueError(f"{name} longer than {MAX_TEXT} bytes")
        if not 1 <= self.tubes <= MAX_TUBES:
            raise ValueError(f"tubes {self.tubes} outside 1-{MAX_TUBES}")


@dataclass(frozen=True, slots=True)
class TubeReport:
    """What one tube holds now: the set of tag UIDs (8-byte integers) read in it, in any order, each once.
    An empty tuple is an empty tube."""

    tube: int
    uids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_tube(self.tube)
        if len(self.uids) > MAX_TUBE_CHIPS:
            raise ValueError(f"{len(self.uids)} chips in one tube, at most {MAX_TUBE_CHIPS}")
        for uid in self.uids:
            _check_uid(uid)
        if len(set(self.uids)) != len(self.uids):
            raise ValueError("a UID reported twice in one tube")


@dataclass(frozen=True, slots=True)
class TraySnapshotBegin:
    """A full snapshot starts: the TubeReports up to the matching :class:`TraySnapshotEnd` are every tube that
    holds chips; a tube not reported in it is empty."""

    snapshot: int

    def __post_init__(self) -> None:
        _check_u16(self.snapshot, "snapshot")


@dataclass(frozen=True, slots=True)
class TraySnapshotEnd:
    """The snapshot ``snapshot`` is complete: ``reports`` TubeReports were sent since its TraySnapshotBegin."""

    snapshot: int
    reports: int

    def __post_init__(self) -> None:
        _check_u16(self.snapshot, "snapshot")
        _check_u16(self.reports, "reports")


@dataclass(frozen=True, slots=True)
class TrayStatus:
    """The tray's condition changed (or is being repeated)."""

    flags: TrayFlags

    def __post_init__(self) -> None:
        if not 0 <= int(self.flags) <= 0xFF:
            raise ValueError(f"status flags {int(self.flags):#x} outside a byte")


@dataclass(frozen=True, slots=True)
class TrayHeartbeat:
    """Sent every second; the frame's seq field carries the latest event sent (as the shoe's HEARTBEAT)."""

    session_id: int

    def __post_init__(self) -> None:
        _check_session(self.session_id)


@dataclass(frozen=True, slots=True)
class CountRequest:
    """Table to tray: send a full snapshot now (at the close of a shift, after a link gap, after a tray event
    the table could not read). Not acknowledged; the snapshot is the answer."""


TrayMessage = TrayHello | TubeReport | TraySnapshotBegin | TraySnapshotEnd | TrayStatus | TrayHeartbeat
TrayCommand = Ack | Resend | CountRequest | Reset
TrayWire = TrayMessage | TrayCommand

#: Tray events that are sequenced, kept until acknowledged and resent (HEARTBEAT is not).
TRAY_RELIABLE: tuple[type, ...] = (TrayHello, TubeReport, TraySnapshotBegin, TraySnapshotEnd, TrayStatus)

# ------------------------------------------------------------------------------------------ codecs

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_HELLO_FIXED = struct.Struct(">BI")
_SNAPSHOT_END = struct.Struct(">HH")
_TUBE_HEAD = 2  # tube u8, count u8


def _hello_payload(m: TrayHello) -> bytes:
    fw = m.firmware_version.encode("ascii")
    sn = m.serial_number.encode("ascii")
    head = _HELLO_FIXED.pack(m.protocol_version, m.session_id)
    return head + bytes([len(fw)]) + fw + bytes([len(sn)]) + sn + bytes([m.tubes])


def _tube_payload(m: TubeReport) -> bytes:
    return bytes([m.tube, len(m.uids)]) + struct.pack(f">{len(m.uids)}Q", *m.uids)


def _text(p: bytes, at: int, name: str) -> tuple[str, int]:
    text, end = read_text(p, at, name)
    if len(text) > MAX_TEXT:
        raise BadPayload(f"HELLO {name} of {len(text)} bytes, at most {MAX_TEXT}")
    return text, end


def _hello(p: bytes) -> TrayHello:
    need(p, _HELLO_FIXED.size, "HELLO")
    protocol_version, session_id = _HELLO_FIXED.unpack_from(p)
    firmware_version, at = _text(p, _HELLO_FIXED.size, "firmware version")
    serial_number, at = _text(p, at, "serial number")
    if at >= len(p):
        raise BadPayload("HELLO tubes byte missing")
    tubes = p[at]
    if not 1 <= tubes <= MAX_TUBES:
        raise BadPayload(f"HELLO tubes {tubes}: a tray has 1-{MAX_TUBES}")
    return TrayHello(firmware_version, serial_number, protocol_version, session_id, tubes)


def _tube(p: bytes) -> TubeReport:
    need(p, _TUBE_HEAD, "TUBE")
    tube, count = p[0], p[1]
    if not 1 <= tube <= MAX_TUBES:
        raise BadPayload(f"TUBE tube {tube}: tubes are 1-{MAX_TUBES}")
    if count > MAX_TUBE_CHIPS:
        raise BadPayload(f"TUBE with {count} chips, at most {MAX_TUBE_CHIPS}")
    follow = len(p) - _TUBE_HEAD
    if follow < count * UID_SIZE:
        raise BadPayload(f"TUBE declares {count} UIDs ({count * UID_SIZE} bytes), only {follow} bytes follow")
    uids = struct.unpack_from(f">{count}Q", p, _TUBE_HEAD)
    if len(set(uids)) != count:
        raise BadPayload(f"TUBE tube {tube} names a UID twice")
    return TubeReport(tube, uids)


def _snapshot_begin(p: bytes) -> TraySnapshotBegin:
    need(p, _U16.size, "SNAPSHOT_BEGIN")
    return TraySnapshotBegin(_U16.unpack_from(p)[0])


def _snapshot_end(p: bytes) -> TraySnapshotEnd:
    need(p, _SNAPSHOT_END.size, "SNAPSHOT_END")
    return TraySnapshotEnd(*_SNAPSHOT_END.unpack_from(p))


def _status(p: bytes) -> TrayStatus:
    need(p, 1, "STATUS")
    return TrayStatus(TrayFlags(p[0]))


def _heartbeat(p: bytes) -> TrayHeartbeat:
    need(p, _U32.size, "HEARTBEAT")
    return TrayHeartbeat(_U32.unpack_from(p)[0])


def _ack(p: bytes) -> Ack:
    return Ack(read_seq(p, "ACK"))


def _resend(p: bytes) -> Resend:
    return Resend(read_seq(p, "RESEND"))


_PAYLOADS: dict[type, Any] = {
    TrayHello: _hello_payload,
    TubeReport: _tube_payload,
    TraySnapshotBegin: lambda m: _U16.pack(m.snapshot),
    TraySnapshotEnd: lambda m: _SNAPSHOT_END.pack(m.snapshot, m.reports),
    TrayStatus: lambda m: bytes([int(m.flags)]),
    TrayHeartbeat: lambda m: _U32.pack(m.session_id),
    Ack: lambda m: _U16.pack(m.up_to),
    Resend: lambda m: _U16.pack(m.from_seq),
    CountRequest: lambda _m: b"",
    Reset: lambda _m: b"",
}

_CODES: dict[type, int] = {
    TrayHello: TrayType.HELLO,
    TubeReport: TrayType.TUBE,
    TraySnapshotBegin: TrayType.SNAPSHOT_BEGIN,
    TraySnapshotEnd: TrayType.SNAPSHOT_END,
    TrayStatus: TrayType.STATUS,
    TrayHeartbeat: TrayType.HEARTBEAT,
    Ack: TrayType.ACK,
    Resend: TrayType.RESEND,
    CountRequest: TrayType.COUNT_REQUEST,
    Reset: TrayType.RESET,
}

_DECODERS: dict[int, Any] = {
    TrayType.HELLO: _hello,
    TrayType.TUBE: _tube,
    TrayType.SNAPSHOT_BEGIN: _snapshot_begin,
    TrayType.SNAPSHOT_END: _snapshot_end,
    TrayType.STATUS: _status,
    TrayType.HEARTBEAT: _heartbeat,
    TrayType.ACK: _ack,
    TrayType.RESEND: _resend,
    TrayType.COUNT_REQUEST: lambda _p: CountRequest(),
    TrayType.RESET: lambda _p: Reset(),
}

#: The longest valid body: a TubeReport of MAX_TUBE_CHIPS chips (810 bytes). COBS adds one code byte per 254
#: bytes and one more (4 here), and the delimiter one: at most 815 bytes on the wire, under the decoder's
#: 1024-byte buffer (a test checks).
MAX_BODY = HEADER_SIZE + _TUBE_HEAD + MAX_TUBE_CHIPS * UID_SIZE + CRC_SIZE

#: The chip tray's dialect (``docs/tray.md``).
TRAY = Dialect(
    name="chip tray",
    version=TRAY_PROTOCOL_VERSION,
    codes=_CODES,
    payloads=_PAYLOADS,
    decoders=_DECODERS,
    reliable=TRAY_RELIABLE,
    to_device=(Ack, Resend, CountRequest, Reset),
    hello=TrayHello,
    heartbeat=TrayHeartbeat,
    device_codes=range(0x21, 0x30),
    max_body=MAX_BODY,
)
