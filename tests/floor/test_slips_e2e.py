"""Rating slips end to end: ``shoe-sim --players 6 --uncarded 1 --buy-ins money.sock`` deals two shoes to
carded players (a leaver replaced, one seat without a card) through the real table process; then every truth
``player_in`` has its slip (the seat, the player, the journal's ``player_in`` time as its start), each slip's
handle, win and theo are the sums over its player's wagers in ``shoe-controller settle --json`` for that
player's seat time (theo from the wager records, which settle does not print), the uncarded seat is on no slip,
and the journal archived as the table's link publishes it gives ``shoe-floor slips`` equal to
``shoe-controller slips`` plus ``table``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest

from controller.journal import Journal
from floor.archive import Archive
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table, settled
from tests.floor.conftest import shoe_floor

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def _slips(h: Harness) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "slips", "--journal", str(h.journal), "--json", "--open"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return out.splitlines()


def test_every_carded_visit_has_its_slip_and_the_slips_money_is_settles(harness: Harness, archive_url: str) -> None:
    options = money_table(harness, decks=1, commission="payout")
    harness.start_sim(
        "--decks", "1", "--spots-link", str(harness.tmp / "spots"), "--players", "6", "--uncarded", "1",
        "--shoes", "2", "--buy-ins", str(harness.tmp / "money.sock"), pace="0.02", seed=31,
    )  # fmt: skip
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=240) == 0
    time.sleep(0.5)  # the last commit
    assert harness.stop_daemon() == 0
    lines = _slips(harness)
    slips = [json.loads(x) for x in lines]
    truth = harness.truth_events()
    ins = [e for e in truth if e["event"] == "player_in"]
    outs = [e for e in truth if e["event"] == "player_out"]
    assert len(ins) >= 6 and outs, "the players hardly came and went"
    with Journal.open(harness.journal, read_only=True) as j:
        records = list(j.records())
    journal_in = {(b["seat"], b["player_ref"]): r.ts for r in records if r.kind == "player_in" for b in [r.data()]}
    theo = {
        (b["shoe"], b["coup"], b["seat"], b["bet"]): b["theo_cents"]
        for r in records
        if r.kind == "wager"
        for b in [r.data()]
    }
    # every truth player_in has its slip, starting at the journal's player_in of that card at that seat
    by_start = {(s["seats"][0], s["player_ref"], s["start"]): s for s in slips}
    for e in ins:
        key = (e["seat"], e["player_ref"])
        assert (*key, journal_in[key]) in by_start, e
    assert not any(6 in s["seats"] for s in slips)  # seat 6's player has no card
    # each slip's money is settle's sums over its player's seat time: [player_in's coup, player_out's coup)
    wagers, _boxes = settled(harness)
    for e in ins:
        left = [o for o in outs if (o["seat"], o["player_ref"]) == (e["seat"], e["player_ref"])]
        first = (e["shoe"], e["coup"])
        end = (left[0]["shoe"], left[0]["coup"]) if left else (10**9, 0)
        mine: list[dict[str, Any]] = [
            w for w in wagers if w["seat"] == e["seat"] and first <= (w["shoe"], w["coup"]) < end
        ]
        s = by_start[(e["seat"], e["player_ref"], journal_in[(e["seat"], e["player_ref"])])]
        assert s["open"] == (not left)
        assert s["handle_cents"] == sum(w["stake"] for w in mine), e
        assert s["win_cents"] == sum(w["net"] for w in mine), e
        assert s["wagers"] == len(mine) and s["coups"] == len({(w["shoe"], w["coup"]) for w in mine})
        assert s["theo_cents"] == pytest.approx(
            sum(theo[(w["shoe"], w["coup"], w["seat"], w["bet"])] for w in mine), abs=1e-6
        )
        bought = [b for b in truth if b["event"] == "buy_in" and b["player_ref"] == e["player_ref"]]
        assert s["buy_in_cents"] == sum(b["cents"] for b in bought) and s["buy_ins"] == len(bought)
    assert sum(s["handle_cents"] for s in slips) == sum(w["stake"] for w in wagers if w["seat"] != 6)
    # the floor's slips of this table, from its records as the link publishes them, are the table's own
    with Archive(archive_url) as a:
        a.store([r.for_floor("T1") for r in records])
    floor = shoe_floor("slips", "--archive", archive_url, "--json", "--open")
    assert floor.returncode == 0, floor.stderr
    assert floor.stdout.splitlines() == [
        json.dumps(json.loads(x) | {"table": "T1"}, sort_keys=True, separators=(",", ":")) for x in lines
    ]
