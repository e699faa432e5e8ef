"""The live exact edge: every offered wager's player expectation at each coup's betting time, from records.

A coup's **betting time** is the moment before its first card: the cards left are the shoe less the burn
and every card of the coups before it (declared or voided, their misdrawn cards included). The exact
expected value of each wager the table offers is then :func:`controller.game.odds.exact_odds` of that
composition under the table's ruleset.

Everything here reads the table's *records* (journal kind, body), never the table's state, so the same
numbers come from the live table and from a journal or the floor's archive alone:

* :class:`EdgeTracker` follows one table's shoes through its ``shoe``, ``burn`` and ``coup`` records: the
  ruleset (from the shoe's start record, :func:`~controller.game.records.ruleset_from_body`) and the cards
  left by rank. :meth:`EdgeTracker.edges` prices them.
* :func:`shoe_edges` runs a tracker over a journal's records and yields one :class:`CoupEdges` per coup
  (``shoe-controller edges``, and the floor's edge chart).
* :class:`EdgeWatch` is what the table loop holds: it feeds the same tracker the records the loop journals,
  and at a betting time (the loop says when) prices the shoe and returns the ``advantage`` and
  ``advantage_cleared`` records due (:class:`AdvantageFlags`: a wager is flagged at the threshold, cleared only a
  margin below it, and raised at most once per shoe unless its edge grows by a step).

A card the shoe could not read is not taken out of the composition: its rank is unknown, and by
exchangeability the cards after an unseen card are dealt as if it were still in the shoe, so the
expectations stay exact (``cards_left`` then counts it as left). Pure: no I/O, no clock, no logging.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from controller.game.cards import RANKS, Card
from controller.game.composition import Composition
from controller.game.flag_limits import DEFAULT_MARGIN, DEFAULT_STEP, DEFAULT_THRESHOLD
from controller.game.odds import exact_odds
from controller.game.records import RecordKind, advantage_body, ruleset_from_body
from controller.game.rules import Bet, Ruleset

_RANK_INDEX = {rank: i for i, rank in enumerate(RANKS)}


@dataclass(frozen=True, slots=True)
class CoupEdges:
    """Every offered wager's player EV per unit staked (keyed by its Bet name) at one coup's betting time."""

    shoe: int
    coup: int
    cards_left: int
    ev: dict[str, float]
    #: Each wager's variance of the net win per unit staked (the same composition; not in ``to_dict``).
    variance: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``shoe``, ``coup``, ``cards_left``, then one field per wager (the ``edges --json`` line)."""
        return {"shoe": self.shoe, "coup": self.coup, "cards_left": self.cards_left, **self.ev}


def offered_bets(rules: Ruleset) -> tuple[Bet, ...]:
    """The wagers the table offers, in :class:`~controller.game.rules.Bet` order."""
    return tuple(b for b in Bet if rules.offers(b))


def price(comp: Composition, rules: Ruleset) -> dict[str, float]:
    """Each offered wager's exact player EV for the next coup dealt from ``comp``."""
    report = exact_odds(comp, rules)
    return {bet.value: report.bets[bet].ev for bet in offered_bets(rules)}


class EdgeTracker:
    """One table's current shoe as its records tell it: its number, ruleset and the cards left by rank.

    The table's defaults (``default_rules``, ``default_decks``; the table's configuration) stand in for what
    the records do not say: the ruleset of a shoe whose start record carries none (a journal written before
    record version 2), and the start of a table's very first shoe when it was dealt without NEW SHOE (a
    fresh table is at shoe 1 already). Without them such a shoe is not priced."""

    def __init__(self, default_rules: Ruleset | None = None, default_decks: int | None = None) -> None:
        self.default_rules = default_rules
        self.default_decks = default_decks
        self.shoe: int | None = None
        self.rules: Ruleset | None = None
        self.counts: list[int] = []

    def feed(self, kind: str, body: Mapping[str, Any]) -> None:
        """Take one record (in journal order); kinds other than shoe, burn and coup change nothing."""
        if kind == RecordKind.SHOE and body.get("event") == "start":
            rules = body.get("rules")
            self._start(int(body["shoe"]), int(body["decks"]), ruleset_from_body(rules) if rules else None)
            return
        if self.shoe is None and self.default_decks is not None and kind in (RecordKind.BURN, RecordKind.COUP):
            self._start(int(body.get("shoe") or 1), self.default_decks, None)  # the first shoe, never started
        if self.shoe is None:
            return
        if kind == RecordKind.BURN:
            self._out(body.get("card"))
        elif kind == RecordKind.COUP and body.get("shoe") == self.shoe:
            for key in ("player", "banker", "cards", "dummy_hand"):
                for token in body.get(key) or ():
                    self._out(token)

    def _start(self, shoe: int, decks: int, rules: Ruleset | None) -> None:
        self.shoe = shoe
        self.rules = rules or self.default_rules
        self.counts = [4 * decks] * len(RANKS)

    def _out(self, token: object) -> None:
        if isinstance(token, str):
            i = _RANK_INDEX[Card.parse(token).rank]
            self.counts[i] = max(0, self.counts[i] - 1)  # a foreign card cannot make a count negative

    def composition(self) -> Composition | None:
        return None if self.shoe is None else Composition(tuple(self.counts))

    def edges(self, coup: int) -> CoupEdges | None:
        """The offered wagers' EVs for ``coup`` of the current shoe, dealt from the cards left now (None when
        no shoe has started or its ruleset is unknown)."""
        comp = self.composition()
        if comp is None or self.rules is None or self.shoe is None:
            return None
        report = exact_odds(comp, self.rules)
        bets = offered_bets(self.rules)
        ev = {bet.value: report.bets[bet].ev for bet in bets}
        return CoupEdges(self.shoe, coup, comp.total, ev, {bet.value: report.bets[bet].variance for bet in bets})


def shoe_edges(
    records: Iterable[tuple[str, Mapping[str, Any]]],
    default_rules: Ruleset | None = None,
    default_decks: int | None = None,
) -> Iterator[CoupEdges]:
    """One :class:`CoupEdges` per coup (declared or voided) in ``records`` ((kind, body) pairs in journal order,
    any number of shoes): each offered wager's EV at the coup's betting time, as the table priced it. The
    defaults are :class:`EdgeTracker`'s (none: shoes the records do not fully describe are left out)."""
    tracker = EdgeTracker(default_rules, default_decks)
    for kind, body in records:
        if kind == RecordKind.COUP and tracker.shoe is None and body.get("coup") is not None:
            tracker.feed(kind, {"shoe": body.get("shoe")})  # the implicit first shoe starts before its coup
        if kind == RecordKind.COUP and body.get("coup") is not None and body.get("shoe") == tracker.shoe:
            found = tracker.edges(int(body["coup"]))
            if found is not None:
                yield found
        tracker.feed(kind, body)


#: The defaults of the flags (``[surveillance]``; docs/configuration.md gives the figures behind them,
#: benchmarks/bench_advantage_flags.py measures them): a wager is flagged at +1 % player EV, cleared only when it
#: no longer favours the player (1 % below that: EV under 0), and raised again in the same shoe (its flag up or
#: not) only when it has grown 10 % of the stake past the edge it was last raised at: DEFAULT_THRESHOLD,
#: DEFAULT_MARGIN and DEFAULT_STEP, written in controller.game.flag_limits (the configuration reads them there,
#: without this module's odds engine).


@dataclass
class AdvantageFlags:
    """Which wagers stand flagged, with hysteresis so that an edge hovering at the threshold does not flood the
    floor: an ``advantage`` record when a wager's EV reaches the threshold, an ``advantage_cleared`` record only
    when it falls ``margin`` below it (or its shoe ends with the flag up), and at most one raise of a wager per
    shoe unless its EV has grown ``step`` past the EV it was last raised at in that shoe (then an ``advantage``
    record again, the flag up or not: the pit hears that the edge grew)."""

    threshold: float = DEFAULT_THRESHOLD
    #: Wager name -> the figures of the betting time that flagged it (then of the latest one).
    flagged: dict[str, CoupEdges] = field(default_factory=dict)
    #: Wager name -> its own threshold, in place of ``threshold`` (a floor that wants only big side-bet edges).
    per_bet: Mapping[str, float] = field(default_factory=dict)
    #: A flag clears only below its threshold less this (>= 0).
    margin: float = DEFAULT_MARGIN
    #: A wager raised once in a shoe is raised again only at an EV this much above the last raise (>= 0).
    step: float = DEFAULT_STEP
    #: Wager name -> (shoe, EV) of its last raise.
    raised: dict[str, tuple[int, float]] = field(default_factory=dict)

    def threshold_for(self, bet: str) -> float:
        return self.per_bet.get(bet, self.threshold)

    def _may_raise(self, bet: str, shoe: int, ev: float) -> bool:
        """Whether ``bet`` at ``ev`` may be raised in ``shoe``: its first raise in the shoe, or ``step`` past its
        last (while the flag is up only with a step above 0: step 0 raises again after a clear, never while up)."""
        last = self.raised.get(bet)
        if last is None or last[0] != shoe:
            return True
        return ev >= last[1] + self.step and (self.step > 0 or bet not in self.flagged)

    def update(self, edges: CoupEdges) -> list[tuple[RecordKind, dict[str, Any]]]:
        out = [] if all(e.shoe == edges.shoe for e in self.flagged.values()) else self.shoe_ended()
        for bet, ev in edges.ev.items():
            threshold = self.threshold_for(bet)
            if bet in self.flagged and ev < threshold - self.margin:
                body = advantage_body(edges.shoe, edges.coup, bet, ev, edges.cards_left)
                out.append((RecordKind.ADVANTAGE_CLEARED, body))
                del self.flagged[bet]
            elif bet in self.flagged and not self._may_raise(bet, edges.shoe, ev):
                self.flagged[bet] = edges  # still up: the latest figures, for its clear at the shoe's end
            elif ev >= threshold and self._may_raise(bet, edges.shoe, ev):  # up, or up again a step higher
                out.append((RecordKind.ADVANTAGE, advantage_body(edges.shoe, edges.coup, bet, ev, edges.cards_left)))
                self.flagged[bet] = edges
                self.raised[bet] = (edges.shoe, ev)
        return out

    def shoe_ended(self) -> list[tuple[RecordKind, dict[str, Any]]]:
        """Clear every flag (its shoe ended): the figures are those of the shoe's last betting time."""
        out = [
            (
                RecordKind.ADVANTAGE_CLEARED,
                advantage_body(e.shoe, e.coup, bet, e.ev[bet], e.cards_left, shoe_ended=True),
            )
            for bet, e in self.flagged.items()
        ]
        self.flagged.clear()
        return out

    def feed(self, kind: str, body: Mapping[str, Any]) -> None:
        """Take a journal record back (a restart): the flags, and the shoe's raises, as the journal left them."""
        if kind == RecordKind.ADVANTAGE:
            ev = {body["bet"]: float(body["ev"])}
            self.flagged[str(body["bet"])] = CoupEdges(
                int(body["shoe"]), int(body["coup"]), int(body["cards_left"]), ev
            )
            self.raised[str(body["bet"])] = (int(body["shoe"]), float(body["ev"]))
        elif kind == RecordKind.ADVANTAGE_CLEARED:
            self.flagged.pop(str(body["bet"]), None)


class EdgeWatch:
    """The table loop's surveillance of the edge: fed every record the loop journals (or replays), asked to
    price the shoe at each betting time. Returns the records to journal; it never journals itself."""

    def __init__(
        self,
        threshold: float,
        default_rules: Ruleset | None = None,
        default_decks: int | None = None,
        per_bet: Mapping[str, float] | None = None,
        margin: float = DEFAULT_MARGIN,
        step: float = DEFAULT_STEP,
    ) -> None:
        self.tracker = EdgeTracker(default_rules, default_decks)
        self.flags = AdvantageFlags(threshold, per_bet=dict(per_bet or {}), margin=margin, step=step)
        self.priced: tuple[int, int] | None = None  # (shoe, coup) last priced
        #: The figures of the last betting time priced (the benchmark and the tests read them).
        self.last: CoupEdges | None = None

    @property
    def betting_evs(self) -> Mapping[str, float]:
        """Each offered wager's player EV per unit (by Bet name) at the latest betting time priced (empty before
        the first): what the ``wager`` records of the coup then locked carry
        (:func:`~controller.game.records.derived_records`)."""
        return {} if self.last is None else MappingProxyType(self.last.ev)

    @property
    def betting_variances(self) -> Mapping[str, float]:
        """Each offered wager's variance of the net win per unit (by Bet name) at the latest betting time priced:
        what the ``wager`` records of the coup then locked carry as ``variance``."""
        return {} if self.last is None else MappingProxyType(self.last.variance)

    def record(self, kind: str, body: Mapping[str, Any]) -> list[tuple[RecordKind, dict[str, Any]]]:
        """Take one record the loop journals; returns the records due because of it (a shoe ended with flags
        up: its clears, to be journaled right after it)."""
        out: list[tuple[RecordKind, dict[str, Any]]] = []
        if kind == RecordKind.SHOE and self.flags.flagged:
            out = self.flags.shoe_ended()
        self.tracker.feed(kind, body)
        return out

    def replayed(self, kind: str, body: Mapping[str, Any]) -> None:
        """Take one record back from the journal at a restart (flags and cards left as they were)."""
        self.tracker.feed(kind, body)
        self.flags.feed(kind, body)

    def betting_time(self, shoe: int, coup: int) -> list[tuple[RecordKind, dict[str, Any]]]:
        """Coup ``coup`` of shoe ``shoe`` is about to be dealt: price it (once) and return the advantage
        records due. Nothing when it was priced already or the records do not tell this shoe."""
        if self.priced == (shoe, coup) or self.tracker.shoe != shoe:
            return []
        self.priced = (shoe, coup)
        edges = self.tracker.edges(coup)
        if edges is None:
            return []
        self.last = edges
        return self.flags.update(edges)
