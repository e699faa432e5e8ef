"""Retention runs on every table, whatever its link did (issue 15, item 7).

A real table (``shoe-controller run``) deals shoes from the simulator over a pty; its shoe link comes up once
and never drops, so its one ``link`` input stands near the journal's start. Several old shoes, acknowledged,
are pruned (before, a prune stopped at that input: nothing was ever prunable and a 24/7 table's journal grew
without bound); ``journal verify`` says intact; the daemon SIGKILLed mid-shoe and started again on the pruned
journal resumes exactly where the unpruned journal says, and deals on."""

from __future__ import annotations

import signal
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from controller.game.records import InputKind
from controller.game.table import TableRules
from controller.journal import PRUNE_NOTE, Journal
from controller.table.loop import resume
from tests.console import run_main
from tests.e2e.harness import Harness
from tests.e2e.test_power_cut import RESUMED, replayed_view
from tests.waiting import until

pytestmark = pytest.mark.e2e


def shoes_started(h: Harness) -> int:
    try:
        with Journal.open(h.journal, read_only=True) as j:
            return len(j.shoe_starts())
    except Exception:
        return 0


def test_a_table_whose_link_never_dropped_prunes_its_old_shoes_and_resumes_the_same(harness: Harness) -> None:
    harness.start_sim("--decks", "1", "--shoes", "6", "--pace", "0.01", seed=41)
    harness.start_daemon()
    until(lambda: shoes_started(harness) >= 4, 120, "the table to start its fourth shoe")
    assert harness.stop_daemon(signal.SIGKILL) == -signal.SIGKILL  # mid-shoe, the shoe still connected
    assert harness.sim is not None and harness.sim.poll() is None

    twin = harness.tmp / "unpruned.db"  # the same journal, never pruned
    with sqlite3.connect(harness.journal) as src, sqlite3.connect(twin) as dst:
        src.backup(dst)
    unpruned = replayed_view(harness)
    with Journal.open(harness.journal) as journal:
        links = [(i, b["up"]) for i, b in journal.inputs() if b["kind"] == InputKind.LINK]
        starts = journal.shoe_starts()
        assert [up for _i, up in links] == [False, True] and links[-1][0] < starts[0]  # up once, never dropped
        head = journal.head()[0]
        plan = journal.prunable(older_than=datetime.now(UTC) + timedelta(days=1), ack=head)
        assert plan == (starts[-1], len(starts) - 1)  # every old shoe; before, None
        deleted = journal.prune(plan[0], keep_from_ack=head, chunk=97)
        assert deleted == plan[0] - 1
        assert journal.last_input(InputKind.LINK, before=starts[-1]) == journal_link_up(twin)
        note = [r.data() for r in journal.records() if r.kind == "note"][-1]
        assert note["note"] == PRUNE_NOTE and note["kept"]["link"]["id"] == links[-1][0]
    verify = run_main(["shoe-controller", "journal", "verify", "--journal", str(harness.journal)])
    assert verify.returncode == 0 and "intact" in verify.stdout, verify

    # the replay, in-process, of both journals: the same table, its alarms and link included
    rules = TableRules(decks=1)
    with Journal.open(harness.journal, read_only=True) as pruned, Journal.open(twin, read_only=True) as full:
        assert resume(pruned, rules).state.view() == resume(full, rules).state.view()

    harness.start_daemon()  # a real process again, on the pruned journal
    log = harness.wait_daemon_log("resumed shoe")
    match = RESUMED.search(log)
    assert match is not None and match.groups() == unpruned, log
    assert harness.wait_sim(timeout=180) == 0  # and it deals the rest of the shoes
    assert harness.stop_daemon() == 0
    verify = run_main(["shoe-controller", "journal", "verify", "--journal", str(harness.journal)])
    assert verify.returncode == 0, verify
    with Journal.open(harness.journal, read_only=True) as journal:
        assert len(journal.shoe_starts()) >= 3  # shoes 4 to 6 (1-3 pruned)
    assert "Traceback" not in harness.daemon_logs[-1].read_text()


def journal_link_up(path: object) -> dict[str, object]:
    with Journal.open(str(path), read_only=True) as j:
        found = j.last_input(InputKind.LINK, before=j.shoe_starts()[-1])
    assert found is not None and found["up"] is True
    return found
