"""The cash log's query: ``shoe-floor cashlog --day DATE`` for one gaming day of a floor of 100 tables x 30 days.

    .venv/bin/python benchmarks/bench_cashlog.py [--tables 100] [--days 30] [--buy-ins 60] [--runs 5] [--postgres]

Archiving 30 days of real records would take hours, so the cash log's own tables (floor/archive/cash_tables.py:
``cash_buy_ins`` and ``cash_days``, made when the cash watch starts) are filled with bulk inserts of rows of the
shape the watch stores: ``--buy-ins`` buy-ins per table and gaming day (three in four cash, the rest chips or
markers; $100 to $10,000; two in three by one of 3,000 carded players, the rest uncarded at one of 9 seats), then
ANALYZE, and ``--runs`` times :func:`floor.cash_watch.cash_day` of the middle day (the MTL entries and every
player's day), printing p50 and max. SQLite unless ``--postgres`` (Debian's, started in a temporary directory by
tests/servers.py, fsync off).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from floor.archive import Archive  # noqa: E402
from floor.cash_watch import CashWatch, cash_day  # noqa: E402
from floor.surveillance import Surveillance  # noqa: E402

FIRST_DAY = date(2026, 11, 1)
_INSERT = (
    'INSERT INTO cash_buy_ins ("table", seq, day, at, player, player_ref, seat, shoe, coup, cents, tender, mtl,'
    " day_cash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def rows(tables: int, days: int, per_day: int, rng: random.Random) -> tuple[list[tuple[Any, ...]], dict[Any, int]]:
    out: list[tuple[Any, ...]] = []
    totals: dict[tuple[str, str], int] = {}
    for t in range(tables):
        table = f"T{t + 1:03d}"
        seq = 0
        for d in range(days):
            day = (FIRST_DAY + timedelta(days=d)).isoformat()
            for i in range(per_day):
                seq += 2
                seat = rng.randint(1, 9)
                ref = f"P-{rng.randint(1, 3000)}" if rng.random() < 2 / 3 else None
                player = f"ref:{ref}" if ref else f"seat:{table}:{seat}"
                tender = "cash" if rng.random() < 0.75 else rng.choice(("chips", "marker"))
                cents = rng.randint(1, 100) * 10_000
                day_cash = 0
                if tender == "cash":
                    day_cash = totals[(day, player)] = totals.get((day, player), 0) + cents
                at = f"{day}T{12 + i * 12 // per_day:02d}:{i % 60:02d}:00.000Z"
                row = (table, seq, day, at, player, ref, seat, 1 + i // 40, 1 + i % 40, cents, tender)
                out.append((*row, tender == "cash" and cents > 300_000, day_cash))
    return out, totals


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--buy-ins", type=int, default=60, help="buy-ins per table and gaming day")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--postgres", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = None
        if args.postgres:
            from tests.servers import Postgres

            server = Postgres(Path(tmp) / "pg").start()
            url = server.url
        else:
            url = f"sqlite:///{tmp}/archive.db"
        try:
            with Archive(url) as archive:
                Surveillance(archive, watches=[CashWatch()])  # makes the cash log's tables
                data, totals = rows(args.tables, args.days, args.buy_ins, random.Random(25))
                started = time.perf_counter()
                with archive.repository.transaction() as tx:
                    tx.cursor.executemany(tx.sql(_INSERT), data)
                    tx.cursor.executemany(
                        tx.sql("INSERT INTO cash_days (day, player, cash) VALUES (?, ?, ?)"),
                        [(d, pl, c) for (d, pl), c in totals.items()],
                    )
                    tx.cursor.execute("ANALYZE")
                filled = time.perf_counter() - started
                day = (FIRST_DAY + timedelta(days=args.days // 2)).isoformat()
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    entries, players = cash_day(archive, day)
                    times.append(time.perf_counter() - t0)
            which = "PostgreSQL" if args.postgres else "SQLite"
            print(
                f"{which}: {len(data):,} buy-ins ({args.tables} tables x {args.days} days x {args.buy_ins}),"
                f" {len(totals):,} player-days, filled in {filled:.1f} s"
            )
            print(
                f"cashlog --day {day}: {len(entries)} MTL entries, {len(players)} players;"
                f" p50 {1000 * statistics.median(times):.1f} ms, max {1000 * max(times):.1f} ms ({args.runs} runs)"
            )
        finally:
            if server is not None:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
