"""What the pit takes from the broker: every message bounded, read into a typed shape, or refused.

The pit (:mod:`floor.pit`) follows four kinds of message, each from whoever can publish on the broker:

* ``state``: :func:`floor_protocol.state.parse_state` (the one model of it, shared with the table);
* ``status``: exactly ``online`` or ``offline``;
* ``record``: :func:`read_record`, at most :data:`MAX_RECORD_BYTES` (the floor's one record size limit,
  :data:`floor_protocol.admission.MAX_RECORD_BYTES`, or the one ``serve --max-record-bytes`` sets for the
  collector too: the pit never refuses a record the archive keeps), JSON without NaN or Infinity, a
  :class:`~controller.game.records.TableRecord` of the table of its topic, and, for the kinds the pit shows
  (``coup``, ``shoe``, ``advantage``, ``advantage_cleared``) a body whose fields the pit and its page read are
  of their type and in range (cards are card tokens, totals 0-9, ``ev`` a finite number ...); the money's
  records (``settlement``, ``commission``, and the ``wager``, ``mispay``, ``past_post``, ``pulled_bet`` and
  ``wager_refused`` records the table page's recall reads) exactly their kind's body
  (:func:`controller.game.bodies.parse_body`: every field of its type and in range, none other);
* ``alert``: :func:`read_alert`, at most :data:`MAX_ALERT_BYTES`, the feed's shape
  (:class:`floor.archive.FeedItem`: ``v``, ``id``, ``at``, ``site``, ``table``, ``seq``, ``kind``, ``detail``,
  ``record``, ``extra``, and ``acked_by`` / ``acked_at``: both null, or a pit user's name and an ISO 8601 time;
  absent reads as null, from a collector older than the acknowledgement); a ``record`` that is not a
  :class:`~controller.game.records.TableRecord` is dropped (the alert is shown without it). The record an alert
  names may be the very record that was wrong (a ``conflict``): the alert is shown with it, and the pit lets it
  change a tile only when :func:`followable` (its body passes the checks above).

Anything else raises :class:`Refused` with a one-line reason; the pit counts it and goes on. The size is checked
before anything is parsed; nesting deeper than the JSON reader takes, a number too long to read, invalid UTF-8
and NaN are refusals like any other. What passes is plain JSON data the page can be given as it is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

from controller.game.bodies import BodyError, parse_body
from controller.game.coup import Winner
from controller.game.records import RecordError, RecordKind, TableRecord
from controller.game.rules import Bet
from floor_protocol.admission import MAX_RECORD_BYTES, AdmissionError, Limits, admit_json

__all__ = [
    "MAX_ALERT_BYTES",
    "MAX_RECORD_BYTES",
    "STATUSES",
    "Refused",
    "body_ok",
    "followable",
    "is_record",
    "read_alert",
    "read_record",
    "read_status",
]

#: Longest alert read (an alert carries the record that caused it, and a few fields beside it).
MAX_ALERT_BYTES: Final = MAX_RECORD_BYTES + 16 * 1024
#: The ``status`` payloads (the table's retained status and its Last Will).
STATUSES: Final = frozenset({b"online", b"offline"})

_MAX_INT = 2**53  # what the page's numbers hold exactly
_CARD = re.compile(r"[A2-9TJQK][SHDC]")
_WINNERS = frozenset(w.value for w in Winner)
_BETS = frozenset(b.value for b in Bet)
_ALERT_KIND = re.compile(r"[a-z][a-z0-9_]{0,39}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})")
_MAX_DETAIL = 2000
#: The money's kinds, read through their classes.
_MONEY = frozenset(
    {
        RecordKind.SETTLEMENT,
        RecordKind.COMMISSION,
        RecordKind.WAGER,
        RecordKind.MISPAY,
        RecordKind.PAST_POST,
        RecordKind.PULLED_BET,
        RecordKind.WAGER_REFUSED,
        RecordKind.BUY_IN,  # the cash log's alerts name one
        RecordKind.TRAY_VARIANCE,
    }
)
_MAX_NAME = 100
#: A pit user's name (floor/archive/staff.py user_name): who acknowledged an alert.
_USER = re.compile(r"[a-z][a-z0-9_.-]{1,31}")


class Refused(ValueError):
    """A message the pit does not take; the message says why, in one line."""


def _json(payload: bytes, limit: int) -> Any:
    """The JSON value of a message at most ``limit`` bytes, through the floor's admission (nesting, UTF-8,
    64-bit integers, no NaN, NUL or lone surrogate: floor_protocol.admission), or :class:`Refused`."""
    try:
        return admit_json(payload, Limits(max_bytes=limit))
    except AdmissionError as exc:
        raise Refused(str(exc)) from None


def _int(body: Mapping[str, Any], key: str, *, lo: int = 0, hi: int = _MAX_INT, null: bool = False) -> None:
    value = body.get(key)
    if value is None and null:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise Refused(f"{key}: not a whole number in {lo}..{hi}")


def _bool(body: Mapping[str, Any], key: str) -> None:
    if key in body and not isinstance(body[key], bool):
        raise Refused(f"{key}: not true or false")


def _cards(body: Mapping[str, Any], key: str, most: int) -> None:
    value = body.get(key, [])
    if (
        not isinstance(value, list)
        or len(value) > most
        or not all(isinstance(c, str) and _CARD.fullmatch(c) for c in value)
    ):
        raise Refused(f"{key}: not a list of at most {most} card tokens")


def _bet(body: Mapping[str, Any]) -> None:
    if body.get("bet") not in _BETS:
        raise Refused(f"bet: {str(body.get('bet'))[:40]!r} is not a wager")


def _body(kind: str, body: Mapping[str, Any]) -> None:
    """The fields of ``body`` the pit and its pages read, of their type and in range."""
    if kind == RecordKind.COUP:
        _int(body, "shoe")
        _int(body, "coup", null=True)
        for key in ("declared", "void", "natural", "player_pair", "banker_pair", "set_aside", "misdraw"):
            _bool(body, key)
        winner = body.get("winner")
        if winner is not None and winner not in _WINNERS:
            raise Refused(f"winner: {str(winner)[:40]!r} is not banker, player or tie")
        _cards(body, "player", 3)
        _cards(body, "banker", 3)
        for key in ("player_total", "banker_total"):
            if key in body:
                _int(body, key, hi=9, null=True)
    elif kind == RecordKind.SHOE:
        if body.get("event") not in ("start", "end"):
            raise Refused("event: not start or end")
        _int(body, "shoe")
    elif kind in (RecordKind.ADVANTAGE, RecordKind.ADVANTAGE_CLEARED):
        _bet(body)
        ev = body.get("ev")
        if not isinstance(ev, int | float) or isinstance(ev, bool) or not math.isfinite(ev) or abs(ev) > 10:
            raise Refused("ev: not a number in -10..10")
        for key in ("shoe", "coup", "cards_left"):
            _int(body, key)
    elif kind in _MONEY:  # the money's records: exactly their kind's body (controller.game.bodies)
        try:
            parse_body(kind, body)
        except BodyError as exc:
            raise Refused(str(exc)) from None


def _record(data: Any, table: str | None) -> TableRecord:
    try:
        record = TableRecord.from_dict(data)
    except RecordError as exc:
        raise Refused(str(exc)) from None
    if table is not None and record.table != table:
        raise Refused(f"a record of table {record.table[:40]!r} on the topic of {table!r}")
    _body(record.kind, record.body)
    return record


def body_ok(kind: str, body: Mapping[str, Any]) -> bool:
    """Whether a record's body has the fields the pit shows of their type and in range (a coup as the archive
    lists it, ``history --json``'s shape, included). The archive holds what a table sent and signed: the pit
    checks what it reads from there too."""
    try:
        _body(kind, body)
        if kind == RecordKind.ALARM:
            for key in ("alarm", "name", "detail", "text"):
                if body.get(key) is not None and not isinstance(body[key], str):
                    raise Refused(f"{key}: not a text")
    except Refused:
        return False
    return True


def followable(record: Mapping[str, Any]) -> bool:
    """Whether an alert's record (a :class:`TableRecord` dict) has a body the pit may show on a tile."""
    body = record.get("body")
    return isinstance(body, Mapping) and body_ok(str(record.get("kind")), body)


def read_record(payload: bytes, table: str, max_bytes: int = MAX_RECORD_BYTES) -> TableRecord:
    """The record on ``table``'s record topic, at most ``max_bytes`` (the collector's limit), or
    :class:`Refused` (see the module's notes)."""
    return _record(_json(payload, max_bytes), table)


def read_status(payload: bytes) -> str:
    """``online`` or ``offline``, or :class:`Refused`."""
    if payload not in STATUSES:
        raise Refused(f"status {payload[:20]!r} is not online or offline")
    return payload.decode()


def _text(item: Mapping[str, Any], key: str, most: int) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= most:
        raise Refused(f"{key}: not a text of 1..{most} characters")
    return value


def _matching(item: Mapping[str, Any], key: str, pattern: re.Pattern[str], what: str) -> str | None:
    """``item[key]``: null (or absent), or a text of at most 40 characters matching ``pattern``; else Refused."""
    value = item.get(key)
    if value is not None and not (isinstance(value, str) and len(value) <= 40 and pattern.fullmatch(value)):
        raise Refused(f"{key}: {what}")
    return value


def is_record(data: Any) -> bool:
    """Whether ``data`` reads as a :class:`TableRecord`."""
    try:
        TableRecord.from_dict(data)
    except RecordError:
        return False
    return True


def read_alert(payload: bytes, max_bytes: int = MAX_ALERT_BYTES) -> tuple[dict[str, Any], bool]:
    """An alert of the floor's feed (the shape of :meth:`floor.archive.FeedItem.to_dict`) and whether its record
    was dropped, or :class:`Refused`.

    ``id`` may be null (an alert another system raised: shown every time it is said). A ``record`` that is not
    a :class:`TableRecord` is dropped (``record`` null): the alert itself is still worth showing."""
    item = _json(payload, max_bytes)
    if not isinstance(item, dict):
        raise Refused("an alert is a JSON object")
    _int(item, "v", lo=1, hi=1000)
    _int(item, "id", null=True)
    _int(item, "seq", null=True)
    at = _text(item, "at", 40)
    if not _TIME.fullmatch(at):
        raise Refused("at: not an ISO 8601 time")
    for key in ("site", "table"):
        _text(item, key, _MAX_NAME)
    if not _ALERT_KIND.fullmatch(_text(item, "kind", 40)):
        raise Refused("kind: not an alert kind (lower case letters, digits and _)")
    detail = item.get("detail")
    if not isinstance(detail, str) or len(detail) > _MAX_DETAIL:
        raise Refused(f"detail: not a text of at most {_MAX_DETAIL} characters")
    extra = item.get("extra", {})
    if not isinstance(extra, dict):
        raise Refused("extra: not a JSON object")
    acked_by = _matching(item, "acked_by", _USER, "not a pit user's name")
    acked_at = _matching(item, "acked_at", _TIME, "not an ISO 8601 time")
    if (acked_by is None) != (acked_at is None):
        raise Refused("acked_by and acked_at: both null, or both given")
    record = item.get("record")
    dropped = record is not None and not is_record(record)
    if dropped:
        record = None  # the alert is shown without it (the pit counts it)
    return {
        "v": item["v"],
        "id": item.get("id"),
        "at": at,
        "site": item["site"],
        "table": item["table"],
        "seq": item.get("seq"),
        "kind": item["kind"],
        "detail": detail,
        "record": record,
        "extra": extra,
        "acked_by": acked_by,
        "acked_at": acked_at,
    }, dropped
