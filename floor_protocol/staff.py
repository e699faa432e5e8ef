"""The staff list a table needs: ``baccarat/<site>/floor/staff``, retained, signed by the floor's key.

The floor's staff registry (``shoe-floor staff ...``, ``floor/archive/staff.py``) holds names; a table needs none
of them. What it needs is who may sign in at its dealer's position and who may approve: for each **active**
member the staff id, the role, the badge's UID and the PIN's hash (Argon2id, as the registry keeps it). A member
disabled, or without a badge and a PIN, is simply not on the list: a table refuses a badge it does not find.

The payload is one JSON object (:class:`StaffList`)::

    {"v":1,"site":"<site>","as_of":"<the registry's last change>","staff":[{"id":..,"role":..,"badge":..,
     "pin_hash":..}, ...],"sig":"..."}

``sig`` is the floor key's signature over :func:`floor_protocol.signing.staff_message` of the canonical JSON of
the rest (:meth:`StaffList.signed_part`), so the same registry gives the same bytes at every collector. A table's
link reads it from a broker it does not control: :func:`parse_staff` bounds and validates it and raises
:class:`StaffListError` (one line) for anything else; :meth:`StaffList.verify` checks the signature. The link
hands the whole signed list to the table over ``link.sock``, and the table verifies it again before it keeps it.
Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from floor_protocol.signing import SIGNATURE_CHARS, sign, staff_message, verify
from floor_protocol.topics import LEVEL_PATTERN

__all__ = [
    "MAX_STAFF",
    "MAX_STAFF_BYTES",
    "STAFF_ROLES",
    "STAFF_VERSION",
    "StaffEntry",
    "StaffList",
    "StaffListError",
    "parse_staff",
]

#: The staff message's JSON version.
STAFF_VERSION = 1
#: Most members on one list (a big floor has some hundreds of dealers and supervisors).
MAX_STAFF = 2000
#: Longest staff payload read (2000 members of about 190 bytes each, and room).
MAX_STAFF_BYTES = 512 * 1024
#: The roles, as the registry's (``floor.archive.staff.STAFF_ROLES``; a test keeps the two in step).
STAFF_ROLES = ("dealer", "supervisor", "pit_manager", "surveillance", "technician")
#: The roles that may sign in as the dealer on duty at a table.
DEALING_ROLES = frozenset({"dealer", "supervisor"})

_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}"
_BADGE = r"(?:[0-9A-F]{2}){4,10}"
_PIN_HASH = r"\$argon2(?:id|i|d)\$[ -~]{10,190}"
Role = Literal["dealer", "supervisor", "pit_manager", "surveillance", "technician"]


class StaffListError(ValueError):
    """A staff message that is not one (too long, not JSON, out of shape, another version). One line."""


class StaffEntry(BaseModel):
    """One active member as a table knows them: never a name."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    id: Annotated[str, Field(pattern=f"^{_ID}$", description="the staff id (the casino's employee number)")]
    role: Annotated[Role, Field(description="the member's role in the registry")]
    badge: Annotated[str | None, Field(pattern=f"^{_BADGE}$", description="the badge's UID, upper-case hex")] = None
    pin_hash: Annotated[str | None, Field(pattern=f"^{_PIN_HASH}$", description="the PIN's Argon2 hash")] = None


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    v: Literal[1]
    site: Annotated[str, Field(pattern=f"^{LEVEL_PATTERN.pattern}$")]
    as_of: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[0-9T:.+\-Z ]+$")]
    staff: Annotated[list[StaffEntry], Field(max_length=MAX_STAFF)]
    sig: Annotated[str, Field(min_length=SIGNATURE_CHARS, max_length=SIGNATURE_CHARS)]


@dataclass(frozen=True, slots=True)
class StaffList:
    """One staff list of a site, as the floor signed it (``sig`` empty: not signed yet)."""

    site: str
    as_of: str  # the registry's last change (its newest updated_at): which list is newer, in words
    staff: tuple[StaffEntry, ...]
    sig: str = ""

    @classmethod
    def signed(cls, key: Ed25519PrivateKey, site: str, as_of: str, staff: tuple[StaffEntry, ...]) -> StaffList:
        ordered = tuple(sorted(staff, key=lambda e: e.id))
        unsigned = cls(site, as_of, ordered)
        return cls(site, as_of, ordered, sign(key, staff_message(site, unsigned.signed_part())))

    def signed_part(self) -> bytes:
        """The canonical JSON of everything but the signature: what the signature covers."""
        body = {
            "v": STAFF_VERSION,
            "site": self.site,
            "as_of": self.as_of,
            "staff": [e.model_dump() for e in self.staff],
        }
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def verify(self, key: Ed25519PublicKey) -> bool:
        """Whether the floor's key signed this list."""
        return verify(key, staff_message(self.site, self.signed_part()), self.sig)

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": STAFF_VERSION,
            "site": self.site,
            "as_of": self.as_of,
            "staff": [e.model_dump() for e in self.staff],
            "sig": self.sig,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)

    def by_badge(self) -> dict[str, StaffEntry]:
        """The members with a badge, by its UID."""
        return {e.badge: e for e in self.staff if e.badge is not None}


def parse_staff(payload: bytes | str | dict[str, Any]) -> StaffList:
    """A staff message read and validated (not verified: :meth:`StaffList.verify`); :class:`StaffListError`."""
    if isinstance(payload, dict):
        value: object = payload
    else:
        if len(payload) > MAX_STAFF_BYTES:
            raise StaffListError(f"staff list of {len(payload)} bytes (at most {MAX_STAFF_BYTES})")
        try:
            value = json.loads(payload)
        except RecursionError:
            raise StaffListError("staff list: JSON nested too deep") from None
        except (ValueError, UnicodeDecodeError):
            raise StaffListError("staff list: not JSON") from None
    if not isinstance(value, dict):
        raise StaffListError("staff list: not a JSON object")
    if value.get("v") != STAFF_VERSION:
        raise StaffListError(f"staff list: version {str(value.get('v'))[:12]!r}, this table reads {STAFF_VERSION}")
    try:
        body = _Body.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "message"
        raise StaffListError(f"staff list: {where}: {first.get('msg', 'invalid')}"[:200]) from None
    ids = [e.id for e in body.staff]
    if len(set(ids)) != len(ids):
        raise StaffListError("staff list: a staff id twice")
    badges = [e.badge for e in body.staff if e.badge is not None]
    if len(set(badges)) != len(badges):
        raise StaffListError("staff list: a badge twice")
    return StaffList(body.site, body.as_of, tuple(body.staff), body.sig)
