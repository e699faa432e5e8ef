"""A third device on the wire is one new dialect: a chip tray's (a made-up one, defined here and nowhere in the
package) runs on the framing and the reliability rules as they are, with nothing of firmware_protocol changed.
This is the recipe of docs/protocol.md section 7, "Adding a device", checked."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from firmware_protocol import framing
from firmware_protocol.framing import BadPayload, Dialect, FrameDecoder, FrameReceived, FrameRejected, RejectReason
from firmware_protocol.messages import Ack, Resend, Reset
from firmware_protocol.session import ControllerSession, DuplicateDropped, ShoeEvent, ShoeRebooted, ShoeSession
from firmware_protocol.spots import READER

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")


@dataclass(frozen=True, slots=True)
class TrayHello:
    firmware_version: str
    serial_number: str
    protocol_version: int
    session_id: int


@dataclass(frozen=True, slots=True)
class TrayHeartbeat:
    session_id: int


@dataclass(frozen=True, slots=True)
class TrayCount:
    """How many chips one column of the tray holds."""

    column: int
    chips: int


def _hello_payload(m: TrayHello) -> bytes:
    fw, sn = m.firmware_version.encode(), m.serial_number.encode()
    return bytes([m.protocol_version]) + _U32.pack(m.session_id) + bytes([len(fw)]) + fw + bytes([len(sn)]) + sn


def _hello(p: bytes) -> TrayHello:
    framing.need(p, 5, "HELLO")
    firmware_version, at = framing.read_text(p, 5, "firmware version")
    serial_number, _ = framing.read_text(p, at, "serial number")
    return TrayHello(firmware_version, serial_number, p[0], _U32.unpack_from(p, 1)[0])


def _count(p: bytes) -> TrayCount:
    framing.need(p, 3, "COUNT")
    if p[0] == 0:
        raise BadPayload("COUNT column 0")
    return TrayCount(p[0], _U16.unpack_from(p, 1)[0])


TRAY = Dialect(
    name="chip tray",
    version=1,
    codes={TrayHello: 0x21, TrayCount: 0x22, TrayHeartbeat: 0x27, Ack: 0xA1, Resend: 0xA2, Reset: 0xA4},
    payloads={
        TrayHello: _hello_payload,
        TrayCount: lambda m: bytes([m.column]) + _U16.pack(m.chips),
        TrayHeartbeat: lambda m: _U32.pack(m.session_id),
        Ack: lambda m: _U16.pack(m.up_to),
        Resend: lambda m: _U16.pack(m.from_seq),
        Reset: lambda _m: b"",
    },
    decoders={
        0x21: _hello,
        0x22: _count,
        0x27: lambda p: TrayHeartbeat(_U32.unpack_from(p)[0]),
        0xA1: lambda p: Ack(_U16.unpack_from(p)[0]),
        0xA2: lambda p: Resend(_U16.unpack_from(p)[0]),
        0xA4: lambda _p: Reset(),
    },
    reliable=(TrayHello, TrayCount),
    to_device=(Ack, Resend, Reset),
    hello=TrayHello,
    heartbeat=TrayHeartbeat,
    device_codes=range(0x21, 0x30),
    max_body=framing.MIN_BODY + 70,
)


def test_a_new_devices_frames_round_trip_and_are_refused_elsewhere() -> None:
    frame = framing.encode(7, TrayCount(3, 120), dialect=TRAY)
    assert FrameDecoder(dialect=TRAY).feed(frame) == [FrameReceived(7, TrayCount(3, 120), frame)]
    [on_reader] = FrameDecoder(dialect=READER).feed(frame)  # a tray on the reader's port: a typed refusal
    assert isinstance(on_reader, FrameRejected) and on_reader.reason is RejectReason.UNKNOWN_TYPE
    [bad] = FrameDecoder(dialect=TRAY).feed(framing.encode(1, TrayCount(0, 1), dialect=TRAY))
    assert isinstance(bad, FrameRejected) and bad.reason is RejectReason.BAD_PAYLOAD and "column 0" in bad.detail


def test_a_new_device_runs_the_sessions_as_they_are() -> None:
    """HELLO, events in order, the ACK after the caller's commit, resends of what was not acknowledged."""
    tray = ShoeSession(0x7A7, dialect=TRAY, serial_number="TRAY-01")
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    for column in (1, 2, 3):
        tray.send(TrayCount(column, 20 * column), 0.0)
    events = table.receive(tray.poll(0.0), 0.0)
    [rebooted] = [e for e in events if isinstance(e, ShoeRebooted)]
    assert rebooted.hello == TrayHello("sim-1.0", "TRAY-01", 1, 0x7A7)
    delivered = [e for e in events if isinstance(e, ShoeEvent)]
    assert [e.message for e in delivered][1:] == [TrayCount(1, 20), TrayCount(2, 40), TrayCount(3, 60)]
    tray.receive(table.acknowledge(delivered[2].number, delivered[2].key), 0.1)  # committed up to column 2
    assert tray.unacked == 1
    resent = [e for e in table.receive(tray.poll(0.6), 0.6) if isinstance(e, DuplicateDropped)]
    assert [e.number for e in resent] == [delivered[3].number]  # column 3 resent after 500 ms ...
    tray.receive(table.acknowledge(delivered[3].number, delivered[3].key), 0.7)
    assert tray.unacked == 0  # ... and acknowledged: the tray holds nothing
