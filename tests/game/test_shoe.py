"""The shoe's lifecycle: burn procedure, cut card house rules, inventory and foreign cards."""

import pytest

from controller.game.cards import Card
from controller.game.errors import RulesViolation
from controller.game.shoe import BurnMode, BurnRule, CardUse, CutCardRule, Shoe, ShoePhase


def c(token: str) -> Card:
    return Card.parse(token)


def phase(shoe: Shoe) -> ShoePhase:
    """The shoe's phase now (a call: mypy would carry an earlier
    assert's narrowing of the attribute past the call that changed it)."""
    return shoe.phase


@pytest.mark.parametrize(
    ("exposed", "ace_burns", "burned"),
    [("5H", 1, 5), ("KS", 1, 10), ("TD", 1, 10), ("AC", 1, 1), ("AC", 11, 11), ("9S", 1, 9)],
)
def test_exposed_card_burns_its_count(exposed: str, ace_burns: int, burned: int) -> None:
    shoe = Shoe(8, BurnRule(BurnMode.EXPOSED, ace_burns=ace_burns))
    assert shoe.phase is ShoePhase.EXPOSE
    assert shoe.draw(c(exposed))[0] is CardUse.EXPOSED
    assert shoe.burn_left == burned
    for i in range(burned):
        assert phase(shoe) is ShoePhase.BURNING
        assert shoe.draw(c("2H"))[0] is CardUse.BURN
        assert shoe.burn_left == burned - i - 1
    assert phase(shoe) is ShoePhase.DEALING
    assert shoe.draw(c("3H"))[0] is CardUse.COUP
    assert shoe.cards_seen == burned + 2
    assert shoe.cards_remaining == 416 - burned - 2


def test_fixed_and_no_burn() -> None:
    fixed = Shoe(6, BurnRule(BurnMode.FIXED, fixed_count=3))
    assert fixed.phase is ShoePhase.BURNING
    for _ in range(3):
        assert fixed.draw(c("4S"))[0] is CardUse.BURN
    assert phase(fixed) is ShoePhase.DEALING
    none = Shoe(6, BurnRule(BurnMode.NONE))
    assert none.phase is ShoePhase.DEALING
    assert none.draw(c("4S"))[0] is CardUse.COUP


def test_bad_rules_rejected() -> None:
    with pytest.raises(ValueError, match="ace_burns"):
        BurnRule(ace_burns=2)
    with pytest.raises(ValueError, match="decks"):
        Shoe(9)
    with pytest.raises(ValueError, match="decks"):
        Shoe(0)


@pytest.mark.parametrize(("rule", "coups_after"), [(CutCardRule.ONE_MORE, 1), (CutCardRule.FINISH, 0)])
def test_cut_card_house_rules(rule: CutCardRule, coups_after: int) -> None:
    shoe = Shoe(8, BurnRule(BurnMode.NONE), rule)
    assert shoe.coup_finished() is False  # no cut card yet
    shoe.cut_card()
    assert shoe.cut_card_out
    with pytest.raises(RulesViolation):
        shoe.cut_card()
    for _ in range(coups_after):
        assert shoe.last_coup_announced is False
        assert shoe.coup_finished() is False
    assert shoe.last_coup_announced is True
    assert shoe.coup_finished() is True
    assert shoe.phase is ShoePhase.CLOSED
    with pytest.raises(RulesViolation, match="closed"):
        shoe.draw(c("AS"))


def test_inventory_reports_over_count_as_foreign() -> None:
    shoe = Shoe(1, BurnRule(BurnMode.NONE))
    use, check = shoe.draw(c("QH"))
    assert use is CardUse.COUP
    assert (check.seen, check.allowed, check.foreign) == (1, 1, False)
    _, check = shoe.draw(c("QH"))
    assert check.foreign
    assert check.seen == 2
    assert shoe.seen(c("QH")) == 2


def test_remaining_by_rank() -> None:
    shoe = Shoe(2, BurnRule(BurnMode.NONE))
    shoe.draw(c("AS"))
    shoe.draw(c("AH"))
    shoe.draw(c("KD"))
    counts = shoe.remaining_by_rank()
    assert counts[0] == 6
    assert counts[12] == 7
    assert sum(counts) == 101


def test_unreadable_burn_card_counts() -> None:
    shoe = Shoe(8, BurnRule(BurnMode.FIXED, fixed_count=1))
    shoe.draw_unknown()
    assert shoe.phase is ShoePhase.DEALING
    assert shoe.cards_seen == 1
