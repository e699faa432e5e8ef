"""The shoe model: seeded shuffle, composition, cut card position, burn counts, foreign cards."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.cards import DECK, Card
from hw_sim.shoe import ShoeEmpty, ShoeModel, burn_count, validate_shoe


@given(decks=st.integers(1, 8), seed=st.integers(0, 2**32), cut=st.integers(1, 51))
def test_every_face_exactly_decks_times_and_cut_card_k_from_the_back(decks: int, seed: int, cut: int) -> None:
    shoe = ShoeModel.shuffled(decks, random.Random(seed), cut)
    assert len(shoe.cards) == 52 * decks
    assert Counter(shoe.cards) == {card: decks for card in DECK}
    assert shoe.cut_index == len(shoe.cards) - cut
    drawn = 0
    while not shoe.cut_card_next:
        shoe.draw()
        drawn += 1
    assert shoe.remaining == cut
    assert drawn == len(shoe.cards) - cut


def test_same_seed_same_shoe_other_seed_other_shoe() -> None:
    a = ShoeModel.shuffled(8, random.Random(7)).cards
    b = ShoeModel.shuffled(8, random.Random(7)).cards
    c = ShoeModel.shuffled(8, random.Random(8)).cards
    assert a == b
    assert a != c


def test_shuffle_does_not_touch_the_global_generator() -> None:
    random.seed(99)
    expected = random.random()
    random.seed(99)
    ShoeModel.shuffled(2, random.Random(1))
    assert random.random() == expected


def test_cut_card_comes_out_once() -> None:
    shoe = ShoeModel.shuffled(1, random.Random(0), cut_from_back=50)
    shoe.draw()
    shoe.draw()
    assert shoe.cut_card_next
    shoe.take_cut_card()
    assert not shoe.cut_card_next and shoe.cut_card_out


def test_an_empty_shoe_says_so() -> None:
    shoe = ShoeModel.shuffled(1, random.Random(0))
    for _ in range(52):
        shoe.draw()
    with pytest.raises(ShoeEmpty) as info:
        shoe.draw()
    assert info.value.shoe_size == 52


@pytest.mark.parametrize(
    ("token", "burned"), [("AS", 1), ("2H", 2), ("9D", 9), ("TC", 10), ("JS", 10), ("QH", 10), ("KD", 10)]
)
def test_burn_count_ten_and_court_cards_ten_ace_one(token: str, burned: int) -> None:
    assert burn_count(Card.parse(token)) == burned


@pytest.mark.parametrize(("decks", "cut", "word"), [(0, 14, "decks"), (9, 14, "decks"), (1, 0, "cut"), (1, 52, "cut")])
def test_impossible_shoes_are_refused_by_name(decks: int, cut: int, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        validate_shoe(decks, cut)


def test_foreign_card_is_a_copy_beyond_the_deck_count_when_possible() -> None:
    shoe = ShoeModel.shuffled(1, random.Random(3))
    rng = random.Random(0)
    early = shoe.foreign(rng)
    assert not early.detectable  # nothing is exhausted yet: any face, not detectable by counting
    first = shoe.draw()
    foreign = shoe.foreign(rng)
    assert foreign.detectable
    assert foreign.card == first or shoe.seen(foreign.card) > 1
    assert shoe.seen(foreign.card) == 2  # one copy in a one-deck shoe, and this one
    assert shoe.position == 1  # the foreign card does not take a card out of the shoe
