"""Surveillance on the money: the table's money faults as alerts, and their rates per table and shift.

A :class:`MoneyWatch` is a surveillance :class:`~floor.surveillance.Watch`: it reads every table's records
once floor-wide (in the surveillance step's transaction, under its compare-and-set) and

* raises an alert, with the record behind it, for each **past-post** (chips added to or swapped on a locked wager
  before the declare), **pulled bet** (chips taken from one), **mispay** (an underpay, an overpay, a losing wager
  left on the layout), **tray variance** (the chip tray's count after a coup short or over what it must hold, a
  recount confirmed: the table's ``tray_variance`` record) and **foreign chip** (a chip the registry does not
  count: unknown, retired, or reported **stolen**, the most urgent of all, its own kind). The table journals no
  record of its own for a foreign chip: the bet-spot reader's ``spot`` and ``spots_snapshot`` inputs carry every
  chip with its registry status, and a chip is alerted when it comes onto a spot, once while it lies there (the
  watch remembers, per table, the foreign chips each spot holds);
* counts, per table and quarter-hour UTC bucket (:func:`floor.shifts.bucket_of` of the record's ``at``), the
  past-posts, pulled bets, mispays and the cents they were wrong by, the foreign and stolen chips, the wagers
  locked and the coups dealt (``money_faults``): :func:`fault_rates` adds them up per shift of any
  :class:`~floor.shifts.ShiftPlan` (``shoe-floor faults``);
* raises a **money-faults** alert when a table's past-posts or mispays in a shift are far above the floor's:
  at least ``min_count`` of them and a Poisson tail probability below ``p``, given the table's wagers in the
  shift and the floor's rate per wager (the other tables' over the ``baseline_hours`` before the shift's end,
  shrunk towards a prior) -- the method of the dealer errors (floor/surveillance.py), once per table, shift and
  fault (docs/floor.md gives the thresholds and why).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from controller.game.bodies import (
    ChipBody,
    CoupBody,
    InputBody,
    MispayBody,
    PastPostBody,
    PulledBetBody,
    SnapshotSpot,
    TrayVarianceBody,
)
from controller.game.chips import ChipStatus
from controller.game.notation import WAGER_WORDS, money_text
from controller.game.records import InputKind, RecordKind, TableRecord
from controller.game.wagers import MispayKind
from floor.archive import Alert, AlertKind, Archive, Transaction
from floor.archive.money_tables import MONEY_FAULT_COUNTERS, MONEY_WATCH_SCHEMA, MoneyFaults
from floor.shifts import DEFAULT_SHIFTS, DEFAULT_ZONE, Shift, ShiftPlan, bucket_of, bucket_time
from floor.surveillance import poisson_tail

#: The counters of ``money_faults``, per table and bucket.
COUNTERS = MONEY_FAULT_COUNTERS
#: The faults a shift's rate is alerted on (counted against the wagers locked).
RATED = ("past_posts", "mispays")
#: Most spots, and most foreign chips per spot, the watch remembers per table (a reader gone mad stays bounded).
MAX_SPOTS = 256
MAX_CHIPS_PER_SPOT = 64

#: The wagers and the commission box in the pit's words.
SPOT_WORDS: Mapping[str, str] = {**WAGER_WORDS, "commission": "the commission box"}


@dataclass(frozen=True)
class MoneyThresholds:
    """When a table's shift is a ``money_faults`` alert (docs/floor.md says why these)."""

    p: float = 0.001  # Poisson tail probability below which a table's shift is alerted
    min_count: int = 3  # ... and at least this many past-posts (or mispays) in the shift
    prior_past_post_rate: float = 0.002  # past-posts per wager assumed for a floor with little history
    prior_mispay_rate: float = 0.005  # mispays per wager, likewise
    prior_wagers: int = 2000  # ... weighing as much as this many wagers
    baseline_hours: int = 24  # the floor's rate: the other tables' faults and wagers over these hours

    def prior(self, counter: str) -> float:
        return self.prior_past_post_rate if counter == "past_posts" else self.prior_mispay_rate


@dataclass
class MoneyState:
    """What the watch remembers of a table between steps: the foreign chips each spot holds now."""

    foreign: dict[str, list[str]] = field(default_factory=dict)  # "seat:spot" -> uids

    def to_json(self) -> str:
        return json.dumps({"foreign": self.foreign}, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> MoneyState:
        """The stored state; one that cannot be read is started afresh (the next snapshot sets it right)."""
        try:
            data = json.loads(text)
        except ValueError:
            return cls()
        match data:
            case {"foreign": dict() as foreign}:
                return cls({str(k): [str(u) for u in v] for k, v in foreign.items() if isinstance(v, list)})
        return cls()


@dataclass
class MoneyScan:
    """What a step of records means for the money: its alerts and its counts per bucket."""

    alerts: list[Alert] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # bucket -> counter -> count


def _spot(bet: str) -> str:
    return SPOT_WORDS.get(bet, bet)


def _where(b: PastPostBody | MispayBody) -> str:
    return f"shoe {b.shoe}, coup {b.coup}"


def _past_post(r: TableRecord, b: PastPostBody) -> Alert:
    locked, seen = b.locked_cents, b.seen_cents
    what = f"{money_text(seen - locked)} added" if seen > locked else "chips swapped"
    detail = (
        f"Table {r.table} seat {b.seat}: past-post on {_spot(b.bet)}, {what} after the first card"
        f" ({money_text(locked)} locked, {money_text(seen)} seen; {_where(b)})"
    )
    extra = {**r.body, "added_cents": max(0, seen - locked)}
    return Alert(r.table, r.seq, AlertKind.PAST_POST, detail, record=r.to_dict(), extra=extra, key=_key(r))


def _pulled_bet(r: TableRecord, b: PulledBetBody) -> Alert:
    locked, seen = b.locked_cents, b.seen_cents
    detail = (
        f"Table {r.table} seat {b.seat}: pulled bet on {_spot(b.bet)}, {money_text(locked - seen)}"
        f" taken off after the first card ({money_text(locked)} locked, {money_text(seen)} left; {_where(b)})"
    )
    extra = {**r.body, "pulled_cents": max(0, locked - seen)}
    return Alert(r.table, r.seq, AlertKind.PULLED_BET, detail, record=r.to_dict(), extra=extra, key=_key(r))


def mispay_cents(body: MispayBody) -> int:
    """How many cents a mispay was wrong by: the difference between what the spot held and should have held."""
    return abs(body.seen_cents - body.expected_cents)


def _mispay(r: TableRecord, b: MispayBody) -> Alert:
    expected, seen, off = b.expected_cents, b.seen_cents, mispay_cents(b)
    seat, spot = b.seat, _spot(b.bet)
    if b.kind == MispayKind.LOSER_LEFT.value:
        what = f"losing {spot} wager of {money_text(seen)} left on the layout, not taken"
    elif b.kind == MispayKind.OVERPAY.value:
        what = (
            f"{spot} overpaid by {money_text(off)} (the spot held {money_text(seen)},"
            f" it should have held {money_text(expected)})"
        )
    else:
        what = (
            f"{spot} underpaid by {money_text(off)} (the spot held {money_text(seen)},"
            f" it should have held {money_text(expected)})"
        )
    detail = f"Table {r.table} seat {seat}: mispay, {what} ({_where(b)})"
    extra = {**r.body, "off_cents": off}
    return Alert(r.table, r.seq, AlertKind.MISPAY, detail, record=r.to_dict(), extra=extra, key=_key(r))


def _tray_variance(r: TableRecord, b: TrayVarianceBody) -> Alert:
    word = "SHORT" if b.variance_cents < 0 else "over"
    changed = ", ".join(f"{d.count:+d} x {money_text(d.cents)}" for d in b.changed) or "no denomination moved"
    detail = (
        f"Table {r.table}: the chip tray {money_text(abs(b.variance_cents))} {word} after coup {b.coup} of shoe"
        f" {b.shoe} (counted {money_text(b.counted_cents)}, it must hold {money_text(b.expected_cents)}; since the"
        f" last count {changed}): count the tray with a supervisor and review the coup's video"
    )
    return Alert(r.table, r.seq, AlertKind.TRAY_VARIANCE, detail, record=r.to_dict(), extra=dict(r.body), key=_key(r))


def _foreign_chip(r: TableRecord, seat: int, spot: str, chip: ChipBody) -> Alert:
    status, uid = chip.status, chip.uid
    on = f"seat {seat} {_spot(spot)}"
    if status == ChipStatus.STOLEN.value:
        kind = AlertKind.STOLEN_CHIP
        detail = (
            f"Table {r.table} {on}: STOLEN chip {uid} on the layout -- a chip reported stolen is in play:"
            " hold the chip and the player, call surveillance now"
        )
    elif status == ChipStatus.RETIRED.value:
        kind = AlertKind.FOREIGN_CHIP
        detail = (
            f"Table {r.table} {on}: retired chip {uid} on the layout (withdrawn from play): it does not count,"
            " take it out of play and find where it came from"
        )
    else:
        kind = AlertKind.FOREIGN_CHIP
        detail = (
            f"Table {r.table} {on}: unknown chip {uid} on the layout (in no range of the chip registry):"
            " it does not count, check it is not counterfeit"
        )
    extra = {"seat": seat, "bet": spot, "uid": uid, "status": status, "cents": chip.cents}
    return Alert(r.table, r.seq, kind, detail, record=r.to_dict(), extra=extra, key=f"{kind}:{r.table}:{r.seq}:{uid}")


def _key(r: TableRecord) -> str:
    return f"{r.kind}:{r.table}:{r.seq}"


def _foreign_of(chips: Sequence[ChipBody]) -> list[ChipBody]:
    return [c for c in chips if c.status != ChipStatus.IN_PLAY.value]


def _reads(body: Mapping[str, Any]) -> bool:
    """Whether an input is one the watch reads (a reader's spot or snapshot): only those are parsed, by their
    kind alone (the cards, most of a journal, are not)."""
    match body:
        case {"kind": InputKind.SPOT | InputKind.SPOTS_SNAPSHOT}:
            return True
    return False


def scan_money(state: MoneyState, records: Sequence[TableRecord]) -> MoneyScan:
    """Read ``records`` (contiguous, in seq order, following what ``state`` has read); update ``state``. Each
    record the watch reads is read through its kind's class (controller.game.bodies); a record whose body is not
    its kind's (never a real table's) is read as nothing."""
    out = MoneyScan()

    def count(r: TableRecord, counter: str, n: int = 1) -> None:
        try:
            bucket = bucket_of(r.at)
        except ValueError:
            return  # a record whose time cannot be read is not counted (its alert still goes)
        out.counts.setdefault(bucket, dict.fromkeys(COUNTERS, 0))[counter] += n

    def spot_now(r: TableRecord, seat: int, spot: str, chips: Sequence[ChipBody]) -> dict[str, list[str]]:
        """The spot's foreign chips now; an alert and a count for each that was not there before."""
        key = f"{seat}:{spot}"
        before = set(state.foreign.get(key, ()))
        now: list[str] = []
        for chip in _foreign_of(chips)[:MAX_CHIPS_PER_SPOT]:
            now.append(chip.uid)
            if chip.uid not in before:
                out.alerts.append(_foreign_chip(r, seat, spot, chip))
                count(r, "stolen_chips" if chip.status == ChipStatus.STOLEN.value else "foreign_chips")
        return {key: now} if now else {}

    for r in records:
        if r.kind == RecordKind.PAST_POST and (post := PastPostBody.read(r.body)) is not None:
            out.alerts.append(_past_post(r, post))
            count(r, "past_posts")
        elif r.kind == RecordKind.PULLED_BET and (pulled := PulledBetBody.read(r.body)) is not None:
            out.alerts.append(_pulled_bet(r, pulled))
            count(r, "pulled_bets")
        elif r.kind == RecordKind.MISPAY and (mispay := MispayBody.read(r.body)) is not None:
            out.alerts.append(_mispay(r, mispay))
            count(r, "mispays")
            count(r, "mispay_cents", mispay_cents(mispay))
        elif r.kind == RecordKind.TRAY_VARIANCE and (tray := TrayVarianceBody.read(r.body)) is not None:
            out.alerts.append(_tray_variance(r, tray))
        elif r.kind == RecordKind.WAGER:
            count(r, "wagers")
        elif r.kind == RecordKind.COUP and (coup := CoupBody.read(r.body)) is not None and not coup.set_aside:
            count(r, "coups")
        elif r.kind == RecordKind.INPUT and _reads(r.body) and (given := InputBody.read(r.body)) is not None:
            if given.kind == InputKind.SPOT and given.seat is not None and given.spot is not None:
                found = spot_now(r, given.seat, given.spot, given.chips or ())
                state.foreign.pop(f"{given.seat}:{given.spot}", None)  # what the spot holds now replaces it
                if len(state.foreign) < MAX_SPOTS:
                    state.foreign.update(found)
            elif given.kind == InputKind.SPOTS_SNAPSHOT:
                fresh: dict[str, list[str]] = {}
                for s in given.spots or ():
                    if isinstance(s, SnapshotSpot) and len(fresh) < MAX_SPOTS:
                        fresh.update(spot_now(r, s.seat, s.spot, s.chips))
                state.foreign = fresh  # every spot the snapshot does not list is empty
    return out


class MoneyWatch:
    """The money's surveillance (a :class:`~floor.surveillance.Watch`), with the shift plan its rate alert uses."""

    schema: tuple[str, ...] = MONEY_WATCH_SCHEMA

    def __init__(self, plan: ShiftPlan | None = None, thresholds: MoneyThresholds | None = None) -> None:
        self.plan = plan or ShiftPlan.parse(DEFAULT_SHIFTS, DEFAULT_ZONE)
        self.thresholds = thresholds or MoneyThresholds()

    def load(self, tx: Transaction, table: str) -> MoneyState:
        text = tx.money.state(table)
        return MoneyState() if text is None else MoneyState.from_json(text)

    def scan(self, state: MoneyState, records: Sequence[TableRecord]) -> MoneyScan:
        return scan_money(state, records)

    def store(self, tx: Transaction, table: str, site: str | None, state: MoneyState, result: MoneyScan) -> list[Alert]:
        tx.money.save_state(table, state.to_json())
        shifts: dict[str, Shift] = {}
        rated: set[str] = set()
        for bucket, counts in sorted(result.counts.items()):
            tx.money.add_faults(table, bucket, MoneyFaults.of(counts))
            shift = self.plan.shift_of(bucket_time(bucket))
            shifts[shift.name] = shift
            if any(counts[c] for c in RATED):
                rated.add(shift.name)
        alerts = list(result.alerts)
        for name in sorted(rated):
            alerts += self._rate_alerts(tx, table, site, shifts[name])
        return alerts

    def _rate_alerts(self, tx: Transaction, table: str, site: str | None, shift: Shift) -> list[Alert]:
        t = self.thresholds
        first, end = shift.buckets()
        mine = tx.money.faults_of(table, first, end).counts()
        base_start = bucket_of(shift.end - timedelta(hours=t.baseline_hours))
        floor = tx.money.floor_faults(table, base_start, end).counts()
        out = []
        for counter in RATED:
            n = mine[counter]
            if n < t.min_count:
                continue
            rate = (floor[counter] + t.prior(counter) * t.prior_wagers) / (floor["wagers"] + t.prior_wagers)
            expected = max(mine["wagers"], 1) * rate
            p = poisson_tail(n, expected)
            if p >= t.p:
                continue
            words = "past-posts" if counter == "past_posts" else "mispays"
            money = f" (wrong by {money_text(mine['mispay_cents'])} in all)" if counter == "mispays" else ""
            detail = (
                f"Table {table}: {n} {words}{money} in {mine['wagers']} wagers and {mine['coups']} coups this shift"
                f" ({shift.name}); the floor's rate predicts {expected:.2f} (p = {p:.1e})"
            )
            extra: dict[str, Any] = {
                **shift.to_dict(),
                "fault": counter,
                "count": n,
                **{f"shift_{c}": mine[c] for c in COUNTERS},
                "floor_rate_per_wager": rate,
                "expected": expected,
                "p": p,
            }
            key = f"{AlertKind.MONEY_FAULTS}:{table}:{shift.start.isoformat()}:{counter}"
            out.append(Alert(table, None, AlertKind.MONEY_FAULTS, detail, site, None, extra, key))
        return out


@dataclass(frozen=True)
class FaultRate:
    """One table's money faults in one shift, with their rates (a line of ``shoe-floor faults``)."""

    table: str
    shift: Shift
    counts: Mapping[str, int]

    def per_100_coups(self) -> dict[str, float | None]:
        coups = self.counts["coups"]
        return {c: (round(100 * self.counts[c] / coups, 3) if coups else None) for c in _FAULTS}

    def per_1000_wagers(self) -> dict[str, float | None]:
        wagers = self.counts["wagers"]
        return {c: (round(1000 * self.counts[c] / wagers, 3) if wagers else None) for c in _FAULTS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            **self.shift.to_dict(),
            **self.counts,
            "per_100_coups": self.per_100_coups(),
            "per_1000_wagers": self.per_1000_wagers(),
        }


#: The counters a rate is given for (the faults; cents are a sum, wagers and coups what they are counted against).
_FAULTS = ("past_posts", "pulled_bets", "mispays", "foreign_chips", "stolen_chips")


def fault_rates(
    archive: Archive, plan: ShiftPlan, start: datetime, end: datetime, table: str | None = None
) -> list[FaultRate]:
    """Each table's money faults per shift of ``plan``, over the buckets from ``start`` to ``end`` (aware; the
    bucket holding ``start`` to the one before the bucket holding ``end``); by shift, then table. Empty when no
    collector has counted any yet."""
    if "money_faults" not in archive.tables_present():
        return []
    by: dict[tuple[datetime, str], tuple[Shift, dict[str, int]]] = {}
    for row in archive.repository.money_faults(bucket_of(start), bucket_of(end), table):
        shift = plan.shift_of(bucket_time(row.bucket))
        _, sums = by.setdefault((shift.start, row.table), (shift, dict.fromkeys(COUNTERS, 0)))
        for c, v in row.faults.counts().items():
            sums[c] += v
    return [FaultRate(t, shift, sums) for (_, t), (shift, sums) in sorted(by.items())]
