"""The scoreboard roads: a whole 80-coup shoe at once, and the per-coup cost of the incremental builder.

Run: .venv/bin/python benchmarks/bench_roads.py [--shoes 500] [--coups 80] [--seed 1]
Prints, over seeded random shoes (Banker 45.9 %, Player 44.6 %, Tie 9.5 %, the 8-deck odds): the median
and 95th-percentile time of :func:`controller.game.roads.compute_roads` for a whole shoe, with and without
``to_dict()``; the median and p95 of one :meth:`RoadsBuilder.add` (the per-coup update), overall and for
the last coup of the shoe (the largest snapshot); and the cost of ``to_dict()`` plus ``json.dumps`` of a full
shoe, which the scoreboard pays per coup.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from controller.game.roads import RoadsBuilder, big_road_grid, compute_roads


def shoes(n: int, coups: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [rng.choices("BPT", weights=(0.4586, 0.4462, 0.0952), k=coups) for _ in range(n)]


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def us(x: float) -> str:
    return f"{x * 1e6:9.1f} µs"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shoes", type=int, default=500)
    ap.add_argument("--coups", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    data = shoes(args.shoes, args.coups, args.seed)

    whole: list[float] = []
    whole_json: list[float] = []
    grid: list[float] = []
    dump: list[float] = []
    for results in data:
        t0 = time.perf_counter()
        roads = compute_roads(results)
        whole.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        compute_roads(results).to_dict()
        whole_json.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        big_road_grid(roads.big_road)
        grid.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        json.dumps(roads.to_dict())
        dump.append(time.perf_counter() - t0)

    per_add: list[float] = []
    last_add: list[float] = []
    for results in data:
        builder = RoadsBuilder()
        for r in results:
            t0 = time.perf_counter()
            builder.add(r)
            per_add.append(time.perf_counter() - t0)
        last_add.append(per_add[-1])

    print(f"roads of {len(data)} random {args.coups}-coup shoes")
    for label, xs in (
        ("compute_roads, whole shoe", whole),
        ("compute_roads + to_dict", whole_json),
        ("big_road_grid (dragon tail)", grid),
        ("to_dict + json.dumps, full shoe", dump),
        ("RoadsBuilder.add, any coup", per_add),
        ("RoadsBuilder.add, last coup", last_add),
    ):
        print(f"  {label:<32} median {us(statistics.median(xs))}  p95 {us(percentile(xs, 0.95))}")


if __name__ == "__main__":
    main()
