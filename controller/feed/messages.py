"""The table's feed on the wire: one JSON object per line, each bounded and validated before use.

The table process (the only one with the devices and the journal) speaks on two Unix sockets (see
:mod:`controller.feed.server`); the board and the floor link read it. What travels, table -> reader:

=========== ======================================================================================================
``hello``   first line on every connection: the public view now and the ``coup`` records of the current shoe
``update``  one table update (:class:`~controller.game.public.FeedUpdate`), numbered ``n`` per connection
``commit``  the journal committed records (the floor link reads them from the journal itself); link socket only
``metrics`` the table's own health metrics in Prometheus' text format, every second; link socket only
``money``   the money at the table now (:class:`~controller.game.wagers.MoneyView`, whole), on the first line of a
            connection and on every change; **money socket only** (``money.sock``, the dealer screen's)
=========== ======================================================================================================

and reader -> table, on the link socket only: ``ack`` (the floor's whole signed ack,
:class:`floor_protocol.ack.Ack`, which the link believed; the table, the journal's one writer, verifies it
again before it stores it) and ``staff`` (the floor's whole signed staff list,
:class:`floor_protocol.staff.StaffList`, which the link verified; the table verifies it again before it keeps
it); on the money socket only: ``buy_in`` (a buy-in entered for a seat: ``seat``,
``cents``, ``tender``, ``player_ref`` or null; :func:`decode_money_reader`, :func:`encode_buy_in`; the table
checks it against its seats before it journals it) and ``approve`` (a supervisor's PIN entered for the approval
pending, 4 to 12 digits: :class:`PinLine`, :func:`encode_pin`; the table checks it against the staff list's hash
and never logs it) and ``rate`` (the dealer screen's RATE: the uncarded player at ``seat`` to be rated, which a
supervisor approves: :class:`RateLine`, :func:`encode_rate`) and ``key`` (the dealer screen's correction of an
unreadable coup card: the ``card`` lying face up, which a supervisor approves: :class:`KeyLine`,
:func:`encode_key`). Anything else a reader sends is refused and
counted. The ``money`` line carries the approval pending, when one is, under ``view.approval``
(:class:`~controller.game.wagers.ApprovalView`).

The wagers never travel on the public socket: :func:`decode_table` refuses a ``money`` line unless its reader
asked for the money socket's lines (``money=True``), and the table's server sends them on ``money.sock`` alone.

A line longer than :data:`MAX_LINE` bytes, not JSON, nested too deep, or not of its type's shape raises
:class:`FeedError` naming the problem: the reader counts it and reads on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from controller.game.cash import MAX_BUY_IN_CENTS, PLAYER_REF_PATTERN, BuyIn, Tender
from controller.game.public import FeedUpdate, PublicView
from controller.game.wagers import MAX_SEATS, ApprovalView, MoneyView, Phase, SeatView, Spot, SpotState, SpotView
from floor_protocol.ack import ACK_VERSION, Ack
from floor_protocol.staff import MAX_STAFF_BYTES, StaffList, StaffListError, parse_staff

__all__ = [
    "COMMIT_LINE",
    "MAX_LINE",
    "Ack",
    "BuyInRefused",
    "Commit",
    "FeedError",
    "Hello",
    "KeyLine",
    "KeyRefused",
    "Metrics",
    "Money",
    "PinLine",
    "PinRefused",
    "RateLine",
    "RateRefused",
    "ReaderMessage",
    "TableMessage",
    "Update",
    "decode_money_reader",
    "decode_reader",
    "decode_table",
    "encode_ack",
    "encode_buy_in",
    "encode_hello",
    "encode_key",
    "encode_metrics",
    "encode_money",
    "encode_pin",
    "encode_rate",
    "encode_staff",
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


class PinRefused(FeedError):
    """An ``approve`` line whose PIN is not 4 to 12 digits (the message never holds what was sent)."""


class RateRefused(FeedError):
    """A ``rate`` line whose seat is out of shape or bounds."""


class KeyRefused(FeedError):
    """A ``key`` line whose card is no card token."""


class BuyInRefused(FeedError):
    """A ``buy_in`` line whose fields are out of shape or bounds (the line is one; its values are not)."""


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


@dataclass(frozen=True)
class Money:
    """The money at the table now (the whole view: a line missed costs nothing but the time to the next)."""

    view: MoneyView


@dataclass(frozen=True)
class PinLine:
    """A supervisor's PIN entered at the dealer screen for the approval pending (``money.sock``, reader -> table)."""

    pin: str = field(repr=False)


@dataclass(frozen=True)
class RateLine:
    """The dealer screen's RATE (``money.sock``, reader -> table): rate the uncarded player at ``seat``."""

    seat: int


@dataclass(frozen=True)
class KeyLine:
    """The dealer screen's correction of an unreadable coup card (``money.sock``, reader -> table): ``card``, the
    card's token (``9H``), to take the unread card's place once a supervisor approves."""

    card: str


TableMessage = Hello | Update | Commit | Metrics | Money
ReaderMessage = Ack | StaffList

_VIEW = TypeAdapter(PublicView)
_UPDATE = TypeAdapter(FeedUpdate)
_COUPS: TypeAdapter[tuple[dict[str, Any], ...]] = TypeAdapter(Coups)
_N = TypeAdapter(Annotated[int, Field(strict=True, ge=1, le=MAX_SEQ)])
_METRICS = TypeAdapter(Annotated[str, Field(strict=True, max_length=MAX_METRICS)])

COMMIT_LINE = b'{"t":"commit"}\n'

#: Highest amount on a spot or in a box the money line takes ($10 million: far above any table's maximum).
MAX_CENTS = 1_000_000_000
#: Longest words for the dealer on a spot or in a seat's alarm, and alarms per seat.
MAX_TEXT = 200
MAX_ALARMS = 16

_Cents = Annotated[int, Field(strict=True, ge=0, le=MAX_CENTS)]
_Text = Annotated[str, Field(strict=True, max_length=MAX_TEXT)]


class _SpotLine(BaseModel):
    """One spot on the money line: :class:`SpotView`'s fields, bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    seat: Annotated[int, Field(strict=True, ge=1, le=MAX_SEATS)]
    spot: Spot
    state: SpotState
    cents: _Cents
    wager_cents: _Cents | None
    target_cents: _Cents | None
    pay_cents: _Cents
    take_cents: _Cents
    text: _Text


class _SeatLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    seat: Annotated[int, Field(strict=True, ge=1, le=MAX_SEATS)]
    spots: Annotated[tuple[_SpotLine, ...], Field(max_length=len(Spot))]
    box_cents: _Cents
    alarms: Annotated[tuple[_Text, ...], Field(max_length=MAX_ALARMS)]


_StaffId = Annotated[str, Field(strict=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")]


class _ApprovalLine(BaseModel):
    """The approval pending on the money line: :class:`ApprovalView`'s fields, bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    action: Annotated[str, Field(strict=True, pattern=r"^[a-z_]{1,32}$")]
    text: Annotated[str, Field(strict=True, max_length=40)]
    shoe: Annotated[int, Field(strict=True, ge=1, le=MAX_SEQ)]
    coup: Annotated[int, Field(strict=True, ge=1, le=MAX_SEQ)]
    dealer: _StaffId | None
    approver: _StaffId | None
    said: Annotated[str, Field(strict=True, max_length=80)]


class _MoneyLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    phase: Phase
    reader_up: Annotated[bool, Field(strict=True)]
    seats: Annotated[tuple[_SeatLine, ...], Field(max_length=MAX_SEATS)]
    misreads: Annotated[int, Field(strict=True, ge=0, le=MAX_SEQ)]
    ghost_reads: Annotated[int, Field(strict=True, ge=0, le=MAX_SEQ)]
    approval: _ApprovalLine | None = None
    keyable: Annotated[bool, Field(strict=True)] = False
    refusal: Annotated[str, Field(strict=True, max_length=120)] = ""
    refusals: Annotated[int, Field(strict=True, ge=0, le=MAX_SEQ)] = 0

    def view(self) -> MoneyView:
        return MoneyView(
            self.phase,
            tuple(
                SeatView(
                    s.seat,
                    tuple(SpotView(**dict(p)) for p in s.spots),
                    box_cents=s.box_cents,
                    alarms=s.alarms,
                )
                for s in self.seats
            ),
            reader_up=self.reader_up,
            misreads=self.misreads,
            ghost_reads=self.ghost_reads,
            approval=None if self.approval is None else ApprovalView(**dict(self.approval)),
            keyable=self.keyable,
            refusal=self.refusal,
            refusals=self.refusals,
        )


class _PinLine(BaseModel):
    """A supervisor's PIN (``money.sock``, reader -> table): 4 to 12 digits, nothing else."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    t: Literal["approve"]
    pin: Annotated[str, Field(pattern=r"^[0-9]{4,12}$")]


class _RateLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    t: Literal["rate"]
    seat: Annotated[int, Field(ge=1, le=MAX_SEATS)]


class _KeyLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    t: Literal["key"]
    card: Annotated[str, Field(pattern=r"^(A|[2-9]|T|J|Q|K)[SHDC]$")]


class _BuyInLine(BaseModel):
    """A buy-in entered for a seat (``money.sock``, reader -> table): :class:`BuyIn`'s fields, bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    t: Literal["buy_in"]
    seat: Annotated[int, Field(ge=1, le=MAX_SEATS)]
    cents: Annotated[int, Field(ge=1, le=MAX_BUY_IN_CENTS)]
    tender: Annotated[Tender, Field(strict=False)]
    player_ref: Annotated[str, Field(pattern=PLAYER_REF_PATTERN)] | None = None


def _line(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def encode_hello(view: PublicView, history: Sequence[Mapping[str, Any]]) -> bytes:
    return _line({"t": "hello", "view": _VIEW.dump_python(view, mode="json"), "history": list(history)})


def encode_update(n: int, update: FeedUpdate) -> bytes:
    return _line({"t": "update", "n": n, **_UPDATE.dump_python(update, mode="json")})


def encode_metrics(text: str) -> bytes:
    return _line({"t": "metrics", "text": text})


def encode_money(view: MoneyView) -> bytes:
    """The money line (``money.sock`` only): the view's own :meth:`~MoneyView.to_dict`."""
    return _line({"t": "money", "view": view.to_dict()})


def encode_ack(ack: Ack) -> bytes:
    """The floor's whole signed ack (archive, table, seq, hash, sig): the table verifies it again itself."""
    fields = {"archive": ack.archive, "table": ack.table, "seq": ack.seq, "hash": ack.hash, "sig": ack.sig}
    return _line({"t": "ack", **fields})


def encode_staff(staff: StaffList) -> bytes:
    """The floor's whole signed staff list (link -> table): the table verifies it again itself."""
    return _line({"t": "staff", "list": staff.to_dict()})


def encode_buy_in(buy_in: BuyIn) -> bytes:
    """A buy-in line (``money.sock``, reader -> table)."""
    body = {"seat": buy_in.seat, "cents": buy_in.cents, "tender": buy_in.tender.value, "player_ref": buy_in.player_ref}
    return _line({"t": "buy_in", **body})


def encode_pin(pin: PinLine) -> bytes:
    """An ``approve`` line (``money.sock``, reader -> table): the PIN entered for the approval pending."""
    return _line({"t": "approve", "pin": pin.pin})


def encode_rate(rate: RateLine) -> bytes:
    """A ``rate`` line (``money.sock``, reader -> table)."""
    return _line({"t": "rate", "seat": rate.seat})


def encode_key(key: KeyLine) -> bytes:
    """A ``key`` line (``money.sock``, reader -> table)."""
    return _line({"t": "key", "card": key.card})


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


def decode_money_view(value: object) -> MoneyView:
    """A :class:`MoneyView` from its ``to_dict()`` form, checked and bounded (raises pydantic's
    ``ValidationError``)."""
    return _MoneyLine.model_validate(value).view()


def decode_table(line: bytes, *, money: bool = False) -> TableMessage:
    """A line from the table (what the board and the link read). ``money``: the reader is on the money
    socket; a ``money`` line anywhere else is refused."""
    value = _object(line)
    kind = value["t"]
    try:
        if kind == "money":
            if not money:
                raise FeedError("a money line on a socket that must not carry wagers")
            return Money(decode_money_view(value.get("view")))
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
    """A line from a reader of the link socket (the table reads it): only ``ack`` and ``staff``."""
    value = _object(line)
    kind: Literal["ack", "staff"] | str = value["t"]
    if kind == "staff":
        listed = value.get("list")
        if len(line) > MAX_STAFF_BYTES + 64:
            raise FeedError(f"staff: a line of {len(line)} bytes (a list is at most {MAX_STAFF_BYTES})")
        if not isinstance(listed, dict):
            raise FeedError("staff: no list (a JSON object)")
        try:
            return parse_staff(listed)
        except StaffListError as exc:
            raise FeedError(str(exc)) from None
    if kind != "ack":
        raise FeedError(f"a reader may only send ack or staff, not {str(kind)[:40]!r}")
    fields = {key: value.get(key) for key in ("archive", "table", "seq", "hash", "sig")}
    ack = Ack.from_dict({"v": ACK_VERSION, **fields})
    if ack is None:
        raise FeedError("ack: not a well-formed signed ack (archive, table, seq, hash, sig)")
    return ack


def decode_money_reader(line: bytes) -> BuyIn | PinLine | RateLine | KeyLine:
    """A line from a reader of the money socket (the table reads it): ``buy_in``, bounded (the seat 1-14, the
    amount 1 cent to :data:`~controller.game.cash.MAX_BUY_IN_CENTS`, the tender, the ``player_ref``: else
    :class:`BuyInRefused`), ``approve`` (a PIN of 4 to 12 digits: else :class:`PinRefused`, which never says the
    PIN), ``rate`` (a seat 1-14: else :class:`RateRefused`) or ``key`` (a card token: else :class:`KeyRefused`)."""
    value = _object(line)
    if value["t"] == "approve":
        try:
            return PinLine(_PinLine.model_validate(value).pin)
        except ValidationError:
            raise PinRefused("approve: a PIN is 4 to 12 digits") from None
    if value["t"] == "rate":
        try:
            return RateLine(_RateLine.model_validate(value).seat)
        except ValidationError as exc:
            raise RateRefused(f"rate: {_problem(exc)}") from None
    if value["t"] == "key":
        try:
            return KeyLine(_KeyLine.model_validate(value).card)
        except ValidationError as exc:
            raise KeyRefused(f"key: {_problem(exc)}") from None
    if value["t"] != "buy_in":
        raise FeedError(f"a money reader may only send buy_in, approve, rate or key, not {str(value['t'])[:40]!r}")
    try:
        got = _BuyInLine.model_validate(value)
    except ValidationError as exc:
        raise BuyInRefused(f"buy_in: {_problem(exc)}") from None
    return BuyIn(got.seat, got.cents, got.tender, got.player_ref)
