"""The network between a table and the floor cut mid-shoe: a TCP proxy the test controls sits between the
table daemon and the broker and drops every connection (and refuses new ones) for a few seconds. The table
deals on; when the network is back its floor link reconnects and sends from the floor's ack; the archive
(``shoe-floor serve``) ends equal to the journal record for record."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

import pytest

from tests.e2e.harness import Harness
from tests.floor.conftest import (
    Keys,
    archived,
    archived_count,
    journal_of,
    serve_process,
    shoe_floor,
    stored_ack,
    trusted,
)
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = pytest.mark.e2e


class CuttableProxy:
    """A TCP proxy on a free loopback port to ``target``; :meth:`cut` drops every connection through it and
    refuses new ones until :meth:`restore` (a network cut, as a switch or a cable would make it)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)  # the accept loop looks at _closed this often
        self.port = int(self.listener.getsockname()[1])
        self._threads: list[threading.Thread] = []
        self.up = threading.Event()
        self.up.set()
        self.cuts = 0
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._start(self._accept)

    def _start(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name="proxy", daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            if not self.up.is_set():
                client.close()  # refused while cut
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))
            upstream.settimeout(None)
            for a, b in ((client, upstream), (upstream, client)):
                self._start(self._pipe, a, b)

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.up.clear()
        self.cuts += 1
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def restore(self) -> None:
        self.up.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        for thread in self._threads:
            thread.join(5)
        self.listener.close()


def journal(path: Path) -> list[dict[str, object]]:
    return journal_of(path, "t1")


def test_a_network_cut_mid_shoe_loses_and_doubles_nothing(
    broker: Mosquitto, archive_url: str, tmp_path: Path, keys: Keys
) -> None:
    log = tmp_path / "floor.log"
    collector = serve_process(broker, archive_url, "floor-net", log, "--site", "s1")
    proxy = CuttableProxy(broker.port)
    h = Harness(tmp_path / "t1")
    try:
        until(lambda: "subscribed" in log.read_text(), 30, "the collector to subscribe")
        h.tmp.mkdir()
        h.start_sim("--decks", "2", seed=11, pace="0.01")
        h.start_daemon(
            "--floor", f"mqtt://127.0.0.1:{proxy.port}", "--site", "s1", "--table-id", "t1",
            *trusted(keys, archive_url, "t1"),
        )  # fmt: skip
        until(lambda: archived_count(archive_url) >= 40, 60, "the first records archived")
        proxy.cut()  # mid-shoe
        cut_at = len(journal(h.journal))
        time.sleep(4)
        dealt_meanwhile = len(journal(h.journal)) - cut_at
        proxy.restore()
        assert h.wait_sim(timeout=180) == 0
        until(lambda: stored_ack(h.journal) == len(journal(h.journal)), 90, "the table's last ack after the cut")
        assert dealt_meanwhile > 0  # the table dealt on while the floor was out of reach
        assert archived(archive_url, "t1") == journal(h.journal)  # record for record: nothing lost or doubled
        verify = shoe_floor("verify", "--archive", archive_url)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert proxy.cuts == 1
    finally:
        proxy.close()
        collector.terminate()
        collector.wait(20)
        h.close()
