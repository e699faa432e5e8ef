"""The shoe composition: rank counts, the parse form and its errors, values, cards leaving the shoe."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.cards import DECK, RANKS, Card, Rank
from controller.game.composition import Composition, CompositionError
from controller.game.errors import GameError

compositions = st.builds(Composition, st.tuples(*[st.integers(0, 40)] * len(RANKS)))


@pytest.mark.parametrize("n", [1, 6, 8])
def test_decks_hold_four_of_each_rank_per_deck(n: int) -> None:
    comp = Composition.decks(n)
    assert comp.counts == (4 * n,) * 13
    assert comp.total == 52 * n


@pytest.mark.parametrize("n", [0, 9, -1, True, 2.0])
def test_decks_out_of_range_refused(n: object) -> None:
    with pytest.raises(CompositionError) as info:
        Composition.decks(n)  # type: ignore[arg-type]
    assert info.value.part == str(n)


def test_values_counts_gather_tens_and_courts_as_zero() -> None:
    assert Composition.decks(1).values_counts() == (16, 4, 4, 4, 4, 4, 4, 4, 4, 4)
    comp = Composition.parse("A=1,9=2,T=3,J=4,Q=5,K=6")
    assert comp.values_counts() == (18, 1, 0, 0, 0, 0, 0, 0, 0, 2)


def test_parse_full_shoe_any_case_and_ten_spellings() -> None:
    text = "a=31,2=32,3=32,4=32,5=32,6=32,7=32,8=32,9=32,10=30,j=32,Q=32,k=32"
    comp = Composition.parse(text)
    assert comp.count(Rank.ACE) == 31
    assert comp.count(Rank.TEN) == 30
    assert comp.total == 8 * 52 - 3
    assert Composition.parse(text.replace("10=", "T=")) == comp
    assert Composition.parse(" A = 31 , " + text[5:]) == comp


def test_parse_missing_ranks_count_zero() -> None:
    comp = Composition.parse("9=2,K=1")
    assert comp.total == 3
    assert comp.count(Rank.NINE) == 2 and comp.count(Rank.KING) == 1 and comp.count(Rank.ACE) == 0


@pytest.mark.parametrize(
    ("text", "part", "reason_has"),
    [
        ("A=3,a=4", "a=4", "twice"),
        ("A=3,10=1,T=2", "T=2", "twice"),
        ("A=3,X=4", "X=4", "unknown rank"),
        ("A=3,1=4", "1=4", "unknown rank"),
        ("A=3,5=-1", "5=-1", "non-negative integer"),
        ("A=3,5=1.5", "5=1.5", "non-negative integer"),
        ("A=3,5=", "5=", "non-negative integer"),
        ("A=3,5", "5", "RANK=COUNT"),
        ("A=3,,5=1", "", "empty entry"),
    ],
)
def test_parse_errors_name_the_bad_part(text: str, part: str, reason_has: str) -> None:
    with pytest.raises(CompositionError) as info:
        Composition.parse(text)
    err = info.value
    assert err.part == part
    assert reason_has in err.reason
    assert repr(part) in str(err)
    assert isinstance(err, ValueError) and isinstance(err, GameError)


@pytest.mark.parametrize(
    ("counts", "part"),
    [
        ((4,) * 12 + (-1,), "K=-1"),
        ((4,) * 12 + (1.5,), "K=1.5"),
        ((True,) + (4,) * 12, "A=True"),
    ],
)
def test_constructor_validates_counts(counts: tuple[int, ...], part: str) -> None:
    with pytest.raises(CompositionError) as info:
        Composition(counts)
    assert info.value.part == part


def test_constructor_needs_thirteen_counts() -> None:
    with pytest.raises(CompositionError, match="13 rank counts"):
        Composition((4,) * 12)


def test_remove_takes_one_card_of_its_rank() -> None:
    comp = Composition.decks(1).remove(Card.parse("QH"))
    assert comp.count(Rank.QUEEN) == 3
    assert comp.total == 51
    assert comp.values_counts()[0] == 15
    assert comp.remove(Rank.QUEEN).count(Rank.QUEEN) == 2


def test_remove_all_of_a_deck_empties_it() -> None:
    assert Composition.decks(1).remove_all(DECK).total == 0


def test_remove_used_up_rank_refused_and_names_the_card() -> None:
    comp = Composition.parse("A=1")
    with pytest.raises(CompositionError) as info:
        comp.remove(Card.parse("2S"))
    assert info.value.part == "2S"
    assert "no 2 left" in info.value.reason


@given(compositions)
def test_text_form_round_trips(comp: Composition) -> None:
    """str() writes every rank; parsing it gives the same shoe back."""
    assert Composition.parse(str(comp)) == comp
    assert sum(comp.values_counts()) == comp.total
