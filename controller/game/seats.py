"""Who is at each seat: the players' cards in the seats' card readers, and their visits. Pure, deterministic.

A table with a bet-spot reader may have a player-card reader at each seat (``docs/spots.md``, section 5.5).
A player inserts a player's card on sitting down and takes it out on leaving; the table knows the card by its
UID only. What this module holds:

* :class:`SeatCard`, the table input: a card arrived at a seat's reader, or left it.
* :func:`player_ref`, what the records carry for a player: the card's UID as 16 upper-case hex digits. It is
  the key of the floor's player registry (the floor maps a card to a player); the table never holds a name.
  A card's UID is not a secret (any reader reads it, as a chip's), so nothing is gained by hashing it at the
  table, and the floor can look a card up by the UID its own card readers (the cage's) read.
* :class:`SeatBook`, the seats' state, with the house's rules:

  * A card in at an empty seat opens a **visit**: :class:`PlayerIn`.
  * The card out ends it: :class:`PlayerOut` with ``reason`` ``card_out``. A card in at a seat that holds
    another card ends the other's visit first (``card_replaced``: its CARD_OUT was lost).
  * A CARD_IN of the card the seat already holds is no news (the reader repeats its cards after each HELLO).
  * **A card left in a reader**: a seat with a visit whose wager spots are all empty at
    ``leave_after_coups`` consecutive locks (coups dealt; the count starts again at each shoe's start, as the
    commission box's) ends the visit: :class:`PlayerOut` with ``reason`` ``seat_empty``. The card stays in
    the reader, and the seat stays empty of players until it is taken out (a CARD_OUT of it then ends
    nothing) or another card comes in.
  * The dealer's position card is staff, not a player: it is never a table input here (it is journaled only).

A new shoe keeps the seats: :meth:`SeatBook.carried` is what a shoe's start record carries (``players``), so a
replay that begins at a shoe's start rebuilds them (:meth:`SeatBook.at_shoe_start`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from controller.game.notice import Notice

__all__ = [
    "ANONYMOUS_PREFIX",
    "LeaveWhy",
    "PlayerIn",
    "PlayerOut",
    "SeatBook",
    "SeatCard",
    "anonymous_player",
    "player_ref",
]

#: How an anonymous player's ``player_ref`` begins: an uncarded player a supervisor rated (the dealer screen's
#: RATE). No card's UID does: the readers report 4- and 7-byte UIDs, which pad to 16 digits with zeros in front.
ANONYMOUS_PREFIX = "FF"

_HEX = frozenset("0123456789ABCDEF")


def _check_uid(uid: str) -> None:
    if len(uid) != 16 or not set(uid) <= _HEX:
        raise ValueError(f"card UID {uid[:20]!r} is not 16 upper-case hex digits")


def anonymous_player(shoe: int, coup: int, seat: int) -> str:
    """The ``player_ref`` of the uncarded player at ``seat`` rated in shoe ``shoe`` at coup ``coup``: ``FF``, the
    shoe (6 hex digits), the coup (4), the seat (2), ``00``; unique at a table (the floor keys slips by table). It
    is the UID of the virtual card the rating puts in the seat's reader (a ``seat_card`` input)."""
    if not (0 < shoe < 1 << 24 and 0 < coup < 1 << 16 and 0 < seat < 256):
        raise ValueError(f"no anonymous player for shoe {shoe}, coup {coup}, seat {seat}")
    return f"{ANONYMOUS_PREFIX}{shoe:06X}{coup:04X}{seat:02X}00"


def player_ref(uid: str) -> str:
    """The opaque reference a record carries for the player whose card has UID ``uid`` (16 upper-case hex
    digits): the UID itself, the floor's player registry's key."""
    _check_uid(uid)
    return uid


@dataclass(frozen=True, slots=True)
class SeatCard:
    """A seat's player-card reader: the card ``uid`` (16 upper-case hex digits) arrived (``present``) or left."""

    seat: int
    uid: str
    present: bool

    def __post_init__(self) -> None:
        _check_uid(self.uid)


class LeaveWhy(Enum):
    """Why a visit ended."""

    CARD_OUT = "card_out"  # the player took the card out
    CARD_REPLACED = "card_replaced"  # another card came in at the seat (this one's CARD_OUT was not heard)
    SEAT_EMPTY = "seat_empty"  # the card was left in the reader: no wager for leave_after_coups coups


@dataclass(frozen=True)
class PlayerIn(Notice):
    """A player's visit at a seat began (the card came in), in shoe ``shoe`` at coup ``coup`` (the coup due)."""

    shoe: int
    coup: int
    seat: int
    player_ref: str


@dataclass(frozen=True)
class PlayerOut(Notice):
    """A player's visit at a seat ended, and why; ``note`` says it in words for a card left in a reader."""

    shoe: int
    coup: int
    seat: int
    player_ref: str
    reason: LeaveWhy
    note: str | None = None


@dataclass
class _Seat:
    uid: str
    playing: bool = True  # a visit is open (False: the card was left in the reader after its visit ended)
    idle: int = 0  # consecutive locks without a wager


class SeatBook:
    """The cards at the seats and the visits they open: see the module's docstring."""

    def __init__(self, seats: int, leave_after_coups: int) -> None:
        if leave_after_coups < 1:
            raise ValueError("leave_after_coups must be at least 1")
        self.seats = seats
        self.leave_after_coups = leave_after_coups
        self._at: dict[int, _Seat] = {}

    @classmethod
    def at_shoe_start(cls, seats: int, leave_after_coups: int, carried: Sequence[Mapping[str, Any]]) -> SeatBook:
        """The seats at a shoe's start, as its start record's ``players`` (:meth:`carried`) says."""
        book = cls(seats, leave_after_coups)
        for item in carried:
            uid = str(item["player_ref"])
            _check_uid(uid)
            book._at[int(item["seat"])] = _Seat(uid, bool(item["playing"]))
        return book

    def carried(self) -> tuple[dict[str, Any], ...]:
        """The cards in the seats' readers, for a shoe's start record (``players``), by seat."""
        return tuple({"seat": seat, "player_ref": s.uid, "playing": s.playing} for seat, s in sorted(self._at.items()))

    def players(self) -> dict[int, str]:
        """The seats with a visit open, and each one's player_ref."""
        return {seat: s.uid for seat, s in sorted(self._at.items()) if s.playing}

    def card(self, event: SeatCard, shoe: int, coup: int) -> list[Notice]:
        """A card came in or went out at a seat."""
        seat, held = event.seat, self._at.get(event.seat)
        if not 1 <= seat <= self.seats:
            return []  # a reader's seat this table does not have: journaled as it came, nothing more
        if not event.present:
            if held is None or held.uid != event.uid:
                return []  # a card the seat does not hold: nothing to end
            del self._at[seat]
            return [PlayerOut(shoe, coup, seat, held.uid, LeaveWhy.CARD_OUT)] if held.playing else []
        if held is not None and held.uid == event.uid:
            return []  # the reader repeats the cards it holds after a HELLO
        out: list[Notice] = []
        if held is not None and held.playing:
            out.append(PlayerOut(shoe, coup, seat, held.uid, LeaveWhy.CARD_REPLACED))
        self._at[seat] = _Seat(event.uid)
        out.append(PlayerIn(shoe, coup, seat, event.uid))
        return out

    def locked(self, shoe: int, coup: int, playing: set[int]) -> list[Notice]:
        """The coup's bets are locked; ``playing`` are the seats with a wager on a spot: a visit whose seat has
        been without one at ``leave_after_coups`` locks running ends (a card left in a reader)."""
        out: list[Notice] = []
        for seat, held in sorted(self._at.items()):
            if not held.playing:
                continue
            if seat in playing:
                held.idle = 0
                continue
            held.idle += 1
            if held.idle >= self.leave_after_coups:
                held.playing = False
                note = f"card left in seat {seat}'s reader: no wager for {held.idle} coup{'s' if held.idle > 1 else ''}"
                out.append(PlayerOut(shoe, coup, seat, held.uid, LeaveWhy.SEAT_EMPTY, note))
        return out

    def shoe_started(self) -> None:
        """A new shoe: the cards stay where they are; the coups without a wager count from zero again."""
        for held in self._at.values():
            held.idle = 0
