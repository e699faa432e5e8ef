"""All four daemon figures in one go (each is also its own script, sharing :mod:`harness`):

    .venv/bin/python benchmarks/bench_daemon.py [--cards 1000] [--paced 0.05] [--idle 10] [--seed 1] [--dir DIR]

1. ``bench_card_led.py``: card -> LEDs at a dealer's pace and flat out (target p99 <= 0.5 ms);
2. ``bench_card_ack.py``: card -> ACK, and the journal commit (``append_many``) in it;
3. ``bench_shoe_rate.py``: a whole shoe end to end, cards/s (target >= 1,000);
4. ``bench_daemon_process.py``: READY time, idle CPU, RSS, SIGTERM.

The flood figure (``bench_flood.py``) runs on its own. Other scripts import the harness's helpers from
here too (``from bench_daemon import ...`` keeps working).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import bench_card_ack
import bench_card_led
import bench_daemon_process
import bench_shoe_rate
from harness import *  # noqa: F403  (the helpers, for scripts that import them from here)
from harness import bench_latency, bench_process, common_args, header, load, out, temp_dir


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--cards", type=int, default=1000, help="cards timed for figures 1 and 2 (default 1000)")
    p.add_argument("--warmup", type=int, default=50, help="cards dealt before timing starts (default 50)")
    p.add_argument("--paced", type=float, default=0.05, metavar="SECONDS", help="figure 1's dealer's pace")
    p.add_argument("--idle", type=float, default=10.0, help="seconds of idle link for the CPU figure")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("shoe-controller daemon benchmark (figures 1-4)", tmp)
        out("1. card frame written on the pty -> LEDs set (in-process daemon, mock pins)")
        if args.paced > 0:
            paced = bench_latency(tmp, min(args.cards, 500), args.seed + 1, args.warmup, gap=args.paced)
            bench_card_led.report(paced, f"at a dealer's pace ({args.paced * 1000:.0f} ms between events)")
        flat = bench_latency(tmp, args.cards, args.seed, args.warmup)
        bench_card_led.report(flat, "flat out (each event as soon as the last is acknowledged)")
        out()
        bench_card_ack.report(flat)
        out()
        bench_shoe_rate.figure(tmp, args.seed)
        out()
        bench_daemon_process.report(bench_process(tmp, args.seed, args.idle))
    out()
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
