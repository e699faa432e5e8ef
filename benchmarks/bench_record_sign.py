"""The cost of signing each record the floor link sends (issue 15): ns per record of the link's message.

    .venv/bin/python benchmarks/bench_record_sign.py [--records 20000] [--runs 5]

A journal of ``--records`` card records (on disk, as a backlog) is read once; then, for each run, every record's
message is built three ways and timed per record (the best run of ``--runs``):

* ``unsigned``: the message as the link built it before records were signed (the fast path without ``sig``),
* ``sign``: the Ed25519 signature alone, over :func:`floor_protocol.signing.record_message`,
* ``signed``: :func:`controller.link.floor_link.record_payload` as the link now sends it (the signature and
  the message).

The backlog flush (records/s through a real Mosquitto) is ``bench_floor_publish.py``'s figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import out

from controller.game.cards import Card
from controller.game.records import RECORD_VERSION, input_body
from controller.game.table import CardDrawn
from controller.journal import Journal, PendingInput, Record
from controller.link.floor_link import _number, _text, record_payload
from floor_protocol.signing import generate_key, record_message, sign

TOKENS = ["AS", "2H", "3D", "4C", "5S", "6H", "7D", "8C", "9S", "TH", "JD", "QC", "KS"]


def unsigned(record: Record, table: str) -> str:
    """The link's message before issue 15 (the same fast path, no ``sig``)."""
    return (
        f'{{"at":{_text(record.ts)},"body":{record.body},"cause":{_number(record.cause)},'
        f'"hash":{_text(record.hash)},"kind":{_text(record.kind)},"number":{_number(record.number)},'
        f'"prev":{_text(record.prev_hash)},"seq":{record.id},"session":{_number(record.session)},'
        f'"table":{_text(table)},"v":{RECORD_VERSION}}}'
    )


def per_record(records: list[Record], build: Callable[[Record], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        for record in records:
            build(record)
        best = min(best, (time.perf_counter_ns() - t0) / len(records))
    return best


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=20_000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    key = generate_key()
    cards = [
        PendingInput(input_body(CardDrawn(Card.parse(TOKENS[i % 13])), source="shoe"), 1, i + 1)
        for i in range(args.records)
    ]
    with tempfile.TemporaryDirectory(prefix="bench-sign-") as name, Journal.open(Path(name) / "j.db") as journal:
        journal.append_many(cards)
        records = list(journal.records())
    old = per_record(records, lambda r: unsigned(r, "t1"), args.runs)
    signature = per_record(records, lambda r: sign(key, record_message("t1", r.id, r.hash)), args.runs)
    new = per_record(records, lambda r: record_payload(r, "t1", key), args.runs)
    out(f"{len(records):,} records, best of {args.runs} runs, ns per record:")
    out(f"  unsigned message (before): {old:,.0f} ns")
    out(f"  Ed25519 signature alone:   {signature:,.0f} ns")
    out(f"  signed message (now):      {new:,.0f} ns  (+{new - old:,.0f} ns a record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
