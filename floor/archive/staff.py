"""The floor's people: the staff registry (who deals, who approves), the pit page's users, and the audit log of
every change to either and of everything done on the pit page.

Schema (made by :meth:`People.prepare`, at the first change: ``shoe-floor staff ...`` or ``shoe-floor user ...``)::

    staff(id PK, name, role, active, badge, pin_hash, created_at, updated_at)
        role: dealer, supervisor, pit_manager, surveillance, technician; a badge UID unique among active staff
    pit_users(name PK, role, active, password_hash, created_at, updated_at)
        role: pit_manager, surveillance, viewer
    audit_log(id, at, actor, action, subject, before, after, source)
        one row per change and per sign-in, failure, lock-out and action on the pit page; ``subject`` is
        ``staff:<id>``, ``user:<name>`` or ``alert:<id>`` (an alert acknowledged on the pit page); ``before`` and
        ``after`` the changed fields (JSON), never a PIN, a password or their hash (a PIN set is ``"pin": "set"``)

A PIN or a password is hashed here (:mod:`floor.passwords`, Argon2id with a random salt) before it reaches the
database: the archive holds only the hash. Every change and its audit row are one transaction. Bad input is a
:class:`StaffError` naming the problem in one line, nothing changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from floor.archive.dialect import POSTGRES, SQLITE, is_unique_violation, now
from floor.archive.errors import ArchiveError
from floor.archive.store import Store
from floor.passwords import hash_secret

#: The staff's roles (the registry), and what each is for.
STAFF_ROLES: Mapping[str, str] = {
    "dealer": "deals; signs in at a table with a badge",
    "supervisor": "approves corrections at a table with a badge and PIN",
    "pit_manager": "runs the pit",
    "surveillance": "watches and recalls",
    "technician": "services the tables' devices",
}
#: The pit page's users' roles: what each may see and do (floor/pit_auth.py enforces them).
PIT_ROLES: Mapping[str, str] = {
    "pit_manager": "everything (and acknowledges alerts)",
    "surveillance": "everything to read, and game recall",
    "viewer": "the tiles only",
}
#: Failed sign-ins of one user within :data:`LOCK_WINDOW` seconds that lock the account.
LOCK_FAILURES = 5
LOCK_WINDOW = 15 * 60.0

_STAFF_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
_USER_NAME = re.compile(r"[a-z][a-z0-9_.-]{1,31}")
_BADGE = re.compile(r"[0-9A-F]{8,20}")  # a card's UID: 4, 7 or 10 bytes in hexadecimal
_PIN = re.compile(r"[0-9]{4,12}")
MIN_PASSWORD, MAX_PASSWORD = 10, 256

PEOPLE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS staff (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, role TEXT NOT NULL, active INTEGER NOT NULL, badge TEXT,
        pin_hash TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS staff_badge_active ON staff (badge) WHERE active = 1 AND badge IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS pit_users (
        name TEXT PRIMARY KEY, role TEXT NOT NULL, active INTEGER NOT NULL, password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS audit_log (
        id {serial}, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, subject TEXT NOT NULL,
        before TEXT, after TEXT, source TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS audit_log_subject ON audit_log (subject, action, at)",
)
_PEOPLE_TABLES = ("staff", "pit_users", "audit_log")
_STAFF_COLUMNS = "id, name, role, active, badge, pin_hash, created_at, updated_at"
_USER_COLUMNS = "name, role, active, password_hash, created_at, updated_at"
_AUDIT_COLUMNS = "id, at, actor, action, subject, before, after, source"


class StaffError(ArchiveError):
    """A change to the staff or the pit's users that is refused (one line for the operator)."""


def staff_id(text: str) -> str:
    if not _STAFF_ID.fullmatch(text):
        raise StaffError(f"staff id {text[:40]!r}: 1-32 letters, digits, '_', '.', '-' (a letter or digit first)")
    return text


def user_name(text: str) -> str:
    if not _USER_NAME.fullmatch(text):
        raise StaffError(f"user name {text[:40]!r}: 2-32 lower-case letters, digits, '_', '.', '-' (a letter first)")
    return text


def badge_uid(text: str) -> str:
    """A badge's UID in upper-case hexadecimal (``04:a2:...`` and spaces allowed on the way in)."""
    uid = re.sub(r"[\s:]", "", text).upper()
    if not _BADGE.fullmatch(uid) or len(uid) % 2:
        raise StaffError(f"badge {text[:40]!r}: a card UID of 4 to 10 bytes in hexadecimal (8 to 20 digits)")
    return uid


def check_pin(pin: str) -> str:
    if not _PIN.fullmatch(pin):
        raise StaffError("PIN: 4 to 12 digits")
    return pin


def check_password(password: str) -> str:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise StaffError(f"password: {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return password


def _name(text: str) -> str:
    name = " ".join(text.split())
    if not 1 <= len(name) <= 100 or not name.isprintable():
        raise StaffError("name: 1 to 100 printable characters")
    return name


def _role(role: str, roles: Mapping[str, str]) -> str:
    if role not in roles:
        raise StaffError(f"role {role[:40]!r}: one of {', '.join(roles)}")
    return role


@dataclass(frozen=True, slots=True)
class StaffMember:
    """One of the staff as the registry holds them (never the PIN's hash: only whether one is set)."""

    id: str
    name: str
    role: str
    active: bool
    badge: str | None
    has_pin: bool
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "active": self.active,
            "badge": self.badge,
            "has_pin": self.has_pin,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    def audited(self) -> dict[str, Any]:
        """What an audit row says of this member: every field but the times, the PIN as set or not."""
        return {"name": self.name, "role": self.role, "active": self.active, "badge": self.badge,
                "pin": "set" if self.has_pin else None}  # fmt: skip


@dataclass(frozen=True, slots=True)
class PitUser:
    """One of the pit page's users (never the password's hash)."""

    name: str
    role: str
    active: bool
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "active": self.active, "created_at": self.created_at,
                "updated_at": self.updated_at}  # fmt: skip

    def audited(self) -> dict[str, Any]:
        return {"role": self.role, "active": self.active}


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One row of the audit log."""

    id: int
    at: str
    actor: str
    action: str
    subject: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "at": self.at, "actor": self.actor, "action": self.action, "subject": self.subject,
                "before": self.before, "after": self.after, "source": self.source}  # fmt: skip

    def line(self) -> str:
        change = ""
        if self.before is not None or self.after is not None:
            change = f" {_compact(self.before)} -> {_compact(self.after)}"
        return f"#{self.id} {self.at} {self.actor} {self.action} {self.subject} ({self.source}){change}"


def _compact(value: Mapping[str, Any] | None) -> str:
    return "-" if value is None else json.dumps(value, separators=(",", ":"), sort_keys=True)


def _json(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(dict(value), separators=(",", ":"), sort_keys=True)


def _member(row: Any) -> StaffMember:
    i, n, r, a, b, p, c, u = row
    return StaffMember(str(i), str(n), str(r), bool(a), None if b is None else str(b), p is not None, str(c), str(u))


def _user(row: Any) -> PitUser:
    n, r, a, _h, c, u = row
    return PitUser(str(n), str(r), bool(a), str(c), str(u))


def _entry(row: Any) -> AuditEntry:
    i, at, actor, action, subject, before, after, source = row
    return AuditEntry(int(i), str(at), str(actor), str(action), str(subject),
                      None if before is None else json.loads(before), None if after is None else json.loads(after),
                      str(source))  # fmt: skip


class People:
    """The staff registry, the pit's users and the audit log on the archive's :class:`~floor.archive.store.Store`
    (see the module's notes). ``actor`` of a change is who made it (an operator's login, a pit user's name)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    # -- the tables ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Make the tables (``CREATE ... IF NOT EXISTS``; two commands at once on PostgreSQL: one makes them)."""
        self._store.check_file()
        serial = "BIGSERIAL PRIMARY KEY" if self._store.dialect is POSTGRES else "INTEGER PRIMARY KEY AUTOINCREMENT"
        with self._store.transaction() as cur:
            if self._store.dialect is POSTGRES:
                cur.execute("SELECT pg_advisory_xact_lock(4242003)")
            for statement in PEOPLE_SCHEMA:
                cur.execute(self._store.sql(statement.replace("{serial}", serial)))

    def present(self) -> bool:
        """Whether this archive has the tables (a change was made once)."""
        with self._store.transaction() as cur:
            if self._store.dialect is SQLITE:
                cur.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?)",
                            _PEOPLE_TABLES)  # fmt: skip
            else:
                cur.execute(
                    "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
                    " AND table_name IN (%s, %s, %s)",
                    _PEOPLE_TABLES,
                )
            return int(cur.fetchone()[0]) == len(_PEOPLE_TABLES)

    # -- the staff -------------------------------------------------------------------------------------
    def staff(self) -> list[StaffMember]:
        """Every member, active and disabled, by id."""
        if not self.present():
            return []
        with self._store.transaction() as cur:
            cur.execute(f"SELECT {_STAFF_COLUMNS} FROM staff ORDER BY id")
            return [_member(row) for row in cur.fetchall()]

    def table_staff(self) -> tuple[str, list[tuple[str, str, str | None, str | None]]]:
        """What the tables need of the registry (:mod:`floor_protocol.staff`): the registry's last change (its
        newest ``updated_at``, "" when empty) and each **active** member with a badge or a PIN as
        ``(id, role, badge, pin_hash)``, by id. Never a name."""
        if not self.present():
            return "", []
        with self._store.transaction() as cur:
            cur.execute("SELECT max(updated_at) FROM staff")
            (as_of,) = cur.fetchone()
            cur.execute(
                "SELECT id, role, badge, pin_hash FROM staff WHERE active = 1"
                " AND (badge IS NOT NULL OR pin_hash IS NOT NULL) ORDER BY id"
            )
            rows = [(str(i), str(r), None if b is None else str(b), None if h is None else str(h))
                    for i, r, b, h in cur.fetchall()]  # fmt: skip
        return ("" if as_of is None else str(as_of)), rows

    def member(self, member_id: str) -> StaffMember | None:
        if not self.present():
            return None
        with self._store.transaction() as cur:
            return self._member_in(cur, member_id)

    def _member_in(self, cur: Any, member_id: str) -> StaffMember | None:
        cur.execute(self._store.sql(f"SELECT {_STAFF_COLUMNS} FROM staff WHERE id = ?"), (member_id,))
        row = cur.fetchone()
        return None if row is None else _member(row)

    def add_staff(
        self, member_id: str, name: str, role: str, *, actor: str, badge: str | None = None, pin: str | None = None
    ) -> StaffMember:
        """A new member, active; their badge (unique among active staff) and PIN if given."""
        member_id, name, role = staff_id(member_id), _name(name), _role(role, STAFF_ROLES)
        badge = None if badge is None else badge_uid(badge)
        pin_hash = None if pin is None else hash_secret(check_pin(pin))
        self.prepare()
        stamp = now()

        def change(cur: Any) -> tuple[None, None]:
            if self._member_in(cur, member_id) is not None:
                raise StaffError(f"staff {member_id} is already in the registry")
            cur.execute(
                self._store.sql(f"INSERT INTO staff ({_STAFF_COLUMNS}) VALUES (?, ?, ?, 1, ?, ?, ?, ?)"),
                (member_id, name, role, badge, pin_hash, stamp, stamp),
            )
            return None, None

        return self._change_staff(member_id, "staff_added", actor, change, badge)

    def set_active(self, member_id: str, active: bool, *, actor: str) -> StaffMember:
        """Disable a member (their badge and PIN stop working at once) or enable them again."""

        def change(cur: Any) -> tuple[None, None]:
            cur.execute(self._store.sql("UPDATE staff SET active = ?, updated_at = ? WHERE id = ?"),
                        (int(active), now(), member_id))  # fmt: skip
            return None, None

        was = self._existing(member_id)
        if was.active == active:
            raise StaffError(f"staff {member_id} is already {'active' if active else 'disabled'}")
        return self._change_staff(member_id, "staff_enabled" if active else "staff_disabled", actor, change, was.badge)

    def set_pin(self, member_id: str, pin: str, *, actor: str) -> StaffMember:
        """Set a member's PIN (only its salted hash is kept)."""
        pin_hash = hash_secret(check_pin(pin))
        self._existing(member_id)

        def change(cur: Any) -> tuple[None, None]:
            cur.execute(self._store.sql("UPDATE staff SET pin_hash = ?, updated_at = ? WHERE id = ?"),
                        (pin_hash, now(), member_id))  # fmt: skip
            return None, None

        return self._change_staff(member_id, "staff_pin_set", actor, change, None)

    def set_badge(self, member_id: str, badge: str | None, *, actor: str) -> StaffMember:
        """Give a member a badge (None: take theirs away)."""
        badge = None if badge is None else badge_uid(badge)
        self._existing(member_id)

        def change(cur: Any) -> tuple[None, None]:
            cur.execute(self._store.sql("UPDATE staff SET badge = ?, updated_at = ? WHERE id = ?"),
                        (badge, now(), member_id))  # fmt: skip
            return None, None

        return self._change_staff(member_id, "staff_badge_set", actor, change, badge)

    def _existing(self, member_id: str) -> StaffMember:
        found = self.member(staff_id(member_id))
        if found is None:
            raise StaffError(f"staff {member_id}: not in the registry")
        return found

    def _change_staff(self, member_id: str, action: str, actor: str, change: Any, badge: str | None) -> StaffMember:
        """Apply ``change`` (a function of the cursor) and its audit row in one transaction."""
        self.prepare()
        try:
            with self._store.transaction() as cur:
                before = self._member_in(cur, member_id)
                change(cur)
                after = self._member_in(cur, member_id)
                assert after is not None
                self._audit_in(cur, actor, action, f"staff:{member_id}",
                               None if before is None else before.audited(), after.audited(), "cli")  # fmt: skip
        except BaseException as exc:
            if is_unique_violation(exc) and not isinstance(exc, StaffError):
                holder = next((m.id for m in self.staff() if m.active and m.badge == badge and m.id != member_id), "?")
                raise StaffError(f"badge {badge} is active staff {holder}'s: one badge per active member") from None
            raise
        return after

    # -- the pit's users -------------------------------------------------------------------------------
    def users(self) -> list[PitUser]:
        if not self.present():
            return []
        with self._store.transaction() as cur:
            cur.execute(f"SELECT {_USER_COLUMNS} FROM pit_users ORDER BY name")
            return [_user(row) for row in cur.fetchall()]

    def active_users(self) -> int:
        """How many pit users can sign in (0: the pit has no users configured)."""
        return sum(1 for u in self.users() if u.active)

    def credentials(self, name: str) -> tuple[PitUser, str] | None:
        """A user and their password's hash, for signing in; None: no such user."""
        if not self.present():
            return None
        with self._store.transaction() as cur:
            cur.execute(self._store.sql(f"SELECT {_USER_COLUMNS} FROM pit_users WHERE name = ?"), (name,))
            row = cur.fetchone()
        return None if row is None else (_user(row), str(row[3]))

    def _user_in(self, cur: Any, name: str) -> PitUser | None:
        cur.execute(self._store.sql(f"SELECT {_USER_COLUMNS} FROM pit_users WHERE name = ?"), (name,))
        row = cur.fetchone()
        return None if row is None else _user(row)

    def add_user(self, name: str, role: str, password: str, *, actor: str) -> PitUser:
        name, role = user_name(name), _role(role, PIT_ROLES)
        password_hash = hash_secret(check_password(password))
        stamp = now()

        def change(cur: Any) -> None:
            if self._user_in(cur, name) is not None:
                raise StaffError(f"user {name} already exists")
            cur.execute(self._store.sql(f"INSERT INTO pit_users ({_USER_COLUMNS}) VALUES (?, ?, 1, ?, ?, ?)"),
                        (name, role, password_hash, stamp, stamp))  # fmt: skip

        return self._change_user(name, "user_added", actor, change)

    def set_user_active(self, name: str, active: bool, *, actor: str) -> PitUser:
        """Disable a user (their sessions end at their next request) or enable them again."""

        def change(cur: Any) -> None:
            was = self._user_in(cur, name)
            if was is None:
                raise StaffError(f"user {name}: no such user")
            if was.active == active:
                raise StaffError(f"user {name} is already {'active' if active else 'disabled'}")
            cur.execute(self._store.sql("UPDATE pit_users SET active = ?, updated_at = ? WHERE name = ?"),
                        (int(active), now(), name))  # fmt: skip

        return self._change_user(name, "user_enabled" if active else "user_disabled", actor, change)

    def set_password(self, name: str, password: str, *, actor: str) -> PitUser:
        password_hash = hash_secret(check_password(password))

        def change(cur: Any) -> None:
            if self._user_in(cur, name) is None:
                raise StaffError(f"user {name}: no such user")
            cur.execute(self._store.sql("UPDATE pit_users SET password_hash = ?, updated_at = ? WHERE name = ?"),
                        (password_hash, now(), name))  # fmt: skip

        return self._change_user(name, "user_password_set", actor, change)

    def _change_user(self, name: str, action: str, actor: str, change: Any) -> PitUser:
        self.prepare()
        with self._store.transaction() as cur:
            before = self._user_in(cur, name)
            change(cur)
            after = self._user_in(cur, name)
            assert after is not None
            self._audit_in(cur, actor, action, f"user:{name}", None if before is None else before.audited(),
                           after.audited(), "cli")  # fmt: skip
        return after

    # -- the audit log ---------------------------------------------------------------------------------
    def audit(
        self,
        actor: str,
        action: str,
        subject: str,
        *,
        source: str,
        before: Mapping[str, Any] | None = None,
        after: Mapping[str, Any] | None = None,
        at: str | None = None,
    ) -> None:
        """Add one row to the audit log (its own transaction)."""
        self._store.check_file()
        with self._store.transaction() as cur:
            self._audit_in(cur, actor, action, subject, before, after, source, at)

    def audit_in(
        self,
        cur: Any,
        actor: str,
        action: str,
        subject: str,
        *,
        source: str,
        after: Mapping[str, Any] | None = None,
        at: str | None = None,
    ) -> None:
        """Add one row to the audit log inside the caller's transaction (a change made elsewhere in the archive,
        an alert acknowledged, and its audit row commit together). The tables must be there (the pit's users)."""
        self._audit_in(cur, actor, action, subject, None, after, source, at)

    def _audit_in(
        self,
        cur: Any,
        actor: str,
        action: str,
        subject: str,
        before: Mapping[str, Any] | None,
        after: Mapping[str, Any] | None,
        source: str,
        at: str | None = None,
    ) -> None:
        cur.execute(
            self._store.sql(
                "INSERT INTO audit_log (at, actor, action, subject, before, after, source) VALUES (?, ?, ?, ?, ?, ?, ?)"
            ),
            (at or now(), actor[:64], action[:64], subject[:100], _json(before), _json(after), source[:100]),
        )

    def audit_log(self, last: int | None = None, subject: str | None = None) -> list[AuditEntry]:
        """The audit log, oldest first: the last ``last`` rows (None: all), of one ``subject`` or all."""
        if not self.present():
            return []
        rows = self._store.newest(
            f"SELECT {_AUDIT_COLUMNS} FROM audit_log", "subject" if subject else None, subject, last
        )
        return [_entry(row) for row in reversed(rows)]

    def failures(self, subject: str, since: str) -> list[str]:
        """The times (newest first) of ``subject``'s failed sign-ins after ``since`` and after its last sign-in or
        unlock: what its lock-out is judged on."""
        with self._store.transaction() as cur:
            cur.execute(
                self._store.sql(
                    "SELECT at FROM audit_log WHERE subject = ? AND action = 'sign_in_failed' AND at > ? AND id >"
                    " COALESCE((SELECT max(id) FROM audit_log WHERE subject = ?"
                    " AND action IN ('signed_in', 'unlocked')), 0) ORDER BY id DESC LIMIT 100"
                ),
                (subject, since, subject),
            )
            return [str(row[0]) for row in cur.fetchall()]

    def unlock(self, name: str, *, actor: str) -> None:
        """End a user's lock-out now (their failures so far no longer count)."""
        if not any(u.name == name for u in self.users()):
            raise StaffError(f"user {name}: no such user")
        self.audit(actor, "unlocked", f"user:{name}", source="cli")
