"""shoe-sim's players, dealer and bet-spot reader against the real table: journal == truth, faults and all.

Two real processes on two real ptys: ``shoe-sim --link ... --spots-link ... --players 9`` with every money
fault on and the shoe's link damaged, and ``shoe-controller run --port ... --spots ...`` with the chip file
the simulator wrote. Afterwards ``shoe-controller settle --json`` must give exactly the truth log's wagers,
outcomes and commission boxes, and the journal one record per fault the simulator injected (a past-post
per late bet, a pulled bet per pulled bet, a mispay per underpay, overpay and loser left, a ghost-read
record per ghost read).

Needs the table's side of issue 16 (``controller/chipfile.py``, ``run --spots``, ``settle``): skipped
without it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from controller.journal import Journal

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("controller.chipfile") is None, reason="the table's side of issue 16 is not here"
)

ROOT = Path(__file__).resolve().parents[2]
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
#: ... and on the shoe's link (the reader's link is proto's to damage: tests/spots).
WIRE_FAULTS = {"corrupt": 0.002, "duplicate": 0.05, "split": 0.1}


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("NOTIFY_SOCKET", None)
    return env


def _deal_through_the_daemon(tmp_path: Path, sim_args: list[str], config: Path, journal: Path) -> None:
    """Run ``shoe-sim`` with ``sim_args`` (its ports ``shoe`` and ``spots`` and its ``chips.toml`` in
    ``tmp_path``) and the real table process on them until the simulator has dealt; both must exit 0."""
    shoe, spots, chips = tmp_path / "shoe", tmp_path / "spots", tmp_path / "chips.toml"
    with (tmp_path / "sim.log").open("wb") as log:
        sim = subprocess.Popen([sys.executable, "-m", "hw_sim.cli", *sim_args], stdout=log, stderr=log, env=_env())
    table = None
    try:
        deadline = time.monotonic() + 15
        while not (shoe.is_symlink() and spots.is_symlink() and chips.exists()):
            assert sim.poll() is None and time.monotonic() < deadline, (tmp_path / "sim.log").read_text()
            time.sleep(0.02)
        run = ["run", "--config", str(config), "--port", str(shoe), "--spots", str(spots), "--journal", str(journal)]
        with (tmp_path / "table.log").open("wb") as log:
            table = subprocess.Popen(
                [sys.executable, "-m", "controller.cli", *run, "--pin-factory", "mock", "--log-level", "info"],
                stdout=log,
                stderr=log,
                env=_env(),
            )
        assert sim.wait(timeout=240) == 0, (tmp_path / "sim.log").read_text()
        time.sleep(1.0)  # the table commits the last reports
        table.terminate()
        assert table.wait(timeout=30) == 0, (tmp_path / "table.log").read_text()
    finally:
        for proc in (sim, table):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.e2e
def test_two_shoes_with_nine_players_and_faults_on_both_links_journal_equals_truth(tmp_path: Path) -> None:
    shoe, spots, chips, truth, journal = (tmp_path / n for n in ("shoe", "spots", "chips.toml", "t.jsonl", "j.db"))
    config = tmp_path / "config.toml"
    config.write_text(f'[table]\ncommission = "shoe_end"\n\n[spots]\nchips = "{chips}"\n')
    faults = [arg for name, rate in (FAULTS | WIRE_FAULTS).items() for arg in ("--fault", f"{name}={rate}")]
    sim_args = ["--link", str(shoe), "--spots-link", str(spots), "--chips-out", str(chips), "--truth", str(truth)]
    sim_args += ["--players", "9", "--pace", "0.05", "--decks", "1", "--shoes", "2", "--seed", "6"]
    sim_args += ["--commission", "shoe_end", *faults]
    _deal_through_the_daemon(tmp_path, sim_args, config, journal)
    events = [json.loads(line) for line in truth.read_text().splitlines()]
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "settle", "--journal", str(journal), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    ).stdout
    settled = [json.loads(line) for line in out.splitlines()]
    key = ("shoe", "coup", "seat", "bet")
    journal_wagers = {tuple(e[k] for k in key): (e["stake"], e["outcome"]) for e in settled if "bet" in e}
    truth_wagers = {tuple(e[k] for k in key): (e["stake"], e["outcome"]) for e in events if e["event"] == "payout"}
    assert len(truth_wagers) > 100
    assert journal_wagers == truth_wagers
    # every box paid when its seat left, and shoe 1's at its end (shoe 2's close at a third shoe's start)
    boxes = {(e["shoe"], e["seat"]): (e["commission_box"], e["collected"]) for e in settled if "commission_box" in e}
    paid = {
        (e["shoe"], e["seat"]): (e["owed"], e["collected"])
        for e in events
        if e["event"] == "commission" and (e["shoe"] == 1 or e["why"] == "seat_left")
    }
    assert boxes and boxes == paid
    injected = Counter(e["kind"] for e in events if e["event"] == "fault")
    assert set(injected) <= set(FAULTS) | set(WIRE_FAULTS)
    assert len(set(injected) & set(FAULTS)) >= 7 and set(injected) & set(WIRE_FAULTS)  # (which: the seed's draw)
    with Journal.open(journal, read_only=True) as j:
        records = Counter(r.kind for r in j.records())
    assert records["past_post"] == injected["late_bet"]
    assert records["pulled_bet"] == injected["pulled_bet"]
    assert records["mispay"] == injected["underpay"] + injected["overpay"] + injected["loser_not_taken"]
    assert records["ghost_read"] == injected["ghost_read"]


@pytest.mark.e2e
def test_carded_players_through_the_real_table_every_visit_journaled_once_as_the_truth_says(tmp_path: Path) -> None:
    """``shoe-sim --players 6 --uncarded 1``: five players insert a card on sitting down (the leaver takes
    theirs out and the next shoe's player brings another); through the real daemon every truth player_in and
    player_out has its journal record with the same seat and player_ref, and the journal has no other."""
    shoe, spots, chips, truth, journal = (tmp_path / n for n in ("shoe", "spots", "chips.toml", "t.jsonl", "j.db"))
    config = tmp_path / "config.toml"
    config.write_text(f'[spots]\nchips = "{chips}"\n')
    sim_args = ["--link", str(shoe), "--spots-link", str(spots), "--chips-out", str(chips), "--truth", str(truth)]
    sim_args += ["--players", "6", "--uncarded", "1", "--pace", "0.05", "--decks", "1", "--shoes", "2", "--seed", "3"]
    _deal_through_the_daemon(tmp_path, sim_args, config, journal)
    events = [json.loads(line) for line in truth.read_text().splitlines()]
    said = Counter(
        (e["event"], e["seat"], e["player_ref"]) for e in events if e["event"] in ("player_in", "player_out")
    )
    with Journal.open(journal, read_only=True) as j:
        bodies = [(r.kind, json.loads(r.body)) for r in j.records() if r.kind in ("player_in", "player_out")]
    journaled = Counter((kind, b["seat"], b["player_ref"]) for kind, b in bodies)
    assert not any(seat == 6 for _e, seat, _r in said)  # seat 6's player has no card
    assert sum(n for (e, _s, _r), n in said.items() if e == "player_in") >= 6  # five seated, a leaver replaced
    assert any(e == "player_out" for e, _s, _r in said)  # the leaver took the card out
    assert journaled == said
    assert {b["reason"] for kind, b in bodies if kind == "player_out"} == {"card_out"}


@pytest.mark.e2e
def test_a_card_left_in_a_reader_ends_its_visit_with_a_note_and_the_next_player_is_rated_apart(tmp_path: Path) -> None:
    """``--fault card_left=1``: the leaver goes without their card; the real table ends the visit once the seat has
    been without a wager ``leave_after_coups`` locks running (player_out ``seat_empty`` with its note), and the next
    shoe's player at that seat (the old card taken out, theirs put in) has a visit of their own."""
    shoe, spots, chips, truth, journal = (tmp_path / n for n in ("shoe", "spots", "chips.toml", "t.jsonl", "j.db"))
    config = tmp_path / "config.toml"
    config.write_text(f'[spots]\nchips = "{chips}"\n')
    sim_args = ["--link", str(shoe), "--spots-link", str(spots), "--chips-out", str(chips), "--truth", str(truth)]
    sim_args += ["--players", "6", "--uncarded", "1", "--pace", "0.05", "--decks", "1", "--shoes", "2", "--seed", "3"]
    _deal_through_the_daemon(tmp_path, [*sim_args, "--fault", "card_left=1"], config, journal)
    events = [json.loads(line) for line in truth.read_text().splitlines()]
    left = [e for e in events if e["event"] == "fault" and e["kind"] == "card_left"]
    assert left, "no player left a card behind"
    with Journal.open(journal, read_only=True) as j:
        bodies = [(r.kind, json.loads(r.body)) for r in j.records() if r.kind in ("player_in", "player_out")]
    ended = [b for kind, b in bodies if kind == "player_out" and b["reason"] == "seat_empty"]
    assert [(b["seat"], b["player_ref"]) for b in ended] == [(e["seat"], e["player_ref"]) for e in left]
    assert all("card left in seat" in b["note"] for b in ended)
    ins = [(e["seat"], e["player_ref"]) for e in events if e["event"] == "player_in"]
    assert Counter(ins) == Counter((b["seat"], b["player_ref"]) for kind, b in bodies if kind == "player_in")
    for e in [e for e in left if e["shoe"] == 1]:  # the seat's next player (the next shoe's) has a visit of their own
        later = [ref for seat, ref in ins[ins.index((e["seat"], e["player_ref"])) + 1 :] if seat == e["seat"]]
        assert later and later[0] != e["player_ref"]
