"""The messages of the binary dialect, as frozen dataclasses, and their wire codes.

Shoe to controller: :class:`Hello`, :class:`CardRead`, :class:`Unreadable`, :class:`CutCard`,
:class:`ButtonPressed`, :class:`Status`, :class:`Heartbeat`.
Controller to shoe: :class:`Ack`, :class:`Resend`, :class:`Prompt`, :class:`Reset`.

Byte layouts are in ``docs/protocol.md``; their codecs and the shoe's dialect are
:mod:`firmware_protocol.binary`, the frame around them :mod:`firmware_protocol.framing`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, IntFlag

#: The protocol version this package speaks.
PROTOCOL_VERSION = 1

SUITS = ("S", "H", "D", "C")
RANK_SYMBOLS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")


class MessageType(IntEnum):
    """Wire code of each message type. Shoe-to-controller codes are below 0x80."""

    HELLO = 0x01
    CARD = 0x02
    UNREADABLE = 0x03
    CUT_CARD = 0x04
    BUTTON = 0x05
    STATUS = 0x06
    HEARTBEAT = 0x07
    ACK = 0x81
    RESEND = 0x82
    PROMPT = 0x83
    RESET = 0x84


class Button(IntEnum):
    """Buttons a shoe may carry."""

    DECLARE = 1
    NEW_SHOE = 2
    VOID = 3


class StatusFlags(IntFlag):
    """Shoe condition flags carried by STATUS."""

    NONE = 0
    LID_OPEN = 0x01
    JAM = 0x02
    EMPTY = 0x04
    READER_FAULT = 0x08
    LOW_POWER = 0x10


class Due(IntEnum):
    """What the controller says is due now (PROMPT). A shoe may show it or lock its card gate."""

    DEAL = 0  # the first four cards of a coup may be drawn
    PLAYER_THIRD = 1  # the Player's third card is due
    BANKER_THIRD = 2  # the Banker's third card is due
    NOTHING = 3  # no card is due: the coup is complete and awaits the dealer's declare
    SHOE_CLOSED = 4  # no card may be drawn: the shoe has ended or the table is halted
    BURN = 5  # the burn procedure of a new shoe is under way
    HALTED = 6  # the coup is halted (unreadable or foreign card): no card may be drawn; the dealer must VOID


@dataclass(frozen=True, slots=True)
class Hello:
    """Sent by the shoe after boot and after RESET: who it is and which boot session this is."""

    firmware_version: str
    serial_number: str
    protocol_version: int
    session_id: int  # 32-bit, random per boot

    def __post_init__(self) -> None:
        if not 0 <= self.session_id <= 0xFFFFFFFF:
            raise ValueError(f"session_id {self.session_id} outside 32 bits")
        if not 0 <= self.protocol_version <= 0xFF:
            raise ValueError(f"protocol_version {self.protocol_version} outside a byte")
        for name in ("firmware_version", "serial_number"):
            if len(getattr(self, name).encode()) > 32:
                raise ValueError(f"{name} longer than 32 bytes")


@dataclass(frozen=True, slots=True)
class CardRead:
    """A card passed the reader and was identified. ``rank`` 1 (ace) to 13 (king); ``suit`` S/H/D/C."""

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise ValueError(f"rank {self.rank} outside 1-13")
        if self.suit not in SUITS:
            raise ValueError(f"suit {self.suit!r} not one of {', '.join(SUITS)}")

    @property
    def token(self) -> str:
        """Canonical card token (``TH``)."""
        return RANK_SYMBOLS[self.rank - 1] + self.suit


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A card passed the reader but was not identified."""


@dataclass(frozen=True, slots=True)
class CutCard:
    """The cut card came out of the shoe."""


@dataclass(frozen=True, slots=True)
class ButtonPressed:
    """A button on the shoe was pressed."""

    button: Button


@dataclass(frozen=True, slots=True)
class Status:
    """The shoe's condition changed (or is being repeated)."""

    flags: StatusFlags


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Sent every second while the shoe is powered. Carries the boot session id so that a controller that
    restarted learns the session within a second; the frame's seq field carries the latest event sent."""

    session_id: int

    def __post_init__(self) -> None:
        if not 0 <= self.session_id <= 0xFFFFFFFF:
            raise ValueError(f"session_id {self.session_id} outside 32 bits")


@dataclass(frozen=True, slots=True)
class Ack:
    """Controller to shoe: every event up to and including ``up_to`` is committed."""

    up_to: int

    def __post_init__(self) -> None:
        if not 0 <= self.up_to <= 0xFFFF:
            raise ValueError(f"sequence {self.up_to} outside 16 bits")


@dataclass(frozen=True, slots=True)
class Resend:
    """Controller to shoe: send again every unacknowledged event from ``from_seq`` on."""

    from_seq: int

    def __post_init__(self) -> None:
        if not 0 <= self.from_seq <= 0xFFFF:
            raise ValueError(f"sequence {self.from_seq} outside 16 bits")


@dataclass(frozen=True, slots=True)
class Prompt:
    """Controller to shoe: what is due now."""

    due: Due


@dataclass(frozen=True, slots=True)
class Reset:
    """Controller to shoe: reboot the protocol side (new session, sequence restarts, HELLO follows)."""


ShoeMessage = Hello | CardRead | Unreadable | CutCard | ButtonPressed | Status | Heartbeat
ControllerMessage = Ack | Resend | Prompt | Reset
Message = ShoeMessage | ControllerMessage

#: Shoe events that are sequenced, kept until acknowledged and resent (HEARTBEAT is not).
RELIABLE_TYPES: tuple[type, ...] = (Hello, CardRead, Unreadable, CutCard, ButtonPressed, Status)
