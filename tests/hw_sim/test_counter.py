"""The simulator's counter (``shoe-sim --counter``, hw_sim/players.py and hw_sim/money.py) and the direct
simulation's bettors (hw_sim/counting.py): a counter raises its side wager exactly when the cards it has seen
make that wager's edge positive, within the table's rules; the dealt shoes are priced like the table's."""

from __future__ import annotations

import itertools
import random

import pytest

from controller.game.cards import RANKS, parse_cards
from controller.game.composition import Composition
from controller.game.edges import price
from controller.game.rules import COMMISSION, Bet
from controller.game.settlement import TableLimits, validate_wagers
from hw_sim.counting import MAIN, UNIT, Counter, Flat, Random, dealt_shoes
from hw_sim.faults import FaultPlan
from hw_sim.money import MoneyConfig, MoneyConfigError, MoneyTable
from hw_sim.players import Counting, Players
from hw_sim.truth import TruthLog

POSITIVE = {"banker": -0.01, "dragon_7": 0.03, "panda_8": -0.02}
NEGATIVE = {"banker": -0.01, "dragon_7": -0.07, "panda_8": -0.02}


@pytest.mark.parametrize("factor", [10, 3, 0])
def test_a_counting_player_raises_only_at_a_positive_edge(factor: int) -> None:
    limits = TableLimits()
    players = Players(3, 5, COMMISSION, limits, counter=Counting(2, Bet.DRAGON_7, factor))
    lows, highs = set(), set()
    for coup in range(1, 60):
        edges = POSITIVE if coup % 3 == 0 else NEGATIVE
        wagers = players.wagers(1, coup, edges)
        validate_wagers(wagers[2], limits, COMMISSION)
        side = {w.bet: w.amount_cents for w in wagers[2]}
        assert Bet.BANKER in side and set(side) <= {Bet.BANKER, Bet.DRAGON_7}
        if edges is POSITIVE:
            highs.add(side[Bet.DRAGON_7])
        elif factor == 0:
            assert Bet.DRAGON_7 not in side
        else:
            lows.add(side[Bet.DRAGON_7])
    bases = {500, 1000, 2500}
    if factor == 0:
        assert highs <= bases and not lows
    else:
        assert lows == bases and highs == {min(b * factor, limits.side_maximum_cents) for b in bases}
    assert 1 in players.wagers(1, 61, NEGATIVE) and 3 in players.wagers(1, 62, NEGATIVE)  # the others play on


def test_a_counter_needs_a_side_wager_the_table_offers_on_a_players_seat() -> None:
    with pytest.raises(ValueError, match="side wager"):
        Counting(1, Bet.PLAYER)
    with pytest.raises(ValueError, match="players' seats"):
        Players(2, 1, COMMISSION, TableLimits(), counter=Counting(3, Bet.TIE))
    with pytest.raises(ValueError, match="does not offer"):
        Players(2, 1, COMMISSION.with_side_bets(frozenset()), TableLimits(), counter=Counting(1, Bet.DRAGON_7))
    with pytest.raises(MoneyConfigError, match="players' seats"):
        MoneyConfig(players=2, counter=Counting(5, Bet.TIE))


def test_the_money_table_prices_the_cards_its_players_have_seen() -> None:
    money = MoneyTable(MoneyConfig(players=2, counter=Counting(1, Bet.DRAGON_7)), FaultPlan(), 3, TruthLog(), decks=1)
    money.shoe_started(1)
    assert money.seen == [4] * len(RANKS)
    for card in parse_cards(["9H", "9S", "9D", "9C"]):
        money.on_coup_card(card, 0.0)
    assert money.seen[RANKS.index(parse_cards(["9H"])[0].rank)] == 0 and sum(money.seen) == 48
    money.shoe_started(2)
    assert sum(money.seen) == 52


def test_the_direct_simulation_s_bettors() -> None:
    rng = random.Random(1)
    assert Flat().stakes(POSITIVE) == {"dragon_7": UNIT, "panda_8": UNIT, "banker": MAIN}
    r = Random(rng)
    seen = [r.stakes(POSITIVE) for _ in range(200)]
    assert all(len({"banker", "player"} & set(s)) == 1 for s in seen)
    assert 0 < sum("dragon_7" in s for s in seen) < 200
    c = Counter(Bet.DRAGON_7, 10, rng)
    assert all(c.stakes(POSITIVE)["dragon_7"] in (10 * UNIT, 20 * UNIT, 50 * UNIT) for _ in range(50))
    assert all(c.stakes(NEGATIVE)["dragon_7"] in (UNIT, 2 * UNIT, 5 * UNIT) for _ in range(50))
    only = Counter(Bet.DRAGON_7, 0, rng)
    assert "dragon_7" not in only.stakes(NEGATIVE) and only.stakes(POSITIVE)["dragon_7"] in (UNIT, 2 * UNIT, 5 * UNIT)


def test_the_dealt_shoes_are_priced_at_every_betting_time_from_the_cards_left() -> None:
    shoe = next(dealt_shoes(random.Random(4), COMMISSION))
    assert 60 <= len(shoe) <= 95 and [c.coup for c in shoe] == list(range(1, len(shoe) + 1))
    full = price(Composition(tuple([32] * 13)), COMMISSION)
    assert 416 - 11 <= shoe[0].cards_left < 416  # the burn is out before the first coup
    assert shoe[0].ev["banker"] == pytest.approx(full["banker"], abs=2e-3) and shoe[0].ev != full
    assert all(b.cards_left < a.cards_left for a, b in itertools.pairwise(shoe))
    assert set(shoe[0].ev) == {b.value for b in Bet}
