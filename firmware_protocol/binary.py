"""The card-reading shoe's binary dialect: its payload codecs and :data:`SHOE`, over the shared framing.

The frame (COBS, header, CRC-32, the reject rules) is :mod:`firmware_protocol.framing`'s, the same for every
device; this module says what the shoe's frames carry: the messages of :mod:`firmware_protocol.messages`, their
type codes and byte layouts (``docs/protocol.md``; the test vectors in :mod:`firmware_protocol.vectors`).

The shoe is the table's first device and the default of the functions here: :func:`encode`,
:func:`encode_body`, :func:`decode_frame`, :func:`message_type` and :class:`BinaryDecoder` are the framing's,
speaking :data:`SHOE` unless given another ``dialect``. The framing's names (:class:`FrameReceived`,
:class:`FrameRejected`, :class:`RejectReason`, ...) are re-exported so a shoe's caller needs one import.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from . import framing
from .framing import (
    CRC_SIZE,
    DELIMITER,
    HEADER_SIZE,
    MAX_SEQ,
    MIN_BODY,
    BadPayload,
    Dialect,
    EncodeError,
    FrameDecoder,
    FrameEvent,
    FrameReceived,
    FrameRejected,
    RejectReason,
    cobs_decode,
    cobs_encode,
    frame_body,
    need,
    read_text,
)
from .messages import (
    PROTOCOL_VERSION,
    RELIABLE_TYPES,
    Ack,
    Button,
    ButtonPressed,
    CardRead,
    CutCard,
    Due,
    Heartbeat,
    Hello,
    Message,
    MessageType,
    Prompt,
    Resend,
    Reset,
    Status,
    StatusFlags,
    Unreadable,
)

__all__ = [
    "CRC_SIZE",
    "DELIMITER",
    "HEADER_SIZE",
    "MAX_SEQ",
    "MAX_V1_BODY",
    "MIN_BODY",
    "SHOE",
    "BadPayload",
    "BinaryDecoder",
    "BinaryEvent",
    "Dialect",
    "EncodeError",
    "FrameReceived",
    "FrameRejected",
    "RejectReason",
    "cobs_decode",
    "cobs_encode",
    "decode_frame",
    "encode",
    "encode_body",
    "frame_body",
    "message_type",
]

#: The framing's event (a frame received or rejected), by its old name.
BinaryEvent = FrameEvent

#: Longest version-1 body: HELLO with two 32-byte strings.
MAX_V1_BODY = MIN_BODY + 1 + 4 + 1 + 32 + 1 + 32

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_HELLO_FIXED = struct.Struct(">BI")


# ------------------------------------------------------------------------------------------ payloads


def _hello_payload(m: Hello) -> bytes:
    fw = m.firmware_version.encode()
    sn = m.serial_number.encode()
    return _HELLO_FIXED.pack(m.protocol_version, m.session_id) + bytes([len(fw)]) + fw + bytes([len(sn)]) + sn


def _card_payload(m: CardRead) -> bytes:
    return bytes([m.rank, ord(m.suit)])


def _empty_payload(_: object) -> bytes:
    return b""


def _button_payload(m: ButtonPressed) -> bytes:
    return bytes([Button(m.button)])


def _status_payload(m: Status) -> bytes:
    flags = int(m.flags)
    if not 0 <= flags <= 0xFF:
        raise EncodeError(m, "status flags outside a byte")
    return bytes([flags])


def _heartbeat_payload(m: Heartbeat) -> bytes:
    return _U32.pack(m.session_id)


def _ack_payload(m: Ack) -> bytes:
    return _U16.pack(m.up_to)


def _resend_payload(m: Resend) -> bytes:
    return _U16.pack(m.from_seq)


def _prompt_payload(m: Prompt) -> bytes:
    return bytes([Due(m.due)])


def _hello(p: bytes) -> Message:
    need(p, _HELLO_FIXED.size, "HELLO")
    protocol_version, session_id = _HELLO_FIXED.unpack_from(p)
    firmware_version, at = read_text(p, _HELLO_FIXED.size, "firmware version")
    serial_number, _ = read_text(p, at, "serial number")
    return Hello(firmware_version, serial_number, protocol_version, session_id)


def _card(p: bytes) -> Message:
    if len(p) < 2:
        raise BadPayload(f"CARD payload needs 2 bytes, got {len(p)}")
    return CardRead(p[0], chr(p[1]))


def _unreadable(_: bytes) -> Message:
    return Unreadable()


def _cut_card(_: bytes) -> Message:
    return CutCard()


def _button(p: bytes) -> Message:
    need(p, 1, "BUTTON")
    return ButtonPressed(Button(p[0]))


def _status(p: bytes) -> Message:
    need(p, 1, "STATUS")
    return Status(StatusFlags(p[0]))


def _heartbeat(p: bytes) -> Message:
    need(p, 4, "HEARTBEAT")
    return Heartbeat(_U32.unpack_from(p)[0])


def _ack(p: bytes) -> Message:
    return Ack(framing.read_seq(p, "ACK"))


def _resend(p: bytes) -> Message:
    return Resend(framing.read_seq(p, "RESEND"))


def _prompt(p: bytes) -> Message:
    need(p, 1, "PROMPT")
    return Prompt(Due(p[0]))


def _reset(_: bytes) -> Message:
    return Reset()


_DECODERS: dict[int, Callable[[bytes], Message]] = {
    MessageType.HELLO: _hello,
    MessageType.CARD: _card,
    MessageType.UNREADABLE: _unreadable,
    MessageType.CUT_CARD: _cut_card,
    MessageType.BUTTON: _button,
    MessageType.STATUS: _status,
    MessageType.HEARTBEAT: _heartbeat,
    MessageType.ACK: _ack,
    MessageType.RESEND: _resend,
    MessageType.PROMPT: _prompt,
    MessageType.RESET: _reset,
}


_TYPE_CODES: dict[type, MessageType] = {
    Hello: MessageType.HELLO,
    CardRead: MessageType.CARD,
    Unreadable: MessageType.UNREADABLE,
    CutCard: MessageType.CUT_CARD,
    ButtonPressed: MessageType.BUTTON,
    Status: MessageType.STATUS,
    Heartbeat: MessageType.HEARTBEAT,
    Ack: MessageType.ACK,
    Resend: MessageType.RESEND,
    Prompt: MessageType.PROMPT,
    Reset: MessageType.RESET,
}


_PAYLOADS: dict[type, Callable[[Any], bytes]] = {
    Hello: _hello_payload,
    CardRead: _card_payload,
    Unreadable: _empty_payload,
    CutCard: _empty_payload,
    ButtonPressed: _button_payload,
    Status: _status_payload,
    Heartbeat: _heartbeat_payload,
    Ack: _ack_payload,
    Resend: _resend_payload,
    Prompt: _prompt_payload,
    Reset: _empty_payload,
}


#: The card-reading shoe's dialect (``docs/protocol.md``): the default of every function and class here.
SHOE = Dialect(
    name="shoe",
    version=PROTOCOL_VERSION,
    codes=_TYPE_CODES,
    payloads=_PAYLOADS,
    decoders=_DECODERS,
    reliable=RELIABLE_TYPES,
    to_device=(Ack, Resend, Prompt, Reset),
    hello=Hello,
    heartbeat=Heartbeat,
    device_codes=range(0x01, 0x80),
    max_body=MAX_V1_BODY,
)


# ------------------------------------------------------------------------------------------ frames


def message_type(message: object, dialect: Dialect | None = None) -> int:
    """The wire code of ``message`` in ``dialect`` (the shoe's by default)."""
    return framing.message_type(message, dialect or SHOE)


def encode_body(seq: int, message: object, *, version: int | None = None, dialect: Dialect | None = None) -> bytes:
    """The frame body before COBS: header, payload, CRC-32 (:func:`firmware_protocol.framing.encode_body`, the
    shoe's dialect by default)."""
    return framing.encode_body(seq, message, dialect=dialect or SHOE, version=version)


def encode(seq: int, message: object, *, dialect: Dialect | None = None) -> bytes:
    """One complete wire frame for ``message`` with header ``seq`` (the shoe's dialect by default; a shoe's
    message without ``dialect``, any dialect's with it)."""
    return framing.encode(seq, message, dialect=dialect or SHOE)


def decode_frame(frame: bytes, *, dialect: Dialect | None = None) -> FrameEvent:
    """Decode one wire frame (:func:`firmware_protocol.framing.decode_frame`, the shoe's dialect by default)."""
    return framing.decode_frame(frame, dialect=dialect or SHOE)


class BinaryDecoder(FrameDecoder):
    """The framing's stream decoder (:class:`~firmware_protocol.framing.FrameDecoder`), for the shoe's line
    unless given another ``dialect``."""

    __slots__ = ()

    def __init__(self, max_buffer: int = 1024, *, dialect: Dialect | None = None) -> None:
        super().__init__(max_buffer, dialect=dialect or SHOE)
