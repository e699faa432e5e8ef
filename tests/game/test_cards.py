"""Card tokens: parsing in any case, T or 10 for ten, canonical output, values, and clear errors."""

import pytest

from controller.game.cards import DECK, Card, Rank, Suit, hand_total, parse_cards
from controller.game.errors import CardError


@pytest.mark.parametrize(
    ("token", "canonical", "value"),
    [
        ("AS", "AS", 1),
        ("as", "AS", 1),
        ("10H", "TH", 0),
        ("th", "TH", 0),
        ("qd", "QD", 0),
        ("Jc", "JC", 0),
        ("KS", "KS", 0),
        ("9h", "9H", 9),
        ("2C", "2C", 2),
    ],
)
def test_parse_token(token: str, canonical: str, value: int) -> None:
    card = Card.parse(token)
    assert card.token == canonical
    assert str(card) == canonical
    assert card.value == value


@pytest.mark.parametrize(
    ("token", "fragment"),
    [
        ("", "empty"),
        ("1S", "rank"),
        ("11H", "rank"),
        ("AX", "suit"),
        ("A", "rank"),
        ("ZZ", "rank"),
        ("10", "rank"),
    ],
)
def test_bad_token_names_itself(token: str, fragment: str) -> None:
    with pytest.raises(CardError) as err:
        Card.parse(token)
    assert repr(token) in str(err.value)
    assert fragment in str(err.value)
    assert err.value.token == token


def test_deck_is_52_distinct_cards_that_round_trip() -> None:
    assert len(set(DECK)) == 52
    for card in DECK:
        assert Card.parse(card.token) == card
        assert Card.parse(card.token.lower()) == card


def test_values_by_rank() -> None:
    expected = {Rank.ACE: 1, Rank.TWO: 2, Rank.NINE: 9, Rank.TEN: 0, Rank.JACK: 0, Rank.QUEEN: 0}
    for rank, value in expected.items():
        assert Card(rank, Suit.SPADES).value == value
        assert rank.points == value


def test_hand_total_is_mod_ten() -> None:
    assert hand_total(parse_cards(["9H", "8S"])) == 7
    assert hand_total(parse_cards(["KH", "QS", "5D"])) == 5
    assert hand_total(parse_cards(["AH", "9S"])) == 0


def test_parse_cards_stops_at_first_bad_token() -> None:
    with pytest.raises(CardError, match="'XX'"):
        parse_cards(["AS", "XX", "YY"])
