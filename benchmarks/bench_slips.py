"""The floor's rating slip export: ``shoe-floor slips --archive URL --json`` over 100 tables x 30 days.

    .venv/bin/python benchmarks/bench_slips.py [--tables 100] [--days 30] [--hours 8] [--seats 7] [--filler 6]
                                               [--players 3000] [--postgres]

Archiving 30 days of real records through the collector would take hours, so the archive's ``records`` table is
filled with bulk inserts of records of the shape a real table journals (bodies that pass their kinds' classes in
controller/game/bodies.py; no chain: the export does not walk it): per table and day, ``--hours`` of play from
noon at 70 coups an hour, each coup's ``coup`` record with a ``wager`` and a ``settlement`` per occupied seat, and
``--filler`` input records per coup (the cards, the declare, the bet-spot reader's reports: what the export must
skip); ``--seats`` seats, each taken by one of ``--players`` carded players for 20-120 coups, then empty for up to
10 minutes (one seat in seven uncarded), a ``player_in``, a cash ``buy_in`` and a ``player_out`` each visit.
Then, timed, what ``shoe-floor slips --json`` does (floor.slips.floor_slips, and each slip's JSON line): the
records read and the slips made, and the peak memory of the process. SQLite unless ``--postgres`` (Debian's,
started in a temporary directory by tests/servers.py, fsync off).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.game.slips import slip_line  # noqa: E402
from floor.archive import Archive  # noqa: E402
from floor.slips import floor_slips  # noqa: E402

FIRST_DAY = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
COUP_SECONDS = 3600 / 70
_INSERT = (
    'INSERT INTO records ("table", seq, kind, at, session, number, cause, body, prev, hash, received_at)'
    " VALUES (?, ?, ?, ?, NULL, NULL, NULL, {json}, ?, ?, ?)"
)
_HASH = "0" * 64
_COUP = {
    "declared": True, "void": False, "misdraw": False, "dummy_hand": [], "player": ["KS", "QH"],
    "banker": ["9D", "TC"], "player_total": 0, "banker_total": 9, "winner": "banker", "natural": True,
    "natural_hand": "banker", "player_pair": False, "banker_pair": False, "margin": 9,
}  # fmt: skip


def _at(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


def table_rows(t: int, args: argparse.Namespace, rng: random.Random) -> list[tuple[Any, ...]]:
    """One table's records, in seq order."""
    name = f"T{t + 1:03d}"
    out: list[tuple[Any, ...]] = []

    def add(moment: datetime, kind: str, body: dict[str, Any]) -> None:
        at = _at(moment)
        out.append((name, len(out) + 1, kind, at, json.dumps(body, separators=(",", ":")), _HASH, _HASH, at))

    coups_a_day = int(args.hours * 3600 / COUP_SECONDS)
    for day in range(args.days):
        start = FIRST_DAY + timedelta(days=day)
        shoe = day + 1
        add(start, "shoe", {"event": "start", "shoe": shoe, "decks": 8})
        seated: dict[int, tuple[str, int]] = {}  # seat -> (player_ref, coups left)
        empty_until: dict[int, datetime] = {}
        for coup in range(1, coups_a_day + 1):
            now = start + timedelta(seconds=coup * COUP_SECONDS)
            for seat in range(1, args.seats + 1):
                if seat not in seated and now >= empty_until.get(seat, start):
                    ref = f"E0040150{rng.randrange(args.players):08X}" if seat != args.seats else ""
                    seated[seat] = (ref, rng.randint(20, 120))
                    if ref:
                        add(now, "player_in", {"shoe": shoe, "coup": coup, "seat": seat, "player_ref": ref})
                        add(now, "buy_in", {"shoe": shoe, "coup": coup, "seat": seat, "cents": 50_000,
                                            "tender": "cash", "player_ref": ref})  # fmt: skip
            for i in range(args.filler):
                add(now, "input", {"kind": "card", "card": "9D", "seq": i})
            stakes = {seat: rng.choice((2_500, 5_000, 10_000, 25_000)) for seat in seated}
            for seat, stake in sorted(stakes.items()):
                theo = round(stake * 0.010579, 2)
                add(now, "wager", {"shoe": shoe, "coup": coup, "seat": seat, "bet": "banker", "stake": stake,
                                   "ev": -0.010579, "theo_cents": theo, "variance": 0.9})  # fmt: skip
            declared = now + timedelta(seconds=30)
            add(declared, "coup", {"shoe": shoe, "coup": coup, **_COUP})
            for seat, stake in sorted(stakes.items()):
                won = rng.random() < 0.5
                net = stake * 95 // 100 if won else -stake
                add(declared, "settlement", {"shoe": shoe, "coup": coup, "seat": seat, "bet": "banker",
                    "stake": stake, "outcome": "win" if won else "lose", "win": max(net, 0), "commission": 0,
                    "net": net, "commission_owed": stake * 5 // 100 if won else 0, "box": 0})  # fmt: skip
            for seat in sorted(seated):
                ref, left = seated[seat]
                if left > 1:
                    seated[seat] = (ref, left - 1)
                    continue
                del seated[seat]
                empty_until[seat] = declared + timedelta(seconds=rng.randint(0, 600))
                if ref:
                    add(declared + timedelta(seconds=5), "player_out", {"shoe": shoe, "coup": coup + 1, "seat": seat,
                        "player_ref": ref, "reason": "card_out"})  # fmt: skip
        add(
            start + timedelta(hours=args.hours, minutes=1), "shoe", {"event": "end", "shoe": shoe, "coups": coups_a_day}
        )
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--hours", type=float, default=8, help="hours of play per table and day (70 coups an hour)")
    p.add_argument("--seats", type=int, default=7)
    p.add_argument("--filler", type=int, default=6, help="input records per coup, which the export skips")
    p.add_argument("--players", type=int, default=3000, help="the carded players the seats are drawn from")
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
            rng = random.Random(25)
            stored = 0
            started = time.perf_counter()
            with Archive(url) as archive:
                for t in range(args.tables):  # a transaction a table
                    rows = table_rows(t, args, rng)
                    with archive.repository.transaction() as tx:
                        tx.cursor.executemany(tx.sql(_INSERT), rows)
                    stored += len(rows)
                with archive.repository.transaction() as tx:
                    tx.cursor.execute("ANALYZE")
            filled = time.perf_counter() - started
            size = sum(f.stat().st_size for f in Path(tmp).glob("archive.db*")) if not args.postgres else 0
            t0 = time.perf_counter()
            with Archive(url, create=False, read_only=True) as archive:
                slips = floor_slips(archive)
                text = [slip_line(s, table=True) for s in slips]
            took = time.perf_counter() - t0
            peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            which = "PostgreSQL" if args.postgres else "SQLite"
            on_disk = f", {size / 2**30:.1f} GiB" if size else ""
            print(
                f"{which}: {stored:,} records ({args.tables} tables x {args.days} days x {args.hours:g} h at 70 coups"
                f" an hour, {args.seats} seats, {args.filler} inputs a coup){on_disk}, filled in {filled:.0f} s"
            )
            tables = len({s.table for s in slips})
            print(
                f"slips --json: {len(slips):,} slips of {tables} tables ({sum(len(x) + 1 for x in text) / 2**20:.0f}"
                f" MiB of JSON lines) in {took:.1f} s; peak RSS {peak_mb:.0f} MiB"
            )
        finally:
            if server is not None:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
