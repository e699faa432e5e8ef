"""The table's feed over real Unix sockets: hello then updates, the squeeze applied before the socket, acks
from the link socket only, a slow reader dropped without the table waiting, hostile lines refused."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.feed.client import FeedClient
from controller.feed.messages import (
    MAX_LINE,
    Ack,
    Commit,
    FeedError,
    Hello,
    Metrics,
    TableMessage,
    Update,
    decode_reader,
    decode_table,
    encode_ack,
    encode_update,
)
from controller.feed.server import FeedServer, FeedServerError, socket_paths
from controller.game.cards import Card
from controller.game.public import CoupState, PublicProjector
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, DeclarePressed, NewShoePressed, TableRules, TableState
from tests.waiting import until

RULES = TableRules(decks=8, burn_rule=BurnRule(mode=BurnMode.NONE))


def started_table() -> TableState:
    state = TableState(RULES)
    state.apply(NewShoePressed())
    return state


class Reader:
    """A FeedClient that keeps what it got."""

    def __init__(self, path: Path) -> None:
        self.got: list[TableMessage] = []
        self.lock = threading.Lock()
        self.client = FeedClient(path, self._on, name="test-reader", backoff=0.01, backoff_max=0.05)
        self.client.start()

    def _on(self, message: TableMessage) -> None:
        with self.lock:
            self.got.append(message)

    def of(self, kind: type) -> list[TableMessage]:
        with self.lock:
            return [m for m in self.got if isinstance(m, kind)]

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def feed_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir()
    return d


@pytest.fixture
def acks() -> list[Ack]:
    return []


@pytest.fixture
def server(feed_dir: Path, acks: list[Ack]) -> Iterator[FeedServer]:
    s = FeedServer(
        feed_dir, reveal="on_read", on_ack=acks.append, metrics_text=lambda: "shoe_x 1\n", metrics_interval=0.05
    )
    s.start()
    yield s
    s.close()


def deal(server: FeedServer, state: TableState, *tokens: str) -> None:
    for t in tokens:
        notices = state.apply(CardDrawn(Card.parse(t)))
        server.update(state.view(), notices)


def test_a_reader_gets_a_hello_then_every_update_in_order(server: FeedServer, feed_dir: Path) -> None:
    reader = Reader(feed_dir / "feed.sock")
    try:
        until(lambda: bool(reader.of(Hello)), 5, "the hello")
        state = started_table()
        deal(server, state, "2H", "3S", "4D")
        until(lambda: len(reader.of(Update)) == 3, 5, "three updates")
        updates = [m for m in reader.of(Update) if isinstance(m, Update)]
        assert [u.n for u in updates] == [1, 2, 3]
        assert updates[-1].update.view.coup.player == ("2H", "4D")
        assert updates[-1].update.view.coup.state is CoupState.DEALING
        server.committed()
        time.sleep(0.1)
        assert not reader.of(Commit), "commit lines go to the link socket only"
    finally:
        reader.close()


def test_a_late_reader_gets_the_shoe_so_far_in_its_hello(server: FeedServer, feed_dir: Path) -> None:
    state = started_table()
    deal(server, state, "2H", "3S", "4D", "2C", "9D")  # P 2H 4D (6) stands, B 3S 2C (5) draws 9D
    notices = state.apply(DeclarePressed())
    server.update(state.view(), notices)
    reader = Reader(feed_dir / "feed.sock")
    try:
        until(lambda: bool(reader.of(Hello)), 5, "the hello")
        hello = reader.of(Hello)[0]
        assert isinstance(hello, Hello)
        assert [c["coup"] for c in hello.history] == [1]
        assert hello.history[0]["declared"] is True
        assert hello.view.shoe.coup == 2
    finally:
        reader.close()


def test_the_squeeze_is_applied_before_the_socket(feed_dir: Path) -> None:
    """Under reveal = on_declare the raw bytes on the public socket hold no card of the coup in play."""
    s = FeedServer(feed_dir, reveal="on_declare")
    s.start()
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        raw.connect(str(feed_dir / "feed.sock"))
        until(lambda: s.readers == 1, 5, "the reader to be taken")
        state = started_table()
        deal(s, state, "KH", "QS", "JD")
        raw.settimeout(2)
        data = b""
        while data.count(b"\n") < 4:
            data += raw.recv(65536)
        for token in (b"KH", b"QS", b"JD"):
            assert token not in data
        last = decode_table(data.splitlines()[-1])
        assert isinstance(last, Update) and last.update.view.coup.hidden
        assert last.update.view.coup.cards_dealt is None and last.update.view.coup.due is None
    finally:
        raw.close()
        s.close()


def ack(seq: int, archive: str = "archive-test-0001") -> Ack:
    """A floor's ack as the link hands it on (the feed carries it whole; judging it is the table's)."""
    return Ack(archive, "t1", seq, "ab" * 32, "S" * 86 + "==")


def test_a_staff_list_never_makes_the_link_wait_for_the_table(tmp_path: Path) -> None:
    """A table that does not read its link socket (busy, stalled): handing it a staff list of some 400 kB, and
    an ack after it, returns at once (the link's MQTT thread calls them); once the table reads, it gets the whole
    list's line, then the ack's, neither torn nor mixed."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from floor_protocol.staff import StaffEntry, StaffList

    key = Ed25519PrivateKey.generate()
    entries = tuple(
        StaffEntry(id=f"D{i:04d}", role="dealer", badge=f"04A1B2C3{i:06X}", pin_hash="$argon2id$" + "x" * 150)
        for i in range(1900)
    )
    staff = StaffList.signed(key, "s1", "2026-12-01T06:00:00.000Z", entries)
    path = tmp_path / "link.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    link = FeedClient(path, lambda m: None, name="test-link", backoff=0.01)
    link.start()
    table, _ = listener.accept()
    try:
        until(lambda: link.connected, 5, "the link connected")
        done = threading.Event()

        def hand_on() -> None:
            link.send_staff(staff)
            link.send_ack(ack(7))
            done.set()

        threading.Thread(target=hand_on, daemon=True).start()
        assert done.wait(5), "send_staff or send_ack waited for a table that does not read"
        table.settimeout(10)
        data = b""
        while data.count(b"\n") < 2:
            chunk = table.recv(1 << 20)
            assert chunk, "the link ended the connection"
            data += chunk
        first, second, rest = data.split(b"\n", 2)
        assert len(first) > 300_000 and rest == b""
        assert decode_reader(first) == staff
        assert decode_reader(second) == ack(7)
    finally:
        link.close()
        table.close()
        listener.close()


def test_acks_come_from_the_link_socket_only(server: FeedServer, feed_dir: Path, acks: list[Ack]) -> None:
    link = FeedClient(feed_dir / "link.sock", lambda m: None, name="test-link", backoff=0.01)
    link.start()
    public = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        link.send_ack(ack(41))  # before the connection: kept, sent when connected
        until(lambda: acks == [ack(41)], 5, "the ack on the link socket")
        link.send_ack(ack(41))  # the same again: not sent
        link.send_ack(ack(42))
        until(lambda: acks == [ack(41), ack(42)], 5, "the second ack")
        link.send_ack(ack(40, "archive-new-0002"))  # the whole signed ack goes: the table judges it again
        until(lambda: acks == [ack(41), ack(42), ack(40, "archive-new-0002")], 5, "the other archive's ack")
        public.connect(str(feed_dir / "feed.sock"))
        public.sendall(encode_ack(ack(99)))
        until(lambda: server.stats["refused_lines"] == 1, 5, "the public socket's ack refused")
        assert [a.seq for a in acks] == [41, 42, 40]
        public.settimeout(2)
        data = b""
        while chunk := public.recv(65536):
            data += chunk
        assert data.startswith(b'{"t":"hello"'), "the public reader got its hello, then was dropped"
    finally:
        public.close()
        link.close()


def test_the_link_socket_gets_commits_and_metrics(server: FeedServer, feed_dir: Path) -> None:
    reader = Reader(feed_dir / "link.sock")
    try:
        until(lambda: bool(reader.of(Hello)), 5, "the hello")
        server.committed()
        until(lambda: bool(reader.of(Commit)), 5, "a commit line")
        until(lambda: bool(reader.of(Metrics)), 5, "the table's metrics")
        metrics = reader.of(Metrics)[0]
        assert isinstance(metrics, Metrics) and metrics.text == "shoe_x 1\n"
    finally:
        reader.close()


def test_bad_lines_from_a_floor_link_are_refused_and_the_feed_reads_on(
    server: FeedServer, feed_dir: Path, acks: list[Ack]
) -> None:
    hostile = [
        b"\xff\xfe not utf-8",
        b"[" * 100_000,
        b'{"t":"ack","seq":7}',  # the old, unsigned ack
        encode_ack(ack(2**63)).rstrip(),
        encode_ack(ack(-1)).rstrip(),
        encode_ack(ack(7)).replace(b'"seq":7', b'"seq":"7"').rstrip(),
        encode_ack(ack(7)).replace(b'"seq":7', b'"seq":true').rstrip(),
        encode_ack(ack(7)).replace(b'"sig":"', b'"sig":"x').rstrip(),
        encode_ack(ack(7, "archive\\ud800-0001")).rstrip(),
        b'{"t":"hello","view":{}}',
        b'"\\ud800"',
    ]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(feed_dir / "link.sock"))
        sock.sendall(b"\n".join(hostile) + b"\n" + encode_ack(ack(7)))
        until(lambda: acks == [ack(7)], 5, "the good ack after the hostile lines")
        assert server.stats["refused_lines"] == len(hostile)
    finally:
        sock.close()


def test_a_reader_that_stops_reading_is_dropped_and_the_table_never_waits(feed_dir: Path) -> None:
    s = FeedServer(feed_dir, reveal="on_read", max_backlog=64 * 1024)
    s.start()
    stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader = Reader(feed_dir / "feed.sock")
    try:
        stalled.connect(str(feed_dir / "feed.sock"))
        until(lambda: s.readers == 2 and bool(reader.of(Hello)), 5, "two readers")
        state = started_table()
        view = state.view()
        for i in range(1, 3001):  # a send that waited for the stalled reader would hang here (the test's timeout)
            s.update(view, ())
            if i % 100 == 0:  # the live reader keeps up (as the board does with a shoe); the stalled one cannot
                until(lambda i=i: len(reader.of(Update)) == i, 10, f"the live reader at update {i}")  # type: ignore[misc]
        until(lambda: s.stats["dropped_slow"] == 1, 5, f"the stalled reader dropped ({s.stats})")
        until(lambda: len(reader.of(Update)) == 3000, 10, "the live reader to get every update")
        assert s.readers == 1
    finally:
        reader.close()
        stalled.close()
        s.close()


def test_readers_are_bounded(feed_dir: Path) -> None:
    s = FeedServer(feed_dir, reveal="on_read", max_readers=2)
    s.start()
    socks = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]
    try:
        for sock in socks:
            sock.connect(str(feed_dir / "feed.sock"))
        until(lambda: s.stats["refused_full"] == 1, 5, "the third reader refused")
        assert s.readers == 2
    finally:
        for sock in socks:
            sock.close()
        s.close()


def test_a_reader_reconnects_to_a_restarted_table_and_starts_from_its_hello(feed_dir: Path) -> None:
    first = FeedServer(feed_dir, reveal="on_read")
    first.start()
    reader = Reader(feed_dir / "feed.sock")
    try:
        until(lambda: len(reader.of(Hello)) == 1, 5, "the first hello")
        first.close()
        second = FeedServer(feed_dir, reveal="on_read")
        second.start()
        try:
            until(lambda: len(reader.of(Hello)) == 2, 5, "the hello of the restarted table")
            state = started_table()
            deal(second, state, "2H")
            until(lambda: bool(reader.of(Update)), 5, "an update from the restarted table")
        finally:
            second.close()
    finally:
        reader.close()


def test_a_bad_line_from_the_table_is_refused_and_counted(feed_dir: Path) -> None:
    public, _ = socket_paths(feed_dir)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(public))
    listener.listen(1)
    reader = Reader(public)
    try:
        conn, _ = listener.accept()
        with conn:
            good = encode_update(1, PublicProjector().update(started_table().view()))
            conn.sendall(b'{"t":"nonsense"}\n' + b"x" * (MAX_LINE + 10) + b"\n" + b'{"t":"hello","view":5}\n')
            until(lambda: reader.client.stats["refused"] == 3, 5, "three refused lines")
            conn.sendall(good)  # an update before any good hello: not handed on
            time.sleep(0.1)
            assert reader.got == []
    finally:
        reader.close()
        listener.close()


def test_socket_modes_and_a_second_table_refused(server: FeedServer, feed_dir: Path) -> None:
    assert stat.S_IMODE(os.stat(feed_dir / "feed.sock").st_mode) == 0o666
    assert stat.S_IMODE(os.stat(feed_dir / "link.sock").st_mode) == 0o660
    other = FeedServer(feed_dir, reveal="on_read")
    with pytest.raises(FeedServerError, match="another table process is listening"):
        other.start()
    other.close()
    assert (feed_dir / "feed.sock").exists() and (feed_dir / "link.sock").exists()  # the first table's, kept


def test_a_table_that_gets_only_one_socket_removes_only_its_own(feed_dir: Path) -> None:
    """Another process listens on link.sock: this table's feed.sock is made and removed again; the other
    process's link.sock stays."""
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind(str(feed_dir / "link.sock"))
    squatter.listen(1)
    try:
        s = FeedServer(feed_dir, reveal="on_read")
        with pytest.raises(FeedServerError, match=r"link\.sock: another table process is listening"):
            s.start()
        s.close()
        assert not (feed_dir / "feed.sock").exists()
        assert (feed_dir / "link.sock").exists()
    finally:
        squatter.close()


def test_a_socket_path_too_long_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(FeedServerError, match="longer than 107 bytes"):
        FeedServer(tmp_path / ("d" * 120), reveal="on_read")


def test_the_wire_round_trips_a_declared_coup() -> None:
    state = started_table()
    for t in ("2H", "3S", "4D", "2C", "9D"):
        state.apply(CardDrawn(Card.parse(t)))
    update = PublicProjector().update(state.view(), state.apply(DeclarePressed()))
    message = decode_table(encode_update(3, update))
    assert isinstance(message, Update) and message.n == 3 and message.update == update
    assert json.loads(encode_update(3, update))["coups"][0]["winner"] == update.coups[0]["winner"]


@pytest.mark.parametrize(
    "line",
    [b'{"t":"ack"}', b'{"t":"ack","seq":1.5}', b'{"t":"commit"}', b"{}", b"null", b'{"t":"ack","seq":null}'],
)
def test_decode_reader_refuses(line: bytes) -> None:
    with pytest.raises(FeedError):
        decode_reader(line)
