"""The shell's own alarms: JOURNAL FULL / JOURNAL FAULT, PRESS AGAIN and UNKNOWN BADGE, held by the loop, not the game.

Both are members of the core's :class:`~controller.game.table.Alarm` (so the panel, the LCD and the
scoreboard know their text and signal), but the pure :class:`~controller.game.table.TableState` never raises
them: the loop adds the standing ones to the pure view's alarms (:meth:`ShellAlarms.standing`) and a replay
never resurrects a fault that has passed.

* :class:`JournalAlarm`: raised by a commit the journal refused, held while commits keep failing (a new
  record only when the fault changes), cleared by the first commit that passes.
* :class:`InputLostAlarm` (PRESS AGAIN): events dropped at the inbox's full queue; cleared by the next panel
  press the loop accepts (not one that was already waiting when the loss was seen) or after ``hold`` seconds
  of the loop's clock; each further loss sounds again and holds anew.
* :class:`BadgeAlarm` (UNKNOWN BADGE): a badge at the dealer's position that signed no one in (its
  ``badge_refused`` record is the dealer_card input's, :mod:`controller.game.staff`); cleared when a dealer signs
  in or after ``hold`` seconds. No record of its own: the ``badge_refused`` record says it.

Each change is an :class:`AlarmChange`: the notices to show (the buzzer sounds once) and the record to stage
in order with the inputs, an input of kind ``journal_fault`` (never replayed). Nothing here shows or journals
by itself.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from controller.game.records import InputKind, RecordKind, derived_records, record_body
from controller.game.table import Alarm, AlarmCleared, AlarmRaised, Notice
from controller.journal import JournalError, JournalFault
from controller.table.loop.inbox import DROPPED_KINDS, READER_DROPPED_KINDS
from controller.table.panel import ButtonAction

log = logging.getLogger(__name__)

#: Longest PRESS AGAIN (``Alarm.INPUT_LOST``) stands when no press clears it (seconds of the loop's clock).
INPUT_LOST_HOLD = 10.0
#: How long UNKNOWN BADGE (``Alarm.UNKNOWN_BADGE``) stands when no dealer signs in (seconds of the loop's clock).
BADGE_HOLD = 10.0

_PRESS_KINDS = frozenset(action.value for action in ButtonAction)


@dataclass(frozen=True)
class ShellRecord:
    """A record of a fault of the shell: the body of an input of kind ``journal_fault`` (never replayed) and
    its derived records (an alarm record for the floor, or none)."""

    body: dict[str, Any]
    derived: tuple[tuple[RecordKind, dict[str, Any]], ...] = ()


def shell_record(event: str, alarm: Alarm, detail: str, notices: Sequence[Notice] = (), **extra: str) -> ShellRecord:
    """The record of ``alarm`` ``event`` ("raised" or "cleared"); ``notices`` give its derived records."""
    body = record_body(InputKind.JOURNAL_FAULT, event=event, alarm=alarm.name.lower(), detail=detail, **extra)
    return ShellRecord(body, tuple(derived_records(notices)))


@dataclass(frozen=True)
class AlarmChange:
    """What an alarm's change asks of the loop: show ``notices``, stage ``record``."""

    notices: tuple[Notice, ...]
    record: ShellRecord | None


class JournalAlarm:
    """JOURNAL FULL or JOURNAL FAULT while the journal refuses commits."""

    def __init__(self) -> None:
        self.alarm: Alarm | None = None
        self._fault: JournalFault | None = None  # a new record and log line only when the fault changes

    def failed(self, exc: JournalError, waiting: int) -> AlarmChange | None:
        """A commit (or a check) failed with ``exc``, ``waiting`` inputs staged. None: the same fault again."""
        alarm = Alarm.JOURNAL_FULL if exc.fault is JournalFault.FULL else Alarm.JOURNAL_FAULT
        if alarm is self.alarm and exc.fault is self._fault:
            log.debug("journal still at fault: %s", exc)
            return None
        log.error("%s: nothing acknowledged, %d inputs waiting: %s", alarm.value, waiting, exc)
        notices: list[Notice] = []
        previous = self.alarm
        if previous is not alarm:
            if previous is not None:
                notices.append(AlarmCleared(previous))
            notices.append(AlarmRaised(alarm, exc.problem))
        self.alarm = alarm
        self._fault = exc.fault
        # Kept in order with the inputs: the journal will say when the fault began, and why.
        return AlarmChange(tuple(notices), shell_record("raised", alarm, exc.problem, fault=exc.fault.value))

    def clearing(self) -> ShellRecord:
        """The record that joins the batch retried while the alarm stands: it commits with it, or not at all."""
        assert self.alarm is not None
        return shell_record("cleared", self.alarm, "the journal takes commits again")

    def recovered(self) -> AlarmChange:
        """A commit passed (its batch held :meth:`clearing`): the alarm clears."""
        alarm = self.alarm
        assert alarm is not None
        log.warning("journal writes again: %s cleared", alarm.value)
        self.alarm = None
        self._fault = None
        return AlarmChange((AlarmCleared(alarm),), None)


class InputLostAlarm:
    """PRESS AGAIN: events lost at the inbox's full queue. Time is the loop's clock."""

    def __init__(self, clock: Callable[[], float], hold: float = INPUT_LOST_HOLD) -> None:
        self.clock = clock
        self.hold = hold
        self.alarm: Alarm | None = None
        self._until = 0.0  # when the hold ends
        self._queued_before_loss = 0  # events that waited in the queue when the loss was seen

    def lost(self, kinds: Counter[str], bound: int, waiting: int) -> AlarmChange:
        """Events of ``kinds`` were dropped at a queue of ``bound``; ``waiting`` events were put before the loss
        was seen (their presses are not the dealer's answer). Raises (again) and holds anew."""
        lost = sum(kinds.values())
        presses = [f"{k} x{n}" for k, n in sorted(kinds.items()) if k in _PRESS_KINDS]
        words = dict(DROPPED_KINDS.values()) | dict(READER_DROPPED_KINDS.values())
        others = [f"{words.get(k, k)} x{n}" for k, n in sorted(kinds.items()) if k not in _PRESS_KINDS]
        detail = (
            f"{lost} event{'s' if lost != 1 else ''} lost at the table loop's full queue "
            f"({bound} waiting: the loop was stalled)"
        )
        if presses:
            detail += ": " + ", ".join(presses) + "; press again"
        if others:
            detail += f"; not a press: {', '.join(others)} (see the log)"
        log.error("PRESS AGAIN: %s", detail)
        notice = AlarmRaised(Alarm.INPUT_LOST, detail)
        self.alarm = Alarm.INPUT_LOST
        self._until = self.clock() + self.hold
        self._queued_before_loss = waiting
        return AlarmChange((notice,), shell_record("raised", Alarm.INPUT_LOST, detail, [notice]))

    def taken(self) -> None:
        """The loop handled one event from the queue (one fewer of those that waited before the loss)."""
        if self._queued_before_loss:
            self._queued_before_loss -= 1

    def press_accepted(self, action: ButtonAction) -> AlarmChange | None:
        """The loop applied a panel press: the dealer's answer, unless it waited in the queue before the loss."""
        if self.alarm is None or self._queued_before_loss:
            return None
        return self._clear(f"a panel press ({action.value}) was accepted")

    def hold_over(self) -> AlarmChange | None:
        """Once per loop iteration without a new loss: clears the alarm when its hold is over (one clock read
        while it stands, none otherwise)."""
        if self.alarm is None or self.clock() < self._until:
            return None
        return self._clear(f"held {self.hold:g} s without a press")

    def _clear(self, why: str) -> AlarmChange:
        log.warning("PRESS AGAIN cleared: %s", why)
        self.alarm = None
        self._queued_before_loss = 0
        return AlarmChange((AlarmCleared(Alarm.INPUT_LOST),), shell_record("cleared", Alarm.INPUT_LOST, why))


class BadgeAlarm:
    """UNKNOWN BADGE: a badge at the dealer's position signed no one in. Time is the loop's clock."""

    def __init__(self, clock: Callable[[], float], hold: float = BADGE_HOLD) -> None:
        self.clock = clock
        self.hold = hold
        self.alarm: Alarm | None = None
        self._until = 0.0

    def refused(self, detail: str) -> tuple[Notice, ...]:
        """A badge was refused: raised (the buzzer sounds once) and held anew."""
        log.warning("UNKNOWN BADGE: %s", detail)
        self.alarm = Alarm.UNKNOWN_BADGE
        self._until = self.clock() + self.hold
        return (AlarmRaised(Alarm.UNKNOWN_BADGE, detail),)

    def signed_in(self) -> tuple[Notice, ...]:
        """A dealer signed in: the alarm clears."""
        return self._clear()

    def hold_over(self) -> tuple[Notice, ...]:
        """Once per loop iteration: clears the alarm when its hold is over."""
        if self.alarm is None or self.clock() < self._until:
            return ()
        return self._clear()

    def _clear(self) -> tuple[Notice, ...]:
        if self.alarm is None:
            return ()
        self.alarm = None
        return (AlarmCleared(Alarm.UNKNOWN_BADGE),)


class ShellAlarms:
    """The shell's alarms, as the loop holds them."""

    def __init__(self, clock: Callable[[], float], *, input_lost_hold: float = INPUT_LOST_HOLD) -> None:
        self.journal = JournalAlarm()
        self.input_lost = InputLostAlarm(clock, input_lost_hold)
        self.badge = BadgeAlarm(clock)

    def standing(self) -> tuple[Alarm, ...]:
        """The shell's alarms now, the journal's first: the loop adds them to the pure view's."""
        alarms = (self.journal.alarm, self.input_lost.alarm, self.badge.alarm)
        return tuple(a for a in alarms if a is not None)
