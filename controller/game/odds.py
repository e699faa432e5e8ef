"""Exact odds of the next coup from the cards left in the shoe, for every wager under a ruleset.

Two engines give the same answer:

* :func:`exact_odds`, the fast one (well under a millisecond per shoe). By exchangeability, the chance
  that the next six cards out of the shoe show a given sequence of baccarat *values* depends only on the
  multiset of those values: ``prod_v falling(c_v, m_v) / falling(N, 6)``, where ``c_v`` cards of value
  ``v`` are left and the sequence holds ``m_v`` of them. A coup uses four to six cards, and its outcome is
  fixed by the first four to six of the six, so summing over the 10**6 ordered value sequences gives
  the exact outcome distribution. Once per process, all 10**6 sequences are dealt through the
  :data:`~controller.game.tableau.TABLEAU` (vectorised with numpy, from lookup arrays built by calling
  the tableau's own methods) and the orderings of each of the 5,005 value multisets are counted per
  outcome. Per ruleset the outcome counts are folded with the pay table into one small matrix (cached).
  A query is then: weights of the 5,005 multisets (fancy indexing and a product), one matrix-vector
  product. Pair bets come from the rank counts: P1/P2 (and B1/B2) are two distinct cards of the shoe.
* :func:`enumerate_odds`, the reference: a plain card-by-card enumeration of every coup by value counts
  in exact integer arithmetic, independent of the six-card trick. Tests hold the two engines together
  and :mod:`benchmarks.bench_odds` times both.

Shoes with fewer than six cards cannot use the six-card trick. With fewer than four no coup can be
dealt: the report has ``complete=False``, all probabilities and expectations 0, and a ``note``. With four
or five cards the coup is enumerated card by card over the ranks (so pairs are exact too). The
probabilities are *not* conditioned on the coup being completed: with probability ``runs_out`` the shoe
runs out while a card is still due, that coup is void and every wager on it is returned (it adds 0 to
each expectation), so banker + player + tie = 1 - ``runs_out``. ``complete`` is ``False`` exactly when
``runs_out > 0``, and ``note`` says so.

Pricing (per unit staked; ``ev`` is the expected net win, ``house_edge = -ev``): a winning Banker wager
pays ``banker_pays`` less ``commission_rate`` of the win; in EZ a Banker win with a three-card 7 pushes;
in Super 6 a Banker win with 6 pays ``banker_six_pays`` (less commission, if the ruleset had any).
Banker and Player push on a tie. Tie pays ``tie_pays``. A pair wager wins when that hand's first two
cards share a rank. Dragon Bonus on a side: that side wins with a natural pays ``natural_win``; a tie of
two naturals pushes (if ``natural_tie_pushes``); a non-natural win by ``m`` points pays ``ladder[m]`` when
the ladder has ``m``; anything else loses. Dragon 7: the Banker wins with a three-card 7. Panda 8: the
Player wins with a three-card 8.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from controller.game.cards import RANKS
from controller.game.composition import Composition
from controller.game.coup import Winner
from controller.game.payouts import PAIR_BETS, net_per_unit
from controller.game.rules import Bet, Ruleset
from controller.game.tableau import TABLEAU

#: Cards a coup can use at most; the six-card trick needs at least this many in the shoe.
MAX_COUP_CARDS = 6
#: Cards a coup needs at least.
MIN_COUP_CARDS = 4

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
AnyIntArray = npt.NDArray[np.integer[Any]]


# -- the result ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Probabilities:
    """Chance that the next coup is won by the Banker, by the Player, or tied."""

    banker: float
    player: float
    tie: float

    def of(self, winner: Winner) -> float:
        return {Winner.BANKER: self.banker, Winner.PLAYER: self.player, Winner.TIE: self.tie}[winner]


@dataclass(frozen=True, slots=True)
class BetOdds:
    """Expected net win per unit staked on one wager, the house edge (its negation), and the variance of the
    net win per unit staked (``stake**2`` x it is a wager's variance: the floor's 95 % interval of a shift)."""

    ev: float
    house_edge: float
    variance: float = 0.0


@dataclass(frozen=True)
class OddsReport:
    """The odds of the next coup, for one shoe composition under one ruleset."""

    probabilities: Probabilities
    bets: Mapping[Bet, BetOdds]
    #: Cards left in the shoe.
    cards: int
    #: ``False`` when the shoe may run out before the coup is complete (fewer than six cards).
    complete: bool = True
    #: Why the report is incomplete; empty when complete.
    note: str = ""
    #: Chance that the shoe runs out while a card is still due (the coup is void, wagers returned).
    runs_out: float = 0.0
    #: Name of the ruleset the wagers were priced under.
    rules: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON fields fixed by the command-line contract (``probabilities``, ``bets``), plus more."""
        p = self.probabilities
        out: dict[str, Any] = {
            "probabilities": {"banker": p.banker, "player": p.player, "tie": p.tie},
            "bets": {bet.value: {"ev": o.ev, "house_edge": o.house_edge} for bet, o in self.bets.items()},
            "cards": self.cards,
            "complete": self.complete,
            "rules": self.rules,
        }
        if self.note:
            out["note"] = self.note
            out["runs_out"] = self.runs_out
        return out


@dataclass(frozen=True, slots=True, order=True)
class CoupOutcome:
    """How a coup ended, as far as any wager cares (pairs aside): both totals and card counts."""

    player_total: int
    banker_total: int
    player_cards: int
    banker_cards: int

    @property
    def winner(self) -> Winner:
        if self.player_total > self.banker_total:
            return Winner.PLAYER
        if self.banker_total > self.player_total:
            return Winner.BANKER
        return Winner.TIE

    @property
    def margin(self) -> int:
        return abs(self.player_total - self.banker_total)

    @property
    def player_three_cards(self) -> bool:
        return self.player_cards == 3

    @property
    def banker_three_cards(self) -> bool:
        return self.banker_cards == 3

    @property
    def player_pair(self) -> bool:
        raise ValueError("a pair needs the first two cards' ranks, which an outcome does not keep")

    @property
    def banker_pair(self) -> bool:
        raise ValueError("a pair needs the first two cards' ranks, which an outcome does not keep")

    @property
    def player_natural(self) -> bool:
        return self.player_cards == 2 and TABLEAU.is_natural(self.player_total)

    @property
    def banker_natural(self) -> bool:
        return self.banker_cards == 2 and TABLEAU.is_natural(self.banker_total)


# -- pricing (one place, shared by both engines) -------------------------------------------------------

#: Wagers priced from the coup's :class:`CoupOutcome`; the pair wagers need ranks and are priced apart.
OUTCOME_BETS: tuple[Bet, ...] = (
    Bet.BANKER,
    Bet.PLAYER,
    Bet.TIE,
    Bet.DRAGON_BONUS_PLAYER,
    Bet.DRAGON_BONUS_BANKER,
    Bet.DRAGON_7,
    Bet.PANDA_8,
)


def payoff(bet: Bet, outcome: CoupOutcome, rules: Ruleset) -> Fraction:
    """Net win per unit staked on ``bet`` when the coup ends as ``outcome`` (-1 lose, 0 push), by the one pay
    table logic in :mod:`controller.game.payouts`. Pair wagers are not decided by the outcome: ValueError."""
    if bet in PAIR_BETS:
        raise ValueError(f"{bet.value} is not decided by the coup's outcome")
    return net_per_unit(bet, outcome, rules)


def pair_probability(comp: Composition) -> Fraction:
    """Chance that two cards drawn from the shoe share a rank (a Player pair, or a Banker pair)."""
    n = comp.total
    if n < 2:
        return Fraction(0)
    return Fraction(sum(c * (c - 1) for c in comp.counts), n * (n - 1))


# -- the fast engine -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _SixCardTable:
    """The 5,005 multisets of six values and how many of their orderings end in each outcome."""

    #: (6, 5005) for the j-th card of each multiset (values sorted), ``value * 6 + r`` where ``r`` equal
    #: values come before it: its index into the per-shoe factor table ``c_value - r``.
    factor_index: IntArray
    #: The outcomes that occur, one per column of ``orderings``.
    outcomes: tuple[CoupOutcome, ...]
    #: (5005, len(outcomes)) ordered value sequences of the multiset that end in the outcome (at most 6! =
    #: 720, so int16: 2 MB instead of 8 as floats; a ruleset's priced matrix is built from it in slices).
    orderings: npt.NDArray[np.int16]


def _tableau_arrays() -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The TABLEAU as lookup arrays, by calling its methods for every total (nothing restated here)."""
    player_draws = np.zeros((10, 10), dtype=bool)
    banker_draws_stood = np.zeros((10, 10), dtype=bool)
    banker_draws_after = np.zeros((10, 10, 10), dtype=bool)
    for p in range(10):
        for b in range(10):
            player_draws[p, b] = TABLEAU.player_draws(p, b)
            if not player_draws[p, b]:
                banker_draws_stood[p, b] = TABLEAU.banker_draws(p, b, None)
            else:
                for third in range(10):
                    banker_draws_after[p, b, third] = TABLEAU.banker_draws(p, b, third)
    return player_draws, banker_draws_stood, banker_draws_after


def deal_value_sequences(
    seq: AnyIntArray,
) -> tuple[AnyIntArray, AnyIntArray, AnyIntArray, AnyIntArray]:
    """Deal coups from value sequences: ``seq`` is (n, 6), cards in shoe order P1, B1, P2, B2, ...

    Returns the Player total, Banker total, Player cards and Banker cards of each coup (each (n,)).
    The fifth card is the Player's third when the Player draws, else the Banker's; the sixth is the
    Banker's third after a Player draw.
    """
    player_draws, banker_draws_stood, banker_draws_after = _tableau_arrays()
    p1, b1, p2, b2, fifth, sixth = (seq[:, i] for i in range(6))
    pt2 = (p1 + p2) % 10
    bt2 = (b1 + b2) % 10
    p_draw = player_draws[pt2, bt2]
    b_draw = np.where(p_draw, banker_draws_after[pt2, bt2, fifth], banker_draws_stood[pt2, bt2])
    banker_third = np.where(p_draw, sixth, fifth)
    pt = (pt2 + np.where(p_draw, fifth, 0)) % 10
    bt = (bt2 + np.where(b_draw, banker_third, 0)) % 10
    return pt, bt, 2 + p_draw.astype(seq.dtype), 2 + b_draw.astype(seq.dtype)


#: Ordered value sequences dealt at once while the six-card table is built (a hundredth of them): the build
#: raises the process's RSS high-water by about 23 MB instead of about 120 MB for all 10**6 at once, for
#: the same time (the table daemon builds it at start-up; ``benchmarks/bench_edges.py`` prints both).
_BUILD_CHUNK = 10 ** (MAX_COUP_CARDS - 2)
#: Outcome codes ``((pt * 10 + bt) * 2 + pc - 2) * 2 + bc - 2`` are below this.
_OUTCOME_CODES = 400


@cache
def _six_card_table() -> _SixCardTable:
    """Deal all 10**6 ordered value sequences once and count orderings per (multiset, outcome).

    Dealt a chunk at a time (all sequences starting with one value), counting (multiset, outcome) pairs into
    one integer table: the result is the same as dealing them all at once, without the memory peak."""
    keys = _multiset_keys()
    place = 10 ** np.arange(MAX_COUP_CARDS - 1, -1, -1, dtype=np.int32)
    flat = np.zeros(len(keys) * _OUTCOME_CODES, dtype=np.int16)  # at most 6! = 720 orderings a cell
    for start in range(0, 10**MAX_COUP_CARDS, _BUILD_CHUNK):
        index = np.arange(start, start + _BUILD_CHUNK, dtype=np.int32)
        seq = np.empty((len(index), MAX_COUP_CARDS), dtype=np.int32)
        for i in range(MAX_COUP_CARDS):
            seq[:, i] = (index // 10 ** (MAX_COUP_CARDS - 1 - i)) % 10
        pt, bt, pc, bc = deal_value_sequences(seq)
        outcome_code = ((pt * 10 + bt) * 2 + (pc - 2)) * 2 + (bc - 2)
        multiset = np.searchsorted(keys, np.sort(seq, axis=1) @ place)
        cells, n = np.unique(multiset.astype(np.int64) * _OUTCOME_CODES + outcome_code, return_counts=True)
        flat[cells] += n.astype(np.int16)
    counts = flat.reshape(len(keys), _OUTCOME_CODES)
    used = np.flatnonzero(counts.sum(axis=0))
    outcomes = tuple(CoupOutcome(c // 40, (c // 4) % 10, 2 + (c // 2) % 2, 2 + c % 2) for c in used.tolist())

    values = np.stack([(keys // 10 ** (5 - i)) % 10 for i in range(MAX_COUP_CARDS)], axis=1)
    repeats = np.zeros_like(values)
    for i in range(1, MAX_COUP_CARDS):
        repeats[:, i] = np.where(values[:, i] == values[:, i - 1], repeats[:, i - 1] + 1, 0)
    return _SixCardTable(
        factor_index=np.ascontiguousarray((values * MAX_COUP_CARDS + repeats).T).astype(np.int64),
        outcomes=outcomes,
        orderings=np.ascontiguousarray(counts[:, used]),
    )


def _multiset_keys() -> IntArray:
    """The 5,005 multisets of six values as sorted decimal keys (their values in ascending order)."""
    keys = [
        int("".join(map(str, combo))) for combo in itertools.combinations_with_replacement(range(10), MAX_COUP_CARDS)
    ]
    return np.array(sorted(keys), dtype=np.int64)


def precompute() -> None:
    """Build the six-card table now rather than on the first query (about 0.3 s here)."""
    _six_card_table()


def _freeze(obj: object) -> object:
    """A hashable stand-in for a ruleset (its fields, recursively), for the pricing cache."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = dataclasses.fields(obj)
        return (type(obj).__name__, *((f.name, _freeze(getattr(obj, f.name))) for f in fields))
    if isinstance(obj, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in obj.items()))
    return obj


_PRICED_LIMIT = 64
#: Multisets priced at a time when a ruleset's matrix is built.
_PRICE_SLICE = 512
_priced_by_id: dict[int, tuple[Ruleset, tuple[FloatArray, FloatArray]]] = {}
_priced_by_key: dict[object, tuple[FloatArray, FloatArray]] = {}


def _priced_matrix(rules: Ruleset) -> tuple[FloatArray, FloatArray]:
    """(5005, 3 + len(OUTCOME_BETS)): per multiset, ordering-weighted banker/player/tie wins and payoffs; and
    (5005, len(OUTCOME_BETS)): the squared payoffs, for each wager's variance. Two matrices, so that the
    expectations are summed exactly as before the variances were added (to the last bit)."""
    hit = _priced_by_id.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    key = _freeze(rules)
    matrices = _priced_by_key.get(key)
    if matrices is None:
        table = _six_card_table()
        columns: list[list[Fraction]] = [
            [Fraction(o.winner is w) for o in table.outcomes] for w in (Winner.BANKER, Winner.PLAYER, Winner.TIE)
        ]
        pays = [[payoff(bet, o, rules) for o in table.outcomes] for bet in OUTCOME_BETS]
        matrices = (_weighted(table, columns + pays), _weighted(table, [[x * x for x in column] for column in pays]))
        if len(_priced_by_key) >= _PRICED_LIMIT:
            _priced_by_key.clear()
            _priced_by_id.clear()
        _priced_by_key[key] = matrices
    _priced_by_id[id(rules)] = (rules, matrices)
    return matrices


def _weighted(table: _SixCardTable, columns: list[list[Fraction]]) -> FloatArray:
    """Per multiset, the ordering-weighted sum of each column's value per outcome: summed exactly in integers
    (each column scaled by its values' common denominator), then divided once, so that the matrix is the same
    to the last bit on every machine (a float matrix product's summation order is the BLAS kernel's, chosen by
    the CPU: the journal's ``ev`` once differed in its last digits from one machine to another)."""
    scales = [math.lcm(*(x.denominator for x in column)) for column in columns]
    scaled = np.array(
        [[int(x * scale) for x in column] for column, scale in zip(columns, scales, strict=True)], dtype=np.int64
    ).T
    matrix = np.empty((len(table.orderings), scaled.shape[1]), dtype=np.float64)
    for start in range(0, len(table.orderings), _PRICE_SLICE):  # small temporaries, not one of 8 MB
        rows = slice(start, start + _PRICE_SLICE)
        matrix[rows] = table.orderings[rows].astype(np.int64) @ scaled
    matrix /= np.array(scales, dtype=np.float64)
    return matrix


def _weighted_sum(weights: FloatArray, matrix: FloatArray) -> FloatArray:
    """``weights @ matrix``, summed row after row in one fixed order (not by BLAS, whose order is the CPU's)."""
    return cast(FloatArray, (weights[:, np.newaxis] * matrix).sum(axis=0))


_REPEATS = np.arange(MAX_COUP_CARDS, dtype=np.float64)


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def exact_odds(comp: Composition, rules: Ruleset) -> OddsReport:
    """Exact odds of the next coup dealt from ``comp``, every wager priced under ``rules``.

    Uses the six-card table (built on first use); shoes of fewer than six cards are enumerated card by
    card instead (see the module notes on incomplete coups).
    """
    n = comp.total
    if n < MAX_COUP_CARDS:
        return _small_shoe_report(comp, rules)
    table = _six_card_table()
    # factors[v * 6 + r] = c_v - r; the product over a multiset's six cards is prod_v falling(c_v, m_v)
    # (zero as soon as a value is asked for more often than the shoe holds it).
    c = np.array(comp.values_counts(), dtype=np.float64)
    factors = (c[:, np.newaxis] - _REPEATS).ravel()
    f = factors[table.factor_index]
    weights = f[0] * f[1] * f[2] * f[3] * f[4] * f[5]
    weights /= float(_falling(n, MAX_COUP_CARDS))
    priced, squared = _priced_matrix(rules)
    sums = _weighted_sum(weights, priced)
    second = _weighted_sum(weights, squared)
    pair = sum(k * (k - 1) for k in comp.counts) / (n * (n - 1))
    pair_ev = pair * float(rules.pair_pays) - (1.0 - pair)
    evs = dict(zip(OUTCOME_BETS, sums[3:].tolist(), strict=True))
    m2 = dict(zip(OUTCOME_BETS, second.tolist(), strict=True))
    evs[Bet.PLAYER_PAIR] = evs[Bet.BANKER_PAIR] = pair_ev
    m2[Bet.PLAYER_PAIR] = m2[Bet.BANKER_PAIR] = pair * float(rules.pair_pays) ** 2 + (1.0 - pair)
    return OddsReport(
        probabilities=Probabilities(float(sums[0]), float(sums[1]), float(sums[2])),
        bets=MappingProxyType({bet: BetOdds(evs[bet], -evs[bet], _variance(m2[bet], evs[bet])) for bet in Bet}),
        cards=n,
        rules=rules.name,
    )


def _variance(second_moment: float, ev: float) -> float:
    """E[X**2] - E[X]**2, never below 0 (float rounding on a wager that cannot vary)."""
    return max(second_moment - ev * ev, 0.0)


# -- the reference: card-by-card enumeration -----------------------------------------------------------

_RANK_POINTS = tuple(r.points for r in RANKS)

#: Key of an enumerated coup: its outcome (``None`` when the shoe ran out), Player pair, Banker pair.
EnumKey = tuple[CoupOutcome | None, bool, bool]


@lru_cache(maxsize=32)
def _walk(counts: tuple[int, ...], values: tuple[int, ...]) -> Mapping[EnumKey, Fraction]:
    """Deal every possible coup card by card from ``counts`` cards of each class (class i has baccarat
    value ``values[i]``), asking the TABLEAU at each step. Exact: integer ways over falling factorials.

    Pair flags compare classes, so they mean "same rank" only when the classes are ranks. The last few
    shoes are remembered (pricing one shoe under several rulesets walks it once).
    """
    n = sum(counts)
    c = list(counts)
    classes = range(len(c))
    # ways[key][depth] = ordered ways of dealing ``depth`` cards that end so.
    ways: dict[tuple[int, int, int, int, bool, bool] | None, list[int]] = {}

    def add(key: tuple[int, int, int, int, bool, bool] | None, depth: int, w: int) -> None:
        ways.setdefault(key, [0] * (MAX_COUP_CARDS + 1))[depth] += w

    def draw_into(left: int, depth: int, w: int, then: Callable[[int, int], None]) -> None:
        """Draw one card (any class still in the shoe) and continue with ``then(class, ways)``."""
        if left == 0:
            add(None, depth, w)
            return
        for k in classes:
            if c[k]:
                ck = c[k]
                c[k] -= 1
                then(k, w * ck)
                c[k] += 1

    def finish(p1: int, b1: int, p2: int, b2: int, w: int) -> None:
        pt2 = (values[p1] + values[p2]) % 10
        bt2 = (values[b1] + values[b2]) % 10
        pp, bp = p1 == p2, b1 == b2
        left = n - 4
        if TABLEAU.player_draws(pt2, bt2):

            def after_player_third(p3: int, w5: int) -> None:
                pt = (pt2 + values[p3]) % 10
                if TABLEAU.banker_draws(pt2, bt2, values[p3]):

                    def after_banker_third(b3: int, w6: int) -> None:
                        add((pt, (bt2 + values[b3]) % 10, 3, 3, pp, bp), 6, w6)

                    draw_into(left - 1, 5, w5, after_banker_third)
                else:
                    add((pt, bt2, 3, 2, pp, bp), 5, w5)

            draw_into(left, 4, w, after_player_third)
        elif TABLEAU.banker_draws(pt2, bt2, None):

            def after_banker_alone(b3: int, w5: int) -> None:
                add((pt2, (bt2 + values[b3]) % 10, 2, 3, pp, bp), 5, w5)

            draw_into(left, 4, w, after_banker_alone)
        else:
            add((pt2, bt2, 2, 2, pp, bp), 4, w)

    if n < MIN_COUP_CARDS:
        return MappingProxyType({(None, False, False): Fraction(1)})
    for p1 in classes:
        if not c[p1]:
            continue
        w1 = c[p1]
        c[p1] -= 1
        for b1 in classes:
            if not c[b1]:
                continue
            w2 = w1 * c[b1]
            c[b1] -= 1
            for p2 in classes:
                if not c[p2]:
                    continue
                w3 = w2 * c[p2]
                c[p2] -= 1
                for b2 in classes:
                    if c[b2]:
                        w4 = w3 * c[b2]
                        c[b2] -= 1
                        finish(p1, b1, p2, b2, w4)
                        c[b2] += 1
                c[p2] += 1
            c[b1] += 1
        c[p1] += 1

    out: dict[EnumKey, Fraction] = {}
    for raw, by_depth in ways.items():
        p = sum((Fraction(w, _falling(n, d)) for d, w in enumerate(by_depth) if w), Fraction(0))
        key: EnumKey = (None, False, False) if raw is None else (CoupOutcome(*raw[:4]), raw[4], raw[5])
        out[key] = out.get(key, Fraction(0)) + p
    return MappingProxyType(out)


def enumerate_outcomes(comp: Composition) -> dict[CoupOutcome | None, Fraction]:
    """Exact distribution of the next coup's :class:`CoupOutcome` by card-by-card enumeration over values.

    ``None`` is the shoe running out while a card is due (only with fewer than six cards).
    """
    out: dict[CoupOutcome | None, Fraction] = {}
    for (outcome, _, _), p in _walk(comp.values_counts(), tuple(range(10))).items():
        out[outcome] = out.get(outcome, Fraction(0)) + p
    return out


def enumerate_odds(comp: Composition, rules: Ruleset, *, by_rank: bool = False) -> OddsReport:
    """The reference engine: enumerate every coup card by card, exactly, and price it under ``rules``.

    By values (ten classes) with pairs from :func:`pair_probability`; ``by_rank=True`` enumerates the
    13 ranks instead and counts pairs in the enumeration (much slower; used for shoes under six cards).
    """
    n = comp.total
    if by_rank or n < MAX_COUP_CARDS:
        walked = _walk(comp.counts, _RANK_POINTS)
        dist: dict[CoupOutcome | None, Fraction] = {}
        player_pair = banker_pair = Fraction(0)
        for (outcome, pp, bp), p in walked.items():
            dist[outcome] = dist.get(outcome, Fraction(0)) + p
            if outcome is not None:
                player_pair += p if pp else 0
                banker_pair += p if bp else 0
    else:
        dist = enumerate_outcomes(comp)
        player_pair = banker_pair = pair_probability(comp)
    return _report_from_distribution(comp, rules, dist, player_pair, banker_pair)


def _report_from_distribution(
    comp: Composition,
    rules: Ruleset,
    dist: Mapping[CoupOutcome | None, Fraction],
    player_pair: Fraction,
    banker_pair: Fraction,
) -> OddsReport:
    n = comp.total
    runs_out = dist.get(None, Fraction(0))
    played = 1 - runs_out  # a void coup returns every wager
    by_winner = dict.fromkeys(Winner, Fraction(0))
    evs: dict[Bet, Fraction] = dict.fromkeys(Bet, Fraction(0))
    m2: dict[Bet, Fraction] = dict.fromkeys(Bet, Fraction(0))
    for outcome, p in dist.items():
        if outcome is None:
            continue
        by_winner[outcome.winner] += p
        for bet in OUTCOME_BETS:
            x = payoff(bet, outcome, rules)
            evs[bet] += p * x
            m2[bet] += p * x * x
    for bet, p_pair in ((Bet.PLAYER_PAIR, player_pair), (Bet.BANKER_PAIR, banker_pair)):
        evs[bet] = p_pair * rules.pair_pays - (played - p_pair)
        m2[bet] = p_pair * rules.pair_pays**2 + (played - p_pair)
    if n < MIN_COUP_CARDS:
        note = f"only {n} card(s) left in the shoe: no coup can be dealt; every wager would be returned"
    elif runs_out:
        note = (
            f"only {n} cards left in the shoe: with probability {float(runs_out):.6f} it runs out while a "
            "card is due; that coup is void and its wagers returned. Probabilities are not conditioned "
            "on completion (banker + player + tie = 1 - runs_out)"
        )
    else:
        note = ""
    return OddsReport(
        probabilities=Probabilities(
            float(by_winner[Winner.BANKER]), float(by_winner[Winner.PLAYER]), float(by_winner[Winner.TIE])
        ),
        bets=MappingProxyType(
            {bet: BetOdds(float(evs[bet]), -float(evs[bet]), float(m2[bet] - evs[bet] ** 2)) for bet in Bet}
        ),
        cards=n,
        complete=runs_out == 0,
        note=note,
        runs_out=float(runs_out),
        rules=rules.name,
    )


def _small_shoe_report(comp: Composition, rules: Ruleset) -> OddsReport:
    """Fewer than six cards: enumerate by rank (cheap at this size); see the module notes."""
    return enumerate_odds(comp, rules, by_rank=True)
