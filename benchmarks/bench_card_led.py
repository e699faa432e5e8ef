"""Figure 1: card -> LEDs. A card frame written on the pty -> the panel's lamps set (the daemon in this
process, gpiozero mock pins), at a dealer's pace (``--paced`` seconds between events, default 50 ms) and
flat out (each event written as soon as the previous one is acknowledged).

    .venv/bin/python benchmarks/bench_card_led.py [--cards 1000] [--paced 0.05] [--seed 1] [--dir DIR] [--metrics]

``--metrics`` turns the Prometheus endpoint on (``[metrics] enabled``, a free loopback port): the figure with
the metrics updated on every card, to compare with the figure without.

Target: p99 <= 0.5 ms both ways (the table loop waits on the port itself: one wake-up per card).
See :mod:`harness` for how the time is taken.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import (
    TARGET_LED_P99_MS,
    LatencyResult,
    bench_latency,
    common_args,
    header,
    load,
    out,
    pct,
    spread_ms,
    temp_dir,
    verdict,
)


def report(r: LatencyResult, label: str) -> bool:
    out(f"   {label}: {r.cards} cards dealt in {r.coups} declared coups over {r.shoes} shoe(s), {r.events} events")
    out(f"      card -> panel updated (sink after PanelSink): {spread_ms(r.sink)}")
    if r.led:
        out(f"      card -> MockPin state change (draw/win lamps, their own history): {spread_ms(r.led)}")
        out(f"      ({r.led_before_sink}/{len(r.led)} lamp changes fall just before the sink's mark, as they should)")
    ok = pct(r.sink, 99) * 1000 <= TARGET_LED_P99_MS
    out(f"      target p99 <= {TARGET_LED_P99_MS:g} ms: {verdict(ok)}")
    if r.threads_left:
        out(f"      WARNING: threads left behind: {', '.join(r.threads_left)}")
    return ok


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--cards", type=int, default=1000, help="cards timed flat out (default 1000)")
    p.add_argument("--warmup", type=int, default=50, help="cards dealt before timing starts (default 50)")
    p.add_argument("--paced", type=float, default=0.05, metavar="SECONDS", help="gap at a dealer's pace (0: skip)")
    p.add_argument("--metrics", action="store_true", help="with the Prometheus endpoint on ([metrics] enabled)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("figure 1: card -> LEDs (in-process daemon, mock pins, real pty)", tmp)
        if args.paced > 0:
            paced = bench_latency(
                tmp, min(args.cards, 500), args.seed + 1, args.warmup, gap=args.paced, metrics=args.metrics
            )
            report(paced, f"at a dealer's pace ({args.paced * 1000:.0f} ms between events)")
        flat = bench_latency(tmp, args.cards, args.seed, args.warmup, metrics=args.metrics)
        report(flat, "flat out (each event as soon as the last is acknowledged)")
    out()
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
