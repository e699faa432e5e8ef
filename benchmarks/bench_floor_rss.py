"""The table's memory with the floor link on (issue 9: RSS <= 80 MB), per process since the split (issue 14).

    .venv/bin/python benchmarks/bench_floor_rss.py [--shoes 3] [--dir /tmp]

A real ``shoe-controller run`` (the table process) and its ``shoe-controller link`` (the floor link, a process
of its own, publishing to a real Mosquitto, Debian's, started here) on a simulated 8-deck shoe dealt as fast as
it goes; each process's VmRSS is sampled every 0.2 s and its VmHWM read at the end. The target holds for the
table process (the Pi's memory is shared by all three; the sum is printed too).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' servers and harness

from harness import out, verdict

from tests.e2e.harness import Harness
from tests.servers import Mosquitto

TARGET_MB = 80.0


def kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shoes", type=int, default=3)
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-floor-rss-", dir=args.dir) as name:
        tmp = Path(name)
        broker = Mosquitto(tmp / "mosquitto").start()
        try:
            with Harness(tmp) as h:
                h.start_sim("--decks", "8", "--shoes", str(args.shoes), seed=2, pace="fast")
                daemon = h.start_daemon("--floor", broker.url, "--site", "casino", "--table-id", "t1")
                link = h.link_proc
                assert h.sim is not None and link is not None
                peak = link_peak = 0
                while h.sim.poll() is None:
                    peak = max(peak, kb(daemon.pid, "VmRSS"))
                    link_peak = max(link_peak, kb(link.pid, "VmRSS"))
                    time.sleep(0.2)
                hwm = kb(daemon.pid, "VmHWM") / 1024
                link_hwm = kb(link.pid, "VmHWM") / 1024
        finally:
            broker.kill()
    out(f"the table and its floor link, {args.shoes} shoe(s) of 8 decks dealt as fast as it goes:")
    out(f"  table process: RSS peak sampled {peak / 1024:.1f} MB, high-water mark {hwm:.1f} MB")
    out(f"  link process:  RSS peak sampled {link_peak / 1024:.1f} MB, high-water mark {link_hwm:.1f} MB")
    out(f"  both: high-water marks {hwm + link_hwm:.1f} MB")
    out(f"  target <= {TARGET_MB:.0f} MB for the table process: {verdict(hwm <= TARGET_MB)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
