"""The table daemon's memory with the floor link on (issue 9: RSS <= 80 MB).

    .venv/bin/python benchmarks/bench_floor_rss.py [--shoes 3] [--dir /tmp]

A real ``shoe-controller run --floor`` process on a simulated 8-deck shoe dealt as fast as it goes, publishing
to a real Mosquitto (Debian's, started here); the daemon's VmRSS is sampled every 0.2 s and its VmHWM read at
the end.
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
                peak = 0
                assert h.sim is not None
                while h.sim.poll() is None:
                    peak = max(peak, kb(daemon.pid, "VmRSS"))
                    time.sleep(0.2)
                hwm = kb(daemon.pid, "VmHWM") / 1024
        finally:
            broker.kill()
    out(f"daemon with the floor link on, {args.shoes} shoe(s) of 8 decks dealt as fast as it goes:")
    out(f"  RSS peak sampled {peak / 1024:.1f} MB, high-water mark {hwm:.1f} MB")
    out(f"  target <= {TARGET_MB:.0f} MB: {verdict(hwm <= TARGET_MB)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
