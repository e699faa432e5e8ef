"""The floor's money on PostgreSQL: a shift report and ratings for 100 tables x 30 days (target <= 2 s each).

    .venv/bin/python benchmarks/bench_floor_money.py [--tables 100] [--days 30] [--sessions-per-hour 6] [--runs 5]

Archiving 30 days of real records for 100 tables would take hours, so the accounting's own tables
(floor/archive/money_tables.py: ``money_buckets`` and ``seat_sessions``, made when the accounting watch starts) are
filled with **bulk inserts (COPY) of rows of the same shape the watch stores**: each table deals 16 hours a
day (10:00 to 02:00 UTC), so 64 quarter-hour buckets a day with about 18 coups and 120 settled wagers each;
``--sessions-per-hour`` seat sessions start per table and dealing hour (a 7-seat table, sessions of about an
hour), each closed but those of each table's last hour, which are open. Then ANALYZE, and ``--runs`` times:

* ``shift_report`` for the whole floor over the 30 days (three 8-hour shifts a day: 9,000 table-shift lines);
* ``ratings`` of one table over the 30 days (``since`` 30 days back);
* ``ratings`` of the floor's open sessions (``open_only``);

each printing p50 and max. PostgreSQL is Debian's, started in a temporary directory (tests/servers.py),
fsync off.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from floor.accounting import Accounting, ratings, shift_report  # noqa: E402
from floor.archive import Archive  # noqa: E402
from floor.shifts import ShiftPlan, bucket_of  # noqa: E402
from floor.surveillance import Surveillance  # noqa: E402
from tests.servers import Postgres  # noqa: E402

DEALING_HOURS = 16
FIRST_HOUR = 10  # UTC; dealing runs to 02:00 the next day
ISO = "%Y-%m-%dT%H:%M:%S.%fZ"


def bucket_rows(tables: int, days: int, start: datetime, rng: random.Random) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for t in range(tables):
        table = f"T{t + 1:03d}"
        for d in range(days):
            opening = start + timedelta(days=d, hours=FIRST_HOUR)
            for q in range(DEALING_HOURS * 4):
                at = opening + timedelta(minutes=15 * q)
                wagers = rng.randint(90, 150)
                handle = wagers * rng.choice((2500, 5000, 10000))
                theo_h = round(handle * 0.0115 * 100)
                variance = handle * 10000 * 0.9
                win = round(theo_h / 100 + rng.gauss(0, variance**0.5))
                collected = rng.randint(0, 3) * 500
                out.append((table, bucket_of(at), handle, win + collected, collected, 0, theo_h, variance, 18, wagers))
    return out


def session_rows(tables: int, days: int, per_hour: int, start: datetime, rng: random.Random) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    seq = 0
    for t in range(tables):
        table = f"T{t + 1:03d}"
        for d in range(days):
            opening = start + timedelta(days=d, hours=FIRST_HOUR)
            for h in range(DEALING_HOURS):
                for _ in range(per_hour):
                    seq += 1
                    begin = opening + timedelta(hours=h, seconds=rng.randint(0, 3599))
                    minutes = rng.randint(10, 110)
                    last = begin + timedelta(minutes=minutes)
                    is_open = d == days - 1 and h == DEALING_HOURS - 1
                    end = None if is_open else (last + timedelta(minutes=3)).strftime(ISO)
                    coups = max(1, minutes * 70 // 60)
                    stake = rng.choice((2500, 5000, 10000, 25000))
                    wagered = coups * stake
                    net = round(rng.gauss(-0.012 * wagered, stake * coups**0.5))
                    out.append(
                        (
                            table, rng.randint(1, 7), seq, begin.strftime(ISO), last.strftime(ISO), end,
                            None if end is None else seq + 1, coups, coups, wagered, net, 0, 0,
                            round(wagered * 0.0115 * 100), wagered * 0.0115,
                        )
                    )  # fmt: skip
    return out


def fill(url: str, buckets: list[tuple[Any, ...]], sessions: list[tuple[Any, ...]]) -> float:
    import psycopg

    with Archive(url) as archive:  # the archive's schema, then the accounting's own (as the collector makes it)
        Surveillance(archive, watches=[Accounting()])
    started = time.perf_counter()
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        columns = '"table", bucket, handle, win, collected, uncollected, theo_h, variance, coups, wagers'
        with cur.copy(f"COPY money_buckets ({columns}) FROM STDIN") as copy:
            for row in buckets:
                copy.write_row(row)
        columns = (
            '"table", seat, start_seq, start_at, last_at, end_at, end_seq, coups, wagers, wagered, net, commission,'
            " collected, theo_h, edge_stake"
        )
        with cur.copy(f"COPY seat_sessions ({columns}) FROM STDIN") as copy:
            for row in sessions:
                copy.write_row(row)
        conn.commit()
        cur.execute("ANALYZE money_buckets")
        cur.execute("ANALYZE seat_sessions")
        conn.commit()
    return time.perf_counter() - started


def timed(name: str, runs: int, call: Callable[[], list[Any]]) -> None:
    times, n = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        n = len(call())
        times.append(time.perf_counter() - started)
    ms = sorted(t * 1000 for t in times)
    print(f"{name}: {n:,} lines, p50 {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms over {runs} runs")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--sessions-per-hour", type=int, default=6)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    rng = random.Random(args.seed)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    buckets = bucket_rows(args.tables, args.days, start, rng)
    sessions = session_rows(args.tables, args.days, args.sessions_per_hour, start, rng)
    plan = ShiftPlan.parse("06:00,14:00,22:00", "UTC")
    end = start + timedelta(days=args.days)
    with tempfile.TemporaryDirectory() as tmp:
        server = Postgres(Path(tmp)).start()
        try:
            seconds = fill(server.url, buckets, sessions)
            print(
                f"filled by COPY (rows of the watch's shape, not through its store path) in {seconds:.1f} s:"
                f" {len(buckets):,} money_buckets rows ({args.tables} tables x {args.days} days x"
                f" {DEALING_HOURS * 4} quarter hours), {len(sessions):,} seat sessions"
                f" ({args.sessions_per_hour} per table and dealing hour)"
            )
            with Archive(server.url, create=False) as archive:
                timed(
                    f"shift_report, the floor over {args.days} days",
                    args.runs,
                    lambda: shift_report(archive, plan, start, end),
                )
                timed(
                    f"ratings, table T001 over {args.days} days",
                    args.runs,
                    lambda: ratings(archive, "T001", since=start),
                )
                timed("ratings, the floor's open sessions", args.runs, lambda: ratings(archive, open_only=True))
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
