"""A buy-in entered on the dealer screen (``POST /api/buy-in``, controller/board/dealer.py): the money socket's
own ``buy_in`` line, checked by the table's rule (the bounds, then the table's seats), handed to the table at
once or refused in one line and counted; never queued. The server's own checks (its machine only, no other
site's page, JSON only, bounded) are tried over real HTTP in tests/e2e/test_dealer_buy_in_e2e.py."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from controller.board.dealer import DealerScreen, _loopback
from controller.feed.messages import encode_buy_in
from controller.game.cash import MAX_BUY_IN_CENTS, BuyIn, Tender


class Table:
    """What the board's money feed would do: take the buy-in (``up``) or not."""

    def __init__(self, up: bool = True) -> None:
        self.up = up
        self.got: list[BuyIn] = []

    def send(self, buy_in: BuyIn) -> bool:
        if self.up:
            self.got.append(buy_in)
        return self.up


def screen(seats: int = 7, table: Table | None = None) -> DealerScreen:
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=seats)
    if table is not None:
        s.send_buy_in = table.send
    return s


def test_a_buy_in_goes_to_the_table_as_entered_and_says_so() -> None:
    table = Table()
    s = screen(table=table)
    status, said = s.enter_buy_in(encode_buy_in(BuyIn(3, 500_000, Tender.CASH)))
    assert status == HTTPStatus.ACCEPTED
    assert said == "seat 3: buy-in $5,000 cash sent to the table"
    status, said = s.enter_buy_in(b'{"t":"buy_in","seat":7,"cents":2550,"tender":"chips","player_ref":null}')
    assert status == HTTPStatus.ACCEPTED and said == "seat 7: buy-in $25.50 chips sent to the table"
    assert table.got == [BuyIn(3, 500_000, Tender.CASH), BuyIn(7, 2_550, Tender.CHIPS)]
    assert s.stats["buy_ins_sent"] == 2 and s.stats["buy_ins_refused"] == 0


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'{"t":"buy_in","seat":8,"cents":100,"tender":"cash"}',
            "buy-in refused: seat 8 is not on this table (seats 1-7)",
        ),
        (b'{"t":"buy_in","seat":0,"cents":100,"tender":"cash"}', "buy-in refused: seat"),
        (b'{"t":"buy_in","seat":3,"cents":0,"tender":"cash"}', "buy-in refused: cents"),
        (b'{"t":"buy_in","seat":3,"cents":%d,"tender":"cash"}' % (MAX_BUY_IN_CENTS + 1), "buy-in refused: cents"),
        (b'{"t":"buy_in","seat":3,"cents":100,"tender":"cheque"}', "buy-in refused: tender"),
        (b'{"t":"buy_in","seat":3,"cents":100,"tender":"cash","player_ref":"nobody"}', "buy-in refused: player_ref"),
        (b'{"t":"ack","seat":3}', "buy-in refused: a money reader may only send buy_in"),
        (b"not json", "buy-in refused: "),
        (b"[1,2]", "buy-in refused: "),
    ],
)
def test_a_bad_buy_in_is_refused_in_one_line_and_counted(body: bytes, said: str) -> None:
    table = Table()
    s = screen(table=table)
    status, why = s.enter_buy_in(body)
    assert status == HTTPStatus.BAD_REQUEST
    assert why.startswith(said) and "\n" not in why and len(why) < 200, why
    assert table.got == [] and s.stats["buy_ins_refused"] == 1 and s.stats["buy_ins_sent"] == 0


def test_a_table_not_reached_is_said_and_nothing_waits_to_be_sent() -> None:
    table = Table(up=False)
    s = screen(table=table)
    status, why = s.enter_buy_in(encode_buy_in(BuyIn(3, 500_000, Tender.CASH)))
    assert (
        status == HTTPStatus.SERVICE_UNAVAILABLE and why == "buy-in NOT sent: the table is not reached; enter it again"
    )
    table.up = True
    status, _ = s.enter_buy_in(encode_buy_in(BuyIn(4, 100, Tender.CASH)))
    assert status == HTTPStatus.ACCEPTED
    assert table.got == [BuyIn(4, 100, Tender.CASH)]  # the one refused did not go later
    no_table = screen()
    assert no_table.enter_buy_in(encode_buy_in(BuyIn(3, 100, Tender.CASH)))[0] == HTTPStatus.SERVICE_UNAVAILABLE


def test_the_snapshot_says_how_many_seats_the_buy_in_offers() -> None:
    assert screen(seats=9).snapshot()["seat_count"] == 9


@pytest.mark.parametrize(
    ("address", "own"),
    [("127.0.0.1", True), ("127.5.0.1", True), ("::1", True), ("::ffff:127.0.0.1", True),
     ("192.168.1.20", False), ("::ffff:10.0.0.7", False), ("fe80::1", False), ("", False)],
)  # fmt: skip
def test_only_the_screens_own_machine_counts_as_its_own(address: str, own: bool) -> None:
    assert _loopback(address) is own
