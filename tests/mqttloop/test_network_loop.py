"""paho's network loop stopped safely: a stop right after a disconnect (where paho's ``loop_stop()`` races its
own thread, eclipse-paho/paho.mqtt.python#872) and a stop while the client waits to reconnect both end the
thread and raise nothing, with a real Mosquitto; and the race itself, forced, and met by paho's own
``loop_stop()`` held at the instant its thread exits."""

from __future__ import annotations

import inspect
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from mqttloop import NetworkLoop
from tests.servers import Mosquitto, free_port

pytestmark = pytest.mark.e2e


def client() -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    c.reconnect_delay_set(1, 30)
    return c


def connected_loop(broker: Mosquitto, name: str) -> tuple[mqtt.Client, NetworkLoop]:
    """A client connected to ``broker``, its network loop started on a thread of ours (the thread is running)."""
    c = client()
    connected = threading.Event()
    c.on_connect = lambda *_a: connected.set()
    c.connect_async("127.0.0.1", broker.port)
    loop = NetworkLoop(c, name)
    loop.start()
    assert connected.wait(10) and loop.thread is not None, "not connected"
    return c, loop


def test_a_hundred_connect_and_stop_cycles_end_the_thread_every_time(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mq").start()
    try:
        for i in range(100):
            c, loop = connected_loop(broker, f"test-{i}")
            if i % 2:
                c.disconnect()  # the thread is on its way out as stop() comes: paho's loop_stop() raced here
            assert loop.stop(5), "the network thread did not end"
    finally:
        broker.stop()


def test_a_stop_while_waiting_to_reconnect_ends_within_seconds() -> None:
    c = client()
    c.connect_async("127.0.0.1", free_port())  # nobody listens: the loop waits to reconnect (up to 30 s)
    loop = NetworkLoop(c, "test-reconnect")
    loop.start()
    time.sleep(1.5)
    t0 = time.monotonic()
    assert loop.stop(5)
    assert time.monotonic() - t0 < 2.5
    assert not loop.running


def test_stop_is_idempotent_and_safe_before_start() -> None:
    c = client()
    loop = NetworkLoop(c, "test-idle")
    assert loop.stop(1)  # never started: nothing to join
    assert loop.stop(1)


def test_the_race_itself_is_caught_and_the_thread_still_joined(tmp_path: Path) -> None:
    """Force paho#872: the thread clears ``_thread`` between ``loop_stop()``'s check and its join."""
    broker = Mosquitto(tmp_path / "mq").start()
    try:
        c, loop = connected_loop(broker, "test-race")

        def racing_loop_stop() -> None:
            c._thread_terminate = True  # paho's loop_stop(): tell its thread to end ...
            c._thread = None  # ... which ends and clears _thread just before the join below
            c._thread.join()  # type: ignore[attr-defined]  # paho's own line: AttributeError on None

        c.loop_stop = racing_loop_stop  # type: ignore[method-assign, assignment]  # it raises: returns no code
        assert loop.stop(5), "the thread was not joined after the race"
    finally:
        broker.stop()


def test_paho_s_own_loop_stop_held_until_its_thread_has_exited_still_stops(tmp_path: Path) -> None:
    """The race with paho's real ``loop_stop()`` and its real thread: the network thread, ended by the
    disconnect, is held in its ``on_disconnect`` until the caller is on the line of ``loop_stop()`` that joins
    ``self._thread``; the caller is held there until that thread has exited and cleared it, which is the instant
    of paho#872. :meth:`NetworkLoop.stop` still returns True, raising nothing."""
    lines, first = inspect.getsourcelines(mqtt.Client.loop_stop)
    join_line = first + next(i for i, line in enumerate(lines) if "self._thread.join()" in line)
    code = mqtt.Client.loop_stop.__code__
    broker = Mosquitto(tmp_path / "mq").start()
    try:
        c, loop = connected_loop(broker, "test-real-race")
        held: list[bool] = []
        at_join = threading.Event()

        def on_disconnect(*_a: object) -> None:
            if threading.current_thread() is loop.thread:  # paho's thread, on its way out: not before the caller
                at_join.wait(10)  # has looked at _thread and is about to join it

        c.on_disconnect = on_disconnect

        def on_line(frame: FrameType, event: str, arg: object) -> Any:
            if event == "line" and frame.f_lineno == join_line:
                assert loop.thread is not None
                at_join.set()
                loop.thread.join(10)  # paho's thread exits now, clearing c._thread, as the caller is about to join
                held.append(c._thread is None)
            return on_line

        def on_call(frame: FrameType, event: str, arg: object) -> Any:
            return on_line if frame.f_code is code else None

        previous = sys.gettrace()
        sys.settrace(on_call)
        try:
            stopped = loop.stop(5)
        finally:
            sys.settrace(previous)
        assert held == [True], "paho's loop_stop() did not meet its thread's exit"
        assert stopped and not loop.running
    finally:
        broker.stop()
