"""Floor link figures (issue 9): how fast a table's records reach the floor through a real Mosquitto.

    .venv/bin/python benchmarks/bench_floor_publish.py [--cards 300] [--backlog 50000] [--runs 3]
                                                       [--floor-in-process] [--dir /tmp]

1. **card -> record at a subscriber** at a dealer's pace: cards are applied by a real ``TableLoop`` (journal
   on disk, the floor link as its sink, as in the daemon) every 50 ms; a subscriber on the broker stamps each
   card's record when it arrives. Latency = arrival - the moment the loop took the card (monotonic, one
   process). Target: p95 <= 50 ms.
2. **backlog flush**: a journal of ``--backlog`` records written while the broker was unreachable, then the
   link started; records/s until the subscriber holds them all, with the table still dealing meanwhile (a
   real ``TableLoop`` takes a card every 50 ms, the link its sink). Target: >= 5,000 records/s. The floor's
   subscriber runs in its own process, as the floor is another machine (``--floor-in-process``: in this one,
   sharing its interpreter lock with the table, as the figure was first taken). Also printed: each card's
   time from the loop taking it to its commit and sinks done (the LEDs' path), while the backlog flushes and
   for 5 s before, with no floor link.

Needs Debian's mosquitto (scripts/install-system-deps installs it).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' servers and floor side

from harness import load, out, pct, verdict

from controller.config import FloorSection
from controller.floor_link import FloorLink
from controller.game.cards import Card
from controller.game.records import input_body
from controller.game.table import CardDrawn, TableState
from controller.journal import Journal, PendingInput
from controller.keyfiles import load_private_key, write_private_key
from controller.table.daemon import SWITCH_INTERVAL
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from floor_protocol.ack import Ack
from tests.floor_link.floorside import TEST_FLOOR_KEY, TEST_TABLE_KEY, FloorSide
from tests.servers import Mosquitto

TOKENS = ["AS", "2H", "3D", "4C", "5S", "6H", "7D", "8C", "9S", "TH", "JD", "QC", "KS"]


def section(broker: Mosquitto) -> FloorSection:
    return FloorSection.model_validate({"enabled": True, "broker": broker.url, "site": "casino", "table": "t1"})


#: The link signs every record with the table's key and believes acks the floor's key signed (issue 15).
TABLE_KEY, FLOOR_PUBLIC = TEST_TABLE_KEY, TEST_FLOOR_KEY.public_key()


def latency(tmp: Path, cards: int) -> None:
    broker = Mosquitto(tmp / "mq-latency").start()
    floor = FloorSide("127.0.0.1", broker.port)
    path = tmp / "latency.db"
    journal = Journal.open(path)
    link = FloorLink(
        section(broker), path, lambda ack: None, ack_store_interval=3600, key=TABLE_KEY, floor_key=FLOOR_PUBLIC
    )
    # woken after each commit, as the table's feed wakes the link's process
    loop = TableLoop(
        TableState(), journal, [ShoePort(AsciiWire(), lambda data: None)], [], LoopConfig(after_commit=[link.wake])
    )
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


def receiver(port: int, records: int, floor_key: Path) -> int:
    """The floor's side of the backlog figure, in its own process (a casino's floor is another machine): a
    subscriber that acks its contiguous records every 20 ms at most (as a collector acks once per batch), signed
    with the floor's key in ``floor_key``; prints the monotonic time the last record arrived (one clock for every
    process on the machine)."""
    floor = FloorSide("127.0.0.1", port, floor_key=load_private_key(floor_key), ack_interval=0.02)
    time.sleep(0.3)  # the subscription is in place
    print("ready", flush=True)
    try:
        floor.wait(lambda f: f.contiguous >= records, 600, f"{records} records")
        print(f"done {floor.arrivals[records]!r}", flush=True)
    finally:
        floor.close()
    return 0


class Dealer:
    """The table dealing meanwhile: a real ``TableLoop`` on the journal (the floor link woken after each commit,
    as the table's feed wakes the link's process) takes a card every 50 ms; each card is timed from the moment
    the loop takes it to its commit and sinks done (what the LEDs wait for). Here the link shares this process
    and its interpreter with the loop: the worst case; on a table the link is a process of its own."""

    def __init__(self, journal: Journal, link: FloorLink | None, first: int) -> None:
        self.loop = TableLoop(
            TableState(),
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            [],
            LoopConfig(after_commit=[link.wake] if link else []),
        )
        self.n = first
        self.ms: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="dealer")

    def run(self) -> None:
        while not self.stop.is_set():
            self.n += 1
            card = CardDrawn(Card.parse(TOKENS[self.n % 13]))
            t0 = time.perf_counter()
            self.loop._apply(card, input_body(card, source="shoe"), None, None)  # as the loop does for a card
            self.loop.flush()
            self.ms.append((time.perf_counter() - t0) * 1000)
            self.stop.wait(0.05)

    def deal_for(self, seconds: float) -> list[float]:
        self.thread.start()
        self.stop.wait(seconds)
        return self.finish()

    def finish(self) -> list[float]:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
        return self.ms


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def card_figure(label: str, ms: list[float]) -> None:
    ms = sorted(ms)
    out(f"  card -> committed and shown to the sinks {label}, {len(ms)} cards:")
    out(f"    p50 {pct(ms, 50):.2f}  p95 {pct(ms, 95):.2f}  p99 {pct(ms, 99):.2f}  max {ms[-1]:.2f} ms")


def backlog(tmp: Path, records: int, in_process: bool) -> float:
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
    idle = Dealer(journal, None, records).deal_for(5.0)  # the same dealing, no link: the figure to compare with
    broker = Mosquitto(tmp / "mq-backlog").start()
    floor: FloorSide | None = None
    child: subprocess.Popen[str] | None = None
    if in_process:
        floor = FloorSide("127.0.0.1", broker.port)
    else:
        key_path = tmp / "floor.key"
        if not key_path.exists():
            write_private_key(key_path, TEST_FLOOR_KEY)
        argv = [sys.executable, __file__, "--receive", str(broker.port), str(records), str(key_path)]
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready", "the floor's side did not start"
    stored: list[Ack] = []
    link = FloorLink(
        section(broker), path, stored.append, ack_store_interval=3600, key=TABLE_KEY, floor_key=FLOOR_PUBLIC
    )
    dealer = Dealer(journal, link, records + len(idle))
    try:
        cpu0 = _cpu()
        t0 = time.monotonic()
        link.start()
        dealer.thread.start()
        if floor is not None:
            floor.wait(lambda f: f.contiguous >= records, 600, f"{records} records")
            t1 = floor.arrivals[records]
        else:
            assert child is not None and child.stdout is not None
            line = child.stdout.readline().split()
            assert child.wait(600) == 0 and line[:1] == ["done"], f"the floor's side failed: {line}"
            t1 = float(line[1])
        flushing = dealer.finish()
        cpu = _cpu() - cpu0
        seconds = t1 - t0
        rate = records / seconds
        where = "in this process" if in_process else "in its own process"
        out(f"backlog of {records:,} records flushed in {seconds:.2f} s: {rate:,.0f} records/s")
        out(f"  (the floor's subscriber {where}; {len(flushing)} cards dealt meanwhile, one every 50 ms)")
        refusals = dict(link.ack_refusals.counts) or "none"
        out(
            f"  {link.sent:,} records sent ({link.signed_here:,} signed on the link's thread, the rest by its signing"
            f" process), {link.rewinds} rewinds, acks refused: {refusals}"
        )
        out(f"  target >= 5,000 records/s: {verdict(rate >= 5000)}")
        per = cpu / records * 1e6
        out(f"  the table's process: {cpu:.2f} CPU-s, {per:.0f} us a record (steadier than the rate); {load()}")
        card_figure("while the backlog flushed", flushing)
        card_figure("with no floor link (before)", idle)
        return rate
    finally:
        dealer.finish()
        link.close()
        if floor is not None:
            floor.close()
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        journal.close()
        broker.kill()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cards", type=int, default=300, help="cards for the latency figure (default 300)")
    p.add_argument("--backlog", type=int, default=50_000, help="records in the backlog (default 50,000)")
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()), help="where the journals go")
    p.add_argument("--runs", type=int, default=1, help="backlog flushes, each on a fresh journal (default 1)")
    p.add_argument("--floor-in-process", action="store_true", help="the floor's subscriber in this process (as before)")
    p.add_argument("--receive", nargs=3, metavar=("PORT", "RECORDS", "FLOOR_KEY"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.receive:
        port, records, key = args.receive
        return receiver(int(port), int(records), Path(key))
    args.dir.mkdir(parents=True, exist_ok=True)
    sys.setswitchinterval(SWITCH_INTERVAL)  # as the daemon runs its loop
    rates = []
    with tempfile.TemporaryDirectory(prefix="bench-floor-", dir=args.dir) as name:
        if args.cards > 0:
            latency(Path(name), args.cards)
        for run in range(args.runs):
            run_dir = Path(name) / f"run{run + 1}"
            run_dir.mkdir()
            rates.append(backlog(run_dir, args.backlog, args.floor_in_process))
    if len(rates) > 1:
        out(f"backlog flush over {len(rates)} runs: " + ", ".join(f"{r:,.0f}" for r in rates) + " records/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
