"""A flood at full speed on the shoe's pty, through the real daemon process: random bytes (both
dialects) or a binary resend storm (one valid frame back to back). The daemon's memory stays bounded, the
journal gets a few records instead of one per rejected frame or line, NOISY LINE is raised (journaled) for
garbage and not for valid frames, the link does not flap, and a real (simulated) shoe plugged in right
after deals normally: every card journaled exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import threading
import time
import tty
from pathlib import Path

import pytest

from firmware_protocol.binary import encode
from firmware_protocol.messages import PROTOCOL_VERSION, Hello
from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth, journal_cards, truth_cards, wait_for

pytestmark = pytest.mark.e2e

FLOOD_SECONDS = 6.0
#: Growth of the daemon's resident memory allowed over the flood (with the old unbounded queue it grew
#: by 16.6 MB in these 6 s on a loaded 2-core machine; now by some 0.1 MB).
RSS_GROWTH_MB = 8.0


def vm_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def random_bytes() -> bytes:
    return random.Random(99).randbytes(1 << 16)


def resend_storm() -> bytes:
    """A shoe resending its HELLO (event 1, never acknowledged as far as it knows) back to back."""
    frame = encode(1, Hello("storm-1.0", "SN-STORM", PROTOCOL_VERSION, 0x5707_0001))
    return frame * ((1 << 16) // len(frame))


def flood(master: int, seconds: float, pid: int, chunk: bytes) -> tuple[int, int]:
    """Write ``chunk`` over and over as fast as the pty takes it (and drain what the daemon writes back)
    for ``seconds``; returns (bytes written, highest RSS of the daemon in kB)."""
    os.set_blocking(master, False)
    written = 0
    peak = 0
    next_sample = 0.0
    deadline = time.monotonic() + seconds
    while (now := time.monotonic()) < deadline:
        if now >= next_sample:
            peak = max(peak, vm_rss_kb(pid))
            next_sample = now + 0.1
        readable, writable, _ = select.select([master], [master], [], 0.1)
        if readable:
            with contextlib.suppress(BlockingIOError):
                os.read(master, 65536)
        if writable:
            with contextlib.suppress(BlockingIOError):
                written += os.write(master, chunk[written % len(chunk) :])
    return written, max(peak, vm_rss_kb(pid))


def relay(a: int, b: int, stop: threading.Event) -> None:
    """Copy bytes both ways between two ttys (the simulated shoe's and the daemon's) until ``stop``."""
    while not stop.is_set():
        readable, _, _ = select.select([a, b], [], [], 0.05)
        for fd in readable:
            try:
                data = os.read(fd, 4096)
            except (BlockingIOError, OSError):
                continue
            if data:
                os.set_blocking(b if fd == a else a, True)
                os.write(b if fd == a else a, data)


@pytest.mark.parametrize(
    ("dialect", "storm"),
    [("binary", "random bytes"), ("ascii", "random bytes"), ("binary", "resend storm")],
)
def test_a_flood_is_bounded_and_the_next_shoe_deals_normally(
    harness: Harness, tmp_path: Path, dialect: str, storm: str
) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    port = tmp_path / "daemon-port"
    port.symlink_to(os.ttyname(slave))
    os.close(slave)
    stop = threading.Event()
    relay_thread: threading.Thread | None = None
    sim_fd: int | None = None
    try:
        shoe_link = harness.link
        harness.link = port  # the daemon reads our pty; the simulated shoe comes later, through a relay
        args: tuple[str, ...] = ()
        if dialect == "ascii":
            config = tmp_path / "ascii.toml"
            config.write_text(
                '[table]\nauto_declare = true\n[shoe]\ndialect = "ascii"\n[scoreboard]\nenabled = false\n'
            )
            args = ("--config", str(config))
        daemon = harness.start_daemon(*args, dialect=dialect)
        harness.wait_daemon_log("ready in")
        time.sleep(0.5)
        rss_before = vm_rss_kb(daemon.pid)
        chunk = random_bytes() if storm == "random bytes" else resend_storm()
        written, rss_peak = flood(master, FLOOD_SECONDS, daemon.pid, chunk)
        assert written > 1_000_000, f"only {written} bytes went in: not a flood"
        growth_mb = (rss_peak - rss_before) / 1024
        assert growth_mb < RSS_GROWTH_MB, f"RSS grew {growth_mb:.1f} MB under a flood of {written} bytes"

        inputs = harness.journal_inputs()
        noisy = [b["noisy"] for b in inputs if b["kind"] == "line_noise"]
        assert noisy == ([True] if storm == "random bytes" else [])  # valid frames are not noise
        assert len(inputs) < 40, f"{len(inputs)} journal inputs for one flood"
        assert sum(1 for b in inputs if b["kind"] == "link") <= 2  # no flapping (down at start, maybe up)
        alarms = [json.loads(r.body) for r in harness.journal_records() if r.kind == "alarm"]
        assert any(a["alarm"] == "noisy_line" for a in alarms) == (storm == "random bytes")
        assert len(alarms) < 10

        # the shoe is plugged in: relay the simulated shoe's pty to ours
        harness.link = shoe_link
        harness.start_sim("--decks", "1", "--pace", "0.002" if dialect == "ascii" else "fast", dialect=dialect, seed=4)
        sim_fd = os.open(os.readlink(shoe_link), os.O_RDWR | os.O_NOCTTY)  # raw already (the simulator's)
        started = time.monotonic()
        relay_thread = threading.Thread(target=relay, args=(sim_fd, master, stop), name="test-relay")
        relay_thread.start()
        assert harness.wait_sim(timeout=120) == 0
        n = len(truth_cards(harness))
        wait_for(lambda: len(journal_cards(harness)) >= n, 30, "the daemon to journal every card")
        dealt_in = time.monotonic() - started
        assert dealt_in < 60, f"the shoe after the flood took {dealt_in:.1f} s"
        assert_matches_truth(harness, sequenced=dialect == "binary")
        assert harness.stop_daemon() == 0
        log = harness.daemon_logs[-1].read_text()
        assert "Traceback" not in log
    finally:
        stop.set()
        if relay_thread is not None:
            relay_thread.join(5)
        if sim_fd is not None:
            os.close(sim_fd)
        os.close(master)


def test_noisy_line_blinks_the_fault_lamp_and_clears_when_the_line_is_quiet(tmp_path: Path) -> None:
    """The daemon in this process with gpiozero's MockFactory: a flood makes the FAULT lamp blink slowly
    (NOISY LINE: the mock pin really toggles), and a few quiet seconds later it is off again."""
    from controller.config import default_settings
    from controller.game.table import Alarm, Lamp
    from controller.table.daemon import Daemon
    from controller.table.panel import LampPattern

    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    settings = default_settings().with_overrides(
        port=path, dialect="ascii", journal=str(tmp_path / "j.db"), pin_factory="mock"
    )
    daemon = Daemon(settings.with_scoreboard(enabled=False))
    thread = threading.Thread(target=daemon.run, name="daemon-under-test")
    thread.start()
    try:
        wait_for(lambda: daemon.ready and daemon.panel is not None, 15, "the daemon to be ready")
        assert daemon.panel is not None and daemon.loop is not None
        wait_for(lambda: daemon.panel is not None and daemon.panel.shown[Lamp.FAULT] is LampPattern.OFF, 5, "LINK up")
        flood(master, 2.0, os.getpid(), random_bytes())
        assert Alarm.NOISY_LINE in daemon.loop.view().alarms
        wait_for(lambda: daemon.panel.shown[Lamp.FAULT] is LampPattern.SLOW_BLINK, 5, "the FAULT lamp blinking")  # type: ignore[union-attr]
        pin = daemon.panel._lamps[Lamp.FAULT].pin
        changes = len(pin.states)
        wait_for(lambda: len(pin.states) >= changes + 2, 1.2, "the lamp on and off once more: it blinks")
        wait_for(lambda: Alarm.NOISY_LINE not in daemon.loop.view().alarms, 15, "NOISY LINE to clear")  # type: ignore[union-attr]
        # the loop clears the alarm in its state, then shows the view: the lamp follows within a moment
        wait_for(lambda: daemon.panel.shown[Lamp.FAULT] is LampPattern.OFF, 5, "the FAULT lamp off")  # type: ignore[union-attr]
    finally:
        daemon.stop()
        thread.join(timeout=15)
        os.close(master)
    assert not thread.is_alive()
