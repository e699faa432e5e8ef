"""The money's own channel: ``money.sock`` carries the table's MoneyView to the dealer screen; ``feed.sock``
(public, read by the scoreboard) and ``link.sock`` never carry a wager; no bet-spot reader, no money line.

Real Unix sockets, the real FeedServer and FeedClient; the MoneyView values are built by hand (tests/displays/
money_views.py) until the table's wager book fills ``TableView.money``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.feed.client import FeedClient
from controller.feed.messages import (
    MAX_CENTS,
    MAX_TEXT,
    FeedError,
    Money,
    TableMessage,
    _MoneyLine,
    _SeatLine,
    _SpotLine,
    decode_table,
    encode_money,
)
from controller.feed.server import FeedServer, FeedServerError
from controller.game.wagers import MoneyView, Phase, SeatView, SpotView
from tests.displays.money_views import betting, nine_seats, table_view
from tests.waiting import until

#: Fields only the money line has: none of them may ever be on the public or the link socket.
WAGER_FIELDS = (b"wager_cents", b"pay_cents", b"take_cents", b"box_cents", b"target_cents", b'"money"', b"seats")


class Raw:
    """A raw reader of one socket: every byte the table sent, as it came."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        self.sock.settimeout(0.05)
        self.data = bytearray()

    def drain(self, seconds: float = 0.2) -> bytes:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                break
            self.data += chunk
        return bytes(self.data)

    def close(self) -> None:
        self.sock.close()


class MoneyReader:
    def __init__(self, path: Path) -> None:
        self.got: list[TableMessage] = []
        self.ups: list[bool] = []
        self.lock = threading.Lock()
        self.client = FeedClient(
            path, self._on, on_connected=self.ups.append, name="money", money=True, backoff=0.01, backoff_max=0.05
        )
        self.client.start()

    def _on(self, message: TableMessage) -> None:
        with self.lock:
            self.got.append(message)

    def views(self) -> list[MoneyView]:
        with self.lock:
            return [m.view for m in self.got if isinstance(m, Money)]

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def feed_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir()
    return d


@pytest.fixture
def server(feed_dir: Path) -> Iterator[FeedServer]:
    s = FeedServer(feed_dir, reveal="on_read", metrics_text=lambda: "shoe_x 1\n", metrics_interval=0.05)
    s.start()
    yield s
    s.close()


def test_the_money_goes_to_the_money_socket_and_never_to_the_public_or_the_link(
    server: FeedServer, feed_dir: Path
) -> None:
    public, link = Raw(feed_dir / "feed.sock"), Raw(feed_dir / "link.sock")
    money_raw = Raw(feed_dir / "money.sock")
    reader = MoneyReader(feed_dir / "money.sock")
    try:
        until(lambda: server.readers == 4, 5, "four readers")
        for view in (betting(), nine_seats(Phase.LOCKED), nine_seats(), nine_seats(reader_up=False)):
            server.update(table_view(view), [])
        server.committed()
        until(lambda: len(reader.views()) == 4, 5, "four money views")
        assert reader.views() == [betting(), nine_seats(Phase.LOCKED), nine_seats(), nine_seats(reader_up=False)]
        seen_public, seen_link, seen_money = public.drain(), link.drain(), money_raw.drain()
        assert seen_public.count(b'"t":"update"') == 4 and seen_link.count(b'"t":"update"') == 4
        for field in WAGER_FIELDS:
            assert field not in seen_public, f"feed.sock carried {field!r}"
            assert field not in seen_link, f"link.sock carried {field!r}"
        lines = seen_money.splitlines()
        assert [json.loads(line)["t"] for line in lines] == ["money"] * 4, "money.sock carries money lines only"
        assert b"pay_cents" in seen_money and b"box_cents" in seen_money
    finally:
        reader.close()
        for r in (public, link, money_raw):
            r.close()


def test_no_reader_no_money_line(server: FeedServer, feed_dir: Path) -> None:
    """A table without a bet-spot reader (``TableView.money`` None) sends nothing on money.sock."""
    raw = Raw(feed_dir / "money.sock")
    try:
        until(lambda: server.readers == 1, 5, "the reader")
        for _ in range(3):
            server.update(table_view(None), [])
        assert raw.drain(0.3) == b""
    finally:
        raw.close()


def test_a_money_reader_gets_the_money_now_on_connecting_and_only_changes_after(
    server: FeedServer, feed_dir: Path
) -> None:
    server.update(table_view(nine_seats(Phase.LOCKED)), [])
    reader = MoneyReader(feed_dir / "money.sock")
    try:
        until(lambda: len(reader.views()) == 1, 5, "the money now")
        assert reader.views()[0] == nine_seats(Phase.LOCKED)
        server.update(table_view(nine_seats(Phase.LOCKED)), [])  # the same money: nothing sent
        server.update(table_view(nine_seats()), [])
        until(lambda: len(reader.views()) == 2, 5, "the change")
        time.sleep(0.1)
        assert reader.views()[-1] == nine_seats() and len(reader.views()) == 2
    finally:
        reader.close()


def test_a_public_reader_refuses_a_money_line(server: FeedServer) -> None:
    line = encode_money(nine_seats()).rstrip(b"\n")
    with pytest.raises(FeedError, match="must not carry wagers"):
        decode_table(line)
    message = decode_table(line, money=True)
    assert isinstance(message, Money) and message.view == nine_seats()


def test_a_money_reader_may_send_nothing(server: FeedServer, feed_dir: Path) -> None:
    raw = Raw(feed_dir / "money.sock")
    try:
        until(lambda: server.readers == 1, 5, "the reader")
        raw.sock.sendall(b'{"t":"ack"}\n')
        until(lambda: server.readers == 0, 5, "the reader dropped")
        assert server.stats["refused_lines"] == 1
    finally:
        raw.close()


def test_the_money_socket_is_0660_and_given_its_group(feed_dir: Path) -> None:
    s = FeedServer(feed_dir, reveal="on_read", money_group=os.getgid())
    s.start()
    try:
        st_ = os.stat(feed_dir / "money.sock")
        assert stat.S_IMODE(st_.st_mode) == 0o660 and st_.st_gid == os.getgid()
    finally:
        s.close()
    assert not (feed_dir / "money.sock").exists()


def test_a_money_group_that_does_not_exist_is_one_line_and_leaves_no_socket(feed_dir: Path) -> None:
    s = FeedServer(feed_dir, reveal="on_read", money_group="no-such-group-xq")
    with pytest.raises(FeedServerError, match=r"money\.sock: no group 'no-such-group-xq'"):
        s.start()
    s.close()
    assert sorted(os.listdir(feed_dir)) == []


def test_the_money_lines_model_is_the_views_shape() -> None:
    """One fact, one place: the validated line has exactly the view's fields (a field added to the view and not
    to the line would be refused on the wire)."""
    names = {f.name for f in dataclasses.fields(SpotView)}
    assert set(_SpotLine.model_fields) == names
    assert set(_SeatLine.model_fields) == {f.name for f in dataclasses.fields(SeatView)}
    assert set(_MoneyLine.model_fields) == {f.name for f in dataclasses.fields(MoneyView)}


def _body(view: MoneyView) -> dict[str, Any]:
    return dict(json.loads(encode_money(view))["view"])


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v["seats"][0]["spots"][0].update(pay_cents=-5),
        lambda v: v["seats"][0]["spots"][0].update(pay_cents=MAX_CENTS + 1),
        lambda v: v["seats"][0]["spots"][0].update(pay_cents="95"),
        lambda v: v["seats"][0]["spots"][0].update(state="stolen"),
        lambda v: v["seats"][0]["spots"][0].update(spot="roulette"),
        lambda v: v["seats"][0]["spots"][0].update(extra=1),
        lambda v: v["seats"][0].update(seat=15),
        lambda v: v["seats"][0].update(alarms=["x" * (MAX_TEXT + 1)]),
        lambda v: v.update(seats=v["seats"] * 2),
        lambda v: v.update(reader_up="yes"),
        lambda v: v.update(phase="dealing"),
        lambda v: v.pop("seats"),
    ],
)
def test_a_money_line_out_of_shape_is_refused(change: Callable[[dict[str, Any]], object]) -> None:
    body = _body(nine_seats())
    change(body)
    with pytest.raises(FeedError, match=r"^money: "):
        decode_table(json.dumps({"t": "money", "view": body}).encode(), money=True)


@given(st.binary(max_size=200))
def test_noise_on_the_money_socket_is_a_feed_error_never_a_crash(noise: bytes) -> None:
    with contextlib.suppress(FeedError):  # anything else (a TypeError, a RecursionError ...) fails the test
        decode_table(b'{"t":"money","view":' + noise + b"}", money=True)
