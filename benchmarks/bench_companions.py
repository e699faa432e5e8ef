"""The table's companions restarted mid-shoe (issue 14): how soon each is back at work.

    .venv/bin/python benchmarks/bench_companions.py [--restarts 10] [--dir DIR]

Real processes: ``shoe-sim`` on a pty at a dealer's pace, ``shoe-controller run``, its ``board`` and its
``link`` (with a real Mosquitto and ``shoe-floor serve`` acking). Each round SIGKILLs one companion and starts
it again, as systemd does:

* **board**: from the new process's start to its ``/api/state`` showing the table's shoe and coup (the feed's
  hello, no journal). Target: within 2 s.
* **link**: from the new process's start to the table storing a newer floor ack (the link reconnected to the
  broker, sent what was new, the floor archived it and the link handed the ack to the table).

Printed: each figure's median and worst, and the table's record of truth checked afterwards (every card once).
"""

from __future__ import annotations

import json
import signal
import statistics
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' harness and Mosquitto

from harness import common_args, header, load, out, temp_dir, verdict

from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth
from tests.floor.conftest import start_collector, stored_ack
from tests.servers import Mosquitto, free_port

BOARD_BACK_S = 2.0


def board_coup(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=1) as resp:
            snapshot = json.loads(resp.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0
    return int(snapshot["shoe"]["coup"] or 0)


def wait(check: object, timeout: float, what: str) -> float:
    t0 = time.monotonic()
    while not check():  # type: ignore[operator]
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.01)
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    p = common_args(__doc__)
    p.add_argument("--restarts", type=int, default=10, help="restarts of each companion (default 10)")
    args = p.parse_args(argv)
    with temp_dir(args.dir) as name:
        tmp = Path(name)
        header("the companions restarted mid-shoe: board and link back at work", tmp)
        broker = Mosquitto(tmp / "mq").start()
        url = f"sqlite:///{tmp / 'archive.db'}"
        collector = start_collector(broker, url, "bench", tmp / "floor.log")
        port = free_port()
        board_s: list[float] = []
        link_s: list[float] = []
        try:
            with Harness(tmp / "t1") as h:
                h.tmp.mkdir()
                h.start_sim("--decks", "8", seed=args.seed, pace="0.08")
                floor = ("--floor", broker.url, "--site", "s1", "--table-id", "t1")
                h.start_daemon(*floor, "--scoreboard", f"127.0.0.1:{port}")
                wait(lambda: board_coup(port) >= 2, 60, "the board at coup 2")
                for _ in range(args.restarts):
                    assert h.board_proc is not None and h.sim is not None
                    h.board_proc.send_signal(signal.SIGKILL)
                    h.board_proc.wait(10)
                    if h.sim.poll() is not None:
                        break
                    h.start_board("--scoreboard", f"127.0.0.1:{port}")
                    board_s.append(wait(lambda: board_coup(port) >= 1, 30, "the board back"))
                    assert h.link_proc is not None
                    h.link_proc.send_signal(signal.SIGKILL)
                    h.link_proc.wait(10)
                    acked = stored_ack(h.journal)
                    h.start_link(*floor)
                    link_s.append(wait(lambda a=acked: stored_ack(h.journal) > a, 60, "a newer floor ack"))
                h.wait_sim(600)
                assert_matches_truth(h, sequenced=True)
        finally:
            collector.send_signal(signal.SIGTERM)
            collector.wait(15)
            broker.stop()
    out()
    out(f"restarts of each: {len(board_s)} (the record of truth matched the journal: every card once)")
    for label, figures in (
        ("board: start -> showing the table", board_s),
        ("link: start -> a newer ack stored", link_s),
    ):
        out(f"   {label:<38} median {statistics.median(figures):.2f} s   worst {max(figures):.2f} s")
    out(f"   the board back within {BOARD_BACK_S:g} s every time: {verdict(max(board_s) <= BOARD_BACK_S)}")
    out(f"   {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
