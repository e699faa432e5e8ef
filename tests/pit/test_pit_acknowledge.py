"""A pit manager acknowledges an alert on a real served pit, over real HTTP (floor/pit_actions.py): ``GET
/api/session`` says who is signed in and the session's CSRF token; ``POST /api/feed/ack`` acknowledges once, is an
audit row, and reaches the feed every open page is sent; every other role, no CSRF token, no session, an expired
one, and every body not of its shape are refused in one line and counted on ``/metrics``; the pit goes on."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.game.records import TableRecord
from floor.archive import Alert, Archive
from floor.pit import Pit
from floor.pit_actions import MAX_ACTION_BYTES
from floor.pit_auth import REFUSALS, SessionRules
from tests.pit.test_pit_users import PASSWORDS, Client, Clock

pytestmark = pytest.mark.e2e


@pytest.fixture
def url(tmp_path: Path, journal: list[TableRecord]) -> str:
    url = f"sqlite:///{tmp_path}/archive.db"
    with Archive(url) as archive:
        archive.store(journal)
        archive.alert([Alert("T1", 7, "past_post", "seat 3 player: chips added after the lock", "s1"),
                       Alert("T1", None, "repeated_shoe", "a shoe dealt before", "s1")])  # fmt: skip
        for name, role in (("pam", "pit_manager"), ("sue", "surveillance"), ("vic", "viewer")):
            archive.people.add_user(name, role, PASSWORDS[name], actor="test")
    return url


@pytest.fixture
def pit(url: str) -> Iterator[Pit]:
    pit = Pit(url, sessions=SessionRules(lifetime=3600.0, idle=600.0))
    pit.gate.clock = Clock()
    pit.start(("127.0.0.1", 0), None)
    try:
        yield pit
    finally:
        pit.close()


def session_of(c: Client) -> dict[str, Any]:
    status, _h, body = c.request("GET", "/api/session")
    assert status == 200, body
    return dict(json.loads(body))


def ack(c: Client, body: bytes, csrf: str | None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST /api/feed/ack with ``body`` (JSON unless ``headers`` say otherwise); the status and its JSON."""
    conn = http.client.HTTPConnection(c.host, c.port, timeout=20)
    try:
        sent = {"Content-Type": "application/json", **(headers or {})}
        if csrf is not None:
            sent["X-CSRF-Token"] = csrf
        if c.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in c.cookies.items())
        conn.request("POST", "/api/feed/ack", body=body, headers=sent)
        r = conn.getresponse()
        data = r.read()
        assert data.count(b"\n") == 0 and len(data) < 400, data  # one line
        return r.status, json.loads(data)
    finally:
        conn.close()


def refused_counts(c: Client) -> dict[str, float]:
    status, _h, text = c.request("GET", "/metrics")
    assert status == 200
    found = re.findall(rb'^shoe_floor_pit_actions_refused_total\{why="(\w+)"\} (\S+)$', text, re.M)
    return {why.decode(): float(n) for why, n in found}


def alert_ids(url: str) -> dict[str, int]:
    with Archive(url, create=False) as archive:
        return {i.kind: i.id for i in archive.feed()}


def acked(url: str) -> dict[int, tuple[str | None, str | None]]:
    with Archive(url, create=False) as archive:
        return {i.id: (i.acked_by, i.acked_at) for i in archive.feed()}


def test_a_pit_manager_acknowledges_an_alert_once(pit: Pit, url: str) -> None:
    ids = alert_ids(url)
    c = Client(pit)
    assert c.sign_in("pam") == 303
    me = session_of(c)
    assert (me["user"], me["role"], me["actions"]) == ("pam", "pit_manager", ["/api/feed/ack"])
    assert isinstance(me["csrf"], str) and len(me["csrf"]) >= 32
    version = pit.board.current()[0]
    status, said = ack(c, json.dumps({"id": ids["past_post"]}).encode(), me["csrf"])
    assert status == 200 and (said["id"], said["outcome"]) == (ids["past_post"], "acknowledged")
    assert said["acked_by"] == "pam"
    at = said["acked_at"]
    assert acked(url)[ids["past_post"]] == ("pam", at) and acked(url)[ids["repeated_shoe"]] == (None, None)
    # Every open page has it at once: a new snapshot on the stream, the alert acknowledged in its feed.
    newer, body = pit.board.current()
    feed = {f["id"]: f for f in json.loads(body)["feed"]}
    assert newer > version and (feed[ids["past_post"]]["acked_by"], feed[ids["past_post"]]["acked_at"]) == ("pam", at)
    assert feed[ids["repeated_shoe"]]["acked_by"] is None
    _s, _h, stream = c.request("GET", "/events")
    assert b'"acked_by":"pam"' in stream
    # Again (a second click, a second pit manager): already, by pam, nothing changed.
    other = Client(pit)
    assert other.sign_in("pam") == 303
    status, said = ack(other, json.dumps({"id": ids["past_post"]}).encode(), session_of(other)["csrf"])
    assert status == 200 and (said["outcome"], said["acked_by"], said["acked_at"]) == ("already", "pam", at)
    assert acked(url)[ids["past_post"]] == ("pam", at)
    with Archive(url, create=False) as archive:
        rows = [(e.actor, e.action, e.subject) for e in archive.people.audit_log() if e.subject.startswith("alert:")]
    assert rows == [("pam", "alert_acknowledged", f"alert:{ids['past_post']}"),
                    ("pam", "alert_acknowledged_again", f"alert:{ids['past_post']}")]  # fmt: skip
    assert all(n == 0 for n in refused_counts(c).values()) and set(refused_counts(c)) == set(REFUSALS)


def test_an_acknowledgement_not_a_pit_managers_is_refused_and_counted(pit: Pit, url: str) -> None:
    ids = alert_ids(url)
    body = json.dumps({"id": ids["past_post"]}).encode()
    nobody, viewer, watcher, manager = Client(pit), Client(pit), Client(pit), Client(pit)
    assert viewer.sign_in("vic") == 303 and watcher.sign_in("sue") == 303 and manager.sign_in("pam") == 303
    assert session_of(viewer)["role"] == "viewer" and session_of(viewer)["actions"] == []  # a viewer may ask
    # Signed in as a viewer or surveillance, with the session's own token: not for the role.
    for client in (viewer, watcher):
        status, said = ack(client, body, session_of(client)["csrf"])
        assert status == 403 and "not for your role" in said["error"], said
    # No session at all, no CSRF token, a wrong one, another site's page.
    assert ack(nobody, body, None)[0] == 401
    token = session_of(manager)["csrf"]
    status, said = ack(manager, body, None)
    assert status == 403 and "CSRF" in said["error"]
    assert ack(manager, body, "x" + token)[0] == 403
    assert ack(manager, body, "ü" * 43)[0] == 403  # not even ASCII: refused, not a crash
    assert ack(manager, body, token, {"Origin": "http://evil.example"})[0] == 403
    assert acked(url)[ids["past_post"]] == (None, None)
    counts = refused_counts(manager)
    assert (counts["role"], counts["no_session"], counts["csrf"]) == (2, 1, 4)
    with Archive(url, create=False) as archive:
        rows = [(e.actor, e.action) for e in archive.people.audit_log() if e.source.startswith("pit")]
    assert rows.count(("vic", "refused")) == 1 and rows.count(("sue", "refused")) == 1
    assert rows.count(("pam", "csrf_refused")) == 4
    # An expired session (idle past its 600 s): refused as none, and said so in the audit log.
    clock = pit.gate.clock
    assert isinstance(clock, Clock)
    clock.now += 601
    status, said = ack(manager, body, token)
    assert status == 401 and said == {"error": "sign in first"}
    assert refused_counts(manager)["no_session"] == 2 and acked(url)[ids["past_post"]] == (None, None)
    assert manager.sign_in("pam") == 303  # and the pit goes on
    assert ack(manager, body, session_of(manager)["csrf"])[0] == 200


@pytest.mark.parametrize(
    ("body", "headers", "status", "says"),
    [
        (b"not json", {}, 400, "not JSON"),
        (b'{"id": 1', {}, 400, "not JSON"),
        (b'{"id": "1"}', {}, 400, "id: not an alert's id"),
        (b'{"id": true}', {}, 400, "id: not an alert's id"),
        (b'{"id": 1.0}', {}, 400, "id: not an alert's id"),
        (b'{"id": 0}', {}, 400, "id: not an alert's id"),
        (b'{"id": 99999999999999999999}', {}, 400, "not"),
        (b'{"id": 1, "also": 2}', {}, 400, "nothing else"),
        (b"[1]", {}, 400, "nothing else"),
        (b'{"id": 1}', {"Content-Type": "application/x-www-form-urlencoded"}, 415, "JSON"),
        (b'{"id": ' + b" " * MAX_ACTION_BYTES + b"1}", {}, 413, "at most"),
        (b'{"id": 424242}', {}, 404, "no alert 424242"),
    ],
)
def test_an_acknowledgement_not_of_its_shape_is_refused_in_one_line_and_counted(
    pit: Pit, url: str, body: bytes, headers: dict[str, str], status: int, says: str
) -> None:
    c = Client(pit)
    assert c.sign_in("pam") == 303
    got, said = ack(c, body, session_of(c)["csrf"], headers)
    assert got == status and says in said["error"], said
    counts = refused_counts(c)
    assert counts["unknown_alert" if status == 404 else "body"] == 1 and sum(counts.values()) == 1
    assert all(v == (None, None) for v in acked(url).values())
    assert c.get("/api/pit") == 200  # the pit goes on


def test_an_acknowledgement_without_its_length_is_refused(pit: Pit) -> None:
    c = Client(pit)
    assert c.sign_in("pam") == 303
    conn = http.client.HTTPConnection(c.host, c.port, timeout=20)
    conn.putrequest("POST", "/api/feed/ack")
    conn.putheader("Cookie", f"shoe_pit_session={c.cookies['shoe_pit_session']}")
    conn.putheader("Content-Type", "application/json")
    conn.endheaders()
    r = conn.getresponse()
    assert r.status == 411 and b"Content-Length" in r.read()
    conn.close()
    assert refused_counts(c)["body"] == 1


def test_a_pit_without_users_acknowledges_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/open.db"
    with Archive(url) as archive:
        (item,) = archive.alert([Alert("T1", None, "gap", "missing", "s1")])
    pit = Pit(url)
    pit.start(("127.0.0.1", 0), None)
    try:
        c = Client(pit)
        assert session_of(c) == {"user": None, "role": None, "csrf": None, "actions": []}
        status, said = ack(c, json.dumps({"id": item.id}).encode(), None)
        assert status == 403 and "no users" in said["error"]
        assert refused_counts(c)["no_session"] == 1
    finally:
        pit.close()
    with Archive(url, create=False) as archive:
        assert archive.feed()[0].acked_by is None
