"""Issue 9's faults, with nothing played by the test: table daemons (``shoe-controller run --floor``) dealing
several shoes from simulated shoes over ptys, a real Mosquitto, a real ``shoe-floor serve`` archiving into
PostgreSQL and SQLite. The faults:

* the broker SIGKILLed and restarted mid-shoe, twice, over three shoes on two tables;
* the broker down for the length of a whole shoe (the tables deal it with no broker; the backlog flushes when
  the broker is back);
* a table daemon SIGKILLed mid-shoe and restarted, several times (the simulated shoe reconnects).

After each: every table's stored ack reached its journal's head, the archive equals every journal record for
record (nothing lost, nothing doubled), ``shoe-floor verify`` passes, and the simulator's record of truth
matches the journal (every card exactly once, every coup). (The network cut is test_network_cut.py; a
collector SIGKILLed and two collectors sharing the load are test_table_to_floor.py.)
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.journal import Journal, JournalError
from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth
from tests.floor.conftest import (
    Keys,
    archived,
    assert_archive_is_every_journal,
    shoes_started,
    start_collector,
    stop_collector,
    stored_ack,
    trusted,
)
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = pytest.mark.e2e

#: Seconds per card: a shoe of one deck lasts about a second and a half, long enough to be caught mid-way.
PACE = "0.015"


@pytest.fixture
def tables(tmp_path: Path, archive_url: str, keys: Keys) -> Iterator[Callable[..., list[Harness]]]:
    """Start tables ``t1``, ``t2`` ...: each a simulated shoe (one deck, ``shoes`` shoes) and its daemon with
    the floor link on, its key enrolled in the archive. Every process is killed and reaped at the end."""
    started: list[Harness] = []

    def deal(broker: Mosquitto, count: int, shoes: int) -> list[Harness]:
        for i in range(1, count + 1):
            h = Harness(tmp_path / f"t{i}")
            started.append(h)
            h.tmp.mkdir()
            h.start_sim("--decks", "1", "--shoes", str(shoes), seed=20 + i, pace=PACE)
            h.start_daemon(
                "--floor", broker.url, "--site", "s1", "--table-id", h.tmp.name, *trusted(keys, archive_url, h.tmp.name)
            )
        return started

    yield deal
    for h in started:
        h.close()


def mid_shoe(h: Harness, shoe: int, into: int = 12) -> bool:
    """The table is dealing its ``shoe``-th shoe, at least ``into`` records into it."""
    try:
        with Journal.open(h.journal, read_only=True) as j:
            starts = j.shoe_starts()
            return len(starts) == shoe and j.head()[0] - starts[-1] >= into
    except JournalError:
        return False  # not written yet


def quiet_head(h: Harness, quiet: float = 1.0) -> int:
    """The journal's head once no record has been added for ``quiet`` seconds."""
    head, since = -1, time.monotonic()
    deadline = since + 60
    while time.monotonic() < deadline:
        now_head = len(h.journal_records())
        if now_head != head:
            head, since = now_head, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return head
        time.sleep(0.1)
    raise AssertionError(f"{h.tmp.name}'s journal never went quiet")


def finish(url: str, dealt: list[Harness], ack_timeout: float = 90.0) -> None:
    for h in dealt:
        assert h.wait_sim(timeout=180) == 0
    assert_archive_is_every_journal(url, {h.tmp.name: h.journal for h in dealt}, ack_timeout)
    for h in dealt:
        assert_matches_truth(h, sequenced=True)
        assert "Traceback" not in "".join(log.read_text() for log in h.daemon_logs)


def test_broker_killed_mid_shoe_and_restarted_over_several_shoes(
    broker: Mosquitto, archive_url: str, tmp_path: Path, tables: Callable[..., list[Harness]]
) -> None:
    collector = start_collector(broker, archive_url, "floor-kill", tmp_path / "floor.log")
    try:
        dealt = tables(broker, 2, shoes=3)
        t1 = dealt[0]
        for shoe in (1, 2):
            until(lambda: mid_shoe(t1, shoe), 60, f"t1 dealing shoe {shoe}")  # noqa: B023
            broker.kill()  # SIGKILL: what it held in memory (sessions, queued messages, retained acks) is gone
            time.sleep(1.0)
            broker.start()  # same port, as systemd restarts it
        finish(archive_url, dealt)
        assert all(shoes_started(h.journal) == 3 for h in dealt)
        assert broker.log().count("mosquitto version") >= 3  # it really went down twice
    finally:
        stop_collector(collector)


def test_broker_down_for_a_whole_shoe_the_backlog_flushes_after(
    broker: Mosquitto, archive_url: str, tmp_path: Path, tables: Callable[..., list[Harness]]
) -> None:
    collector = start_collector(broker, archive_url, "floor-down", tmp_path / "floor.log")
    try:
        dealt = tables(broker, 2, shoes=3)
        t1 = dealt[0]
        until(lambda: shoes_started(t1.journal) >= 2, 60, "t1 starting its second shoe")
        broker.stop()
        down_at = len(t1.journal_records())
        until(lambda: shoes_started(t1.journal) >= 3, 60, "t1 dealing its whole second shoe without a broker")
        assert len(archived(archive_url, "t1")) <= down_at  # nothing went through: the broker was really down
        assert len(t1.journal_records()) - down_at > 50  # a whole shoe waits in the journal, the outbox
        broker.start()
        finish(archive_url, dealt)
    finally:
        stop_collector(collector)


def test_table_daemon_sigkilled_mid_shoe_and_restarted(
    broker: Mosquitto, archive_url: str, tmp_path: Path, tables: Callable[..., list[Harness]], keys: Keys
) -> None:
    rng = random.Random(9)
    collector = start_collector(broker, archive_url, "floor-table", tmp_path / "floor.log")
    try:
        (t1,) = dealt = tables(broker, 1, shoes=2)
        kills = 0
        for shoe in (1, 1, 2, 2):
            until(lambda: mid_shoe(t1, shoe) or shoes_started(t1.journal) > shoe, 60, f"t1 dealing shoe {shoe}")  # noqa: B023
            time.sleep(rng.uniform(0.0, 0.3))
            assert t1.sim is not None and t1.sim.poll() is None, "the shoes ended before the kills; slow the pace"
            assert t1.stop_daemon(signal.SIGKILL) == -signal.SIGKILL
            kills += 1
            t1.start_daemon(
                "--floor", broker.url, "--site", "s1", "--table-id", "t1", *trusted(keys, archive_url, "t1")
            )
            t1.wait_daemon_log("resumed shoe", timeout=30)
        finish(archive_url, dealt)
        assert kills == 4
    finally:
        stop_collector(collector)


def test_a_broker_back_from_an_old_save_still_brings_the_table_its_ack(
    broker: Mosquitto, archive_url: str, tmp_path: Path, tables: Callable[..., list[Harness]]
) -> None:
    """Mosquitto saves its state on a clean stop and every ``autosave_interval``; one that crashes comes back
    with its last save: the retained ack in it is old. A lower ack of the same archive is no news (issue 15:
    one ``ack 0`` made a table resend its whole journal): the table keeps the ack it stored, and the archive
    is whole."""
    collector = start_collector(broker, archive_url, "floor-save", tmp_path / "floor.log")
    try:
        (t1,) = dealt = tables(broker, 1, shoes=1)
        # mid-shoe, and the floor has acked part of it (the link is a process of its own, started after the
        # table: the first ack can come after the 20th record)
        until(lambda: mid_shoe(t1, 1, into=20) and stored_ack(t1.journal) > 0, 60, "t1 dealing, acked so far")
        broker.restart()  # a clean restart: the save holds the ack of the shoe so far
        assert t1.wait_sim(timeout=180) == 0
        t1.wait_daemon_log("shoe link DOWN: no frame", timeout=30)  # journaled: the shoe went away
        head = quiet_head(t1)  # then nothing more
        until(lambda: stored_ack(t1.journal) == head, 60, "the ack of the whole shoe")
        broker.kill()
        broker.start()  # back from the save made mid-shoe: its retained ack is old
        time.sleep(5.0)  # the link reconnects and hears the old ack
        assert stored_ack(t1.journal) == head  # not taken: the archive followed already said more
        finish(archive_url, dealt, ack_timeout=40)
    finally:
        stop_collector(collector)
