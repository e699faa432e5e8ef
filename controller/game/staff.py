"""Who deals: the dealer on duty at a table, from the badges at the dealer's position. Pure, deterministic.

The floor's staff registry reaches the table as a signed list (``floor_protocol/staff.py``; the table keeps the
last one it verified). What the core needs of it is a :class:`Roster`: each badge's UID and whose it is (the staff
id and the role; never a name). What this module holds:

* :func:`badge_key`, a badge's UID as the table compares it: the reader reports 16 hex digits (a 7-byte UID with a
  leading ``00``), the registry writes the UID's own 8-20 digits; both become the same key.
* :class:`DutyBook`, the dealer on duty, with the house's rules (``docs/spots.md``, section 5.5: a badge stays in
  the dealer's position's reader while its dealer deals):

  * A badge in that is on the roster as a dealer or a supervisor signs its member in: :class:`DealerIn`. The one
    on duty before is signed out first (:class:`DealerOut`, ``replaced``): a swap costs no coup.
  * The badge of the dealer on duty out: :class:`DealerOut`, ``badge_out``.
  * A badge not on the roster (unknown, or its member disabled: a disabled member is not on the list), or on it
    in a role that does not deal: :class:`BadgeRefused`, which the dealer sees; the dealer on duty stays.
  * A badge in again of the dealer on duty is no news (the reader repeats its cards after each HELLO).

* :func:`dealers_by_record`, attribution: given a table's records in journal order, the dealer on duty at each
  (the one signed in by the last ``dealer_in`` before it and not signed out since). Every coup, past-post,
  mispay and commission record is attributed so: the bodies carry no ``dealer`` field (docs/architecture.md says
  why).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum

from controller.game.kinds import RecordKind
from controller.game.notice import Notice

__all__ = [
    "DEALING_ROLES",
    "BadgeRefused",
    "DealerIn",
    "DealerOut",
    "DutyBook",
    "Member",
    "OutWhy",
    "RefusedWhy",
    "Roster",
    "badge_key",
    "dealers_by_record",
]

#: The roles that may sign in as the dealer on duty.
DEALING_ROLES = frozenset({"dealer", "supervisor"})
_HEX = frozenset("0123456789ABCDEF")


def badge_key(uid: str) -> str:
    """``uid`` (hex digits, any case) as the table compares badges: upper case, at least 16 digits (zeros in
    front). ``ValueError`` for anything but 8 to 20 hex digits."""
    text = uid.upper()
    if not 8 <= len(text) <= 20 or not set(text) <= _HEX:
        raise ValueError(f"badge {uid[:24]!r} is not 8 to 20 hex digits")
    return text.rjust(16, "0")


@dataclass(frozen=True, slots=True)
class Member:
    """One of the staff as a table knows them: the staff id and the role."""

    staff_id: str
    role: str


@dataclass(frozen=True)
class Roster:
    """The badges a table knows, by :func:`badge_key`, and the registry's last change the list was made at."""

    badges: Mapping[str, Member] = field(default_factory=dict)
    as_of: str = ""

    @classmethod
    def of(cls, members: Iterable[tuple[str, str, str | None]], as_of: str = "") -> Roster:
        """From ``(staff_id, role, badge)`` triples (a member without a badge cannot sign in with one)."""
        return cls({badge_key(b): Member(i, r) for i, r, b in members if b is not None}, as_of)

    def find(self, uid: str) -> Member | None:
        try:
            return self.badges.get(badge_key(uid))
        except ValueError:
            return None


class OutWhy(Enum):
    """Why a dealer's duty ended."""

    BADGE_OUT = "badge_out"  # the dealer took the badge out of the reader
    REPLACED = "replaced"  # another dealer's badge came in (a swap)


class RefusedWhy(Enum):
    """Why a badge did not sign anyone in."""

    UNKNOWN_BADGE = "unknown_badge"  # not on the table's staff list (unknown, disabled, or no list yet)
    NOT_A_DEALER = "not_a_dealer"  # on it, in a role that does not deal (pit manager, technician ...)


@dataclass(frozen=True)
class DealerIn(Notice):
    """``staff_id`` is the dealer on duty from shoe ``shoe``'s coup ``coup`` (the coup due) on."""

    shoe: int
    coup: int
    staff_id: str
    role: str
    badge: str
    staff_as_of: str = ""  # the staff list the badge was found on (the registry's last change)


@dataclass(frozen=True)
class DealerOut(Notice):
    """``staff_id``'s duty ended at shoe ``shoe``'s coup ``coup`` (the coup due), and why."""

    shoe: int
    coup: int
    staff_id: str
    reason: OutWhy


@dataclass(frozen=True)
class BadgeRefused(Notice):
    """A badge at the dealer's position signed no one in; ``text`` says it to the dealer."""

    shoe: int
    coup: int
    badge: str
    reason: RefusedWhy
    staff_as_of: str = ""  # the staff list looked in (empty: none verified yet)

    @property
    def text(self) -> str:
        return "UNKNOWN BADGE" if self.reason is RefusedWhy.UNKNOWN_BADGE else "BADGE: NOT A DEALER"


class DutyBook:
    """The dealer on duty (see the module's docstring). ``on_duty``: the staff id, None when no one is."""

    def __init__(self, on_duty: str | None = None, badge: str | None = None) -> None:
        self.on_duty = on_duty
        self._badge = None if badge is None else badge_key(badge)

    def badge(self, roster: Roster, uid: str, present: bool, shoe: int, coup: int) -> list[Notice]:
        """A badge came in (``present``) or went out at the dealer's position."""
        try:
            key = badge_key(uid)
        except ValueError:
            key = None
        if not present:
            if self.on_duty is None or key is None or key != self._badge:
                return []  # a badge not on duty went out: nothing to end
            out = DealerOut(shoe, coup, self.on_duty, OutWhy.BADGE_OUT)
            self.on_duty, self._badge = None, None
            return [out]
        member = None if key is None else roster.badges.get(key)
        if member is None or key is None:
            return [BadgeRefused(shoe, coup, uid, RefusedWhy.UNKNOWN_BADGE, roster.as_of)]
        if member.role not in DEALING_ROLES:
            return [BadgeRefused(shoe, coup, uid, RefusedWhy.NOT_A_DEALER, roster.as_of)]
        if member.staff_id == self.on_duty:
            self._badge = key
            return []  # the reader repeats its cards after a HELLO
        notices: list[Notice] = []
        if self.on_duty is not None:
            notices.append(DealerOut(shoe, coup, self.on_duty, OutWhy.REPLACED))
        self.on_duty, self._badge = member.staff_id, key
        notices.append(DealerIn(shoe, coup, member.staff_id, member.role, uid, roster.as_of))
        return notices


def dealers_by_record(records: Iterable[tuple[int, str, Mapping[str, object]]]) -> Iterator[tuple[int, str | None]]:
    """For each ``(seq, kind, body)`` of one table in journal order, ``(seq, dealer)``: the staff id on duty when
    the record was written (None: no one signed in). A ``dealer_in`` record is its own dealer's; a
    ``dealer_out`` still its dealer's (the duty ends after it). The one rule of attribution: the table's
    ``faults``, the floor's ``faults --by-dealer`` and the pit read it."""
    on_duty: str | None = None
    for seq, kind, body in records:
        if kind == RecordKind.DEALER_IN:
            staff = body.get("staff_id")
            on_duty = staff if isinstance(staff, str) else None
            yield seq, on_duty
        elif kind == RecordKind.DEALER_OUT:
            yield seq, on_duty
            if body.get("staff_id") == on_duty:
                on_duty = None
        else:
            yield seq, on_duty
