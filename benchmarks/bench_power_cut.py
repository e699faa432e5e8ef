"""Power-cut soak: SIGKILL the table daemon at random moments during a paced shoe, restart it, lose nothing.

    .venv/bin/python benchmarks/bench_power_cut.py [--kills 60] [--pace 0.01] [--shoes 2] [--seed 1] [--dir DIR]

The real ``shoe-sim`` deals eight-deck shoes (``--shoes``, default 2; its dealer follows the PROMPTs,
``--pace`` seconds per action) over a pty to a real ``shoe-controller run`` process. The daemon is killed
with SIGKILL ``--kills`` times, spread over the first shoe, and restarted at once each time, as a power cut
and a systemd restart would do. Three kills in four fall while cards are flowing (a random number of cards
after the table came back, plus a random fraction of a dealer action); the rest fall at a random moment
of a restart (start-up, journal replay, resync with the shoe), sometimes before the table was back. When
the last shoe is over, the journal is compared with the simulator's record of truth by (shoe session,
event number): every card the shoe dealt must be journaled exactly once, in order. Exit status 1 if a
card was lost or doubled, or the hash chain does not verify.

Printed: kills, cards, restarts per second, the mean time from a kill to READY=1 of the next daemon (on an
AF_UNIX ``NOTIFY_SOCKET`` we bind) and to the first shoe event the next daemon commits (the table is back),
and the hash chain's verdict. Files go in a temporary directory in the current directory (``--dir``),
removed at the end with every process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import Children, clean_env, console_script, daemon_cmd, fs_type, load, out

from controller.journal import Journal

#: Share of the kills aimed at a restarting daemon rather than at one taking cards.
STARTUP_SHARE = 0.25
#: The longest a restart may take before the kill aimed at it (seconds after the spawn).
STARTUP_WINDOW = 1.2
#: Give up if the shoe makes no progress for this long (a stall is a finding, not a hang).
STALL = 30.0


class TruthTail:
    """Follows the simulator's truth log as it is written: cards seen, and when each was first seen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: Any = None
        self._partial = ""
        self.cards = 0
        self.last_card_at = 0.0
        self.ended = False

    def poll(self) -> int:
        """Read what is new; return how many new cards."""
        if self._fh is None:
            if not self.path.exists():
                return 0
            self._fh = open(self.path, encoding="utf-8")  # noqa: SIM115 - kept open while tailing
        chunk = self._fh.read()
        if not chunk:
            return 0
        now = time.perf_counter()
        text = self._partial + chunk
        lines = text.split("\n")
        self._partial = lines.pop()
        new = 0
        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)["event"]
            if event == "card":
                new += 1
            elif event == "end":
                self.ended = True
        if new:
            self.cards += new
            self.last_card_at = now
        return new

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


@dataclass
class Soak:
    kills: int = 0
    startup_kills: int = 0
    ready: list[float] = field(default_factory=list)  # kill -> READY=1 of the next daemon that got there
    resume: list[float] = field(default_factory=list)  # kill -> next shoe event committed
    unrecovered: int = 0  # kills that hit a daemon before it had committed anything
    elapsed: float = 0.0


@dataclass
class Comparison:
    truth_cards: int
    journal_cards: int
    lost: list[tuple[int, int, str]]
    doubled: list[tuple[int, int, str]]
    extra: list[tuple[int, int, str]]
    in_order: bool
    events_lost: int
    chain: list[str]
    coups: int


def compare(truth_path: Path, journal_path: Path) -> Comparison:
    """The journal against the record of truth, keyed by (shoe session, event number)."""
    truth = [json.loads(line) for line in truth_path.read_text().splitlines() if line.endswith("}")]
    truth_cards = [(e["session"], e["number"], e["card"]) for e in truth if e["event"] == "card"]
    truth_events: set[tuple[int, int]] = set()
    session: int | None = None
    for e in truth:  # buttons and the cut card carry no session: it is the latest HELLO's
        session = e.get("session", session)
        if e.get("number") is not None and session is not None:
            truth_events.add((session, e["number"]))
    with Journal.open(journal_path, read_only=True) as j:
        records = list(j.records())
        chain = j.verify()
        coups = len(j.coups())
    journal_cards: list[tuple[int, int, str]] = []
    journal_events: set[tuple[int, int]] = set()
    for r in records:
        if r.kind != "input" or r.session is None or r.number is None:
            continue
        journal_events.add((r.session, r.number))
        body = json.loads(r.body)
        if body.get("kind") == "card":
            journal_cards.append((r.session, r.number, body["card"]))
    counts = Counter(journal_cards)
    truth_set = set(truth_cards)
    return Comparison(
        truth_cards=len(truth_cards),
        journal_cards=len(journal_cards),
        lost=[c for c in truth_cards if c not in counts],
        doubled=[c for c, n in counts.items() if n > 1],
        extra=[c for c in counts if c not in truth_set],
        in_order=[c[2] for c in journal_cards] == [c[2] for c in truth_cards],
        events_lost=len(truth_events - journal_events),
        chain=chain,
        coups=coups,
    )


class JournalWatch:
    """Reads the id of the journal's latest shoe event while the daemon writes it (WAL: readers never block
    the writer); opened lazily, since the first daemon creates the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def latest(self) -> int:
        if self._conn is None:
            if not self.path.exists():
                return 0
            self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None)
        try:
            row = self._conn.execute(
                "SELECT max(id) FROM records WHERE kind = 'input' AND number IS NOT NULL"
            ).fetchone()
        except sqlite3.Error:
            return 0  # not created yet, or busy for a moment
        return int(row[0] or 0)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def drain(sock: socket.socket) -> list[tuple[float, bytes]]:
    """Every datagram waiting on the notify socket, with the time it was read."""
    got: list[tuple[float, bytes]] = []
    while True:
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            return got
        got.append((time.perf_counter(), data))


def soak(args: argparse.Namespace, tmp: Path) -> tuple[Soak, Comparison]:
    rng = random.Random(args.seed)
    link, truth, journal = tmp / "shoe", tmp / "truth.jsonl", tmp / "journal.db"
    notify = tmp / "notify.sock"
    # Kills at cards: after the table is back, let 1..2*spacing-1 cards pass, then kill a random fraction of
    # a dealer action later. Kills at restarts: a random moment of the STARTUP_WINDOW after a spawn.
    n_startup = round(args.kills * STARTUP_SHARE)
    spacing = max(1, (52 * args.decks - 30) // max(1, args.kills - n_startup + 1))
    plan: list[tuple[str, float]] = [("card", rng.randint(1, 2 * spacing - 1)) for _ in range(args.kills - n_startup)]
    for _ in range(n_startup):
        plan.insert(rng.randint(0, len(plan)), ("startup", rng.uniform(0.0, STARTUP_WINDOW)))

    children = Children()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    tail = TruthTail(truth)
    watch_journal = JournalWatch(journal)
    result = Soak()
    env = clean_env()
    env["NOTIFY_SOCKET"] = str(notify)
    log = tmp / "daemon.log"
    try:
        sock.bind(str(notify))
        sock.setblocking(False)
        sim_args = ["--link", str(link), "--pace", str(args.pace), "--decks", str(args.decks)]
        sim_args += ["--seed", str(args.seed), "--truth", str(truth), "--shoes", str(args.shoes)]
        sim = children.spawn([*console_script("shoe-sim", "hw_sim.cli"), *sim_args], tmp / "sim.log")
        t0 = time.perf_counter()
        while not link.exists():
            if sim.poll() is not None or time.perf_counter() - t0 > 15:
                raise RuntimeError(f"shoe-sim did not start: {(tmp / 'sim.log').read_text()}")
            time.sleep(0.005)
        cmd = daemon_cmd(str(link), journal)
        daemon = children.spawn(cmd, log, env, append=True)
        started = t_spawn = time.perf_counter()
        last_kill: float | None = None
        committed_at_kill = 0
        ready_seen = False

        def watch() -> None:
            """Follow the truth log and the notify socket; attribute READY and resumption to the last kill."""
            nonlocal last_kill, ready_seen
            tail.poll()
            if last_kill is not None and watch_journal.latest() > committed_at_kill:
                result.resume.append(time.perf_counter() - last_kill)
                last_kill = None
            for t, data in drain(sock):
                if b"READY=1" in data.split(b"\n") and not ready_seen:
                    ready_seen = True
                    if kill_times:
                        result.ready.append(t - kill_times[-1])
            if sim.poll() is not None and sim.returncode != 0:
                raise RuntimeError(f"shoe-sim exited {sim.returncode}: {(tmp / 'sim.log').read_text()}")

        kill_times: list[float] = []
        for kind, value in plan:
            if kind == "card":
                stall_from, seen = time.perf_counter(), tail.cards
                target = None
                while not tail.ended:
                    watch()
                    if target is None and last_kill is None:
                        target = tail.cards + value  # counted from the moment the table is back
                    if target is not None and tail.cards >= target:
                        break
                    if tail.cards != seen:
                        stall_from, seen = time.perf_counter(), tail.cards
                    elif time.perf_counter() - stall_from > STALL:
                        raise RuntimeError(f"the shoe stalled at card {tail.cards} for {STALL:g} s; see {log}")
                    time.sleep(0.001)
                if tail.ended:
                    break
                fire_at = time.perf_counter() + rng.uniform(0.0, 2 * args.pace)
            else:
                fire_at = t_spawn + value
                result.startup_kills += 1
            while time.perf_counter() < fire_at:
                watch()
                time.sleep(0.0005)
            watch()
            t_kill = time.perf_counter()
            daemon.kill()
            daemon.wait(timeout=10)
            result.kills += 1
            if last_kill is not None:
                result.unrecovered += 1
            last_kill = t_kill
            committed_at_kill = watch_journal.latest()
            kill_times.append(t_kill)
            drain(sock)  # a READY from the dead daemon is not the next one's
            ready_seen = False
            daemon = children.spawn(cmd, log, env, append=True)
            t_spawn = time.perf_counter()
        # the last daemon takes the shoe to its end
        stall_from, seen = time.perf_counter(), tail.cards
        while sim.poll() is None:
            watch()
            if tail.cards != seen:
                stall_from, seen = time.perf_counter(), tail.cards
            elif time.perf_counter() - stall_from > STALL + 30:  # the sim lingers up to 30 s for ACKs
                raise RuntimeError(f"the shoe stalled at card {tail.cards}; see {log}")
            time.sleep(0.005)
        watch()
        result.elapsed = time.perf_counter() - started
        if sim.returncode != 0:
            raise RuntimeError(f"shoe-sim exited {sim.returncode}: {(tmp / 'sim.log').read_text()}")
        daemon.terminate()
        daemon.wait(timeout=15)
        tracebacks = log.read_text(errors="replace").count("Traceback")
        if tracebacks:
            out(f"WARNING: {tracebacks} traceback(s) in the daemons' log:")
            out(log.read_text(errors="replace")[-3000:])
        return result, compare(truth, journal)
    finally:
        tail.close()
        watch_journal.close()
        children.close()
        sock.close()


def mean_ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    return (
        f"mean {sum(values) / len(values) * 1000:.0f} ms, median {ordered[len(ordered) // 2] * 1000:.0f} ms, "
        f"max {ordered[-1] * 1000:.0f} ms (n={len(values)})"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kills", type=int, default=60, help="SIGKILLs during the shoe (default 60)")
    p.add_argument("--pace", type=float, default=0.01, help="the simulated dealer's seconds per action")
    p.add_argument("--decks", type=int, default=8, help="decks in the shoe (default 8)")
    p.add_argument("--shoes", type=int, default=2, help="shoes dealt; the kills are spread over the first")
    p.add_argument("--seed", type=int, default=1, help="seed of the shuffle and of the kill moments")
    p.add_argument("--dir", type=Path, default=Path.cwd(), help="where the temporary journal goes")
    args = p.parse_args(argv)
    if args.kills < 0 or args.pace < 0 or not 1 <= args.decks <= 8 or args.shoes < 1:
        p.error("--kills and --pace must not be negative; --decks is 1-8; --shoes at least 1")
    cpus = len(os.sched_getaffinity(0))
    out("shoe-controller power-cut soak (SIGKILL during a paced shoe, restart, compare with the truth)")
    out(f"  command:  {shlex.join([sys.executable, *sys.argv])}")
    out(f"  machine:  nproc {cpus}, python {sys.version.split()[0]}, {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-power-cut-", dir=args.dir) as name:
        tmp = Path(name)
        out(f"  journal:  {tmp} ({fs_type(tmp)}), WAL, synchronous=FULL")
        out()
        try:
            s, c = soak(args, tmp)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            out(f"FAILED: {exc}")
            return 1
    out(
        f"kills:                {s.kills} SIGKILLs ({s.startup_kills} aimed at a restarting daemon; "
        f"{s.unrecovered} before the table was back)"
    )
    out(f"cards:                {c.truth_cards} dealt by the shoe, {c.journal_cards} journaled; {c.coups} coups")
    out(f"cards lost:           {len(c.lost)}" + (f"  {c.lost[:10]}" if c.lost else ""))
    out(f"cards doubled:        {len(c.doubled)}" + (f"  {c.doubled[:10]}" if c.doubled else ""))
    if c.extra:
        out(f"cards not in truth:   {len(c.extra)}  {c.extra[:10]}")
    out(f"journal order:        {'same as the shoe' if c.in_order else 'DIFFERS from the shoe'}")
    out(f"other events lost:    {c.events_lost} (buttons, HELLO, cut card)")
    out(f"hash chain:           {'verified' if not c.chain else '; '.join(c.chain[:3])}")
    out(f"elapsed:              {s.elapsed:.1f} s = {s.kills / s.elapsed:.2f} restarts/s")
    out(f"kill -> READY=1:      {mean_ms(s.ready)}")
    out(f"kill -> back:         {mean_ms(s.resume)} (time to resume: next shoe event committed)")
    ok = not c.lost and not c.doubled and not c.extra and c.in_order and not c.chain
    out(f"verdict:              {'PASS' if ok else 'FAIL'}: lost and doubled must both be 0")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
