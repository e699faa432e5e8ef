"""Buy-ins: cash (or another table's chips, or a marker) the dealer changes into chips at a seat.

A buy-in reaches the table as a typed input, :class:`BuyIn` (the seat, the amount in integer cents, the
:class:`Tender`, and the seat's ``player_ref`` when the player is carded, None when not). It changes nothing
of the game, so it is a record only, never replayed: the table state
(:meth:`~controller.game.table.TableState.buy_in`, not a transition) answers it with :class:`BuyInTaken`, which
carries the shoe and coup it came in (the coup being dealt, or the next one between coups); the journal keeps
the input and a ``buy_in`` record, and the floor's cash log reads those across the tables. The cash goes to
the drop box.

What a buy-in may be is said once here: :func:`buy_in_refusal` (the seat on the table, the amount within
:data:`MAX_BUY_IN_CENTS`, a ``player_ref`` of :data:`PLAYER_REF_PATTERN`), in one line, for whoever refuses
it. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from controller.game.notice import Notice

__all__ = [
    "MAX_BUY_IN_CENTS",
    "PLAYER_REF_PATTERN",
    "BuyIn",
    "BuyInTaken",
    "Tender",
    "buy_in_refusal",
]

#: The most one buy-in may be (integer cents): one million dollars. More is a typing slip, not a buy-in.
MAX_BUY_IN_CENTS = 100_000_000
#: What a ``player_ref`` is: the player's card's UID, 16 hex digits (the key of the floor's player registry, the
#: same as a ``player_in`` record's; the table never holds a name).
PLAYER_REF_PATTERN = r"^[0-9A-F]{16}$"
_PLAYER_REF = re.compile(PLAYER_REF_PATTERN)


class Tender(StrEnum):
    """What the player bought in with."""

    CASH = "cash"  # currency: what the cash log counts
    CHIPS = "chips"  # chips from another table (colour change, walked over)
    MARKER = "marker"  # a marker (credit signed at the table)


@dataclass(frozen=True, slots=True)
class BuyIn:
    """A buy-in entered at a seat (a table input): ``cents`` of ``tender``; ``player_ref`` None when uncarded."""

    seat: int
    cents: int
    tender: Tender
    player_ref: str | None = None


@dataclass(frozen=True)
class BuyInTaken(Notice):
    """A buy-in taken at a seat, in shoe ``shoe`` at coup ``coup`` (the coup being dealt or the next)."""

    shoe: int
    coup: int
    seat: int
    cents: int
    tender: Tender
    player_ref: str | None


def buy_in_refusal(buy_in: BuyIn, seats: int) -> str | None:
    """Why the table refuses ``buy_in`` (one line), or None when it takes it; ``seats``: the table's seats."""
    seat, cents = buy_in.seat, buy_in.cents
    if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= seats:
        return f"buy-in refused: seat {seat!r:.20} is not on this table (seats 1-{seats})"
    if isinstance(cents, bool) or not isinstance(cents, int) or not 1 <= cents <= MAX_BUY_IN_CENTS:
        return f"buy-in refused: amount {cents!r:.20} cents is not 1 to {MAX_BUY_IN_CENTS} cents"
    if not isinstance(buy_in.tender, Tender):
        return f"buy-in refused: tender {buy_in.tender!r:.20} is not one of {', '.join(t.value for t in Tender)}"
    ref = buy_in.player_ref
    if ref is not None and (not isinstance(ref, str) or not _PLAYER_REF.fullmatch(ref)):
        return f"buy-in refused: player_ref {ref!r:.40} is not a card's UID (16 hex digits, 0-9 A-F)"
    return None
