"""The floor's surveillance: alerts derived from the archive's contiguous records, once floor-wide.

Each table has a surveillance head (``surveil_heads``: the last record surveillance has read, and what it
must remember between reads: the shoe being dealt, its last 19 dealt cards, an undecided card). A collector
that has moved a table's chain head reads the records between the surveillance head and the chain head,
works out what they mean (:func:`scan`, pure), and stores it *in one transaction with a compare-and-set of
the surveillance head* (``UPDATE ... WHERE seq = <the head it read>``). With two collectors sharing the load
only one of them wins the set; the other rolls back and reads on from the new head. Each record is thus read
once floor-wide, whatever collector archived it and however often the table resent it, and each alert is
stored and published once (its ``key`` is unique in the feed as a second guard).

What is read:

* **Repeated shoe.** Every 20 consecutive dealt cards of every shoe (after the burn; an unreadable card
  breaks the run) are a *window*; each window's 64-bit hash is a row of ``shoe_windows`` (about 400 rows
  for an 8-deck shoe), indexed by hash. When a shoe's first window is complete (its 20th dealt card), one
  indexed lookup finds any shoe of any table started in the last ``repeat_days`` that holds the same 20
  cards in the same order: a ``repeated_shoe`` alert naming both shoes. One read can span several shoes (a
  table's backlog after an outage): each is looked up at its own 20th card against the windows dealt before
  it, its own table's earlier shoes included. Rows older than ``repeat_days`` are pruned.
* **Dealer errors.** Per table and hour (the records' own UTC ``at``): coups (declared or voided), misdraws
  (``alarm`` ``misdraw``), early declares (``alarm`` ``early_declare``), voids (voided ``coup`` records),
  unreadable cards (``alarm`` ``unreadable`` and ``unreadable_exposed``), in ``dealer_errors``. A table's
  hour is alerted when its errors are at least ``errors_min`` and their Poisson tail probability, given
  its coups and the floor's rate per coup (the other tables' last 24 hours, shrunk towards a prior), is
  below ``errors_p`` (docs/floor.md says why).
* **Advantage.** Each ``advantage`` / ``advantage_cleared`` record (the table's live edge, see
  controller/game/edges.py) becomes an alert.
* **A supervisor locked out.** An ``approval_refused`` record ``locked_out`` (the third wrong PIN in a row at a
  table, controller/game/approvals.py) becomes a ``supervisor_locked_out`` alert: someone may be trying another's
  badge.

Further readers of the same records (the floor's accounting, the money's surveillance) are :class:`Watch` es
passed to :class:`Surveillance`: each keeps its own state per table, read before a step and written in the
step's own transaction, under the same compare-and-set, so each of them too reads every record once floor-wide.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from controller.game.bodies import (
    AdvantageBody,
    AdvantageClearedBody,
    AlarmBody,
    ApprovalRefusedBody,
    CoupBody,
    InputBody,
    ShoeBody,
)
from controller.game.notation import wager_text
from controller.game.records import InputKind, RecordKind, TableRecord
from floor.archive import Alert, AlertKind, Archive, FeedItem, Transaction
from floor.archive.surveil_tables import DEALER_ERROR_COUNTERS, DealerErrors, Window

#: Dealt cards per window (the issue's "first 20 dealt cards").
WINDOW = 20
#: Most records read per transaction.
STEP = 2000
#: How often (seconds) a collector prunes windows older than repeat_days.
PRUNE_EVERY = 3600.0
#: Alarm names (records' ``alarm`` field) that count as dealer errors, and their counter.
ERROR_ALARMS = {
    "misdraw": "misdraws",
    "early_declare": "early_declares",
    "unreadable": "unreadable",
    "unreadable_exposed": "unreadable",
}
COUNTERS = DEALER_ERROR_COUNTERS
#: The counters that are dealer errors (``coups`` is what they are counted against).
ERROR_COUNTERS = COUNTERS[1:]


@dataclass(frozen=True)
class Thresholds:
    """What surveillance alerts on (``shoe-floor serve`` options; docs/floor.md)."""

    repeat_days: int = 30
    errors_p: float = 0.001  # Poisson tail probability below which a table's hour is alerted
    errors_min: int = 5  # ... and at least this many errors in the hour
    prior_rate: float = 0.02  # errors per coup assumed for a floor with little history
    prior_coups: int = 200  # ... weighing as much as this many coups
    baseline_hours: int = 24  # the floor's rate: the other tables' errors and coups over these hours


def window_hash(cards: Sequence[str]) -> int:
    """The 64-bit (signed, for a BIGINT column) hash of a run of card tokens."""
    digest = hashlib.blake2b(" ".join(cards).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def poisson_tail(k: int, lam: float) -> float:
    """P(X >= k) for X ~ Poisson(lam), summed upward from k (accurate for the small tails alerted on)."""
    if k <= 0:
        return 1.0
    if lam <= 0:
        return 0.0
    term = math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1))
    total, i = 0.0, k
    while term > 1e-300 and i < k + 10_000:
        total += term
        i += 1
        term *= lam / i
        if term < total * 1e-17:
            break
    return min(total, 1.0)


def _epoch(at: str) -> int:
    try:
        return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def _hour(at: str) -> str:
    return at[:13]  # "YYYY-MM-DDTHH" of the record's UTC stamp


@dataclass
class ShoeState:
    """What surveillance remembers of a table between reads (stored as JSON in ``surveil_heads.state``)."""

    shoe_key: int | None = None  # seq of the shoe's start record (unique per table, unlike its number)
    shoe: int | None = None
    started: int = 0  # the shoe's start, epoch seconds (the table's clock)
    dealt: int = 0  # cards dealt in the shoe, after the burn
    run: list[str] = field(default_factory=list)  # the last <= 19 known dealt cards since an unreadable
    checked: bool = False  # the shoe's first window was looked up
    pending: tuple[int, str] | None = None  # a card input whose next record says if it was burned

    def to_json(self) -> str:
        return json.dumps(self.__dict__, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ShoeState:
        data = json.loads(text)
        pending = data.pop("pending", None)
        return cls(**data, pending=None if pending is None else (int(pending[0]), str(pending[1])))


@dataclass
class Scan:
    """What a run of records means (:func:`scan`); stored by :meth:`Surveillance.process`."""

    windows: list[tuple[int, int, int, int, int]] = field(default_factory=list)  # hash, key, shoe, offset, started
    # Each shoe's first-window lookup (hash, shoe_key, shoe, started, 20th card's seq) with how many of
    # ``windows`` precede it: a run of records can span shoes (a backlog after an outage), and a shoe is
    # looked up against every window dealt before its 20th card, its own table's earlier shoe included.
    checks: list[tuple[int, tuple[int, int, int, int, int]]] = field(default_factory=list)
    errors: dict[str, dict[str, int]] = field(default_factory=dict)  # hour -> counter -> count
    alerts: list[Alert] = field(default_factory=list)


def scan(state: ShoeState, records: Sequence[TableRecord]) -> Scan:
    """Read ``records`` (contiguous, in seq order, following what ``state`` has read); update ``state``."""
    out = Scan()

    def count(r: TableRecord, counter: str) -> None:
        hour = out.errors.setdefault(_hour(r.at), dict.fromkeys(COUNTERS, 0))
        hour[counter] += 1

    def deal(seq: int, card: str) -> None:
        state.dealt += 1
        state.run.append(card)
        if len(state.run) < WINDOW or state.shoe_key is None or state.shoe is None:
            return
        h = window_hash(state.run[-WINDOW:])
        out.windows.append((h, state.shoe_key, state.shoe, state.dealt - WINDOW, state.started))
        if not state.checked:
            state.checked = True
            out.checks.append((len(out.windows), (h, state.shoe_key, state.shoe, state.started, seq)))
        state.run = state.run[-(WINDOW - 1) :]

    for r in records:
        if state.pending is not None:
            seq, card = state.pending
            state.pending = None
            burned = r.kind == RecordKind.BURN and r.cause == seq
            if not burned:
                deal(seq, card)
        shoe = ShoeBody.read(r.body) if r.kind == RecordKind.SHOE else None
        given = InputBody.read(r.body) if r.kind == RecordKind.INPUT else None
        if shoe is not None and shoe.event == "start":
            state.shoe_key, state.shoe, state.started = r.seq, shoe.shoe, _epoch(r.at)
            state.dealt, state.run, state.checked = 0, [], False
        elif given is not None and given.kind == InputKind.CARD and given.card is not None:
            state.pending = (r.seq, given.card)
        elif given is not None and given.kind == InputKind.UNREADABLE:
            state.run = []  # a card of unknown face: no window spans it
        elif r.kind == RecordKind.ALARM and (alarm := AlarmBody.read(r.body)) is not None:
            if alarm.alarm in ERROR_ALARMS:
                count(r, ERROR_ALARMS[alarm.alarm])
        elif r.kind == RecordKind.COUP and (coup := CoupBody.read(r.body)) is not None and not coup.set_aside:
            count(r, "coups")
            if coup.void:
                count(r, "voids")
        elif r.kind == RecordKind.ADVANTAGE and (raised := AdvantageBody.read(r.body)) is not None:
            out.alerts.append(_advantage(r, raised))
        elif r.kind == RecordKind.ADVANTAGE_CLEARED and (cleared := AdvantageClearedBody.read(r.body)) is not None:
            out.alerts.append(_advantage(r, cleared))
        elif given is not None and given.kind == InputKind.CLOCK and given.synchronised is False:
            out.alerts.append(_clock(r, given))
        elif (
            r.kind == RecordKind.APPROVAL_REFUSED
            and (refused := ApprovalRefusedBody.read(r.body)) is not None
            and refused.why == "locked_out"
        ):
            out.alerts.append(_locked_out(r, refused))
    return out


def _locked_out(r: TableRecord, b: ApprovalRefusedBody) -> Alert:
    """A supervisor's third wrong PIN in a row at the table: locked out of approving there."""
    detail = (
        f"shoe {b.shoe} coup {b.coup}: {b.staff_id} entered a wrong PIN {b.wrong_pins} times in a row approving a"
        f" {b.action}: locked out of approving at this table until the next staff list (a PIN reset)"
    )
    extra = b.model_dump(mode="json", include={"shoe", "coup", "action", "staff_id", "wrong_pins", "staff_as_of"})
    key = f"{AlertKind.SUPERVISOR_LOCKED_OUT}:{r.table}:{r.seq}"
    return Alert(r.table, r.seq, AlertKind.SUPERVISOR_LOCKED_OUT, detail, record=r.to_dict(), extra=extra, key=key)


def _clock(r: TableRecord, given: InputBody) -> Alert:
    """The table's clock is not synchronised: its journal's times may not match the casino's cameras."""
    error = given.max_error_us
    bound = "" if error is None else f" (the kernel's error bound {error / 1e6:g} s)"
    detail = f"the table's clock is not synchronised{bound}: its journal's times may not match the cameras"
    extra = {"max_error_us": error}
    key = f"{AlertKind.CLOCK_UNSYNCHRONISED}:{r.table}:{r.seq}"
    return Alert(r.table, r.seq, AlertKind.CLOCK_UNSYNCHRONISED, detail, record=r.to_dict(), extra=extra, key=key)


def _advantage(r: TableRecord, b: AdvantageBody) -> Alert:
    """The wager in the casino's words (``Dragon Bonus Banker``, notation's :data:`WAGER_WORDS`); the record
    keeps its name."""
    ev_text = f"{b.ev:+.4%}"
    bet = wager_text(b.bet)
    if not isinstance(b, AdvantageClearedBody):
        detail = f"shoe {b.shoe} coup {b.coup}: {bet} favours the player, EV {ev_text}"
    elif "shoe_ended" in b.model_fields_set:  # said only when the shoe ended (it is never false)
        detail = f"shoe {b.shoe} ended with {bet} still favouring the player (EV {ev_text} at coup {b.coup})"
    elif b.ev >= 0:  # a threshold above 0 less its margin: still the player's
        detail = f"shoe {b.shoe} coup {b.coup}: {bet} flag cleared, its edge fell to EV {ev_text}"
    else:
        detail = f"shoe {b.shoe} coup {b.coup}: {bet} no longer favours the player (EV {ev_text})"
    detail += f", {b.cards_left} cards left"
    extra = {k: r.body[k] for k in ("shoe", "coup", "bet", "ev", "cards_left", "shoe_ended") if k in r.body}
    return Alert(r.table, r.seq, r.kind, detail, record=r.to_dict(), extra=extra, key=f"{r.kind}:{r.table}:{r.seq}")


class Watch(Protocol):
    """A further reader of the records surveillance reads once floor-wide (see the module's docstring).

    ``load`` reads the watch's state for a table through the repository's read step ``tx`` (a
    :class:`~floor.archive.repository.Transaction`); ``scan`` works out what a step of records means from that state,
    without touching the archive (it may update the state it was given); ``store`` writes the result and the new
    state through ``tx``, the step's own transaction (committed by surveillance), and returns the alerts to store
    with the step's own. A step another collector stored first is rolled back whole and read again from the
    state ``load`` then finds."""

    #: ``CREATE ... IF NOT EXISTS`` statements (``?`` placeholders, ``{json_type}``-free), run once at start: the
    #: watch's tables (the repository's DDL for the house's watches, floor/archive/).
    schema: tuple[str, ...]

    def load(self, tx: Transaction, table: str) -> Any: ...

    def scan(self, state: Any, records: Sequence[TableRecord]) -> Any: ...

    def store(self, tx: Transaction, table: str, site: str | None, state: Any, result: Any) -> list[Alert]: ...


class Surveillance:
    """Surveillance on one archive connection (the collector's thread)."""

    def __init__(self, archive: Archive, thresholds: Thresholds | None = None, watches: Sequence[Watch] = ()) -> None:
        self.archive = archive
        self.thresholds = thresholds or Thresholds()
        self.watches = tuple(watches)
        self._pruned_at = -math.inf
        archive.repository.prepare(x for w in self.watches for x in w.schema)

    def process(self, table: str, site: str | None) -> list[FeedItem]:
        """Read ``table``'s records up to its chain head; the alerts this collector stored (to publish)."""
        items: list[FeedItem] = []
        head = self.archive.head(table).seq
        while True:
            seq, state = self._state(table)
            if seq >= head:
                break
            records = self.archive.records_between(table, seq, min(head, seq + STEP))
            if not records:
                break
            result = scan(state, records)
            with self.archive.repository.transaction() as tx:
                watched = [(w, w.load(tx, table)) for w in self.watches]
            further = [(w, st, w.scan(st, records)) for w, st in watched]
            stored = self._store(table, site, seq, records[-1].seq, state, result, further)
            if stored is not None:
                items += stored
        self._prune()
        return items

    def _state(self, table: str) -> tuple[int, ShoeState]:
        with self.archive.repository.transaction() as tx:
            head = tx.surveillance.head(table)
            if head is None:
                tx.surveillance.start(table, ShoeState().to_json())
                return 0, ShoeState()
        return head.seq, ShoeState.from_json(head.state)

    def _store(
        self,
        table: str,
        site: str | None,
        seq: int,
        new_seq: int,
        state: ShoeState,
        result: Scan,
        further: Sequence[tuple[Watch, Any, Any]] = (),
    ) -> list[FeedItem] | None:
        """Store one step in one transaction, if no other collector has stored it first (None then)."""
        with self.archive.repository.transaction() as tx:
            if not tx.surveillance.move_head(table, seq, new_seq, state.to_json()):
                tx.abandon()
                return None
            alerts = [self._with_site(x, site) for x in result.alerts]
            done = 0
            for upto, check in [*result.checks, (len(result.windows), None)]:
                if upto > done:
                    tx.surveillance.add_windows(table, [Window(*w) for w in result.windows[done:upto]])
                    done = upto
                if check is not None:
                    alerts += self._repeated(tx, table, site, check)
            for hour, counts in sorted(result.errors.items()):
                tx.surveillance.add_errors(table, hour, DealerErrors.of(counts))
                alert = self._dealer_errors(tx, table, site, hour)
                if alert is not None:
                    alerts.append(alert)
            for watch, watch_state, watch_result in further:
                alerts += [self._with_site(x, site) for x in watch.store(tx, table, site, watch_state, watch_result)]
            return tx.insert_alerts(alerts)

    @staticmethod
    def _with_site(alert: Alert, site: str | None) -> Alert:
        return Alert(alert.table, alert.seq, alert.kind, alert.detail, site, alert.record, alert.extra, alert.key)

    def _repeated(
        self, tx: Transaction, table: str, site: str | None, check: tuple[int, int, int, int, int]
    ) -> list[Alert]:
        h, key, shoe, started, seq = check
        since = started - self.thresholds.repeat_days * 86400
        matches = tx.surveillance.find_window(h, since, table, key)
        if not matches:
            return []
        first = matches[0]
        other_table, other_shoe, other_key, offset = first.table, first.shoe, first.shoe_key, first.offset
        detail = (
            f"shoe {shoe}'s first {WINDOW} dealt cards are cards {offset + 1}-{offset + WINDOW} of table"
            f" {other_table}'s shoe {other_shoe}, in the same order"
        )
        if len(matches) > 1:
            detail += f" (and {len(matches) - 1} more shoe(s))"
        extra = {
            "shoe": shoe,
            "other_table": str(other_table),
            "other_shoe": int(other_shoe),
            "other_offset": int(offset),
            "other_shoe_seq": int(other_key),
            "shoe_seq": key,
            "matches": [
                {"table": m.table, "shoe": m.shoe, "offset": m.offset, "shoe_seq": m.shoe_key} for m in matches
            ],
        }
        return [
            Alert(
                table,
                seq,
                AlertKind.REPEATED_SHOE,
                detail,
                site,
                tx.record(table, seq),
                extra,
                key=f"{AlertKind.REPEATED_SHOE}:{table}:{key}",
            )
        ]

    def _dealer_errors(self, tx: Transaction, table: str, site: str | None, hour: str) -> Alert | None:
        t = self.thresholds
        mine = tx.surveillance.errors_of(table, hour)
        coups, errors = mine.coups, mine.errors
        if errors < t.errors_min:
            return None
        start = _hour_back(hour, t.baseline_hours - 1)
        others = tx.surveillance.floor_errors(start, hour, but=table)
        floor_coups, floor_errors = others.coups, others.errors
        rate = (floor_errors + t.prior_rate * t.prior_coups) / (floor_coups + t.prior_coups)
        expected = max(coups, 1) * rate
        p = poisson_tail(errors, expected)
        if p >= t.errors_p:
            return None
        counts = mine.counts()
        detail = (
            f"{errors} dealer errors in {coups} coups in hour {hour}:00Z ({counts['misdraws']} misdraws,"
            f" {counts['early_declares']} early declares, {counts['voids']} voids, {counts['unreadable']} unreadable);"
            f" the floor's rate predicts {expected:.2f} (p = {p:.1e})"
        )
        extra: dict[str, Any] = {
            "hour": hour,
            **counts,
            "errors": errors,
            "floor_rate": rate,
            "expected": expected,
            "p": p,
        }
        return Alert(table, None, AlertKind.DEALER_ERRORS, detail, site, None, extra, f"dealer_errors:{table}:{hour}")

    def _prune(self) -> None:
        now = time.monotonic()
        if now - self._pruned_at < PRUNE_EVERY:
            return
        self._pruned_at = now
        cutoff = int(time.time()) - self.thresholds.repeat_days * 86400
        self.prune(cutoff)

    def prune(self, before: int) -> int:
        """Drop the windows of shoes started before ``before`` (epoch seconds); how many rows went."""
        return self.archive.repository.prune_windows(before)


def _hour_back(hour: str, hours: int) -> str:
    try:
        when = datetime.strptime(hour, "%Y-%m-%dT%H").replace(tzinfo=UTC)
    except ValueError:
        return hour
    return (when - timedelta(hours=hours)).strftime("%Y-%m-%dT%H")


def stats_of(archive: Archive, table: str | None = None) -> list[dict[str, Any]]:
    """The dealer-error counts per table and hour, oldest first (for ``shoe-floor alerts``' neighbours)."""
    return [{"table": h.table, "hour": h.hour, **h.counts.counts()} for h in archive.repository.dealer_errors(table)]
