"""Journal benchmark: durable appends per second on this disk, commit latency, and replay of 100,000 inputs.

    .venv/bin/python benchmarks/bench_journal.py [--appends 2000] [--replay 100000] [--dir DIR]

Appends are what the daemon does per input: one transaction each (WAL, synchronous=FULL), a card body with
the shoe's (session, number), and the coup record on each declare. The replay journal is built from a
simulated table (8-deck shoes, burn, cut card, declares) with durability off, then timed three ways:
reading and decoding the inputs, feeding them through the pure TableState as a restart does, and a full
``verify`` of the hash chain. ``--dir`` puts the files on the disk to measure (default: a temp dir in
the current directory, so the figures are for this disk rather than a RAM-backed /tmp).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from controller.game.cards import Card, Rank, Suit
from controller.game.records import RecordKind, derived_records, input_body, input_from_body
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    NewShoePressed,
    TableInput,
    TableState,
    VoidPressed,
)
from controller.journal import Journal


def table_session(seed: int) -> Iterator[tuple[TableInput, list[tuple[RecordKind, dict[str, Any]]]]]:
    """Endless realistic table inputs with their derived coup records: shoes of 8 shuffled decks."""
    rng = random.Random(seed)
    state = TableState()
    deck: list[Card] = []
    cut_at = 0
    dealt = 0
    while True:
        due = state.view().due
        event: TableInput
        if due is Due.NEW_SHOE or (due is Due.BURN and not deck):
            deck = [Card(rank, suit) for rank in Rank for suit in Suit] * 8
            rng.shuffle(deck)
            cut_at = len(deck) - rng.randint(14, 20)
            dealt = 0
            event = NewShoePressed()
        elif due is Due.DECLARE:
            event = DeclarePressed()
        elif due is Due.VOID:
            event = VoidPressed()
        elif dealt == cut_at and not state.view().cut_card_out:
            event = CutCardOut()
        else:
            event = CardDrawn(deck.pop())
            dealt += 1
        notices = state.apply(event)
        yield event, derived_records(notices)  # what the daemon journals: coups, shoe start/end, alarms


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_appends(directory: Path, count: int) -> None:
    path = directory / "appends.db"
    latencies: list[float] = []
    with Journal.open(path) as journal:
        events = table_session(1)
        start = time.perf_counter()
        for number in range(1, count + 1):
            event, derived = next(events)
            body = input_body(event)
            t0 = time.perf_counter()
            journal.append(body, session=1, number=number, derived=derived)
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start
    ms = [x * 1000 for x in latencies]
    print(f"appends (WAL, synchronous=FULL, one transaction each): {count} in {elapsed:.2f} s")
    print(f"  {count / elapsed:,.0f} appends/s")
    print(
        f"  commit latency ms: p50 {statistics.median(ms):.3f}  p99 {pct(ms, 0.99):.3f}"
        f"  max {max(ms):.3f}  mean {statistics.fmean(ms):.3f}"
    )
    print(f"  file: {path.stat().st_size / 1024:.0f} KiB")


def bench_replay(directory: Path, count: int) -> None:
    path = directory / "replay.db"
    t0 = time.perf_counter()
    coups = 0
    with Journal.open(path, durable=False) as journal:
        events = table_session(2)
        for number in range(1, count + 1):
            event, derived = next(events)
            coups += sum(kind == "coup" for kind, _ in derived)
            journal.append(input_body(event), session=1, number=number, derived=derived)
    build = time.perf_counter() - t0
    size = path.stat().st_size / 1024 / 1024
    print(f"replay journal: {count:,} inputs + {coups:,} coups, {size:.1f} MiB")
    print(f"  built in {build:.1f} s (durability off)")

    t0 = time.perf_counter()
    journal = Journal.open(path, create=False)
    opened = time.perf_counter() - t0
    with journal:
        t0 = time.perf_counter()
        bodies = [body for _, body in journal.inputs()]
        read = time.perf_counter() - t0
        t0 = time.perf_counter()
        state = TableState()
        for body in bodies:
            table_input = input_from_body(body)
            assert table_input is not None  # the session journals table inputs only
            state.apply(table_input)
        apply = time.perf_counter() - t0
        t0 = time.perf_counter()
        problems = journal.verify()
        verified = time.perf_counter() - t0
        t0 = time.perf_counter()
        journal.coups(last=80)
        history = time.perf_counter() - t0
        # What the daemon does at start: replay only from the input that started the newest shoe.
        from controller.table.loop import resume

        t0 = time.perf_counter()
        where = resume(journal, TableState().rules)
        resumed = where.inputs
        checkpoint = time.perf_counter() - t0
        assert where.state.view() == state.view(), "the checkpoint replay must end where the full replay does"
    assert len(bodies) == count and not problems
    print(f"  open (quick_check): {opened * 1000:.0f} ms")
    print(f"  read + decode {count:,} inputs: {read:.2f} s")
    print(f"  replay through TableState: {apply:.2f} s  (restart total {read + apply:.2f} s)")
    print(f"  verify (integrity_check + hash chain, {count + coups:,} records): {verified:.2f} s")
    print(f"  coups(last=80): {history * 1000:.1f} ms")
    print(f"  state after replay: shoe {state.shoe_number}, coup {state.coup_number}")
    print(f"  daemon start-up replay (newest shoe only): {resumed:,} inputs in {checkpoint * 1000:.0f} ms, same state")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--replay", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=Path.cwd())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-journal-", dir=args.dir) as tmp:
        print(f"files in {tmp}")
        bench_appends(Path(tmp), args.appends)
        bench_replay(Path(tmp), args.replay)


if __name__ == "__main__":
    main()
