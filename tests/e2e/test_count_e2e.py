"""Betting with the count against the real table: ``shoe-sim`` deals two one-deck shoes to its simulated players
(flat Banker, flat Player, random main wagers, a side bettor, a seat that leaves) through the bet-spot reader,
``shoe-controller run --spots`` journals their wagers, and the count watch reads that journal from a real
SQLite archive: every wager record is read, the floor prices every coup exactly as the table did (each wager
record's own ``ev`` equals the floor's edge for it), every seat's coups are counted, and none of these
players, who ignore the cards, is alerted. Then a counter (``shoe-sim --counter 3:dragon_7``: 10x its base
on Dragon 7 when the cards it has seen make it positive) at a real eight-deck table is one alert."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from controller.game.records import RecordKind
from controller.journal import Journal
from floor.archive import AlertKind, Archive
from floor.counting_watch import CountWatch, WatchState
from floor.surveillance import Surveillance
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table, start_players
from tests.floor.feeding import archive_in_steps

pytestmark = pytest.mark.e2e
#: A seed whose first eight-deck shoe gives Dragon 7 enough positive-edge coups (as the seen cards price it).
COUNTED_SEED = 8


def test_the_table_s_own_journal_is_read_whole_and_its_players_are_not_accused(
    harness: Harness, tmp_path: Path
) -> None:
    options = money_table(harness, decks=1, commission="shoe_end")
    start_players(harness, decks=1, commission="shoe_end", players=5, pace="0.02", seed=11)
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=240) == 0
    time.sleep(0.5)  # the last commit
    assert harness.stop_daemon() == 0
    with Journal.open(harness.journal, read_only=True) as j:
        records = [r.for_floor("T1") for r in j.records()]
    wagers = [r for r in records if r.kind == RecordKind.WAGER]
    assert len(wagers) > 50, "the players hardly wagered"

    # the floor's edges are the table's: every wager record's ev is the floor's for its coup and wager
    step = CountWatch(threshold=float("inf"))
    state = WatchState()
    priced: dict[tuple[int, int], dict[str, float]] = {}
    for r in records:
        if r.kind == RecordKind.COUP and r.body.get("coup") is not None and not r.body.get("set_aside"):
            edges = state.tracker.edges(int(r.body["coup"]))
            if edges is not None:
                priced[(edges.shoe, edges.coup)] = edges.ev
        step.scan(state, [r])
    assert state.refused == 0 and state.pending == {}
    for w in wagers:
        b = w.body
        assert b["ev"] == pytest.approx(priced[(b["shoe"], b["coup"])][b["bet"]], abs=1e-12), b

    # through a real archive, in the batches a link sends: no alert, every seat's coups counted
    with Archive(f"sqlite:///{tmp_path}/archive.db") as archive:
        items = archive_in_steps(archive, Surveillance(archive, watches=[CountWatch()]), records, 25)
        assert [i for i in items if i.kind == AlertKind.BETTING_WITH_THE_COUNT] == []
        with archive.repository.transaction() as tx:
            stored = CountWatch().load(tx, "T1")
    assert stored.refused == 0
    coups_of = Counter(
        (w.body["seat"]) for w in {(w.body["shoe"], w.body["coup"], w.body["seat"]): w for w in wagers}.values()
    )
    for seat, session in stored.count.sessions.items():
        assert 0 < session.streams["banker"].played <= coups_of[seat]
    assert any(session.streams["dragon_7"].positive for session in stored.count.sessions.values()), (
        "no positive-edge coup was seen: the test did not exercise the score"
    )


def test_a_counter_at_the_real_table_is_one_alert(harness: Harness, tmp_path: Path) -> None:
    options = money_table(harness, decks=8, commission="shoe_end")
    harness.start_sim(
        "--decks", "8", "--spots-link", str(harness.tmp / "spots"), "--players", "4", "--counter", "3:dragon_7",
        "--commission", "shoe_end", "--shoes", "1", pace="0.005", seed=COUNTED_SEED,
    )  # fmt: skip
    harness.start_daemon(*options)
    harness.wait_daemon_log("ready in")
    assert harness.wait_sim(timeout=400) == 0
    time.sleep(0.5)
    assert harness.stop_daemon() == 0
    with Journal.open(harness.journal, read_only=True) as j:
        records = [r.for_floor("T1") for r in j.records()]
    with Archive(f"sqlite:///{tmp_path}/archive.db") as archive:
        items = archive_in_steps(archive, Surveillance(archive, watches=[CountWatch()]), records, 25)
    counted = [i for i in items if i.kind == AlertKind.BETTING_WITH_THE_COUNT]
    assert [(i.extra["seat"], i.extra["bet"]) for i in counted] == [(3, "dragon_7")]
    assert counted[0].extra["hits"] >= 4 and counted[0].extra["stake_positive"]["max"] >= 10 * 500
