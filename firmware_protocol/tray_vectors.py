"""The chip tray's test vectors, as data: the one source for ``docs/tray.md`` and the tests.

Shaped like :mod:`firmware_protocol.spot_vectors` (the bet-spot reader's): the hex is literal, not computed, so a
change to the encoder that alters the wire is caught, and :func:`markdown` and :func:`example_markdown` render
the tables that ``docs/tray.md`` contains verbatim (a test checks), so the document and the code cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from .framing import RejectReason
from .messages import Ack, Resend, Reset
from .tray import (
    CountRequest,
    TrayFlags,
    TrayHeartbeat,
    TrayHello,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TubeReport,
)
from .vectors import FrameVector, StreamVector, _cell, _outcome_text

SESSION = 0x7EA1C0DE
#: A UID as an ISO 15693 tag gives it, and a 4-byte ISO 14443 UID right-aligned and zero-padded to 8 bytes.
UID_15693 = 0xE004015012345678
UID_14443 = 0x00000000A1B2C3D4

#: A TUBE of 32 chips whose UIDs hold no 0x00 byte: a run of more than 254 bytes, COBS code 0xFF.
_FULL_RUN = (
    "03 01 22 ff 07 06 20 e0 04 01 50 12 34 56 01 e0 04 01 50 12 34 56 02 e0 04 01 50 12 34 56 03 e0 "
    "04 01 50 12 34 56 04 e0 04 01 50 12 34 56 05 e0 04 01 50 12 34 56 06 e0 04 01 50 12 34 56 07 e0 "
    "04 01 50 12 34 56 08 e0 04 01 50 12 34 56 09 e0 04 01 50 12 34 56 0a e0 04 01 50 12 34 56 0b e0 "
    "04 01 50 12 34 56 0c e0 04 01 50 12 34 56 0d e0 04 01 50 12 34 56 0e e0 04 01 50 12 34 56 0f e0 "
    "04 01 50 12 34 56 10 e0 04 01 50 12 34 56 11 e0 04 01 50 12 34 56 12 e0 04 01 50 12 34 56 13 e0 "
    "04 01 50 12 34 56 14 e0 04 01 50 12 34 56 15 e0 04 01 50 12 34 56 16 e0 04 01 50 12 34 56 17 e0 "
    "04 01 50 12 34 56 18 e0 04 01 50 12 34 56 19 e0 04 01 50 12 34 56 1a e0 04 01 50 12 34 56 1b e0 "
    "04 01 50 12 34 56 1c e0 04 01 50 12 34 56 1d e0 04 01 50 12 34 56 1e e0 04 01 50 12 34 56 1f e0 "
    "04 01 0a 50 12 34 56 20 ad f6 5b 73 00"
)

FRAMES: tuple[FrameVector, ...] = (
    FrameVector(
        "HELLO, 8 tubes",
        1,
        TrayHello("1.2.0", "CT-0007", 1, SESSION, 8),
        "03 01 21 19 01 01 7e a1 c0 de 05 31 2e 32 2e 30 07 43 54 2d 30 30 30 37 08 ae 44 ff 01 00",
    ),
    FrameVector(
        "TUBE 3, two chips (an 8-byte UID and a 4-byte one)",
        2,
        TubeReport(3, (UID_15693, UID_14443)),
        "03 01 22 0c 02 03 02 e0 04 01 50 12 34 56 78 01 01 01 09 a1 b2 c3 d4 28 c3 73 a7 00",
    ),
    FrameVector("TUBE 3, now empty", 3, TubeReport(3, ()), "03 01 22 03 03 03 05 e8 f4 e3 f8 00"),
    FrameVector("SNAPSHOT_BEGIN 5", 4, TraySnapshotBegin(5), "03 01 23 02 04 06 05 8b 9c 7b 81 00"),
    FrameVector(
        "TUBE 1, three chips",
        5,
        TubeReport(1, (0xE004015025000001, 0xE004015025000002, 0xE004015025000003)),
        "03 01 22 09 05 01 03 e0 04 01 50 25 01 07 01 e0 04 01 50 25 01 07 02 e0 04 01 50 25 01 06 03 25 b0 77 11 00",
    ),
    FrameVector(
        "SNAPSHOT_END 5, one tube reported", 6, TraySnapshotEnd(5, 1), "03 01 24 02 06 02 05 06 01 6c f6 c5 a5 00"
    ),
    FrameVector(
        "TUBE 6, 32 chips (a run of more than 254 bytes without 0x00: COBS code 0xFF)",
        7,
        TubeReport(6, tuple(0xE004015012345600 + i for i in range(1, 33))),
        _FULL_RUN,
    ),
    FrameVector("STATUS lid open", 8, TrayStatus(TrayFlags.LID_OPEN), "03 01 26 07 08 20 8d ac 84 8f 00"),
    FrameVector(
        "STATUS antenna fault + read errors",
        9,
        TrayStatus(TrayFlags.ANTENNA_FAULT | TrayFlags.READ_ERRORS),
        "03 01 26 07 09 05 df b3 61 89 00",
    ),
    FrameVector("STATUS all clear", 10, TrayStatus(TrayFlags.NONE), "03 01 26 02 0a 05 84 f4 c6 c5 00"),
    FrameVector("HEARTBEAT, latest event 10", 10, TrayHeartbeat(SESSION), "03 01 27 0a 0a 7e a1 c0 de 10 e9 08 21 00"),
    FrameVector("HEARTBEAT, no event yet", 0, TrayHeartbeat(SESSION), "03 01 27 01 09 7e a1 c0 de 5a 59 10 80 00"),
    FrameVector("ACK up to 7", 0x10, Ack(7), "03 01 a1 02 10 06 07 b5 9b f2 f3 00"),
    FrameVector("RESEND from 3", 0x11, Resend(3), "03 01 a2 02 11 06 03 f4 94 26 0d 00"),
    FrameVector("RESEND all held (0)", 0x12, Resend(0), "03 01 a2 02 12 01 05 6f db c9 ee 00"),
    FrameVector("COUNT_REQUEST", 0x13, CountRequest(), "03 01 a3 06 13 c6 78 1a 9e 00"),
    FrameVector("RESET", 0x14, Reset(), "03 01 a4 06 14 5d 53 99 b8 00"),
)

#: A TUBE declaring 101 chips and carrying 101 distinct UIDs: refused for the count alone.
_TOO_MANY = (
    "03 01 22 ff 08 02 65 e0 04 01 50 12 34 56 01 e0 04 01 50 12 34 56 02 e0 04 01 50 12 34 56 03 e0 "
    "04 01 50 12 34 56 04 e0 04 01 50 12 34 56 05 e0 04 01 50 12 34 56 06 e0 04 01 50 12 34 56 07 e0 "
    "04 01 50 12 34 56 08 e0 04 01 50 12 34 56 09 e0 04 01 50 12 34 56 0a e0 04 01 50 12 34 56 0b e0 "
    "04 01 50 12 34 56 0c e0 04 01 50 12 34 56 0d e0 04 01 50 12 34 56 0e e0 04 01 50 12 34 56 0f e0 "
    "04 01 50 12 34 56 10 e0 04 01 50 12 34 56 11 e0 04 01 50 12 34 56 12 e0 04 01 50 12 34 56 13 e0 "
    "04 01 50 12 34 56 14 e0 04 01 50 12 34 56 15 e0 04 01 50 12 34 56 16 e0 04 01 50 12 34 56 17 e0 "
    "04 01 50 12 34 56 18 e0 04 01 50 12 34 56 19 e0 04 01 50 12 34 56 1a e0 04 01 50 12 34 56 1b e0 "
    "04 01 50 12 34 56 1c e0 04 01 50 12 34 56 1d e0 04 01 50 12 34 56 1e e0 04 01 50 12 34 56 1f e0 "
    "04 01 ff 50 12 34 56 20 e0 04 01 50 12 34 56 21 e0 04 01 50 12 34 56 22 e0 04 01 50 12 34 56 23 "
    "e0 04 01 50 12 34 56 24 e0 04 01 50 12 34 56 25 e0 04 01 50 12 34 56 26 e0 04 01 50 12 34 56 27 "
    "e0 04 01 50 12 34 56 28 e0 04 01 50 12 34 56 29 e0 04 01 50 12 34 56 2a e0 04 01 50 12 34 56 2b "
    "e0 04 01 50 12 34 56 2c e0 04 01 50 12 34 56 2d e0 04 01 50 12 34 56 2e e0 04 01 50 12 34 56 2f "
    "e0 04 01 50 12 34 56 30 e0 04 01 50 12 34 56 31 e0 04 01 50 12 34 56 32 e0 04 01 50 12 34 56 33 "
    "e0 04 01 50 12 34 56 34 e0 04 01 50 12 34 56 35 e0 04 01 50 12 34 56 36 e0 04 01 50 12 34 56 37 "
    "e0 04 01 50 12 34 56 38 e0 04 01 50 12 34 56 39 e0 04 01 50 12 34 56 3a e0 04 01 50 12 34 56 3b "
    "e0 04 01 50 12 34 56 3c e0 04 01 50 12 34 56 3d e0 04 01 50 12 34 56 3e e0 04 01 50 12 34 56 3f "
    "e0 ff 04 01 50 12 34 56 40 e0 04 01 50 12 34 56 41 e0 04 01 50 12 34 56 42 e0 04 01 50 12 34 56 "
    "43 e0 04 01 50 12 34 56 44 e0 04 01 50 12 34 56 45 e0 04 01 50 12 34 56 46 e0 04 01 50 12 34 56 "
    "47 e0 04 01 50 12 34 56 48 e0 04 01 50 12 34 56 49 e0 04 01 50 12 34 56 4a e0 04 01 50 12 34 56 "
    "4b e0 04 01 50 12 34 56 4c e0 04 01 50 12 34 56 4d e0 04 01 50 12 34 56 4e e0 04 01 50 12 34 56 "
    "4f e0 04 01 50 12 34 56 50 e0 04 01 50 12 34 56 51 e0 04 01 50 12 34 56 52 e0 04 01 50 12 34 56 "
    "53 e0 04 01 50 12 34 56 54 e0 04 01 50 12 34 56 55 e0 04 01 50 12 34 56 56 e0 04 01 50 12 34 56 "
    "57 e0 04 01 50 12 34 56 58 e0 04 01 50 12 34 56 59 e0 04 01 50 12 34 56 5a e0 04 01 50 12 34 56 "
    "5b e0 04 01 50 12 34 56 5c e0 04 01 50 12 34 56 5d e0 04 01 50 12 34 56 5e e0 04 01 50 12 34 56 "
    "36 5f e0 04 01 50 12 34 56 60 e0 04 01 50 12 34 56 61 e0 04 01 50 12 34 56 62 e0 04 01 50 12 34 "
    "56 63 e0 04 01 50 12 34 56 64 e0 04 01 50 12 34 56 65 d4 0d c4 6e 00"
)

#: Single frames that are not canonical encodings: the tray decoder's rules, one case each.
SINGLE: tuple[StreamVector, ...] = (
    StreamVector(
        "extra payload bytes after the UIDs are ignored (additive fields)",
        "03 01 22 12 08 03 01 e0 04 01 50 12 34 56 78 55 aa 54 06 09 65 00",
        ((8, TubeReport(3, (UID_15693,))),),
    ),
    StreamVector(
        "STATUS reserved bits 6-7 set: kept, not refused",
        "03 01 26 07 08 e0 16 c8 46 3f 00",
        ((8, TrayStatus(TrayFlags(0xE0))),),
    ),
    StreamVector(
        "CRC mismatch (tube byte damaged)",
        "03 01 22 0c 02 04 02 e0 04 01 50 12 34 56 78 01 01 01 09 a1 b2 c3 d4 28 c3 73 a7 00",
        (RejectReason.BAD_CRC,),
    ),
    StreamVector(
        "TUBE tube 0", "03 01 22 02 08 0e 01 e0 04 01 50 12 34 56 78 dd b3 5f 91 00", (RejectReason.BAD_PAYLOAD,)
    ),
    StreamVector(
        "TUBE tube 17", "03 01 22 10 08 11 01 e0 04 01 50 12 34 56 78 15 df b5 47 00", (RejectReason.BAD_PAYLOAD,)
    ),
    StreamVector(
        "TUBE declares 2 UIDs, carries 1",
        "03 01 22 10 08 03 02 e0 04 01 50 12 34 56 78 0f 09 d8 57 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "TUBE with the same UID twice",
        "03 01 22 18 08 03 02 e0 04 01 50 12 34 56 78 e0 04 01 50 12 34 56 78 e8 2f 62 15 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "TUBE payload cut short (no count byte)", "03 01 22 07 08 03 a0 a9 62 aa 00", (RejectReason.BAD_PAYLOAD,)
    ),
    StreamVector("TUBE with 101 chips (too many)", _TOO_MANY, (RejectReason.BAD_PAYLOAD,)),
    StreamVector(
        "HELLO tubes 0",
        "03 01 21 15 01 01 7e a1 c0 de 05 31 2e 32 2e 30 07 43 54 2d 30 30 30 37 05 a0 9f 77 32 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "HELLO tubes 17",
        "03 01 21 1a 01 01 7e a1 c0 de 05 31 2e 32 2e 30 07 43 54 2d 30 30 30 37 11 ca 2f 57 c0 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "HELLO without its tubes byte",
        "03 01 21 19 01 01 7e a1 c0 de 05 31 2e 32 2e 30 07 43 54 2d 30 30 30 37 9a ff 3a c6 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "HELLO firmware version of 33 bytes",
        "03 01 21 36 01 01 7e a1 c0 de 21 31 2e 32 2e 30 2d 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78 "
        "78 78 78 78 78 78 78 78 78 07 43 54 2d 30 30 30 37 08 68 2a 0c ae 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "HELLO serial padded with NUL bytes (not printable)",
        "03 01 21 15 01 01 7e a1 c0 de 05 31 2e 32 2e 30 09 43 54 2d 30 30 30 37 01 06 08 3e 65 a1 ba 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector("SNAPSHOT_END cut short", "03 01 24 02 08 06 05 30 a6 5e f5 00", (RejectReason.BAD_PAYLOAD,)),
    StreamVector(
        "version 2",
        "03 02 22 10 08 03 01 e0 04 01 50 12 34 56 78 4a e5 c1 49 00",
        (RejectReason.UNSUPPORTED_VERSION,),
    ),
    StreamVector("unknown type 0x25", "03 01 25 06 08 a9 a5 b4 40 00", (RejectReason.UNKNOWN_TYPE,)),
    StreamVector(
        "a bet-spot reader's SPOT frame (type 0x12)",
        "03 01 12 04 03 03 01 05 7c ed 57 ac 00",
        (RejectReason.UNKNOWN_TYPE,),
    ),
    StreamVector(
        "a bet-spot reader's HEARTBEAT frame (type 0x17)",
        "03 01 17 0a 07 5e a7 b0 a7 e2 43 0a 20 00",
        (RejectReason.UNKNOWN_TYPE,),
    ),
    StreamVector(
        "a bet-spot reader's WINDOW frame (type 0x93)", "03 01 93 07 13 01 42 5f e1 e3 00", (RejectReason.UNKNOWN_TYPE,)
    ),
    StreamVector(
        "a shoe's CARD frame (type 0x02)", "03 01 02 08 02 0a 48 81 32 d4 20 00", (RejectReason.UNKNOWN_TYPE,)
    ),
)

#: The tray's frames on the bet-spot reader's port: what a reader-side decoder must report.
ON_READER_PORT: tuple[StreamVector, ...] = (
    StreamVector("the tray's HELLO (type 0x21)", FRAMES[0].wire, (RejectReason.UNKNOWN_TYPE,)),
    StreamVector("the tray's TUBE (type 0x22)", FRAMES[1].wire, (RejectReason.UNKNOWN_TYPE,)),
    StreamVector("the tray's HEARTBEAT (type 0x27)", FRAMES[10].wire, (RejectReason.UNKNOWN_TYPE,)),
    StreamVector("the table's COUNT_REQUEST to a tray (type 0xA3)", FRAMES[15].wire, (RejectReason.UNKNOWN_TYPE,)),
)

#: The tray's frames on the shoe's port: what a shoe-side decoder must report.
ON_SHOE_PORT: tuple[StreamVector, ...] = (
    StreamVector("the tray's TUBE (type 0x22)", FRAMES[1].wire, (RejectReason.UNKNOWN_TYPE,)),
    StreamVector("the tray's HEARTBEAT (type 0x27)", FRAMES[10].wire, (RejectReason.UNKNOWN_TYPE,)),
)


@dataclass(frozen=True, slots=True)
class ExampleStep:
    """One frame of the worked example: when (seconds since the tray's boot), who sends it, the frame, and what
    the receiver does."""

    at: float
    sender: str  # "tray" or "table"
    frame: FrameVector
    note: str = ""


#: The float of the worked example (UIDs the table's chip registry knows): 25.00 chips and 100.00 chips.
CHIPS_25 = tuple(0xE004015025000001 + i for i in range(5))
CHIPS_100 = (0xE004015010000001, 0xE004015010000002)

#: The worked example of ``docs/tray.md``: a tray boots and reports its float, then a coup is paid: two losing
#: chips go into tube 4, one chip comes out of tube 5 for a winner. The frames are exactly what the sessions
#: (``ShoeSession``, ``ControllerSession`` with ``dialect=TRAY``) send for these events at these times.
EXAMPLE: tuple[ExampleStep, ...] = (
    ExampleStep(0.0, "tray", FRAMES[0], "boot: HELLO is event 1 (an 8-tube tray)"),
    ExampleStep(
        0.0,
        "tray",
        FrameVector(
            "HEARTBEAT, latest event 1", 1, TrayHeartbeat(SESSION), "03 01 27 0a 01 7e a1 c0 de 67 39 39 30 00"
        ),
        "at once after HELLO; the link is up",
    ),
    ExampleStep(
        0.1,
        "tray",
        FrameVector("STATUS lid open", 2, TrayStatus(TrayFlags.LID_OPEN), "03 01 26 07 02 20 77 43 6c 05 00"),
        "a flag is set at HELLO: the lid is open (the table is in play)",
    ),
    ExampleStep(
        0.1,
        "tray",
        FrameVector("SNAPSHOT_BEGIN 1", 3, TraySnapshotBegin(1), "03 01 23 02 03 06 01 89 be a9 1d 00"),
        "the full snapshot that follows every HELLO",
    ),
    ExampleStep(
        0.1,
        "tray",
        FrameVector(
            "TUBE 4, three chips",
            4,
            TubeReport(4, CHIPS_25[:3]),
            "03 01 22 09 04 04 03 e0 04 01 50 25 01 07 01 e0 04 01 50 25 01 07 02 e0 04 01 50 25 01 06 03 "
            "86 b5 5c 19 00",
        ),
        "three 25.00 chips (the registry gives the values)",
    ),
    ExampleStep(
        0.1,
        "tray",
        FrameVector(
            "TUBE 5, two chips",
            5,
            TubeReport(5, CHIPS_100),
            "03 01 22 09 05 05 02 e0 04 01 50 10 01 07 01 e0 04 01 50 10 01 06 02 98 a0 8c 18 00",
        ),
        "two 100.00 chips",
    ),
    ExampleStep(
        0.1,
        "tray",
        FrameVector("SNAPSHOT_END 1, two tubes", 6, TraySnapshotEnd(1, 2), "03 01 24 02 06 02 01 06 02 f2 f6 3c c3 00"),
        "two reports since SNAPSHOT_BEGIN 1: the snapshot stands; every other tube is empty; the tray holds 275.00",
    ),
    ExampleStep(
        0.12,
        "table",
        FrameVector("ACK up to 6", 0, Ack(6), "03 01 a1 01 01 06 06 de ba 61 15 00"),
        "after the journal committed events 1-6 (the snapshot's TUBEs with its SNAPSHOT_END)",
    ),
    ExampleStep(
        20.4,
        "tray",
        FrameVector(
            "TUBE 4, four chips",
            7,
            TubeReport(4, CHIPS_25[:4]),
            "03 01 22 09 07 04 04 e0 04 01 50 25 01 07 01 e0 04 01 50 25 01 07 02 e0 04 01 50 25 01 07 03 "
            "e0 04 01 50 25 01 06 04 89 5d fb 97 00",
        ),
        "Player won at 20.0 s; the dealer takes seat 2's losing Banker wager (two 25.00 chips) and drops the first "
        "into tube 4; the tube reads the same for the tray's debounce: reported. The table does not compare yet",
    ),
    ExampleStep(
        20.42,
        "table",
        FrameVector("ACK up to 7", 1, Ack(7), "03 01 a1 02 01 06 07 a8 7f 3b b4 00"),
        "committed",
    ),
    ExampleStep(
        20.9,
        "tray",
        FrameVector(
            "TUBE 4, five chips",
            8,
            TubeReport(4, CHIPS_25),
            "03 01 22 09 08 04 05 e0 04 01 50 25 01 07 01 e0 04 01 50 25 01 07 02 e0 04 01 50 25 01 07 03 "
            "e0 04 01 50 25 01 07 04 e0 04 01 50 25 01 06 05 fa bf 98 ed 00",
        ),
        "the second losing chip: the tube's whole set again, not the difference",
    ),
    ExampleStep(
        20.92,
        "table",
        FrameVector("ACK up to 8", 2, Ack(8), "03 01 a1 02 02 06 08 3a 86 98 7c 00"),
        "committed",
    ),
    ExampleStep(
        22.1,
        "tray",
        FrameVector(
            "TUBE 5, one chip",
            9,
            TubeReport(5, CHIPS_100[1:]),
            "03 01 22 09 09 05 01 e0 04 01 50 10 01 06 02 2f 4e ac 22 00",
        ),
        "the dealer takes a 100.00 chip out of tube 5 to pay seat 5's winning Player wager",
    ),
    ExampleStep(
        22.12,
        "table",
        FrameVector("ACK up to 9", 3, Ack(9), "03 01 a1 02 03 06 09 4c 43 c2 dd 00"),
        "committed",
    ),
    ExampleStep(
        25.0,
        "tray",
        FrameVector(
            "HEARTBEAT, latest event 9", 9, TrayHeartbeat(SESSION), "03 01 27 0a 09 7e a1 c0 de 57 49 72 f1 00"
        ),
        "every second; nothing is missing. At 24.1 s, no TUBE for 2.0 s, the table compared the tray: 225.00 "
        "counted, 225.00 expected (275.00, plus 50.00 taken, less 100.00 paid): square",
    ),
)


def example_markdown() -> str:
    """The worked example's table exactly as it appears in ``docs/tray.md``."""
    lines = ["| # | t (s) | from | seq | message | wire (hex) | what happens |", "|---|---|---|---|---|---|---|"]
    for index, step in enumerate(EXAMPLE, 1):
        v = step.frame
        lines.append(
            f"| {index} | {step.at:.2f} | {step.sender} | {v.seq} | `{_cell(repr(v.message))}` | `{v.wire}` "
            f"| {_cell(step.note)} |"
        )
    return "\n".join(lines) + "\n"


def _rules(vectors: tuple[StreamVector, ...]) -> list[str]:
    lines = ["| decoder rule | wire (hex) | events |", "|---|---|---|"]
    for v in vectors:
        events = "; ".join(_outcome_text(o) for o in v.outcomes)
        lines.append(f"| {_cell(v.name)} | `{v.wire}` | {_cell(events)} |")
    return lines


def markdown() -> str:
    """The vector tables exactly as they appear in ``docs/tray.md``."""
    lines = ["| vector | seq | message | wire (hex, delimiter included) |", "|---|---|---|---|"]
    lines += [f"| {v.name} | {v.seq} | `{_cell(repr(v.message))}` | `{v.wire}` |" for v in FRAMES]
    lines += [
        "",
        "Decoder rules: what a tray-side decoder (the table's, or the tray's) must report for these bytes:",
        "",
    ]
    lines += _rules(SINGLE)
    lines += ["", "The tray's frames on the bet-spot reader's port:", ""]
    lines += _rules(ON_READER_PORT)
    lines += ["", "The tray's frames on the shoe's port:", ""]
    lines += _rules(ON_SHOE_PORT)
    return "\n".join(lines) + "\n"
