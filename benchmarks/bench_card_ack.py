"""Figure 2: card -> ACK. A card frame written on the pty -> its ACK read by the shoe (sent only after the
journal commit: write-ahead), and the journal's part of it: ``append_many``, the one transaction (with its
fsync) the table loop makes per group commit. The daemon runs in this process on a real pty.

    .venv/bin/python benchmarks/bench_card_ack.py [--cards 1000] [--seed 1] [--dir DIR]

The journals go in a temporary directory under ``--dir`` (default: here), so the fsync is this disk's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import LatencyResult, bench_latency, common_args, header, load, out, spread_ms, temp_dir


def report(r: LatencyResult) -> None:
    out(f"2. card frame written -> its ACK read by the shoe, {r.cards} cards ({r.events} events) one at a time:")
    out(f"   {spread_ms(r.ack)}")
    if r.commit:
        out(f"   of which the journal commit (append_many: one transaction, fsync): {spread_ms(r.commit)}")
    else:
        out("   WARNING: no journal commit was timed")


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--cards", type=int, default=1000, help="cards timed (default 1000)")
    p.add_argument("--warmup", type=int, default=50, help="cards dealt before timing starts (default 50)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("figure 2: card -> ACK (in-process daemon, real pty, real journal)", tmp)
        report(bench_latency(tmp, args.cards, args.seed, args.warmup))
    out()
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
