"""SIGKILL the daemon at random moments during a shoe and restart it: no card lost or doubled, and the coup
in progress resumes with the same lamps.

A kill's moment is drawn in the shoe's progress, not in seconds: the daemon is killed after a random number of
new journal records (none: during its start-up and recovery), plus a random fraction of the simulator's pace
(between one record and the next). A kill by wall-clock time alone let a busy machine deal the whole shoe in
fewer than ``KILLS`` kills (CI at stop 27: 17 of 20)."""

from __future__ import annotations

import random
import re
import signal
import time

import pytest

from controller.game.records import REPLAYED_KINDS, input_from_body
from controller.game.table import TableState
from controller.journal import Journal
from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth

pytestmark = pytest.mark.e2e

KILLS = 20
#: Seconds per card of the simulator, and the most new journal records between two kills: 20 kills of at most
#: 6 records each (about 60 of a two-deck shoe's 200-odd records) leave the shoe unfinished on any machine.
PACE = 0.02
MOST_RECORDS = 6
RESUMED = re.compile(r"resumed shoe (\d+) coup (\d+), due (\S+), cards (.*?) \| (.*?), lamps (\S+)")


def replayed_view(h: Harness) -> tuple[str, ...]:
    """What the journal says the table shows now: shoe, coup, due, cards and lamps, as the daemon logs it."""
    state = TableState()
    with Journal.open(h.journal, read_only=True) as j:
        for _id, body in j.inputs():
            if body.get("kind") in REPLAYED_KINDS:
                table_input = input_from_body(body)
                assert table_input is not None  # a replayed kind is always a table input
                state.apply(table_input)
    v = state.view()
    return (
        str(v.shoe_number),
        str(v.coup_number),
        v.due.value,
        " ".join(c.token for c in v.player) or "-",
        " ".join(c.token for c in v.banker) or "-",
        ",".join(sorted(lamp.value for lamp in v.lamps)) or "none",
    )


def records_in(h: Harness) -> int:
    with Journal.open(h.journal, read_only=True) as j:
        return j.count()


def wait_records(h: Harness, target: int, timeout: float = 30.0) -> None:
    """Wait until the journal holds ``target`` records (or the simulator has ended)."""
    deadline = time.monotonic() + timeout
    while records_in(h) < target:
        if h.sim is None or h.sim.poll() is not None:
            return
        assert time.monotonic() < deadline, f"the journal stayed under {target} records for {timeout} s"
        time.sleep(0.005)


def test_sigkill_at_random_moments_loses_and_doubles_nothing(harness: Harness) -> None:
    rng = random.Random(2026)
    harness.start_sim("--decks", "2", "--pace", str(PACE), seed=31)
    harness.start_daemon()
    harness.wait_daemon_log("ready in")
    kills = 0
    resumed_checked = 0
    while kills < KILLS and harness.sim is not None and harness.sim.poll() is None:
        wait_records(harness, records_in(harness) + rng.randint(0, MOST_RECORDS))
        time.sleep(rng.uniform(0, PACE))
        assert harness.stop_daemon(signal.SIGKILL) == -signal.SIGKILL
        kills += 1
        expected = replayed_view(harness)
        harness.start_daemon()
        log = harness.wait_daemon_log("resumed shoe")
        match = RESUMED.search(log)
        assert match is not None
        assert match.groups() == expected, f"kill {kills}: resumed {match.groups()} but the journal says {expected}"
        resumed_checked += 1
    assert kills == KILLS, f"the shoe ended after only {kills} kills; lower MOST_RECORDS"
    assert harness.wait_sim(timeout=180) == 0
    assert harness.stop_daemon() == 0
    assert resumed_checked == KILLS
    assert_matches_truth(harness, sequenced=True)
