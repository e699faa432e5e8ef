"""Floor link figures (issue 9): how fast a table's records reach the floor through a real Mosquitto.

    .venv/bin/python benchmarks/bench_floor_publish.py [--cards 300] [--backlog 50000] [--dir /tmp]

1. **card -> record at a subscriber** at a dealer's pace: cards are applied by a real ``TableLoop`` (journal
   on disk, the floor link as its sink, as in the daemon) every 50 ms; a subscriber on the broker stamps each
   card's record when it arrives. Latency = arrival - the moment the loop took the card (monotonic, one
   process). Target: p95 <= 50 ms.
2. **backlog flush**: a journal of ``--backlog`` records written while the broker was unreachable, then the
   link started; records/s until the subscriber holds them all, with the table still committing a card every
   50 ms meanwhile. Target: >= 5,000 records/s.

Needs Debian's mosquitto (scripts/install-system-deps installs it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' servers and floor side

from harness import out, pct, verdict

from controller.config import FloorSection
from controller.floor_link import FloorLink
from controller.game.cards import Card
from controller.game.records import input_body
from controller.game.table import CardDrawn, TableState
from controller.journal import Journal, PendingInput
from controller.table import TableLoop
from controller.wire import AsciiWire
from tests.floor.floorside import FloorSide
from tests.servers import Mosquitto

TOKENS = ["AS", "2H", "3D", "4C", "5S", "6H", "7D", "8C", "9S", "TH", "JD", "QC", "KS"]


def section(broker: Mosquitto) -> FloorSection:
    return FloorSection.model_validate({"enabled": True, "broker": broker.url, "site": "casino", "table": "t1"})


def latency(tmp: Path, cards: int) -> None:
    broker = Mosquitto(tmp / "mq-latency").start()
    floor = FloorSide("127.0.0.1", broker.port)
    path = tmp / "latency.db"
    journal = Journal.open(path)
    link = FloorLink(section(broker), path, lambda seq: None, ack_store_interval=3600)
    loop = TableLoop(TableState(), AsciiWire(), journal, lambda data: None, [link])
    loop.after_commit.append(link.wake)  # as the daemon wires it
    link.start()
    taken: dict[int, float] = {}
    try:
        for i in range(cards):
            card = CardDrawn(Card.parse(TOKENS[i % 13]))
            t0 = time.monotonic()
            loop._apply(card, input_body(card, source="shoe"), None, None)  # as the loop does for a card
            loop.flush()
            taken[journal.head()[0]] = t0
            time.sleep(0.05)
        head = journal.head()[0]
        floor.wait(lambda f: f.contiguous >= head, 30, "every record")
        ms = sorted((floor.arrivals[seq] - t0) * 1000 for seq, t0 in taken.items())
        ok = pct(ms, 95) <= 50
        out(f"card -> record at a subscriber, dealer's pace (50 ms), {len(ms)} cards:")
        out(f"  p50 {pct(ms, 50):.2f}  p95 {pct(ms, 95):.2f}  p99 {pct(ms, 99):.2f}  max {ms[-1]:.2f} ms")
        out(f"  target p95 <= 50 ms: {verdict(ok)}")
    finally:
        link.close()
        floor.close()
        journal.close()
        broker.kill()


def backlog(tmp: Path, records: int) -> None:
    path = tmp / "backlog.db"
    journal = Journal.open(path)
    batch: list[PendingInput] = []
    for i in range(records):
        card = CardDrawn(Card.parse(TOKENS[i % 13]))
        batch.append(PendingInput(input_body(card, source="shoe"), 1, i + 1))
        if len(batch) == 1000:
            journal.append_many(batch)
            batch = []
    if batch:
        journal.append_many(batch)
    broker = Mosquitto(tmp / "mq-backlog").start()
    floor = FloorSide("127.0.0.1", broker.port)
    lock = threading.Lock()
    stored: list[int] = []
    link = FloorLink(section(broker), path, stored.append, ack_store_interval=3600)
    dealing = threading.Event()
    dealt = [0]

    def deal() -> None:  # the table goes on dealing while the backlog flushes
        n = records
        while not dealing.is_set():
            n += 1
            card = CardDrawn(Card.parse(TOKENS[n % 13]))
            with lock:
                journal.append_many([PendingInput(input_body(card, source="shoe"), 1, n)])
            link.wake()
            dealt[0] += 1
            time.sleep(0.05)

    dealer = threading.Thread(target=deal, name="dealer")
    try:
        t0 = time.monotonic()
        link.start()
        dealer.start()
        floor.wait(lambda f: f.contiguous >= records, 600, f"{records} records")
        seconds = time.monotonic() - t0
        rate = records / seconds
        out(f"backlog of {records:,} records flushed in {seconds:.2f} s: {rate:,.0f} records/s")
        met = verdict(rate >= 5000)
        out(f"  ({dealt[0]} cards dealt meanwhile, one every 50 ms)  target >= 5,000 records/s: {met}")
    finally:
        dealing.set()
        if dealer.is_alive():
            dealer.join()
        link.close()
        floor.close()
        journal.close()
        broker.kill()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cards", type=int, default=300, help="cards for the latency figure (default 300)")
    p.add_argument("--backlog", type=int, default=50_000, help="records in the backlog (default 50,000)")
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()), help="where the journals go")
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-floor-", dir=args.dir) as name:
        latency(Path(name), args.cards)
        backlog(Path(name), args.backlog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
