"""Figure 5: a flood on the shoe's line. ``shoe-controller run`` (mock pins) on a real pty, flooded at
full speed for ``--seconds``: random bytes in each dialect, and a binary resend storm (one valid frame
back to back). Printed per flood: bytes the daemon took in (MB/s), its RSS before / peak / after, the
journal records it made (by kind), LINK DOWN/UP records (flaps), whether NOISY LINE was raised; then a
shoe right after the flood: the binary one's first ACK and a whole shoe dealt pipelined (cards/s, every
card journaled once), the ASCII one's cards journaled and how long it took.

    .venv/bin/python benchmarks/bench_flood.py [--seconds 10] [--seed 1] [--dir DIR]
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import select
import socket
import sys
import time
from pathlib import Path

from harness import (
    Children,
    Pty,
    ShoePlayer,
    clean_env,
    common_args,
    daemon_cmd,
    deal_pipelined,
    header,
    load,
    out,
    proc_status,
    recv_until,
    status_kb,
    temp_dir,
)

from controller.config import default_settings
from controller.journal import Journal
from firmware_protocol.ascii import encode_card
from firmware_protocol.binary import encode
from firmware_protocol.messages import PROTOCOL_VERSION, CardRead, Hello


def random_bytes(seed: int) -> bytes:
    return random.Random(seed).randbytes(1 << 16)


def resend_storm() -> bytes:
    frame = encode(1, Hello("storm-1.0", "SN-STORM", PROTOCOL_VERSION, 0x5707_0001))
    return frame * ((1 << 16) // len(frame))


def flood(fd: int, chunk: bytes, seconds: float, pid: int) -> tuple[int, int]:
    """Write ``chunk`` over and over as fast as the pty takes it, draining what the daemon writes back;
    returns (bytes written, peak RSS in kB sampled every 0.1 s)."""
    os.set_blocking(fd, False)
    written = peak = 0
    next_sample = 0.0
    end = time.perf_counter() + seconds
    while (now := time.perf_counter()) < end:
        if now >= next_sample:
            peak = max(peak, status_kb(proc_status(pid), "VmRSS"))
            next_sample = now + 0.1
        readable, writable, _ = select.select([fd], [fd], [], 0.1)
        if readable:
            with contextlib.suppress(BlockingIOError):
                os.read(fd, 65536)
        if writable:
            with contextlib.suppress(BlockingIOError):
                written += os.write(fd, chunk[written % len(chunk) :])
    os.set_blocking(fd, True)
    return written, peak


def journal_summary(path: Path) -> tuple[collections.Counter[str], int]:
    with Journal.open(path, read_only=True) as j:
        kinds: collections.Counter[str] = collections.Counter()
        for record in j.records():
            body = json.loads(record.body)
            kinds[f"{record.kind}:{body.get('kind') or body.get('alarm') or ''}".rstrip(":")] += 1
    return kinds, sum(kinds.values())


def scenario(tmp: Path, name: str, dialect: str, chunk: bytes, seconds: float, seed: int) -> None:
    pty = Pty.open()
    journal = tmp / f"flood-{dialect}-{len(chunk)}-{seed}.db"
    notify = tmp / "flood-notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    children = Children()
    try:
        sock.bind(str(notify))
        env = clean_env()
        env["NOTIFY_SOCKET"] = str(notify)
        daemon = children.spawn(daemon_cmd(pty.path, journal, dialect=dialect), tmp / "flood-daemon.log", env)
        recv_until(sock, b"READY=1", 15)
        time.sleep(0.5)
        rss0 = status_kb(proc_status(daemon.pid), "VmRSS")
        written, peak = flood(pty.master, chunk, seconds, daemon.pid)
        time.sleep(0.5)
        rss1 = status_kb(proc_status(daemon.pid), "VmRSS")
        kinds, rows = journal_summary(journal)
        flaps = kinds["input:link"]
        rate = written / seconds / 1e6
        out(f"   {name} ({dialect}), {seconds:g} s: {written / 1e6:.1f} MB taken in = {rate:.1f} MB/s")
        out(f"      RSS {rss0 / 1024:.1f} MB before, peak {peak / 1024:.1f} MB, {rss1 / 1024:.1f} MB after")
        out(f"      journal: {rows} records ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
        noisy = "yes" if kinds["alarm:noisy_line"] else "no"
        out(f"      link records {flaps} (1 = down at start, 2 = and up); NOISY LINE: {noisy}")
        if dialect == "binary":
            player = ShoePlayer(pty.master, default_settings().table_rules(), seed=seed, session_id=0xF100D000 + seed)
            t0 = time.perf_counter()
            player.start()
            player.wait_acked(1)
            first_ack = time.perf_counter() - t0
            cards, events, deal_s, _ = deal_pipelined(player)
            with Journal.open(journal, read_only=True) as j:
                journaled = sum(1 for _id, b in j.inputs() if b.get("kind") == "card")
            out(f"      next shoe: HELLO acknowledged in {first_ack * 1000:.1f} ms; {cards} cards ({events} events)")
            rate = cards / deal_s
            out(f"      pipelined and all ACKed in {deal_s:.3f} s = {rate:,.0f} cards/s; journaled {journaled}")
        else:
            time.sleep(0.3)  # a real shoe plugged in after the flood
            rng = random.Random(seed)
            tokens = [CardRead(rng.randrange(1, 14), rng.choice("SHDC")) for _ in range(20)]
            t0 = time.perf_counter()
            for card in tokens:
                os.write(pty.master, encode_card(card))
                time.sleep(0.01)
            deadline = time.perf_counter() + 10
            journaled = 0
            while time.perf_counter() < deadline:
                with Journal.open(journal, read_only=True) as j:
                    journaled = sum(1 for _id, b in j.inputs() if b.get("kind") == "card")
                if journaled >= len(tokens):
                    break
                time.sleep(0.02)
            took = time.perf_counter() - t0
            out(f"      next shoe: {journaled}/{len(tokens)} card lines (10 ms apart) journaled in {took:.2f} s")
    finally:
        children.close()
        sock.close()
        pty.close()
        for path in (notify, journal, Path(f"{journal}-wal"), Path(f"{journal}-shm")):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--seconds", type=float, default=10.0, help="length of each flood (default 10)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("figure 5: a flood on the shoe's line (shoe-controller run, mock pins, real pty)", tmp)
        scenario(tmp, "random bytes", "binary", random_bytes(args.seed), args.seconds, args.seed)
        scenario(tmp, "random bytes", "ascii", random_bytes(args.seed), args.seconds, args.seed)
        scenario(tmp, "resend storm", "binary", resend_storm(), args.seconds, args.seed)
    out()
    out(f"total {time.perf_counter() - started:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
