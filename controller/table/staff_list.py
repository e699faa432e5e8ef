"""The table's staff list: the floor's signed list of who may sign in here, verified and kept on disk.

The floor publishes its site's staff list (``floor_protocol/staff.py``: staff ids, roles, badge UIDs, PIN hashes;
never a name), signed with the floor's key, retained on ``baccarat/<site>/floor/staff``. The link process hears
it, verifies it and hands it on over ``link.sock``; the table (this module, in the table process, which has no
network) verifies it again with ``[floor] floor_public_key`` (the site is the link's to choose: it reads only its
own site's topic and refuses another site's list; the table's process is not told the site), and keeps the last
one it verified in a file beside the journal (:func:`staff_list_path`), written whole and renamed into place, so
that a table restarted while the floor is away still knows its staff. A list refused (a bad signature, another
site, or older than the one kept by its ``as_of``: a list the floor once signed, said again, may still name a
dealer struck off since) is said in one line and counted (:attr:`StaffListKeeper.refused`); the list kept stays.

What the pure core needs of it is a :class:`~controller.game.staff.Roster` (:meth:`StaffListKeeper.roster`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import Counter
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.game.approvals import APPROVING_ROLES
from controller.game.staff import Roster
from floor_protocol.staff import MAX_STAFF_BYTES, StaffList, StaffListError, parse_staff

log = logging.getLogger(__name__)

__all__ = ["STAFF_FILE", "StaffListKeeper", "staff_list_path"]

#: The file's name, in the journal's directory.
STAFF_FILE = "staff-list.json"


def staff_list_path(journal_path: str | os.PathLike[str]) -> Path:
    """Where the table keeps the last staff list it verified: ``staff-list.json`` beside the journal."""
    return Path(journal_path).resolve().parent / STAFF_FILE


def _roster(staff: StaffList | None) -> Roster:
    if staff is None:
        return Roster()
    return Roster.of(((e.id, e.role, e.badge) for e in staff.staff), staff.as_of)


class StaffListKeeper:
    """The staff list the table believes (None: none verified yet), its file, and the lists refused by reason."""

    def __init__(self, path: Path | None, floor_key: Ed25519PublicKey | None, site: str | None = None) -> None:
        self.path = path
        self.floor_key = floor_key
        self.site = site
        self.current: StaffList | None = None
        #: Lists refused, by reason (``bad_signature``, ``no_floor_key``, ``wrong_site``, ``unreadable_file``,
        #: ``stale``: older than the one believed, by its ``as_of``).
        self.refused: Counter[str] = Counter()
        self.roster = Roster()
        self._pins: dict[str, str] = {}

    def pin_hash(self, staff_id: str) -> str | None:
        """The PIN's hash the list holds for ``staff_id`` (None: no PIN, or not on the list)."""
        return self._pins.get(staff_id)

    def approvers(self) -> int:
        """The members on the list who could approve what needs a supervisor: the role, a badge and a PIN."""
        return sum(1 for m in self.roster.badges.values() if m.role in APPROVING_ROLES and m.staff_id in self._pins)

    def load(self) -> None:
        """At start: the list kept on disk, verified again (a file changed by hand is refused in one line)."""
        if self.path is None:
            return
        try:
            with open(self.path, "rb") as f:
                data = f.read(MAX_STAFF_BYTES + 1)
        except FileNotFoundError:
            log.info("no staff list kept yet (%s): every badge is refused until the floor's comes", self.path)
            return
        except OSError as exc:
            self._refuse("unreadable_file", f"staff list {self.path} not read: {exc.strerror or exc}")
            return
        try:
            staff = parse_staff(data)
        except StaffListError as exc:
            self._refuse("unreadable_file", f"staff list {self.path} refused: {exc}")
            return
        if self._judge(staff, f"kept in {self.path}"):
            self._believe(staff)
            log.info("staff list as of %s: %d member(s) (kept in %s)", staff.as_of, len(staff.staff), self.path)

    def take(self, staff: StaffList) -> bool:
        """A list the link handed on: believed and kept when it verifies; False when refused or no news."""
        if staff == self.current:
            return False
        if not self._judge(staff, "from the floor link"):
            return False
        if self.current is not None and staff.as_of < self.current.as_of:
            self._refuse(
                "stale",
                f"staff list from the floor link refused: as of {staff.as_of}, older than the one kept"
                f" (as of {self.current.as_of})",
            )
            return False
        self._believe(staff)
        log.info("staff list as of %s: %d member(s), from the floor", staff.as_of, len(staff.staff))
        self._keep(staff)
        return True

    def _judge(self, staff: StaffList, where: str) -> bool:
        if self.floor_key is None:
            self._refuse("no_floor_key", f"staff list {where} refused: [floor] floor_public_key is not set")
            return False
        if self.site is not None and staff.site != self.site:
            self._refuse(
                "wrong_site", f"staff list {where} refused: it is site {staff.site[:40]!r}'s, not {self.site!r}"
            )
            return False
        if not staff.verify(self.floor_key):
            self._refuse("bad_signature", f"staff list {where} refused: not signed by the floor's key")
            return False
        return True

    def _believe(self, staff: StaffList) -> None:
        self.current = staff
        self.roster = _roster(staff)
        self._pins = {e.id: e.pin_hash for e in staff.staff if e.pin_hash is not None}

    def _refuse(self, reason: str, line: str) -> None:
        self.refused[reason] += 1
        log.warning("%s", line)

    def _keep(self, staff: StaffList) -> None:
        """Write the list whole, then rename it into place (a power cut leaves the old one or the new one)."""
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(staff.to_json().encode())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("staff list not kept in %s (%s): the table uses it until it restarts", self.path, exc)
            with contextlib.suppress(OSError):
                tmp.unlink()
