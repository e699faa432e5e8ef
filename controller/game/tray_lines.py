"""The chip tray coup by coup, from a journal's records: what ``shoe-controller tray`` prints.

:func:`tray_lines` reads a table's ``coup``, ``settlement``, ``commission``, ``buy_in`` and ``tray_count`` records
(:mod:`controller.game.tray` makes the last) and gives one :class:`TrayLine` per declared coup: its flows, the
tray it must hold after it, and the table's count of it with its variance. Pure: records in, lines out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.game.bodies import BuyInBody, CommissionBody, CoupBody, SettlementBody, TrayCountBody
from controller.game.cash import Tender
from controller.game.kinds import RecordKind
from controller.game.tray import SOLD, Denomination

__all__ = ["TRAY_LINE_KINDS", "TrayLine", "tray_lines"]


@dataclass
class TrayLine:
    """One declared coup's line of ``shoe-controller tray``: what it moved of the tray, and the count held to it.

    ``flow_cents``: the coup's own flows (its settlements, the chips sold at its buy-ins, commission collected
    while it was the last coup); ``expected_cents``: the tray it must hold after it (the table's count's, or the
    last line's plus this one's flows; None before the tray's first count, or without a tray reader);
    ``counted_cents``, ``variance_cents`` and ``denominations``: the table's count of it (None when it had none:
    no tray reader, or reconciled together with a later coup)."""

    shoe: int
    coup: int
    flow_cents: int = 0
    expected_cents: int | None = None
    counted_cents: int | None = None
    variance_cents: int | None = None
    denominations: tuple[Denomination, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "shoe": self.shoe,
            "coup": self.coup,
            "flow_cents": self.flow_cents,
            "expected_cents": self.expected_cents,
            "counted_cents": self.counted_cents,
            "variance_cents": self.variance_cents,
            "denominations": None if self.denominations is None else [d.to_dict() for d in self.denominations],
        }


#: The record kinds :func:`tray_lines` reads.
TRAY_LINE_KINDS = frozenset(
    k.value
    for k in (RecordKind.COUP, RecordKind.SETTLEMENT, RecordKind.COMMISSION, RecordKind.BUY_IN, RecordKind.TRAY_COUNT)
)


def tray_lines(records: Iterable[tuple[str, Mapping[str, Any]]]) -> list[TrayLine]:
    """Every declared coup's :class:`TrayLine`, in the journal's order, from its ``(kind, body)`` records (the
    kinds in :data:`TRAY_LINE_KINDS`; the others are skipped). Flows that came with a coup that was voided (a
    buy-in during it) count with the next coup declared."""
    lines: dict[tuple[int, int], TrayLine] = {}
    pending = 0  # flows not yet in a declared coup's line
    last: TrayLine | None = None
    counts: dict[tuple[int, int], TrayCountBody] = {}
    for kind, body in records:
        if kind == RecordKind.COUP:
            c = CoupBody.read(body)
            if c is not None and c.declared and c.coup is not None and c.shoe is not None:
                last = lines[(c.shoe, c.coup)] = TrayLine(c.shoe, c.coup, flow_cents=pending)
                pending = 0
        elif kind == RecordKind.SETTLEMENT:
            s = SettlementBody.read(body)
            if s is not None and (line := lines.get((s.shoe, s.coup))) is not None:
                line.flow_cents -= s.net
        elif kind == RecordKind.COMMISSION:
            m = CommissionBody.read(body)
            if m is not None:
                if last is not None and last.shoe == m.shoe:
                    last.flow_cents += m.collected
                else:
                    pending += m.collected
        elif kind == RecordKind.BUY_IN:
            b = BuyInBody.read(body)
            if b is not None and Tender(b.tender) in SOLD:
                if (line := lines.get((b.shoe, b.coup))) is not None:
                    line.flow_cents -= b.cents
                else:
                    pending -= b.cents
        elif kind == RecordKind.TRAY_COUNT:
            t = TrayCountBody.read(body)
            if t is not None:
                counts[(t.shoe, t.coup)] = t  # a coup's reconciliation replaces the anchor made while it was due
    out = list(lines.values())
    expected: int | None = None
    for line in out:
        t = counts.get((line.shoe, line.coup))
        if t is not None and not t.anchored:
            line.expected_cents, line.counted_cents, line.variance_cents = (
                t.expected_cents,
                t.counted_cents,
                t.variance_cents,
            )
            line.denominations = tuple(Denomination(d.cents, d.count) for d in t.denominations)
        elif t is not None:  # the anchor, made while this coup was due: its flows come after it
            line.expected_cents = t.counted_cents + line.flow_cents
        elif expected is not None:
            line.expected_cents = expected + line.flow_cents
        expected = line.expected_cents
    return out
