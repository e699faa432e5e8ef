"""``shoe-controller demo`` as a process: stopping it never leaves its simulator behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers import free_port

REPO = Path(__file__).resolve().parents[2]


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.e2e
def test_sigterm_while_the_simulator_starts_stops_the_simulator_too() -> None:
    """SIGTERM as soon as the simulator listens (before the daemon's own handler is in place) used to kill
    the demo outright and leave ``hw_sim.cli`` running, orphaned, waiting for a controller forever."""
    demo = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "demo", "--pace", "0.5", "--scoreboard", f"127.0.0.1:{free_port()}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    sims: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not sims and time.monotonic() < deadline and demo.poll() is None:
            sims = children(demo.pid)
            time.sleep(0.005)
        assert sims, "the demo did not start its simulator"
        argvs = [Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") for pid in sims]
        argv = next(a for a in argvs if b"hw_sim.cli" in a)  # the board may have started too
        link = Path(os.fsdecode(argv[argv.index(b"--link") + 1]))
        while not link.exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        # The simulator listens; the demo is still setting up its daemon (no SIGTERM handler of its own yet).
        os.kill(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(alive(p) for p in sims) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(p) for p in sims), "the simulator outlived the demo"
        assert "Traceback" not in (demo.stderr.read() if demo.stderr else "")
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        for pid in sims:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if demo.stderr:
            demo.stderr.close()
