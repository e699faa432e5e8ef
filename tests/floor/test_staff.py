"""The staff registry and the pit's users in the archive (floor/archive/staff.py), and ``shoe-floor staff``,
``shoe-floor user`` and ``shoe-floor audit``: every change an audit row, a PIN or password only ever as a salted
hash, a badge once among active staff, bad input one line and exit 2."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from floor.archive import Archive, StaffError
from floor.passwords import verify_secret
from tests.console import Result, run_main


def shoe_floor(*args: str) -> Result:
    return run_main(["shoe-floor", *args])


def secret_file(tmp_path: Path, text: str, name: str = "secret") -> str:
    path = tmp_path / name
    path.write_text(text + "\n")
    return str(path)


@pytest.mark.dialects
def test_the_registry_keeps_staff_and_audits_every_change(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        people = archive.people
        ann = people.add_staff("D042", "Ann  Lee", "dealer", actor="boss", badge="04:a2:b3:c4", pin="1234")
        assert (ann.id, ann.name, ann.role, ann.active, ann.badge, ann.has_pin) == (
            "D042", "Ann Lee", "dealer", True, "04A2B3C4", True)  # fmt: skip
        people.add_staff("S007", "Sam Wu", "supervisor", actor="boss")
        # A badge is one active member's: a second one is refused, nothing changed.
        with pytest.raises(StaffError, match="badge 04A2B3C4 is active staff D042's"):
            people.set_badge("S007", "04A2B3C4", actor="boss")
        assert people.member("S007").badge is None  # type: ignore[union-attr]
        people.set_active("D042", False, actor="boss")
        people.set_badge("S007", "04a2b3c4", actor="boss")  # free once its holder is disabled
        with pytest.raises(StaffError, match="badge 04A2B3C4 is active staff S007's"):
            people.set_active("D042", True, actor="boss")  # and enabling its old holder is refused then
        people.set_pin("S007", "987654", actor="boss")
        with pytest.raises(StaffError, match="already in the registry"):
            people.add_staff("D042", "Ann Again", "dealer", actor="boss")
        with pytest.raises(StaffError, match="not in the registry"):
            people.set_pin("NOPE", "1234", actor="boss")
        staff = {m.id: m for m in people.staff()}
        assert staff["D042"].active is False and staff["S007"].badge == "04A2B3C4" and staff["S007"].has_pin
        log = people.audit_log()
        assert [(e.actor, e.action, e.subject) for e in log] == [
            ("boss", "staff_added", "staff:D042"),
            ("boss", "staff_added", "staff:S007"),
            ("boss", "staff_disabled", "staff:D042"),
            ("boss", "staff_badge_set", "staff:S007"),
            ("boss", "staff_pin_set", "staff:S007"),
        ]
        assert log[2].before["active"] is True and log[2].after["active"] is False  # type: ignore[index]
        assert log[3].before["badge"] is None and log[3].after["badge"] == "04A2B3C4"  # type: ignore[index]
        assert log[4].before["pin"] is None and log[4].after["pin"] == "set"  # type: ignore[index]
        assert people.audit_log(subject="staff:D042")[-1].action == "staff_disabled"
        # The PIN is stored as a salted Argon2 hash, never as itself, and never in the audit log.
        cur = archive.connection.cursor()
        cur.execute("SELECT id, pin_hash FROM staff ORDER BY id")
        hashes = dict(cur.fetchall())
        cur.execute("SELECT before, after FROM audit_log")
        audit_text = json.dumps(cur.fetchall())
        archive.connection.rollback()
    assert hashes["D042"].startswith("$argon2id$") and verify_secret(hashes["D042"], "1234")
    assert not verify_secret(hashes["D042"], "1235")
    assert "1234" not in audit_text and "987654" not in audit_text and "$argon2" not in audit_text


@pytest.mark.dialects
def test_pit_users_are_hashed_and_audited(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        people = archive.people
        assert people.active_users() == 0 and people.users() == []
        people.add_user("alice", "pit_manager", "correct horse battery", actor="ops")
        people.add_user("vic", "viewer", "another long one", actor="ops")
        assert people.active_users() == 2
        people.set_user_active("vic", False, actor="ops")
        assert people.active_users() == 1
        user, stored = people.credentials("alice")  # type: ignore[misc]
        assert user.role == "pit_manager" and verify_secret(stored, "correct horse battery")
        people.set_password("alice", "a new long password", actor="ops")
        assert verify_secret(people.credentials("alice")[1], "a new long password")  # type: ignore[index]
        with pytest.raises(StaffError, match="password: 10 to 256"):
            people.add_user("bob", "viewer", "short", actor="ops")
        with pytest.raises(StaffError, match="role 'boss'"):
            people.add_user("bob", "boss", "long enough pass", actor="ops")
        with pytest.raises(StaffError, match="already disabled"):
            people.set_user_active("vic", False, actor="ops")
        # Lock-out counts failures since the last sign-in or unlock.
        for _ in range(3):
            people.audit("alice", "sign_in_failed", "user:alice", source="pit 127.0.0.1")
        assert len(people.failures("user:alice", "2000-01-01T00:00:00.000Z")) == 3
        assert people.failures("user:alice", "2999-01-01T00:00:00.000Z") == []
        people.unlock("alice", actor="ops")
        assert people.failures("user:alice", "2000-01-01T00:00:00.000Z") == []
        actions = [e.action for e in people.audit_log()]
        assert actions[:4] == ["user_added", "user_added", "user_disabled", "user_password_set"]
        assert actions[-1] == "unlocked"


def test_the_commands_change_the_registry_and_say_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    pin = secret_file(tmp_path, "4321")
    added = shoe_floor("staff", "add", "--archive", url, "--id", "D1", "--name", "Dee", "--role", "dealer",
                       "--badge", "0A0B0C0D", "--pin-file", pin, "--by", "shift boss")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout == "staff D1 added: dealer, badge 0A0B0C0D, PIN set\n"
    assert "made a new archive" in added.stderr
    for args in (
        ["add", "--id", "S1", "--name", "Sue", "--role", "supervisor"],
        ["set-pin", "--id", "S1", "--pin-file", pin],
        ["set-badge", "--id", "S1", "--badge", "11223344"],
        ["disable", "--id", "D1"],
        ["enable", "--id", "D1"],
        ["set-badge", "--id", "D1", "--none"],
    ):
        done = shoe_floor("staff", args[0], "--archive", url, *args[1:])
        assert done.returncode == 0, (args, done.stderr)
    listed = shoe_floor("staff", "list", "--archive", url, "--json")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["id"], r["role"], r["active"], r["badge"], r["has_pin"]) for r in rows] == [
        ("D1", "dealer", True, None, True),
        ("S1", "supervisor", True, "11223344", True),
    ]
    assert all("pin_hash" not in r for r in rows)
    text = shoe_floor("staff", "list", "--archive", url).stdout
    assert "D1" in text and "Dee" in text and "$argon2" not in text
    audit = [json.loads(line) for line in shoe_floor("audit", "--archive", url, "--json").stdout.splitlines()]
    assert [a["action"] for a in audit] == ["staff_added", "staff_added", "staff_pin_set", "staff_badge_set",
                                            "staff_disabled", "staff_enabled", "staff_badge_set"]  # fmt: skip
    assert audit[0]["actor"] == "shift boss" and audit[0]["source"] == "cli"
    assert "4321" not in json.dumps(audit)
    raw = sqlite3.connect(f"{tmp_path}/archive.db").execute("SELECT pin_hash FROM staff").fetchall()
    assert all(h.startswith("$argon2id$") for (h,) in raw)


def test_the_user_commands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    password = secret_file(tmp_path, "a long pit password")
    assert shoe_floor("user", "add", "--archive", url, "--name", "pam", "--role", "pit_manager",
                      "--password-file", password).returncode == 0  # fmt: skip
    assert shoe_floor("user", "add", "--archive", url, "--name", "vi", "--role", "viewer",
                      "--password-file", password).returncode == 0  # fmt: skip
    assert shoe_floor("user", "disable", "--archive", url, "--name", "vi").stdout == "user vi disabled\n"
    assert shoe_floor("user", "unlock", "--archive", url, "--name", "pam").stdout == "user pam unlocked\n"
    listed = [json.loads(x) for x in shoe_floor("user", "list", "--archive", url, "--json").stdout.splitlines()]
    assert [(u["name"], u["role"], u["active"]) for u in listed] == [("pam", "pit_manager", True),
                                                                      ("vi", "viewer", False)]  # fmt: skip
    assert "a long pit password" not in shoe_floor("audit", "--archive", url).stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["staff", "add", "--id", "D 1", "--name", "x", "--role", "dealer"], "staff id 'D 1'"),
        (["staff", "add", "--id", "D1", "--name", "x", "--role", "boss"], "invalid choice: 'boss'"),
        (["staff", "add", "--id", "D1", "--name", "x", "--role", "dealer", "--badge", "xyz"], "badge 'xyz'"),
        (["staff", "add", "--id", "D1", "--name", "x", "--role", "dealer", "--pin-file", "BADPIN"], "PIN: 4 to 12"),
        (["staff", "add", "--id", "D1", "--name", "x", "--role", "dealer", "--pin-file", "/no/such"], "PIN file"),
        (["staff", "disable", "--id", "NOPE"], "staff NOPE: not in the registry"),
        (["staff", "set-pin", "--id", "D1"], "no terminal to ask for the PIN on"),
        (["staff", "set-badge", "--id", "D1"], "one of the arguments --badge --none is required"),
        (["staff", "add", "--id", "D1", "--name", "x", "--role", "dealer", "--pin", "1234"], "unrecognized"),
        (["user", "add", "--name", "Bad Name", "--role", "viewer", "--password-file", "PW"], "user name 'Bad Name'"),
        (["user", "add", "--name", "bob", "--role", "viewer"], "no terminal to ask for the password on"),
        (["user", "disable", "--name", "nobody"], "user nobody: no such user"),
        (["user", "unlock", "--name", "nobody"], "user nobody: no such user"),
        (["staff", "list", "--archive-typo", "x"], "required: --archive"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    files = {"BADPIN": secret_file(tmp_path, "12ab", "pin"), "PW": secret_file(tmp_path, "long enough pw", "pw")}
    args = [files.get(a, a) for a in args]
    if "--archive-typo" not in args:
        args = [*args[:2], "--archive", url, *args[2:]]
    result = shoe_floor(*args)
    assert result.returncode == 2, result
    lines = [line for line in result.stderr.splitlines() if "made a new archive" not in line]
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_listing_an_archive_without_staff(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    listed = shoe_floor("staff", "list", "--archive", url)
    assert listed.returncode == 0 and listed.stdout == "" and "no staff" in listed.stderr
    assert shoe_floor("audit", "--archive", url).returncode == 0
    assert shoe_floor("staff", "list", "--archive", f"sqlite:///{tmp_path}/none.db").returncode == 2
