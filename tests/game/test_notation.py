"""The one notation (docs/notation.md): cards, scores and results as people read them."""

from __future__ import annotations

import pytest

from controller.game.cards import DECK
from controller.game.errors import CardError
from controller.game.notation import card_text, coup_text, hand_text, money_text, result_text, score_text

#: Cases both notation.py and notation.js must agree on (tests/browser/test_notation_js.py runs the JS).
CARD_CASES = {"TS": "10♠", "10h": "10♥", "AD": "A♦", "QC": "Q♣", "9s": "9♠", "KH": "K♥"}
#: Money as the casino writes it (the one form: docs/notation.md); notation.js's moneyText runs the same cases.
MONEY_CASES = [
    (2500, "$25"),
    (500_000, "$5,000"),
    (125_000, "$1,250"),
    (1250, "$12.50"),
    (125_099, "$1,250.99"),
    (5, "$0.05"),
    (0, "$0"),
    (-5000, "-$50"),
    (-150, "-$1.50"),
    (123_456_789_00, "$123,456,789"),
]
SCORE_CASES = [((5, 7), "P 5 – B 7"), ((None, None), "P – – B –"), ((0, 9), "P 0 – B 9")]
RESULT_CASES = [
    (("banker", 5, 7), "Banker wins · P 5 – B 7"),
    (("player", 8, 3), "Player wins · P 8 – B 3"),
    (("tie", 6, 6), "Tie · P 6 – B 6"),
    ((None, 4, None), "P 4 – B –"),
]
COUP_CASE = (
    {"winner": "banker", "player_total": 5, "banker_total": 7, "player": ["TS", "5H"], "banker": ["7D", "KC"]},
    "Banker wins · P 5 – B 7 · P 10♠ 5♥ · B 7♦ K♣",
)


@pytest.mark.parametrize(("token", "text"), sorted(CARD_CASES.items()))
def test_card_text(token: str, text: str) -> None:
    assert card_text(token) == text


def test_every_card_has_one_text_and_ten_is_never_t() -> None:
    texts = {card_text(c.token) for c in DECK}
    assert len(texts) == 52
    assert not any(t.startswith("T") for t in texts)
    assert sum(t.startswith("10") for t in texts) == 4


def test_a_foreign_token_is_refused() -> None:
    with pytest.raises(CardError):
        card_text("1X")


def test_hand_score_result_and_coup() -> None:
    assert hand_text(["TS", "QH", "9D"]) == "10♠ Q♥ 9♦"
    for args, text in SCORE_CASES:
        assert score_text(*args) == text
    for rargs, text in RESULT_CASES:
        assert result_text(*rargs) == text
    assert coup_text(COUP_CASE[0]) == COUP_CASE[1]


@pytest.mark.parametrize(("cents", "text"), MONEY_CASES)
def test_money_is_written_one_way(cents: int, text: str) -> None:
    assert money_text(cents) == text
