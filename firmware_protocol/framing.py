"""The framing every device on the table's wire shares: COBS frames with a CRC-32, over a :class:`Dialect`.

A frame body is ``version u8 | type u8 | seq u16 | payload | crc32 u32`` (big-endian, CRC-32/ISO-HDLC
over everything before it), COBS-encoded and ended by one ``0x00`` delimiter. The layouts and the rules
are in ``docs/protocol.md``.

:func:`encode` turns a message into one complete wire frame. :class:`FrameDecoder` turns any bytes from
the serial line into :class:`FrameReceived` and :class:`FrameRejected` events: it never raises, it never
holds more than ``max_buffer`` bytes, and every byte it discards comes back in some event's ``raw``
(empty frames between consecutive delimiters are idle fill and produce nothing).

Which messages a frame may carry is its :class:`Dialect`: the type codes, the payload codecs, which types are
reliable, the HELLO and HEARTBEAT classes and the protocol version. Each device's dialect lives in a module of
its own that imports this one and nothing imports back: the card-reading shoe's is
:data:`firmware_protocol.binary.SHOE`, the bet-spot reader's :data:`firmware_protocol.spots.READER`. This
module knows no dialect: every function here takes the dialect it speaks, and a message is any object the
dialect has a code for. A new device (a chip tray, a seat's card reader) is a new dialect module; the framing,
the CRC, the reject rules and the reliability layer (:mod:`firmware_protocol.session`) serve it unchanged.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

DELIMITER = b"\x00"
#: Header (version, type, seq) and CRC trailer sizes; a body shorter than both together is TOO_SHORT.
HEADER_SIZE = 4
CRC_SIZE = 4
MIN_BODY = HEADER_SIZE + CRC_SIZE
#: Largest seq value; reliable events use 1..MAX_SEQ (0 is never an event).
MAX_SEQ = 0xFFFF

_HEADER = struct.Struct(">BBH")
_CRC = struct.Struct(">I")
#: What a HELLO string may not hold: anything but printable ASCII (0x20-0x7E). A NUL-padded serial, a
#: control byte or a non-ASCII byte would otherwise reach the journal and the floor.
_NOT_PRINTABLE = re.compile(rb"[^\x20-\x7e]")


class RejectReason(Enum):
    """Why a frame (or a run of bytes) was not turned into a message."""

    BAD_FRAMING = "bad_framing"  # COBS structure broken (a code byte points past the frame end)
    TOO_SHORT = "too_short"  # decoded body shorter than header + CRC (8 bytes)
    BAD_CRC = "bad_crc"  # CRC-32 does not match: damaged on the wire
    UNSUPPORTED_VERSION = "unsupported_version"  # CRC good, version byte is not ours
    UNKNOWN_TYPE = "unknown_type"  # CRC and version good, type code unknown to us
    BAD_PAYLOAD = "bad_payload"  # CRC, version and type good; payload too short or a value out of range
    OVERSIZE = "oversize"  # frame longer than the decoder's cap: discarded up to the next delimiter
    OVERSIZE_TAIL = "oversize_tail"  # further bytes of a frame already reported OVERSIZE
    WRONG_DIRECTION = "wrong_direction"  # a valid frame that this side never receives (set by sessions)
    BAD_SEQ = "bad_seq"  # a reliable event with seq 0, which no event carries (set by sessions)


@dataclass(frozen=True, slots=True)
class FrameReceived:
    """A valid frame: its header seq, the message, and the exact wire bytes (delimiter included)."""

    seq: int
    message: object  # a message of the frame's dialect
    raw: bytes


@dataclass(frozen=True, slots=True)
class FrameRejected:
    """Bytes that did not make a valid frame. ``seq`` and ``message_type`` are set only when the CRC
    matched (so they can be trusted): UNSUPPORTED_VERSION, UNKNOWN_TYPE, BAD_PAYLOAD, WRONG_DIRECTION."""

    reason: RejectReason
    raw: bytes
    detail: str
    seq: int | None = None
    message_type: int | None = None
    version: int | None = None  # the frame's version byte, for UNSUPPORTED_VERSION


FrameEvent = FrameReceived | FrameRejected


class EncodeError(ValueError):
    """A message or seq that cannot be put on the wire (our fault, not the peer's)."""

    def __init__(self, what: object, reason: str) -> None:
        super().__init__(f"cannot encode {what!r}: {reason}")
        self.what = what
        self.reason = reason


# --------------------------------------------------------------------------------------------- COBS


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no delimiter added). The result contains no 0x00 byte."""
    out = bytearray()
    for block in data.split(b"\x00"):
        while len(block) >= 0xFE:
            out.append(0xFF)
            out += block[:0xFE]
            block = block[0xFE:]
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def cobs_decode(frame: bytes) -> bytes | None:
    """Decode one COBS frame (no delimiter). ``None`` if the structure is broken: an empty frame, a 0x00
    byte inside, or a code byte that points past the end."""
    n = len(frame)
    if n == 0:
        return None
    code = frame[0]
    if code == n and 0 not in frame:  # fast path: the body held no 0x00
        return frame[1:]
    out = bytearray()
    i = 0
    while i < n:
        code = frame[i]
        j = i + code
        if code == 0 or j > n:
            return None
        block = frame[i + 1 : j]
        if 0 in block:
            return None
        out += block
        if j < n and code != 0xFF:
            out.append(0)
        i = j
    return bytes(out)


# ------------------------------------------------------------------------------------------ payloads


class BadPayload(Exception):
    """Raised by a dialect's payload decoder: the payload is too short or malformed (BAD_PAYLOAD)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def need(p: bytes, size: int, name: str) -> None:
    if len(p) < size:
        raise BadPayload(f"{name} payload needs {size} bytes, got {len(p)}")


_SEQ = struct.Struct(">H")


def read_seq(p: bytes, name: str) -> int:
    """The 16-bit sequence number that opens an ACK's or a RESEND's payload (both dialects' session messages)."""
    need(p, _SEQ.size, name)
    return int(_SEQ.unpack_from(p)[0])


def read_text(p: bytes, at: int, name: str) -> tuple[str, int]:
    if at >= len(p):
        raise BadPayload(f"HELLO {name} length byte missing")
    size = p[at]
    end = at + 1 + size
    if end > len(p):
        raise BadPayload(f"HELLO {name} declares {size} bytes, only {len(p) - at - 1} present")
    text = p[at + 1 : end]
    bad = _NOT_PRINTABLE.search(text)
    if bad is not None:
        raise BadPayload(
            f"HELLO {name} is not printable text: byte {bad.start()} is 0x{text[bad.start()]:02x}"
            " (printable ASCII, 0x20-0x7e, only)"
        )
    return text.decode("ascii"), end


# ------------------------------------------------------------------------------------------ dialects


@dataclass(frozen=True, eq=False)
class Dialect:
    """What one device's frames may carry; the framing around them is the same for every dialect.

    ``codes`` gives each message class its wire type code, ``payloads`` its encoder and ``decoders`` (by code)
    the payload decoder, which raises :class:`BadPayload` (or ``ValueError`` from the message's checks) on a
    payload it cannot read. Device-to-table codes are ``device_codes`` (a frame there that this side cannot
    decode still takes its sequence number: a newer firmware's event); table-to-device codes have the top bit
    set. ``reliable`` are the device's sequenced events, ``to_device`` what the table sends. ``hello`` is the
    class the device announces a boot session with (built as ``hello(firmware_version, serial_number,
    protocol_version, session_id)``; it has ``session_id``), ``heartbeat`` the one it sends every second
    (``heartbeat(session_id)``)."""

    name: str
    version: int
    codes: Mapping[type, int]
    payloads: Mapping[type, Callable[[Any], bytes]]
    decoders: Mapping[int, Callable[[bytes], object]]
    reliable: tuple[type, ...]
    to_device: tuple[type, ...]
    hello: type[Any]
    heartbeat: type[Any]
    device_codes: range
    #: The longest body a valid frame of this dialect has (header, payload, CRC).
    max_body: int

    @property
    def heartbeat_code(self) -> int:
        return self.codes[self.heartbeat]

    def __repr__(self) -> str:
        return f"Dialect({self.name!r}, version {self.version})"


# ------------------------------------------------------------------------------------------ frames


def message_type(message: object, dialect: Dialect) -> int:
    """The wire code of ``message`` in ``dialect``."""
    try:
        return dialect.codes[type(message)]
    except KeyError:
        raise EncodeError(message, f"not a {dialect.name} message") from None


def encode_body(seq: int, message: object, *, dialect: Dialect, version: int | None = None) -> bytes:
    """The frame body before COBS: header, payload, CRC-32. ``version`` (default: the dialect's) is for tests
    of the version rule."""
    if not 0 <= seq <= MAX_SEQ:
        raise EncodeError(seq, "seq outside 0..0xFFFF")
    code = message_type(message, dialect)
    try:
        payload = dialect.payloads[type(message)](message)
    except ValueError as exc:  # an enum field holding a value with no wire code
        if isinstance(exc, EncodeError):
            raise
        raise EncodeError(message, str(exc)) from exc
    head = _HEADER.pack(dialect.version if version is None else version, code, seq) + payload
    return head + _CRC.pack(zlib.crc32(head))


def frame_body(body: bytes) -> bytes:
    """Wrap a ready body (header, payload, CRC) into a wire frame: COBS plus the delimiter."""
    return cobs_encode(body) + DELIMITER


def encode(seq: int, message: object, *, dialect: Dialect) -> bytes:
    """One complete wire frame for ``message`` with header ``seq`` (COBS-encoded, ending in 0x00)."""
    return cobs_encode(encode_body(seq, message, dialect=dialect)) + DELIMITER


def _decode(frame: bytes, raw: bytes, dialect: Dialect) -> FrameEvent:
    body = cobs_decode(frame)
    if body is None:
        return FrameRejected(RejectReason.BAD_FRAMING, raw, "COBS structure broken")
    size = len(body)
    if size < MIN_BODY:
        return FrameRejected(RejectReason.TOO_SHORT, raw, f"body of {size} bytes, at least {MIN_BODY} needed")
    end = size - CRC_SIZE
    crc = zlib.crc32(body[:end])
    sent = _CRC.unpack_from(body, end)[0]
    if crc != sent:
        return FrameRejected(RejectReason.BAD_CRC, raw, f"CRC {sent:08x} on the wire, {crc:08x} computed")
    version, mtype, seq = _HEADER.unpack_from(body)
    if version != dialect.version:
        return FrameRejected(
            RejectReason.UNSUPPORTED_VERSION,
            raw,
            f"protocol version {version}",
            seq=seq,
            message_type=mtype,
            version=version,
        )
    decoder = dialect.decoders.get(mtype)
    if decoder is None:
        return FrameRejected(RejectReason.UNKNOWN_TYPE, raw, f"message type 0x{mtype:02x}", seq=seq, message_type=mtype)
    try:
        message = decoder(body[HEADER_SIZE:end])
    except BadPayload as exc:
        return FrameRejected(RejectReason.BAD_PAYLOAD, raw, exc.detail, seq=seq, message_type=mtype)
    except ValueError as exc:  # a field the message refuses (rank 14, suit 'X', unknown button or due)
        return FrameRejected(RejectReason.BAD_PAYLOAD, raw, str(exc), seq=seq, message_type=mtype)
    return FrameReceived(seq, message, raw)


def decode_frame(frame: bytes, *, dialect: Dialect) -> FrameEvent:
    """Decode one wire frame: COBS-encoded bytes, with or without its single trailing 0x00 delimiter.

    The event's ``raw`` is ``frame`` exactly as given. Never raises."""
    inner = frame[:-1] if frame.endswith(DELIMITER) else frame
    if DELIMITER in inner:
        return FrameRejected(RejectReason.BAD_FRAMING, bytes(frame), "0x00 inside a frame")
    return _decode(bytes(inner), bytes(frame), dialect)


class FrameDecoder:
    """Stream decoder for one device's line (``dialect``): feed it whatever the serial port gave; get one event
    per frame.

    At most ``max_buffer`` bytes of an unfinished frame are kept. A frame longer than that is reported
    once as OVERSIZE (its first bytes in ``raw``) and the rest of it, up to the next delimiter, is handed
    back as OVERSIZE_TAIL events (one per :meth:`feed` call) so that no byte vanishes unreported."""

    __slots__ = ("_buf", "_discarding", "dialect", "max_buffer")

    def __init__(self, max_buffer: int = 1024, *, dialect: Dialect) -> None:
        if max_buffer < MIN_BODY + 1:
            raise ValueError(f"max_buffer {max_buffer} cannot hold the shortest frame")
        self.max_buffer = max_buffer
        self.dialect = dialect
        self._buf = b""
        self._discarding = False

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished frame held now (never more than ``max_buffer``)."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[FrameEvent]:
        """Take bytes from the line; return the events of every frame they complete."""
        events: list[FrameEvent] = []
        if not data:
            return events
        data = bytes(data)
        if self._discarding:
            cut = data.find(0)
            if cut < 0:
                events.append(FrameRejected(RejectReason.OVERSIZE_TAIL, data, "rest of an oversize frame"))
                return events
            events.append(FrameRejected(RejectReason.OVERSIZE_TAIL, data[: cut + 1], "end of an oversize frame"))
            data = data[cut + 1 :]
            self._discarding = False
        buf = self._buf + data if self._buf else data
        cap = self.max_buffer
        if 0 not in data and len(buf) <= cap:  # the frame goes on (byte-by-byte reads land here)
            self._buf = buf
            return events
        parts = buf.split(b"\x00")
        tail = parts.pop()
        append = events.append
        for part in parts:
            if not part:
                continue  # idle fill between delimiters
            if len(part) > cap:
                append(FrameRejected(RejectReason.OVERSIZE, part + DELIMITER, f"frame of {len(part)} bytes, cap {cap}"))
            else:
                append(_decode(part, part + DELIMITER, self.dialect))
        if len(tail) > cap:
            append(
                FrameRejected(
                    RejectReason.OVERSIZE,
                    tail,
                    f"more than {cap} bytes without a delimiter; discarding up to the next one",
                )
            )
            self._discarding = True
            tail = b""
        self._buf = tail
        return events
