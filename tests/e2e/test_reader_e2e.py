"""A table with a bet-spot reader, end to end: ``shoe-sim`` deals to simulated players on two ptys (the shoe
and the reader), ``shoe-controller run --spots`` keeps the money, and ``shoe-controller settle --json`` of
its journal must equal the simulator's truth: every wager settled once, every commission box owed and
collected. Then the same with SIGKILL at moments between the lock and the declare and during the payout
(issue 16, section 4): nothing lost or doubled, the boxes rebuilt exactly by the replay."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config
from controller.game.wagers import Phase
from controller.journal import Journal
from controller.table.loop import resume
from tests.e2e.harness import Harness

pytestmark = pytest.mark.e2e

Key = tuple[Any, ...]
#: SIGKILLs during the two shoes of the recovery test.
KILLS = 10


def money_table(h: Harness, *, decks: int, commission: str) -> list[str]:
    """The chip file (the simulator's chip set) and a configuration with the reader: the daemon's options."""
    chips = h.tmp / "chips.toml"
    subprocess.run([sys.executable, "-m", "hw_sim.cli", "--chips-out", str(chips)], check=True, timeout=30)
    config = h.tmp / "config.toml"
    config.write_text(
        f'[table]\ndecks = {decks}\ncommission = "{commission}"\n[spots]\nchips = "{chips}"\n', encoding="utf-8"
    )
    return ["--config", str(config), "--spots", str(h.tmp / "spots")]


def start_players(
    h: Harness, *, decks: int, commission: str, players: int, pace: str, seed: int, shoes: int = 2
) -> None:
    """``shoe-sim`` with players and the bet-spot reader; two shoes, so that the first shoe's boxes close (a
    shoe's commission boxes are journaled when they close, at the next shoe's start)."""
    h.start_sim(
        "--decks", str(decks), "--spots-link", str(h.tmp / "spots"), "--players", str(players),
        "--commission", commission, "--shoes", str(shoes), pace=pace, seed=seed,
    )  # fmt: skip


def settled(h: Harness) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``shoe-controller settle --journal J --json``: (wagers, commission boxes)."""
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "settle", "--journal", str(h.journal), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [x for x in lines if "bet" in x], [x for x in lines if "commission_box" in x]


def wagers_of_truth(h: Harness) -> Counter[Key]:
    return Counter(
        (e["shoe"], e["coup"], e["seat"], e["bet"], e["stake"], e["outcome"])
        for e in h.truth_events()
        if e["event"] == "payout"
    )


def boxes_of_truth(h: Harness) -> dict[tuple[int, int], tuple[int, int]]:
    """(shoe, seat) -> (owed, collected), every box the simulator's players paid, but the last shoe's boxes
    collected at its end (a shoe's end-of-shoe boxes close at the next shoe's start; a leaving seat's box
    closes when it is paid)."""
    events = h.truth_events()
    last = max(e["shoe"] for e in events if e["event"] == "payout")
    boxes: dict[tuple[int, int], tuple[int, int]] = {}
    for e in events:
        if e["event"] == "commission" and (e["shoe"] < last or e["why"] == "seat_left"):
            owed, collected = boxes.get((e["shoe"], e["seat"]), (0, 0))
            boxes[(e["shoe"], e["seat"])] = (owed + e["owed"], collected + e["collected"])
    return boxes


def assert_money_matches_truth(h: Harness) -> None:
    wagers, boxes = settled(h)
    journal = Counter((w["shoe"], w["coup"], w["seat"], w["bet"], w["stake"], w["outcome"]) for w in wagers)
    truth = wagers_of_truth(h)
    assert sum(truth.values()) > 20, "the players hardly wagered"
    assert journal == truth, f"lost: {truth - journal}; doubled or invented: {journal - truth}"
    assert {(b["shoe"], b["seat"]): (b["commission_box"], b["collected"]) for b in boxes} == boxes_of_truth(h)


def test_a_shoe_with_players_settles_as_the_truth(harness: Harness) -> None:
    options = money_table(harness, decks=1, commission="shoe_end")
    start_players(harness, decks=1, commission="shoe_end", players=4, pace="0.03", seed=7)
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=180) == 0
    time.sleep(0.5)  # the last commit
    assert harness.stop_daemon() == 0
    assert_money_matches_truth(harness)
    _, boxes = settled(harness)
    assert any(b["commission_box"] > 0 for b in boxes), "no commission box owed: the boxes were not exercised"
    log = harness.daemon_logs[-1].read_text()
    assert "bet-spot reader link up" in log


def money_phase(h: Harness, config: Path) -> Phase | None:
    """Where the coup's money was when the daemon died, from its journal (the replay a restart makes)."""
    settings = load_config(config).with_overrides(spots=str(h.tmp / "spots"))
    with Journal.open(h.journal, read_only=True) as j:
        state = resume(j, settings.table_rules(), None).state
    return None if state.money is None else state.money.phase


def test_sigkill_between_lock_and_declare_and_during_payout_loses_and_doubles_no_money(harness: Harness) -> None:
    """SIGKILL the daemon again and again while players wager (commission into the boxes), restart it each
    time, and finish the shoe: the journal's settlements and boxes are the simulator's truth, exactly. The
    kills must have landed with wagers locked (between the first card and the declare) and in the payout."""
    rng = random.Random(16)
    options = money_table(harness, decks=1, commission="shoe_end")
    config = Path(options[1])
    # (a dealer's pace with room between the bets and the first card: at 10 ms a step the reader's reports of
    # bets placed at once can reach the table after the card, as no real dealer is that fast)
    start_players(harness, decks=1, commission="shoe_end", players=5, pace="0.04", seed=11)
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    phases: Counter[Phase | None] = Counter()
    kills = 0
    while kills < KILLS and harness.sim is not None and harness.sim.poll() is None:
        harness.wait_daemon_log("shoe link up")  # the shoe deals again (it waits while the table is down)
        time.sleep(rng.uniform(0.05, 0.8))
        assert harness.stop_daemon(signal.SIGKILL) == -signal.SIGKILL
        kills += 1
        phases[money_phase(harness, config)] += 1
        harness.start_daemon(*options)
        harness.wait_daemon_log("resumed shoe")
    assert kills == KILLS, f"the shoe ended after only {kills} kills; slow the simulator down"
    assert harness.wait_sim(timeout=240) == 0
    time.sleep(0.5)
    assert harness.stop_daemon() == 0
    assert phases[Phase.LOCKED] >= 1 and phases[Phase.PAYOUT] >= 1, f"kills landed in {dict(phases)}"
    assert_money_matches_truth(harness)
