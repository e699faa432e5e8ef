"""The count watch: surveillance's reader of the stakes and the live edges, for betting with the count.

A :class:`~floor.surveillance.Watch` (registered by the collector): it follows each table's shoes through the
archive's ``shoe``, ``burn`` and ``coup`` records with the table's own edge engine
(:class:`~controller.game.edges.EdgeTracker`: every offered wager's exact player EV at each coup's betting
time), collects each coup's ``wager`` records (seat, wager, stake) and hands both to the pure detector
(floor/counting.py) at the coup's record. When a seat session's wager reaches the detector's threshold it is a
``betting_with_the_count`` alert naming the table, seat and wager, with the evidence in ``extra``.

Its state per table (``count_heads``: the tracker's shoe, ruleset and cards left, the current coup's wagers,
and the detector's seats in session) is read before a surveillance step and written in the step's own
transaction, under its compare-and-set: each record is read once floor-wide however many collectors race.
A record the watch cannot use (a body missing a field, a ruleset it cannot read) is skipped and counted in
the state (``refused``), never a crash.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.game.bodies import CoupBody, ShoeBody, WagerBody
from controller.game.cards import RANKS
from controller.game.edges import EdgeTracker
from controller.game.notation import money_text, wager_text
from controller.game.records import RecordKind, TableRecord, ruleset_from_body
from controller.game.rules import Ruleset
from floor.archive import Alert, AlertKind, Transaction
from floor.archive.surveil_tables import COUNT_SCHEMA
from floor.counting import DEFAULT_THRESHOLD, CountState, Detector, Finding

log = logging.getLogger("shoe-floor")

#: Most coups whose wagers wait for their coup record (a wager record names its coup; normally one is open).
MAX_PENDING = 4
#: Rulesets read from shoe start records, kept parsed (a floor has a few games).
_RULESETS: dict[str, Ruleset] = {}
_MAX_RULESETS = 64


def _ruleset(body: Mapping[str, Any]) -> Ruleset:
    """The ruleset a shoe's start record holds, parsed once per distinct body (ValueError when unreadable)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    found = _RULESETS.get(text)
    if found is None:
        found = ruleset_from_body(body)
        if len(_RULESETS) >= _MAX_RULESETS:
            _RULESETS.clear()
        _RULESETS[text] = found
    return found


@dataclass
class WatchState:
    """One table as the count watch remembers it between steps (JSON in ``count_heads.state``): the shoe as
    its records tell it (``tracker``; its ruleset as the start record wrote it in ``rules``), the wagers of the
    coups not yet declared, the detector's seats in session, and how many records it could not use."""

    tracker: EdgeTracker = field(default_factory=EdgeTracker)
    rules: dict[str, Any] | None = None
    pending: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # "shoe:coup" -> seat -> bet -> cents
    count: CountState = field(default_factory=CountState)
    refused: int = 0

    def to_json(self) -> str:
        data = {
            "shoe": self.tracker.shoe,
            "rules": self.rules,
            "counts": self.tracker.counts,
            "pending": self.pending,
            "count": self.count.to_json(),
            "refused": self.refused,
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> WatchState:
        data = json.loads(text)
        tracker = EdgeTracker()
        counts = [int(x) for x in data["counts"]]
        if data["shoe"] is not None and len(counts) == len(RANKS):
            tracker.shoe, tracker.counts = int(data["shoe"]), counts
            try:
                tracker.rules = _ruleset(data["rules"]) if data["rules"] else None
            except (ValueError, KeyError, TypeError):
                tracker.rules = None
        return cls(tracker, data["rules"], data["pending"], CountState.from_json(data["count"]), int(data["refused"]))


@dataclass
class Step:
    """What a step of records meant: the state after it, the findings with the coup record of each, and
    whether the state changed (a step of card inputs only leaves it as it was)."""

    state: WatchState
    found: list[tuple[Finding, TableRecord]] = field(default_factory=list)
    changed: bool = False


#: The record kinds the watch reads (any other leaves its state as it was).
_READ = frozenset({RecordKind.SHOE, RecordKind.BURN, RecordKind.WAGER, RecordKind.COUP})


class CountWatch:
    """Betting with the count, as a surveillance watch (see the module's docstring).

    Its state is JSON of some 10-30 KB for a busy table: to spare parsing it at every step, the watch keeps
    the state it stored last per table with the random ``token`` it stored with it, and uses it (once) when
    the archive still holds that token; any other collector's step, or a step rolled back, changes or keeps
    the token so that the state is read from the archive instead."""

    schema: tuple[str, ...] = COUNT_SCHEMA

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, leave_after: int = 3) -> None:
        self.detector = Detector(threshold=threshold, leave_after=leave_after)
        self._cache: dict[str, tuple[str | None, WatchState]] = {}
        self._tokens: dict[str, str | None] = {}  # the token each table's state was loaded with

    def load(self, tx: Transaction, table: str) -> WatchState:
        token = tx.count.token(table)
        self._tokens[table] = token
        cached = self._cache.pop(table, None)
        if cached is not None and cached[0] == token:
            return cached[1]
        if token is None:
            return WatchState()
        text = tx.count.state(table)
        try:
            return WatchState.from_json(text)
        except (ValueError, KeyError, TypeError, AttributeError):
            log.error("table %s: the count watch's stored state is unreadable; it starts again from here", table)
            return WatchState(refused=1)

    def scan(self, state: WatchState, records: Sequence[TableRecord]) -> Step:
        step = Step(state)
        for r in records:
            if r.kind not in _READ:
                continue
            step.changed = True
            try:
                self._read(step, state.tracker, r)
            except (KeyError, ValueError, TypeError, AttributeError):
                state.refused += 1
        return step

    def _read(self, step: Step, tracker: EdgeTracker, r: TableRecord) -> None:
        state, body = step.state, r.body
        if r.kind == RecordKind.SHOE:
            started = ShoeBody.parse(body)  # a body not of its kind (a BodyError) is refused
            if started.event != "start":
                return
            rules = None if started.rules is None else started.rules.model_dump(mode="json")
            ruleset = _ruleset(rules) if rules else None  # a bad ruleset is refused before it is kept
            tracker.feed(r.kind, body)
            tracker.rules = ruleset
            state.rules = rules
            state.pending.clear()
        elif r.kind == RecordKind.BURN:
            tracker.feed(r.kind, body)
        elif r.kind == RecordKind.WAGER:
            wager = WagerBody.parse(body)  # refused as above
            key = f"{wager.shoe}:{wager.coup}"
            if key not in state.pending and len(state.pending) >= MAX_PENDING:
                del state.pending[next(iter(state.pending))]  # the oldest coup's, never settled: dropped
            seats = state.pending.setdefault(key, {})
            seats.setdefault(str(wager.seat), {})[wager.bet] = wager.stake
        elif r.kind == RecordKind.COUP:
            dealt = CoupBody.read(body)  # a body not of its kind is fed to the tracker as it is, not refused
            if dealt is None or dealt.set_aside or dealt.coup is None or dealt.shoe != tracker.shoe:
                tracker.feed(r.kind, body)
                return
            shoe, coup = dealt.shoe, dealt.coup
            stakes = state.pending.pop(f"{shoe}:{coup}", {})
            edges = tracker.edges(coup)
            tracker.feed(r.kind, body)
            if edges is None:
                return
            by_seat = {int(seat): dict(bets) for seat, bets in stakes.items()}
            for finding in self.detector.coup(state.count, shoe, coup, r.seq, edges.ev, by_seat):
                step.found.append((finding, r))

    def store(self, tx: Transaction, table: str, site: str | None, state: WatchState, result: Step) -> list[Alert]:
        token = self._tokens.pop(table, None)
        if result.changed:
            token = uuid.uuid4().hex
            tx.count.save(table, token, result.state.to_json())
        self._cache[table] = (token, result.state)
        return [alert(table, site, f, r) for f, r in result.found]


def alert(table: str, site: str | None, f: Finding, record: TableRecord) -> Alert:
    """The ``betting_with_the_count`` alert for a finding, at the coup record where it was made."""
    words = wager_text(f.bet)
    non = f.played - f.positive
    detail = (
        f"seat {f.seat} bets {words} with the count: {f.positive} coups at positive edge averaging"
        f" {money_text(round(f.pos_mean()))} (highest {money_text(f.pos_max)}), {non} at non-positive edge averaging"
        f" {money_text(round(f.non_mean()))} (highest {money_text(f.non_max)}) since shoe {f.session_shoe} coup"
        f" {f.session_coup}; score {f.score:.3g} (chance at most {f.p_bound:.1e} if the stakes ignored the edge)"
    )
    key = f"{AlertKind.BETTING_WITH_THE_COUNT}:{table}:{f.key}"
    return Alert(table, record.seq, AlertKind.BETTING_WITH_THE_COUNT, detail, site, record.to_dict(), f.extra(), key)
