"""Buy-ins in the pure core: a buy-in at a seat becomes its ``buy_in`` record, with the shoe and coup it came in;
one the table cannot take is refused in one line and gives no record."""

from __future__ import annotations

import pytest

from controller.game.bodies import BodyError, BuyInBody, InputBody
from controller.game.cards import Card
from controller.game.cash import MAX_BUY_IN_CENTS, BuyIn, BuyInTaken, Tender, buy_in_refusal
from controller.game.records import RecordKind, buy_in_input, derived_records, input_from_body
from controller.game.table import CardDrawn, NewShoePressed, TableRules, TableState
from tests.game.money import money, table_rules


def test_a_buy_in_between_coups_and_in_a_coup_carries_its_shoe_and_coup() -> None:
    state = TableState(table_rules(money(seats=7)))
    state.apply(NewShoePressed())  # no burn: the next card is the coup's first
    view = state.view()
    before = state.buy_in(BuyIn(3, 500_000, Tender.CASH, "E0040150C0001001"))
    assert state.view() == view  # a buy-in changes nothing of the game
    state.apply(CardDrawn(Card.parse("9H")))
    during = state.buy_in(BuyIn(7, 2_500, Tender.CHIPS))
    assert before == [BuyInTaken(1, 1, 3, 500_000, Tender.CASH, "E0040150C0001001")]
    assert during == [BuyInTaken(1, 1, 7, 2_500, Tender.CHIPS, None)]
    assert derived_records(before) == [
        (
            RecordKind.BUY_IN,
            {"shoe": 1, "coup": 1, "seat": 3, "cents": 500_000, "tender": "cash", "player_ref": "E0040150C0001001"},
        )
    ]
    body = derived_records(during)[0][1]
    assert body["player_ref"] is None and BuyInBody.parse(body).tender == "chips"


def test_a_buy_in_input_is_a_record_only() -> None:
    body = buy_in_input(BuyIn(9, 1, Tender.MARKER))
    assert body == {"kind": "buy_in", "seat": 9, "cents": 1, "tender": "marker", "player_ref": None}
    assert input_from_body(body) is None  # nothing replays it
    assert InputBody.parse(body).cents == 1
    with pytest.raises(BodyError, match="a buy_in input without tender"):
        InputBody.parse({"kind": "buy_in", "seat": 9, "cents": 1})


@pytest.mark.parametrize(
    ("buy_in", "said"),
    [
        (BuyIn(8, 100, Tender.CASH), "seat 8 is not on this table (seats 1-7)"),
        (BuyIn(0, 100, Tender.CASH), "seat 0 is not on this table"),
        (BuyIn(1, 0, Tender.CASH), "amount 0 cents is not 1 to"),
        (BuyIn(1, MAX_BUY_IN_CENTS + 1, Tender.CASH), "amount 100000001 cents"),
        (BuyIn(1, 100, "cheque"), "tender 'cheque' is not one of cash, chips, marker"),  # type: ignore[arg-type]  # a tender no Tender is, as a typo from elsewhere would give
        (BuyIn(1, 100, Tender.CASH, "P-1001"), "player_ref 'P-1001' is not a card's UID"),
        (BuyIn(1, 100, Tender.CASH, "e0040150c0001001"), "player_ref"),
    ],
)
def test_a_buy_in_the_table_cannot_take_is_refused_in_one_line(buy_in: BuyIn, said: str) -> None:
    reason = buy_in_refusal(buy_in, 7)
    assert reason is not None and said in reason and "\n" not in reason and reason.startswith("buy-in refused: ")
    state = TableState(table_rules(money(seats=7)))
    assert state.buy_in(buy_in) == []  # and no record


def test_a_table_without_a_reader_takes_a_buy_in_at_any_of_the_fourteen_seats() -> None:
    state = TableState(TableRules())
    assert [n.seat for n in state.buy_in(BuyIn(14, 100, Tender.CASH)) if isinstance(n, BuyInTaken)] == [14]
    assert buy_in_refusal(BuyIn(15, 100, Tender.CASH), state.seat_count) is not None


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"cents": 0}, "cents"),
        ({"tender": "cheque"}, "tender"),
        ({"player_ref": ""}, "player_ref"),
        ({"seat": 15}, "seat"),
    ],
)
def test_a_buy_in_body_out_of_shape_is_refused_naming_its_field(change: dict[str, object], said: str) -> None:
    good = {"shoe": 1, "coup": 2, "seat": 3, "cents": 100, "tender": "cash", "player_ref": None}
    assert BuyInBody.parse(good).cents == 100
    with pytest.raises(BodyError, match=f"buy_in body: {said}"):
        BuyInBody.parse(good | change)


def test_a_buy_in_without_a_player_is_the_seats_carded_players() -> None:
    from controller.game.seats import SeatCard

    state = TableState(table_rules(money(seats=7)))
    state.apply(NewShoePressed())
    state.apply(SeatCard(4, "E004015012345678", True))
    (seated,) = state.buy_in(BuyIn(4, 10_000, Tender.CASH))
    (named,) = state.buy_in(BuyIn(4, 10_000, Tender.CASH, "E0040150C0000009"))  # the entry's own word stands
    (empty,) = state.buy_in(BuyIn(5, 10_000, Tender.CASH))
    assert isinstance(seated, BuyInTaken) and seated.player_ref == "E004015012345678"
    assert isinstance(named, BuyInTaken) and named.player_ref == "E0040150C0000009"
    assert isinstance(empty, BuyInTaken) and empty.player_ref is None
