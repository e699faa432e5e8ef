"""The bet-spot reader's test vectors, as data: the one source for ``docs/spots.md`` and the tests.

Shaped like :mod:`firmware_protocol.vectors` (the shoe's): the hex is literal, not computed, so a change to
the encoder that alters the wire is caught, and :func:`markdown` renders the tables that ``docs/spots.md``
contains verbatim (a test checks), so the document and the code cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from .framing import RejectReason
from .messages import Ack, Resend, Reset
from .spots import (
    DEALER_POSITION,
    CardIn,
    CardOut,
    ReaderFlags,
    ReaderHeartbeat,
    ReaderHello,
    ReaderStatus,
    SnapshotBegin,
    SnapshotEnd,
    SpotCode,
    SpotReport,
    Window,
    WindowState,
)
from .vectors import FrameVector, StreamVector, _cell, _outcome_text

SESSION = 0x5EA7B0A7
#: A UID as an ISO 15693 tag gives it, and a 4-byte ISO 14443 UID right-aligned and zero-padded to 8 bytes.
UID_15693 = 0xE004015012345678
UID_14443 = 0x00000000A1B2C3D4
#: A 7-byte ISO 14443 UID (a staff badge), right-aligned and zero-padded to 8 bytes.
UID_BADGE = 0x0004A1B2C3D4E5F6

_SPOTS = (
    SpotCode.BANKER,
    SpotCode.PLAYER,
    SpotCode.TIE,
    SpotCode.PLAYER_PAIR,
    SpotCode.BANKER_PAIR,
    SpotCode.COMMISSION,
)

FRAMES: tuple[FrameVector, ...] = (
    FrameVector(
        "HELLO, seats 1-7, six spots each",
        1,
        ReaderHello("2.0.1", "SR-0042", 1, SESSION, (1, 2, 3, 4, 5, 6, 7), _SPOTS),
        "03 01 11 15 01 01 5e a7 b0 a7 05 32 2e 30 2e 31 07 53 52 2d 30 30 34 32 08 7f 02 1f dc 8a 98 d7 00",
    ),
    FrameVector(
        "SPOT seat 3 banker, two chips (an 8-byte UID and a 4-byte one)",
        2,
        SpotReport(3, SpotCode.BANKER, (UID_15693, UID_14443)),
        "03 01 12 0d 02 03 01 02 e0 04 01 50 12 34 56 78 01 01 01 09 a1 b2 c3 d4 92 42 52 24 00",
    ),
    FrameVector(
        "SPOT seat 3 banker, now empty", 3, SpotReport(3, SpotCode.BANKER, ()), "03 01 12 04 03 03 01 05 7c ed 57 ac 00"
    ),
    FrameVector("SNAPSHOT_BEGIN 7", 4, SnapshotBegin(7), "03 01 13 02 04 06 07 c4 b3 a2 2b 00"),
    FrameVector(
        "SPOT seat 1 commission box, one chip",
        5,
        SpotReport(1, SpotCode.COMMISSION, (0xE004015012340001,)),
        "03 01 12 0b 05 01 0a 01 e0 04 01 50 12 34 06 01 9a 25 f3 46 00",
    ),
    FrameVector("SNAPSHOT_END 7, one spot reported", 6, SnapshotEnd(7, 1), "03 01 14 02 06 02 07 06 01 c7 11 b4 99 00"),
    FrameVector("STATUS antenna fault", 7, ReaderStatus(ReaderFlags.ANTENNA_FAULT), "03 01 16 07 07 01 b6 76 70 bf 00"),
    FrameVector("HEARTBEAT, latest event 7", 7, ReaderHeartbeat(SESSION), "03 01 17 0a 07 5e a7 b0 a7 e2 43 0a 20 00"),
    FrameVector("HEARTBEAT, no event yet", 0, ReaderHeartbeat(SESSION), "03 01 17 01 09 5e a7 b0 a7 50 63 d6 30 00"),
    FrameVector(
        "CARD_IN seat 3, a player's card (a 4-byte UID)",
        8,
        CardIn(3, UID_14443),
        "03 01 19 03 08 03 01 01 01 09 a1 b2 c3 d4 3b 6d f2 05 00",
    ),
    FrameVector(
        "CARD_OUT seat 3, the same card taken out",
        9,
        CardOut(3, UID_14443),
        "03 01 1a 03 09 03 01 01 01 09 a1 b2 c3 d4 a3 31 4b cb 00",
    ),
    FrameVector(
        "CARD_IN at the dealer's position (position 0), a badge (a 7-byte UID)",
        10,
        CardIn(DEALER_POSITION, UID_BADGE),
        "03 01 19 02 0a 01 0c 04 a1 b2 c3 d4 e5 f6 81 d6 e9 0b 00",
    ),
    FrameVector("ACK up to 7", 0x10, Ack(7), "03 01 91 02 10 06 07 14 ba 4a 75 00"),
    FrameVector("RESEND from 3", 0x11, Resend(3), "03 01 92 02 11 06 03 55 b5 9e 8b 00"),
    FrameVector("RESEND all held (0)", 0x12, Resend(0), "03 01 92 02 12 01 05 ce fa 71 68 00"),
    FrameVector("WINDOW locked", 0x13, Window(WindowState.LOCKED), "03 01 93 07 13 01 42 5f e1 e3 00"),
    FrameVector("RESET", 0x14, Reset(), "03 01 94 06 14 79 38 7c 28 00"),
)

_TOO_MANY = (
    "03 01 12 0c 08 02 01 31 e0 04 01 50 12 34 56 ff e0 04 01 50 12 34 56 01 e0 04 01 50 12 34 56 02 "
    "e0 04 01 50 12 34 56 03 e0 04 01 50 12 34 56 04 e0 04 01 50 12 34 56 05 e0 04 01 50 12 34 56 06 "
    "e0 04 01 50 12 34 56 07 e0 04 01 50 12 34 56 08 e0 04 01 50 12 34 56 09 e0 04 01 50 12 34 56 0a "
    "e0 04 01 50 12 34 56 0b e0 04 01 50 12 34 56 0c e0 04 01 50 12 34 56 0d e0 04 01 50 12 34 56 0e "
    "e0 04 01 50 12 34 56 0f e0 04 01 50 12 34 56 10 e0 04 01 50 12 34 56 11 e0 04 01 50 12 34 56 12 "
    "e0 04 01 50 12 34 56 13 e0 04 01 50 12 34 56 14 e0 04 01 50 12 34 56 15 e0 04 01 50 12 34 56 16 "
    "e0 04 01 50 12 34 56 17 e0 04 01 50 12 34 56 18 e0 04 01 50 12 34 56 19 e0 04 01 50 12 34 56 1a "
    "e0 04 01 50 12 34 56 1b e0 04 01 50 12 34 56 1c e0 04 01 50 12 34 56 1d e0 04 01 50 12 34 56 1e "
    "e0 04 01 50 12 34 56 1f e0 04 01 50 12 34 87 56 20 e0 04 01 50 12 34 56 21 e0 04 01 50 12 34 56 "
    "22 e0 04 01 50 12 34 56 23 e0 04 01 50 12 34 56 24 e0 04 01 50 12 34 56 25 e0 04 01 50 12 34 56 "
    "26 e0 04 01 50 12 34 56 27 e0 04 01 50 12 34 56 28 e0 04 01 50 12 34 56 29 e0 04 01 50 12 34 56 "
    "2a e0 04 01 50 12 34 56 2b e0 04 01 50 12 34 56 2c e0 04 01 50 12 34 56 2d e0 04 01 50 12 34 56 "
    "2e e0 04 01 50 12 34 56 2f e0 04 01 50 12 34 56 30 e2 c8 3a cb 00"
)

#: Single frames that are not canonical encodings: the decoder's rules, one case each.
SINGLE: tuple[StreamVector, ...] = (
    StreamVector(
        "extra payload bytes after the UIDs are ignored (additive fields)",
        "03 01 12 13 08 03 01 01 e0 04 01 50 12 34 56 78 55 aa 21 f3 42 a7 00",
        ((8, SpotReport(3, SpotCode.BANKER, (UID_15693,))),),
    ),
    StreamVector(
        "CRC mismatch (seat byte damaged)",
        "03 01 12 0d 02 04 01 02 e0 04 01 50 12 34 56 78 01 01 01 09 a1 b2 c3 d4 92 42 52 24 00",
        (RejectReason.BAD_CRC,),
    ),
    StreamVector(
        "SPOT seat 0",
        "03 01 12 02 08 0f 01 01 e0 04 01 50 12 34 56 78 f8 dc e5 d5 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "SPOT seat 15",
        "03 01 12 11 08 0f 01 01 e0 04 01 50 12 34 56 78 6b 24 11 13 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "SPOT spot code 11 (unknown)",
        "03 01 12 11 08 03 0b 01 e0 04 01 50 12 34 56 78 76 1c 13 1d 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "SPOT declares 2 UIDs, carries 1",
        "03 01 12 11 08 03 01 02 e0 04 01 50 12 34 56 78 58 b3 bf 11 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "SPOT with the same UID twice",
        "03 01 12 19 08 03 01 02 e0 04 01 50 12 34 56 78 e0 04 01 50 12 34 56 78 78 ae f8 dc 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector("SPOT with 49 chips (too many)", _TOO_MANY, (RejectReason.BAD_PAYLOAD,)),
    StreamVector(
        "HELLO seat mask naming seat 15",
        "03 01 11 0d 01 01 5e a7 b0 a7 01 41 01 42 40 01 06 01 6f c8 4b 84 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "HELLO spot mask naming spot code 12",
        "03 01 11 0b 01 01 5e a7 b0 a7 01 41 01 42 03 01 08 05 4b 02 a9 27 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "version 2",
        "03 02 12 11 08 03 01 01 e0 04 01 50 12 34 56 78 70 43 e9 ad 00",
        (RejectReason.UNSUPPORTED_VERSION,),
    ),
    StreamVector(
        "CARD_IN position 15 (no such seat)",
        "03 01 19 03 08 0f 01 01 01 09 a1 b2 c3 d4 dd 59 01 11 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "CARD_OUT position 255",
        "03 01 1a 03 08 ff 01 01 01 09 a1 b2 c3 d4 3c 31 10 7b 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "CARD_IN with a 4-byte UID not padded to 8 (short payload)",
        "03 01 19 0b 08 03 a1 b2 c3 d4 6b 11 14 0e 00",
        (RejectReason.BAD_PAYLOAD,),
    ),
    StreamVector(
        "extra payload bytes after a CARD_OUT's UID are ignored",
        "03 01 1a 03 08 03 01 01 01 0b a1 b2 c3 d4 55 aa e2 b3 88 db 00",
        ((8, CardOut(3, UID_14443)),),
    ),
    StreamVector("unknown type 0x18", "03 01 18 06 08 85 16 c2 83 00", (RejectReason.UNKNOWN_TYPE,)),
    StreamVector(
        "a shoe's CARD frame (type 0x02)", "03 01 02 08 08 0a 48 8c a5 51 f6 00", (RejectReason.UNKNOWN_TYPE,)
    ),
    StreamVector(
        "a shoe's HEARTBEAT frame (type 0x07)",
        "03 01 07 0a 08 5e a7 b0 a7 07 cd 01 3f 00",
        (RejectReason.UNKNOWN_TYPE,),
    ),
)


@dataclass(frozen=True, slots=True)
class ExampleStep:
    """One frame of the worked example session: who sends it, the frame, whether the line loses it, and
    what the receiver does."""

    sender: str  # "reader" or "table"
    frame: FrameVector
    lost: bool = False
    note: str = ""


_CHIP_T1 = 0xE004015012340001
_CHIP_T2 = 0xE004015012340002

#: The worked example of ``docs/spots.md``: a reader boots, reports its snapshot, a bet is lost on the wire
#: and recovered, the window locks. The table's frames are exactly what ``controller.table.spot_wire`` writes.
EXAMPLE: tuple[ExampleStep, ...] = (
    ExampleStep("reader", FRAMES[0], note="boot: HELLO is event 1; the table journals it (`reader_hello`)"),
    ExampleStep(
        "reader",
        FrameVector(
            "HEARTBEAT, latest event 1", 1, ReaderHeartbeat(SESSION), "03 01 17 0a 01 5e a7 b0 a7 6d 03 ff 80 00"
        ),
        note="at once after HELLO; the link is up",
    ),
    ExampleStep(
        "reader",
        FrameVector("SNAPSHOT_BEGIN 1", 2, SnapshotBegin(1), "03 01 13 02 02 06 01 29 5d 7b ac 00"),
        note="the full snapshot that follows every HELLO",
    ),
    ExampleStep(
        "reader",
        FrameVector(
            "SPOT seat 3 banker, two chips",
            3,
            SpotReport(3, SpotCode.BANKER, (UID_15693, UID_14443)),
            "03 01 12 0d 03 03 01 02 e0 04 01 50 12 34 56 78 01 01 01 09 a1 b2 c3 d4 f7 25 69 62 00",
        ),
        note="the only occupied spot",
    ),
    ExampleStep(
        "reader",
        FrameVector("SNAPSHOT_END 1, one spot", 4, SnapshotEnd(1, 1), "03 01 14 02 04 02 01 06 01 b9 5c 9b 4b 00"),
        note="one report since SNAPSHOT_BEGIN 1: the snapshot stands; every other spot is empty",
    ),
    ExampleStep(
        "table",
        FrameVector("ACK up to 4", 0, Ack(4), "03 01 91 01 01 06 04 91 95 b8 bf 00"),
        note="after the journal committed events 1-4 (cumulative)",
    ),
    ExampleStep(
        "table",
        FrameVector("WINDOW open", 1, Window(WindowState.OPEN), "03 01 93 02 01 05 4d ac a1 a6 00"),
        note="bets may be placed",
    ),
    ExampleStep(
        "reader",
        FrameVector(
            "SPOT seat 5 tie, one chip",
            5,
            SpotReport(5, SpotCode.TIE, (_CHIP_T1,)),
            "03 01 12 0b 05 05 03 01 e0 04 01 50 12 34 06 01 d6 e9 ab 0e 00",
        ),
        lost=True,
        note="a chip placed on seat 5's tie, stable for two read cycles; the frame is lost on the wire",
    ),
    ExampleStep(
        "reader",
        FrameVector(
            "SPOT seat 5 player, one chip",
            6,
            SpotReport(5, SpotCode.PLAYER, (_CHIP_T2,)),
            "03 01 12 0b 06 05 02 01 e0 04 01 50 12 34 06 02 d7 bc 43 7a 00",
        ),
        note="the table expected event 5: a gap; this one is dropped",
    ),
    ExampleStep(
        "table",
        FrameVector("RESEND from 5", 2, Resend(5), "03 01 92 02 02 06 05 a2 b6 26 97 00"),
        note="sent at once, repeated every 500 ms while the gap lasts",
    ),
    ExampleStep(
        "reader",
        FrameVector(
            "SPOT seat 5 tie, one chip (resent)",
            5,
            SpotReport(5, SpotCode.TIE, (_CHIP_T1,)),
            "03 01 12 0b 05 05 03 01 e0 04 01 50 12 34 06 01 d6 e9 ab 0e 00",
        ),
        note="the reader serves the RESEND at once: every held event from 5 on",
    ),
    ExampleStep(
        "reader",
        FrameVector(
            "SPOT seat 5 player, one chip (resent)",
            6,
            SpotReport(5, SpotCode.PLAYER, (_CHIP_T2,)),
            "03 01 12 0b 06 05 02 01 e0 04 01 50 12 34 06 02 d7 bc 43 7a 00",
        ),
        note="both spots are now known to the table, in order",
    ),
    ExampleStep(
        "table",
        FrameVector("ACK up to 6", 3, Ack(6), "03 01 91 02 03 06 06 7d dd 67 ca 00"),
        note="after the journal committed events 5 and 6",
    ),
    ExampleStep(
        "table",
        FrameVector("WINDOW locked", 4, Window(WindowState.LOCKED), "03 01 93 07 04 01 47 dc 65 75 00"),
        note="the coup's first card is out: the spots' values now are the coup's wagers",
    ),
    ExampleStep(
        "reader",
        FrameVector(
            "HEARTBEAT, latest event 6", 6, ReaderHeartbeat(SESSION), "03 01 17 0a 06 5e a7 b0 a7 df 23 23 90 00"
        ),
        note="every second; nothing is missing",
    ),
)


def example_markdown() -> str:
    """The worked example's table exactly as it appears in ``docs/spots.md``."""
    lines = ["| # | from | seq | message | wire (hex) | what happens |", "|---|---|---|---|---|---|"]
    for index, step in enumerate(EXAMPLE, 1):
        v = step.frame
        sender = f"{step.sender} (lost)" if step.lost else step.sender
        lines.append(f"| {index} | {sender} | {v.seq} | `{_cell(repr(v.message))}` | `{v.wire}` | {_cell(step.note)} |")
    return "\n".join(lines) + "\n"


def markdown() -> str:
    """The vector tables exactly as they appear in ``docs/spots.md``."""
    lines = ["| vector | seq | message | wire (hex, delimiter included) |", "|---|---|---|---|"]
    lines += [f"| {v.name} | {v.seq} | `{_cell(repr(v.message))}` | `{v.wire}` |" for v in FRAMES]
    lines += [
        "",
        "Decoder rules: what a reader-side table must report for these bytes:",
        "",
        "| decoder rule | wire (hex) | events |",
        "|---|---|---|",
    ]
    for v in SINGLE:
        events = "; ".join(_outcome_text(o) for o in v.outcomes)
        lines.append(f"| {_cell(v.name)} | `{v.wire}` | {_cell(events)} |")
    return "\n".join(lines) + "\n"
