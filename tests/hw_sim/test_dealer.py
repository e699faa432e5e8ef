"""Dealer decisions: the self dealer applies the rules, the prompt dealer follows PROMPT."""

from __future__ import annotations

import random

from controller.game.cards import Card
from controller.game.coup import play_coups
from firmware_protocol.messages import Button, Due
from hw_sim.dealer import Draw, EndShoe, Press, PromptDealer, Role, SelfDealer
from hw_sim.shoe import ShoeModel, burn_count


def deal_shoe(dealer: SelfDealer, shoe: ShoeModel) -> list[tuple[str, object]]:
    """Run the self dealer over a whole shoe; return its actions with the cards they took."""
    log: list[tuple[str, object]] = []
    while True:
        action = dealer.next_action()
        if isinstance(action, EndShoe):
            log.append(("end", action.reason))
            return log
        if isinstance(action, Press):
            log.append(("press", (action.button, action.early)))
            continue
        if shoe.cut_card_next:
            shoe.take_cut_card()
            dealer.on_cut_card()
            log.append(("cut", None))
        card = shoe.draw()
        dealer.on_card(card, action.role)
        log.append((action.role.value, card))


def test_self_dealer_burns_by_the_exposed_card_then_deals_coups_by_the_tableau() -> None:
    shoe = ShoeModel.shuffled(8, random.Random(11))
    log = deal_shoe(SelfDealer(), shoe)
    assert log[0] == ("press", (Button.NEW_SHOE, False))
    burns = [c for kind, c in log if kind == "burn"]
    assert isinstance(burns[0], Card)
    assert len(burns) == 1 + burn_count(burns[0])
    assert burns == shoe.cards[: len(burns)]
    coup_cards = [c for kind, c in log if kind == "coup"]
    results, leftover = play_coups(coup_cards)  # type: ignore[arg-type]
    assert leftover == []
    declares = [x for kind, x in log if kind == "press" and x == (Button.DECLARE, False)]
    assert len(declares) == len(results)
    # a declare follows the last card of every coup, and nothing else
    count = 0
    for kind, _ in log:
        if kind == "coup":
            count += 1
        elif kind == "press" and count:
            assert count in {4, 5, 6}
            count = 0


def test_cut_card_ends_the_shoe_after_its_coup_and_one_more() -> None:
    for one_more in (True, False):
        shoe = ShoeModel.shuffled(1, random.Random(5), cut_from_back=20)
        log = deal_shoe(SelfDealer(one_more_coup=one_more), shoe)
        cut_at = next(i for i, (kind, _) in enumerate(log) if kind == "cut")
        declares_after = sum(1 for kind, x in log[cut_at:] if kind == "press" and x == (Button.DECLARE, False))
        assert declares_after == (2 if one_more else 1)
        assert log[-1] == ("end", "cut card")


def test_misdraw_is_a_card_before_the_declare_and_no_part_of_any_coup() -> None:
    dealer = SelfDealer()
    shoe = ShoeModel.shuffled(8, random.Random(2))
    dealer.misdraw_armed = True
    log = deal_shoe(dealer, shoe)
    at = next(i for i, (kind, _) in enumerate(log) if kind == "misdraw")
    assert log[at - 1][0] == "coup" and log[at + 1] == ("press", (Button.DECLARE, False))
    results, leftover = play_coups([c for kind, c in log if kind == "coup"])  # type: ignore[misc]
    assert leftover == [] and results


def test_early_declare_is_pressed_while_a_third_card_is_due_then_the_card_is_dealt() -> None:
    dealer = SelfDealer()
    shoe = ShoeModel.shuffled(8, random.Random(4))
    dealer.early_declare_armed = True
    log = deal_shoe(dealer, shoe)
    at = log.index(("press", (Button.DECLARE, True)))
    before = [kind for kind, _ in log[:at]]
    last_declare = max((i for i, k in enumerate(before) if k == "press"), default=-1)
    assert before[last_declare + 1 :].count("coup") == 4  # the initial four are out, a third card is due
    assert log[at + 1][0] == "coup"


def test_self_dealer_stops_on_an_empty_shoe() -> None:
    dealer = SelfDealer()
    dealer.next_action()
    dealer.on_empty()
    assert dealer.next_action() == EndShoe("shoe empty")


def test_prompt_dealer_presses_new_shoe_then_waits_for_a_prompt() -> None:
    dealer = PromptDealer()
    assert dealer.next_action(ready=True) == Press(Button.NEW_SHOE)
    assert dealer.next_action(ready=True) is None


def test_prompt_dealer_follows_each_prompt() -> None:
    dealer = PromptDealer()
    dealer.next_action(ready=True)
    dealer.on_prompt(Due.BURN)
    assert dealer.next_action(ready=True) == Draw(Role.BURN)
    assert dealer.next_action(ready=True) is None  # one burn card per BURN prompt
    dealer.on_prompt(Due.DEAL)
    assert [dealer.next_action(ready=False) for _ in range(3)] == [None] * 3  # waits for the ACKs
    assert [dealer.next_action(ready=True) for _ in range(5)] == [Draw(Role.COUP)] * 4 + [None]
    dealer.on_prompt(Due.PLAYER_THIRD)
    assert dealer.next_action(ready=True) == Draw(Role.COUP)
    dealer.on_prompt(Due.PLAYER_THIRD)  # a stale repeat: the Player already has three cards
    assert dealer.next_action(ready=True) is None
    dealer.on_prompt(Due.BANKER_THIRD)
    assert dealer.next_action(ready=True) == Draw(Role.COUP)
    dealer.on_prompt(Due.NOTHING)
    assert dealer.next_action(ready=True) == Press(Button.DECLARE)
    dealer.on_prompt(Due.NOTHING)  # stale: the coup is declared
    assert dealer.next_action(ready=True) is None
    dealer.on_prompt(Due.SHOE_CLOSED)
    assert dealer.next_action(ready=True) == EndShoe("shoe closed")


def test_prompt_dealer_ignores_shoe_closed_before_the_first_coup() -> None:
    dealer = PromptDealer()
    dealer.next_action(ready=True)
    dealer.on_prompt(Due.SHOE_CLOSED)
    assert dealer.next_action(ready=True) is None


def test_prompt_dealer_faults() -> None:
    dealer = PromptDealer()
    dealer.next_action(ready=True)
    dealer.on_prompt(Due.DEAL)
    for _ in range(4):
        dealer.next_action(ready=True)
    dealer.early_declare_armed = True
    dealer.on_prompt(Due.PLAYER_THIRD)
    assert dealer.next_action(ready=True) == Press(Button.DECLARE, early=True)
    dealer.on_prompt(Due.PLAYER_THIRD)  # the controller says it again: now the card
    assert dealer.next_action(ready=True) == Draw(Role.COUP)
    dealer.misdraw_armed = True
    dealer.on_prompt(Due.NOTHING)
    assert dealer.next_action(ready=True) == Draw(Role.MISDRAW)
    dealer.on_prompt(Due.NOTHING)
    assert dealer.next_action(ready=True) == Press(Button.DECLARE)


def test_prompt_dealer_follows_a_table_that_declares_by_itself() -> None:
    """``auto_declare``: after the coup's last card the table prompts DEAL, never NOTHING. A fresh DEAL (after the
    ACK of every card) counts the coup declared and the next one is dealt; a stale DEAL is still ignored, and so is
    a DEAL before the coup's four cards are out."""
    dealer = PromptDealer()
    dealer.next_action(ready=True)
    dealer.on_prompt(Due.DEAL)
    assert [dealer.next_action(ready=True) for _ in range(4)] == [Draw(Role.COUP)] * 4
    dealer.on_prompt(Due.DEAL)  # stale (sent before the last card's ACK): ignored
    assert dealer.next_action(ready=True) is None and dealer.coups_declared == 0
    dealer.on_prompt(Due.DEAL, fresh=True)  # the table declared coup 1 itself
    assert dealer.take_table_declared() and not dealer.take_table_declared()
    assert dealer.coups_declared == 1 and dealer.current_coup == 2
    assert dealer.next_action(ready=True) == Draw(Role.COUP)
    dealer.on_prompt(Due.DEAL, fresh=True)  # a coup's first card only: not a declare
    assert not dealer.take_table_declared() and dealer.coups_declared == 1
    assert [dealer.next_action(ready=True) for _ in range(3)] == [Draw(Role.COUP)] * 3
    dealer.on_prompt(Due.SHOE_CLOSED, fresh=True)  # the last coup, declared by the table, closed the shoe
    assert dealer.take_table_declared() and dealer.coups_declared == 2
    assert dealer.next_action(ready=True) == EndShoe("shoe closed")
