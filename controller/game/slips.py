"""Rating slips from measured play: one pure function, :func:`rating_slips`, that the table
(``shoe-controller slips``, from its journal) and the floor (``shoe-floor slips``, from its archive) both call,
so their slips agree byte for byte (:func:`slip_line`). Pure: no clock, no I/O; a record's time is its ``at``
text, read here (:func:`micros_of`).

What it reads, each table's records in its journal order (other kinds are passed over):

* ``player_in`` / ``player_out``: a player's **stint** at a seat, from the record that opened it to the one
  that ended it. A shoe's start record's ``players`` (the cards kept in the readers) opens a stint for a
  playing card the records have not seen come in (a journal pruned to a shoe's start).
* ``wager``: a seat's wager belongs to the player carded at that seat when it was locked (the wager record is
  written at the lock); ``settlement``: counted for the wager's player, once, at its settlement (a voided
  coup's wagers are locked again at the redeal and counted then, as the floor's accounting counts them); an
  uncarded seat's wagers are nobody's: no slip.
* ``coup``: a declared coup while a player is seated is a **decision** dealt to them (the measured pace).
* ``buy_in`` with a ``player_ref``: on that player's slip at that table in the visit its time falls in (within
  the pause window of it).

A **visit** is a player's stints, across seats and tables, each starting within :data:`PAUSE_WINDOW_SECONDS`
(or the caller's window) of the end of the one before: a seat move, a table move, or a pause (stepped away).
A **slip** is one visit's play at one table: from its first stint's start to its last stint's end there;
the time between its stints (paused, or playing at another table) is ``paused_seconds``, not rated time.

A visit whose player is still seated at the end of the records is **open**: the records do not say its end.
:func:`rating_slips` leaves open visits out unless asked (``include_open``), and then ends each seated stint
at its table's last record, with ``open`` true. A closed visit's slips are final once the window has passed
after its end; before that, a return within the window continues it.

The estimate beside the exact theo is the casino's usual one: average bet x assumed decisions per hour x rated
hours x assumed house edge (:class:`Estimate`, its assumptions named in every slip).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from controller.game.bodies import (
    BuyInBody,
    CoupBody,
    PlayerInBody,
    PlayerOutBody,
    SettlementBody,
    ShoeBody,
    WagerBody,
)
from controller.game.kinds import RecordKind
from controller.game.notation import money_text
from controller.game.records import TableRecord

__all__ = [
    "DEFAULT_DECISIONS_PER_HOUR",
    "DEFAULT_HOUSE_EDGE",
    "PAUSE_WINDOW_SECONDS",
    "SLIP_KINDS",
    "Estimate",
    "Slip",
    "micros_of",
    "rating_slips",
    "slip_line",
    "slips_table",
]

#: A player_out then a player_in of the same player within this many seconds continues the visit.
PAUSE_WINDOW_SECONDS = 30 * 60
#: The usual estimate's pace: a mini-baccarat table's decisions (coups) per hour (the floor's ratings' too).
DEFAULT_DECISIONS_PER_HOUR = 70
#: The usual estimate's house edge: Banker's, eight decks, 5 % commission (1.06 %).
DEFAULT_HOUSE_EDGE = 0.0106
#: The record kinds the slips read (a reader may fetch only these).
SLIP_KINDS = (
    RecordKind.SHOE,
    RecordKind.COUP,
    RecordKind.PLAYER_IN,
    RecordKind.PLAYER_OUT,
    RecordKind.WAGER,
    RecordKind.SETTLEMENT,
    RecordKind.BUY_IN,
)

_MICROS = 1_000_000
_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$", re.ASCII
)


def micros_of(at: str) -> int:
    """An ISO 8601 time (a record's ``at``: ``2026-12-02T18:56:00.123+00:00``, ``...Z``; no offset: UTC) as
    microseconds since 1970-01-01 UTC, exactly (a finer fraction is cut). ValueError for any other text."""
    m = _ISO.match(at.strip())
    if m is None:
        raise ValueError(f"{at!r:.40} is not an ISO 8601 time")
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        raise ValueError(f"{at!r:.40} is not an ISO 8601 time")
    fraction = int((m.group(7) or "").ljust(6, "0")[:6])
    offset = 0
    zone = m.group(8)
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = (int(digits[:2]) * 60 + int(digits[2:])) * 60 * (1 if zone[0] == "+" else -1)
    # days from the civil date (H. Hinnant's algorithm): proleptic Gregorian, exact
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
    return seconds * _MICROS + fraction


@dataclass(frozen=True)
class Estimate:
    """The usual estimate's assumptions: a pace nobody measured and a house edge for the game."""

    decisions_per_hour: int = DEFAULT_DECISIONS_PER_HOUR
    house_edge: float = DEFAULT_HOUSE_EDGE

    def __post_init__(self) -> None:
        if not 1 <= self.decisions_per_hour <= 1000:
            raise ValueError(f"decisions per hour {self.decisions_per_hour} is not 1-1000")
        if not (math.isfinite(self.house_edge) and 0 <= self.house_edge < 1):
            raise ValueError(f"house edge {self.house_edge} is not a fraction from 0 to below 1")

    def to_dict(self) -> dict[str, Any]:
        return {
            "decisions_per_hour": self.decisions_per_hour,
            "house_edge": self.house_edge,
            "formula": "avg_bet_cents x decisions_per_hour x rated hours x house_edge",
        }


@dataclass
class _Stint:
    """One player's time at one seat of one table, and what they played there."""

    table: str
    seat: int
    player_ref: str
    start: str
    start_us: int
    end: str = ""
    end_us: int = 0
    open: bool = True
    first_shoe: int = 0
    last_shoe: int = 0
    # coups and decisions counted as they come (a stint's coups come in order, so each is counted once), with
    # the first and last decision kept to count a decision shared by two stints of a slip once (a seat move
    # between a coup's lock and its declare)
    coups: int = 0
    decisions: int = 0
    last_coup: tuple[int, int] | None = None
    first_decision: tuple[int, int] | None = None
    last_decision: tuple[int, int] | None = None
    wagers: int = 0
    unpriced: int = 0
    handle: int = 0
    net: int = 0
    commission_owed: int = 0
    theo_h: int = 0  # hundredths of a cent

    def close(self, at: str, us: int) -> None:
        self.end, self.end_us, self.open = at, max(us, self.start_us), False

    def played(self, key: tuple[int, int]) -> None:
        """A wager of coup ``key`` (shoe, coup) settled: a coup played, and a decision."""
        if key != self.last_coup:
            self.coups += 1
            self.last_coup = key
        self.decided(key)

    def decided(self, key: tuple[int, int]) -> None:
        """Coup ``key`` (shoe, coup) was dealt to the player: a decision."""
        if key != self.last_decision:
            self.decisions += 1
            self.first_decision = self.first_decision or key
            self.last_decision = key
        self.shoe(key[0])

    def shoe(self, number: int) -> None:
        self.first_shoe = self.first_shoe or number
        self.last_shoe = max(self.last_shoe, number)


@dataclass(frozen=True)
class _BuyIn:
    table: str
    player_ref: str
    at_us: int
    cents: int


@dataclass
class _Table:
    """One table's reading: its seated stints, its locked wagers awaiting settlement, its last record's time."""

    name: str
    seated: dict[int, _Stint] = field(default_factory=dict)
    #: (shoe, coup, seat, bet) -> (the stint of the player carded at the lock or None, theo in hundredths or None)
    pending: dict[tuple[int, int, int, str], tuple[_Stint | None, int | None]] = field(default_factory=dict)
    last: str = ""
    last_us: int = 0


@dataclass(frozen=True)
class Slip:
    """One closed (or, asked for, open) rating slip: one visit's play at one table. Amounts integer cents but
    the theos (cents to a hundredth); times as the records' ``at``."""

    table: str
    player_ref: str
    seat: int  # the first seat
    seats: tuple[int, ...]  # every seat, in the order sat
    visit_start: str  # the visit's start, at whichever table
    start: str
    end: str
    open: bool
    rated_us: int
    paused_us: int
    shoes: tuple[int, int]
    coups: int  # coups with a wager of the player's settled
    decisions: int  # coups declared while seated (and any the player had a wager settled in)
    wagers: int
    unpriced_wagers: int  # wagers the table did not price (no theo_cents)
    handle_cents: int
    win_cents: int  # the player's: + won, - lost (the settlements' net)
    commission_owed_cents: int  # put in the seat's box, collected at the shoe's end (not in win_cents)
    theo_h: int
    buy_in_cents: int
    buy_ins: int
    estimate: Estimate

    @property
    def rated_hours(self) -> float:
        return self.rated_us / (3600 * _MICROS)

    @property
    def avg_bet_cents(self) -> int:
        """Handle / coups played, rounded half up (0 with no coup)."""
        return _ratio(self.handle_cents, self.coups)

    @property
    def avg_bet_per_decision_cents(self) -> int:
        """Handle / decisions dealt while seated, rounded half up (0 with none)."""
        return _ratio(self.handle_cents, self.decisions)

    @property
    def decisions_per_hour(self) -> float | None:
        """The measured pace: decisions per rated hour (None with no rated time)."""
        return None if self.rated_us == 0 else round(self.decisions / self.rated_hours, 2)

    @property
    def estimated_theo_cents(self) -> float:
        e = self.estimate
        return round(self.avg_bet_cents * e.decisions_per_hour * self.rated_hours * e.house_edge, 2)

    def to_dict(self) -> dict[str, Any]:
        """The slip's JSON line's fields (``table`` is the caller's to add: :func:`slip_line`)."""
        return {
            "player_ref": self.player_ref,
            "seat": self.seat,
            "seats": list(self.seats),
            "visit_start": self.visit_start,
            "start": self.start,
            "end": self.end,
            "open": self.open,
            "rated_seconds": _seconds(self.rated_us),
            "paused_seconds": _seconds(self.paused_us),
            "shoes": list(self.shoes),
            "coups": self.coups,
            "decisions": self.decisions,
            "decisions_per_hour": self.decisions_per_hour,
            "wagers": self.wagers,
            "unpriced_wagers": self.unpriced_wagers,
            "handle_cents": self.handle_cents,
            "avg_bet_cents": self.avg_bet_cents,
            "avg_bet_per_decision_cents": self.avg_bet_per_decision_cents,
            "theo_cents": self.theo_h / 100,
            "estimated_theo_cents": self.estimated_theo_cents,
            "estimate": self.estimate.to_dict(),
            "win_cents": self.win_cents,
            "commission_owed_cents": self.commission_owed_cents,
            "buy_in_cents": self.buy_in_cents,
            "buy_ins": self.buy_ins,
        }


def slip_line(slip: Slip, *, table: bool = False) -> str:
    """The slip as one JSON line (sorted keys, compact): the table's; with ``table`` the floor's (plus ``table``)."""
    data = slip.to_dict() | ({"table": slip.table} if table else {})
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _ratio(amount: int, count: int) -> int:
    return 0 if count == 0 else (2 * amount + count) // (2 * count)


def _seconds(us: int) -> float:
    return round(us / _MICROS, 3)


def _hundredths(cents: float) -> int:
    return round(cents * 100)


# -- reading one table's records ---------------------------------------------------------------------------


def _open(t: _Table, seat: int, ref: str, at: str, us: int, shoe: int, out: list[_Stint]) -> None:
    held = t.seated.pop(seat, None)
    if held is not None:
        held.close(at, us)
    stint = _Stint(t.name, seat, ref, at, us)
    stint.shoe(shoe)
    t.seated[seat] = stint
    out.append(stint)


def _read(t: _Table, r: TableRecord, us: int, stints: list[_Stint], buy_ins: list[_BuyIn]) -> None:
    kind, at = r.kind, r.at
    if kind == RecordKind.PLAYER_IN:
        if (p := PlayerInBody.read(r.body)) is not None:
            _open(t, p.seat, p.player_ref, at, us, p.shoe, stints)
    elif kind == RecordKind.PLAYER_OUT:
        o = PlayerOutBody.read(r.body)
        held = None if o is None else t.seated.get(o.seat)
        if o is not None and held is not None and held.player_ref == o.player_ref:
            del t.seated[o.seat]
            held.close(at, us)
    elif kind == RecordKind.WAGER:
        if (w := WagerBody.read(r.body)) is not None:
            theo = None if w.theo_cents is None else _hundredths(w.theo_cents)
            t.pending[(w.shoe, w.coup, w.seat, w.bet)] = (t.seated.get(w.seat), theo)
    elif kind == RecordKind.SETTLEMENT:
        if (s := SettlementBody.read(r.body)) is not None:
            owner, theo = t.pending.pop((s.shoe, s.coup, s.seat, s.bet), (t.seated.get(s.seat), None))
            if owner is not None:
                owner.wagers += 1
                owner.handle += s.stake
                owner.net += s.net
                owner.commission_owed += s.commission_owed
                owner.played((s.shoe, s.coup))
                if theo is None:
                    owner.unpriced += 1
                else:
                    owner.theo_h += theo
    elif kind == RecordKind.COUP:
        if (c := CoupBody.read(r.body)) is not None and c.coup is not None and not c.set_aside:
            if c.declared:
                for stint in t.seated.values():
                    stint.decided((c.shoe, c.coup))
            # the coup's settlements follow its record: keep its wagers, forget older ones (a void's)
            t.pending = {k: v for k, v in t.pending.items() if (k[0], k[1]) == (c.shoe, c.coup) and not c.void}
    elif kind == RecordKind.SHOE:
        if (sh := ShoeBody.read(r.body)) is not None and sh.event == "start":
            for carried in sh.players:
                held = t.seated.get(carried.seat)
                if carried.playing and (held is None or held.player_ref != carried.player_ref):
                    _open(t, carried.seat, carried.player_ref, at, us, sh.shoe, stints)
    elif kind == RecordKind.BUY_IN:
        b = BuyInBody.read(r.body)
        if b is not None and b.player_ref is not None:
            buy_ins.append(_BuyIn(t.name, b.player_ref, us, b.cents))


def _stints(records: Iterable[TableRecord]) -> tuple[list[_Stint], list[_BuyIn]]:
    """Every stint and carded buy-in of the records (each table's in its order; tables may interleave)."""
    tables: dict[str, _Table] = {}
    stints: list[_Stint] = []
    buy_ins: list[_BuyIn] = []
    for r in records:
        t = tables.get(r.table)
        if t is None:
            t = tables[r.table] = _Table(r.table)
        if r.at == t.last:  # the records of a coup share their stamps
            us = t.last_us
        else:
            try:
                us = micros_of(r.at)
            except ValueError:
                us = t.last_us  # a record whose time cannot be read counts at the time of the one before it
            else:
                t.last, t.last_us = r.at, max(us, t.last_us)
        if r.kind in _KINDS:
            _read(t, r, max(us, t.last_us), stints, buy_ins)
    for t in tables.values():
        for stint in t.seated.values():  # still seated: open, ended here for the asking
            stint.end, stint.end_us = t.last or stint.start, max(t.last_us, stint.start_us)
    return stints, buy_ins


_KINDS = frozenset(k.value for k in SLIP_KINDS)


# -- visits and slips ------------------------------------------------------------------------------------------


def _visits(stints: list[_Stint], window_us: int) -> Iterator[list[_Stint]]:
    """Each player's stints grouped into visits (time order)."""
    by_player: dict[str, list[_Stint]] = {}
    for s in stints:
        by_player.setdefault(s.player_ref, []).append(s)
    for ref in sorted(by_player):
        ordered = sorted(by_player[ref], key=lambda s: (s.start_us, s.table, s.seat))
        visit: list[_Stint] = []
        end = 0
        for s in ordered:
            if visit and s.start_us - end > window_us:
                yield visit
                visit = []
            visit.append(s)
            end = max(end, s.end_us) if len(visit) > 1 else s.end_us
        if visit:
            yield visit


def _slip(visit: list[_Stint], table: str, buy_ins: tuple[int, int], estimate: Estimate) -> Slip:
    here = [s for s in visit if s.table == table]
    start = min(here, key=lambda s: s.start_us)
    end = max(here, key=lambda s: s.end_us)
    rated = sum(s.end_us - s.start_us for s in here)
    seats: list[int] = []
    for s in here:
        if not seats or seats[-1] != s.seat:
            seats.append(s.seat)
    shared = sum(
        1
        for before, after in pairwise(here)
        if before.last_decision is not None and before.last_decision == after.first_decision
    )
    shoes = [s.first_shoe for s in here if s.first_shoe] + [s.last_shoe for s in here if s.last_shoe]
    return Slip(
        table=table,
        player_ref=start.player_ref,
        seat=seats[0],
        seats=tuple(seats),
        visit_start=visit[0].start,
        start=start.start,
        end=end.end,
        open=any(s.open for s in visit),
        rated_us=rated,
        paused_us=max(0, end.end_us - start.start_us - rated),
        shoes=(min(shoes, default=0), max(shoes, default=0)),
        coups=sum(s.coups for s in here),
        decisions=sum(s.decisions for s in here) - shared,
        wagers=sum(s.wagers for s in here),
        unpriced_wagers=sum(s.unpriced for s in here),
        handle_cents=sum(s.handle for s in here),
        win_cents=sum(s.net for s in here),
        commission_owed_cents=sum(s.commission_owed for s in here),
        theo_h=sum(s.theo_h for s in here),
        buy_in_cents=buy_ins[0],
        buy_ins=buy_ins[1],
        estimate=estimate,
    )


def rating_slips(
    records: Iterable[TableRecord],
    *,
    window_seconds: int = PAUSE_WINDOW_SECONDS,
    estimate: Estimate | None = None,
    include_open: bool = False,
) -> list[Slip]:
    """The rating slips of ``records`` (one or more tables', each table's in journal order; see the module's
    docstring), ordered by start, table and player: the closed visits' slips, and with ``include_open`` the open
    ones' too."""
    if window_seconds < 0:
        raise ValueError("the pause window is not negative")
    estimate = estimate or Estimate()
    window_us = window_seconds * _MICROS
    stints, buy_ins = _stints(records)
    visits = list(_visits(stints, window_us))
    # each carded buy-in goes to its player's visit whose time (widened by the window) holds it, at its table
    spans: dict[str, list[tuple[int, int, int]]] = {}
    for i, v in enumerate(visits):
        spans.setdefault(v[0].player_ref, []).append(
            (v[0].start_us - window_us, max(s.end_us for s in v) + window_us, i)
        )
    bought: dict[tuple[int, str], list[int]] = {}
    for b in buy_ins:
        for low, high, i in spans.get(b.player_ref, ()):
            if low <= b.at_us <= high and any(s.table == b.table for s in visits[i]):
                got = bought.setdefault((i, b.table), [0, 0])
                got[0] += b.cents
                got[1] += 1
                break
    slips: list[Slip] = []
    for i, visit in enumerate(visits):
        if not include_open and any(s.open for s in visit):
            continue
        for table in sorted({s.table for s in visit}):
            cents, count = bought.get((i, table), (0, 0))
            slips.append(_slip(visit, table, (cents, count), estimate))
    slips.sort(key=lambda s: (micros_of_slip(s), s.table, s.player_ref, s.seat))
    return slips


def micros_of_slip(slip: Slip) -> int:
    """A slip's start as microseconds (its order)."""
    try:
        return micros_of(slip.start)
    except ValueError:
        return 0


def slips_table(slips: list[Slip], *, with_table: bool = False) -> list[str]:
    """The slips as the lines of a table in dollars (the floor's with a table column), and a line saying what
    the columns mean."""
    head = f"{'table':<10} " if with_table else ""
    lines = [
        f"{head}{'player':<16} {'seats':<8} {'start':<19} {'end':<19} {'rated':>6} {'paused':>6} {'coups':>5}"
        f" {'dec/h':>6} {'handle':>11} {'avg bet':>9} {'theo':>10} {'estimate':>10} {'win':>11} {'buy-ins':>11}"
    ]
    for s in slips:
        pace = "-" if s.decisions_per_hour is None else f"{s.decisions_per_hour:.0f}"
        seats = ",".join(str(n) for n in s.seats) + ("*" if s.open else "")
        cell = f"{s.table:<10} " if with_table else ""
        lines.append(
            f"{cell}{s.player_ref:<16} {seats:<8} {s.start[:19].replace('T', ' '):<19}"
            f" {s.end[:19].replace('T', ' '):<19} {s.rated_us / 60 / _MICROS:>6.0f} {s.paused_us / 60 / _MICROS:>6.0f}"
            f" {s.coups:>5} {pace:>6} {money_text(s.handle_cents):>11} {money_text(s.avg_bet_cents):>9}"
            f" {money_text(round(s.theo_h / 100)):>10} {money_text(round(s.estimated_theo_cents)):>10}"
            f" {money_text(s.win_cents):>11} {money_text(s.buy_in_cents):>11}"
        )
    e = slips[0].estimate if slips else Estimate()
    lines.append(
        "rated and paused in minutes; win is the player's (+ won); theo exact (the wagers' sum); estimate = avg bet"
        f" x {e.decisions_per_hour} decisions/hour x rated hours x {e.house_edge:.2%} house edge"
        + ("; * still seated (open)" if any(s.open for s in slips) else "")
    )
    return lines
