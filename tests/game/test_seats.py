"""The players at the seats (controller/game/seats.py): visits opened and ended by the seats' card readers, a
card left in a reader, and the seats through the table state and its replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.records import derived_records, input_body, input_from_body
from controller.game.replay import replay
from controller.game.seats import LeaveWhy, PlayerIn, PlayerOut, SeatBook, SeatCard, player_ref
from controller.game.table import DeclarePressed, NewShoePressed, TableInput, TableState
from controller.game.wagers import Spot, SpotSeen
from controller.journal import Journal
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.game.money import Chips, cards, money, table_rules

A, B = "00000000A1B2C3D4", "0004A1B2C3D4E5F6"


def test_a_card_in_opens_a_visit_and_the_card_out_ends_it() -> None:
    book = SeatBook(9, 3)
    assert book.card(SeatCard(3, A, True), 1, 4) == [PlayerIn(1, 4, 3, A)]
    assert book.players() == {3: A}
    assert book.card(SeatCard(3, A, True), 1, 4) == []  # repeated after a reader's HELLO: no news
    assert book.card(SeatCard(3, B, False), 1, 5) == []  # not the card the seat holds
    assert book.card(SeatCard(3, A, False), 1, 6) == [PlayerOut(1, 6, 3, A, LeaveWhy.CARD_OUT)]
    assert book.players() == {}
    assert book.card(SeatCard(3, A, False), 1, 6) == []


def test_another_card_at_a_seat_ends_the_first_visit() -> None:
    book = SeatBook(9, 3)
    book.card(SeatCard(2, A, True), 1, 1)
    assert book.card(SeatCard(2, B, True), 1, 2) == [
        PlayerOut(1, 2, 2, A, LeaveWhy.CARD_REPLACED),
        PlayerIn(1, 2, 2, B),
    ]


def test_a_seat_this_table_does_not_have_changes_nothing() -> None:
    assert SeatBook(7, 3).card(SeatCard(9, A, True), 1, 1) == []


def test_a_card_left_in_a_reader_ends_the_visit_after_leave_after_coups_locks_without_a_wager() -> None:
    book = SeatBook(9, 2)
    book.card(SeatCard(5, A, True), 1, 1)
    assert book.locked(1, 1, set()) == []
    assert book.locked(1, 2, {5}) == []  # a wager: the count starts again
    assert book.locked(1, 3, set()) == []
    [out] = book.locked(1, 4, set())
    assert isinstance(out, PlayerOut) and out.reason is LeaveWhy.SEAT_EMPTY and out.note
    assert (out.seat, out.player_ref, out.coup) == (5, A, 4)
    assert book.players() == {} and book.locked(1, 5, set()) == []
    assert book.card(SeatCard(5, A, True), 1, 5) == []  # still the card left there: no new visit
    assert book.card(SeatCard(5, A, False), 1, 6) == []  # taken out at last: the visit had ended
    assert book.card(SeatCard(5, A, True), 1, 6) == [PlayerIn(1, 6, 5, A)]


def test_a_new_shoe_keeps_the_seats_and_counts_the_empty_coups_again() -> None:
    book = SeatBook(9, 2)
    book.card(SeatCard(5, A, True), 1, 1)
    book.locked(1, 1, set())
    book.shoe_started()
    assert book.locked(2, 1, set()) == []
    again = SeatBook.at_shoe_start(9, 2, book.carried())
    assert again.carried() == book.carried() == ({"seat": 5, "player_ref": A, "playing": True},)


def test_a_card_uid_is_16_upper_case_hex_digits_and_is_the_player_ref() -> None:
    assert player_ref(A) == A
    for bad in ("a1b2c3d4", "00000000a1b2c3d4", "00000000A1B2C3DZ"):
        with pytest.raises(ValueError, match="16 upper-case hex"):
            SeatCard(1, bad, True)


def _table_events() -> list[TableInput]:
    chips = Chips()
    return [
        NewShoePressed(),
        SeatCard(3, A, True),
        SeatCard(6, B, True),
        SpotSeen(3, Spot.PLAYER, chips(2500)),
        *cards(("9H", "KD", "KS", "QS")),
        DeclarePressed(),
    ]


def test_the_table_ends_a_visit_at_a_lock_without_its_wager_and_journals_each_visit() -> None:
    state = TableState(table_rules(money(leave_after_coups=1)))
    notices = [n for e in _table_events() for n in state.apply(e)]
    kinds = [(k.value, b["seat"], b.get("reason")) for k, b in derived_records(notices) if k.value.startswith("p")]
    assert kinds == [("player_in", 3, None), ("player_in", 6, None), ("player_out", 6, "seat_empty")]
    assert state.seats is not None and state.seats.players() == {3: A}


def test_a_replay_of_the_inputs_rebuilds_the_seats() -> None:
    rules = table_rules(money(leave_after_coups=1))
    events = _table_events()
    state = replay(rules, [input_body(e) for e in events]).state
    assert state.seats is not None and state.seats.players() == {3: A}


@given(st.integers(1, 14), st.sampled_from([A, B]), st.booleans())
def test_a_seat_card_input_round_trips_through_its_body(seat: int, uid: str, present: bool) -> None:
    event = SeatCard(seat, uid, present)
    assert input_from_body(input_body(event, seq=7)) == event


def test_a_restart_after_a_new_shoe_keeps_the_players_seated(tmp_path: Path) -> None:
    """The replay of a restart begins at the newest shoe's start: its start record carries the cards in the
    seats' readers (``players``), so the visits go on and nothing is journaled twice."""
    rules = table_rules(money(leave_after_coups=1))
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(TableState(rules), journal, [ShoePort(AsciiWire(), lambda data: None)], config=LoopConfig())
        for event in [*_table_events(), SeatCard(8, B, True), NewShoePressed()]:
            loop._apply(event, input_body(event), None, None)
        loop.flush()
        before = loop.state.seats
        assert before is not None and before.players() == {3: A, 8: B}
        [start] = [json.loads(r.body) for r in journal.records() if r.kind == "shoe" and '"start"' in r.body][-1:]
        assert start["players"] == [
            {"seat": 3, "player_ref": A, "playing": True},
            {"seat": 6, "player_ref": B, "playing": False},  # left in its reader: no visit
            {"seat": 8, "player_ref": B, "playing": True},
        ]
        again = TableLoop(TableState(rules), journal, [ShoePort(AsciiWire(), lambda data: None)], config=LoopConfig())
        again.replay()
        assert again.state.seats is not None and again.state.seats.carried() == before.carried()
