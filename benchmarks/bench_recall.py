"""Game recall from a PostgreSQL archive holding 1,000,000 records: any coup by table, shoe and number (target
<= 50 ms).

    .venv/bin/python benchmarks/bench_recall.py [--records 1000000] [--tables 100] [--queries 500] [--seed 1]

The archive is filled with COPY (about 20 s for a million rows): ``--tables`` tables, each a run of shoes of
80 coups, each coup five ``input`` records (its cards and the declare) and its ``coup`` record, a ``shoe``
record at each shoe's start and end: the mix a real journal has. Then ANALYZE, and ``--queries`` random
coups recalled two ways, each printing p50 / p95 / max:

* ``Archive.recall`` (the query, on the index ``records_coup``);
* ``GET /api/table/<id>/coup?shoe=S&coup=C`` on a real pit server (:class:`floor.pit.Pit`), the table page's
  recall form, HTTP and JSON included.

PostgreSQL is Debian's, started in a temporary directory (tests/servers.py), fsync off.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from floor.archive import Archive  # noqa: E402
from floor.pit import Pit  # noqa: E402
from tests.servers import Postgres  # noqa: E402

COUPS_PER_SHOE = 80
CARDS = [f"{r}{s}" for r in "A23456789TJQK" for s in "SHDC"]


def rows(tables: int, total: int, rng: random.Random) -> tuple[list[tuple[object, ...]], dict[str, int]]:
    """The archive's rows and each table's number of complete shoes."""
    per_table = total // tables
    out: list[tuple[object, ...]] = []
    shoes: dict[str, int] = {}
    at = "2026-11-30T12:00:00.000Z"
    for t in range(tables):
        table = f"T{t + 1:03d}"
        seq, shoe = 0, 0
        while seq < per_table:  # whole shoes, at least the records asked for
            shoe += 1
            seq += 1
            out.append((table, seq, "shoe", at, json.dumps({"event": "start", "shoe": shoe, "decks": 8})))
            for coup in range(1, COUPS_PER_SHOE + 1):
                cards = rng.sample(CARDS, 5)
                for card in cards[:4]:
                    seq += 1
                    out.append((table, seq, "input", at, json.dumps({"input": "card", "card": card})))
                seq += 1
                out.append((table, seq, "input", at, json.dumps({"input": "declare"})))
                body = {
                    "shoe": shoe, "coup": coup, "player": cards[:2], "banker": cards[2:4], "player_total": 5,
                    "banker_total": 7, "winner": "banker", "natural": None, "player_pair": False,
                    "banker_pair": False, "declared": True, "void": False, "misdraw": False, "dummy_hand": [],
                }  # fmt: skip
                seq += 1
                out.append((table, seq, "coup", at, json.dumps(body)))
            seq += 1
            out.append((table, seq, "shoe", at, json.dumps({"event": "end", "shoe": shoe, "coups": COUPS_PER_SHOE})))
        shoes[table] = shoe
    return out, shoes


def fill(url: str, data: list[tuple[object, ...]]) -> float:
    import psycopg

    Archive(url).close()  # the schema and its indexes
    started = time.perf_counter()
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        columns = '"table", seq, kind, at, body, prev, hash, received_at'
        with cur.copy(f"COPY records ({columns}) FROM STDIN") as copy:
            for table, seq, kind, at, body in data:
                copy.write_row((table, seq, kind, at, body, "0" * 64, f"{seq:064x}", at))
        conn.commit()
        cur.execute("ANALYZE records")
        conn.commit()
    return time.perf_counter() - started


def report(name: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    print(f"{name}: p50 {statistics.median(ms):.2f} ms, p95 {p95:.2f} ms, max {ms[-1]:.2f} ms over {len(ms)} coups")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    rng = random.Random(args.seed)
    data, shoes = rows(args.tables, args.records, rng)
    with tempfile.TemporaryDirectory() as tmp:
        server = Postgres(Path(tmp)).start()
        pit = None
        try:
            seconds = fill(server.url, data)
            print(f"archive: {len(data):,} records of {args.tables} tables, filled with COPY in {seconds:.1f} s")
            picks = [
                (table, rng.randint(1, shoes[table]), rng.randint(1, COUPS_PER_SHOE))
                for table in rng.choices(sorted(shoes), k=args.queries)
            ]
            times = []
            with Archive(server.url, create=False) as archive:
                for table, shoe, coup in picks:
                    started = time.perf_counter()
                    found = archive.recall(table, shoe, coup)
                    times.append(time.perf_counter() - started)
                    assert found is not None and (found["shoe"], found["coup"]) == (shoe, coup)
            report("Archive.recall", times)
            pit = Pit(server.url)
            pit.start(("127.0.0.1", 0), None)
            host, port = pit.address
            times = []
            for table, shoe, coup in picks:
                started = time.perf_counter()
                with urllib.request.urlopen(
                    f"http://{host}:{port}/api/table/{table}/coup?shoe={shoe}&coup={coup}"
                ) as r:
                    found = json.loads(r.read())
                times.append(time.perf_counter() - started)
                assert (found["shoe"], found["coup"]) == (shoe, coup)
            report("GET /api/table/<id>/coup", times)
        finally:
            if pit is not None:
                pit.close()
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
