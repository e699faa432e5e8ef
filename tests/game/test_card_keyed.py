"""An unreadable coup card keyed (the misread's correction): the card the dealer keys, a supervisor approved, takes
the unread card's place and the coup goes on under the third-card rules; nothing else is corrected by it; an
unreadable first card closes the betting window as a read one does."""

from __future__ import annotations

from controller.game.cards import Card
from controller.game.coup import Position, Winner
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    Alarm,
    CardDrawn,
    CardKeyed,
    CardPlaced,
    CoupDeclared,
    DeclarePressed,
    Due,
    NewShoePressed,
    ShoeRebooted,
    TableRules,
    TableState,
    UnreadableCard,
)
from controller.game.wagers import Spot, SpotSeen, WagerSettled, WagersLocked
from tests.game.money import Chips, table_rules


def cards(tokens: str) -> list[CardDrawn]:
    return [CardDrawn(Card.parse(t)) for t in tokens.split()]


def table(decks: int = 8) -> TableState:
    return TableState(TableRules(decks=decks, burn_rule=BurnRule(BurnMode.NONE)))


def test_a_keyed_card_takes_the_unread_cards_place_and_the_coup_goes_on() -> None:
    t = table()
    for e in cards("2H 3S"):
        t.apply(e)
    t.apply(UnreadableCard())  # Player's second card
    assert t.due is Due.VOID and t.keyable
    out = t.apply(CardKeyed(Card.parse("AD")))
    assert [n for n in out if isinstance(n, CardPlaced)] == [CardPlaced(Card.parse("AD"), Position.P2, Position.B2)]
    assert Alarm.UNREADABLE not in t.view().alarms and not t.keyable
    for e in cards("KC"):  # Banker 3, Player 3: Player draws
        t.apply(e)
    assert t.due is Due.PLAYER_THIRD
    for e in cards("8D"):  # Banker 3 stands on a Player third 8
        t.apply(e)
    [declared] = [n for n in t.apply(DeclarePressed()) if isinstance(n, CoupDeclared)]
    assert declared.result.player == (Card.parse("2H"), Card.parse("AD"), Card.parse("8D"))
    assert declared.result.winner is Winner.BANKER  # Banker 3 against Player 1
    assert t.shoe.seen(Card.parse("AD")) == 1 and t.shoe.cards_seen == 5  # counted once, as the card it is


def test_a_keyed_card_corrects_nothing_else() -> None:
    t = table()
    assert t.apply(CardKeyed(Card.parse("AD"))) == []  # nothing halted
    for e in cards("2H 3S"):
        t.apply(e)
    t.apply(UnreadableCard())
    t.apply(ShoeRebooted())  # a second halt: the coup is voided, not corrected
    before = t.view()
    assert not t.keyable and t.apply(CardKeyed(Card.parse("AD"))) == [] and t.view() == before


def test_a_card_drawn_or_unreadable_while_halted_is_set_aside_and_the_first_is_still_keyable() -> None:
    t = table()
    for e in cards("2H"):
        t.apply(e)
    t.apply(UnreadableCard())
    t.apply(UnreadableCard())  # drawn while halted: a misdraw, set aside
    t.apply(CardDrawn(Card.parse("5C")))
    assert Alarm.MISDRAW in t.view().alarms and t.keyable
    t.apply(CardKeyed(Card.parse("9S")))
    assert t.view().banker == (Card.parse("9S"),) and t.view().dummy_hand == (Card.parse("5C"),)
    assert t.due is Due.DEAL


def test_a_keyed_card_over_the_shoes_count_is_a_foreign_card() -> None:
    t = table(decks=1)
    for e in cards("AD 3S"):
        t.apply(e)
    t.apply(UnreadableCard())
    t.apply(CardKeyed(Card.parse("AD")))  # a second ace of diamonds in a one-deck shoe
    assert Alarm.FOREIGN_CARD in t.view().alarms and t.due is Due.VOID and not t.keyable
    assert t.view().player == (Card.parse("AD"),)


def test_an_unreadable_first_card_locks_the_bets_once() -> None:
    t = TableState(table_rules())
    t.apply(NewShoePressed())
    chips = Chips()
    t.apply(SpotSeen(1, Spot.BANKER, chips(2500)))
    out = t.apply(UnreadableCard())  # the coup's first card left the shoe: the betting window is closed
    assert [n.seat for n in out if isinstance(n, WagersLocked)] == [1]
    t.apply(SpotSeen(3, Spot.PLAYER, chips(2500)))  # a bet placed while the coup waits: not this coup's
    out = t.apply(CardKeyed(Card.parse("9H")))
    assert not [n for n in out if isinstance(n, WagersLocked)]  # locked once
    assert t.view().player == (Card.parse("9H"),)
    for e in cards("KD KS QS"):  # Player 9, Banker 0: a natural
        t.apply(e)
    settled = [n for n in t.apply(DeclarePressed()) if isinstance(n, WagerSettled)]
    assert [(n.seat, n.outcome.bet.value) for n in settled] == [(1, "banker")]
