"""The table's feed on the wire: one JSON object per line, each bounded and validated before use.

The table process (the only one with the devices and the journal) speaks on two Unix sockets (see
:mod:`controller.feed.server`); the board and the floor link read it. What travels, table -> reader:

=========== ======================================================================================================
``hello``   first line on every connection: the public view now and the ``coup`` records of the current shoe
``update``  one table update (:class:`~controller.game.public.FeedUpdate`), numbered ``n`` per connection
``commit``  the journal committed records (the floor link reads them from the journal itself); link socket only
``metrics`` the table's own health metrics in Prometheus' text format, every second; link socket only
=========== ======================================================================================================

and reader -> table, on the link socket only: ``ack`` (the floor's whole signed ack,
:class:`floor_protocol.ack.Ack`, which the link believed; the table, the journal's one writer, verifies it
again before it stores it). Anything else a reader sends is refused and counted.

A line longer than :data:`MAX_LINE` bytes, not JSON, nested too deep, or not of its type's shape raises
:class:`FeedError` naming the problem: the reader counts it and reads on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from controller.game.public import FeedUpdate, PublicView
from floor_protocol.ack import ACK_VERSION, Ack

__all__ = [
    "COMMIT_LINE",
    "MAX_LINE",
    "Ack",
    "Commit",
    "FeedError",
    "Hello",
    "Metrics",
    "ReaderMessage",
    "TableMessage",
    "Update",
    "decode_reader",
    "decode_table",
    "encode_ack",
    "encode_hello",
    "encode_metrics",
    "encode_update",
]

#: Longest line either side accepts (a hello carries a whole shoe's coups: some 100 records of 400 bytes).
MAX_LINE = 1 << 20
#: Longest metrics text the link accepts from the table.
MAX_METRICS = 256 * 1024
#: The highest ack a table takes (a journal record id is a SQLite integer).
MAX_SEQ = (1 << 63) - 1

Coups = Annotated[tuple[dict[str, Any], ...], Field(max_length=2000)]


class FeedError(ValueError):
    """A line of the feed that is not a message of its side: ``str()`` says why, in one line."""


@dataclass(frozen=True)
class Hello:
    """The first line on a connection: the view now and the coups of the current shoe."""

    view: PublicView
    history: Coups = ()


@dataclass(frozen=True)
class Update:
    """One table update; ``n`` counts the updates on this connection (1, 2, ...) so a reader sees a gap."""

    n: int
    update: FeedUpdate


@dataclass(frozen=True)
class Commit:
    """The journal committed records."""


@dataclass(frozen=True)
class Metrics:
    """The table's health metrics (Prometheus text format)."""

    text: str


TableMessage = Hello | Update | Commit | Metrics
ReaderMessage = Ack

_VIEW = TypeAdapter(PublicView)
_UPDATE = TypeAdapter(FeedUpdate)
_COUPS: TypeAdapter[tuple[dict[str, Any], ...]] = TypeAdapter(Coups)
_N = TypeAdapter(Annotated[int, Field(strict=True, ge=1, le=MAX_SEQ)])
_METRICS = TypeAdapter(Annotated[str, Field(strict=True, max_length=MAX_METRICS)])

COMMIT_LINE = b'{"t":"commit"}\n'


def _line(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def encode_hello(view: PublicView, history: Sequence[Mapping[str, Any]]) -> bytes:
    return _line({"t": "hello", "view": _VIEW.dump_python(view, mode="json"), "history": list(history)})


def encode_update(n: int, update: FeedUpdate) -> bytes:
    return _line({"t": "update", "n": n, **_UPDATE.dump_python(update, mode="json")})


def encode_metrics(text: str) -> bytes:
    return _line({"t": "metrics", "text": text})


def encode_ack(ack: Ack) -> bytes:
    """The floor's whole signed ack (archive, table, seq, hash, sig): the table verifies it again itself."""
    fields = {"archive": ack.archive, "table": ack.table, "seq": ack.seq, "hash": ack.hash, "sig": ack.sig}
    return _line({"t": "ack", **fields})


def _object(line: bytes) -> dict[str, Any]:
    if len(line) > MAX_LINE:
        raise FeedError(f"line of {len(line)} bytes (at most {MAX_LINE})")
    try:
        value = json.loads(line)
    except RecursionError:
        raise FeedError("JSON nested too deep") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise FeedError(f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(value, dict):
        raise FeedError(f"not a JSON object: {type(value).__name__}")
    kind = value.get("t")
    if not isinstance(kind, str):
        raise FeedError("no message type (t)")
    return value


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "message"
    return f"{where}: {first.get('msg', 'invalid')}"


def decode_table(line: bytes) -> TableMessage:
    """A line from the table (what the board and the link read)."""
    value = _object(line)
    kind = value["t"]
    try:
        if kind == "update":
            body = {k: value.get(k) for k in ("view", "coups", "shoe_started") if k in value}
            return Update(_N.validate_python(value.get("n")), _UPDATE.validate_python(body))
        if kind == "hello":
            view = _VIEW.validate_python(value.get("view"))
            return Hello(view, _COUPS.validate_python(value.get("history", ())))
        if kind == "commit":
            return Commit()
        if kind == "metrics":
            return Metrics(_METRICS.validate_python(value.get("text")))
    except ValidationError as exc:
        raise FeedError(f"{kind}: {_problem(exc)}") from None
    except RecursionError:
        raise FeedError(f"{kind}: nested too deep") from None
    raise FeedError(f"unknown message type {str(kind)[:40]!r}")


def decode_reader(line: bytes) -> ReaderMessage:
    """A line from a reader of the link socket (the table reads it): only ``ack``."""
    value = _object(line)
    kind: Literal["ack"] | str = value["t"]
    if kind != "ack":
        raise FeedError(f"a reader may only send ack, not {str(kind)[:40]!r}")
    fields = {key: value.get(key) for key in ("archive", "table", "seq", "hash", "sig")}
    ack = Ack.from_dict({"v": ACK_VERSION, **fields})
    if ack is None:
        raise FeedError("ack: not a well-formed signed ack (archive, table, seq, hash, sig)")
    return ack
