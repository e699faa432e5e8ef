"""sd_notify: the exact datagrams systemd receives, on a real AF_UNIX socket, and the watchdog period."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.config import default_settings
from controller.game.cards import Card
from controller.game.table import CardDrawn, LinkChanged, NewShoePressed, TableInput, TableState, TableView
from controller.notify import Notifier, StatusSink, status_line

_SUN_PATH_MAX = 107  # sizeof(sockaddr_un.sun_path) minus the terminating NUL


class Listener:
    """A bound datagram socket standing in for systemd's notification socket."""

    def __init__(self, sock: socket.socket, notify_socket: str) -> None:
        self.sock = sock
        self.notify_socket = notify_socket  # the NOTIFY_SOCKET value systemd would set

    def receive(self) -> bytes:
        self.sock.settimeout(5)  # only a guard against a hang; the datagram is already queued
        return self.sock.recv(4096)

    def assert_empty(self) -> None:
        self.sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            self.sock.recv(4096)


@pytest.fixture
def path_listener(tmp_path: Path) -> Iterator[Listener]:
    directory = tmp_path
    scratch = None
    if len(str(tmp_path / "notify")) > _SUN_PATH_MAX:  # a very long tmp_path cannot hold a socket
        scratch = directory = Path(tempfile.mkdtemp(prefix="sdn"))
    path = directory / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        yield Listener(sock, str(path))
    if scratch is not None:
        shutil.rmtree(scratch)


@pytest.fixture
def abstract_listener() -> Iterator[Listener]:
    name = f"shoe-controller-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        yield Listener(sock, "@" + name)


@pytest.fixture(params=["path", "abstract"])
def listener(request: pytest.FixtureRequest) -> Listener:
    fixture = "path_listener" if request.param == "path" else "abstract_listener"
    result: Listener = request.getfixturevalue(fixture)
    return result


@pytest.mark.parametrize(
    ("send", "expected"),
    [
        (Notifier.ready, b"READY=1"),
        (Notifier.watchdog, b"WATCHDOG=1"),
        (Notifier.stopping, b"STOPPING=1"),
    ],
)
def test_each_state_is_one_exact_datagram(
    listener: Listener, send: Callable[[Notifier], bool], expected: bytes
) -> None:
    with Notifier({"NOTIFY_SOCKET": listener.notify_socket}) as notifier:
        assert notifier.enabled
        assert send(notifier) is True
        assert listener.receive() == expected
        listener.assert_empty()


def test_status_is_sent_as_utf8(listener: Listener) -> None:
    with Notifier({"NOTIFY_SOCKET": listener.notify_socket}) as notifier:
        assert notifier.status("shoe 3, coup 41 — banker third due")
        assert listener.receive() == "STATUS=shoe 3, coup 41 — banker third due".encode()


def test_status_with_line_breaks_stays_one_assignment(path_listener: Listener) -> None:
    # A newline would start a new KEY=value line and could smuggle in e.g. READY=1.
    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        notifier.status("LINK DOWN\nREADY=1\r\ncheck the cable")
        assert path_listener.receive() == b"STATUS=LINK DOWN READY=1 check the cable"


def test_daemon_lifecycle_arrives_in_order(path_listener: Listener) -> None:
    """What the daemon sends around a SIGTERM: READY, STATUS, pings, then STOPPING from its finally."""

    def serve(notifier: Notifier) -> None:
        try:
            notifier.ready()
            notifier.status("shoe 1, coup 1: deal")
            notifier.watchdog()
            notifier.watchdog()
            raise SystemExit(0)  # what the daemon's SIGTERM handler does
        finally:
            notifier.stopping()

    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        with pytest.raises(SystemExit):
            serve(notifier)
        received = [path_listener.receive() for _ in range(5)]
    expected = [b"READY=1", b"STATUS=shoe 1, coup 1: deal", b"WATCHDOG=1", b"WATCHDOG=1", b"STOPPING=1"]
    assert received == expected


def test_reads_notify_socket_from_the_process_environment(
    path_listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", path_listener.notify_socket)
    with Notifier() as notifier:
        notifier.ready()
    assert path_listener.receive() == b"READY=1"


@pytest.mark.parametrize("value", [None, "", "relative/notify", "@", "/", "vsock:2:1234"])
def test_no_usable_socket_is_a_silent_no_op(
    path_listener: Listener, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    """Run from a shell (no NOTIFY_SOCKET) every call does nothing and raises nothing."""
    if value is None:
        monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
        notifier = Notifier()
    else:
        notifier = Notifier({"NOTIFY_SOCKET": value})
    assert not notifier.enabled
    assert notifier.ready() is False
    assert notifier.watchdog() is False
    assert notifier.status("x") is False
    assert notifier.stopping() is False
    notifier.close()
    path_listener.assert_empty()


def test_a_vanished_socket_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # systemd restarted or the socket was removed: the table must keep dealing.
    path = tmp_path / "gone"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
    path.unlink()
    with Notifier({"NOTIFY_SOCKET": str(path)}) as notifier, caplog.at_level(logging.WARNING):
        assert notifier.enabled
        assert notifier.watchdog() is False
    assert "WATCHDOG=1" in caplog.text


def test_after_close_nothing_is_sent(path_listener: Listener) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": path_listener.notify_socket})
    notifier.close()
    assert notifier.ready() is False
    path_listener.assert_empty()


# -- the watchdog period -------------------------------------------------------------------------------


@given(usec=st.integers(min_value=1, max_value=10**12))
def test_watchdog_interval_is_half_the_timeout(usec: int) -> None:
    interval = Notifier({"WATCHDOG_USEC": str(usec)}, pid=42).watchdog_interval()
    assert interval == usec / 2_000_000
    assert interval is not None and 0 < interval * 2_000_000 <= usec * 1.000001


def test_watchdog_sec_10_means_a_ping_every_5_seconds() -> None:
    assert Notifier({"WATCHDOG_USEC": "10000000"}).watchdog_interval() == 5.0


@given(pid=st.integers(min_value=1, max_value=2**22), other=st.integers(min_value=1, max_value=2**22))
def test_watchdog_belongs_to_the_pid_systemd_named(pid: int, other: int) -> None:
    env = {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(other)}
    expected = 5.0 if pid == other else None
    assert Notifier(env, pid=pid).watchdog_interval() == expected


def test_watchdog_pid_defaults_to_our_own_pid() -> None:
    env = {"WATCHDOG_USEC": "4000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier(env).watchdog_interval() == 2.0
    env["WATCHDOG_PID"] = str(os.getpid() + 1)
    assert Notifier(env).watchdog_interval() is None


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"WATCHDOG_USEC": ""},
        {"WATCHDOG_USEC": "0"},
        {"WATCHDOG_USEC": "-5"},
        {"WATCHDOG_USEC": "ten seconds"},
        {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "not-a-pid"},
        {"WATCHDOG_PID": "42"},
    ],
)
def test_no_watchdog_without_a_valid_timeout(env: dict[str, str]) -> None:
    assert Notifier(env, pid=42).watchdog_interval() is None


# -- the Status: line ------------------------------------------------------------------------------------


def _state_after(*tokens: str, link_down: bool = False) -> TableView:
    """A table after NEW SHOE, the exposed burn card 2C and two more burn cards, then *tokens* dealt."""
    state = TableState(default_settings().table_rules())
    events: list[TableInput] = [NewShoePressed(), *(CardDrawn(Card.parse(t)) for t in ("2C", "5D", "6D", *tokens))]
    for event in events:
        state.apply(event)
    if link_down:
        state.apply(LinkChanged(False))
    return state.view()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _status_datagrams(listener: Listener) -> list[bytes]:
    out = []
    listener.sock.setblocking(False)
    while True:
        try:
            out.append(listener.sock.recv(4096))
        except BlockingIOError:
            return out


def test_status_line_names_shoe_coup_due_and_alarms() -> None:
    assert status_line(_state_after()) == "shoe 1, coup 1: deal"
    assert status_line(_state_after("9H", "8S")) == "shoe 1, coup 1: deal (2 of 4 cards)"
    assert status_line(_state_after("4H", "3S", "QH", "3C")) == "shoe 1, coup 1: player third due"
    assert status_line(_state_after("4H", "3S", "QH", "3C", "6S")) == "shoe 1, coup 1: banker third due"
    assert status_line(_state_after(link_down=True)) == "shoe 1, coup 1: deal | LINK DOWN"


def test_status_line_under_squeeze_tells_no_undeclared_result() -> None:
    # P 4+10 = 4, B 3+3 = 6: the player draws; "player third due" would give the totals away.
    assert status_line(_state_after("4H", "3S", "QH", "3C"), hide_cards=True) == "shoe 1, coup 1: 4 cards dealt"
    assert status_line(_state_after("4H", "3S", "QH", "3C", "6S"), hide_cards=True) == "shoe 1, coup 1: 5 cards dealt"
    natural = _state_after("9H", "8S", "QH", "7C")  # P 9 natural: declare due, player wins
    assert status_line(natural, hide_cards=True) == "shoe 1, coup 1: 4 cards dealt"
    assert status_line(natural) == "shoe 1, coup 1: declare due"


def test_status_sink_sends_each_change_once(path_listener: Listener) -> None:
    clock = Clock()
    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        sink = StatusSink(notifier, min_interval=0.25, clock=clock)
        sink.update(_state_after(), [])
        clock.now += 1
        sink.update(_state_after(), [])  # the same line: nothing sent
        sink.update(_state_after(link_down=True), [])
        clock.now += 1
        sink.update(_state_after("9H"), [])
    assert _status_datagrams(path_listener) == [
        b"STATUS=shoe 1, coup 1: deal",
        b"STATUS=shoe 1, coup 1: deal | LINK DOWN",
        b"STATUS=shoe 1, coup 1: deal (1 of 4 cards)",
    ]


def test_status_sink_throttles_a_fast_shoe_and_sends_the_newest_on_tick(path_listener: Listener) -> None:
    clock = Clock()
    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        sink = StatusSink(notifier, min_interval=0.25, clock=clock)
        sink.update(_state_after(), [])
        for tokens in (("9H",), ("9H", "8S"), ("9H", "8S", "QH")):  # three cards within 30 ms
            clock.now += 0.01
            sink.update(_state_after(*tokens), [])
        sink.tick()
        assert _status_datagrams(path_listener) == [b"STATUS=shoe 1, coup 1: deal"]
        clock.now += 0.25
        sink.tick()  # the interval is over: the newest line, not the ones in between
        sink.tick()
    assert _status_datagrams(path_listener) == [b"STATUS=shoe 1, coup 1: deal (3 of 4 cards)"]
    assert sink.sent == 2


def test_status_sink_drops_a_change_that_was_undone_before_it_went_out(path_listener: Listener) -> None:
    clock = Clock()
    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        sink = StatusSink(notifier, min_interval=0.25, clock=clock)
        sink.update(_state_after(), [])
        sink.update(_state_after(link_down=True), [])  # a blink of LINK DOWN within the interval ...
        sink.update(_state_after(), [])  # ... over before it could be sent
        clock.now += 1
        sink.tick()
    assert _status_datagrams(path_listener) == [b"STATUS=shoe 1, coup 1: deal"]


def test_the_status_line_names_the_readers_link_only_at_a_table_with_one() -> None:
    from controller.game.table import TableRules
    from controller.game.wagers import MoneyRules, ReaderLinkChanged

    plain = TableState()
    assert "reader" not in status_line(plain.view())
    state = TableState(TableRules(money=MoneyRules()))
    state.apply(NewShoePressed())
    assert status_line(state.view()).endswith(" | reader up")
    state.apply(ReaderLinkChanged(False))
    assert status_line(state.view()).endswith(" | reader down")
    state.apply(LinkChanged(False))
    assert status_line(state.view()).endswith(" | LINK DOWN | reader down")
