"""The spec's test vectors, as data: the one source for ``docs/protocol.md`` and the tests.

Firmware engineers implement against these bytes. The hex here is literal (not computed), so a change
to the encoder that alters the wire is caught; the tables in ``docs/protocol.md`` are rendered by
:func:`markdown` and a test asserts the document contains them verbatim, so doc and code cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .framing import RejectReason
from .messages import (
    Ack,
    Button,
    ButtonPressed,
    CardRead,
    CutCard,
    Due,
    Heartbeat,
    Hello,
    Prompt,
    Resend,
    Reset,
    Status,
    StatusFlags,
    Unreadable,
)

#: Decoding outcome: a valid frame (header seq, message of the vector's dialect) or the reason it is rejected.
Outcome: TypeAlias = "tuple[int, object] | RejectReason"


@dataclass(frozen=True, slots=True)
class FrameVector:
    """A canonical frame: ``encode(seq, message)`` gives exactly ``wire`` and decoding gives it back."""

    name: str
    seq: int
    message: object  # a message of the vector's dialect
    wire: str  # hex, space-separated, delimiter included

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.wire)


@dataclass(frozen=True, slots=True)
class StreamVector:
    """Bytes as they might arrive (noise, damage, idle fill) and the events a decoder must produce."""

    name: str
    wire: str
    outcomes: tuple[Outcome, ...]

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.wire)


SESSION = 0x1A2B3C4D

FRAMES: tuple[FrameVector, ...] = (
    FrameVector(
        "HELLO",
        1,
        Hello("1.4.2", "SH-00417", 1, SESSION),
        "03 01 01 1a 01 01 1a 2b 3c 4d 05 31 2e 34 2e 32 08 53 48 2d 30 30 34 31 37 45 18 12 e0 00",
    ),
    FrameVector("CARD ten of hearts", 2, CardRead(10, "H"), "03 01 02 08 02 0a 48 81 32 d4 20 00"),
    FrameVector("CARD ace of spades, seq 256", 256, CardRead(1, "S"), "04 01 02 01 07 01 53 53 9b 77 0c 00"),
    FrameVector("CARD king of clubs, seq 65535", 0xFFFF, CardRead(13, "C"), "0b 01 02 ff ff 0d 43 3a b8 7d 1d 00"),
    FrameVector("UNREADABLE", 3, Unreadable(), "03 01 03 06 03 02 b7 57 9a 00"),
    FrameVector("CUT_CARD", 4, CutCard(), "03 01 04 06 04 99 9c d4 bc 00"),
    FrameVector("BUTTON declare", 5, ButtonPressed(Button.DECLARE), "03 01 05 07 05 01 c6 ec ea 4c 00"),
    FrameVector(
        "STATUS lid open + jam",
        6,
        Status(StatusFlags.LID_OPEN | StatusFlags.JAM),
        "03 01 06 07 06 03 11 7a 77 4d 00",
    ),
    FrameVector("HEARTBEAT, latest event 6", 6, Heartbeat(SESSION), "03 01 07 0a 06 1a 2b 3c 4d 93 4d 4e f1 00"),
    FrameVector("HEARTBEAT, no event yet", 0, Heartbeat(SESSION), "03 01 07 01 09 1a 2b 3c 4d 1c 0d bb 51 00"),
    FrameVector("ACK up to 6", 0x10, Ack(6), "03 01 81 02 10 06 06 03 5d ed 61 00"),
    FrameVector("RESEND from 3", 0x11, Resend(3), "03 01 82 02 11 06 03 35 55 09 09 00"),
    FrameVector("RESEND all held (0)", 0x12, Resend(0), "03 01 82 02 12 01 05 ae 1a e6 ea 00"),
    FrameVector("PROMPT player third", 0x13, Prompt(Due.PLAYER_THIRD), "03 01 83 07 13 01 12 46 b6 7c 00"),
    FrameVector("RESET", 0x14, Reset(), "03 01 84 06 14 65 1e df 58 00"),
)

_TH = FRAMES[1]

#: Single frames that are not canonical encodings: the decoder's rules, one case each.
SINGLE: tuple[StreamVector, ...] = (
    StreamVector(
        "extra payload bytes are ignored (additive fields)",
        "03 01 02 0a 07 05 48 55 aa 34 af dd 63 00",
        ((7, CardRead(5, "H")),),
    ),
    StreamVector("CRC mismatch (rank byte damaged)", "03 01 02 08 02 0b 48 81 32 d4 20 00", (RejectReason.BAD_CRC,)),
    StreamVector("version 2", "03 02 02 08 07 0a 48 01 6d 64 65 00", (RejectReason.UNSUPPORTED_VERSION,)),
    StreamVector("unknown type 0x08", "03 01 08 08 07 01 02 b8 b4 7f 2f 00", (RejectReason.UNKNOWN_TYPE,)),
    StreamVector("CARD rank 14", "03 01 02 08 07 0e 48 e3 95 d3 cf 00", (RejectReason.BAD_PAYLOAD,)),
    StreamVector("CARD suit 'h' (lower case)", "03 01 02 08 07 05 68 3b 0f 2a cc 00", (RejectReason.BAD_PAYLOAD,)),
    StreamVector("CARD payload cut short", "03 01 02 07 07 05 6e 60 74 6e 00", (RejectReason.BAD_PAYLOAD,)),
    StreamVector("BUTTON 9 (no such button)", "03 01 05 05 07 09 fa 01 02 fc 00", (RejectReason.BAD_PAYLOAD,)),
    StreamVector(
        "HELLO serial padded with NUL bytes (not printable)",
        "03 01 01 16 01 01 1a 2b 3c 4d 05 31 2e 34 2e 32 0a 53 48 2d 30 30 34 31 37 01 05 b4 72 6c 82 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "HELLO firmware version with an ESC byte (not printable)",
        "03 01 01 1b 01 01 1a 2b 3c 4d 06 31 2e 34 2e 32 1b 08 53 48 2d 30 30 34 31 37 47 42 4c 1a 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector("body shorter than 8 bytes", "03 01 02 03 07 05 00", (RejectReason.TOO_SHORT,)),
    StreamVector("COBS code points past the end", "05 01 02 00", (RejectReason.BAD_FRAMING,)),
)

#: Streams: garbage, idle fill and damage between good frames, and how the decoder resynchronises.
STREAMS: tuple[StreamVector, ...] = (
    StreamVector(
        "idle fill around a frame",
        "00 00 00 " + _TH.wire + " 00 00",
        ((_TH.seq, _TH.message),),
    ),
    StreamVector(
        "line noise, then a frame",
        "ff fe 13 37 00 " + _TH.wire,
        (RejectReason.BAD_FRAMING, (_TH.seq, _TH.message)),
    ),
    StreamVector(
        "listening starts mid-frame",
        "32 d4 20 00 " + _TH.wire,
        (RejectReason.BAD_FRAMING, (_TH.seq, _TH.message)),
    ),
    StreamVector(
        "a byte lost inside a frame",
        "03 01 02 08 02 0a 81 32 d4 20 00 " + _TH.wire,
        (RejectReason.BAD_FRAMING, (_TH.seq, _TH.message)),
    ),
    StreamVector(
        "a byte turned into 0x00 splits a frame",
        "03 01 02 08 02 0a 48 00 32 d4 20 00 " + _TH.wire,
        (RejectReason.BAD_FRAMING, RejectReason.BAD_FRAMING, (_TH.seq, _TH.message)),
    ),
    StreamVector(
        "a lost delimiter glues two frames: both lost",
        "03 01 02 08 02 0a 48 81 32 d4 20 " + FRAMES[4].wire + " " + _TH.wire,
        (RejectReason.BAD_CRC, (_TH.seq, _TH.message)),
    ),
)


def _outcome_text(outcome: Outcome) -> str:
    if isinstance(outcome, RejectReason):
        return f"rejected {outcome.name}"
    seq, message = outcome
    return f"seq {seq}: {message!r}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """The vector tables exactly as they appear in ``docs/protocol.md``."""
    lines = ["| vector | seq | message | wire (hex, delimiter included) |", "|---|---|---|---|"]
    lines += [f"| {v.name} | {v.seq} | `{_cell(repr(v.message))}` | `{v.wire}` |" for v in FRAMES]
    lines += [
        "",
        "Decoder rules and resynchronisation: what a decoder must report for these bytes, in order:",
        "",
        "| decoder rule | wire (hex) | events |",
        "|---|---|---|",
    ]
    for v in SINGLE + STREAMS:
        events = "; ".join(_outcome_text(o) for o in v.outcomes)
        lines.append(f"| {_cell(v.name)} | `{v.wire}` | {_cell(events)} |")
    return "\n".join(lines) + "\n"


def accounted(data: bytes) -> bytes:
    """The spec's rule for what a decoder must hand back in its events' ``raw``: every byte of ``data`` but
    idle delimiters (empty frames) and an unfinished tail. Shared by the tests and the fuzz target."""
    out = bytearray()
    frame = bytearray()
    for byte in data:
        if byte == 0:
            if frame:
                out += frame + b"\x00"
                frame.clear()
        else:
            frame.append(byte)
    return bytes(out + frame)
