"""A supervisor's PIN entered at the dealer screen reaches the table on ``money.sock``: an ``approve`` line of 4 to
12 digits handed to the loop; anything else refused in one line that never repeats what was sent, counted, and the
reader kept; the dealer screen's client sends one at once or says it could not."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.feed.client import FeedClient
from controller.feed.messages import (
    FeedError,
    PinLine,
    PinRefused,
    RateLine,
    decode_money_reader,
    encode_pin,
    encode_rate,
)
from controller.feed.server import FeedServer
from tests.waiting import until


@pytest.fixture
def pins() -> list[str]:
    return []


@pytest.fixture
def server(tmp_path: Path, pins: list[str]) -> Iterator[FeedServer]:
    s = FeedServer(tmp_path, reveal="on_read", on_pin=pins.append)
    s.start()
    yield s
    s.close()


def test_a_pin_line_round_trips_and_its_repr_hides_the_pin() -> None:
    line = encode_pin(PinLine("0042"))
    assert line == b'{"t":"approve","pin":"0042"}\n'
    assert decode_money_reader(line) == PinLine("0042")
    assert "0042" not in repr(PinLine("0042"))


@pytest.mark.parametrize(
    "line",
    [
        b'{"t":"approve","pin":"123"}',
        b'{"t":"approve","pin":"1234567890123"}',
        b'{"t":"approve","pin":"12a4"}',
        b'{"t":"approve","pin":1234}',
        b'{"t":"approve","pin":"1234","more":1}',
        b'{"t":"approve"}',
    ],
    ids=["short", "long", "letter", "number", "extra", "none"],
)
def test_a_pin_out_of_shape_is_refused_without_saying_it(line: bytes) -> None:
    with pytest.raises(PinRefused) as caught:
        decode_money_reader(line)
    assert str(caught.value) == "approve: a PIN is 4 to 12 digits"


def test_pins_reach_the_table_and_a_bad_one_costs_only_itself(
    server: FeedServer, tmp_path: Path, pins: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(tmp_path / "money.sock"))
    caplog.set_level(logging.DEBUG)
    try:
        until(lambda: server.readers == 1, 5, "the reader")
        sock.sendall(encode_pin(PinLine("482913")) + b'{"t":"approve","pin":"98x7"}\n' + encode_pin(PinLine("0000")))
        until(lambda: len(pins) == 2, 5, "the two PINs")
        assert pins == ["482913", "0000"]
        assert server.stats["pins"] == 2 and server.stats["refused_lines"] == 1 and server.readers == 1
    finally:
        sock.close()
    assert not [r for r in caplog.records if "482913" in r.getMessage() or "98x7" in r.getMessage()]


def test_the_dealer_screens_client_sends_a_pin_at_once_or_says_it_could_not(
    server: FeedServer, tmp_path: Path, pins: list[str]
) -> None:
    client = FeedClient(tmp_path / "money.sock", lambda _m: None, name="dealer-money", money=True)
    assert client.send_pin(PinLine("1234")) is False  # not connected: nothing queued
    client.start()
    try:
        until(lambda: client.connected and server.readers == 1, 5, "the dealer screen's connection")
        assert client.send_pin(PinLine("482913")) is True
        until(lambda: pins == ["482913"], 5, "the PIN")
        assert client.stats["pins_sent"] == 1
    finally:
        client.close()
    with pytest.raises(ValueError, match=r"only a reader of money\.sock"):
        FeedClient(tmp_path / "feed.sock", lambda _m: None).send_pin(PinLine("1234"))


@pytest.mark.parametrize(
    ("line", "said"),
    [(b'{"t":"rate","seat":0}', "rate: seat"), (b'{"t":"rate","seat":"3"}', "rate: seat"), (b'{"t":"rate"}', "rate")],
    ids=["zero", "text", "none"],
)
def test_a_rate_line_out_of_bounds_is_refused_naming_its_field(line: bytes, said: str) -> None:
    with pytest.raises(FeedError, match=said):
        decode_money_reader(line)


def test_a_rate_line_reaches_the_table(tmp_path: Path) -> None:
    seats: list[int] = []
    buy_ins_refused: list[str] = []
    s = FeedServer(tmp_path, reveal="on_read", on_rate=seats.append, on_buy_in_refused=buy_ins_refused.append)
    s.start()
    client = FeedClient(tmp_path / "money.sock", lambda _m: None, name="dealer-money", money=True)
    client.start()
    try:
        until(lambda: client.connected and s.readers == 1, 5, "the dealer screen's connection")
        assert encode_rate(RateLine(3)) == b'{"t":"rate","seat":3}\n'
        assert client.send_rate(RateLine(3)) is True
        until(lambda: seats == [3], 5, "the rating")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(tmp_path / "money.sock"))
        try:
            sock.sendall(b'{"t":"rate","seat":99}\n' + encode_rate(RateLine(5)))  # out of bounds: refused, not a buy-in
            until(lambda: seats == [3, 5], 5, "the next rating on the same connection")
        finally:
            sock.close()
        assert s.stats["refused_lines"] == 1 and s.stats["rates"] == 2 and buy_ins_refused == []
    finally:
        client.close()
        s.close()


def test_a_key_line_reaches_the_table_and_one_that_is_no_card_is_refused_and_counted(tmp_path: Path) -> None:
    from controller.feed.messages import KeyLine, encode_key

    cards: list[str] = []
    s = FeedServer(tmp_path, reveal="on_read", on_key=cards.append)
    s.start()
    client = FeedClient(tmp_path / "money.sock", lambda _m: None, name="dealer-money", money=True)
    client.start()
    try:
        until(lambda: client.connected and s.readers == 1, 5, "the dealer screen's connection")
        assert encode_key(KeyLine("QD")) == b'{"t":"key","card":"QD"}\n'
        assert client.send_key(KeyLine("QD")) is True
        until(lambda: cards == ["QD"], 5, "the card keyed")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(tmp_path / "money.sock"))
        try:
            sock.sendall(b'{"t":"key","card":"ZZ"}\n' + encode_key(KeyLine("2C")))  # no card: refused, reads on
            until(lambda: cards == ["QD", "2C"], 5, "the next card keyed on the same connection")
        finally:
            sock.close()
        assert s.stats["refused_lines"] == 1 and s.stats["keys"] == 2
    finally:
        client.close()
        s.close()
