"""The table's two companions killed again and again mid-shoe cost the table nothing, and a table restart costs
the board's viewers nothing: real processes (the simulator over a pty, ``shoe-controller run``, ``board`` and
``link``, Mosquitto, ``shoe-floor serve``), SIGKILL, and the record of truth."""

from __future__ import annotations

import json
import signal
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth
from tests.floor.conftest import Keys, assert_archive_is_every_journal, start_collector, trusted
from tests.servers import Mosquitto, free_port
from tests.waiting import until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

KILLS = 20


def state(port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2) as resp:
            return dict(json.loads(resp.read()))
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def coup_of(snapshot: dict[str, Any] | None) -> int:
    """The coup the board shows (0 before it has heard the table)."""
    if snapshot is None or snapshot["shoe"]["coup"] is None:
        return 0
    return int(snapshot["shoe"]["coup"])


def test_the_board_killed_twenty_times_mid_shoe_costs_the_table_nothing(tmp_path: Path) -> None:
    port = free_port()
    with Harness(tmp_path) as h:
        h.start_sim("--decks", "8", "--shoes", "2", pace="0.06")  # long enough for the kills on a busy machine
        h.start_daemon("--scoreboard", f"127.0.0.1:{port}")
        until(lambda: coup_of(state(port)) >= 2, 30, "the board to show coup 2")
        back_after: list[float] = []
        for _ in range(KILLS):
            assert h.board_proc is not None
            h.board_proc.send_signal(signal.SIGKILL)
            h.board_proc.wait(10)
            assert h.sim is not None and h.sim.poll() is None, "the shoe ended before the last kill: slow it down"
            shown = coup_of(state(port))
            assert shown == 0, "a dead board answered"
            t0 = time.monotonic()
            h.start_board("--scoreboard", f"127.0.0.1:{port}")
            # back, and showing the table as it is (the shoe's coups from the feed's hello, not from a journal)
            until(lambda: coup_of(state(port)) >= 1, 15, "the restarted board to show the table")
            back_after.append(time.monotonic() - t0)
            snapshot = state(port)
            assert snapshot is not None and snapshot["counters"]["coups"] >= snapshot["shoe"]["coup"] - 1
        assert len(back_after) == KILLS
        assert h.wait_sim(180) == 0
        assert h.daemon is not None and h.daemon.poll() is None, "the table process died"
        assert_matches_truth(h, sequenced=True)
        coups = h.journal_coups()
        last = max(c["shoe"] for c in coups)  # the board counts the shoe it shows: the last
        declared = [c for c in coups if c.get("declared") and not c.get("void") and c["shoe"] == last]

        def coups_shown() -> Any:
            return (state(port) or {}).get("counters", {}).get("coups")

        until(lambda: coups_shown() == len(declared), 15, f"the board to count the shoe's {len(declared)} coups")


def test_the_link_killed_twenty_times_mid_shoe_costs_the_table_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'archive.db'}"
    broker = Mosquitto(tmp_path / "mq").start()
    collector = start_collector(broker, url, "floor-0", tmp_path / "floor.log")
    try:
        with Harness(tmp_path / "t1") as h:
            h.tmp.mkdir()
            h.start_sim("--decks", "8", "--shoes", "2", pace="0.06")  # long enough for the kills on a busy machine
            trust = trusted(Keys(tmp_path / "keys"), url, "t1")  # its key enrolled; the floor's key believed
            h.start_daemon("--floor", broker.url, "--site", "s1", "--table-id", "t1", *trust)
            until(
                lambda: h.daemon_logs[-1].exists() and "shoe link up" in h.daemon_logs[-1].read_text(), 30, "the shoe"
            )
            until(lambda: len(h.journal_coups()) >= 2, 30, "two coups")
            for _ in range(KILLS):
                assert h.link_proc is not None
                h.link_proc.send_signal(signal.SIGKILL)
                h.link_proc.wait(10)
                assert h.sim is not None and h.sim.poll() is None, "the shoe ended before the last kill: slow it down"
                h.start_link("--floor", broker.url, "--site", "s1", "--table-id", "t1", *trust)
                time.sleep(0.3)  # killed again before it is through its backlog, or just after
            assert h.wait_sim(180) == 0
            assert h.daemon is not None and h.daemon.poll() is None, "the table process died"
            assert_matches_truth(h, sequenced=True)
            assert_archive_is_every_journal(url, {"t1": h.journal})
    finally:
        collector.send_signal(signal.SIGTERM)
        collector.wait(15)
        broker.stop()


def test_a_table_restart_costs_the_boards_viewers_at_most_a_reconnect(tmp_path: Path) -> None:
    """A viewer's event stream stays open across a SIGKILL of the table process and its restart, and shows
    the table dealing again after it."""
    port = free_port()
    with Harness(tmp_path) as h:
        h.start_sim("--decks", "2", pace="0.05")
        h.start_daemon("--scoreboard", f"127.0.0.1:{port}")
        until(lambda: coup_of(state(port)) >= 2, 30, "the board to show coup 2")
        viewer = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            viewer.sendall(b"GET /events HTTP/1.1\r\nHost: board\r\n\r\n")
            seen = bytearray()

            def snapshots() -> list[dict[str, Any]]:
                return [
                    json.loads(line[6:])
                    for line in bytes(seen).split(b"\n")[:-1]  # whole lines only
                    if line.startswith(b"data: {")
                ]

            def coups_streamed() -> list[int]:
                return [int(snap["shoe"]["coup"] or 0) for snap in snapshots()]

            def offline() -> bool:
                read_some()
                return any(a["name"] == "table_offline" for a in snapshots()[-1]["alarms"])

            def read_some() -> None:
                viewer.settimeout(0.2)
                try:
                    chunk = viewer.recv(65536)
                except TimeoutError:
                    return
                assert chunk, "the viewer's stream ended"
                seen.extend(chunk)

            def streamed_past(coup: int) -> bool:
                read_some()
                return any(c > coup for c in coups_streamed())

            until(lambda: streamed_past(1), 20, "the stream to show a coup")
            assert h.daemon is not None
            h.daemon.send_signal(signal.SIGKILL)
            h.daemon.wait(10)
            before = max(coups_streamed())
            until(offline, 10, "the stream to say TABLE OFFLINE while the table is away")
            h.start_daemon()
            until(lambda: streamed_past(before), 60, "the same stream to show the table dealing again")
            assert not offline(), "TABLE OFFLINE still shown with the table back"
        finally:
            viewer.close()
        assert h.wait_sim(180) == 0
        assert_matches_truth(h, sequenced=True)
