"""The simulator's chips: denominations with tag UIDs in ranges, the registry file, and the dealer's rack.

The chip set is what a casino orders from its chip maker: each denomination a block of RFID tags whose
UIDs run in one range, written as the chip registry the table reads (``/etc/shoe-controller/chips.toml``,
docs/configuration.md; ``shoe-sim --chips-out FILE`` writes it). Besides the chips in play it holds a
range of **retired** chips (withdrawn after a chip change), a few single chips **reported stolen**, and
it can make UIDs that are in **no range** at all: the three kinds of foreign chip of the
``unknown_chip`` fault.

Chips are physical: a stake is a stack of chips, the fewest that make it (greedy, largest first), and
every chip the rack hands out has its own UID (each denomination's UIDs are handed out in turn and come
round again only after the whole block of 65,536: more than a table ever has out at once). Besides the
wagering chips ($5 to $5,000) the set has $1 and 25-cent chips, with which the dealer pays a Banker win
less its 5 % commission and a player pays a commission box.

Pure: values in, values and text out; the command line writes the text to the file.
"""

from __future__ import annotations

import random
from enum import Enum

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus, format_uid

__all__ = [
    "BLOCK",
    "DENOMINATIONS",
    "ChipSet",
    "ForeignKind",
    "chips_for",
]

#: Every chip's UID starts with these 32 bits (an ISO 15693 tag maker's prefix, E0 04 01 50).
UID_PREFIX = 0xE0040150_00000000
#: UIDs in one denomination's block (the low 16 bits of the UID).
BLOCK = 0x10000
#: The denominations in play, in cents, largest first.
DENOMINATIONS: tuple[int, ...] = (500_000, 100_000, 50_000, 10_000, 2_500, 500, 100, 25)
#: Where each denomination's block sits (bits 24-31 of the UID's low half).
_BLOCK_OF: dict[int, int] = {cents: 0x01 + i for i, cents in enumerate(sorted(DENOMINATIONS))}
_DENOMINATION_OF: dict[int, int] = {block: cents for cents, block in _BLOCK_OF.items()}
#: The retired chips: a block of $25 chips withdrawn after a chip change (256 of them).
RETIRED_BLOCK, RETIRED_CENTS, RETIRED_COUNT = 0x80, 2_500, 0x100
#: The chips reported stolen: three single $500 chips.
STOLEN_BLOCK, STOLEN_CENTS, STOLEN_COUNT = 0x90, 50_000, 3
#: UIDs of this block are in no range of the registry (a chip from another casino, a fake).
UNKNOWN_BLOCK = 0xF0


def _uid(block: int, serial: int) -> int:
    return UID_PREFIX | (block << 24) | serial


def chips_for(cents: int) -> list[int]:
    """The denominations of the fewest chips that make ``cents`` (largest first); ValueError if none can."""
    if cents < 0 or cents % DENOMINATIONS[-1]:
        raise ValueError(f"{cents} cents cannot be made of chips (the smallest is {DENOMINATIONS[-1]} cents)")
    out: list[int] = []
    left = cents
    for d in DENOMINATIONS:
        n, left = divmod(left, d)
        out.extend([d] * n)
    return out


class ForeignKind(Enum):
    """The three kinds of foreign chip (the ``unknown_chip`` fault's choices); the value is the status name."""

    UNKNOWN = "unknown"
    RETIRED = "retired"
    STOLEN = "stolen"


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


class ChipSet:
    """The chip set and the dealer's rack: every chip handed out has a UID of its denomination's range."""

    def __init__(self) -> None:
        self._next: dict[int, int] = dict.fromkeys(DENOMINATIONS, 0)
        self._next_unknown = 0
        #: UIDs the rack must not hand out: the chips lying in the dealer's chip tray (:mod:`hw_sim.tray`).
        self.held: set[int] = set()

    @staticmethod
    def ranges() -> tuple[ChipRange, ...]:
        """Every range of the registry, in UID order."""
        out = [
            ChipRange(_uid(_BLOCK_OF[c], 0), _uid(_BLOCK_OF[c], BLOCK - 1), c, ChipStatus.IN_PLAY)
            for c in sorted(DENOMINATIONS)
        ]
        out.append(
            ChipRange(_uid(RETIRED_BLOCK, 0), _uid(RETIRED_BLOCK, RETIRED_COUNT - 1), RETIRED_CENTS, ChipStatus.RETIRED)
        )
        out.extend(
            ChipRange(_uid(STOLEN_BLOCK, n), _uid(STOLEN_BLOCK, n), STOLEN_CENTS, ChipStatus.STOLEN)
            for n in range(STOLEN_COUNT)
        )
        return tuple(out)

    def registry(self) -> ChipRegistry:
        """The registry the table builds from :meth:`registry_toml` (the same ranges, without a file)."""
        return ChipRegistry(self.ranges())

    def registry_toml(self) -> str:
        """The chip registry file: one ``[[range]]`` per range (``last`` left out for a single chip)."""
        lines = [
            "# The shoe-sim chip set (shoe-sim --chips-out): denominations in play, retired and stolen chips.",
            "# UIDs of the block E0040150F0xxxxxx are in no range: the unknown chips of the unknown_chip fault.",
        ]
        for r in self.ranges():
            lines += ["", "[[range]]", f'first = "{format_uid(r.first)}"']
            if r.last != r.first:
                lines.append(f'last = "{format_uid(r.last)}"')
            lines += [f'value = "{_money(r.cents)}"', f'status = "{r.status.value}"']
        return "\n".join(lines) + "\n"

    def take(self, cents: int) -> tuple[int, ...]:
        """A stack making ``cents`` from the rack: the fewest chips, each with a UID not handed out lately."""
        return tuple(self.one(d) for d in chips_for(cents))

    def one(self, cents: int) -> int:
        """One chip of the denomination ``cents`` from the rack (a chip in the tray, :attr:`held`, is skipped)."""
        while True:
            serial = self._next[cents]
            self._next[cents] = (serial + 1) % BLOCK
            uid = _uid(_BLOCK_OF[cents], serial)
            if uid not in self.held:
                return uid

    @staticmethod
    def float_chip(cents: int, index: int) -> int:
        """The ``index``-th chip of the tray's starting float of denomination ``cents``: from the top of the
        denomination's block down (the rack hands out from the bottom up: the float's chips are the players' only
        after the rack has come round a whole block)."""
        if not 0 <= index < BLOCK:
            raise ValueError(f"float chip {index} outside the block")
        return _uid(_BLOCK_OF[cents], BLOCK - 1 - index)

    @staticmethod
    def denomination(uid: int) -> int | None:
        """The denomination (cents) of a chip in play of this set, None for any other UID."""
        if uid >> 32 != UID_PREFIX >> 32 or (uid >> 16) & 0xFF:
            return None
        return _DENOMINATION_OF.get((uid >> 24) & 0xFF)

    def foreign(self, kind: ForeignKind, rng: random.Random) -> int:
        """One foreign chip's UID: ``unknown`` (in no range), ``retired`` or ``stolen`` (from the registry)."""
        if kind is ForeignKind.RETIRED:
            return _uid(RETIRED_BLOCK, rng.randrange(RETIRED_COUNT))
        if kind is ForeignKind.STOLEN:
            return _uid(STOLEN_BLOCK, rng.randrange(STOLEN_COUNT))
        self._next_unknown = (self._next_unknown + 1) % BLOCK
        return _uid(UNKNOWN_BLOCK, self._next_unknown)
