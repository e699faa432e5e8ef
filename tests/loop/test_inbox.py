"""The loop's inbox on its own: bounded, a press dropped at once on a full queue and counted by kind, other
events held back for ``put_wait`` first, the wake-up pipe written by every put, the events taken in order."""

from __future__ import annotations

import select
import threading
import time
from collections import Counter

from controller.table.loop import FloorAck, Inbox, PanelPress, PortState, Stop, WireBytes
from controller.table.panel import ButtonAction
from floor_protocol.ack import Ack


def full(bound: int = 2, put_wait: float = 5.0) -> Inbox:
    inbox = Inbox(bound, put_wait=put_wait)
    for _ in range(bound):
        inbox.put(PortState(True, "port opened"))
    assert inbox.full() and inbox.waiting() == bound
    return inbox


def test_a_press_on_a_full_queue_is_dropped_at_once_and_counted_by_its_action() -> None:
    inbox = full(put_wait=5.0)
    started = time.monotonic()
    inbox.put(PanelPress(ButtonAction.DECLARE))  # a GPIO callback must never block
    inbox.put(PanelPress(ButtonAction.DECLARE))
    inbox.put(PanelPress(ButtonAction.VOID))
    assert time.monotonic() - started < 1.0  # not the put_wait of 5 s
    assert inbox.waiting() == 2 and inbox.dropped == 3
    assert inbox.take_dropped() == Counter({"declare": 2, "void": 1})
    assert inbox.take_dropped() == Counter()  # taken: the next look finds nothing new
    assert inbox.dropped == 3  # the running total stays


def test_another_event_waits_put_wait_for_room_then_is_dropped_under_its_kind() -> None:
    inbox = full(put_wait=0.2)
    started = time.monotonic()
    inbox.put(PortState(False, "port lost"))
    inbox.put(FloorAck(Ack("archive-test-0001", "t1", 12, "ab" * 32, "")))
    waited = time.monotonic() - started
    assert 0.4 <= waited < 3.0
    assert inbox.take_dropped() == Counter({"link": 1, "floor_ack": 1})


def test_an_event_that_waits_gets_in_when_the_loop_makes_room() -> None:
    inbox = full(put_wait=5.0)
    threading.Timer(0.1, inbox.take).start()
    inbox.put(WireBytes(b"H9\r\n", 1.0))  # waits until the timer took one
    assert inbox.dropped == 0 and inbox.waiting() == 2
    taken = [inbox.take(), inbox.take(), inbox.take()]
    assert taken == [PortState(True, "port opened"), WireBytes(b"H9\r\n", 1.0), None]


def test_every_put_writes_the_wake_up_pipe_while_the_loop_waits_on_it() -> None:
    inbox = Inbox()
    inbox.put(Stop())  # no loop waiting: queued, no pipe to write
    with inbox.wakeup() as wake_r:
        assert select.select([wake_r], [], [], 0)[0] == []
        inbox.put(PanelPress(ButtonAction.NEW_SHOE))
        assert select.select([wake_r], [], [], 1.0)[0] == [wake_r]
        inbox.drain_wakeup(wake_r)
        assert select.select([wake_r], [], [], 0)[0] == []
        inbox.drain_wakeup(wake_r)  # an empty pipe: nothing to read, no error
    inbox.put(Stop())  # the loop has stopped: the pipe is closed and not written
    assert [inbox.take() for _ in range(4)] == [Stop(), PanelPress(ButtonAction.NEW_SHOE), Stop(), None]
