"""Casino chips as the bet-spot readers see them: tag UIDs, the chip registry, and what a spot holds.

Pure: the registry is built from values (the shell reads ``/etc/shoe-controller/chips.toml`` into them,
:mod:`controller.chipfile`), and a lookup is a bisection over sorted, non-overlapping UID ranges.

* A chip's **UID** is its RFID tag's identifier: 8 bytes (ISO 15693), written as 16 upper-case hex digits.
  A shorter tag UID (4 or 7 bytes, ISO 14443) is right-aligned and zero-padded to 8 by the reader.
* The **registry** maps a UID, or an inclusive UID range, to a denomination in integer cents and a status:
  in play, retired (withdrawn from play, for example after a chip change), or reported stolen. A UID in no
  range is unknown. Only chips in play count towards a wager.
* A spot's **chips** (:class:`SpotChips`) are the resolved chips one reader spot reports, in the order the
  reader gave; its value counts chips in play only, and the others are named for the alarm.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "UID_HEX_DIGITS",
    "Chip",
    "ChipRange",
    "ChipRegistry",
    "ChipStatus",
    "RegistryError",
    "SpotChips",
    "parse_uid",
]

#: A UID as text: 8 bytes, 16 hex digits.
UID_HEX_DIGITS = 16
_HEX = frozenset("0123456789ABCDEF")


class RegistryError(ValueError):
    """A chip registry that cannot be used (a bad UID, an overlap, a bad denomination): one line."""


def parse_uid(text: str) -> int:
    """A UID's 16 hex digits (either case) as an integer; :class:`RegistryError` names a bad one."""
    upper = text.upper() if isinstance(text, str) else ""
    if len(upper) != UID_HEX_DIGITS or not set(upper) <= _HEX:
        raise RegistryError(f"UID {str(text)[:40]!r} is not {UID_HEX_DIGITS} hex digits")
    return int(upper, 16)


def format_uid(uid: int) -> str:
    """The 16 upper-case hex digits of ``uid``."""
    return f"{uid:016X}"


class ChipStatus(Enum):
    """What the registry says of a chip. The value is the name in the registry file and in records."""

    IN_PLAY = "in_play"
    RETIRED = "retired"
    STOLEN = "stolen"  # reported stolen: its appearance on a spot is a security matter
    UNKNOWN = "unknown"  # in no range of the registry (never written in the file)


@dataclass(frozen=True, slots=True)
class ChipRange:
    """An inclusive range of UIDs (``first == last`` for one chip) with its denomination and status."""

    first: int
    last: int
    cents: int
    status: ChipStatus

    def __post_init__(self) -> None:
        if not 0 <= self.first <= self.last < 1 << 64:
            raise RegistryError(f"UID range {format_uid(self.first)}-{format_uid(self.last)} is not first <= last")
        if isinstance(self.cents, bool) or not isinstance(self.cents, int) or self.cents <= 0:
            raise RegistryError(f"chip denomination {self.cents!r} is not a positive number of cents")
        if self.status is ChipStatus.UNKNOWN:
            raise RegistryError("a registry range cannot have the status 'unknown'")


@dataclass(frozen=True, slots=True)
class Chip:
    """One chip on a spot, resolved through the registry (``cents`` 0 for an unknown chip)."""

    uid: str
    cents: int
    status: ChipStatus

    @property
    def counts(self) -> bool:
        """Whether the chip counts towards a wager (only chips in play do)."""
        return self.status is ChipStatus.IN_PLAY

    def to_dict(self) -> dict[str, object]:
        return {"uid": self.uid, "cents": self.cents, "status": self.status.value}


@dataclass(frozen=True, slots=True)
class SpotChips:
    """The chips one spot holds, as resolved."""

    chips: tuple[Chip, ...] = ()

    @property
    def cents(self) -> int:
        """The value on the spot: the chips in play only."""
        return sum(c.cents for c in self.chips if c.counts)

    @property
    def foreign(self) -> tuple[Chip, ...]:
        """The chips that do not count: unknown, retired or stolen (each raises an alarm)."""
        return tuple(c for c in self.chips if not c.counts)

    @property
    def uids(self) -> frozenset[str]:
        return frozenset(c.uid for c in self.chips)


class ChipRegistry:
    """UID ranges to denominations and statuses; :meth:`resolve` looks one UID up in O(log n)."""

    __slots__ = ("_firsts", "_ranges")

    def __init__(self, ranges: Iterable[ChipRange] = ()) -> None:
        ordered = sorted(ranges, key=lambda r: r.first)
        for before, after in itertools.pairwise(ordered):
            if after.first <= before.last:
                raise RegistryError(
                    f"UID ranges {format_uid(before.first)}-{format_uid(before.last)} and "
                    f"{format_uid(after.first)}-{format_uid(after.last)} overlap"
                )
        self._ranges: tuple[ChipRange, ...] = tuple(ordered)
        self._firsts = [r.first for r in ordered]

    def __len__(self) -> int:
        return len(self._ranges)

    @property
    def ranges(self) -> tuple[ChipRange, ...]:
        return self._ranges

    def resolve(self, uid: int | str) -> Chip:
        """The chip with this UID (an unknown one if no range holds it)."""
        value = parse_uid(uid) if isinstance(uid, str) else uid
        text = format_uid(value)
        at = bisect.bisect_right(self._firsts, value) - 1
        if at >= 0:
            r = self._ranges[at]
            if r.first <= value <= r.last:
                return Chip(text, r.cents, r.status)
        return Chip(text, 0, ChipStatus.UNKNOWN)

    def resolve_all(self, uids: Sequence[int | str]) -> SpotChips:
        return SpotChips(tuple(self.resolve(u) for u in uids))
