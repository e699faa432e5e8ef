"""The cash log: each player's cash in per gaming day across every table, the multiple transaction log, and the
alerts before and at a currency transaction report.

A :class:`CashWatch` is a surveillance :class:`~floor.surveillance.Watch`: it reads each table's ``buy_in``
records once floor-wide (typed, through :class:`~controller.game.bodies.BuyInBody`) and

* keeps every buy-in (``cash_buy_ins``) with its **gaming day**: the casino's day, from its start time in the
  floor's zone (``--gaming-day-start 06:00`` with ``--zone``; a buy-in at 02:00 counts for the day before), and
  the **player** it counts for: a carded player by the seat's ``player_ref``, across all tables; an uncarded
  one by table and seat;
* adds each **cash** buy-in to its player's gaming day (``cash_days``; chips from another table and markers are
  not cash in) and writes a **multiple transaction log** entry for each cash buy-in over
  ``CashThresholds.mtl_over_cents`` ($3,000);
* raises a ``cash_approaching_ctr`` alert when a player's cash in for the day reaches
  ``approaching_cents`` ($8,000), and a ``ctr_due`` alert when it passes ``ctr_over_cents`` ($10,000: a
  currency transaction report is due), each once per player and gaming day, on the table and record whose
  buy-in crossed it (a buy-in that crosses both raises the report's alone).

Two collectors may read two tables' buy-ins of one player at once: each adds to the player's day in one
statement that returns the day's total (:meth:`~floor.archive.cash_tables.CashTables.add`), so the crossing is
seen by the one whose buy-in crossed it; the alert's key (kind, day, player) makes it once floor-wide.
``shoe-floor cashlog --archive URL --day DATE`` reads the day back (:func:`cash_day`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from controller.game.bodies import BuyInBody
from controller.game.cash import Tender
from controller.game.notation import money_text
from controller.game.records import RecordKind, TableRecord
from floor.archive import Alert, AlertKind, Archive, Transaction
from floor.archive.cash_tables import CASH_SCHEMA, CashBuyIn, CashDay
from floor.shifts import DEFAULT_ZONE, ShiftPlan, parse_time

#: The casino's gaming day starts at this local time by default.
DEFAULT_GAMING_DAY_START = "06:00"


@dataclass(frozen=True)
class CashThresholds:
    """The cash log's thresholds (``shoe-floor serve`` options; docs/floor.md): integer cents."""

    mtl_over_cents: int = 300_000  # a cash buy-in over this is a multiple transaction log entry
    approaching_cents: int = 800_000  # a player's cash in for the day at this is an alert ...
    ctr_over_cents: int = 1_000_000  # ... and over this a currency transaction report is due

    def __post_init__(self) -> None:
        if not 0 < self.approaching_cents <= self.ctr_over_cents:
            raise ValueError(
                f"the cash alert at {money_text(self.approaching_cents)} must be above nothing and at most the"
                f" report's {money_text(self.ctr_over_cents)}"
            )
        if self.mtl_over_cents < 0:
            raise ValueError("the multiple transaction log threshold is not negative")


def gaming_days(start: str = DEFAULT_GAMING_DAY_START, zone: str = DEFAULT_ZONE) -> ShiftPlan:
    """The gaming days as a plan of one shift a day starting at ``start`` in ``zone`` (:class:`ShiftError`)."""
    return ShiftPlan.parse(start, zone)


def gaming_day(plan: ShiftPlan, at: str | datetime) -> str:
    """The gaming day (ISO date, the local date it starts on) holding ``at``."""
    moment = parse_time(at) if isinstance(at, str) else at
    return plan.shift_of(moment).start.astimezone(plan.tz).date().isoformat()


def player_of(table: str, body: BuyInBody) -> str:
    """Whom a buy-in counts for: a carded player by reference, across the tables; an uncarded one by seat."""
    return f"ref:{body.player_ref}" if body.player_ref is not None else f"seat:{table}:{body.seat}"


@dataclass
class CashScan:
    """A step's buy-ins, as the cash log keeps them (with the record each came from)."""

    buy_ins: list[tuple[CashBuyIn, TableRecord]] = field(default_factory=list)


class CashWatch:
    """The cash log's reader of the records (a :class:`~floor.surveillance.Watch`): no state of its own per table
    (the buy-ins and the days are the state)."""

    schema: tuple[str, ...] = CASH_SCHEMA

    def __init__(self, days: ShiftPlan | None = None, thresholds: CashThresholds | None = None) -> None:
        self.days = days or gaming_days()
        self.thresholds = thresholds or CashThresholds()

    def load(self, tx: Transaction, table: str) -> None:
        return None

    def scan(self, state: None, records: Sequence[TableRecord]) -> CashScan:
        out = CashScan()
        for r in records:
            if r.kind != RecordKind.BUY_IN or (b := BuyInBody.read(r.body)) is None:
                continue
            try:
                day = gaming_day(self.days, r.at)
            except ValueError:
                continue  # a record whose time cannot be read (never a real table's)
            cash = b.tender == Tender.CASH.value
            entry = CashBuyIn(
                table=r.table,
                seq=r.seq,
                day=day,
                at=r.at,
                player=player_of(r.table, b),
                player_ref=b.player_ref,
                seat=b.seat,
                shoe=b.shoe,
                coup=b.coup,
                cents=b.cents,
                tender=b.tender,
                mtl=cash and b.cents > self.thresholds.mtl_over_cents,
            )
            out.buy_ins.append((entry, r))
        return out

    def store(self, tx: Transaction, table: str, site: str | None, state: None, result: CashScan) -> list[Alert]:
        alerts: list[Alert] = []
        # one order for every collector (day, player, then the record's): two steps adding to the same days
        # take their rows' locks in the same order and never wait on each other in a circle
        for entry, record in sorted(result.buy_ins, key=lambda x: (x[0].day, x[0].player, x[0].seq)):
            total = tx.cash.add(entry, entry.tender == Tender.CASH.value)
            if total is not None:
                alerts += self._crossed(entry, record, total - entry.cents, total, site)
        return alerts

    def _crossed(self, entry: CashBuyIn, record: TableRecord, before: int, after: int, site: str | None) -> list[Alert]:
        t = self.thresholds
        out = []
        who = f"player {entry.player_ref}" if entry.player_ref is not None else "an uncarded player"
        where = f"table {entry.table} seat {entry.seat}"
        bought = f"{money_text(entry.cents)} cash buy-in at {where}"
        extra: dict[str, Any] = {
            "day": entry.day,
            "player": entry.player,
            "player_ref": entry.player_ref,
            "seat": entry.seat,
            "cents": entry.cents,
            "day_cash_cents": after,
        }
        crossed = before <= t.ctr_over_cents < after
        if before < t.approaching_cents <= after and not crossed:  # one buy-in past both: the report's alert
            detail = (
                f"Cash in: {who} has bought in {money_text(after)} in cash this gaming day ({entry.day}), at or over"
                f" {money_text(t.approaching_cents)}: a currency transaction report is due over"
                f" {money_text(t.ctr_over_cents)} (the {bought})"
            )
            key = f"{AlertKind.CASH_APPROACHING}:{entry.day}:{entry.player}"
            out.append(
                Alert(entry.table, entry.seq, AlertKind.CASH_APPROACHING, detail, site, record.to_dict(), extra, key)
            )
        if crossed:
            detail = (
                f"Currency transaction report due: {who} has bought in {money_text(after)} in cash this gaming day"
                f" ({entry.day}), over {money_text(t.ctr_over_cents)} (the {bought} crossed it)"
            )
            key = f"{AlertKind.CTR_DUE}:{entry.day}:{entry.player}"
            out.append(Alert(entry.table, entry.seq, AlertKind.CTR_DUE, detail, site, record.to_dict(), extra, key))
        return out


def cash_day(archive: Archive, day: str) -> tuple[list[CashBuyIn], list[CashDay]]:
    """The gaming day's multiple transaction log entries and each player's cash in that day (empty when no
    collector has read a buy-in yet)."""
    if "cash_buy_ins" not in archive.tables_present():
        return [], []
    return archive.repository.cash_log(day)


def mtl_line(entry: CashBuyIn) -> dict[str, Any]:
    """One multiple transaction log entry as ``shoe-floor cashlog --json`` prints it (docs/floor.md)."""
    return {
        "line": "mtl",
        "day": entry.day,
        "at": entry.at,
        "table": entry.table,
        "seq": entry.seq,
        "seat": entry.seat,
        "player_ref": entry.player_ref,
        "shoe": entry.shoe,
        "coup": entry.coup,
        "cents": entry.cents,
        "tender": entry.tender,
        "day_cash_cents": entry.day_cash,
    }


def day_line(total: CashDay) -> dict[str, Any]:
    """One player's cash in on the day as ``shoe-floor cashlog --json`` prints it (docs/floor.md)."""
    carded = total.player_ref is not None
    return {
        "line": "day",
        "day": total.day,
        "player_ref": total.player_ref,
        "table": None if carded else total.table,
        "seat": None if carded else total.seat,
        "cash_cents": total.cash,
        "buy_ins": total.buy_ins,
        "tables": total.tables,
        "first_at": total.first_at,
        "last_at": total.last_at,
    }
