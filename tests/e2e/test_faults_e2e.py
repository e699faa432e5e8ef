"""Each fault the software shoe can inject produces its alarm, its FAULT-lamp pattern and its journal row, and
the table carries on as documented. The shoe is a real process on a real pty; the daemon runs in this process
(in a thread) so that gpiozero's mock pins can be inspected."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from controller.config import default_settings
from controller.game.table import Alarm, AlarmRaised, Lamp, Notice, TableView
from controller.table.daemon import Daemon
from controller.table.panel import LampPattern
from tests.e2e.harness import Harness

pytestmark = pytest.mark.e2e


class AlarmRecorder:
    """A sink that records, for every alarm raised, the FAULT lamp's pattern right after the panel showed it."""

    name = "recorder"

    def __init__(self) -> None:
        self.daemon: Daemon | None = None
        self.seen: list[tuple[Alarm, LampPattern]] = []
        self.lamps_at_alarm: list[frozenset[Lamp]] = []

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        assert self.daemon is not None and self.daemon.panel is not None
        for n in notices:
            if isinstance(n, AlarmRaised):
                self.seen.append((n.alarm, self.daemon.panel.shown[Lamp.FAULT]))
                self.lamps_at_alarm.append(view.lamps)

    def close(self) -> None:
        pass


def run_table(h: Harness, *sim_args: str, seed: int = 7, decks: int = 1) -> AlarmRecorder:
    h.start_sim("--decks", str(decks), *sim_args, seed=seed)
    settings = default_settings().with_overrides(port=str(h.link), journal=str(h.journal), pin_factory="mock")
    settings = settings.with_table(decks=decks).with_scoreboard(enabled=False)
    recorder = AlarmRecorder()
    daemon = Daemon(settings, extra_sinks=[recorder])
    recorder.daemon = daemon
    thread = threading.Thread(target=daemon.run, name="daemon-under-test")
    thread.start()
    try:
        assert h.wait_sim(timeout=120) == 0
    finally:
        daemon.stop()
        thread.join(timeout=15)
    assert not thread.is_alive()
    return recorder


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return tmp_path / "script.jsonl"


def alarm_rows(h: Harness) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(r.body) for r in h.journal_records() if r.kind == "alarm"]


def journal_cards(h: Harness) -> list[str]:
    return [b["card"] for b in h.journal_inputs() if b.get("kind") == "card"]


@pytest.mark.parametrize(
    ("fault", "alarm", "pattern"),
    [
        ("misdraw", Alarm.MISDRAW, LampPattern.STEADY),
        ("early_declare", Alarm.EARLY_DECLARE, LampPattern.STEADY),
        ("unreadable", Alarm.UNREADABLE, LampPattern.FAST_BLINK),
    ],
)
def test_dealer_error_alarms_and_the_table_carries_on(
    harness: Harness, script: Path, fault: str, alarm: Alarm, pattern: LampPattern
) -> None:
    script.write_text(json.dumps({"at_card": 30, "fault": fault}) + "\n")
    recorder = run_table(harness, "--script", str(script))
    assert (alarm, pattern) in recorder.seen
    rows = [r for r in alarm_rows(harness) if r["alarm"] == alarm.name.lower()]
    assert len(rows) == 1
    assert rows[0]["text"] == alarm.value
    # the table carried on to the end of the shoe: every card journaled once, coups declared after the fault
    truth = [e for e in harness.truth_events() if e["event"] == "card"]
    assert journal_cards(harness) == [e["card"] for e in truth]
    coups = harness.journal_coups()
    assert sum(c["declared"] for c in coups) >= 5
    if fault == "misdraw":
        misdrawn = [c for c in coups if c["misdraw"]]
        assert len(misdrawn) == 1
        assert misdrawn[0]["dummy_hand"] == [e["card"] for e in truth if e.get("role") == "misdraw"]
    if fault == "unreadable":
        assert sum(c["void"] for c in coups) == 1  # the dealer held VOID, as the runbook says


def test_foreign_card_halts_the_coup_until_void(harness: Harness, script: Path) -> None:
    script.write_text(json.dumps({"at_card": 30, "fault": "foreign"}) + "\n")
    recorder = run_table(harness, "--script", str(script), seed=3)
    faults = [e for e in harness.truth_events() if e["event"] == "fault" and e["kind"] == "foreign"]
    assert len(faults) == 1
    if not faults[0]["detectable"]:
        pytest.fail("the scripted foreign card was not an over-count; choose another position or seed")
    assert (Alarm.FOREIGN_CARD, LampPattern.FAST_BLINK) in recorder.seen
    assert any(r["alarm"] == "foreign_card" and r["card"] == faults[0]["card"] for r in alarm_rows(harness))
    assert sum(c["void"] for c in harness.journal_coups()) == 1


def test_link_down_and_back(harness: Harness, script: Path) -> None:
    script.write_text(json.dumps({"at_card": 20, "fault": "disconnect"}) + "\n")
    recorder = run_table(harness, "--script", str(script), "--disconnect-for", "4")
    assert (Alarm.LINK_DOWN, LampPattern.SLOW_BLINK) in recorder.seen
    links = [b for b in harness.journal_inputs() if b.get("kind") == "link"]
    assert [b["up"] for b in links][-2:] == [False, True]
    truth = [e for e in harness.truth_events() if e["event"] == "card"]
    assert journal_cards(harness) == [e["card"] for e in truth]


def test_shoe_reboot_is_alarmed_and_the_table_carries_on(harness: Harness, script: Path) -> None:
    script.write_text(json.dumps({"at_card": 25, "fault": "reboot"}) + "\n")
    recorder = run_table(harness, "--script", str(script))
    assert (Alarm.SHOE_REBOOTED, LampPattern.FAST_BLINK) in recorder.seen
    assert sum(c["void"] for c in harness.journal_coups()) >= 1  # the halted coup was voided
    sessions = {r.session for r in harness.journal_records() if r.kind == "input" and r.session is not None}
    assert len(sessions) == 2
    reboot = [e for e in harness.truth_events() if e["event"] == "reboot" and "lost_seqs" in e]
    assert len(reboot) == 1
    # cards the shoe lost in the reboot (unacknowledged) are the only ones missing from the journal
    truth_cards = [e for e in harness.truth_events() if e["event"] == "card"]
    journaled = journal_cards(harness)
    assert len(journaled) >= len(truth_cards) - len(reboot[0]["lost_seqs"])
    assert len(journaled) <= len(truth_cards)


def test_an_unreadable_exposed_burn_card_asks_for_new_shoe_and_the_dealer_presses_it(
    harness: Harness, script: Path
) -> None:
    """The first card of the shoe (the exposed burn card) unreadable: the table closes the shoe and asks for NEW
    SHOE; the simulator's dealer presses it, as the runbook says, and the shoe is dealt to the end (it used to
    wait for ever)."""
    script.write_text(json.dumps({"at_card": 1, "fault": "unreadable"}) + "\n")
    recorder = run_table(harness, "--script", str(script))
    assert (Alarm.UNREADABLE_EXPOSED, LampPattern.STEADY) in recorder.seen
    presses = [e["button"] for e in harness.truth_events() if e["event"] == "button"]
    assert presses[:2] == ["NEW_SHOE", "NEW_SHOE"]
    assert sum(c["declared"] for c in harness.journal_coups()) >= 5
