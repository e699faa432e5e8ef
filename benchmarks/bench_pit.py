"""Event -> pit tile update with 60 tables dealing (target p95 <= 100 ms).

    .venv/bin/python benchmarks/bench_pit.py [--tables 60] [--seconds 30] [--record-seconds 2.0]

Simulated load through a real Mosquitto: each table publishes the records of a real journal (two shoes the
demo deals through the real table loop; tests/pitload.py), one record every ``--record-seconds`` (jittered,
default 2 s: a card every 2 s at every table at once is faster than a dealer deals) and, after each, its
retained ``state`` (as the floor link publishes it on every change). A real :class:`floor.pit.Pit` follows the
broker and serves the page; headless Chromium (/usr/bin/chromium) shows it at 1920x1080.

The journal's records carry the money (the demo's seven players: wagers, settlements): every tile keeps this
shift's handle and win live from them (the figures are printed at the end).

Measured: for every tile the page rebuilt because of a new state, the time from the state's ``at`` (taken by
the publisher just before it publishes) to the tile's replacement in the DOM (``window.pit.tileLatencies``),
and, per snapshot, from the render to the next animation frame (the paint). p50 / p95 / max of each.
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from floor.archive import Archive  # noqa: E402
from floor.pit import Pit  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.pitload import Floor, SimTable, demo_journal, journal_records  # noqa: E402
from tests.servers import Mosquitto  # noqa: E402


def figures(name: str, values: list[float]) -> None:
    v = sorted(values)
    if not v:
        print(f"{name}: no samples")
        return
    p95 = v[min(len(v) - 1, int(len(v) * 0.95))]
    print(f"{name}: p50 {statistics.median(v):.1f} ms, p95 {p95:.1f} ms, max {v[-1]:.1f} ms over {len(v)} updates")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=60)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--record-seconds", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        journal = demo_journal(tmp / "journal.db", shoes=2)
        broker = Mosquitto(tmp / "mosquitto").start()
        url = f"sqlite:///{tmp}/archive.db"
        Archive(url).close()
        pit = Pit(url)
        floor = None
        try:
            pit.start(("127.0.0.1", 0), broker.url)
            sims = [
                SimTable("s1", f"T{i + 1:02d}", journal_records(journal, f"T{i + 1:02d}")) for i in range(args.tables)
            ]
            for sim in sims:  # each table somewhere in its first shoe
                sim.sent = rng.randrange(0, 300)
                for r in sim.records[: sim.sent]:
                    sim.follow(r)
            floor = Floor(broker.port, sims)
            for sim in sims:
                floor.online(sim.table)
                floor.publish_state(sim.table).wait_for_publish(10)
            host, port = pit.address
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                page.goto(f"http://{host}:{port}/")
                page.wait_for_function("n => document.querySelectorAll('.tile').length === n", arg=args.tables)
                page.evaluate("() => { window.pit.tileLatencies.length = 0; window.pit.paints.length = 0; }")
                start = time.monotonic()
                due = [(start + rng.uniform(0, args.record_seconds), sim.table) for sim in sims]
                heapq.heapify(due)
                published = 0
                while True:
                    at, table = heapq.heappop(due)
                    if at > start + args.seconds:
                        break
                    time.sleep(max(0.0, at - time.monotonic()))
                    sim = floor.tables[table]
                    if sim.sent < len(sim.records):
                        record = sim.records[sim.sent]
                        sim.sent += 1
                        sim.follow(record)
                        floor.client.publish(sim.topic("record"), record.to_json(), qos=1)
                        floor.publish_state(table)
                        published += 1
                    heapq.heappush(due, (at + args.record_seconds * rng.uniform(0.5, 1.5), table))
                time.sleep(1.0)
                latencies = page.evaluate("() => window.pit.tileLatencies.slice()")
                paints = page.evaluate("() => window.pit.paints.slice()")
                browser.close()
            elapsed = time.monotonic() - start
            print(
                f"{args.tables} tables, {published} records + states in {elapsed:.0f} s "
                f"({published / elapsed:.1f} state messages/s), Chromium 1920x1080"
            )
            figures("state published -> tile replaced in the DOM", latencies)
            figures("render -> next animation frame", paints)
            money = [t["money"] for t in pit.snapshot()["tables"] if t.get("money")]
            print(
                f"money on the tiles: {sum(m['wagers'] for m in money)} wagers settled this shift on"
                f" {sum(1 for m in money if m['wagers'])} tiles, handle ${sum(m['handle'] for m in money) / 100:,.2f},"
                f" the house's win ${sum(m['win'] for m in money) / 100:,.2f}"
            )
        finally:
            if floor is not None:
                floor.close()
            pit.close()
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
