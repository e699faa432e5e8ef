"""The live exact edge through the real daemon and the simulated shoe: the table journals its advantage
records as it deals, logs each as a surveillance notice, and `shoe-controller edges` reads the same numbers
back from the journal alone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import Journal
from tests.e2e.harness import Harness


@pytest.mark.e2e
def test_a_real_table_journals_the_advantages_edges_reads_back(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    # A threshold just above the Player wager's usual -1.24 %: it flags and clears as a one-deck shoe thins.
    config.write_text(
        '[table]\ndecks = 1\nrules = "commission"\n[scoreboard]\nenabled = false\n'
        "[surveillance]\nadvantage_threshold = -0.0124\n"
        # the Banker wager's own threshold: -100 % flags it at each shoe's first betting time, for the shoe
        "[surveillance.bet_thresholds]\nbanker = -1.0\n"
    )
    with Harness(tmp_path) as h:
        h.start_sim("--decks", "1", "--shoes", "2", seed=11)
        h.start_daemon("--config", str(config))
        assert h.wait_sim(timeout=120) == 0
        h.wait_daemon_log("surveillance:", timeout=30)
        assert h.stop_daemon(signal.SIGTERM) == 0
        log = h.daemon_logs[-1].read_text()
    with Journal.open(h.journal, read_only=True) as journal:
        records = [(r.kind, r.data()) for r in journal.records()]
    starts = [b for k, b in records if k == "shoe" and b["event"] == "start"]
    assert starts and all(b["rules"]["name"] == "commission" for b in starts)
    flags = [b for k, b in records if k in ("advantage", "advantage_cleared")]
    assert any(b["bet"] == "player" for b in flags)
    banker = [
        (k, b["shoe"], b.get("shoe_ended", False)) for k, b in records if k.startswith("adv") and b["bet"] == "banker"
    ]
    assert banker == [
        (kind, shoe, ended) for shoe in (1, 2) for kind, ended in (("advantage", False), ("advantage_cleared", True))
    ]
    assert log.count("surveillance:") == len(flags)
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "edges", "--journal", str(h.journal), "--json"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    rows = {(r["shoe"], r["coup"]): r for r in map(json.loads, out.splitlines())}
    checked = 0
    for b in flags:
        if b.get("shoe_ended"):
            continue
        row = rows.get((b["shoe"], b["coup"]))
        if row is None:  # a betting time whose coup the table never dealt (the shoe's end)
            continue
        assert row[b["bet"]] == b["ev"] and row["cards_left"] == b["cards_left"]
        checked += 1
    assert checked >= 1
