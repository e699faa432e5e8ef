"""The ASCII dialect spoken by common card-recognition shoes: one card per text line, sans-I/O.

9600 baud 8N1, one card per line: suit letter then rank, any case (``H10``, ``sK``, ``DA``, ``c7``; ``T``
or ``10`` for ten). Lines end in CR LF; a bare LF or a bare CR also ends a line, and blank lines (empty, or only spaces
and tabs) are idle.
Spaces and tabs around the token are tolerated. Anything else on a line is reported as a
:class:`LineRejected` with the line's raw bytes: this decoder never turns a line that is not a card
token into a card. No checksum, no sequence number, no heartbeat: see ``docs/protocol.md`` for what
that costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .messages import RANK_SYMBOLS, SUITS, CardRead

_RANKS: dict[bytes, int] = {symbol.encode(): rank for rank, symbol in enumerate(RANK_SYMBOLS, start=1)}
_RANKS[b"10"] = 10
_SUIT_BYTES = frozenset(s.encode()[0] for s in SUITS)
_TERMINATORS = b"\r\n"
_BLANKS = b" \t"


class LineRejectReason(Enum):
    """Why a line is not a card."""

    NOT_A_CARD = "not_a_card"  # printable text that is not a card token
    BAD_BYTES = "bad_bytes"  # control or non-ASCII bytes: line noise or a wrong baud rate
    TOO_LONG = "too_long"  # more than max_line bytes before a line end: cut and reported
    TOO_LONG_TAIL = "too_long_tail"  # the rest of a line already reported TOO_LONG


@dataclass(frozen=True, slots=True)
class AsciiCard:
    """A card line. ``raw`` is the line's bytes without its line end."""

    card: CardRead
    raw: bytes


@dataclass(frozen=True, slots=True)
class LineRejected:
    """A line that is not a card. ``raw`` is the line's bytes without its line end."""

    reason: LineRejectReason
    raw: bytes
    detail: str


AsciiEvent = AsciiCard | LineRejected


def parse_card(line: bytes) -> CardRead | None:
    """The card a line names, or ``None``. ``line`` has no line end; surrounding blanks are allowed."""
    token = line.strip(_BLANKS).upper()
    if len(token) < 2 or token[0] not in _SUIT_BYTES:
        return None
    rank = _RANKS.get(token[1:])
    if rank is None:
        return None
    return CardRead(rank, chr(token[0]))


def _classify(line: bytes) -> AsciiEvent:
    card = parse_card(line)
    if card is not None:
        return AsciiCard(card, line)
    if any(b < 0x20 or b > 0x7E for b in line.strip(_BLANKS)):
        return LineRejected(LineRejectReason.BAD_BYTES, line, "control or non-ASCII bytes in the line")
    return LineRejected(LineRejectReason.NOT_A_CARD, line, f"{line.decode('ascii')!r} is not a card token")


class AsciiDecoder:
    """Stream decoder for the ASCII dialect: bytes in, one event per non-blank line out.

    At most ``max_line`` bytes of an unfinished line are kept; a longer line is reported once as TOO_LONG
    (its first bytes in ``raw``) and the rest of it, up to the line end, comes back as TOO_LONG_TAIL
    events (one per :meth:`feed` call). The tail is never parsed as a card."""

    __slots__ = ("_buf", "_discarding", "max_line")

    def __init__(self, max_line: int = 64) -> None:
        if max_line < 3:
            raise ValueError(f"max_line {max_line} cannot hold a card token")
        self.max_line = max_line
        self._buf = b""
        self._discarding = False

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line held now (never more than ``max_line``)."""
        return len(self._buf)

    @property
    def mid_line(self) -> bool:
        """Inside an unfinished line (bytes held, or the rest of an over-long line being dropped)."""
        return bool(self._buf) or self._discarding

    def discard(self) -> bytes:
        """Drop the unfinished line (a stale one: a shoe sends each line at once) and return its bytes."""
        held, self._buf = self._buf, b""
        self._discarding = False
        return held

    def feed(self, data: bytes) -> list[AsciiEvent]:
        """Take bytes from the line; return the events of every line they complete."""
        events: list[AsciiEvent] = []
        data = bytes(data)
        start = 0
        size = len(data)
        while start < size:
            end = _find_terminator(data, start)
            if self._discarding:
                piece = data[start:] if end < 0 else data[start:end]
                if piece:
                    events.append(LineRejected(LineRejectReason.TOO_LONG_TAIL, piece, "rest of an over-long line"))
                if end < 0:
                    return events
                self._discarding = False
                start = end + 1
                continue
            if end < 0:
                self._buf += data[start:]
                if len(self._buf) > self.max_line:
                    events.append(
                        LineRejected(
                            LineRejectReason.TOO_LONG,
                            self._buf,
                            f"more than {self.max_line} bytes without a line end",
                        )
                    )
                    self._buf = b""
                    self._discarding = True
                return events
            line = self._buf + data[start:end]
            self._buf = b""
            start = end + 1
            if len(line) > self.max_line:
                events.append(LineRejected(LineRejectReason.TOO_LONG, line, f"line of {len(line)} bytes"))
            elif line.strip(_BLANKS):
                events.append(_classify(line))
            # else: a blank line (empty, or spaces and tabs only) is idle
        return events


def _find_terminator(data: bytes, start: int) -> int:
    cr = data.find(b"\r", start)
    lf = data.find(b"\n", start)
    if cr < 0:
        return lf
    if lf < 0:
        return cr
    return min(cr, lf)


def encode_card(card: CardRead) -> bytes:
    """The line a shoe sends for ``card``: suit letter, rank (``10`` for ten), CR LF. ``b"H10\\r\\n"``."""
    rank = "10" if card.rank == 10 else RANK_SYMBOLS[card.rank - 1]
    return f"{card.suit}{rank}\r\n".encode("ascii")


def encode_line(text: str) -> bytes:
    """Any text as one line (UTF-8, CR LF appended): for the simulator's faults."""
    return text.encode("utf-8") + _TERMINATORS
