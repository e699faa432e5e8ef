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

from controller.game.composition import Composition
from controller.game.notation import money_text
from controller.game.odds import exact_odds
from controller.game.records import RecordKind, TableRecord, ruleset_from_body
from controller.game.rules import COMMISSION, Bet, Ruleset
from controller.game.wagers import MAX_SEATS
from floor.archive import Alert, AlertKind, Archive
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

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS money_heads ("table" TEXT PRIMARY KEY, state TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS money_buckets (
        "table" TEXT NOT NULL, bucket TEXT NOT NULL, handle BIGINT NOT NULL, win BIGINT NOT NULL,
        collected BIGINT NOT NULL, uncollected BIGINT NOT NULL, theo_h BIGINT NOT NULL,
        variance DOUBLE PRECISION NOT NULL, coups BIGINT NOT NULL, wagers BIGINT NOT NULL,
        PRIMARY KEY ("table", bucket))""",
    "CREATE INDEX IF NOT EXISTS money_buckets_bucket ON money_buckets (bucket)",
    """CREATE TABLE IF NOT EXISTS seat_sessions (
        "table" TEXT NOT NULL, seat INTEGER NOT NULL, start_seq BIGINT NOT NULL, start_at TEXT NOT NULL,
        last_at TEXT NOT NULL, end_at TEXT, end_seq BIGINT, coups BIGINT NOT NULL, wagers BIGINT NOT NULL,
        wagered BIGINT NOT NULL, net BIGINT NOT NULL, commission BIGINT NOT NULL, collected BIGINT NOT NULL,
        theo_h BIGINT NOT NULL, edge_stake DOUBLE PRECISION NOT NULL,
        PRIMARY KEY ("table", seat, start_seq))""",
    'CREATE INDEX IF NOT EXISTS seat_sessions_table_end ON seat_sessions ("table", end_at)',
    "CREATE INDEX IF NOT EXISTS seat_sessions_end ON seat_sessions (end_at)",
    'CREATE INDEX IF NOT EXISTS seat_sessions_open ON seat_sessions ("table") WHERE end_at IS NULL',
)

_BUCKET_COLUMNS = ("handle", "win", "collected", "uncollected", "theo_h", "variance", "coups", "wagers")
_ADD_BUCKET = (
    f'INSERT INTO money_buckets ("table", bucket, {", ".join(_BUCKET_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
    ' ON CONFLICT ("table", bucket) DO UPDATE SET '
    + ", ".join(f"{c} = money_buckets.{c} + excluded.{c}" for c in _BUCKET_COLUMNS)
)
_SESSION_SUMS = ("coups", "wagers", "wagered", "net", "commission", "collected", "theo_h", "edge_stake")
_ADD_SESSION = (
    'INSERT INTO seat_sessions ("table", seat, start_seq, start_at, last_at, end_at, end_seq, '
    f"{', '.join(_SESSION_SUMS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ' ON CONFLICT ("table", seat, start_seq) DO UPDATE SET '
    "last_at = CASE WHEN excluded.last_at > seat_sessions.last_at THEN excluded.last_at"
    " ELSE seat_sessions.last_at END,"
    " end_at = COALESCE(excluded.end_at, seat_sessions.end_at),"
    " end_seq = COALESCE(excluded.end_seq, seat_sessions.end_seq), "
    + ", ".join(f"{c} = seat_sessions.{c} + excluded.{c}" for c in _SESSION_SUMS)
)


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


def _number(value: Any) -> float | None:
    """A finite JSON number as a float, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _seat(value: Any) -> int | None:
    """A seat number on the largest layout (1-14), else None: the per-seat state stays bounded."""
    seat = _int(value)
    return seat if seat is not None and 1 <= seat <= MAX_SEATS else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


# -- the watch's state and what a step of records means -------------------------------------------------------


@dataclass
class AccountState:
    """What the accounting remembers of a table between steps (JSON in ``money_heads.state``)."""

    rules: str = ""  # the current shoe's rules (its start record's ``rules`` as JSON; "" unknown)
    decks: int = DEFAULT_DECKS
    #: The wagers not yet settled (this coup's; after its record, until its settlements):
    #: [shoe, coup, seat, bet, stake, theo in hundredths of a cent or None, variance per unit or None].
    pending: list[list[Any]] = field(default_factory=list)
    playing: list[int] = field(default_factory=list)  # seats with a wager or a refused bet at this coup's lock
    decided: list[int] = field(default_factory=list)  # seats with a settlement at the last coup declared
    empty: dict[str, int] = field(default_factory=dict)  # seat -> consecutive empty locks (this shoe)
    open: dict[str, list[Any]] = field(default_factory=dict)  # seat -> [start_seq, start_at] of its session
    last: dict[str, list[Any]] = field(default_factory=dict)  # seat -> its latest session (commission goes there)
    shift: list[str] | None = None  # [start, end] (ISO) of the shift of the table's last record

    def to_json(self) -> str:
        return json.dumps(self.__dict__, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AccountState:
        return cls(**json.loads(text))


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

    schema: tuple[str, ...] = SCHEMA

    def __init__(self, plan: ShiftPlan | None = None, leave_after_coups: int = DEFAULT_LEAVE_AFTER_COUPS) -> None:
        if leave_after_coups < 1:
            raise ValueError("leave_after_coups must be at least 1")
        self.plan = plan or ShiftPlan.parse(DEFAULT_SHIFTS, DEFAULT_ZONE)
        self.leave_after_coups = leave_after_coups

    def load(self, archive: Archive, cur: Any, table: str) -> AccountState:
        cur.execute(archive.sql('SELECT state FROM money_heads WHERE "table" = ?'), (table,))
        row = cur.fetchone()
        return AccountState() if row is None else AccountState.from_json(str(row[0]))

    # -- scan (pure) ----------------------------------------------------------------------------------------
    def scan(self, state: AccountState, records: Sequence[TableRecord]) -> AccountScan:
        out = AccountScan()
        last: _When | None = None
        for r in records:
            # A record whose time cannot be read (a table's bug) counts at the time of the one before it.
            when = _when(r.at) or last or _When.of(_EPOCH)
            last = when
            self._shift(state, r, when, out)
            body = r.body
            if r.kind == RecordKind.SHOE and body.get("event") == "start":
                self._shoe_start(state, body)
            elif r.kind == RecordKind.WAGER:
                self._wager(state, r, when)
            elif r.kind == RecordKind.WAGER_REFUSED:
                seat = _seat(body.get("seat"))
                if seat is not None and seat not in state.playing:
                    state.playing.append(seat)
            elif r.kind == RecordKind.SETTLEMENT:
                self._settlement(state, r, when, out)
            elif r.kind == RecordKind.COMMISSION:
                self._commission(state, r, when, out)
            elif r.kind == RecordKind.COUP and not body.get("set_aside"):
                self._coup(state, r, when, out)
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
    def _shoe_start(state: AccountState, body: Mapping[str, Any]) -> None:
        rules = body.get("rules")
        text = json.dumps(rules, sort_keys=True, separators=(",", ":")) if isinstance(rules, dict) else ""
        decks = _int(body.get("decks"))
        state.decks = decks if decks is not None and 1 <= decks <= 16 else DEFAULT_DECKS
        try:
            unit_moments(text, state.decks)
        except (ValueError, KeyError, TypeError):
            text = ""  # rules this version cannot price: the default's
        state.rules = text
        state.empty = {}  # the book counts a seat's empty locks again from each shoe's start
        state.pending, state.playing, state.decided = [], [], []

    @staticmethod
    def _wager(state: AccountState, r: TableRecord, when: _When) -> None:
        b = r.body
        seat, stake = _seat(b.get("seat")), _int(b.get("stake"))
        if seat is None or stake is None:
            return
        theo, variance = _number(b.get("theo_cents")), _number(b.get("variance"))
        theo_h = None if theo is None else round(theo * 100)
        unit_var = variance if variance is not None and variance >= 0 else None
        if len(state.pending) < MAX_PENDING:
            state.pending.append([b.get("shoe"), b.get("coup"), seat, str(b.get("bet")), stake, theo_h, unit_var])
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
        b = r.body
        seat, stake, net = _seat(b.get("seat")), _int(b.get("stake")), _int(b.get("net"))
        commission = _int(b.get("commission")) or 0
        if seat is None or stake is None or net is None:
            return
        bet = str(b.get("bet"))
        edge, unit_var = _moments(state, bet)
        theo_h: int | None = None
        for i, w in enumerate(state.pending):
            if w[0] == b.get("shoe") and w[1] == b.get("coup") and w[2] == seat and w[3] == bet:
                theo_h = w[5]
                if len(w) > 6 and w[6] is not None:  # the table's exact variance at the betting time
                    unit_var = float(w[6])
                del state.pending[i]
                break
        if theo_h is None:  # not priced by the table: its edge off the top
            theo_h = round(edge * stake * 100)
        bucket = out.buckets.setdefault(when.bucket, _zero_bucket())
        bucket["handle"] += stake
        bucket["win"] -= net
        bucket["theo_h"] += theo_h
        bucket["variance"] += float(stake) * float(stake) * unit_var
        bucket["wagers"] += 1
        row = self._session(state, seat, r, when, out)
        row["wagers"] += 1
        row["wagered"] += stake
        row["net"] += net
        row["commission"] += commission
        row["theo_h"] += theo_h
        row["edge_stake"] += edge * stake
        if seat not in state.decided:
            state.decided.append(seat)
            row["coups"] += 1

    def _commission(self, state: AccountState, r: TableRecord, when: _When, out: AccountScan) -> None:
        b = r.body
        seat, collected, uncollected = _seat(b.get("seat")), _int(b.get("collected")), _int(b.get("uncollected"))
        if seat is None or collected is None or uncollected is None:
            return
        bucket = out.buckets.setdefault(when.bucket, _zero_bucket())
        bucket["collected"] += collected
        bucket["uncollected"] += uncollected
        bucket["win"] += collected
        key = state.open.get(str(seat)) or state.last.get(str(seat))
        if key is not None:
            self._session_of(key, seat, when, out)["collected"] += collected

    def _coup(self, state: AccountState, r: TableRecord, when: _When, out: AccountScan) -> None:
        b = r.body
        declared = bool(b.get("declared"))
        if declared:
            out.buckets.setdefault(when.bucket, _zero_bucket())["coups"] += 1
        locked = declared or (bool(b.get("void")) and bool(b.get("cards")))
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
        state.pending = [w for w in state.pending if w[0] == b.get("shoe") and w[1] == b.get("coup")]
        state.playing, state.decided = [], []

    # -- store (inside the surveillance step's transaction) -----------------------------------------------
    def store(
        self, archive: Archive, cur: Any, table: str, site: str | None, state: AccountState, result: AccountScan
    ) -> list[Alert]:
        sql = archive.sql
        cur.execute(
            sql(
                'INSERT INTO money_heads ("table", state) VALUES (?, ?)'
                ' ON CONFLICT ("table") DO UPDATE SET state = excluded.state'
            ),
            (table, state.to_json()),
        )
        rows = [
            (table, bucket, *(v["variance"] if c == "variance" else int(v[c]) for c in _BUCKET_COLUMNS))
            for bucket, v in sorted(result.buckets.items())
        ]
        if rows:
            cur.executemany(sql(_ADD_BUCKET), rows)
        sessions = [
            (
                table,
                seat,
                start_seq,
                s["start_at"],
                s["last_at"],
                s["end_at"],
                s["end_seq"],
                *(float(s[c]) if c == "edge_stake" else int(s[c]) for c in _SESSION_SUMS),
            )
            for (seat, start_seq), s in sorted(result.sessions.items())
        ]
        if sessions:
            cur.executemany(sql(_ADD_SESSION), sessions)
        alerts: list[Alert] = []
        for shift, seq in result.ended:
            figures = _shift_rows(archive, cur, [shift], table)
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
    conn = archive.connection
    cur = conn.cursor()
    alerts: list[Alert] = []
    try:
        cur.execute(
            archive.sql(
                'SELECT m."table", m.state, h.seq, c.head_seq, c.site FROM money_heads m'
                ' JOIN surveil_heads h ON h."table" = m."table" JOIN chains c ON c."table" = m."table"'
                ' ORDER BY m."table"'
            )
        )
        for table, text, read, head, site in cur.fetchall():
            state = AccountState.from_json(str(text))
            if state.shift is None or int(read) != int(head):
                continue  # records of that shift may still be unread: the watch judges it when it reads them
            start, end = _when(state.shift[0]), _when(state.shift[1])
            if start is None or end is None or now < end.moment + SHIFT_CLOSE_GRACE:
                continue
            for f in _shift_rows(archive, cur, [plan.shift_of(start.moment)], str(table)):
                if f.outside:
                    alerts.append(_hold_alert(str(table), f, int(read), None if site is None else str(site)))
    finally:
        conn.commit()
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


def _figures(table: str | None, shift: Shift, sums: Sequence[Any]) -> ShiftFigures:
    handle, win, collected, uncollected, theo_h, variance, coups, wagers = sums
    d = shift.to_dict()
    return ShiftFigures(
        table=table,
        shift=d["shift"],
        start=d["start"],
        end=d["end"],
        handle=int(handle or 0),
        win=int(win or 0),
        commission_collected=int(collected or 0),
        commission_uncollected=int(uncollected or 0),
        theo_h=int(theo_h or 0),
        variance=float(variance or 0.0),
        coups=int(coups or 0),
        wagers=int(wagers or 0),
    )


def _shift_rows(archive: Archive, cur: Any, shifts: Sequence[Shift], table: str | None) -> list[ShiftFigures]:
    if not shifts:
        return []
    ranges = ", ".join("(?, ?, ?)" for _ in shifts)
    params: list[Any] = []
    for i, s in enumerate(shifts):
        params += [i, *s.buckets()]
    where = ' AND b."table" = ?' if table is not None else ""
    if table is not None:
        params.append(table)
    sums = ", ".join(f"sum(b.{c})" for c in _BUCKET_COLUMNS)
    cur.execute(
        archive.sql(
            f'WITH s(i, a, z) AS (VALUES {ranges}) SELECT s.i, b."table", {sums} FROM s JOIN money_buckets b'
            f' ON b.bucket >= s.a AND b.bucket < s.z{where} GROUP BY s.i, b."table" ORDER BY s.i, b."table"'
        ),
        params,
    )
    return [_figures(str(row[1]), shifts[int(row[0])], row[2:]) for row in cur.fetchall()]


def shift_report(
    archive: Archive, plan: ShiftPlan, start: datetime, end: datetime, table: str | None = None
) -> list[ShiftFigures]:
    """Each table's figures for every shift of ``plan`` overlapping ``[start, end)``, shift by shift, tables in
    name order; a table with no money records in a shift has no line for it."""
    shifts = list(plan.shifts(start, end))
    if "money_buckets" not in archive.tables_present():
        return []
    cur = archive.connection.cursor()
    out: list[ShiftFigures] = []
    for i in range(0, len(shifts), 200):  # a bounded statement however long the range
        out += _shift_rows(archive, cur, shifts[i : i + 200], table)
    archive.connection.commit()
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
    where: list[str] = []
    params: list[Any] = []
    if table is not None:
        where.append('"table" = ?')
        params.append(table)
    if open_only:
        where.append("end_at IS NULL")
    elif since is not None:
        where.append("(end_at IS NULL OR end_at >= ?)")
        params.append(since.astimezone(UTC).strftime(_ISO))
    columns = 'seat_sessions."table", seat, start_at, end_at, last_at, ' + ", ".join(_SESSION_SUMS)
    sql = f"SELECT {columns} FROM seat_sessions" + (" WHERE " + " AND ".join(where) if where else "")
    cur = archive.connection.cursor()
    cur.execute(archive.sql(sql + ' ORDER BY start_at, "table", seat'), params)
    out = []
    for row in cur.fetchall():
        t, seat, start, end, last, coups, wagers, wagered, net, commission, collected, theo_h, edge_stake = row
        wagered = int(wagered)
        out.append(
            SessionFigures(
                table=str(t),
                seat=int(seat),
                start=str(start),
                end=None if end is None else str(end),
                last=str(last),
                coups=int(coups),
                wagers=int(wagers),
                wagered=wagered,
                player_net=int(net),
                commission=int(commission),
                commission_collected=int(collected),
                exact_theo_cents=int(theo_h) / 100,
                edge=0.0 if wagered == 0 else float(edge_stake) / wagered,
                decisions_per_hour=decisions_per_hour,
                hours=_hours(str(start), str(last if end is None else end)),
            )
        )
    archive.connection.commit()
    return out
