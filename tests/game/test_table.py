"""The table state machine: coup flow, dealer errors and their ways out, shoe end, and replay."""

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK, Card
from controller.game.coup import Position, Winner
from controller.game.records import input_body, input_from_body
from controller.game.shoe import BurnMode, BurnRule, CutCardRule
from controller.game.table import (
    Alarm,
    AlarmRaised,
    BurnCard,
    CardDrawn,
    CardPlaced,
    CoupComplete,
    CoupDeclared,
    CoupVoided,
    CutCardOut,
    DeclarePressed,
    Due,
    Lamp,
    LinkChanged,
    NewShoePressed,
    Notice,
    ShoeEnded,
    ShoeStarted,
    TableInput,
    TableRules,
    TableState,
    UnreadableCard,
    VoidPressed,
)


def due(table: TableState) -> Due:
    """What the table waits for now (a call: mypy would carry an earlier
    assert's narrowing of the attribute past the call that changed it)."""
    return table.due


def cards(tokens: str) -> list[TableInput]:
    return [CardDrawn(Card.parse(t)) for t in tokens.split()]


def run(table: TableState, events: list[TableInput]) -> list[Notice]:
    out: list[Notice] = []
    for e in events:
        out += table.apply(e)
    return out


def no_burn(**kw: object) -> TableState:
    return TableState(TableRules(burn_rule=BurnRule(BurnMode.NONE), **kw))  # type: ignore[arg-type]


def test_coup_flow_lamps_and_declare() -> None:
    t = no_burn()
    assert t.view().due is Due.DEAL
    run(t, cards("2H 3S AD KC"))  # P 3, B 3: Player draws
    v = t.view()
    assert v.due is Due.PLAYER_THIRD
    assert v.lamps == {Lamp.PLAYER_DRAW}
    out = run(t, cards("5D"))  # P third 5: Banker 3 draws
    assert isinstance(out[-1], CardPlaced)
    assert out[-1].position is Position.P3
    assert t.view().lamps == {Lamp.BANKER_DRAW}
    out = run(t, cards("4S"))  # B: 3+4 = 7, P: 3+5 = 8
    assert isinstance(out[-1], CoupComplete)
    v = t.view()
    assert v.due is Due.DECLARE
    assert v.lamps == {Lamp.PLAYER_WIN}
    assert v.result is not None
    assert v.result.winner is Winner.PLAYER
    out = t.apply(DeclarePressed())
    assert isinstance(out[0], CoupDeclared)
    assert out[0].coup_number == 1
    v = t.view()
    assert v.coup_number == 2
    assert v.due is Due.DEAL
    assert v.lamps == frozenset()
    assert v.player == ()


def test_misdraw_is_set_aside_and_alarmed_until_declare() -> None:
    t = no_burn()
    run(t, cards("9H 2S KD 5C"))  # natural: complete
    out = t.apply(CardDrawn(Card.parse("7H")))
    assert out == [
        AlarmRaised(Alarm.MISDRAW, "card 7H drawn when none was due; set aside (dummy hand)", Card.parse("7H"))
    ]
    v = t.view()
    assert v.dummy_hand == (Card.parse("7H"),)
    assert Lamp.FAULT in v.lamps
    assert Lamp.PLAYER_WIN in v.lamps
    assert v.player == (Card.parse("9H"), Card.parse("KD"))  # coup unchanged
    out = t.apply(DeclarePressed())
    assert isinstance(out[0], CoupDeclared)
    assert out[0].dummy_hand == (Card.parse("7H"),)
    assert t.view().alarms == ()


def test_early_declare_refused_then_coup_continues() -> None:
    t = no_burn()
    run(t, cards("2H 3S AD KC"))
    out = t.apply(DeclarePressed())
    assert isinstance(out[0], AlarmRaised)
    assert out[0].alarm is Alarm.EARLY_DECLARE
    assert t.view().due is Due.PLAYER_THIRD
    assert t.view().lamps == {Lamp.PLAYER_DRAW, Lamp.FAULT}
    run(t, cards("8D"))  # Banker 3 stands on a Player third 8; the alarm clears
    assert t.view().alarms == ()
    assert t.view().due is Due.DECLARE


def test_unreadable_card_halts_until_void() -> None:
    t = no_burn()
    run(t, cards("2H 3S"))
    t.apply(UnreadableCard())
    assert t.view().due is Due.VOID
    out = t.apply(CardDrawn(Card.parse("4H")))  # drawn while halted: set aside
    assert Alarm.MISDRAW in t.view().alarms
    assert t.view().player == (Card.parse("2H"),)
    assert isinstance(out[0], AlarmRaised)
    out = t.apply(VoidPressed())
    assert isinstance(out[0], CoupVoided)
    assert out[0].cards == (Card.parse("2H"), Card.parse("3S"))
    assert t.view().alarms == ()
    assert t.view().coup_number == 2
    assert t.view().due is Due.DEAL


def test_foreign_card_over_count() -> None:
    t = TableState(TableRules(decks=1, burn_rule=BurnRule(BurnMode.NONE)))
    run(t, cards("2H 3S AD KC 8D"))
    t.apply(DeclarePressed())
    out = t.apply(CardDrawn(Card.parse("2H")))  # a second 2H in a one-deck shoe
    assert isinstance(out[0], AlarmRaised)
    assert out[0].alarm is Alarm.FOREIGN_CARD
    assert t.view().due is Due.VOID
    assert t.view().player == ()


def test_burn_procedure_then_cut_card_one_more_then_shoe_end() -> None:
    t = TableState(TableRules(burn_rule=BurnRule(BurnMode.EXPOSED), cut_card_rule=CutCardRule.ONE_MORE))
    out = run(t, cards("3H 4H 5H"))
    assert [type(n) for n in out] == [BurnCard, BurnCard, BurnCard]
    assert t.view().due is Due.BURN
    assert t.view().burn_left == 1
    run(t, cards("6H"))
    assert t.view().due is Due.DEAL
    run(t, cards("2C"))
    assert t.apply(CutCardOut())[0].last_coup_is_current is False  # type: ignore[attr-defined]
    run(t, cards("3S AD KC 8D"))
    t.apply(DeclarePressed())
    assert t.view().last_coup
    run(t, cards("9H 2S KD 5C"))
    out = t.apply(DeclarePressed())
    assert isinstance(out[-1], ShoeEnded)
    assert out[-1].coups == 2
    assert t.view().due is Due.NEW_SHOE
    out = t.apply(CardDrawn(Card.parse("AS")))
    assert isinstance(out[0], AlarmRaised)
    assert out[0].alarm is Alarm.SHOE_CLOSED
    out = t.apply(NewShoePressed())
    assert isinstance(out[-1], ShoeStarted)
    assert out[-1].shoe_number == 2
    assert t.view().alarms == ()
    assert t.view().due is Due.BURN


def test_cut_card_finish_rule_ends_after_current() -> None:
    t = no_burn(cut_card_rule=CutCardRule.FINISH)
    run(t, cards("2H 3S"))
    t.apply(CutCardOut())
    run(t, cards("AD KC 8D"))
    out = t.apply(DeclarePressed())
    assert isinstance(out[-1], ShoeEnded)


def test_new_shoe_on_untouched_shoe_keeps_the_number() -> None:
    t = TableState()
    out = t.apply(NewShoePressed())
    assert out == [ShoeStarted(1, 8)]
    run(t, cards("5H"))
    out = t.apply(NewShoePressed())
    assert ShoeEnded(1, 0) in out
    assert t.shoe_number == 2


def test_auto_declare() -> None:
    t = no_burn(auto_declare=True)
    out = run(t, cards("9H 2S KD 5C"))
    assert any(isinstance(n, CoupDeclared) for n in out)
    assert t.view().coup_number == 2


def test_link_alarm_survives_new_shoe() -> None:
    t = no_burn()
    t.apply(LinkChanged(up=False))
    t.apply(NewShoePressed())
    assert t.view().alarms == (Alarm.LINK_DOWN,)
    t.apply(LinkChanged(up=True))
    assert t.view().alarms == ()


def test_input_dict_round_trip() -> None:
    events: list[TableInput] = [
        CardDrawn(Card.parse("TH")),
        UnreadableCard(),
        CutCardOut(),
        DeclarePressed(),
        VoidPressed(),
        NewShoePressed(),
        LinkChanged(up=False),
    ]
    for e in events:
        assert input_from_body(input_body(e)) == e


inputs = st.one_of(
    st.sampled_from(DECK).map(CardDrawn),
    st.sampled_from([DeclarePressed(), VoidPressed(), UnreadableCard(), CutCardOut(), NewShoePressed()]),
)


@settings(max_examples=200)
@given(st.lists(inputs, max_size=80))
def test_replay_rebuilds_the_same_view(events: list[TableInput]) -> None:
    """Event sourcing: the same inputs give the same view, and a restart mid-way changes nothing."""
    a = TableState()
    for e in events:
        a.apply(e)
    b = TableState()
    for e in events:
        restored = input_from_body(input_body(e))
        assert restored is not None  # every table input comes back from its body
        b.apply(restored)
    assert a.view() == b.view()
    v = a.view()
    assert len(v.player) <= 3
    assert len(v.banker) <= 3


# ---------------------------------------------------------------------------------------------------------
# Issue 8: reboots, set-aside cards, the protocol-version alarm


def test_a_reboot_between_coups_halts_nothing() -> None:

    from controller.game.table import ShoeRebooted

    table = TableState(TableRules(burn_rule=BurnRule(mode=BurnMode.NONE)))
    assert table.apply(ShoeRebooted()) == []
    assert table.due is Due.DEAL and not table.alarms
    table.apply(CardDrawn(Card.parse("2H")))
    table.apply(ShoeRebooted())
    assert due(table) is Due.VOID  # mid-coup: cards may be lost, the coup halts


def test_cards_drawn_after_the_shoe_ended_are_set_aside_when_new_shoe_is_pressed() -> None:

    from controller.game.table import CardsSetAside

    table = TableState(TableRules(burn_rule=BurnRule(mode=BurnMode.NONE)))
    table.shoe.close()
    table.apply(CardDrawn(Card.parse("9S")))
    notices = table.apply(NewShoePressed())
    assert CardsSetAside(1, (Card.parse("9S"),)) in notices


def test_frames_of_another_protocol_version_raise_an_alarm_until_version_1_returns() -> None:
    from controller.game.table import Alarm, ShoeProtocol

    table = TableState()
    table.apply(ShoeProtocol(2))
    assert Alarm.SHOE_PROTOCOL_V2 in table.alarms
    table.apply(ShoeProtocol(1))
    assert Alarm.SHOE_PROTOCOL_V2 not in table.alarms
