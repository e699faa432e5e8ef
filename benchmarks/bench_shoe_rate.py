"""Figure 3: a whole eight-deck shoe as fast as possible, end to end, in cards per second.

    .venv/bin/python benchmarks/bench_shoe_rate.py [--seed 1] [--dir DIR]

(a) the real ``shoe-sim --pace fast`` process against a real ``shoe-controller run`` process over a pty
(the simulated dealer follows the PROMPTs); short of the target it is run again with the journal on RAM
(``/dev/shm``) to show what the per-commit fsync costs. (b) this script's own shoe, pipelined (no waiting
for PROMPTs, within the shoe's window of unacknowledged events) against ``shoe-controller run``, until
every event is ACKed (and, short of the target, again with the journal on RAM). Target: >= 1,000 cards/s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import (
    SHM,
    TARGET_CARDS_PER_S,
    ProcessRun,
    SimRun,
    bench_process,
    bench_sim_shoe,
    common_args,
    header,
    load,
    out,
    ram_ok,
    temp_dir,
    verdict,
)


def report_sim(run: SimRun, label: str) -> float:
    rate = run.cards / run.first_to_last
    out(f"   {label}: {run.cards} cards ({run.events} numbered shoe events) in {run.first_to_last:.3f} s between")
    out(f"      the first and last card of the truth log = {rate:,.0f} cards/s; wall {run.wall:.2f} s from")
    out("      spawning the shoe (incl. its 0.3 s settle and the daemon's start) to the shoe's exit")
    return rate


def figure(tmp: Path, seed: int) -> ProcessRun:
    """Print figure 3; returns the pipelined run (figure 4 reads the daemon process's figures from it)."""
    out("3. a whole eight-deck shoe as fast as possible, end to end")
    sim = bench_sim_shoe(tmp, tmp / "sim.db", seed, "disk")
    rate_a = report_sim(sim, "(a) shoe-sim --pace fast + shoe-controller run over a pty")
    out(f"      target >= {TARGET_CARDS_PER_S:,.0f} cards/s: {verdict(rate_a >= TARGET_CARDS_PER_S)}")
    if rate_a < TARGET_CARDS_PER_S and ram_ok():
        with temp_dir(SHM) as ram:
            sim_ram = bench_sim_shoe(Path(ram), Path(ram) / "sim.db", seed, "ram")
        rate_ram = report_sim(sim_ram, "(a') the same with the journal on /dev/shm (no fsync cost)")
        per_disk = sim.first_to_last / sim.events * 1000
        per_ram = sim_ram.first_to_last / sim_ram.events * 1000
        out(f"      per shoe event: {per_disk:.2f} ms with the disk, {per_ram:.2f} ms on RAM;")
        out(f"      -> fsync explains {max(0.0, 1 - rate_a / rate_ram):.0%} of the time per card")
    out(f"      RSS of the daemon after it: {sim.rss_kb / 1024:.1f} MB (peak {sim.hwm_kb / 1024:.1f} MB)")
    proc = bench_process(tmp, seed, None)
    rate_b = proc.cards / proc.deal_s
    out(f"   (b) pipelined shoe (window {256}) against shoe-controller run over a pty: {proc.cards} cards")
    out(f"      ({proc.events} shoe events) written and all ACKed in {proc.deal_s:.3f} s = {rate_b:,.0f} cards/s,")
    out(f"      {proc.events / proc.deal_s:,.0f} events/s (time spent writing: {proc.write_s * 1000:.0f} ms)")
    out(f"      target >= {TARGET_CARDS_PER_S:,.0f} cards/s: {verdict(rate_b >= TARGET_CARDS_PER_S)}")
    if rate_b < TARGET_CARDS_PER_S and ram_ok():
        with temp_dir(SHM) as ram:
            proc_ram = bench_process(tmp, seed, None, Path(ram))
        per_disk = proc.deal_s / proc.events * 1000
        per_ram = proc_ram.deal_s / proc_ram.events * 1000
        out(
            f"      same, journal on /dev/shm: {proc_ram.cards / proc_ram.deal_s:,.0f} cards/s; per shoe event "
            f"{per_disk:.2f} ms with the disk, {per_ram:.2f} ms on RAM"
        )
    return proc


def main(argv: list[str] | None = None) -> int:
    args = common_args(__doc__).parse_args(argv)
    started = time.perf_counter()
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("figure 3: cards per second, a whole shoe end to end (real processes, real pty)", tmp)
        figure(tmp, args.seed)
    out()
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
