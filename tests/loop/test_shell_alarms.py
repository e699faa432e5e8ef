"""The shell's own alarms on their own: what each change shows and what it journals, JOURNAL FULL / FAULT held
while the fault stays the same, PRESS AGAIN held on the loop's clock and cleared only by the dealer's answer."""

from __future__ import annotations

from collections import Counter

from controller.game.records import RecordKind
from controller.game.table import Alarm, AlarmCleared, AlarmRaised
from controller.journal import JournalError, JournalFault
from controller.table.loop.shell_alarms import INPUT_LOST_HOLD, InputLostAlarm, JournalAlarm, ShellAlarms
from controller.table.panel import ButtonAction


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def lamp(alarm: JournalAlarm) -> Alarm | None:
    """The journal's alarm now (a call: mypy would carry an earlier
    assert's narrowing of the attribute past the call that changed it)."""
    return alarm.alarm


def fault(kind: JournalFault, problem: str = "the disk is full") -> JournalError:
    return JournalError("/var/lib/shoe/journal.db", kind, problem)


def test_journal_full_is_raised_once_held_while_the_fault_stays_and_cleared_by_a_commit() -> None:
    alarm = JournalAlarm()
    change = alarm.failed(fault(JournalFault.FULL), waiting=3)
    assert change is not None and alarm.alarm is Alarm.JOURNAL_FULL
    assert change.notices == (AlarmRaised(Alarm.JOURNAL_FULL, "the disk is full"),)
    assert change.record is not None and change.record.derived == ()
    assert change.record.body == {
        "kind": "journal_fault", "event": "raised", "alarm": "journal_full", "detail": "the disk is full",
        "fault": "full",
    }  # fmt: skip
    assert alarm.failed(fault(JournalFault.FULL), waiting=4) is None  # the same fault: nothing new
    assert alarm.clearing().body["event"] == "cleared" and alarm.clearing().body["alarm"] == "journal_full"
    cleared = alarm.recovered()
    assert cleared.notices == (AlarmCleared(Alarm.JOURNAL_FULL),) and cleared.record is None
    assert alarm.alarm is None
    assert alarm.failed(fault(JournalFault.FULL), waiting=0) is not None  # a new fault after the recovery


def test_another_fault_is_journaled_and_a_different_alarm_replaces_the_first() -> None:
    alarm = JournalAlarm()
    alarm.failed(fault(JournalFault.DELETED, "deleted"), waiting=0)
    assert alarm.alarm is Alarm.JOURNAL_FAULT
    same_alarm = alarm.failed(fault(JournalFault.WRITE_FAILED, "I/O error"), waiting=0)
    assert same_alarm is not None and same_alarm.notices == ()  # the same lamp: nothing to sound again ...
    assert same_alarm.record is not None and same_alarm.record.body["fault"] == "write_failed"  # ... but journaled
    full = alarm.failed(fault(JournalFault.FULL), waiting=0)
    assert full is not None and lamp(alarm) is Alarm.JOURNAL_FULL
    assert full.notices == (AlarmCleared(Alarm.JOURNAL_FAULT), AlarmRaised(Alarm.JOURNAL_FULL, "the disk is full"))


def test_press_again_names_what_was_lost_and_journals_an_alarm_record_for_the_floor() -> None:
    lost = InputLostAlarm(Clock())
    change = lost.lost(Counter({"declare": 2, "link": 1}), bound=256, waiting=0)
    assert lost.alarm is Alarm.INPUT_LOST
    [notice] = change.notices
    assert isinstance(notice, AlarmRaised) and notice.alarm is Alarm.INPUT_LOST
    detail = notice.detail
    assert detail.startswith("3 events lost at the table loop's full queue (256 waiting")
    assert "declare x2; press again" in detail and "not a press: shoe port report x1" in detail
    assert change.record is not None
    assert change.record.body["event"] == "raised" and change.record.body["detail"] == detail
    [(kind, body)] = change.record.derived
    assert kind is RecordKind.ALARM and body["alarm"] == "input_lost" and body["text"] == "PRESS AGAIN"


def test_press_again_clears_after_its_hold_on_the_loops_clock() -> None:
    clock = Clock()
    lost = InputLostAlarm(clock)
    assert lost.hold_over() is None  # nothing standing
    lost.lost(Counter({"void": 1}), bound=2, waiting=0)
    clock.now += INPUT_LOST_HOLD - 0.01
    assert lost.hold_over() is None and lost.alarm is Alarm.INPUT_LOST
    clock.now += 0.02
    change = lost.hold_over()
    assert change is not None and change.notices == (AlarmCleared(Alarm.INPUT_LOST),)
    assert change.record is not None and change.record.body["event"] == "cleared"
    assert change.record.body["detail"] == f"held {INPUT_LOST_HOLD:g} s without a press"
    assert lost.alarm is None


def test_only_a_press_put_after_the_loss_clears_press_again() -> None:
    lost = InputLostAlarm(Clock())
    assert lost.press_accepted(ButtonAction.DECLARE) is None  # nothing standing
    lost.lost(Counter({"declare": 1}), bound=2, waiting=2)  # two events waited when the loss was seen
    # the loop handles an event, then counts it taken
    assert lost.press_accepted(ButtonAction.NEW_SHOE) is None  # waited before the loss: not the answer
    lost.taken()
    assert lost.press_accepted(ButtonAction.NEW_SHOE) is None
    lost.taken()
    change = lost.press_accepted(ButtonAction.NEW_SHOE)  # the first press put after the loss
    assert change is not None and change.record is not None
    assert change.record.body["detail"] == "a panel press (new_shoe) was accepted"
    assert lost.alarm is None


def test_a_further_loss_holds_anew() -> None:
    clock = Clock()
    lost = InputLostAlarm(clock)
    lost.lost(Counter({"declare": 1}), bound=2, waiting=0)
    clock.now += INPUT_LOST_HOLD - 1
    again = lost.lost(Counter({"declare": 1}), bound=2, waiting=0)
    assert isinstance(again.notices[0], AlarmRaised)  # it sounds again
    clock.now += 2  # past the first hold, within the second
    assert lost.hold_over() is None


def test_the_shell_alarms_standing_the_journals_first() -> None:
    alarms = ShellAlarms(Clock())
    assert alarms.standing() == ()
    alarms.input_lost.lost(Counter({"declare": 1}), bound=2, waiting=0)
    alarms.journal.failed(fault(JournalFault.FULL), waiting=0)
    assert alarms.standing() == (Alarm.JOURNAL_FULL, Alarm.INPUT_LOST)
