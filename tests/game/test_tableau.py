"""The tableau against the rule card, written out independently here as the casino prints it."""

import pytest

from controller.game.cards import Card, Rank, Suit
from controller.game.coup import Coup, Position
from controller.game.tableau import TABLEAU

# The rule card, restated independently of controller.game.tableau:
# Banker total -> Player third-card values on which the Banker DRAWS (when the Player drew).
RULE_CARD_BANKER_DRAWS = {
    0: {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
    1: {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
    2: {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
    3: {0, 1, 2, 3, 4, 5, 6, 7, 9},
    4: {2, 3, 4, 5, 6, 7},
    5: {4, 5, 6, 7},
    6: {6, 7},
    7: set(),
}


def expected_action(p: int, b: int, p3: int) -> tuple[bool, bool]:
    """(player draws, banker draws) per the rule card for two-card totals p, b and a Player third card p3."""
    if p >= 8 or b >= 8:
        return False, False
    if p <= 5:
        return True, p3 in RULE_CARD_BANKER_DRAWS[b]
    return False, b <= 5


_CARD_FOR_VALUE = {0: Rank.KING, **{v: Rank(v) for v in range(1, 10)}}


def two_cards(total: int) -> tuple[Card, Card]:
    """A ten and a card of value ``total``: two cards making ``total``."""
    return Card(Rank.TEN, Suit.SPADES), Card(_CARD_FOR_VALUE[total], Suit.HEARTS)


@pytest.mark.parametrize("p", range(10))
@pytest.mark.parametrize("b", range(10))
def test_every_combination_against_the_rule_card(p: int, b: int) -> None:
    for p3 in range(10):
        player_draws, banker_draws = expected_action(p, b, p3)
        p1, p2 = two_cards(p)
        b1, b2 = two_cards(b)
        coup = Coup()
        for card in (p1, b1, p2):
            coup.deal(card)
        due = coup.deal(b2)
        assert (p1.value + p2.value) % 10 == p and (b1.value + b2.value) % 10 == b
        if player_draws:
            assert due is Position.P3
            due = coup.deal(Card(_CARD_FOR_VALUE[p3], Suit.CLUBS))
            assert due is (Position.B3 if banker_draws else None), (p, b, p3)
        elif banker_draws:
            assert due is Position.B3, (p, b)
        else:
            assert due is None, (p, b)
        # The table's own query answers the same way.
        assert TABLEAU.player_draws(p, b) is player_draws
        if player_draws:
            assert TABLEAU.banker_draws(p, b, p3) is banker_draws


def test_rule_card_text_reads_the_table() -> None:
    lines = TABLEAU.rule_card()
    assert "Banker 3: draws unless the Player's third card is 8" in "\n".join(lines)
    assert "Banker 4: draws when the Player's third card is 2-7" in lines[-4]
    assert lines[-1] == "  Banker 7: stands"
