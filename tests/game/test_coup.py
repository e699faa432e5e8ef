"""The coup machine: shoe order, what is due, results, and refusals that leave the state unchanged."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.cards import DECK, Card, parse_cards
from controller.game.coup import Coup, CoupResult, Position, Winner, play_coups
from controller.game.errors import CardNotDue, RulesViolation

cards_strategy = st.lists(st.sampled_from(DECK), min_size=0, max_size=60)


def coup_of(tokens: str) -> CoupResult:
    return Coup.from_cards(parse_cards(tokens.split())).result()


def test_shoe_order_and_dues() -> None:
    coup = Coup()
    assert coup.due is Position.P1
    assert coup.deal(Card.parse("2H")) is Position.B1
    assert coup.deal(Card.parse("3S")) is Position.P2
    assert coup.deal(Card.parse("AD")) is Position.B2
    # Player 3, Banker 3+K=3: Player draws.
    assert coup.deal(Card.parse("KC")) is Position.P3
    # Player's third card 8: Banker 3 stands.
    assert coup.deal(Card.parse("8D")) is None
    result = coup.result()
    assert [c.token for c in result.player] == ["2H", "AD", "8D"]
    assert [c.token for c in result.banker] == ["3S", "KC"]
    assert result.player_total == 1 and result.banker_total == 3
    assert result.winner is Winner.BANKER
    assert result.margin == 2
    assert result.player_three_cards and not result.banker_three_cards


def test_natural_both_stand_and_whose() -> None:
    r = coup_of("4H 9S 3D KC")
    assert r.natural and r.natural_hand == "banker"
    assert r.winner is Winner.BANKER and r.banker_total == 9 and r.player_total == 7
    assert not r.player_pair and not r.banker_pair
    pp = coup_of("4H 9S 4D KC")
    assert pp.natural_hand == "both" and pp.player_pair and pp.winner is Winner.BANKER
    both = coup_of("8H 8S KD KC")
    assert both.natural_hand == "both" and both.winner is Winner.TIE and both.margin == 0
    assert both.banker_pair is False and both.player_pair is False
    # a three-card 8 is not a natural
    r3 = coup_of("2H KS 3D 7C 3S")
    assert not r3.player_natural and r3.player_total == 8


def test_pairs_need_the_same_rank_not_value() -> None:
    assert not coup_of("KH 5S QD 5C TS 2D").player_pair  # K and Q are both 0 but not a pair
    assert coup_of("KH 5S KD 5C TS 2D").player_pair
    assert coup_of("KH 5S KD 5C TS 2D").banker_pair
    assert not coup_of("KH 5S QD 6C TS 2D").banker_pair


def test_card_not_due_raises_and_leaves_state_unchanged() -> None:
    coup = Coup.from_cards(parse_cards("9H 2S KD 5C".split()))
    assert coup.complete
    before = (coup.player_cards, coup.banker_cards, coup.due)
    with pytest.raises(CardNotDue) as err:
        coup.deal(Card.parse("3H"))
    assert err.value.card == Card.parse("3H")
    assert (coup.player_cards, coup.banker_cards, coup.due) == before
    assert coup.result().winner is Winner.PLAYER


def test_result_before_complete_is_a_violation() -> None:
    coup = Coup.from_cards(parse_cards("2H 3S".split()))
    with pytest.raises(RulesViolation, match="PLAYER CARD is due"):
        coup.result()


def test_to_dict_fields() -> None:
    d = coup_of("TH 2S 5D 4C 9S").to_dict()
    assert d["player"] == ["TH", "5D", "9S"]
    assert d["banker"] == ["2S", "4C"]
    assert (d["player_total"], d["banker_total"], d["winner"]) == (4, 6, "banker")
    assert d["natural"] is False and d["player_pair"] is False and d["banker_pair"] is False


def test_cards_in_shoe_order() -> None:
    tokens = "2H 3S AD KC 8D".split()
    assert [c.token for c in coup_of(" ".join(tokens)).cards] == tokens


@given(cards_strategy)
def test_coups_are_exactly_the_consumed_prefix(cards: list[Card]) -> None:
    results, leftover = play_coups(cards)
    consumed = [c for r in results for c in r.cards]
    assert consumed + leftover == cards
    for r in results:
        assert 2 <= len(r.player) <= 3 and 2 <= len(r.banker) <= 3
    # leftover never completes a coup
    coup = Coup()
    for c in leftover:
        coup.deal(c)
    assert not coup.complete or not leftover


@given(cards_strategy, st.sampled_from(DECK))
def test_an_undue_card_never_changes_the_state(cards: list[Card], extra: Card) -> None:
    coup = Coup()
    for c in cards:
        if coup.complete:
            break
        coup.deal(c)
    snapshot = (coup.player_cards, coup.banker_cards, coup.due)
    if coup.complete:
        with pytest.raises(CardNotDue):
            coup.deal(extra)
        assert (coup.player_cards, coup.banker_cards, coup.due) == snapshot
    else:
        copy = coup.copy()
        copy.deal(extra)
        assert (coup.player_cards, coup.banker_cards, coup.due) == snapshot
