"""The pit's users against a real served pit (floor/pit_auth.py), over real HTTP: every page asks for a session
once the pit has users, each role sees what it may, CSRF on every POST, the lock-out, sessions that expire, every
sign-in, failure, lock-out and action an audit row; the pit will not serve off loopback without users."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from controller.game.records import TableRecord
from floor.archive import Alert, Archive
from floor.pit import Pit
from floor.pit_auth import GateError, SessionRules, is_loopback, may
from tests.console import run_main
from tests.servers import free_port

pytestmark = pytest.mark.e2e

PASSWORDS = {"pam": "pit manager's password", "sue": "surveillance password", "vic": "viewer's password"}


class Client:
    """One browser: its cookies, requests without following redirects."""

    def __init__(self, pit: Pit) -> None:
        self.host, self.port = pit.address
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        try:
            sent = dict(headers or {})
            if self.cookies:
                sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            body = None
            if form is not None:
                body = urlencode(form).encode()
                sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
            conn.request(method, path, body=body, headers=sent)
            r = conn.getresponse()
            data = r.read() if path != "/events" else r.read1(65536) if r.status == 200 else r.read()
            got = {k.lower(): v for k, v in r.getheaders()}
            for name, value in r.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.partition("=")
                    val = rest.split(";", 1)[0]
                    if "Max-Age=0" in value:
                        self.cookies.pop(key, None)
                    else:
                        self.cookies[key] = val
            return r.status, got, data
        finally:
            conn.close()

    def get(self, path: str) -> int:
        return self.request("GET", path)[0]

    def form_token(self) -> str:
        status, _h, page = self.request("GET", "/signin")
        assert status == 200
        found = re.search(rb'name="csrf" value="([^"]+)"', page)
        assert found is not None
        return found.group(1).decode()

    def sign_in(self, name: str, password: str | None = None, next_path: str = "/") -> int:
        token = self.form_token()
        form = {"name": name, "password": PASSWORDS.get(name, "") if password is None else password, "csrf": token,
                "next": next_path}  # fmt: skip
        return self.request("POST", "/signin", form)[0]


@pytest.fixture
def url(tmp_path: Path, journal: list[TableRecord]) -> str:
    url = f"sqlite:///{tmp_path}/archive.db"
    with Archive(url) as archive:
        archive.store(journal)
        archive.alert([Alert("T1", None, "repeated_shoe", "a shoe dealt before", "s1")])
        for name, role in (("pam", "pit_manager"), ("sue", "surveillance"), ("vic", "viewer")):
            archive.people.add_user(name, role, PASSWORDS[name], actor="test")
    return url


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pit(url: str) -> Iterator[Pit]:
    pit = Pit(url, sessions=SessionRules(lifetime=3600.0, idle=600.0))
    pit.gate.clock = Clock()
    pit.start(("127.0.0.1", 0), None)
    try:
        yield pit
    finally:
        pit.close()


def audit(url: str) -> list[tuple[str, str]]:
    with Archive(url, create=False) as archive:
        return [(e.actor, e.action) for e in archive.people.audit_log() if e.source.startswith("pit")]


def test_with_users_every_page_and_api_asks_for_a_session(pit: Pit) -> None:
    c = Client(pit)
    status, headers, _ = c.request("GET", "/table/T1")
    assert status == 303 and headers["location"] == "/signin?next=%2Ftable%2FT1"
    for path in ("/api/pit", "/api/feed", "/api/table/T1", "/api/table/T1/coup?shoe=1&coup=1", "/events"):
        assert c.get(path) == 401, path
    assert c.get("/static/pit.css") == 200 and c.get("/metrics") == 200
    status, headers, page = c.request("GET", "/signin")
    assert status == 200 and b'data-testid="signin-form"' in page
    assert "form-action 'self'" in headers["content-security-policy"]
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    assert c.request("POST", "/api/pit", {"x": "1"})[0] == 405  # the pit still changes nothing else


def test_each_role_sees_what_it_may(pit: Pit, url: str) -> None:
    viewer, watcher, manager = Client(pit), Client(pit), Client(pit)
    assert viewer.sign_in("vic") == 303 and watcher.sign_in("sue") == 303
    status, headers, _ = manager.request(
        "POST", "/signin", {"name": "pam", "password": PASSWORDS["pam"], "csrf": manager.form_token(),
                            "next": "/table/T1"})  # fmt: skip
    assert status == 303 and headers["location"] == "/table/T1"
    # A viewer: the tiles, never the feed, the table pages or recall.
    status, _h, body = viewer.request("GET", "/api/pit")
    seen = json.loads(body)
    assert status == 200 and [t["table"] for t in seen["tables"]] == ["T1"] and seen["feed"] == []
    _s, _h, stream = viewer.request("GET", "/events")
    assert b'"feed":[]' in stream and b'"tables":[{' in stream
    for path in ("/api/feed", "/api/table/T1", "/table/T1", "/api/table/T1/coup?shoe=1&coup=1"):
        assert viewer.get(path) == 403, path
    # nor a player's page (issue 25): a carded player's visits, slips and buy-ins are not for a viewer
    for path in ("/player/P-1", "/api/player/P-1"):
        assert viewer.get(path) == 403, path
        assert watcher.get(path) != 403, path  # surveillance may (the player is unknown here: not refused)
    # Surveillance and the pit manager: everything, the feed included, and recall (an audit row each).
    for client in (watcher, manager):
        full = json.loads(client.request("GET", "/api/pit")[2])
        assert [a["kind"] for a in full["feed"]] == ["repeated_shoe"]
        assert client.get("/api/table/T1") == 200 and client.get("/table/T1") == 200
        assert client.get("/api/table/T1/coup?shoe=1&coup=1") == 200
    rows = audit(url)
    assert ("vic", "signed_in") in rows and ("sue", "signed_in") in rows and ("pam", "signed_in") in rows
    assert rows.count(("vic", "refused")) == 6  # the four routes above and a player's two pages
    assert ("sue", "recall") in rows and ("pam", "recall") in rows


def test_every_post_needs_its_csrf_token(pit: Pit, url: str) -> None:
    c = Client(pit)
    # Signing in without the form's token (its cookie), with a wrong one, or from another site's page.
    assert c.request("POST", "/signin", {"name": "pam", "password": PASSWORDS["pam"], "csrf": "x"})[0] == 403
    token = c.form_token()
    assert c.request("POST", "/signin", {"name": "pam", "password": PASSWORDS["pam"], "csrf": "y" + token})[0] == 403
    status = c.request("POST", "/signin", {"name": "pam", "password": PASSWORDS["pam"], "csrf": token},
                       headers={"Origin": "http://evil.example"})[0]  # fmt: skip
    assert status == 403 and c.get("/api/pit") == 401
    assert c.sign_in("pam") == 303 and c.get("/api/pit") == 200
    # Signing out: refused without the session's token; with it, the session ends.
    assert c.request("POST", "/signout", {})[0] == 403 and c.get("/api/pit") == 200
    status, _h, page = c.request("GET", "/signout")
    found = re.search(rb'name="csrf" value="([^"]+)"', page)
    assert status == 200 and found is not None
    status, headers, _ = c.request("POST", "/signout", {"csrf": found.group(1).decode()})
    assert status == 303 and headers["location"] == "/signin"
    assert c.get("/api/pit") == 401
    assert audit(url).count(("?", "csrf_refused")) == 3
    assert ("pam", "csrf_refused") in audit(url) and ("pam", "signed_out") in audit(url)
    # Bounded forms: too large, or not a form.
    assert c.request("POST", "/signin", {"name": "x" * 5000})[0] == 413
    assert c.request("POST", "/signin", {"a": "b"}, headers={"Content-Type": "application/json"})[0] == 415


def test_twenty_wrong_passwords_lock_the_account_until_unlocked(pit: Pit, url: str) -> None:
    c = Client(pit)
    answers = [c.sign_in("pam", "not the password") for _ in range(20)]
    assert answers[:5] == [401] * 5 and answers[5:] == [429] * 15
    assert c.sign_in("pam") == 429  # the right password too, while locked
    assert c.get("/api/pit") == 401
    other = Client(pit)
    assert other.sign_in("sue") == 303  # a lock-out is one user's
    rows = audit(url)
    assert rows.count(("pam", "sign_in_failed")) == 5 and rows.count(("pam", "locked_out")) == 1
    assert rows.count(("pam", "sign_in_locked")) == 16
    # A wrong name is said as a wrong password, and counted against that name.
    status, _h, page = c.request("POST", "/signin", {"name": "nobody", "password": "whatever it is",
                                                     "csrf": c.form_token()})  # fmt: skip
    assert status == 401 and b"wrong user name or password" in page
    assert run_main(["shoe-floor", "user", "unlock", "--archive", url, "--name", "pam"]).returncode == 0
    assert c.sign_in("pam") == 303 and c.get("/api/pit") == 200


def test_sessions_expire_when_idle_and_at_their_lifetime(pit: Pit, url: str) -> None:
    clock = pit.gate.clock
    assert isinstance(clock, Clock)
    c = Client(pit)
    assert c.sign_in("pam") == 303
    clock.now += 599
    assert c.get("/api/pit") == 200
    clock.now += 601  # idle past 600 s
    status, headers, _ = c.request("GET", "/")
    assert status == 303 and headers["location"].startswith("/signin")
    assert c.get("/api/pit") == 401
    assert ("pam", "session_expired") in audit(url)
    # Kept busy, a session still ends at its lifetime.
    assert c.sign_in("pam") == 303
    for _ in range(7):
        clock.now += 500
        assert c.get("/api/pit") == 200  # 3500 s since sign-in, never idle
    clock.now += 500  # 4000 s: past its 3600
    assert c.get("/api/pit") == 401


def test_an_open_event_stream_ends_with_its_session(url: str) -> None:
    pit = Pit(url, heartbeat=0.2)
    clock = pit.gate.clock = Clock()
    pit.start(("127.0.0.1", 0), None)
    try:
        c = Client(pit)
        assert c.sign_in("pam") == 303
        conn = http.client.HTTPConnection(c.host, c.port, timeout=10)
        conn.request("GET", "/events", headers={"Cookie": f"shoe_pit_session={c.cookies['shoe_pit_session']}"})
        stream = conn.getresponse()
        assert stream.status == 200 and b"data: " in stream.read1(65536)
        clock.now += 6  # past the stream's check interval, well within the session's idle time: it goes on
        assert stream.read1(65536)
        status, _h, page = c.request("GET", "/signout")
        assert status == 200
        token = re.search(rb'name="csrf" value="([^"]+)"', page)
        assert token is not None and c.request("POST", "/signout", {"csrf": token.group(1).decode()})[0] == 303
        clock.now += 6
        rest = b""
        while chunk := stream.read1(65536):  # ends (EOF) at its next heartbeat, never at the read's timeout
            rest += chunk
            assert len(rest) < 10_000_000
        conn.close()
    finally:
        pit.close()


def test_a_disabled_user_is_signed_out_at_the_next_request(pit: Pit, url: str) -> None:
    c = Client(pit)
    assert c.sign_in("sue") == 303 and c.get("/api/pit") == 200
    with Archive(url, create=False) as archive:
        archive.people.set_user_active("sue", False, actor="test")
    assert c.get("/api/pit") == 401
    assert c.sign_in("sue") == 401


def test_off_loopback_needs_users(tmp_path: Path, url: str) -> None:
    bare = f"sqlite:///{tmp_path}/bare.db"
    Archive(bare).close()
    pit = Pit(bare)
    try:
        with pytest.raises(GateError, match=r"will not serve on 0\.0\.0\.0 with no pit users"):
            pit.start(("0.0.0.0", 0), None)
    finally:
        pit.close()
    port = free_port()
    said = run_main(["shoe-floor", "pit", "--broker", "mqtt://127.0.0.1:1", "--archive", bare,
                     "--bind", f"0.0.0.0:{port}"])  # fmt: skip
    assert said.returncode == 2 and len(said.stderr.splitlines()) == 1 and "no pit users" in said.stderr
    # On loopback without users: open, as it always was.
    open_pit = Pit(bare)
    open_pit.start(("127.0.0.1", 0), None)
    try:
        assert Client(open_pit).get("/api/pit") == 200
    finally:
        open_pit.close()
    # With users, off loopback is served (and asks for a session).
    guarded = Pit(url)
    guarded.start(("0.0.0.0", 0), None)
    try:
        c = Client(guarded)
        c.host = "127.0.0.1"
        assert c.get("/api/pit") == 401 and c.sign_in("pam") == 303 and c.get("/api/pit") == 200
    finally:
        guarded.close()


def test_the_rules_in_words() -> None:
    assert may(None, "/api/table/T1") and may("surveillance", "/api/table/T1") and may("pit_manager", "/api/feed")
    assert may("viewer", "/api/pit") and may("viewer", "/events") and not may("viewer", "/api/feed")
    assert not may("viewer", "/table/T1") and not may("nobody", "/")
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("") and not is_loopback("10.0.0.5")
    with pytest.raises(GateError):
        SessionRules(lifetime=60, idle=120)
