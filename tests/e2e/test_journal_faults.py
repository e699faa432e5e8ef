"""A journal that cannot silently stop: the simulated shoe (a real process on a real pty) deals while the journal's
disk really fills (a tmpfs), while the journal file is deleted, and from a start on a disk already full. The
daemon stays up, shows the alarm (FAULT lamp on gpiozero's mock pins, the view every display gets), acknowledges
nothing it could not commit, and resumes by itself: every card of the record of truth is journaled exactly once,
in order."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from controller.config import default_settings
from controller.game.table import Alarm, AlarmCleared, AlarmRaised, Lamp, Notice, TableView
from controller.journal import Journal, JournalError
from controller.table.daemon import Daemon
from controller.table.panel import LampPattern
from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth
from tests.smallfs import SmallFs, small_fs
from tests.waiting import until

pytestmark = pytest.mark.e2e


class Watcher:
    """A sink beside the panel and the displays: the views they get, the alarms raised and cleared, and the FAULT
    lamp's pattern on the mock pins when each journal alarm was raised."""

    name = "watcher"

    def __init__(self) -> None:
        self.daemon: Daemon | None = None
        self.views: list[TableView] = []
        self.raised: list[tuple[Alarm, LampPattern]] = []
        self.cleared: list[Alarm] = []

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        assert self.daemon is not None and self.daemon.panel is not None
        self.views.append(view)
        for n in notices:
            if isinstance(n, AlarmRaised):
                self.raised.append((n.alarm, self.daemon.panel.shown[Lamp.FAULT]))
            elif isinstance(n, AlarmCleared):
                self.cleared.append(n.alarm)

    def close(self) -> None:
        pass

    def coup(self) -> int:
        return self.views[-1].coup_number if self.views else 0


def wait_for(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    until(check, timeout, what, every=0.02)


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[SmallFs]:
    with small_fs(tmp_path, "32m") as fs:
        yield fs


def start_table(h: Harness, watcher: Watcher) -> tuple[Daemon, threading.Thread]:
    settings = default_settings().with_overrides(port=str(h.link), journal=str(h.journal), pin_factory="mock")
    settings = settings.with_table(decks=1).with_scoreboard(enabled=False)
    daemon = Daemon(settings, extra_sinks=[watcher])
    watcher.daemon = daemon
    thread = threading.Thread(target=daemon.run, name="daemon-under-test")
    thread.start()
    return daemon, thread


def stop_table(daemon: Daemon, thread: threading.Thread) -> None:
    daemon.stop()
    thread.join(timeout=15)
    assert not thread.is_alive()


def fault_rows(h: Harness) -> list[tuple[str, str]]:
    return [(b["event"], b["alarm"]) for b in h.journal_inputs() if b.get("kind") == "journal_fault"]


def test_disk_full_mid_shoe_alarms_acks_nothing_and_resumes_when_space_returns(harness: Harness, fs: SmallFs) -> None:
    harness.journal = fs.root / "journal.db"
    harness.start_sim("--decks", "1", pace="0.02", seed=11)
    watcher = Watcher()
    daemon, thread = start_table(harness, watcher)
    try:
        wait_for("coup 3", lambda: watcher.coup() >= 3)
        fs.fill()
        wait_for("JOURNAL FULL", lambda: any(a is Alarm.JOURNAL_FULL for a, _p in watcher.raised))
        assert (Alarm.JOURNAL_FULL, LampPattern.SLOW_BLINK) in watcher.raised  # the panel's FAULT lamp
        assert daemon.panel is not None and daemon.panel.shown[Lamp.FAULT] is LampPattern.SLOW_BLINK
        # every display gets the alarm in its view (the scoreboard's JSON lists view.alarms)
        assert "journal_full" in watcher.views[-1].to_dict()["alarms"]
        time.sleep(1.5)  # the shoe holds the cards: the dealer cannot run ahead of the journal
        held = [e for e in harness.truth_events() if e["event"] == "card"]
        assert harness.sim is not None and harness.sim.poll() is None
        fs.free()
        assert harness.wait_sim(timeout=120) == 0
        assert Alarm.JOURNAL_FULL in watcher.cleared
        assert Alarm.JOURNAL_FULL not in watcher.views[-1].alarms
    finally:
        stop_table(daemon, thread)
    assert held
    assert_matches_truth(harness, sequenced=True)
    assert fault_rows(harness)[:1] == [("raised", "journal_full")]
    assert fault_rows(harness)[-1] == ("cleared", "journal_full")
    end = [e for e in harness.truth_events() if e["event"] == "end"]
    assert end and end[-1]["reason"] == "all events acknowledged"


def test_a_journal_deleted_mid_shoe_is_noticed_restored_and_loses_no_card(harness: Harness, tmp_path: Path) -> None:
    harness.start_sim("--decks", "1", pace="0.02", seed=12)
    watcher = Watcher()
    daemon, thread = start_table(harness, watcher)
    try:
        wait_for("coup 3", lambda: watcher.coup() >= 3)
        harness.journal.unlink()  # rm journal.db, mid-shoe
        wait_for("JOURNAL FAULT", lambda: any(a is Alarm.JOURNAL_FAULT for a, _p in watcher.raised))
        assert (Alarm.JOURNAL_FAULT, LampPattern.SLOW_BLINK) in watcher.raised
        assert harness.wait_sim(timeout=120) == 0
        assert Alarm.JOURNAL_FAULT in watcher.cleared
    finally:
        stop_table(daemon, thread)
    assert harness.journal.exists()
    assert_matches_truth(harness, sequenced=True)
    notes = [json.loads(r.body) for r in harness.journal_records() if r.kind == "note"]
    assert [n["note"] for n in notes] == ["journal_restored"]
    assert fault_rows(harness) == [("raised", "journal_fault"), ("cleared", "journal_fault")]


def test_a_journal_deleted_while_the_table_is_idle_is_put_back_before_a_power_cut(harness: Harness) -> None:
    # The shoe is up and quiet (a card every 30 s); the journal is deleted. The unlinked file lives only in the
    # daemon's open connection: without a check while idle it would come back only at the next card, and a
    # power cut before that (SIGKILL here) would lose every record. It is back at its path within seconds.
    harness.start_sim("--decks", "1", pace="30", seed=14)
    daemon = harness.start_daemon()

    def hello_journaled() -> bool:
        try:
            return any(b.get("kind") == "hello" for b in harness.journal_inputs())
        except JournalError:  # not there yet, or the daemon is still creating it
            return False

    wait_for("the shoe's HELLO journaled", hello_journaled)
    before = harness.journal_records()
    harness.journal.unlink()
    wait_for("the journal back at its path", harness.journal.exists, timeout=12)
    harness.wait_daemon_log("journal writes again", timeout=5)  # the raised and cleared records committed
    assert harness.stop_daemon(signal.SIGKILL) == -signal.SIGKILL  # the power cut, before any card
    assert daemon.poll() is not None
    after = harness.journal_records()
    assert after[: len(before)] == before
    assert not [r for r in after if r.kind == "input" and json.loads(r.body).get("kind") == "card"]
    notes = [json.loads(r.body) for r in after if r.kind == "note"]
    assert [n["note"] for n in notes] == ["journal_restored"]
    assert fault_rows(harness) == [("raised", "journal_fault"), ("cleared", "journal_fault")]
    with Journal.open(harness.journal, read_only=True) as j:
        assert j.verify() == []


def test_a_start_on_a_full_disk_stays_up_shows_journal_full_and_resumes(harness: Harness, fs: SmallFs) -> None:
    harness.journal = fs.root / "journal.db"
    fs.fill()
    harness.start_sim("--decks", "1", pace="0.02", seed=13)
    daemon = harness.start_daemon()
    harness.wait_daemon_log("JOURNAL FULL")
    time.sleep(3.0)  # before: exit 1 at the first commit, restarted by systemd until its start limit
    assert daemon.poll() is None
    assert harness.sim is not None and harness.sim.poll() is None  # nothing acknowledged: the shoe waits
    fs.free()
    assert harness.wait_sim(timeout=120) == 0
    assert daemon.poll() is None
    assert harness.stop_daemon(signal.SIGTERM) == 0
    assert_matches_truth(harness, sequenced=True)
    assert fault_rows(harness)[0] == ("raised", "journal_full")
    assert fault_rows(harness)[-1] == ("cleared", "journal_full")
