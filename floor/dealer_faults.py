"""The faults per dealer: ``shoe-floor faults --by-dealer``, each table's dealers' coups and faults per shift.

Every record is attributed to the dealer on duty when it was written by the one rule of the pure core
(:func:`controller.game.staff.dealers_by_record`: journal order, from each table's ``dealer_in`` and
``dealer_out`` records; docs/architecture.md says why the bodies carry no ``dealer`` field). Counted per shift of
the plan, table and dealer (``null``: no one signed in): coups (declared or voided), misdraws (``alarm``
``misdraw``), early declares, voids, past-posts, pulled bets, mispays (and their cents) and commission boxes
closed uncollected. The records are read from each table's first (a duty that began before ``--from`` is its
dealer's); only those from ``--from`` to ``--to`` are counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from controller.game.bodies import AlarmBody, CommissionBody, CoupBody, MispayBody
from controller.game.kinds import RecordKind
from controller.game.records import TableRecord
from controller.game.staff import dealers_by_record
from floor.shifts import Shift, ShiftError, ShiftPlan, parse_time

__all__ = ["DEALER_COUNTERS", "DEALER_KINDS", "DealerFaults", "dealer_faults"]

#: The record kinds read: the duties, and what is counted.
DEALER_KINDS = (
    RecordKind.DEALER_IN.value,
    RecordKind.DEALER_OUT.value,
    RecordKind.COUP.value,
    RecordKind.ALARM.value,
    RecordKind.PAST_POST.value,
    RecordKind.PULLED_BET.value,
    RecordKind.MISPAY.value,
    RecordKind.COMMISSION.value,
)
#: What is counted, in the order printed.
DEALER_COUNTERS = (
    "coups",
    "misdraws",
    "early_declares",
    "voids",
    "past_posts",
    "pulled_bets",
    "mispays",
    "mispay_cents",
    "boxes_uncollected",
)

_ALARM_COUNTERS = {"misdraw": "misdraws", "early_declare": "early_declares"}


@dataclass(frozen=True)
class DealerFaults:
    """One dealer's counts at one table in one shift (``dealer`` None: no one on duty)."""

    table: str
    shift: Shift
    dealer: str | None
    counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        coups = self.counts["coups"]
        faults = sum(self.counts[c] for c in ("misdraws", "past_posts", "mispays"))
        rate = round(100 * faults / coups, 2) if coups else None
        return {"table": self.table, **self.shift.to_dict(), "dealer": self.dealer, **self.counts,
                "faults_per_100_coups": rate}  # fmt: skip


def _counted(r: TableRecord) -> Iterator[tuple[str, int]]:
    """What one record counts for (nothing for a body that is not its kind's)."""
    if r.kind == RecordKind.COUP:
        coup = CoupBody.read(r.body)
        if coup is not None and (coup.declared or coup.void):
            yield "coups", 1
            if coup.void:
                yield "voids", 1
    elif r.kind == RecordKind.ALARM:
        alarm = AlarmBody.read(r.body)
        if alarm is not None and alarm.alarm in _ALARM_COUNTERS:
            yield _ALARM_COUNTERS[alarm.alarm], 1
    elif r.kind == RecordKind.PAST_POST:
        yield "past_posts", 1
    elif r.kind == RecordKind.PULLED_BET:
        yield "pulled_bets", 1
    elif r.kind == RecordKind.MISPAY:
        mispay = MispayBody.read(r.body)
        if mispay is not None:
            yield "mispays", 1
            yield "mispay_cents", abs(mispay.expected_cents - mispay.seen_cents)
    elif r.kind == RecordKind.COMMISSION:
        box = CommissionBody.read(r.body)
        if box is not None and box.uncollected > 0:
            yield "boxes_uncollected", 1


def _at(r: TableRecord) -> datetime | None:
    try:
        return parse_time(r.at)
    except ShiftError:
        return None


def dealer_faults(
    records: Iterable[TableRecord], plan: ShiftPlan, start: datetime, end: datetime, table: str | None = None
) -> list[DealerFaults]:
    """Per shift, table and dealer, the counts of the records from ``start`` (included) to ``end`` (excluded);
    ``records`` are the archive's of :data:`DEALER_KINDS`, table by table in seq order. By shift, table, dealer
    (no one last)."""
    by: dict[tuple[datetime, str, str | None], tuple[Shift, dict[str, int]]] = {}
    for name, group in groupby(records, key=lambda r: r.table):
        if table is not None and name != table:
            continue
        kept = list(group)
        duty = dict(dealers_by_record((r.seq, r.kind, r.body) for r in kept))
        for r in kept:
            moment = _at(r)
            if moment is None or not start <= moment < end:
                continue
            counted = list(_counted(r))
            if not counted:
                continue
            shift = plan.shift_of(moment)
            dealer = duty.get(r.seq)
            _, sums = by.setdefault((shift.start, name, dealer), (shift, dict.fromkeys(DEALER_COUNTERS, 0)))
            for counter, n in counted:
                sums[counter] += n
    order = sorted(by, key=lambda k: (k[0], k[1], k[2] is None, k[2] or ""))
    return [DealerFaults(t, by[(s, t, d)][0], d, by[(s, t, d)][1]) for s, t, d in order]
