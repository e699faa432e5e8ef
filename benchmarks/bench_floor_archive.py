"""The floor's archive rate: records/s one collector archives into PostgreSQL (target >= 20,000, batched) and
SQLite (target >= 5,000).

    .venv/bin/python benchmarks/bench_floor_archive.py [--records 50000] [--tables 4] [--batch 1000]
                                                       [--only sqlite|postgresql] [--skip-broker]

Two figures per database, each on a fresh archive:

* **archive**: ``Archive.store`` + ``Archive.advance`` in batches (what the collector's loop does per batch:
  one transaction, the duplicate check, the chain walked forward, the head stored), no broker;
* **backlog drain**: the records wait at a real Mosquitto in one collector's persistent session (it subscribed,
  then went away); a new ``Collector`` with the same client id starts and drains them: records/s from its start
  until every table's chain head is the last record. The collector's intake through the broker and its archive,
  with no publisher in the way (a floor after a collector outage);
* **end to end**: the records published (QoS 1) to a real Mosquitto by one paho client, taken off a shared
  subscription by one ``Collector`` (in this process, on its own thread), archived, until every table's
  ack has reached its last record. The Python publisher is part of this figure.

Records are a valid hash chain per table with coup-sized bodies (about 400 bytes of JSON), each signed by its
table's key (enrolled in every fresh archive), so every figure through a collector includes its signature check
(Ed25519 verify per record) and its signed acks. PostgreSQL and Mosquitto are Debian's, started in a temporary
directory (tests/servers.py), fsync off for PostgreSQL; SQLite commits with synchronous=FULL (floor/archive/schema.py).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import paho.mqtt.client as mqtt  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

from commandline.keyfile import write_key_file  # noqa: E402
from controller.game.records import GENESIS_HASH, TableRecord, canonical_json, record_hash  # noqa: E402
from floor.archive import Archive  # noqa: E402
from floor.collector import Collector, Settings  # noqa: E402
from floor_protocol.ack import parse_ack  # noqa: E402
from floor_protocol.signing import (  # noqa: E402
    format_public_key,
    generate_key,
    key_id,
    private_key_pem,
    record_message,
    sign,
)
from mqttloop import NetworkLoop  # noqa: E402
from tests.servers import Mosquitto, Postgres  # noqa: E402

#: Each bench table's key (signs its records) and the floor's (signs the acks).
TABLE_KEYS = {f"T{i + 1}": generate_key() for i in range(64)}
FLOOR_KEY = generate_key()


def enroll(url: str, tables: set[str]) -> None:
    """Every bench table's key enrolled in the (fresh) archive at ``url``."""
    with Archive(url) as archive:
        for table in sorted(tables):
            archive.enroll(table, format_public_key(TABLE_KEYS[table]))


def chain(table: str, n: int) -> list[TableRecord]:
    out, prev = [], GENESIS_HASH
    for seq in range(1, n + 1):
        body = {
            "shoe": 1 + seq // 80, "coup": seq % 80, "player": ["9H", "KD"], "banker": ["7S", "AC", "2D"],
            "player_total": 9, "banker_total": 0, "winner": "player", "natural": True, "player_pair": False,
            "banker_pair": False, "declared": True, "void": False, "misdraw": False, "dummy_hand": [],
            "margin": 9, "natural_hand": "player", "player_three_cards": False, "banker_three_cards": True,
        }  # fmt: skip
        at = f"2026-11-30T12:{seq // 60 % 60:02d}:{seq % 60:02d}.000Z"
        own = record_hash(prev, seq, at, "coup", None, None, seq - 1, canonical_json(body))
        sig = sign(TABLE_KEYS[table], record_message(table, seq, own))
        out.append(TableRecord(table, seq, "coup", at, None, None, seq - 1, body, prev, own, sig=sig))
        prev = own
    return out


def interleaved(tables: int, per_table: int) -> list[TableRecord]:
    chains = [chain(f"T{i + 1}", per_table) for i in range(tables)]
    return [r for group in zip(*chains, strict=True) for r in group]


def bench_archive(url: str, records: list[TableRecord], batch: int) -> float:
    signers = {r.table: key_id(TABLE_KEYS[r.table]) for r in records}
    with Archive(url) as archive:
        started = time.perf_counter()
        for i in range(0, len(records), batch):
            part = records[i : i + batch]
            archive.store(part, {(r.table, r.seq): signers[r.table] for r in part})
            for table in sorted({r.table for r in part}):
                archive.advance(table)
        elapsed = time.perf_counter() - started
        assert all(r.ok and r.head == len(records) // len(archive.tables()) for r in archive.verify())
    return len(records) / elapsed


def bench_end_to_end(url: str, broker: Mosquitto, records: list[TableRecord], batch: int) -> tuple[float, float]:
    """(records/s until the last ack, records/s the publisher managed)."""
    with Archive(url) as archive:
        tag = time.monotonic_ns()  # its own share group and session (see bench_drain)
        collector = Collector(
            Settings(
                broker=broker.url, archive=url, key=FLOOR_KEY, client_id=f"bench-{tag}", share=f"bench-{tag}",
                batch=batch,
            )
        )  # fmt: skip
        thread = threading.Thread(target=collector.run, args=(archive,), daemon=True)
        thread.start()
        while not collector._connected.is_set():
            time.sleep(0.05)
        time.sleep(0.3)
        last = {r.table: r.seq for r in records}
        acks: dict[str, int] = {}
        done = threading.Event()

        def on_ack(client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
            ack = parse_ack(message.payload)
            if ack is not None:
                acks[message.topic.split("/")[2]] = ack.seq
            if all(acks.get(t, 0) >= s for t, s in last.items()):
                done.set()

        sub = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        sub.on_message = on_ack
        sub.connect("127.0.0.1", broker.port)
        sub.subscribe("baccarat/bench/+/ack", qos=1)
        sub_loop = NetworkLoop(sub, "bench-acks")
        sub_loop.start()
        pub = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        pub.max_inflight_messages_set(1000)
        pub.max_queued_messages_set(0)
        pub.connect("127.0.0.1", broker.port)
        pub_loop = NetworkLoop(pub, "bench-publish")
        pub_loop.start()
        payloads = [(f"baccarat/bench/{r.table}/record", r.to_json()) for r in records]
        started = time.perf_counter()
        infos = [pub.publish(topic, payload, qos=1) for topic, payload in payloads]
        for info in infos:
            info.wait_for_publish(120)
        published = time.perf_counter() - started
        done.wait(300)
        elapsed = time.perf_counter() - started
        assert done.is_set(), f"acks stopped at {acks}"
        collector.stop()
        thread.join(30)
        for network in (pub_loop, sub_loop):
            network.stop()
    return len(records) / elapsed, len(records) / published


def publish_backlog(broker: Mosquitto, records: list[TableRecord]) -> None:
    """Publish every record (QoS 1) and wait until the broker has each: a backlog for an absent collector."""
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    pub.max_inflight_messages_set(1000)
    pub.max_queued_messages_set(0)
    pub.connect("127.0.0.1", broker.port)
    network = NetworkLoop(pub, "bench-backlog")
    network.start()
    infos = [pub.publish(f"baccarat/bench/{r.table}/record", r.to_json(), qos=1) for r in records]
    for info in infos:
        info.wait_for_publish(120)
    network.stop()


def wait_drained(url: str, records: list[TableRecord], started: float) -> float:
    """Seconds from ``started`` until every table's chain head in the archive is its last record (at most 300)."""
    last = {r.table: r.seq for r in records}
    with Archive(url) as watch:
        while any(watch.head(t).seq < s for t, s in last.items()) and time.perf_counter() < started + 300:
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
        heads = {t: watch.head(t).seq for t in last}
    assert all(heads[t] == s for t, s in last.items()), f"the backlog did not drain: heads {heads}"
    return elapsed


def bench_drain(url: str, broker: Mosquitto, records: list[TableRecord], batch: int) -> float:
    """records/s a collector drains a backlog the broker holds for it (its persistent session, filled while it
    was away), from its start until every table's chain head is its last record: the collector's intake
    through the broker and its archive, with no publisher in the way."""
    # Its own share group: a collector's persistent session stays in its group after it has gone, and the
    # broker goes on handing it its share (the other figures' collectors would take part of this backlog).
    tag = time.monotonic_ns()
    settings = Settings(
        broker=broker.url, archive=url, key=FLOOR_KEY, client_id=f"drain-{tag}", share=f"drain-{tag}", batch=batch
    )
    with Archive(url) as archive:
        first = Collector(settings)  # subscribes once: the broker keeps the session and queues for it
        thread = threading.Thread(target=first.run, args=(archive,), daemon=True)
        thread.start()
        while not first._connected.is_set():
            time.sleep(0.05)
        time.sleep(0.3)
        first.stop()
        thread.join(30)
    publish_backlog(broker, records)
    with Archive(url) as archive:  # the collector's connection (the wait below opens its own)
        collector = Collector(settings)
        thread = threading.Thread(target=collector.run, args=(archive,), daemon=True)
        started = time.perf_counter()
        thread.start()
        elapsed = wait_drained(url, records, started)
        collector.stop()
        thread.join(30)
    return len(records) / elapsed


def bench_drain_processes(
    url: str, broker: Mosquitto, records: list[TableRecord], batch: int, processes: int, log: Path
) -> float:
    """As :func:`bench_drain`, with ``processes`` real ``shoe-floor serve`` processes sharing the load through
    one shared-subscription group (the floor's way to scale out: each collector is one Python interpreter)."""
    tag = time.monotonic_ns()
    serve = [sys.executable, "-m", "floor.cli", "serve", "--broker", broker.url, "--archive", url]
    serve += ["--share", f"drain-{tag}", "--bind", "127.0.0.1:0", "--log-level", "WARNING", "--batch", str(batch)]
    key_path = log.parent / f"floor-{tag}.key"
    write_key_file(key_path, private_key_pem(FLOOR_KEY))
    serve += ["--key", str(key_path)]
    errors = log.open("ab")  # the collectors' stderr

    def start() -> list[subprocess.Popen[bytes]]:
        return [
            subprocess.Popen([*serve, "--client-id", f"drain-{tag}-{i}"], stderr=errors, cwd=ROOT)
            for i in range(processes)
        ]

    def stop(procs: list[subprocess.Popen[bytes]]) -> None:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(30)

    first = start()  # each subscribes once: the broker keeps every session in the group and queues for it
    time.sleep(3.0)
    stop(first)
    publish_backlog(broker, records)
    started = time.perf_counter()
    procs = start()
    try:
        elapsed = wait_drained(url, records, started)
    finally:
        stop(procs)
        errors.close()
    return len(records) / elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=50_000)
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--only", choices=["sqlite", "postgresql"])
    p.add_argument("--skip-broker", action="store_true", help="only the archive figure")
    p.add_argument("--processes", type=int, default=2, help="collector processes for the scale-out drain (0: skip)")
    args = p.parse_args(argv)
    records = interleaved(args.tables, args.records // args.tables)
    targets = {"postgresql": 20_000, "sqlite": 5_000}
    print(f"floor archive: {len(records)} records over {args.tables} tables, batches of {args.batch}")
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as name:
        tmp = Path(name)
        pg = Postgres(tmp / "pg").start() if args.only != "sqlite" else None
        broker = None if args.skip_broker else Mosquitto(tmp / "mosquitto", extra=[]).start()
        try:
            for kind in ("postgresql", "sqlite"):
                if args.only and kind != args.only:
                    continue
                figures = ["archive", "backlog drain", "end to end"]
                figures += [f"drain, {args.processes} processes"] if args.processes > 0 else []
                for figure in figures:
                    if figure != "archive" and broker is None:
                        continue
                    url = _fresh(kind, tmp, pg, figure)
                    enroll(url, {r.table for r in records})  # also makes the archive, before collectors race
                    if figure == "archive":
                        rate = bench_archive(url, records, args.batch)
                        extra = ""
                    elif figure.startswith("drain,"):
                        assert broker is not None
                        log = tmp / "serve.log"
                        rate = bench_drain_processes(url, broker, records, args.batch, args.processes, log)
                        extra = f" ({args.processes} shoe-floor serve processes, one share group)"
                    elif figure == "backlog drain":
                        assert broker is not None
                        rate = bench_drain(url, broker, records, args.batch)
                        extra = " (from the collector's start; the broker held them)"
                    else:
                        assert broker is not None
                        rate, sent = bench_end_to_end(url, broker, records, args.batch)
                        extra = f" (the publisher sent {sent:,.0f}/s)"
                    verdict = "meets" if rate >= targets[kind] else "MISSES"
                    print(f"  {kind:<10} {figure:<20} {rate:>9,.0f} records/s{extra}; {verdict} {targets[kind]:,}/s")
        finally:
            if broker is not None:
                broker.stop()
            if pg is not None:
                pg.stop()
    return 0


def _fresh(kind: str, tmp: Path, pg: Postgres | None, figure: str) -> str:
    tag = "".join(c if c.isalnum() else "_" for c in figure)
    if kind == "sqlite":
        return f"sqlite://{tmp}/{tag}.db"
    import psycopg

    assert pg is not None
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {tag}")
    return pg.url.rsplit("/", 1)[0] + "/" + tag


if __name__ == "__main__":
    sys.exit(main())
