"""Who may look at the pit page: its users' sign-in, their sessions, their roles, and the audit log of all of it.

The pit's users are kept in the archive (``shoe-floor user ...``, floor/archive/staff.py: a name, a role, an
Argon2id hash of the password). With none configured the pit is what it was, open, and only on loopback: it
refuses to listen anywhere else (:func:`check_bind`). With one or more, every page and API asks for a session:

* **sign-in** (``GET /signin`` the form, ``POST /signin``): a wrong name and a wrong password take as long and
  read the same; :data:`~floor.archive.staff.LOCK_FAILURES` failures of one name within
  :data:`~floor.archive.staff.LOCK_WINDOW` seconds lock it (every further try refused unread) until the window
  has passed or ``shoe-floor user unlock`` ends it; the failures are counted from the audit log, so a restart
  unlocks nobody;
* **sessions**: a random token in an ``HttpOnly``, ``SameSite=Strict`` cookie; a session ends
  :attr:`SessionRules.lifetime` after its sign-in or :attr:`SessionRules.idle` after its last request
  (default 8 h and 30 min), when its user is disabled, or at sign-out; an expired one is sent to the sign-in
  page (a page) or answered 401 (an API);
* **CSRF**: every request that changes anything is a POST carrying a token (the session's, which the page reads
  from ``GET /api/session``, in a form field or the ``X-CSRF-Token`` header; before a session, the sign-in
  form's, matched against its cookie), and one whose ``Origin`` is another site's is refused;
* **roles** on every route (:func:`may`): a viewer sees the tiles (the pit page, its snapshot and its event
  stream, without the alert feed); surveillance reads everything and recalls coups; a pit manager does all,
  and alone may act (:data:`ACTIONS`: acknowledging an alert, floor/pit_actions.py);
* **audit**: every sign-in, failure, lock-out, sign-out, expiry, refusal, recall and action is a row of the
  audit log (``shoe-floor audit``), with the remote address;
* **refusals counted**: every POST refused (no session, no valid CSRF token, not the role's, a bad body, an
  alert that does not exist) is counted by why (:data:`REFUSALS`; ``shoe_floor_pit_actions_refused_total{why}``
  on ``/metrics``) and answered in one line; the pit goes on.
"""

from __future__ import annotations

import html
import ipaddress
import json
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from commandline.times import utc_stamp
from floor.archive import Archive, PitUser
from floor.archive.staff import LOCK_FAILURES, LOCK_WINDOW, StaffError, user_name
from floor.passwords import verify_nothing, verify_secret

SESSION_COOKIE = "shoe_pit_session"
FORM_COOKIE = "shoe_pit_form"  # the sign-in form's CSRF token (double submit), before there is a session
#: Sessions kept at once; past it the oldest ends (a floor has tens of pit users).
MAX_SESSIONS = 1000
#: The largest form body read (a sign-in is well under 1 KiB).
MAX_FORM_BYTES = 4096
#: Seconds the pit trusts its reading of whether it has users (a user added while it runs is seen this soon).
USERS_CACHE = 2.0
#: What anyone may fetch: the static files (no data in them) and Prometheus' counters (a scraper signs in to
#: nothing; they count messages, never say what is in them).
PUBLIC = ("/static/", "/metrics")
#: The routes a viewer may use: the tiles, and nothing of the feed, the table pages or recall.
VIEWER_ROUTES = ("/", "/index.html", "/events", "/api/pit", "/api/session", "/signout")
#: What the pit's users may do (a POST each, CSRF token required), and the one role that may.
ACTIONS: Mapping[str, str] = {"/api/feed/ack": "pit_manager"}
#: Why a POST is refused (``shoe_floor_pit_actions_refused_total{why}``): no live session (or the pit has no
#: users), no valid CSRF token or another site's ``Origin``, not the user's role, a body not of its shape (not
#: JSON, too large, wrong types), an alert the archive does not hold.
REFUSALS = ("no_session", "csrf", "role", "body", "unknown_alert")
SIGNIN_PAGE = (Path(__file__).with_name("static") / "signin.html").read_text(encoding="utf-8")
#: The fields a form may carry (any other is ignored; one missing reads as empty).
FORM_FIELDS = ("csrf", "name", "password", "next")
_NEXT = "next"
_FORM_CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'"


class GateError(ValueError):
    """The pit cannot serve as asked (one line for the operator)."""


@dataclass(frozen=True, slots=True)
class SessionRules:
    """How long a session lasts (seconds): ``lifetime`` after its sign-in, ``idle`` after its last request."""

    lifetime: float = 8 * 3600.0
    idle: float = 30 * 60.0

    def __post_init__(self) -> None:
        if not (0 < self.idle <= self.lifetime):
            raise GateError("a session's idle time must be more than 0 and at most its lifetime")


@dataclass(slots=True)
class Session:
    token: str
    user: str
    role: str
    csrf: str
    address: str
    started: float
    seen: float


@dataclass(frozen=True, slots=True)
class Visitor:
    """Who a request is from: ``user`` and ``role`` None when the pit has no users (it is open, on loopback)."""

    user: str | None = None
    role: str | None = None
    session: Session | None = field(default=None, compare=False)

    @property
    def tiles_only(self) -> bool:
        return self.role == "viewer"


def may(role: str | None, path: str) -> bool:
    """Whether ``role`` may use the route ``path`` (None: the pit has no users, every route is open)."""
    if role is None or role in ("pit_manager", "surveillance"):
        return True
    return role == "viewer" and path in VIEWER_ROUTES


def may_act(role: str | None, path: str) -> bool:
    """Whether ``role`` may take the action ``path`` (a POST of :data:`ACTIONS`; None: nobody is signed in, and an
    action needs someone to answer for it)."""
    return role is not None and ACTIONS.get(path) == role


def is_loopback(host: str) -> bool:
    """Whether a bind address is on loopback only (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(archive: Archive, host: str) -> None:
    """Refuse to serve off loopback with no pit users configured (the pit would be open to the network)."""
    if not is_loopback(host) and archive.people.active_users() == 0:
        raise GateError(
            f"the pit will not serve on {host or 'every address'} with no pit users: add one with"
            " shoe-floor user add --archive URL --name NAME --role pit_manager (or serve on 127.0.0.1)"
        )


class Gate:
    """The pit's door (see the module's notes): the sessions, in memory, and the archive's users and audit log,
    read and written through the pit's one connection (``lock``, taken in turn with the table pages)."""

    def __init__(
        self,
        archive: Archive,
        lock: threading.Lock,
        rules: SessionRules | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.archive, self.lock = archive, lock
        self.rules = rules or SessionRules()
        self.clock, self.wall = clock, wall
        self.sessions: dict[str, Session] = {}
        #: POSTs refused, by why (:data:`REFUSALS`): counted here, read by ``/metrics`` at scrape.
        self.refused: Counter[str] = Counter()
        self._sessions_lock = threading.Lock()
        self._users: tuple[float, bool] | None = None  # (when read, whether there are users)

    # -- whether the door is shut ----------------------------------------------------------------------
    def required(self) -> bool:
        """Whether the pit has users (then every page asks for a session); read at most every USERS_CACHE s."""
        now = self.clock()
        if self._users is None or now - self._users[0] >= USERS_CACHE:
            with self.lock:
                has = bool(self.archive.people.users())
            self._users = (now, has)
        return self._users[1]

    # -- the audit log ---------------------------------------------------------------------------------
    def audit(
        self, actor: str, action: str, subject: str, address: str, after: Mapping[str, Any] | None = None
    ) -> None:
        """One row of the audit log, its source the pit and the remote address."""
        with self.lock:
            self.archive.people.audit(actor, action, subject, source=f"pit {address}"[:100], after=after,
                                      at=utc_stamp(self.wall()))  # fmt: skip

    # -- sessions --------------------------------------------------------------------------------------
    def session(self, token: str | None, address: str) -> Session | None:
        """The live session of ``token`` (touched), or None: none, expired (said in the audit log), or its user
        disabled since."""
        if not token:
            return None
        now = self.clock()
        with self._sessions_lock:
            s = self.sessions.get(token)
            if s is None:
                return None
            expired = now - s.started >= self.rules.lifetime or now - s.seen >= self.rules.idle
            if expired:
                del self.sessions[token]
            else:
                s.seen = now
        if expired:
            self.audit(s.user, "session_expired", f"user:{s.user}", address)
            return None
        with self.lock:
            found = self.archive.people.credentials(s.user)
        if found is None or not found[0].active or found[0].role != s.role:
            self.end(token)
            self.audit(s.user, "session_ended", f"user:{s.user}", address, {"why": "user disabled or changed"})
            return None
        return s

    def still(self, session: Session, address: str, every: float = 5.0) -> Callable[[], bool]:
        """For an event stream opened in ``session``: whether the session is still live (asked at most every
        ``every`` seconds; an open page counts as a request, so a watched screen stays signed in until its
        lifetime ends, its user signs out or is disabled)."""
        checked = [self.clock()]

        def alive() -> bool:
            if self.clock() - checked[0] < every:
                return True
            checked[0] = self.clock()
            return self.session(session.token, address) is not None

        return alive

    def end(self, token: str) -> Session | None:
        with self._sessions_lock:
            return self.sessions.pop(token, None)

    def _open(self, user: PitUser, address: str) -> Session:
        now = self.clock()
        s = Session(secrets.token_urlsafe(32), user.name, user.role, secrets.token_urlsafe(32), address, now, now)
        with self._sessions_lock:
            while len(self.sessions) >= MAX_SESSIONS:
                del self.sessions[min(self.sessions, key=lambda t: self.sessions[t].seen)]
            self.sessions[s.token] = s
        return s

    # -- signing in ------------------------------------------------------------------------------------
    def locked_until(self, name: str) -> datetime | None:
        """When ``name``'s lock-out ends, or None: not locked."""
        now = self.wall()
        with self.lock:
            failures = self.archive.people.failures(f"user:{name}", utc_stamp(now - timedelta(seconds=LOCK_WINDOW)))
        if len(failures) < LOCK_FAILURES:
            return None
        fifth = datetime.fromisoformat(failures[LOCK_FAILURES - 1].replace("Z", "+00:00"))
        return fifth + timedelta(seconds=LOCK_WINDOW)

    def sign_in(self, name: str, password: str, address: str) -> Session | str:
        """A new session, or why not (what the sign-in page says: never which of the name or password was wrong)."""
        try:
            name = user_name(name)
        except StaffError:
            verify_nothing(password)
            self.audit("?", "sign_in_failed", "user:?", address, {"why": "not a user name"})
            return "wrong user name or password"
        until = self.locked_until(name)
        if until is not None:
            self.audit(name, "sign_in_locked", f"user:{name}", address)
            return f"too many failed sign-ins: locked until {until:%H:%M} UTC (or ask for shoe-floor user unlock)"
        with self.lock:
            found = self.archive.people.credentials(name)
        if found is None:
            ok, user = verify_nothing(password), None
        else:
            user, stored = found
            ok = verify_secret(stored, password) and user.active
        if not ok or user is None:
            why = "no such user" if user is None else "disabled" if not user.active else "wrong password"
            self.audit(name, "sign_in_failed", f"user:{name}", address, {"why": why})
            if self.locked_until(name) is not None:
                self.audit(name, "locked_out", f"user:{name}", address, {"failures": LOCK_FAILURES,
                                                                         "window_s": LOCK_WINDOW})  # fmt: skip
            return "wrong user name or password"
        session = self._open(user, address)
        self.audit(name, "signed_in", f"user:{name}", address, {"role": user.role})
        return session


# -- the HTTP side (the pit's handler calls these) -----------------------------------------------------------


def _header(handler: Any, name: str) -> str:
    """A request header's value ("" without it)."""
    return str(handler.headers.get(name) or "")


def cookies(handler: Any) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(_header(handler, "Cookie")[:8192])
    except CookieError:
        return {}
    return {k: m.value for k, m in jar.items()}


def _cookie(name: str, value: str, *, max_age: int | None = None) -> str:
    age = "" if max_age is None else f"; Max-Age={max_age}"
    return f"{name}={value}; Path=/; HttpOnly; SameSite=Strict{age}"


def _next(text: str | None) -> str:
    """Where to go after signing in: a path on this site only."""
    if not text or not text.startswith("/") or text.startswith("//") or "\\" in text or len(text) > 500:
        return "/"
    return text


def admit(gate: Gate, handler: Any, path: str, query: str, head: bool) -> Visitor | None:
    """Who the request is from, or None when it has been answered here (the sign-in page, a redirect, 401, 403)."""
    if path.startswith(PUBLIC):
        return Visitor()
    address = str(handler.client_address[0])
    if path == "/signin":
        signin_page(handler, head, query=parse_qs(query))
        return None
    if not gate.required():
        return Visitor()
    s = gate.session(cookies(handler).get(SESSION_COOKIE), address)
    if s is None:
        if not _is_page(path):  # an API, the event stream, a favicon: 401, never the form (nor its cookie anew)
            handler._send(HTTPStatus.UNAUTHORIZED, b'{"error":"sign in first"}', "application/json", head=head)
        else:
            target = path + ("?" + query if query else "")
            handler._send(HTTPStatus.SEE_OTHER, b"", "text/plain", head=head,
                          extra={"Location": "/signin?next=" + quote(target, safe="")})  # fmt: skip
        return None
    if not may(s.role, path):
        gate.audit(s.user, "refused", f"user:{s.user}", address, {"path": path[:200]})
        handler._send(HTTPStatus.FORBIDDEN, b'{"error":"not for your role"}', "application/json", head=head)
        return None
    if path == "/signout":
        _page(handler, HTTPStatus.OK, "Sign out", f"Signed in as {s.user} ({s.role}).", s.csrf, "/", head,
              action="/signout", button="Sign out", fields=False)  # fmt: skip
        return None
    return Visitor(s.user, s.role, s)


def _is_page(path: str) -> bool:
    """A page a person opens (sent to the sign-in form when signed out), as against an API or a file."""
    return path in ("/", "/index.html") or path.startswith(("/table/", "/player/"))


def signin_page(
    handler: Any, head: bool, *, query: Mapping[str, list[str]] | None = None, message: str = "",
    status: HTTPStatus = HTTPStatus.OK,
) -> None:  # fmt: skip
    """The sign-in form with its CSRF token, in the form and in its cookie (the browser's one, kept: two tabs or a
    reload keep working; a new one when it has none)."""
    token = cookies(handler).get(FORM_COOKIE) or ""
    if not re.fullmatch(r"[A-Za-z0-9_-]{43}", token):
        token = secrets.token_urlsafe(32)
    wanted = (query or {}).get(_NEXT) or ["/"]
    target = _next(wanted[0])
    _page(handler, status, "Sign in", message, token, target, head, cookie=_cookie(FORM_COOKIE, token, max_age=3600))


def _page(
    handler: Any, status: HTTPStatus, title: str, message: str, token: str, target: str, head: bool, *,
    cookie: str | None = None, action: str = "/signin", button: str = "Sign in", fields: bool = True,
) -> None:  # fmt: skip
    page = (
        SIGNIN_PAGE.replace("__TITLE__", html.escape(title))
        .replace("__MESSAGE__", html.escape(message))
        .replace("__CSRF__", html.escape(token))
        .replace("__NEXT__", html.escape(target))
    )
    if not fields:  # the sign-out form: the button only
        start, end = page.index("<label>"), page.rindex("</label>") + len("</label>")
        page = page[:start] + page[end:]
    page = page.replace('action="/signin"', f'action="{action}"').replace(">Sign in</button>", f">{button}</button>")
    # Referrer-Policy same-origin: with no-referrer the browser posts the form with "Origin: null" (refused)
    extra = {"Content-Security-Policy": _FORM_CSP, "Referrer-Policy": "same-origin"}
    if cookie:
        extra["Set-Cookie"] = cookie
    handler._send(status, page.encode(), "text/html; charset=utf-8", head=head, extra=extra)


def _form(handler: Any) -> dict[str, str] | None:
    """The request's form (``application/x-www-form-urlencoded``, at most MAX_FORM_BYTES), or None (answered)."""
    try:
        length = int(_header(handler, "Content-Length"))
    except ValueError:
        handler._send(HTTPStatus.LENGTH_REQUIRED, b"a form needs its Content-Length\n", "text/plain")
        return None
    if not 0 <= length <= MAX_FORM_BYTES:
        handler._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, b"form too large\n", "text/plain")
        return None
    ctype = _header(handler, "Content-Type").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        handler._send(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, b"send a form (application/x-www-form-urlencoded)\n",
                      "text/plain")  # fmt: skip
        return None
    try:
        fields = parse_qs(handler.rfile.read(length).decode("utf-8"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        handler._send(HTTPStatus.BAD_REQUEST, b"not a form\n", "text/plain")
        return None
    return {name: fields[name][0] if name in fields else "" for name in FORM_FIELDS}


def _same_origin(handler: Any) -> bool:
    """A POST from another site's page is refused: its ``Origin`` (when the browser sends one) is this host."""
    origin = _header(handler, "Origin")
    if not origin:
        return True
    return urlsplit(origin).netloc == _header(handler, "Host")


def refuse(gate: Gate, handler: Any, status: HTTPStatus, why: str, line: str) -> None:
    """Answer a POST refused: ``status`` and ``{"error": line}`` (one line), counted by ``why``."""
    gate.refused[why] += 1
    handler._send(status, json.dumps({"error": line[:200]}).encode(), "application/json")


def actor(gate: Gate, handler: Any, path: str) -> Session | None:
    """The session that may take the action ``path`` (a POST of :data:`ACTIONS`), or None when the request has
    been refused here: the pit has no users (403), no live session (401), another site's ``Origin`` or no valid
    CSRF token in ``X-CSRF-Token`` (403), not the user's role (403). Each refusal is a count, and an audit row
    once the user is known (an expired session's is said at its expiry)."""
    address = str(handler.client_address[0])
    if not gate.required():
        refuse(gate, handler, HTTPStatus.FORBIDDEN, "no_session",
               "the pit has no users: an action needs a signed-in pit manager")  # fmt: skip
        return None
    s = gate.session(cookies(handler).get(SESSION_COOKIE), address)
    if s is None:
        refuse(gate, handler, HTTPStatus.UNAUTHORIZED, "no_session", "sign in first")
        return None
    sent = _header(handler, "X-CSRF-Token")
    if not _same_origin(handler) or not sent or not secrets.compare_digest(sent.encode(), s.csrf.encode()):
        gate.audit(s.user, "csrf_refused", f"user:{s.user}", address, {"path": path})
        refuse(gate, handler, HTTPStatus.FORBIDDEN, "csrf", "refused: no valid CSRF token (reload the page)")
        return None
    if not may_act(s.role, path):
        gate.audit(s.user, "refused", f"user:{s.user}", address, {"path": path})
        refuse(gate, handler, HTTPStatus.FORBIDDEN, "role", f"not for your role ({s.role}): a pit manager's action")
        return None
    return s


def session_info(visitor: Visitor) -> dict[str, Any]:
    """What ``GET /api/session`` says: who is signed in, their role, what they may do and the session's CSRF token
    (for the page's actions and its sign-out); all None when the pit has no users."""
    s = visitor.session
    return {
        "user": visitor.user,
        "role": visitor.role,
        "csrf": None if s is None else s.csrf,
        "actions": sorted(a for a in ACTIONS if may_act(visitor.role, a)),
    }


def post(gate: Gate, handler: Any) -> None:
    """``POST /signin`` and ``POST /signout``; every other POST is refused (405: the pit's actions are answered by
    floor/pit_actions.py before this)."""
    path = handler.path.split("?", 1)[0]
    address = str(handler.client_address[0])
    if path not in ("/signin", "/signout"):
        handler._not_allowed()
        return
    form = _form(handler)
    if form is None:
        return
    jar = cookies(handler)
    if path == "/signin":
        expected = jar.get(FORM_COOKIE)
        given = form["csrf"].encode()
        if not _same_origin(handler) or not expected or not secrets.compare_digest(given, expected.encode()):
            gate.audit("?", "csrf_refused", "user:?", address, {"path": path})
            gate.refused["csrf"] += 1
            signin_page(handler, False, message="the form had expired: sign in again", status=HTTPStatus.FORBIDDEN)
            return
        got = gate.sign_in(form["name"][:64], form["password"][:256], address)
        if isinstance(got, str):
            locked = got.startswith("too many")
            status = HTTPStatus.TOO_MANY_REQUESTS if locked else HTTPStatus.UNAUTHORIZED
            signin_page(handler, False, query={_NEXT: [form[_NEXT]]}, message=got, status=status)
            return
        handler._send(HTTPStatus.SEE_OTHER, b"", "text/plain", extra={
            "Location": _next(form[_NEXT]), "Set-Cookie": _cookie(SESSION_COOKIE, got.token)})  # fmt: skip
        return
    token = jar.get(SESSION_COOKIE)
    s = gate.session(token, address)
    sent = form["csrf"] or _header(handler, "X-CSRF-Token")
    if s is None or not _same_origin(handler) or not secrets.compare_digest(sent.encode(), s.csrf.encode()):
        gate.audit(s.user if s else "?", "csrf_refused", f"user:{s.user}" if s else "user:?", address, {"path": path})
        gate.refused["no_session" if s is None else "csrf"] += 1
        handler._send(HTTPStatus.FORBIDDEN, b'{"error":"refused: no session or no valid CSRF token"}',
                      "application/json")  # fmt: skip
        return
    gate.end(s.token)
    gate.audit(s.user, "signed_out", f"user:{s.user}", address)
    handler._send(HTTPStatus.SEE_OTHER, b"", "text/plain",
                  extra={"Location": "/signin", "Set-Cookie": _cookie(SESSION_COOKIE, "", max_age=0)})  # fmt: skip
