"""The exact odds engine: the six-card table against card-by-card enumeration, published figures,
short shoes, and the pricing against the table's own settlement."""

import random
from dataclasses import replace
from fractions import Fraction
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK, RANKS, Card, Rank, Suit
from controller.game.composition import Composition
from controller.game.coup import Coup, Winner
from controller.game.odds import (
    OUTCOME_BETS,
    CoupOutcome,
    deal_value_sequences,
    enumerate_odds,
    enumerate_outcomes,
    exact_odds,
    pair_probability,
    payoff,
)
from controller.game.rules import COMMISSION, EZ, SUPER6, Bet, DragonBonus, Ruleset
from controller.game.settlement import Wager, settle

RULESETS = [r.with_tie_pays(t) for r in (COMMISSION, EZ, SUPER6) for t in (8, 9)]
RULESET_IDS = [f"{r.name}-tie{r.tie_pays}" for r in RULESETS]


def _depleted(seed: int) -> Composition:
    """A random 8-deck shoe dealt down to 10-40 cards (seeded)."""
    rng = random.Random(seed)
    left = rng.sample([r for r in RANKS for _ in range(32)], rng.randint(10, 40))
    return Composition.from_mapping({r: left.count(r) for r in RANKS})


def _assert_reports_agree(comp: Composition, rules: Ruleset, tol: float = 1e-12) -> None:
    fast, ref = exact_odds(comp, rules), enumerate_odds(comp, rules)
    for w in Winner:
        assert fast.probabilities.of(w) == pytest.approx(ref.probabilities.of(w), abs=tol), w
    assert set(fast.bets) == set(Bet) == set(ref.bets)
    for bet in Bet:
        assert fast.bets[bet].ev == pytest.approx(ref.bets[bet].ev, abs=tol), bet
        assert fast.bets[bet].variance == pytest.approx(ref.bets[bet].variance, abs=tol * 1000), bet


# -- the six-card table against the enumeration ----------------------------------------------------------


@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
def test_one_deck_matches_enumeration(rules: Ruleset) -> None:
    _assert_reports_agree(Composition.decks(1), rules)


@pytest.mark.parametrize("seed", range(22))
def test_depleted_shoes_match_enumeration(seed: int) -> None:
    comp = _depleted(seed)
    assert 10 <= comp.total <= 40
    for rules in RULESETS:
        _assert_reports_agree(comp, rules)


def test_lopsided_shoe_matches_enumeration() -> None:
    """Values missing altogether and one value dominating: zero factors must zero whole multisets."""
    comp = Composition.parse("A=1,5=2,9=3,T=4,K=3")
    for rules in RULESETS:
        _assert_reports_agree(comp, rules)


# -- published figures ----------------------------------------------------------------------------------

EIGHT = Composition.decks(8)
SIX = Composition.decks(6)


def test_eight_deck_probabilities() -> None:
    p = exact_odds(EIGHT, COMMISSION).probabilities
    assert p.banker == pytest.approx(0.458597, abs=5e-7)
    assert p.player == pytest.approx(0.446247, abs=5e-7)
    assert p.tie == pytest.approx(0.095156, abs=5e-7)


@pytest.mark.parametrize(
    ("rules", "bet", "edge_percent"),
    [
        (COMMISSION, Bet.BANKER, 1.0579),
        (COMMISSION, Bet.PLAYER, 1.2351),
        (COMMISSION, Bet.TIE, 14.3596),
        (COMMISSION.with_tie_pays(9), Bet.TIE, 4.8440),
        (EZ, Bet.BANKER, 1.0183),
        (SUPER6, Bet.BANKER, 1.4581),
        (EZ, Bet.DRAGON_7, 7.6113),
        (EZ, Bet.PANDA_8, 10.1876),
        (COMMISSION, Bet.DRAGON_BONUS_PLAYER, 2.6517),
        (COMMISSION, Bet.DRAGON_BONUS_BANKER, 9.3731),
        (COMMISSION, Bet.PLAYER_PAIR, 10.36),
        (COMMISSION, Bet.BANKER_PAIR, 10.36),
    ],
)
def test_eight_deck_published_house_edges(rules: Ruleset, bet: Bet, edge_percent: float) -> None:
    """Wizard of Odds figures for 8 decks, to the digits published."""
    odds = exact_odds(EIGHT, rules).bets[bet]
    digits = len(str(edge_percent).split(".")[1])
    assert round(odds.house_edge * 100, digits) == edge_percent
    assert odds.house_edge == -odds.ev


@pytest.mark.parametrize(("bet", "sd"), [(Bet.BANKER, 0.93), (Bet.PLAYER, 0.95), (Bet.TIE, 2.64)])
def test_eight_deck_published_standard_deviations(bet: Bet, sd: float) -> None:
    """The standard deviation of one unit's net win, as the Wizard of Odds tabulates it for 8 decks (the floor's
    95 % interval of a shift's win adds up ``stake**2`` x these variances)."""
    for report in (exact_odds(EIGHT, COMMISSION), enumerate_odds(EIGHT, COMMISSION)):
        assert report.bets[bet].variance ** 0.5 == pytest.approx(sd, abs=0.005)


def test_six_deck_counts_exactly_as_published() -> None:
    """Banker, Player and Tie orderings out of 312*311*...*307, as in the published 6-deck table."""
    dist = enumerate_outcomes(SIX)
    orderings = 312 * 311 * 310 * 309 * 308 * 307
    wins = {w: sum(p for o, p in dist.items() if o is not None and o.winner is w) * orderings for w in Winner}
    assert wins == {
        Winner.BANKER: 403_095_751_234_560,
        Winner.PLAYER: 392_220_492_728_832,
        Winner.TIE: 83_552_962_932_288,
    }
    p = exact_odds(SIX, COMMISSION).probabilities
    for w in Winner:
        assert p.of(w) == pytest.approx(float(wins[w] / orderings), rel=1e-12)


@pytest.mark.parametrize(
    ("rules", "bet", "edge_percent"),
    [
        (COMMISSION, Bet.BANKER, 1.0558),
        (COMMISSION, Bet.PLAYER, 1.2374),
        (COMMISSION, Bet.TIE, 14.4382),
        (COMMISSION.with_tie_pays(9), Bet.TIE, 4.9313),
        (EZ, Bet.BANKER, 1.0161),
        (SUPER6, Bet.BANKER, 1.4548),
        (EZ, Bet.DRAGON_7, 7.6062),
        (EZ, Bet.PANDA_8, 10.2074),
        (COMMISSION, Bet.DRAGON_BONUS_PLAYER, 2.6675),
        (COMMISSION, Bet.DRAGON_BONUS_BANKER, 9.3889),
        (COMMISSION, Bet.PLAYER_PAIR, 11.2540),
    ],
)
def test_six_deck_house_edges(rules: Ruleset, bet: Bet, edge_percent: float) -> None:
    """6 decks: Banker/Player/Tie edges follow from the published counts above (and agree with the
    Wizard of Odds 6-deck table); the others are this engine's, held to the enumeration by
    ``test_six_deck_engines_agree``."""
    assert round(exact_odds(SIX, rules).bets[bet].house_edge * 100, 4) == edge_percent


def test_six_deck_engines_agree() -> None:
    for rules in (COMMISSION, EZ, SUPER6):
        _assert_reports_agree(SIX, rules)


# -- short shoes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "A=1", "9=2,K=1"])
def test_fewer_than_four_cards_no_coup(text: str) -> None:
    comp = Composition.parse(text)
    report = exact_odds(comp, COMMISSION)
    assert report.cards == comp.total
    assert not report.complete
    assert "no coup" in report.note
    assert report.runs_out == 1.0
    assert (report.probabilities.banker, report.probabilities.player, report.probabilities.tie) == (0, 0, 0)
    assert all(o.ev == 0 and o.house_edge == 0 for o in report.bets.values())
    assert report.to_dict()["note"] == report.note


def test_four_cards_every_coup_completes() -> None:
    """Two nines and two tens: the nines split between the hands (4 of 6 deals) is a natural tie;
    both nines to one hand is that hand's natural 8. Pairs: either hand holds both nines or both tens."""
    report = exact_odds(Composition.parse("9=2,T=2"), COMMISSION)
    assert report.complete and report.note == "" and report.runs_out == 0
    p = report.probabilities
    assert (p.banker, p.player, p.tie) == pytest.approx((1 / 6, 1 / 6, 4 / 6), abs=1e-15)
    assert report.bets[Bet.PLAYER].ev == pytest.approx(0.0, abs=1e-15)
    assert report.bets[Bet.BANKER].ev == pytest.approx(1 / 6 * 0.95 - 1 / 6, abs=1e-15)
    assert report.bets[Bet.TIE].ev == pytest.approx(4 / 6 * 8 - 2 / 6, abs=1e-15)
    # Dragon Bonus: a natural win pays 1, a natural tie pushes.
    assert report.bets[Bet.DRAGON_BONUS_PLAYER].ev == pytest.approx(0.0, abs=1e-15)
    # Player pair: both nines or both tens to the Player, 2 of 6 deals.
    assert report.bets[Bet.PLAYER_PAIR].ev == pytest.approx(2 / 6 * 11 - 4 / 6, abs=1e-15)


def test_five_cards_shoe_may_run_out() -> None:
    """Four tens and a nine. The nine among the first four cards is a natural 9 (Player 2 in 5,
    Banker 2 in 5); the nine fifth goes to the Player, and the Banker, on 0, is due a card that is not
    there (1 in 5): void, wagers returned."""
    report = exact_odds(Composition.parse("9=1,T=4"), COMMISSION)
    assert not report.complete
    assert report.runs_out == pytest.approx(0.2, abs=1e-15)
    assert "runs out" in report.note and "not conditioned" in report.note
    p = report.probabilities
    assert (p.banker, p.player, p.tie) == pytest.approx((0.4, 0.4, 0.0), abs=1e-15)
    assert report.bets[Bet.BANKER].ev == pytest.approx(0.4 * 0.95 - 0.4, abs=1e-15)
    assert report.bets[Bet.TIE].ev == pytest.approx(-0.8, abs=1e-15)
    # Two tens to the Player in every completed deal where the nine went to the Banker (2 in 5), and
    # in none where it went to the Player; so a Player pair in 2 of 5, lost in 2 of 5, void in 1.
    assert report.bets[Bet.PLAYER_PAIR].ev == pytest.approx(0.4 * 11 - 0.4, abs=1e-15)
    d = report.to_dict()
    assert d["runs_out"] == report.runs_out and d["complete"] is False


def test_six_cards_use_the_table_and_complete() -> None:
    comp = Composition.parse("9=1,T=5")
    report = exact_odds(comp, COMMISSION)
    assert report.complete and report.runs_out == 0
    _assert_reports_agree(comp, COMMISSION)


# -- pairs ----------------------------------------------------------------------------------------------


def test_pairs_by_formula_match_rank_enumeration() -> None:
    comp = Composition.parse("A=2,2=1,5=3,9=2,T=2,J=1,Q=2,K=1")
    by_value = enumerate_odds(comp, COMMISSION)
    by_rank = enumerate_odds(comp, COMMISSION, by_rank=True)
    for bet in Bet:
        assert by_value.bets[bet].ev == pytest.approx(by_rank.bets[bet].ev, abs=1e-13), bet
    assert pair_probability(comp) == Fraction(2 + 6 + 2 + 2 + 2, 14 * 13)


def test_pairs_count_ranks_not_values() -> None:
    """A ten and a king are both worth 0 but are no pair."""
    comp = Composition.parse("T=1,K=1,J=1,Q=1,A=2")
    assert pair_probability(comp) == Fraction(2, 6 * 5)


# -- the pricing agrees with the table's settlement and the coup machine ---------------------------------

CARD = {v: Card(Rank.TEN if v == 0 else Rank(v), Suit.SPADES) for v in range(10)}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=6, max_size=6))
def test_vectorised_deal_matches_coup_machine(values: list[int]) -> None:
    pt, bt, pc, bc = deal_value_sequences(np.array([values], dtype=np.int64))
    coup = Coup()
    for v in values:
        if coup.complete:
            break
        coup.deal(CARD[v])
    r = coup.result()
    assert (int(pt[0]), int(bt[0]), int(pc[0]), int(bc[0])) == (
        r.player_total,
        r.banker_total,
        len(r.player),
        len(r.banker),
    )


@settings(max_examples=200, deadline=None)
@given(st.permutations(DECK), st.sampled_from(RULESETS))
def test_payoff_agrees_with_settlement(shoe: list[Card], rules: Ruleset) -> None:
    coup = Coup()
    for card in shoe:
        if coup.deal(card) is None:
            break
    r = coup.result()
    outcome = CoupOutcome(r.player_total, r.banker_total, len(r.player), len(r.banker))
    stake = 10_000  # cents: every pay in the built-in rulesets is exact on it
    settled = {o.bet: o for o in settle(r, [Wager(b, stake) for b in OUTCOME_BETS], rules).outcomes}
    for bet in OUTCOME_BETS:
        assert payoff(bet, outcome, rules) == Fraction(settled[bet].net_cents, stake), bet


def test_payoff_refuses_pair_bets() -> None:
    with pytest.raises(ValueError, match="player_pair"):
        payoff(Bet.PLAYER_PAIR, CoupOutcome(1, 2, 2, 2), COMMISSION)


# -- properties, the JSON contract and the pricing cache ----------------------------------------------------

shoes = st.builds(Composition, st.tuples(*[st.integers(0, 32)] * len(RANKS))).filter(lambda c: c.total >= 6)


@settings(max_examples=200, deadline=None)
@given(shoes, st.sampled_from(RULESETS))
def test_probabilities_sum_to_one_and_no_ev_below_minus_one(comp: Composition, rules: Ruleset) -> None:
    report = exact_odds(comp, rules)
    p = report.probabilities
    assert p.banker + p.player + p.tie == pytest.approx(1.0, abs=1e-12)
    assert min(p.banker, p.player, p.tie) >= 0
    for odds in report.bets.values():
        assert odds.ev >= -1 - 1e-12
        assert odds.house_edge == -odds.ev
        assert odds.variance >= 0
    assert report.complete and report.runs_out == 0


def test_to_dict_contract() -> None:
    d = exact_odds(EIGHT, COMMISSION).to_dict()
    assert set(d["probabilities"]) == {"banker", "player", "tie"}
    assert list(d["bets"]) == [
        "banker",
        "player",
        "tie",
        "player_pair",
        "banker_pair",
        "dragon_bonus_player",
        "dragon_bonus_banker",
        "dragon_7",
        "panda_8",
    ]
    for entry in d["bets"].values():
        assert set(entry) == {"ev", "house_edge"}
        assert isinstance(entry["ev"], float) and entry["house_edge"] == -entry["ev"]
    assert d["cards"] == 416 and d["rules"] == "commission"


def test_rulesets_differing_only_in_side_pays_are_priced_apart() -> None:
    """The pricing cache must key on every pay, not on the ruleset's name."""
    richer = replace(
        COMMISSION,
        dragon_bonus=DragonBonus(ladder=MappingProxyType({9: Fraction(50)})),
        dragon_7_pays=Fraction(50),
    )
    base, other = exact_odds(EIGHT, COMMISSION), exact_odds(EIGHT, richer)
    assert other.bets[Bet.DRAGON_7].ev > base.bets[Bet.DRAGON_7].ev
    assert other.bets[Bet.DRAGON_BONUS_PLAYER].ev != base.bets[Bet.DRAGON_BONUS_PLAYER].ev
    assert other.bets[Bet.BANKER].ev == base.bets[Bet.BANKER].ev
    _assert_reports_agree(Composition.decks(1), richer)
