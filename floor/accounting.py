"""The floor's money: table accounting per shift and seat ratings, read from every table's money records once.

:class:`Accounting` is a surveillance :class:`~floor.surveillance.Watch` (the collector registers it): it reads
each table's ``wager``, ``settlement``, ``commission``, ``coup`` and ``shoe`` records once floor-wide, in the
surveillance step's own transaction, and keeps two tables of its own:

* ``money_buckets``: per table and quarter-hour UTC bucket (:func:`floor.shifts.bucket_of` of the record's
  ``at``): **handle** (the stakes settled), **win** (the house's: minus the settlements' ``net``, plus the
  commission collected from the boxes), commission **collected** and **uncollected** (from ``commission``
  records: a box's collected and owed less collected), the **exact theoretical win** (the settled wagers'
  ``theo_cents``, in hundredths of a cent), the **variance** of win (cents squared, a float), **coups**
  (declared) and **wagers** (settled). Theo and variance count at the wager's *settlement*, as the handle does:
  a wager of a voided coup is locked again at the redeal and counted then, once. A shift (any
  :class:`~floor.shifts.ShiftPlan`) is a range of buckets, summed when the report is asked for.
* ``seat_sessions``: one row per seat session (a rating). A session opens at the seat's first ``wager``
  record and ends at the lock of the coup where the table's book judges the seat has left: its wager spots
  empty at ``leave_after_coups`` consecutive locks, the count starting again at each shoe's start, exactly as
  :class:`controller.game.wagers.WagerBook` counts (a lock is a declared coup, or a voided one that had cards;
  a seat with a refused bet on the layout is still playing). The book journals that judgement only when the
  seat's commission box owes something (a ``commission`` record with ``why`` ``seat_left``), so the floor
  counts the coups itself, with the table's ``leave_after_coups`` (``shoe-floor serve --leave-after-coups``,
  default 3 as the table's). No player identity exists yet: a session rates a *seat*, as a player-tracking
  system would rate the card in it.

The 95 % interval: a shift's win is a sum of many wagers' results, its mean the exact theo and its variance the
sum of each wager's, ``stake**2`` x the variance of one unit of that wager at its betting time, which the
``wager`` record carries (``variance``, from the table's odds engine). A version 3 record written before that
field was added falls back to the wager's variance **off the top** of the shoe (a full shoe of the table's
decks, under the table's rules from the shoe's start record, by the same engine): close to the betting-time
variance except deep in a shoe.
A wager the table did not price (``ev`` null) counts its off-the-top edge as its theo. When a table's first
record at or after a shift's end arrives, a win outside ``[theo - 1.96 sigma, theo + 1.96 sigma]`` for the
shift that ended is an alert ``hold_outside_interval`` (once per table and shift, its ``key``). A table that
stops dealing sends no such record until it deals again, so :func:`ended_shift_alerts` (the collector's sweep,
every minute) raises the same alert, under the same key, for a table whose last shift ended
:data:`SHIFT_CLOSE_GRACE` ago with everything archived read: whichever comes first is the one the feed keeps.

:func:`shift_report` and :func:`ratings` are the queries (``shoe-floor report``, ``shoe-floor ratings``, and
the pit page's shift summary and open ratings).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from controller.game.bodies import (
    CommissionBody,
    CoupBody,
    RecordBody,
    SettlementBody,
    ShoeBody,
    WagerBody,
    WagerRefusedBody,
)
from controller.game.composition import Composition
from controller.game.notation import money_text
from controller.game.odds import exact_odds
from controller.game.records import RecordKind, TableRecord, ruleset_from_body
from controller.game.rules import COMMISSION, Bet, Ruleset
from controller.game.wagers import MAX_SEATS
from floor.archive import Alert, AlertKind, Archive, Transaction
from floor.archive.money_tables import ACCOUNTING_SCHEMA, MoneySums, SeatSession
from floor.shifts import DEFAULT_SHIFTS, DEFAULT_ZONE, Shift, ShiftPlan, bucket_of, parse_time

#: The normal quantile of the two-sided 95 % interval.
Z95 = 1.96
#: Decisions (coups) per hour assumed by the usual theo: a mini-baccarat table's pace (``--decisions-per-hour``).
DEFAULT_DECISIONS_PER_HOUR = 70
#: Consecutive empty locks after which the book judges a seat has left (the table's default).
DEFAULT_LEAVE_AFTER_COUPS = 3
#: Decks and rules assumed for a shoe whose start record does not say (records older than version 3).
DEFAULT_DECKS = 8
DEFAULT_RULES = COMMISSION
#: Most wagers held between a ``wager`` and its ``settlement`` (every spot of the largest layout, two coups).
MAX_PENDING = MAX_SEATS * 9 * 2

_BUCKET_COLUMNS = ("handle", "win", "collected", "uncollected", "theo_h", "variance", "coups", "wagers")
_SESSION_SUMS = ("coups", "wagers", "wagered", "net", "commission", "collected", "theo_h", "edge_stake")

_ISO = "%Y-%m-%dT%H:%M:%S.%fZ"
#: The epoch: the time of a record whose ``at`` cannot be read, when no record before it in the step could.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class _When:
    """A record's time: as a datetime, in one text form (times compare as text), and its bucket."""

    moment: datetime
    iso: str  # 2026-12-01T17:45:03.123456Z
    bucket: str

    @classmethod
    def of(cls, moment: datetime) -> _When:
        return cls(moment, moment.strftime(_ISO), bucket_of(moment))


@lru_cache(maxsize=4096)
def _when(at: str) -> _When | None:
    """A record's ``at`` read once (the records of one coup share their stamps), None when it is no time."""
    try:
        return _When.of(parse_time(at))
    except ValueError:
        return None


# -- the wagers' off-the-top edges and variances -------------------------------------------------------------


@lru_cache(maxsize=32)
def unit_moments(rules_text: str, decks: int) -> Mapping[str, tuple[float, float]]:
    """Per wager (its :class:`Bet` name): the house edge and the variance of one unit staked, off the top of
    a full shoe of ``decks`` decks under the rules a shoe's start record holds (``rules_text``, its JSON; empty:
    :data:`DEFAULT_RULES`): the odds engine the table prices its wagers with (:func:`exact_odds`)."""
    rules: Ruleset = DEFAULT_RULES if not rules_text else ruleset_from_body(json.loads(rules_text))
    report = exact_odds(Composition.decks(decks), rules)
    return {bet.value: (odds.house_edge, odds.variance) for bet, odds in report.bets.items()}


def _moments(state: AccountState, bet: str) -> tuple[float, float]:
    known = unit_moments(state.rules, state.decks)
    return known.get(bet, known[Bet.BANKER.value])


# -- the shift's money: one rule, for the pit's tiles and the reports -------------------------------------------


@dataclass(frozen=True, slots=True)
class MoneyMove:
    """What one record adds to its table's money in its shift, in cents (:func:`money_move`)."""

    handle: int = 0
    win: int = 0  # the house's
    wagers: int = 0  # settled
    collected: int = 0  # from the commission boxes
    uncollected: int = 0


def money_move(body: RecordBody) -> MoneyMove | None:
    """The shift's money rule, the one the accounting (``shoe-floor report``) and the pit's tiles both fold: a
    settlement adds its stake to the handle and takes its ``net`` from the house's win (the commission taken
    at the payout is in the net); a commission box closed adds what it collected to the win, and its collected
    and uncollected to the boxes'. Any other record moves no money (None)."""
    if isinstance(body, SettlementBody):
        return MoneyMove(handle=body.stake, win=-body.net, wagers=1)
    if isinstance(body, CommissionBody):
        return MoneyMove(win=body.collected, collected=body.collected, uncollected=body.uncollected)
    return None


@dataclass(frozen=True, slots=True)
class PendingWager:
    """A wager locked and not yet settled: its coup, seat and bet, its stake, its exact theo in hundredths of a
    cent (None: not priced) and its variance per unit at the betting time (None: the record predates it).

    Kept in ``money_heads.state`` as the list ``[shoe, coup, seat, bet, stake, theo_h, variance]`` it always was
    (:meth:`to_json`, :meth:`from_json`), so an archive's saved state reads on across the upgrade."""

    shoe: int
    coup: int
    seat: int
    bet: str
    stake: int
    theo_h: int | None
    variance: float | None

    def of(self, shoe: object, coup: object) -> bool:
        """Whether it is a wager of this coup."""
        return (self.shoe, self.coup) == (shoe, coup)

    def to_json(self) -> list[Any]:
        return [self.shoe, self.coup, self.seat, self.bet, self.stake, self.theo_h, self.variance]

    @classmethod
    def from_json(cls, item: Sequence[Any]) -> PendingWager:
        shoe, coup, seat, bet, stake, theo_h, *rest = item  # an older state has no variance
        variance = rest[0] if rest else None
        return cls(shoe, coup, seat, str(bet), stake, theo_h, None if variance is None else float(variance))


# -- the watch's state and what a step of records means -------------------------------------------------------


@dataclass
class AccountState:
    """What the accounting remembers of a table between steps (JSON in ``money_heads.state``)."""

    rules: str = ""  # the current shoe's rules (its start record's ``rules`` as JSON; "" unknown)
    decks: int = DEFAULT_DECKS
    #: The wagers not yet settled (this coup's; after its record, until its settlements):
    #: [shoe, coup, seat, bet, stake, theo in hundredths of a cent or None, variance per unit or None].
    pending: list[PendingWager] = field(default_factory=list)
    playing: list[int] = field(default_factory=list)  # seats with a wager or a refused bet at this coup's lock
    decided: list[int] = field(default_factory=list)  # seats with a settlement at the last coup declared
    empty: dict[str, int] = field(default_factory=dict)  # seat -> consecutive empty locks (this shoe)
    open: dict[str, list[Any]] = field(default_factory=dict)  # seat -> [start_seq, start_at] of its session
    last: dict[str, list[Any]] = field(default_factory=dict)  # seat -> its latest session (commission goes there)
    shift: list[str] | None = None  # [start, end] (ISO) of the shift of the table's last record

    def to_json(self) -> str:
        return json.dumps(self.__dict__ | {"pending": [w.to_json() for w in self.pending]}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AccountState:
        data = json.loads(text)
        return cls(**data | {"pending": [PendingWager.from_json(w) for w in data.get("pending", [])]})


def _zero_bucket() -> dict[str, float]:
    return dict.fromkeys(_BUCKET_COLUMNS, 0)


@dataclass
class AccountScan:
    """What a step of records adds (:meth:`Accounting.scan`)."""

    buckets: dict[str, dict[str, float]] = field(default_factory=dict)
    #: (seat, start_seq) -> [start_at, last_at, end_at, end_seq, sums by _SESSION_SUMS]
    sessions: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    ended: list[tuple[Shift, int]] = field(default_factory=list)  # shifts that ended, with the record that says so


class Accounting:
    """The floor's accounting watch (see the module's docstring)."""

    schema: tuple[str, ...] = ACCOUNTING_SCHEMA

    def __init__(self, plan: ShiftPlan | None = None, leave_after_coups: int = DEFAULT_LEAVE_AFTER_COUPS) -> None:
        if leave_after_coups < 1:
            raise ValueError("leave_after_coups must be at least 1")
        self.plan = plan or ShiftPlan.parse(DEFAULT_SHIFTS, DEFAULT_ZONE)
        self.leave_after_coups = leave_after_coups

    def load(self, tx: Transaction, table: str) -> AccountState:
        text = tx.accounting.state(table)
        return AccountState() if text is None else AccountState.from_json(text)

    # -- scan (pure) ----------------------------------------------------------------------------------------
    def scan(self, state: AccountState, records: Sequence[TableRecord]) -> AccountScan:
        out = AccountScan()
        last: _When | None = None
        for r in records:
            # A record whose time cannot be read (a table's bug) counts at the time of the one before it.
            when = _when(r.at) or last or _When.of(_EPOCH)
            last = when
            self._shift(state, r, when, out)
            if r.kind == RecordKind.SHOE:
                shoe = ShoeBody.read(r.body)
                if shoe is not None and shoe.event == "start":
                    self._shoe_start(state, shoe)
            elif r.kind == RecordKind.WAGER:
                self._wager(state, r, when)
            elif r.kind == RecordKind.WAGER_REFUSED:
                refused = WagerRefusedBody.read(r.body)
                if refused is not None and refused.seat not in state.playing:
                    state.playing.append(refused.seat)
            elif r.kind == RecordKind.SETTLEMENT:
                self._settlement(state, r, when, out)
            elif r.kind == RecordKind.COMMISSION:
                self._commission(state, r, when, out)
            elif r.kind == RecordKind.COUP and (coup := CoupBody.read(r.body)) is not None and not coup.set_aside:
                self._coup(state, r, coup, when, out)
        return out

    def _shift(self, state: AccountState, r: TableRecord, when: _When, out: AccountScan) -> None:
        if state.shift is not None:
            end = _when(state.shift[1])
            if end is None or when.moment >= end.moment:
                start = _when(state.shift[0])
                if start is not None and end is not None:
                    out.ended.append((self.plan.shift_of(start.moment), r.seq))
                state.shift = None
        if state.shift is None:
            s = self.plan.shift_of(when.moment)
            state.shift = [s.start.isoformat(), s.end.isoformat()]

    @staticmethod
    def _shoe_start(state: AccountState, shoe: ShoeBody) -> None:
        rules = None if shoe.rules is None else shoe.rules.model_dump(mode="json")
        text = "" if rules is None else json.dumps(rules, sort_keys=True, separators=(",", ":"))
        state.decks = shoe.decks or DEFAULT_DECKS  # a start always says its decks
        try:
            unit_moments(text, state.decks)
        except (ValueError, KeyError, TypeError):
            text = ""  # rules this version cannot price: the default's
        state.rules = text
        state.empty = {}  # the book counts a seat's empty locks again from each shoe's start
        state.pending, state.playing, state.decided = [], [], []

    @staticmethod
    def _wager(state: AccountState, r: TableRecord, when: _When) -> None:
        w = WagerBody.read(r.body)
        if w is None:
            return
        seat = w.seat
        theo_h = None if w.theo_cents is None else round(w.theo_cents * 100)
        if len(state.pending) < MAX_PENDING:
            state.pending.append(PendingWager(w.shoe, w.coup, seat, w.bet, w.stake, theo_h, w.variance))
        if seat not in state.playing:
            state.playing.append(seat)
        if str(seat) not in state.open:
            state.open[str(seat)] = [r.seq, when.iso]
            state.last[str(seat)] = state.open[str(seat)]

    def _session(self, state: AccountState, seat: int, r: TableRecord, when: _When, out: AccountScan) -> dict[str, Any]:
        key = state.open.get(str(seat))
        if key is None:  # a settlement without its wager (the wager was refused reading): a session all the same
            key = state.open[str(seat)] = state.last[str(seat)] = [r.seq, when.iso]
        return self._session_of(key, seat, when, out)

    @staticmethod
    def _session_of(key: list[Any], seat: int, when: _When, out: AccountScan) -> dict[str, Any]:
        row = out.sessions.get((seat, int(key[0])))
        if row is None:
            row = out.sessions[(seat, int(key[0]))] = {
                "start_at": str(key[1]),
                "last_at": str(key[1]),
                "end_at": None,
                "end_seq": None,
                **dict.fromkeys(_SESSION_SUMS, 0),
            }
        row["last_at"] = max(row["last_at"], when.iso)
        return row

    def _settlement(self, state: AccountState, r: TableRecord, when: _When, out: AccountScan) -> None:
        s = SettlementBody.read(r.body)
        move = None if s is None else money_move(s)
        if s is None or move is None:
            return
        seat, stake, net, bet = s.seat, s.stake, s.net, s.bet
        edge, unit_var = _moments(state, bet)
        theo_h: int | None = None
        for i, w in enumerate(state.pending):
            if w.of(s.shoe, s.coup) and (w.seat, w.bet) == (seat, bet):
                theo_h = w.theo_h
                if w.variance is not None:  # the table's exact variance at the betting time
                    unit_var = w.variance
                del state.pending[i]
                break
        if theo_h is None:  # not priced by the table: its edge off the top
            theo_h = round(edge * stake * 100)
        bucket = out.buckets.setdefault(when.bucket, _zero_bucket())
        bucket["handle"] += move.handle
        bucket["win"] += move.win
        bucket["theo_h"] += theo_h
        bucket["variance"] += float(stake) * float(stake) * unit_var
        bucket["wagers"] += move.wagers
        row = self._session(state, seat, r, when, out)
        row["wagers"] += 1
        row["wagered"] += stake
        row["net"] += net
        row["commission"] += s.commission
        row["theo_h"] += theo_h
        row["edge_stake"] += edge * stake
        if seat not in state.decided:
            state.decided.append(seat)
            row["coups"] += 1

    def _commission(self, state: AccountState, r: TableRecord, when: _When, out: AccountScan) -> None:
        c = CommissionBody.read(r.body)
        move = None if c is None else money_move(c)
        if c is None or move is None:
            return
        bucket = out.buckets.setdefault(when.bucket, _zero_bucket())
        bucket["collected"] += move.collected
        bucket["uncollected"] += move.uncollected
        bucket["win"] += move.win
        key = state.open.get(str(c.seat)) or state.last.get(str(c.seat))
        if key is not None:
            self._session_of(key, c.seat, when, out)["collected"] += c.collected

    def _coup(self, state: AccountState, r: TableRecord, b: CoupBody, when: _When, out: AccountScan) -> None:
        if b.declared:
            out.buckets.setdefault(when.bucket, _zero_bucket())["coups"] += 1
        locked = b.declared or (b.void and bool(b.cards))
        if locked:
            for seat_text in list(state.open):
                seat = int(seat_text)
                if seat in state.playing:
                    state.empty.pop(seat_text, None)
                    continue
                count = state.empty.get(seat_text, 0) + 1
                state.empty[seat_text] = count
                if count >= self.leave_after_coups:
                    key = state.open.pop(seat_text)
                    row = self._session_of(key, seat, when, out)
                    row["end_at"], row["end_seq"] = when.iso, r.seq
                    state.empty.pop(seat_text, None)
            for seat in state.playing:
                state.empty.pop(str(seat), None)
        # The coup's settlements follow its record: keep its wagers for them, forget older ones (a void's).
        state.pending = [w for w in state.pending if w.of(b.shoe, b.coup)]
        state.playing, state.decided = [], []

    # -- store (inside the surveillance step's transaction) -----------------------------------------------
    def store(
        self, tx: Transaction, table: str, site: str | None, state: AccountState, result: AccountScan
    ) -> list[Alert]:
        tx.accounting.save_state(table, state.to_json())
        tx.accounting.add_money(table, [(bucket, MoneySums.of(v)) for bucket, v in sorted(result.buckets.items())])
        tx.accounting.add_sessions(
            SeatSession(
                table=table,
                seat=seat,
                start_seq=start_seq,
                start_at=s["start_at"],
                last_at=s["last_at"],
                end_at=s["end_at"],
                end_seq=s["end_seq"],
                coups=int(s["coups"]),
                wagers=int(s["wagers"]),
                wagered=int(s["wagered"]),
                net=int(s["net"]),
                commission=int(s["commission"]),
                collected=int(s["collected"]),
                theo_h=int(s["theo_h"]),
                edge_stake=float(s["edge_stake"]),
            )
            for (seat, start_seq), s in sorted(result.sessions.items())
        )
        alerts: list[Alert] = []
        for shift, seq in result.ended:
            figures = _shift_rows(tx, [shift], table)
            for f in figures:
                if f.outside:
                    alerts.append(_hold_alert(table, f, seq, site))
        return alerts


#: How long after a shift's end the sweep waits for a quiet table's last records (a link that was slow or
#: briefly down still brings them) before it judges that shift's win from what is archived.
SHIFT_CLOSE_GRACE = timedelta(minutes=15)


def ended_shift_alerts(archive: Archive, plan: ShiftPlan, now: datetime) -> list[Alert]:
    """The hold alerts of tables that have been quiet since their last shift ended: for each table whose last
    record read lies in a shift that ended at least :data:`SHIFT_CLOSE_GRACE` before ``now``, and whose archived
    records surveillance has all read, that shift's alert when its win is outside the interval (the record it
    names is the table's last). The feed stores each key once, so a sweep after the watch raised it (or the
    watch after a sweep) adds nothing."""
    alerts: list[Alert] = []
    with archive.repository.transaction() as tx:
        for head in tx.accounting.heads():
            state = AccountState.from_json(head.state)
            if state.shift is None or head.read != head.head:
                continue  # records of that shift may still be unread: the watch judges it when it reads them
            start, end = _when(state.shift[0]), _when(state.shift[1])
            if start is None or end is None or now < end.moment + SHIFT_CLOSE_GRACE:
                continue
            for f in _shift_rows(tx, [plan.shift_of(start.moment)], head.table):
                if f.outside:
                    alerts.append(_hold_alert(head.table, f, head.read, head.site))
    return alerts


def _hold_alert(table: str, f: ShiftFigures, seq: int, site: str | None) -> Alert:
    detail = (
        f"shift {f.shift}: win {money_text(f.win)} on handle {money_text(f.handle)} is outside the 95 % interval"
        f" {money_text(round(f.interval[0]))} to {money_text(round(f.interval[1]))} around the exact theo"
        f" {money_text(round(f.theo_cents))}"
    )
    key = f"{AlertKind.HOLD_OUTSIDE_INTERVAL}:{table}:{f.start}"
    return Alert(table, seq, AlertKind.HOLD_OUTSIDE_INTERVAL, detail, site, None, f.to_dict(), key)


# -- the queries ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShiftFigures:
    """One table's (or, with ``table`` None, the floor's) money over one shift; integer cents but for theo and
    its interval (cents, to a hundredth). Fields and properties are the report line (:meth:`to_dict`)."""

    table: str | None
    shift: str
    start: str
    end: str
    handle: int
    win: int
    commission_collected: int
    commission_uncollected: int
    theo_h: int  # the exact theo in hundredths of a cent
    variance: float  # of the win, cents squared
    coups: int
    wagers: int

    @property
    def theo_cents(self) -> float:
        return self.theo_h / 100

    @property
    def sigma_cents(self) -> float:
        return round(math.sqrt(max(self.variance, 0.0)), 2)

    @property
    def interval(self) -> tuple[float, float]:
        """The 95 % interval of the win around the theo: ``theo -/+ 1.96 sigma`` (cents, to a hundredth)."""
        half = Z95 * math.sqrt(max(self.variance, 0.0))
        return round(self.theo_h / 100 - half, 2), round(self.theo_h / 100 + half, 2)

    @property
    def hold_pct(self) -> float | None:
        """Win as a percentage of handle (None when nothing was wagered)."""
        return None if self.handle == 0 else 100.0 * self.win / self.handle

    @property
    def outside(self) -> bool:
        """The win lies outside the 95 % interval (never when nothing was wagered)."""
        low, high = self.interval
        return self.wagers > 0 and self.variance > 0 and not low <= self.win <= high

    def to_dict(self) -> dict[str, Any]:
        hold = self.hold_pct
        return {
            "table": self.table,
            "total": self.table is None,
            "shift": self.shift,
            "start": self.start,
            "end": self.end,
            "handle": self.handle,
            "win": self.win,
            "hold_pct": None if hold is None else round(hold, 4),
            "commission_collected": self.commission_collected,
            "commission_uncollected": self.commission_uncollected,
            "theo_cents": self.theo_cents,
            "sigma_cents": self.sigma_cents,
            "interval": list(self.interval),
            "outside": self.outside,
            "coups": self.coups,
            "wagers": self.wagers,
        }


def _figures(table: str | None, shift: Shift, sums: MoneySums) -> ShiftFigures:
    d = shift.to_dict()
    return ShiftFigures(
        table=table,
        shift=d["shift"],
        start=d["start"],
        end=d["end"],
        handle=sums.handle,
        win=sums.win,
        commission_collected=sums.collected,
        commission_uncollected=sums.uncollected,
        theo_h=sums.theo_h,
        variance=sums.variance,
        coups=sums.coups,
        wagers=sums.wagers,
    )


def _shift_rows(tx: Transaction, shifts: Sequence[Shift], table: str | None) -> list[ShiftFigures]:
    rows = tx.accounting.shift_money([s.buckets() for s in shifts], table)
    return [_figures(row.table, shifts[row.shift], row.sums) for row in rows]


def shift_report(
    archive: Archive, plan: ShiftPlan, start: datetime, end: datetime, table: str | None = None
) -> list[ShiftFigures]:
    """Each table's figures for every shift of ``plan`` overlapping ``[start, end)``, shift by shift, tables in
    name order; a table with no money records in a shift has no line for it."""
    shifts = list(plan.shifts(start, end))
    if "money_buckets" not in archive.tables_present():
        return []
    out: list[ShiftFigures] = []
    with archive.repository.transaction() as tx:
        for i in range(0, len(shifts), 200):  # a bounded statement however long the range
            out += _shift_rows(tx, shifts[i : i + 200], table)
    return out


def floor_totals(figures: Sequence[ShiftFigures]) -> list[ShiftFigures]:
    """The floor's figures per shift (``table`` None), summed over the tables' lines; the variances add (the
    tables' results are independent)."""
    by_shift: dict[tuple[str, str, str], list[ShiftFigures]] = {}
    for f in figures:
        by_shift.setdefault((f.start, f.end, f.shift), []).append(f)
    out = []
    for (start, end, name), lines in by_shift.items():
        sums = [sum(getattr(f, c) for f in lines) for c in _TOTALLED]
        out.append(ShiftFigures(None, name, start, end, *sums))
    return out


_TOTALLED = (
    "handle",
    "win",
    "commission_collected",
    "commission_uncollected",
    "theo_h",
    "variance",
    "coups",
    "wagers",
)


@dataclass(frozen=True)
class SessionFigures:
    """One seat session's rating (integer cents but for the theos, cents to a hundredth)."""

    table: str
    seat: int
    start: str
    end: str | None  # None: the session is open
    last: str  # the session's last money record
    coups: int  # coups the seat had a wager settled in (decisions)
    wagers: int
    wagered: int
    player_net: int  # the seat's gain (+) or loss (-) on its wagers, as settle's ``net`` lines sum
    commission: int  # commission charged on its wagers (deducted at payout or owed to the box)
    commission_collected: int  # collected from its box
    exact_theo_cents: float  # the sum of its wagers' theo_cents
    edge: float  # the stake-weighted house edge of its wagers, off the top (the usual theo's edge)
    decisions_per_hour: int
    hours: float  # start to end (open: to its last money record)

    @property
    def average_bet(self) -> int:
        return 0 if self.coups == 0 else round(self.wagered / self.coups)

    @property
    def win(self) -> int:
        """The house's win from the seat: minus its net, plus the commission collected from its box."""
        return -self.player_net + self.commission_collected

    @property
    def usual_theo_cents(self) -> float:
        """Average bet x decisions per hour x hours played x house edge: the casino's usual theo."""
        if self.coups == 0:
            return 0.0
        return round(self.wagered / self.coups * self.decisions_per_hour * self.hours * self.edge, 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "seat": self.seat,
            "start": self.start,
            "end": self.end,
            "open": self.end is None,
            "last": self.last,
            "hours": round(self.hours, 4),
            "coups": self.coups,
            "wagers": self.wagers,
            "wagered": self.wagered,
            "average_bet": self.average_bet,
            "win": self.win,
            "player_net": self.player_net,
            "commission": self.commission,
            "commission_collected": self.commission_collected,
            "exact_theo_cents": self.exact_theo_cents,
            "usual_theo_cents": self.usual_theo_cents,
            "assumptions": {
                "decisions_per_hour": self.decisions_per_hour,
                "edge": round(self.edge, 6),
                "edge_source": "off the top of the shoe, the table's rules, stake-weighted over the wagers played",
            },
        }


def _hours(start: str, end: str) -> float:
    try:
        return max((parse_time(end) - parse_time(start)).total_seconds() / 3600.0, 0.0)
    except ValueError:
        return 0.0


def ratings(
    archive: Archive,
    table: str | None = None,
    since: datetime | None = None,
    open_only: bool = False,
    decisions_per_hour: int = DEFAULT_DECISIONS_PER_HOUR,
) -> list[SessionFigures]:
    """Seat sessions, oldest first: every one (of ``table``), those still open or ended at or after ``since``
    (the sessions played since then), or only the open ones."""
    if "seat_sessions" not in archive.tables_present():
        return []
    since_text = None if since is None else since.astimezone(UTC).strftime(_ISO)
    out = []
    for row in archive.repository.seat_sessions(table, since_text, open_only):
        out.append(
            SessionFigures(
                table=row.table,
                seat=row.seat,
                start=row.start_at,
                end=row.end_at,
                last=row.last_at,
                coups=row.coups,
                wagers=row.wagers,
                wagered=row.wagered,
                player_net=row.net,
                commission=row.commission,
                commission_collected=row.collected,
                exact_theo_cents=row.theo_h / 100,
                edge=0.0 if row.wagered == 0 else row.edge_stake / row.wagered,
                decisions_per_hour=decisions_per_hour,
                hours=_hours(row.start_at, row.last_at if row.end_at is None else row.end_at),
            )
        )
    return out
