"""The money reaches the dealer screen and never the public: a real ``shoe-controller board`` process fed by the
table's three sockets (the table's real :class:`FeedServer`, here in the test's process, handed views that carry
a hand-built 9-seat MoneyView, as ``TableView.money`` will). The public scoreboard's ``/api/state`` and
``/events`` never carry a wager field; the dealer screen's own listener does; a table without a bet-spot
reader gives "no_reader"; a table gone gives "offline"."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.feed.server import FeedServer
from controller.game.cards import Card
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, DeclarePressed, NewShoePressed, TableRules, TableState
from controller.game.wagers import Phase
from tests.displays.money_views import nine_seats, with_money
from tests.servers import free_port
from tests.waiting import until

pytestmark = pytest.mark.e2e

WAGER_FIELDS = (b"wager_cents", b"pay_cents", b"take_cents", b"box_cents", b"target_cents", b"PAY $", b"TAKE")


def get(port: int, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as resp:
        return dict(json.loads(resp.read()))


def stream_bytes(port: int, seconds: float) -> bytes:
    """What ``/events`` sends in ``seconds``."""
    got = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
        s.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
    return bytes(got)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[FeedServer, Path]]:
    run = tmp_path / "run"
    run.mkdir()
    feed = FeedServer(run, reveal="on_read")
    feed.start()
    try:
        yield feed, run
    finally:
        feed.close()


@pytest.fixture
def board(tmp_path: Path, table: tuple[FeedServer, Path]) -> Iterator[tuple[int, int]]:
    _feed, run = table
    public, dealer = free_port(), free_port()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[table]\nname = "Dealer Table"\n\n[scoreboard]\nbind = "127.0.0.1:{public}"\n\n'
        '[board]\ndealer_listen = "127.0.0.1:1"\n'  # overridden by --dealer below
    )
    log = (tmp_path / "board.log").open("wb")
    cmd = [sys.executable, "-m", "controller.cli", "board", "--config", str(config), "--feed-dir", str(run)]
    cmd += ["--dealer", f"127.0.0.1:{dealer}"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        until(lambda: _answers(public) and _answers(dealer), 20, "the board's two listeners")
        yield public, dealer
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        assert b"Traceback" not in (tmp_path / "board.log").read_bytes()


def _answers(port: int) -> bool:
    try:
        get(port, "/api/state")
    except OSError:
        return False
    return True


def test_the_dealer_screen_gets_the_money_and_the_scoreboard_never_does(
    table: tuple[FeedServer, Path], board: tuple[int, int]
) -> None:
    feed, _run = table
    public, dealer = board
    state = TableState(TableRules(decks=8, burn_rule=BurnRule(mode=BurnMode.NONE)))
    state.apply(NewShoePressed())
    until(lambda: feed.readers == 2, 10, "the board's two readers (feed.sock, money.sock)")
    for money, token in ((nine_seats(Phase.LOCKED), "2H"), (nine_seats(), "3S")):
        notices = state.apply(CardDrawn(Card.parse(token)))
        feed.update(with_money(state.view(), money), notices)
    until(lambda: get(dealer, "/api/state")["phase"] == "payout", 10, "the dealer screen's payout")
    screen = get(dealer, "/api/state")
    assert screen["state"] == "money" and [s["seat"] for s in screen["seats"]] == list(range(1, 10))
    actions = {(s["seat"], p["spot"]): p["action"] for s in screen["seats"] for p in s["spots"]}
    assert actions[(1, "banker")] == "PAY $95" and actions[(8, "player")] == "TAKE $5,000"
    until(lambda: get(public, "/api/state")["coup"].get("player") == ["2H"], 10, "the scoreboard's card")
    scoreboard = json.dumps(get(public, "/api/state")).encode()
    events = stream_bytes(public, 0.5)
    assert b"2H" in events
    for field in WAGER_FIELDS:
        assert field not in scoreboard, f"the scoreboard's state carried {field!r}"
        assert field not in events, f"the scoreboard's stream carried {field!r}"
    dealer_events = stream_bytes(dealer, 0.5)
    assert b"PAY $95" in dealer_events and b"box" in dealer_events


def test_the_dealer_screen_says_which_coup_and_who_won(table: tuple[FeedServer, Path], board: tuple[int, int]) -> None:
    """The board hands the dealer screen the shoe, the coup and the last result from the public feed it follows
    for the scoreboard; the money comes on its own socket."""
    feed, _run = table
    _public, dealer = board
    state = TableState(TableRules(decks=8, burn_rule=BurnRule(mode=BurnMode.NONE)))
    until(lambda: feed.readers == 2, 10, "the board's two readers (feed.sock, money.sock)")
    feed.update(with_money(state.view(), nine_seats(Phase.BETTING)), state.apply(NewShoePressed()))
    until(lambda: get(dealer, "/api/state")["coup_text"] == "SHOE 1 · COUP 1", 10, "the dealer screen's coup")
    assert get(dealer, "/api/state")["result_text"] == "NO RESULT YET"
    for token in ("KD", "9H", "QS", "KS"):  # Player 0, Banker 9
        feed.update(with_money(state.view(), nine_seats(Phase.LOCKED)), state.apply(CardDrawn(Card.parse(token))))
    feed.update(with_money(state.view(), nine_seats()), state.apply(DeclarePressed()))
    until(lambda: get(dealer, "/api/state")["result_text"] == "Banker wins · P 0 – B 9", 10, "the result")
    screen = get(dealer, "/api/state")
    assert (screen["phase"], screen["coup_text"], screen["winner"]) == ("payout", "SHOE 1 · COUP 1", "banker")
    feed.update(with_money(state.view(), nine_seats(Phase.BETTING)), ())  # the next coup's bets
    until(lambda: get(dealer, "/api/state")["coup_text"] == "SHOE 1 · COUP 2", 10, "the next coup")
    assert get(dealer, "/api/state")["result_text"] == "LAST: Banker wins · P 0 – B 9"


def test_no_bet_spot_reader_then_the_table_gone(table: tuple[FeedServer, Path], board: tuple[int, int]) -> None:
    feed, _run = table
    _public, dealer = board
    until(lambda: feed.readers == 2, 10, "the board's two readers")
    feed.update(TableState().view(), [])  # a table without a reader: no money line
    until(lambda: get(dealer, "/api/state")["state"] == "no_reader", 10, "no bet-spot reader")
    feed.close()
    until(lambda: get(dealer, "/api/state")["state"] == "offline", 10, "the table offline")


def _board(tmp_path: Path, run: Path, public: int, *extra: str) -> tuple[subprocess.Popen[bytes], Path]:
    config = tmp_path / "config.toml"
    config.write_text(f'[scoreboard]\nbind = "127.0.0.1:{public}"\n')
    log = tmp_path / "board.log"
    cmd = [sys.executable, "-m", "controller.cli", "board", "--config", str(config), "--feed-dir", str(run), *extra]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    return proc, log


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_a_dealer_port_taken_costs_the_scoreboard_nothing(tmp_path: Path, table: tuple[FeedServer, Path]) -> None:
    feed, run = table
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    public = free_port()
    proc, log = _board(tmp_path, run, public, "--dealer", f"127.0.0.1:{taken.getsockname()[1]}")
    try:
        until(lambda: _answers(public), 20, "the scoreboard")
        until(lambda: b"dealer screen: cannot bind" in log.read_bytes(), 10, "the dealer screen's one line")
        until(lambda: feed.readers == 1, 10, "the board's public reader only")  # no money reader without a screen
        assert proc.poll() is None
    finally:
        _stop(proc)
        taken.close()
    assert b"Traceback" not in log.read_bytes()


def test_no_dealer_screen_when_told_none(tmp_path: Path, table: tuple[FeedServer, Path]) -> None:
    feed, run = table
    public = free_port()
    proc, log = _board(tmp_path, run, public, "--dealer", "")
    try:
        until(lambda: _answers(public), 20, "the scoreboard")
        until(lambda: feed.readers == 1, 10, "the board's public reader")
        time.sleep(0.3)
        assert feed.readers == 1 and b"dealer screen" not in log.read_bytes()
    finally:
        _stop(proc)
