"""Scoreboard figures: event-to-DOM latency in Chromium, page weight, the daemon's RSS, the sink's own cost.

``.venv/bin/python benchmarks/bench_scoreboard.py [--decks N] [--pace SECONDS] [--seed N]``

* **update() cost**: the time the table loop spends in the sink per input, over a whole 8-deck shoe dealt
  through a real :class:`TableState` (in this process, no server threads reading).
* **page weight**: bytes of ``/``, the CSS and the JS as served.
* **event to DOM**: the full stack (software shoe on a pty, the daemon with the scoreboard, headless
  Chromium on the page): for each snapshot, the page's ``Date.now()`` right after it drew the snapshot
  (and at the next animation frame) minus the snapshot's ``ts_ms`` stamped when the sink published it.
  Same machine, same clock. Target: p95 <= 100 ms.
* **RSS** of the daemon process (table loop + sink + server) with the browser connected. Target <= 100 MB.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.board.scoreboard import ScoreboardSink  # noqa: E402
from controller.game.cards import DECK  # noqa: E402
from controller.game.rules import COMMISSION  # noqa: E402
from controller.game.settlement import TableLimits  # noqa: E402
from controller.game.shoe import BurnMode, BurnRule  # noqa: E402
from controller.game.table import CardDrawn, DeclarePressed, Due, TableInput, TableRules, TableState  # noqa: E402


@dataclass(frozen=True)
class _Board:
    host: str = "127.0.0.1"
    port: int = 0
    reveal: str = "on_read"
    bilingual: bool = False


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_update(reveal: str) -> None:
    sink = ScoreboardSink(_Board(reveal=reveal), table_name="Bench", limits=TableLimits(), ruleset=COMMISSION)
    state = TableState(TableRules(decks=8, burn_rule=BurnRule(mode=BurnMode.NONE)))
    deck = list(DECK) * 8
    random.Random(1).shuffle(deck)
    times: list[float] = []
    for card in deck[:-6]:
        events: list[TableInput] = [CardDrawn(card)]
        while events:
            notices = state.apply(events.pop())
            t0 = time.perf_counter()
            sink.update(state.view(), notices)
            times.append((time.perf_counter() - t0) * 1000)
            if state.due is Due.DECLARE:
                events.append(DeclarePressed())
    size = len(sink.board.current()[1])
    print(
        f"update() {reveal:<10} {len(times)} inputs, {sink.snapshot()['counters']['coups']} coups: "
        f"p50 {_pct(times, 0.5):.3f} ms, p95 {_pct(times, 0.95):.3f} ms, max {max(times):.3f} ms; "
        f"snapshot at shoe end {size} bytes"
    )
    sink.close()


def page_weight(port: int) -> int:
    total = 0
    for path in ("/", "/static/scoreboard.css", "/static/scoreboard.js"):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as resp:
            n = len(resp.read())
        print(f"  {path:<24} {n:>7} bytes")
        total += n
    print(f"page weight: {total} bytes ({total / 1024:.1f} KiB; limit 200 KB)")
    return total


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_browser(decks: int, pace: float, seed: int) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_scoreboard_daemon, wait_state, write_config
    from tests.e2e.harness import Harness
    from tests.servers import free_port

    with tempfile.TemporaryDirectory(prefix="bench-scoreboard-") as tmp, Harness(Path(tmp)) as harness:
        port = free_port()
        config = write_config(Path(tmp), port, "on_read", decks=decks, name="Bench Table")
        harness.start_sim("--decks", str(decks), "--shoes", "1", seed=seed, pace=str(pace))
        start_scoreboard_daemon(harness, config)
        wait_state(port)
        page_weight(port)
        assert harness.daemon is not None and harness.sim is not None
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(f"http://127.0.0.1:{port}/")
            rss: list[float] = []
            while harness.sim.poll() is None:
                page.wait_for_timeout(250)
                rss.append(rss_mb(harness.daemon.pid))
            page.wait_for_timeout(1000)
            stats = page.evaluate("window.scoreboard")
            browser.close()
        coups = len([c for c in harness.journal_coups() if c["declared"]])
        drawn, painted = stats["latencies"], stats["paints"]
        print(
            f"event to DOM ({len(drawn)} snapshots, {coups} coups, {decks} decks at {pace} s/card): "
            f"p50 {statistics.median(drawn):.0f} ms, p95 {_pct(drawn, 0.95):.0f} ms, max {max(drawn):.0f} ms "
            "(target p95 <= 100 ms)"
        )
        print(
            f"event to next frame: p50 {statistics.median(painted):.0f} ms, p95 {_pct(painted, 0.95):.0f} ms, "
            f"max {max(painted):.0f} ms"
        )
        print(f"daemon RSS with the browser connected: max {max(rss):.1f} MB, last {rss[-1]:.1f} MB (target <= 100 MB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", type=int, default=2, help="decks in the simulated shoe (default 2)")
    ap.add_argument("--pace", type=float, default=0.05, help="seconds per card (default 0.05)")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    bench_update("on_read")
    bench_update("on_declare")
    bench_browser(args.decks, args.pace, args.seed)


if __name__ == "__main__":
    main()
