"""Memory soak: the daemon's RSS at the end of every shoe over many shoes dealt at full speed.

    .venv/bin/python benchmarks/bench_soak.py [--shoes 500] [--seed 1] [--every 25] [--dir DIR] [--no-viewer]

Runs the demo table as a real process (``shoe-controller demo --pace fast``: the daemon in that process with
mock GPIO pins, the scoreboard and the demo's terminal display as sinks, the journal on disk; the demo starts
the software shoe ``shoe-sim`` itself, whose simulated dealer follows the PROMPTs at full speed). By default a
viewer is connected to the scoreboard's event stream for the whole soak, as the kiosk browser is at a table.
The demo prints one line per table event on a pipe; at each ``shoe N ended`` line this script reads the
demo process's ``VmRSS`` from ``/proc/PID/status``.

Prints the RSS at shoe 1, every ``--every``-th shoe and the last; the slope (KB per shoe, least squares over
the second half of the shoes, after start-up and the caches have settled) and the total growth. The journal
goes in a temporary directory in the current directory (``--dir``), so that the fsync cost is this disk's.
Every process, thread and file this script makes is closed or removed before it exits.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import platform
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from harness import console_script, load, out, proc_status, status_kb

from tests.servers import free_port

#: What a flat line means here: growth over the second half, in KB per shoe (the leak was about 35).
TARGET_SLOPE_KB = 2.0
#: Longest wait for one shoe before the benchmark gives up (the daemon or the shoe is stuck).
SHOE_TIMEOUT = 120.0
SHOE_ENDED = re.compile(r"^shoe (\d+) ended after (\d+) coups$")


def slope(points: Sequence[tuple[int, int]]) -> float:
    """Least-squares slope of (shoe, KB) points: KB per shoe."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return sxy / sxx if sxx else float("nan")


class Viewer:
    """A scoreboard viewer: reads ``/events`` (Server-Sent Events) on its own thread until closed, as the
    kiosk browser does, reconnecting if the stream drops."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.events = 0
        self.connects = 0
        self._closing = threading.Event()
        self._conn: http.client.HTTPConnection | None = None
        self._thread = threading.Thread(target=self._run, name="soak-viewer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closing.is_set():
            conn: http.client.HTTPConnection | None = None
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self._conn = conn
                conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
                response = conn.getresponse()
                if response.status != 200:
                    raise OSError(f"/events answered {response.status}")
                self.connects += 1
                while not self._closing.is_set():
                    line = response.readline()
                    if not line:
                        break
                    if line.startswith(b"data:"):
                        self.events += 1
            except (OSError, http.client.HTTPException):
                self._closing.wait(0.2)  # not up yet, or restarting: try again
            finally:
                if conn is not None:
                    conn.close()

    def close(self) -> None:
        self._closing.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=10)


def soak(args: argparse.Namespace, tmp: Path) -> int:
    port = free_port()
    journal = tmp / "soak.db"
    cmd = [
        *console_script("shoe-controller", "controller.cli"),
        "demo",
        "--pace",
        "fast",
        "--shoes",
        str(args.shoes),
        "--seed",
        str(args.seed),
        "--journal",
        str(journal),
        "--scoreboard",
        f"127.0.0.1:{port}",
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(key, None)
    out(f"  daemon:   {shlex.join(cmd)}")
    out(f"  viewer:   {'one client on the scoreboard /events stream' if args.viewer else 'none (--no-viewer)'}")
    out()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    viewer = Viewer(port) if args.viewer else None
    samples: list[tuple[int, int]] = []  # (shoe, VmRSS KB)
    coups = 0
    hwm = 0
    tail: list[str] = []
    stuck = threading.Timer(SHOE_TIMEOUT, proc.kill)  # re-armed at every shoe end
    stuck.start()
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            tail = [*tail[-9:], line]
            m = SHOE_ENDED.match(line)
            if not m:
                continue
            status = proc_status(proc.pid)
            rss = status_kb(status, "VmRSS")
            hwm = status_kb(status, "VmHWM")
            shoe, shoe_coups = int(m.group(1)), int(m.group(2))
            samples.append((shoe, rss))
            coups += shoe_coups
            stuck.cancel()
            stuck = threading.Timer(SHOE_TIMEOUT, proc.kill)
            stuck.start()
            if shoe == 1 or shoe % args.every == 0 or shoe == args.shoes:
                wall = time.perf_counter() - t0
                out(f"  shoe {shoe:4d}  RSS {rss / 1024:7.2f} MB  ({shoe_coups} coups; {wall:6.1f} s)")
        rc = proc.wait(timeout=30)
    finally:
        stuck.cancel()
        if viewer is not None:
            viewer.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
    wall = time.perf_counter() - t0
    out()
    if len(samples) < args.shoes:
        out(f"the demo stopped after {len(samples)} of {args.shoes} shoes (exit code {rc}); its last lines:")
        for line in tail:
            out(f"    {line}")
        return 1
    first, last = samples[0][1], samples[-1][1]
    half = samples[len(samples) // 2 :]
    kb = slope(half)
    per_shoe = wall / len(samples)
    out(f"{len(samples)} shoes, {coups} coups in {wall:.1f} s ({per_shoe:.2f} s a shoe); demo exit code {rc}")
    if viewer is not None:
        out(f"viewer: {viewer.events} scoreboard events read over {viewer.connects} connection(s)")
    out(
        f"RSS: shoe 1 {first / 1024:.2f} MB -> shoe {samples[-1][0]} {last / 1024:.2f} MB "
        f"(total {(last - first) / 1024:+.2f} MB, {(last - first) / max(1, len(samples) - 1):+.1f} KB a shoe; "
        f"peak {hwm / 1024:.2f} MB)"
    )
    out(
        f"slope over the second half (shoes {half[0][0]}-{half[-1][0]}, least squares): {kb:+.2f} KB a shoe; "
        f"flat (|slope| <= {TARGET_SLOPE_KB:g} KB a shoe): {'MET' if abs(kb) <= TARGET_SLOPE_KB else 'MISSED'}"
    )
    return 0 if rc == 0 else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shoes", type=int, default=500, help="shoes to deal (default 500; 40 for a quick look)")
    p.add_argument("--seed", type=int, default=1, help="shuffle seed of the simulated shoe")
    p.add_argument("--every", type=int, default=25, help="print the RSS every this many shoes (default 25)")
    p.add_argument("--dir", type=Path, default=Path.cwd(), help="where the temporary journal goes")
    p.add_argument("--no-viewer", dest="viewer", action="store_false", help="no client on the scoreboard")
    args = p.parse_args(argv)
    if args.shoes < 2 or args.every < 1:
        p.error("--shoes must be at least 2 and --every at least 1")
    if not Path("/proc/self/status").exists():
        p.error("this benchmark reads /proc/PID/status (Linux only)")
    started = time.perf_counter()
    out("shoe-controller memory soak")
    out(f"  command:  {shlex.join([sys.executable, *sys.argv])}")
    out(f"  machine:  nproc {len(os.sched_getaffinity(0))}, {platform.machine()}, {platform.platform()}")
    out(f"  python:   {platform.python_version()} ({platform.python_implementation()})")
    out(f"  load:     {load()}")
    args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-soak-", dir=args.dir) as name:
        out(f"  journal:  {name}")
        rc = soak(args, Path(name))
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
