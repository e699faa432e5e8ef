"""The floor's repeated-shoe check against 30 days of 100 tables (target: <= 10 ms per new shoe).

Builds the window index (``shoe_windows``, floor/archive/surveil_tables.py) of ``--tables`` x ``--days`` x
``--shoes-per-day`` shuffled 8-deck shoes (every 20-card window of each shoe's dealt cards, ~393 a shoe), in
a fresh PostgreSQL (a private server, tests/servers.py) and SQLite archive; then times, per new shoe:

* ``lookup``: the check itself, the one indexed query for the shoe's first 20 dealt cards (as
  ``Surveillance._repeated`` runs it), for fresh shuffles (misses) and for repeats of indexed shoes (hits);
* ``process``: what a collector does for a new shoe's first records through the real path
  (``Surveillance.process``: read the records, the compare-and-set, the lookup, its windows, the commit).

The index is loaded in bulk (COPY for PostgreSQL, executemany for SQLite) with its indexes built after the
load; a live floor adds ~393 rows per shoe as it goes. Prints build time, rows, index size, p50/p95.

    .venv/bin/python benchmarks/bench_repeat.py [--tables 100] [--days 30] [--shoes-per-day 8] [--only sqlite]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.game.cards import DECK  # noqa: E402
from controller.game.records import GENESIS_HASH, TableRecord, canonical_json, record_hash  # noqa: E402
from floor.archive import Archive  # noqa: E402
from floor.archive.surveil_tables import FIND_WINDOW  # noqa: E402
from floor.surveillance import WINDOW, Surveillance, window_hash  # noqa: E402
from tests.servers import Postgres  # noqa: E402

BURN = 4  # cards burned per synthetic shoe (the exposed card and three)
CUT = 14


def shoe(rng: random.Random) -> list[str]:
    cards = [c.token for c in DECK] * 8
    rng.shuffle(cards)
    return cards


def windows_of(dealt: list[str]) -> list[int]:
    return [window_hash(dealt[i : i + WINDOW]) for i in range(len(dealt) - WINDOW + 1)]


def build(archive: Archive, args: argparse.Namespace, rng: random.Random) -> tuple[float, int, list[list[str]]]:
    """Load the index; (seconds, rows, a sample of indexed shoes' dealt cards)."""
    conn = archive.connection
    cur = conn.cursor()
    cur.execute("DROP INDEX IF EXISTS shoe_windows_hash")
    cur.execute("DROP INDEX IF EXISTS shoe_windows_started")
    conn.commit()
    now = int(time.time())
    per_table = args.days * args.shoes_per_day
    sample: list[list[str]] = []
    rows = 0
    t0 = time.perf_counter()
    key = 0
    for t in range(args.tables):
        batch = []
        for n in range(per_table):
            dealt = shoe(rng)[BURN:]
            key += 1
            started = now - int((per_table - n - 0.5) * 86400 / args.shoes_per_day)
            batch += [(h, f"T{t:03d}", key, n + 1, o, started) for o, h in enumerate(windows_of(dealt))]
            if rng.random() < 0.02 and len(sample) < 200:
                sample.append(dealt)
        if archive.dialect.name == "postgresql":
            with cur.copy('COPY shoe_windows (hash, "table", shoe_key, shoe, "offset", started) FROM STDIN') as cp:
                for row in batch:
                    cp.write_row(row)
        else:
            cur.executemany(
                'INSERT INTO shoe_windows (hash, "table", shoe_key, shoe, "offset", started) VALUES (?, ?, ?, ?, ?, ?)',
                batch,
            )
        conn.commit()
        rows += len(batch)
        if (t + 1) % 10 == 0:
            print(f"    {t + 1} tables, {rows:,} windows, {time.perf_counter() - t0:.0f} s", flush=True)
    cur.execute("CREATE INDEX shoe_windows_hash ON shoe_windows (hash)")
    cur.execute("CREATE INDEX shoe_windows_started ON shoe_windows (started)")
    if archive.dialect.name == "postgresql":
        cur.execute("ANALYZE shoe_windows")
    else:
        cur.execute("ANALYZE")
    conn.commit()
    return time.perf_counter() - t0, rows, sample


def index_size(archive: Archive, path: Path | None) -> str:
    cur = archive.connection.cursor()
    if archive.dialect.name == "postgresql":
        cur.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('shoe_windows')),"
            " pg_size_pretty(pg_relation_size('shoe_windows_hash'))"
        )
        table, index = cur.fetchone()
        archive.connection.commit()
        return f"table+indexes {table}, hash index {index}"
    assert path is not None
    return f"database file {path.stat().st_size / 1e6:,.0f} MB"


def lookups(archive: Archive, dealt_shoes: list[list[str]], since: int) -> list[float]:
    cur = archive.connection.cursor()
    sql = archive.sql(FIND_WINDOW)
    times = []
    for dealt in dealt_shoes:
        h = window_hash(dealt[:WINDOW])
        t0 = time.perf_counter()
        cur.execute(sql, (h, since, "NEW", -1))
        cur.fetchall()
        archive.connection.commit()
        times.append(time.perf_counter() - t0)
    return times


def records_of_new_shoe(table: str, dealt: list[str], burned: list[str]) -> list[TableRecord]:
    out: list[TableRecord] = []
    at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def add(kind: str, body: dict[str, object], cause: int | None = None) -> int:
        seq = len(out) + 1
        prev = out[-1].hash if out else GENESIS_HASH
        h = record_hash(prev, seq, at, kind, None, None, cause, canonical_json(body))
        out.append(TableRecord(table, seq, kind, at, None, None, cause, body, prev, h))
        return seq

    cause = add("input", {"kind": "new_shoe", "source": "panel"})
    add("shoe", {"event": "start", "shoe": 1, "decks": 8}, cause)
    for i, c in enumerate(burned):
        s = add("input", {"kind": "card", "card": c})
        add("burn", {"card": c, "exposed": i == 0}, s)
    for c in dealt[: WINDOW + 1]:
        add("input", {"kind": "card", "card": c})
    return out


def processes(archive: Archive, dealt_shoes: list[list[str]], prefix: str) -> tuple[list[float], int]:
    s = Surveillance(archive)
    s._pruned_at = time.monotonic()  # not timed: pruning is hourly
    times, hits = [], 0
    for n, dealt in enumerate(dealt_shoes):
        table = f"{prefix}{n}"
        archive.store(records_of_new_shoe(table, dealt, ["3H", "4C", "5D", "6S"]))
        archive.advance(table)
        t0 = time.perf_counter()
        items = s.process(table, "bench")
        times.append(time.perf_counter() - t0)
        hits += len(items)
    return times, hits


def ms(values: list[float]) -> str:
    q = statistics.quantiles(values, n=20)
    return f"p50 {statistics.median(values) * 1000:.2f} ms, p95 {q[18] * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--shoes-per-day", type=int, default=8, help="per table (an 8-deck shoe lasts ~1.5 h)")
    p.add_argument("--checks", type=int, default=300, help="new shoes timed (fresh shuffles)")
    p.add_argument("--only", choices=["sqlite", "postgresql"])
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    shoes = args.tables * args.days * args.shoes_per_day
    print(
        f"repeated-shoe check: {args.tables} tables x {args.days} days x {args.shoes_per_day} shoes a day"
        f" = {shoes:,} shoes indexed; target <= 10 ms per new shoe"
    )
    with tempfile.TemporaryDirectory(prefix="bench-repeat-", dir=".") as name:
        tmp = Path(name).resolve()
        pg = Postgres(tmp / "pg").start() if args.only != "sqlite" else None
        try:
            for kind in ("postgresql", "sqlite"):
                if args.only and kind != args.only:
                    continue
                rng = random.Random(args.seed)
                path = None
                if kind == "sqlite":
                    path = tmp / "archive.db"
                    url = f"sqlite://{path}"
                else:
                    import psycopg

                    assert pg is not None
                    with psycopg.connect(pg.url, autocommit=True) as conn:
                        conn.execute("CREATE DATABASE repeat_bench")
                    url = pg.url.rsplit("/", 1)[0] + "/repeat_bench"
                with Archive(url) as archive:
                    Surveillance(archive)  # its tables
                    print(f"  {kind}: building the index ...", flush=True)
                    seconds, rows, sample = build(archive, args, rng)
                    print(f"  {kind}: built {rows:,} windows in {seconds:.0f} s; {index_size(archive, path)}")
                    since = int(time.time()) - args.days * 86400 - 86400
                    fresh = [shoe(rng)[BURN:] for _ in range(args.checks)]
                    misses = lookups(archive, fresh, since)
                    hits = lookups(archive, sample, since)
                    print(f"  {kind}: lookup, fresh shoe (miss):  {ms(misses)}  ({len(misses)} shoes)")
                    print(f"  {kind}: lookup, repeated shoe (hit): {ms(hits)}  ({len(hits)} shoes)")
                    fresh_times, none = processes(archive, fresh[:100], "FRESH")
                    repeat_times, found = processes(archive, sample[:50], "AGAIN")
                    assert none == 0 and found == len(sample[:50]), (none, found)
                    worst = max(
                        statistics.quantiles(fresh_times, n=20)[18], statistics.quantiles(repeat_times, n=20)[18]
                    )
                    verdict = "meets" if worst <= 0.010 else "MISSES"
                    print(f"  {kind}: process a new shoe's first {WINDOW + 1} cards, fresh:    {ms(fresh_times)}")
                    print(f"  {kind}: process a new shoe's first {WINDOW + 1} cards, repeated: {ms(repeat_times)}"
                          f" ({found} alerts); {verdict} 10 ms")  # fmt: skip
        finally:
            if pg is not None:
                pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
