"""``shoe-controller demo`` as a process: stopping it never leaves its simulator or its board behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.displays.wording import money
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


def cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def running_with(text: str) -> list[int]:
    """Live processes whose command line names ``text`` (the demo's own directory: its children's)."""
    out = []
    for entry in Path("/proc").iterdir():
        pid = int(entry.name) if entry.name.isdigit() else 0
        if pid and any(text.encode() in part for part in cmdline(pid)) and alive(pid):
            out.append(pid)
    return out


@pytest.mark.e2e
@pytest.mark.parametrize("when", ["simulator", "board"])
def test_sigterm_while_the_demo_starts_stops_every_child(when: str) -> None:
    """SIGTERM as soon as the simulator listens (before the daemon's own handler is in place) used to kill the
    demo outright and leave ``hw_sim.cli`` running, orphaned, waiting for a controller forever; SIGTERM as the
    board starts could leave the board running (the signal came between its fork and its name), still serving
    the dealer screen's port."""
    demo = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "demo", "--pace", "0.5", "--scoreboard", f"127.0.0.1:{free_port()}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    kids: list[int] = []
    where = ""
    try:
        deadline = time.monotonic() + 60
        wanted = b"hw_sim.cli" if when == "simulator" else b"board"
        while time.monotonic() < deadline and demo.poll() is None:
            kids = children(demo.pid)
            sim = next((cmdline(p) for p in kids if b"hw_sim.cli" in cmdline(p)), None)
            if sim and "--link" in [a.decode() for a in sim]:
                where = str(Path(os.fsdecode(sim[sim.index(b"--link") + 1])).parent)
            if where and any(wanted in part for p in kids for part in cmdline(p)):
                break
            time.sleep(0.002)
        assert where and kids, f"the demo did not start its {when}"
        if when == "simulator":
            while not Path(where, "shoe").exists() and time.monotonic() < deadline:
                time.sleep(0.002)
        # The simulator listens (or the board has just been started); the demo is still setting up.
        os.kill(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)
        deadline = time.monotonic() + 15
        while running_with(where) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running_with(where) == [], f"a child outlived the demo: {[cmdline(p)[:4] for p in running_with(where)]}"
        assert "Traceback" not in (demo.stderr.read() if demo.stderr else "")
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        for pid in running_with(where) if where else kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if demo.stderr:
            demo.stderr.close()


@pytest.mark.e2e
def test_the_demo_table_has_players_a_reader_and_the_dealer_screen(tmp_path: Path) -> None:
    """The README's demo (issue 16): simulated players bet on a simulated bet-spot reader, the table settles every
    wager, the dealer screen is served beside the scoreboard while it deals, and the journal's ``settle`` agrees
    with what the demo printed."""
    import json
    import urllib.request

    journal = tmp_path / "journal.db"
    dealer = f"127.0.0.1:{free_port()}"
    demo = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "demo", "--pace", "0.02", "--decks", "1", "--seed", "3",
         "--journal", str(journal), "--scoreboard", f"127.0.0.1:{free_port()}", "--dealer", dealer],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert demo.stdout is not None
    said: list[str] = []
    states: list[dict[str, object]] = []
    try:
        for line in demo.stdout:
            said.append(line)
            if "dealer screen http://" in line or (said and "coup" in line and len(states) < 3):
                with (
                    contextlib.suppress(OSError),
                    urllib.request.urlopen(f"http://{dealer}/api/state", timeout=2) as response,
                ):
                    states.append(json.loads(response.read()))
        assert demo.wait(120) == 0, demo.stderr.read() if demo.stderr else ""
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    text = "".join(said)
    assert f"dealer screen http://{dealer}/" in text
    settled = [line for line in said if "wagers settled" in line]
    assert len(settled) == 1, text
    count = int(settled[0].split("demo: ", 1)[1].split()[0])
    assert count > 20
    assert any(s.get("state") == "money" and s.get("seats") for s in states), states  # the money was on it
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli", "settle", "--journal", str(journal), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    wagers = [json.loads(line) for line in result.stdout.splitlines() if "bet" in json.loads(line)]
    assert len(wagers) == count
    house = -sum(w["net"] for w in wagers)
    shown = settled[0].rsplit("the house ", 1)[1].strip()
    assert shown == ("+" if house >= 0 else "-") + money(abs(house))
    # the players bought in with cash at the dealer screen's socket: the journal has their buy-ins
    from controller.journal import Journal

    with Journal.open(str(journal), create=False, read_only=True) as j:
        buy_ins = [json.loads(r.body) for r in j.records() if r.kind == "buy_in"]
    assert len(buy_ins) >= 3 and all(b["tender"] == "cash" and b["cents"] > 0 for b in buy_ins), buy_ins
