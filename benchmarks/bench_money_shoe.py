"""A whole shoe with the money: 9 simulated players, every money fault, a damaged shoe line; journal == truth.

    .venv/bin/python benchmarks/bench_money_shoe.py [--decks 8] [--players 9] [--seed 1] [--pace 0.04] [--dir DIR]

Two real processes on two real ptys, as at a table: ``shoe-sim`` (the shoe, the bet-spot reader, 9 players
betting by strategy, a dealer paying; every money fault of docs/simulator.md on, and the shoe's line corrupted,
duplicated and split) and ``shoe-controller run --spots`` (commission collected into the boxes at the shoe's
end). Then ``shoe-controller settle --json`` must give exactly the truth log's wagers (stake and outcome) and
boxes, and the journal one record per fault the simulator injected (a past-post per late bet, a pulled bet per
pulled bet, a mispay per underpay, overpay and loser left, a ghost read per ghost read). Printed: the wagers,
the faults, whether each agrees, the table's peak RSS with the reader link on (target <= 80 MB, issue 16), and
the time the shoe took.

Two shoes are dealt: the boxes of a shoe close when the next one starts (the first shoe's are compared).
The reader's own line is not damaged byte by byte here (its loss and duplication are tested over a pty in
tests/spots/test_reader_over_pty.py); its *reads* are (dropped, duplicated and ghost reads).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from harness import clean_env, common_args, header, load, out, proc_status, status_kb, temp_dir, verdict

from controller.journal import Journal

FAULTS = {
    "dropped_read": 0.03,
    "duplicate_read": 0.03,
    "ghost_read": 0.03,
    "unknown_chip": 0.02,
    "late_bet": 0.03,
    "pulled_bet": 0.03,
    "underpay": 0.03,
    "overpay": 0.03,
    "loser_not_taken": 0.05,
}
WIRE_FAULTS = {"corrupt": 0.002, "duplicate": 0.05, "split": 0.1}
TARGET_RSS_MB = 80.0


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--decks", type=int, default=8, help="decks in the shoe (default 8)")
    p.add_argument("--players", type=int, default=9, help="players (default 9)")
    p.add_argument("--pace", default="0.04", help="the simulator's seconds per move (default 0.04)")
    args = p.parse_args(argv)
    header("a whole shoe with the money: journal == truth, faults on both links")
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        return run(tmp, args)


def run(tmp: Path, args: object) -> int:
    decks, players, pace, seed = args.decks, args.players, args.pace, args.seed  # type: ignore[attr-defined]
    shoe, spots, chips, truth, journal = (tmp / n for n in ("shoe", "spots", "chips.toml", "t.jsonl", "j.db"))
    config = tmp / "config.toml"
    config.write_text(f'[table]\ncommission = "shoe_end"\ndecks = {decks}\n\n[spots]\nchips = "{chips}"\n')
    faults = [a for name, rate in (FAULTS | WIRE_FAULTS).items() for a in ("--fault", f"{name}={rate}")]
    sim_args = ["--link", str(shoe), "--spots-link", str(spots), "--chips-out", str(chips), "--truth", str(truth)]
    sim_args += ["--players", str(players), "--pace", str(pace), "--decks", str(decks), "--shoes", "2"]
    sim_args += ["--seed", str(seed), "--commission", "shoe_end", *faults]
    env = clean_env()
    started = time.monotonic()
    sim = subprocess.Popen(
        [sys.executable, "-m", "hw_sim.cli", *sim_args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    table = None
    peak_kb = 0
    try:
        deadline = time.monotonic() + 15
        while not (shoe.is_symlink() and spots.is_symlink() and chips.exists()):
            if sim.poll() is not None or time.monotonic() > deadline:
                out(f"   the simulator did not start: {sim.stderr.read().decode() if sim.stderr else ''}")
                return 1
            time.sleep(0.02)
        cmd = [sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--port", str(shoe)]
        cmd += ["--spots", str(spots), "--journal", str(journal), "--pin-factory", "mock", "--log-level", "warning"]
        table = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        while sim.poll() is None:
            if table.poll() is not None:
                out("   the table process died")
                return 1
            peak_kb = max(peak_kb, status_kb(proc_status(table.pid), "VmHWM"))
            time.sleep(0.5)
        took = time.monotonic() - started
        time.sleep(1.0)  # the table commits the last reports
        peak_kb = max(peak_kb, status_kb(proc_status(table.pid), "VmHWM"))
        table.terminate()
        table.wait(timeout=30)
    finally:
        for proc in (sim, table):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        if sim.stderr is not None:
            sim.stderr.close()
    events = [json.loads(line) for line in truth.read_text().splitlines()]
    settled_text = subprocess.run(
        [sys.executable, "-m", "controller.cli", "settle", "--journal", str(journal), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    settled = [json.loads(line) for line in settled_text.splitlines()]
    key = ("shoe", "coup", "seat", "bet")
    journal_wagers = {tuple(e[k] for k in key): (e["stake"], e["outcome"]) for e in settled if "bet" in e}
    truth_wagers = {tuple(e[k] for k in key): (e["stake"], e["outcome"]) for e in events if e["event"] == "payout"}
    boxes = {(e["shoe"], e["seat"]): (e["commission_box"], e["collected"]) for e in settled if "commission_box" in e}
    paid = {
        (e["shoe"], e["seat"]): (e["owed"], e["collected"])
        for e in events
        if e["event"] == "commission" and (e["shoe"] == 1 or e["why"] == "seat_left")
    }
    injected = Counter(e["kind"] for e in events if e["event"] == "fault")
    with Journal.open(journal, read_only=True) as j:
        records = Counter(r.kind for r in j.records())
    checks = {
        "wagers (stake, outcome)": journal_wagers == truth_wagers,
        "commission boxes (owed, collected)": bool(boxes) and boxes == paid,
        "a past_post record per late bet": records["past_post"] == injected["late_bet"],
        "a pulled_bet record per pulled bet": records["pulled_bet"] == injected["pulled_bet"],
        "a mispay per underpay, overpay, loser left": records["mispay"]
        == injected["underpay"] + injected["overpay"] + injected["loser_not_taken"],
        "a ghost_read record per ghost read": records["ghost_read"] == injected["ghost_read"],
    }
    shoe1 = sum(1 for k in truth_wagers if k[0] == 1)
    dealt = f"{len(truth_wagers)} wagers in the truth ({shoe1} in shoe 1)"
    out(f"   {decks}-deck shoes: {dealt}, {len(journal_wagers)} settled by the table")
    out(f"   faults injected: {dict(sorted(injected.items()))}")
    for what, ok in checks.items():
        out(f"   journal == truth: {what}: {'yes' if ok else 'NO'}")
    if journal_wagers != truth_wagers:
        differ = set(journal_wagers) ^ set(truth_wagers)
        differ |= {k for k in journal_wagers if journal_wagers[k] != truth_wagers.get(k)}
        for k in sorted(differ)[:10]:
            out(f"      {k}: journal {journal_wagers.get(k)}, truth {truth_wagers.get(k)}")
    kinds = ("past_post", "pulled_bet", "mispay", "ghost_read")
    out("   records: " + ", ".join(f"{kind} {records[kind]}" for kind in kinds))
    mb = peak_kb / 1024
    out(f"   the table's peak RSS with the reader link on: {mb:.1f} MB (target <= {TARGET_RSS_MB:.0f} MB)")
    out(f"   took {took:.0f} s ({load()})")
    ok = all(checks.values()) and mb <= TARGET_RSS_MB
    out(f"   {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
