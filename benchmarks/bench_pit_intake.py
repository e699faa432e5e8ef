"""The pit's intake: messages per second through :meth:`floor.pit.Pit.on_message`, checks included.

    .venv/bin/python benchmarks/bench_pit_intake.py [--tables 60] [--repeat 3]

The messages are a real journal's (one shoe the demo deals through the real table loop; tests/pitload.py):
each record as the table publishes it, and after each its retained ``state``, for ``--tables`` tables, handed
to a real :class:`~floor.pit.Pit` (no broker, no page: what its MQTT thread does per message, the snapshot's
publication included). Printed: records and states per second, the best of ``--repeat`` runs, and the same
for junk (each message refused). A floor of 60 tables dealing makes a few hundred messages a second.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from floor.archive import Archive  # noqa: E402
from floor.pit import Pit  # noqa: E402
from tests.pitload import SimTable, demo_journal, journal_records  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=60)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        journal = demo_journal(Path(tmp) / "journal.db")
        messages: list[tuple[str, bytes]] = []
        for i in range(args.tables):
            sim = SimTable("s1", f"T{i:02d}", journal_records(journal, f"T{i:02d}"))
            for r in sim.records:
                sim.sent += 1
                sim.follow(r)
                messages.append((sim.topic("record"), r.to_json().encode()))
                messages.append((sim.topic("state"), json.dumps(sim.state(), separators=(",", ":")).encode()))
        junk = [(t, b'{"shoe":1,"alarms":5}' if t.endswith("state") else b"[" * 5000) for t, _ in messages]
        url = f"sqlite:///{tmp}/archive.db"
        Archive(url).close()
        for name, batch in (("genuine", messages), ("junk", junk)):
            best = 0.0
            for _ in range(args.repeat):
                pit = Pit(url)
                try:
                    start = time.perf_counter()
                    for topic, payload in batch:
                        pit.on_message(topic, payload)
                    best = max(best, len(batch) / (time.perf_counter() - start))
                finally:
                    pit.close()
            rate = f"{best:,.0f} messages/s"
            print(f"{name}: {len(batch)} messages ({args.tables} tables), best of {args.repeat}: {rate}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
