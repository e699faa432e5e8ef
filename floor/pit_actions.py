"""What a pit manager does on the pit page: each action a POST with the session's CSRF token, refused and counted
otherwise, each an audit row.

* ``POST /api/feed/ack`` with ``{"id": N}`` (``application/json``, at most :data:`MAX_ACTION_BYTES`): acknowledge
  alert N of the floor's feed. Once: a second acknowledgement (by anyone, from any pit) changes nothing and is
  answered with who acknowledged it first. Answered ``200 {"id", "outcome": "acknowledged" | "already",
  "acked_by", "acked_at"}``; the acknowledgement goes into the pit's feed at once and out to every open page on
  its event stream (:meth:`floor.pit.Pit.acknowledge`).

Who may (floor/pit_auth.py :func:`~floor.pit_auth.actor`): a live session (401 otherwise), the session's CSRF
token in ``X-CSRF-Token`` and no other site's ``Origin`` (403), the pit manager's role (403). What is sent must be
of its shape: a ``Content-Length`` (411), no more than :data:`MAX_ACTION_BYTES` (413), JSON (415 for another
type, 400 for what does not read), an object with exactly a whole-number ``id`` (400); an alert the archive does
not hold is 404. Every refusal is one line (``{"error": ...}``), counted by why
(``shoe_floor_pit_actions_refused_total{why}``), and an audit row once the user is known; the pit goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Final

from floor.archive import Acknowledgement
from floor.pit_auth import Gate, actor, refuse
from floor_protocol.admission import AdmissionError, Limits, admit_json

__all__ = ["ACK", "MAX_ACTION_BYTES", "BadAction", "act", "read_ack"]

#: The route of acknowledging an alert.
ACK: Final = "/api/feed/ack"
#: The largest action body read (``{"id": 123}`` is a dozen bytes).
MAX_ACTION_BYTES: Final = 1024
#: What of a body too large is read and dropped before it is answered (so the answer is not lost to a reset).
_DRAIN_BYTES: Final = 64 * 1024
_MAX_ID: Final = 2**63 - 1  # the feed's ids are BIGINT

#: Acknowledge an alert: ``(alert id, user, remote address)`` -> the outcome, or None (no such alert).
Acknowledge = Callable[[int, str, str], Acknowledgement | None]


class BadAction(ValueError):
    """An action's body not of its shape: the HTTP status and one line saying why."""

    def __init__(self, status: HTTPStatus, line: str) -> None:
        super().__init__(line)
        self.status = status


def _body(handler: Any) -> bytes:
    """The request's body, at most :data:`MAX_ACTION_BYTES` of JSON, or :class:`BadAction`."""
    try:
        length = int(str(handler.headers["Content-Length"] or ""))
    except ValueError:
        raise BadAction(HTTPStatus.LENGTH_REQUIRED, "an action needs its Content-Length") from None
    if length < 0:
        raise BadAction(HTTPStatus.BAD_REQUEST, "Content-Length: not a length")
    if length > MAX_ACTION_BYTES:
        handler.rfile.read(min(length, _DRAIN_BYTES))
        raise BadAction(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"an action is at most {MAX_ACTION_BYTES} bytes")
    body = bytes(handler.rfile.read(length))
    ctype = str(handler.headers["Content-Type"] or "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise BadAction(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON (application/json)")
    return body


def read_ack(body: bytes) -> int:
    """The alert id of an acknowledgement's body (``{"id": N}``, N a whole number 1..2^63-1, nothing else), or
    :class:`BadAction`."""
    try:
        data = admit_json(body, Limits(max_bytes=MAX_ACTION_BYTES))
    except AdmissionError as exc:
        raise BadAction(HTTPStatus.BAD_REQUEST, f"not JSON: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"id"}:
        raise BadAction(HTTPStatus.BAD_REQUEST, 'an acknowledgement is {"id": N}, nothing else')
    alert_id = data["id"]
    if not isinstance(alert_id, int) or isinstance(alert_id, bool) or not 1 <= alert_id <= _MAX_ID:
        raise BadAction(HTTPStatus.BAD_REQUEST, "id: not an alert's id (a whole number from 1)")
    return alert_id


def act(gate: Gate, handler: Any, acknowledge: Acknowledge) -> bool:
    """Answer the POST if it is one of the pit's actions (True); False: not an action (sign-in and sign-out are
    floor/pit_auth.py's :func:`~floor.pit_auth.post`)."""
    path = handler.path.split("?", 1)[0]
    if path != ACK:
        return False
    address = str(handler.client_address[0])
    try:
        body = _body(handler)
    except BadAction as exc:  # before the session is looked at: a body too large is not read, whoever sent it
        refuse(gate, handler, exc.status, "body", str(exc))
        return True
    session = actor(gate, handler, path)
    if session is None:
        return True  # refused there (counted, audited)
    try:
        alert_id = read_ack(body)
    except BadAction as exc:
        gate.audit(session.user, "refused", f"user:{session.user}", address, {"path": path, "why": str(exc)[:200]})
        refuse(gate, handler, exc.status, "body", str(exc))
        return True
    ack = acknowledge(alert_id, session.user, address)
    if ack is None:
        gate.audit(session.user, "refused", f"alert:{alert_id}", address, {"path": path, "why": "no such alert"})
        refuse(gate, handler, HTTPStatus.NOT_FOUND, "unknown_alert", f"no alert {alert_id} in the feed")
        return True
    item = ack.item
    handler._json(HTTPStatus.OK, {"id": item.id, "outcome": ack.outcome, "acked_by": item.acked_by,
                                  "acked_at": item.acked_at}, False)  # fmt: skip
    return True
