"""Buy-ins end to end: ``shoe-sim --players N --buy-ins money.sock`` deals to simulated players who buy in with
cash on sitting down and when low, sending each buy-in on the table's ``money.sock`` as the dealer screen
will; ``shoe-controller run`` journals each one: every truth ``buy_in`` has its ``buy_in`` record (seat,
amount, tender, player, in the shoe it came in), once, and the wagers still settle as the truth."""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

from controller.journal import Journal
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import assert_money_matches_truth, money_table

pytestmark = pytest.mark.e2e


def test_every_buy_in_of_the_truth_has_its_record(harness: Harness) -> None:
    options = money_table(harness, decks=1, commission="payout")
    harness.start_sim(
        "--decks", "1", "--spots-link", str(harness.tmp / "spots"), "--players", "6", "--shoes", "2",
        "--buy-ins", str(harness.tmp / "money.sock"), pace="0.03", seed=25,
    )  # fmt: skip
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=180) == 0
    time.sleep(0.5)  # the last commit
    assert harness.stop_daemon() == 0
    truth = Counter(
        (e["shoe"], e["seat"], e["cents"], e["tender"], e["player_ref"])
        for e in harness.truth_events()
        if e["event"] == "buy_in"
    )
    with Journal.open(harness.journal, read_only=True) as journal:
        bodies = [json.loads(r.body) for r in journal.records() if r.kind == "buy_in"]
    journaled = Counter((b["shoe"], b["seat"], b["cents"], b["tender"], b["player_ref"]) for b in bodies)
    assert sum(truth.values()) >= 6, "the players hardly bought in"
    assert journaled == truth, f"lost: {truth - journaled}; doubled or invented: {journaled - truth}"
    assert_money_matches_truth(harness)
