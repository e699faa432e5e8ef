"""Figure 4: the daemon process (``shoe-controller run``, mock pins, over a pty): time from spawn to
``READY=1`` on an AF_UNIX datagram socket we bind as ``NOTIFY_SOCKET``; CPU used over ``--idle`` seconds
with the link up and only heartbeats; RSS after a shoe dealt pipelined; SIGTERM and STOPPING=1.

    .venv/bin/python benchmarks/bench_daemon_process.py [--idle 10] [--seed 1] [--dir DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import (
    TARGET_IDLE_CPU_PCT,
    TARGET_READY_S,
    TARGET_RSS_MB,
    ProcessRun,
    bench_process,
    common_args,
    header,
    load,
    out,
    temp_dir,
    verdict,
)


def report(proc: ProcessRun) -> None:
    out("4. the daemon process (shoe-controller run, mock pins, over a pty)")
    out(
        f"   spawn -> READY=1 on our NOTIFY_SOCKET: {proc.ready_s:.3f} s "
        f"(target <= {TARGET_READY_S:g} s: {verdict(proc.ready_s <= TARGET_READY_S)}); "
        f"HELLO acknowledged {proc.link_up_s:.3f} s after spawn"
    )
    if proc.idle_s:
        idle_pct = proc.idle_cpu_s / proc.idle_s * 100
        out(
            f"   idle, link up, heartbeats only: {proc.idle_cpu_s:.3f} CPU s over {proc.idle_s:.1f} s = "
            f"{idle_pct:.2f} % (target well under {TARGET_IDLE_CPU_PCT:g} %: "
            f"{verdict(idle_pct < TARGET_IDLE_CPU_PCT)}); {proc.idle_wakeups / proc.idle_s:.0f} wakeups/s (all threads)"
        )
    mb = proc.rss_kb / 1024
    out(
        f"   RSS after dealing a shoe: {mb:.1f} MB (peak {proc.hwm_kb / 1024:.1f} MB; "
        f"{proc.rss_start_kb / 1024:.1f} MB before; {proc.threads} threads); "
        f"target <= {TARGET_RSS_MB:g} MB: {verdict(mb <= TARGET_RSS_MB)}"
    )
    out(f"   SIGTERM: exit code {proc.exit_code}, STOPPING=1 {'received' if proc.stopping else 'NOT received'}")


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--idle", type=float, default=10.0, help="seconds of idle link for the CPU figure")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("figure 4: the daemon process", tmp)
        report(bench_process(tmp, args.seed, args.idle))
    out()
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
