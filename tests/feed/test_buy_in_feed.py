"""A buy-in entered for a seat reaches the table on ``money.sock`` (the dealer screen's socket, the simulator's):
a ``buy_in`` line, bounded and validated, handed to the loop; one out of bounds is refused in one line and
counted, the reader kept; any other line from a money reader is refused and the reader dropped."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.feed.client import FeedClient
from controller.feed.messages import BuyInRefused, FeedError, decode_money_reader, encode_buy_in
from controller.feed.server import FeedServer
from controller.game.cash import MAX_BUY_IN_CENTS, BuyIn, Tender
from tests.waiting import until


@pytest.fixture
def got() -> list[BuyIn]:
    return []


@pytest.fixture
def server(tmp_path: Path, got: list[BuyIn]) -> Iterator[FeedServer]:
    s = FeedServer(tmp_path, reveal="on_read", on_buy_in=got.append)
    s.start()
    yield s
    s.close()


def test_a_buy_in_line_round_trips() -> None:
    for buy_in in [BuyIn(3, 500_000, Tender.CASH, "E0040150C0001001"), BuyIn(14, 1, Tender.MARKER)]:
        assert decode_money_reader(encode_buy_in(buy_in).rstrip(b"\n")) == buy_in


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"t":"buy_in","seat":15,"cents":100,"tender":"cash"}', "seat"),
        (b'{"t":"buy_in","seat":"3","cents":100,"tender":"cash"}', "seat"),
        (b'{"t":"buy_in","seat":3,"cents":0,"tender":"cash"}', "cents"),
        (b'{"t":"buy_in","seat":3,"cents":%d,"tender":"cash"}' % (MAX_BUY_IN_CENTS + 1), "cents"),
        (b'{"t":"buy_in","seat":3,"cents":100.5,"tender":"cash"}', "cents"),
        (b'{"t":"buy_in","seat":3,"cents":100,"tender":"cheque"}', "tender"),
        (b'{"t":"buy_in","seat":3,"cents":100,"tender":"cash","player_ref":"E0040150C000100"}', "player_ref"),
        (b'{"t":"buy_in","seat":3,"cents":100,"tender":"cash","extra":1}', "extra"),
        (b'{"t":"buy_in","seat":3,"tender":"cash"}', "cents"),
    ],
)
def test_a_buy_in_out_of_bounds_is_refused_naming_its_field(line: bytes, said: str) -> None:
    with pytest.raises(BuyInRefused, match=f"^buy_in: {said}") as caught:
        decode_money_reader(line)
    assert "\n" not in str(caught.value)


def test_a_money_reader_may_send_only_buy_ins() -> None:
    with pytest.raises(FeedError, match="may only send buy_in, approve, rate or key, not 'ack'") as caught:
        decode_money_reader(b'{"t":"ack"}')
    assert not isinstance(caught.value, BuyInRefused)


def test_buy_ins_reach_the_table_and_a_bad_one_costs_only_itself(
    server: FeedServer, tmp_path: Path, got: list[BuyIn]
) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(tmp_path / "money.sock"))
    try:
        until(lambda: server.readers == 1, 5, "the reader")
        sock.sendall(
            encode_buy_in(BuyIn(3, 500_000, Tender.CASH, "E0040150C0001001"))
            + b'{"t":"buy_in","seat":3,"cents":0,"tender":"cash"}\n'
            + encode_buy_in(BuyIn(4, 2_500, Tender.CHIPS))
        )
        until(lambda: len(got) == 2, 5, "the two good buy-ins")
        assert got == [BuyIn(3, 500_000, Tender.CASH, "E0040150C0001001"), BuyIn(4, 2_500, Tender.CHIPS)]
        assert server.stats["refused_lines"] == 1 and server.stats["buy_ins"] == 2 and server.readers == 1
        sock.sendall(b'{"t":"ack"}\n')  # not a money reader's line: refused, and the reader dropped
        until(lambda: server.readers == 0, 5, "the reader dropped")
        assert server.stats["refused_lines"] == 2 and len(got) == 2
    finally:
        sock.close()


def test_a_public_or_link_reader_cannot_send_a_buy_in(server: FeedServer, tmp_path: Path, got: list[BuyIn]) -> None:
    for name in ("feed.sock", "link.sock"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(tmp_path / name))
        try:
            until(lambda: server.readers == 1, 5, "the reader")
            sock.sendall(encode_buy_in(BuyIn(3, 500_000, Tender.CASH)))
            until(lambda: server.stats["refused_lines"] >= 1, 5, "the line refused")
        finally:
            sock.close()
        until(lambda: server.readers == 0, 5, "the reader gone")
    assert got == [] and server.stats["refused_lines"] == 2


def test_the_dealer_screens_client_sends_a_buy_in_at_once_or_says_it_could_not(
    server: FeedServer, tmp_path: Path, got: list[BuyIn]
) -> None:
    """:meth:`FeedClient.send_buy_in`: False while the table is not connected (nothing queued, so nothing arrives
    later), True once it is, and the table takes exactly what was sent; only a money reader may send one."""
    client = FeedClient(tmp_path / "money.sock", lambda _m: None, name="dealer-money", money=True)
    assert client.send_buy_in(BuyIn(2, 10_000, Tender.CASH)) is False  # not started: not connected
    client.start()
    try:
        until(lambda: client.connected and server.readers == 1, 5, "the dealer screen's connection")
        assert client.send_buy_in(BuyIn(3, 500_000, Tender.CASH)) is True
        assert client.send_buy_in(BuyIn(5, 2_500, Tender.MARKER)) is True
        until(lambda: len(got) == 2, 5, "the two buy-ins")
        assert got == [BuyIn(3, 500_000, Tender.CASH), BuyIn(5, 2_500, Tender.MARKER)]
        assert client.stats["buy_ins_sent"] == 2 and server.stats["buy_ins"] == 2
    finally:
        client.close()
    with pytest.raises(ValueError, match=r"only a reader of money\.sock"):
        FeedClient(tmp_path / "feed.sock", lambda _m: None).send_buy_in(BuyIn(3, 100, Tender.CASH))


def test_a_buy_in_line_out_of_bounds_is_told_to_the_tables_metrics(tmp_path: Path) -> None:
    refused: list[str] = []
    s = FeedServer(tmp_path, reveal="on_read", on_buy_in_refused=refused.append)
    s.start()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(tmp_path / "money.sock"))
        until(lambda: s.readers == 1, 5, "the reader")
        sock.sendall(b'{"t":"buy_in","seat":3,"cents":0,"tender":"cash"}\n')
        until(lambda: len(refused) == 1, 5, "the refusal told")
        assert refused[0].startswith("buy_in: cents") and s.readers == 1
    finally:
        sock.close()
        s.close()
