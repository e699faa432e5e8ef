"""The simulated players' buy-ins: cash on sitting down and when the chips in front will not cover the coup's
wagers; a truth ``buy_in`` line for each, the same buy-in handed to the table, in the line the table's
``money.sock`` takes; a ``--bets`` script buys in nothing; and the buy-ins change neither cards nor wagers."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from controller.feed.messages import (
    KeyLine,
    PinLine,
    decode_money_reader,
    encode_buy_in,
    encode_key,
    encode_money,
    encode_pin,
)
from controller.game.cash import BuyIn, Tender
from controller.game.wagers import ApprovalView, MoneyView, Phase
from hw_sim.buy_in_line import BuyInLine, buy_in_line
from hw_sim.cli import main
from hw_sim.core import DealerMode, ShoeSimulator, SimConfig
from hw_sim.money import MoneyConfig, approve_line, key_line
from hw_sim.players import BUY_IN_UNIT, Bankrolls, ScriptedWagers
from tests.hw_sim.test_core import converse
from tests.hw_sim.test_money import run
from tests.waiting import until


def test_a_player_buys_in_on_sitting_down_and_again_when_low() -> None:
    b = Bankrolls(seed=1, minimum_cents=2_500)
    first = b.need(3, 2_500)
    assert first >= 25_000 and first % BUY_IN_UNIT == 0 and b.chips(3) == first  # ten minimums at least
    assert b.need(3, 2_500) == 0  # covered
    b.won(3, -(first - 1_000))  # lost all but $10
    again = b.need(3, 2_500)
    assert again >= 25_000 and b.chips(3) == 1_000 + again
    big = b.need(3, 10 * (1_000 + again))  # a wager beyond what is in front and any usual buy-in
    assert (b.chips(3) or 0) >= 10 * (1_000 + again) and big % BUY_IN_UNIT == 0
    b.left(3)
    assert b.chips(3) is None and b.need(3, 2_500) > 0  # the next player there sits down with cash


def test_every_buy_in_has_its_truth_line_and_goes_to_the_table() -> None:
    sim = run(MoneyConfig(players=6))
    assert sim.money is not None
    truth = sim.truth.of("buy_in")
    sent = sim.money.take_buy_ins()
    assert len(truth) >= 6  # every player sat down with cash
    assert [BuyIn(e["seat"], e["cents"], Tender(e["tender"]), e["player_ref"]) for e in truth] == sent
    assert {e["tender"] for e in truth} == {"cash"}
    # a carded player's buy-in is entered for the card in the seat's reader (its player_in's), an uncarded one's not
    cards = {(e["shoe"], e["seat"]): e["player_ref"] for e in sim.truth.of("player_in")}
    assert all(e["player_ref"] == cards.get((e["shoe"], e["seat"])) for e in truth)
    assert any(e["player_ref"] is not None for e in truth)
    assert all({"shoe", "coup", "t"} <= set(e) for e in truth)
    # each seat's first buy-in comes before its first wager
    for seat in {e["seat"] for e in truth}:
        first_buy = next(i for i, e in enumerate(sim.truth.events) if e["event"] == "buy_in" and e["seat"] == seat)
        first_wager = next(i for i, e in enumerate(sim.truth.events) if e["event"] == "wager" and e["seat"] == seat)
        assert first_buy < first_wager
    assert sim.money.take_buy_ins() == []  # taken once


def test_a_player_who_loses_buys_in_again() -> None:
    sim = run(MoneyConfig(players=9), decks=8)
    seats = [e["seat"] for e in sim.truth.of("buy_in")]
    assert len(seats) > len(set(seats)), "nobody bought in twice in an eight-deck shoe"


def test_scripted_bets_buy_in_nothing() -> None:
    from controller.game.rules import Bet
    from controller.game.settlement import Wager

    bets = (ScriptedWagers(1, 1, 2, (Wager(Bet.BANKER, 2_500),)),)
    sim = run(MoneyConfig(bets=bets))
    assert sim.truth.of("buy_in") == [] and sim.truth.of("wager")


def test_the_buy_ins_change_neither_the_cards_nor_the_wagers() -> None:
    with_buy_ins = run(MoneyConfig(players=6))
    without = ShoeSimulator(SimConfig(decks=2, seed=5, pace=0.0, dealer=DealerMode.SELF, money=MoneyConfig(players=6)))
    assert without.money is not None
    without.money.bankrolls = None  # nobody buys in
    converse(without)
    assert with_buy_ins.truth.of("buy_in") and not without.truth.of("buy_in")
    for event, fields in (("card", ("card",)), ("wager", ("seat", "bet", "stake")), ("payout", ("seat", "amount"))):
        assert [[e[f] for f in fields] for e in with_buy_ins.truth.of(event)] == [
            [e[f] for f in fields] for e in without.truth.of(event)
        ]


def test_the_simulators_line_is_the_one_the_table_reads() -> None:
    for b in [BuyIn(3, 500_000, Tender.CASH), BuyIn(9, 100, Tender.MARKER, "E0040150C0000007")]:
        assert buy_in_line(b) == encode_buy_in(b)
        assert decode_money_reader(buy_in_line(b).rstrip(b"\n")) == b
    # the supervisor's PIN and the card keyed: the feed's own lines, which the simulator writes without its encoders
    assert approve_line("482913") == encode_pin(PinLine("482913"))
    assert key_line("TH") == encode_key(KeyLine("TH")) and decode_money_reader(key_line("TH")) == KeyLine("TH")


def test_the_keyable_offer_is_read_from_the_money_line_and_forgotten_when_it_goes() -> None:
    line = BuyInLine(Path("/nonexistent/money.sock"))
    line._read_money(encode_money(MoneyView(Phase.LOCKED, keyable=True)).rstrip(b"\n"))
    assert line.keyable is True
    line._read_money(encode_money(MoneyView(Phase.LOCKED)).rstrip(b"\n"))
    assert line.keyable is False


def test_the_line_waits_for_the_table_and_then_sends_in_order(tmp_path: Path) -> None:
    path = tmp_path / "money.sock"
    line = BuyInLine(path)
    line.send([BuyIn(1, 10_000, Tender.CASH)], 0.0)  # no table yet: kept
    assert line.pending and line.sent == 0
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:
        line.send([BuyIn(2, 20_000, Tender.CASH)], 1.0)
        conn, _ = server.accept()
        conn.settimeout(2.0)
        got = b""
        while got.count(b"\n") < 2:
            got += conn.recv(4096)
        assert got == buy_in_line(BuyIn(1, 10_000, Tender.CASH)) + buy_in_line(BuyIn(2, 20_000, Tender.CASH))
        assert not line.pending and line.sent == 2
        conn.sendall(b'{"t":"money"}\n')  # the table's money lines are read and dropped
        line.readable()
        assert line.approval is None
        pending = ApprovalView("void", "VOID COUP", 1, 4, "D1", None, "")
        conn.sendall(encode_money(MoneyView(Phase.LOCKED, approval=pending)))
        until(lambda: (line.readable(), line.approval)[1] == pending, 5, "the approval kept")
        # noise is dropped, never a crash, and changes nothing: the table's next money line does
        conn.sendall(b'{"t":"money","view":[1]}\nnot json\n{"t":"money","view":{}}\n')
        line.readable()
        assert line.approval == pending
        conn.sendall(encode_money(MoneyView(Phase.LOCKED)))
        until(lambda: (line.readable(), line.approval)[1] is None, 5, "the approval gone")
        conn.close()
    finally:
        line.close()
        server.close()


@pytest.mark.parametrize(
    "args",
    [["--buy-ins", "/tmp/money.sock"], ["--bets", "BETS", "--buy-ins", "/tmp/money.sock"]],
    ids=["no players", "scripted bets"],
)
def test_buy_ins_without_players_exit_2_with_one_line(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bets = tmp_path / "bets.jsonl"
    bets.write_text('{"shoe": 1, "coup": 1, "seat": 1, "wagers": {"banker": "25.00"}}\n')
    args = [str(bets) if a == "BETS" else a for a in args]
    assert main(["--link", str(tmp_path / "shoe"), *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "shoe-sim: error: --buy-ins: the players buy in (--players N)\n"
    assert not (tmp_path / "shoe").exists()
