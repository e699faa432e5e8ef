"""The count watch (floor/counting_watch.py) in surveillance, on both archives: a real dealt shoe's records
(shoe start with its ruleset, burns, cards, wagers, coups) with a hash chain, archived in small steps; a seat
betting Dragon 7 with the count is one alert naming table, seat and wager with its evidence, the flat and
random seats none; two collectors racing store it once; a bad wager record is counted, not a crash; and a
collector through a real broker runs the watch, publishes the alert and obeys ``count_threshold``."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from controller.game.cards import DECK, Card
from controller.game.edges import EdgeTracker
from controller.game.records import GENESIS_HASH, TableRecord, canonical_json, derived_records, record_hash
from controller.game.rules import COMMISSION
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
)
from floor.archive import AlertKind, Archive
from floor.counting_watch import CountWatch, WatchState
from floor.surveillance import Surveillance
from tests.floor.conftest import AlertWatch, InProcess, Table
from tests.floor.feeding import archive_in_steps, race_two_collectors
from tests.floor.test_surveillance import TODAY
from tests.servers import Mosquitto
from tests.waiting import until

INPUT_KINDS = {NewShoePressed: "new_shoe", DeclarePressed: "declare", CutCardOut: "cut_card"}
Stakes = Callable[[int, Mapping[str, float]], dict[int, dict[str, int]]]


class TableChain:
    """A table's journal as the table writes it for one dealt shoe, with the wagers ``stakes`` chooses."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.records: list[TableRecord] = []

    def add(self, kind: str, body: Mapping[str, Any], cause: int | None = None) -> TableRecord:
        seq = len(self.records) + 1
        prev = self.records[-1].hash if self.records else GENESIS_HASH
        at = f"{TODAY}T10:{seq // 60 % 60:02d}:{seq % 60:02d}.000Z"
        h = record_hash(prev, seq, at, kind, None, None, cause, canonical_json(dict(body)))
        r = TableRecord(self.table, seq, kind, at, None, None, cause, dict(body), prev, h)
        self.records.append(r)
        return r

    def shoe(self, cards: list[str], stakes: Stakes) -> int:
        """Deal ``cards`` to the cut card; the number of Dragon 7 positive-edge coups."""
        table = TableState(TableRules(decks=8))
        tracker = EdgeTracker(COMMISSION, 8)
        events: list[TableInput] = [NewShoePressed()]
        dealt, positive = 0, 0
        while True:
            for event in events:
                first = table.due is Due.DEAL and table.coup.cards_dealt == 0 and not table.dummy_hand
                if isinstance(event, CardDrawn):
                    cause = self.add("input", {"kind": "card", "card": event.card.token, "source": "shoe"})
                else:
                    cause = self.add("input", {"kind": INPUT_KINDS[type(event)], "source": "panel"})
                edges = tracker.edges(table.coup_number) if first and isinstance(event, CardDrawn) else None
                notices = table.apply(event)
                if edges is not None:
                    positive += edges.ev["dragon_7"] > 0
                    for seat, bets in sorted(stakes(edges.coup, edges.ev).items()):
                        for bet, stake in bets.items():
                            ev = edges.ev[bet]
                            body = {"shoe": edges.shoe, "coup": edges.coup, "seat": seat, "bet": bet, "stake": stake}
                            self.add("wager", {**body, "ev": ev, "theo_cents": round(-ev * stake, 2)}, cause.seq)
                for kind, body in derived_records(notices, COMMISSION):
                    tracker.feed(kind, body)
                    self.add(kind, body, cause.seq)
            if table.due is Due.NEW_SHOE or dealt >= len(cards):
                return positive
            if table.due is Due.DECLARE:
                events = [DeclarePressed()]
            else:
                events = [CardDrawn(Card.parse(cards[dealt]))]
                dealt += 1
                if dealt == len(cards) - 14:
                    events.append(CutCardOut())


def shuffled(seed: int) -> list[str]:
    cards = [c.token for c in DECK] * 8
    random.Random(seed).shuffle(cards)
    return cards


def seats(rng: random.Random) -> Stakes:
    """Seat 1 flat, seat 2 random, seat 5 counting Dragon 7 (10x when positive)."""

    def stakes(coup: int, ev: Mapping[str, float]) -> dict[int, dict[str, int]]:
        counter = 5000 if ev["dragon_7"] > 0 else 500
        random_bets = {"player": 2500 * rng.choice((1, 2, 4)), "dragon_7": 500 * rng.choice((1, 2, 5, 10))}
        return {
            1: {"banker": 2500, "dragon_7": 500, "panda_8": 500},
            2: random_bets,
            5: {"banker": 2500, "dragon_7": counter},
        }

    return stakes


def counted_shoe(table: str = "T1", seed: int = 1) -> tuple[TableChain, int]:
    """A shoe in which Dragon 7 turns positive at least 6 times (the first such seed from ``seed``)."""
    while True:
        chain = TableChain(table)
        if chain.shoe(shuffled(seed), seats(random.Random(seed))) >= 6:
            return chain, seed
        seed += 1


@pytest.mark.dialects
def test_a_seat_counting_dragon_7_is_one_alert_with_its_evidence(archive_url: str) -> None:
    chain, _ = counted_shoe()
    with Archive(archive_url) as archive:
        s = Surveillance(archive, watches=[CountWatch()])
        items = archive_in_steps(archive, s, chain.records, step=7)
        counted = [i for i in items if i.kind == AlertKind.BETTING_WITH_THE_COUNT]
        (item,) = counted
        assert item.table == "T1" and item.site == "s1"
        x = item.extra
        assert (x["seat"], x["bet"]) == (5, "dragon_7")
        assert x["positive_coups"] >= 4 and x["hits"] == x["positive_coups"]
        assert x["stake_positive"]["max"] == 5000 and x["stake_non_positive"]["max"] == 500
        assert x["score"] >= x["threshold"] and x["p_bound"] <= 1e-5
        assert all(e["ev"] > 0 and e["stake"] == 5000 for e in x["evidence"])
        assert item.seq is not None
        record = chain.records[item.seq - 1]
        assert item.record == record.to_dict() and record.kind == "coup" and record.body["coup"] == x["coup"]
        assert "seat 5 bets Dragon 7 with the count" in item.detail and "$50" in item.detail
        assert archive.feed()[0].kind == AlertKind.BETTING_WITH_THE_COUNT
        with archive.repository.transaction() as tx:
            state = CountWatch().load(tx, "T1")
        assert state.refused == 0 and set(state.count.sessions) == {1, 2, 5}
        assert state.count.sessions[5].streams["dragon_7"].alerted


def test_the_same_shoe_without_the_counter_raises_nothing(archive_url: str) -> None:
    _, seed = counted_shoe()
    quiet = TableChain("T2")
    flat_and_random = seats(random.Random(seed))
    quiet.shoe(shuffled(seed), lambda coup, ev: {k: v for k, v in flat_and_random(coup, ev).items() if k != 5})
    with Archive(archive_url) as archive:
        s = Surveillance(archive, watches=[CountWatch()])
        assert archive_in_steps(archive, s, quiet.records, step=50) == []


@pytest.mark.dialects
def test_two_collectors_racing_store_the_alert_once(archive_url: str) -> None:
    chain, _ = counted_shoe()
    with Archive(archive_url) as a, Archive(archive_url) as b:
        sa, sb = Surveillance(a, watches=[CountWatch()]), Surveillance(b, watches=[CountWatch()])
        found = race_two_collectors(chain.records, (sa, a), (sb, b), 40, timeout=120)
        counted = [i for i in found if i.kind == AlertKind.BETTING_WITH_THE_COUNT]
        assert len(counted) == 1 and counted[0].extra["seat"] == 5
        assert [i.kind for i in a.feed()].count(AlertKind.BETTING_WITH_THE_COUNT) == 1
        with a.repository.transaction() as tx:
            state = CountWatch().load(tx, "T1")
        played = state.count.sessions[1].streams["banker"].played
        coups = sum(1 for r in chain.records if r.kind == "coup")
        assert played == coups  # every coup read once floor-wide


def test_a_bad_wager_record_is_counted_and_the_rest_still_read(archive_url: str) -> None:
    chain = TableChain("T3")
    chain.add("wager", {"shoe": 1, "coup": 1, "seat": 2, "bet": "dragon_7", "stake": "lots"})
    chain.add("wager", {"shoe": 1, "coup": 1, "seat": 2, "bet": "roulette", "stake": 500})
    chain.add("shoe", {"event": "start", "shoe": 1, "decks": 8, "rules": {"pays": "nonsense"}})
    chain.add("coup", {"shoe": 1})
    with Archive(archive_url) as archive:
        s = Surveillance(archive, watches=[CountWatch()])
        assert archive_in_steps(archive, s, chain.records) == []
        with archive.repository.transaction() as tx:
            state = CountWatch().load(tx, "T3")
        assert state.refused == 3 and state.pending == {}


def test_the_watch_state_survives_json() -> None:
    chain, _ = counted_shoe()
    half = len(chain.records) // 2
    whole = CountWatch().scan(WatchState(), chain.records).state
    first = CountWatch().scan(WatchState(), chain.records[:half]).state
    again = WatchState.from_json(first.to_json())
    assert again.to_json() == first.to_json() and again.tracker.rules == first.tracker.rules is not None
    assert CountWatch().scan(again, chain.records[half:]).state.to_json() == whole.to_json()


@pytest.mark.dialects
def test_a_collector_reads_its_own_last_state_from_memory_and_another_s_from_the_archive(archive_url: str) -> None:
    chain, _ = counted_shoe()
    with Archive(archive_url) as a, Archive(archive_url) as b:
        wa, wb = CountWatch(), CountWatch()
        sa, sb = Surveillance(a, watches=[wa]), Surveillance(b, watches=[wb])
        third = len(chain.records) // 3
        a.store(chain.records[:third])
        a.advance("T1", "s1")
        sa.process("T1", "s1")
        assert "T1" in wa._cache
        cached = wa._cache["T1"][1]
        a.store(chain.records[third : 2 * third])
        a.advance("T1", "s1")
        sb.process("T1", "s1")  # b reads a's state from the archive and moves on
        a.store(chain.records[2 * third :])
        a.advance("T1", "s1")
        items = sa.process("T1", "s1")  # a's cached state is stale: it must read b's
        assert wa._cache["T1"][1] is not cached
        whole = CountWatch().scan(WatchState(), chain.records).state
        with a.repository.transaction() as tx:
            stored = CountWatch().load(tx, "T1")
        assert json.loads(stored.to_json()) == json.loads(whole.to_json())  # (the archive sorts a body's keys)
        counted = [i for i in items if i.kind == AlertKind.BETTING_WITH_THE_COUNT]
        assert len([i for i in a.feed() if i.kind == AlertKind.BETTING_WITH_THE_COUNT]) == 1
        assert counted or any(i.kind == AlertKind.BETTING_WITH_THE_COUNT for i in a.feed())


@pytest.mark.e2e
def test_the_collector_runs_the_watch_and_publishes_the_alert(
    broker: Mosquitto, collector: Callable[..., InProcess], table: Table, archive_url: str
) -> None:
    """Through a real broker into a collector: the alert is in the feed and on ``baccarat/s1/floor/alert``."""
    chain, _ = counted_shoe()
    watch = AlertWatch(broker)
    try:
        c = collector()
        table.publish(chain.records)
        table.wait_ack("T1", len(chain.records), timeout=120)

        def counted() -> list[dict[str, Any]]:
            return [a for a in watch.alerts() if a["kind"] == AlertKind.BETTING_WITH_THE_COUNT]

        until(lambda: len(counted()) == 1, 30, "the betting_with_the_count alert on the broker")
        (published,) = counted()
        assert published["table"] == "T1" and published["extra"]["seat"] == 5
        assert published["extra"]["bet"] == "dragon_7"
        c.stop()
        with Archive(archive_url) as archive:
            assert [i.kind for i in archive.feed()].count(AlertKind.BETTING_WITH_THE_COUNT) == 1
    finally:
        watch.close()


@pytest.mark.e2e
def test_the_collector_s_count_threshold_is_obeyed(
    collector: Callable[..., InProcess], table: Table, archive_url: str
) -> None:
    chain, _ = counted_shoe()
    final = CountWatch().scan(WatchState(), chain.records).state.count.sessions[5].streams["dragon_7"].score()
    c = collector(count_threshold=final * 2)
    table.publish(chain.records)
    table.wait_ack("T1", len(chain.records), timeout=120)
    coups = sum(1 for r in chain.records if r.kind == "coup")

    def state() -> WatchState:
        with Archive(archive_url) as archive:
            with archive.repository.transaction() as tx:
                found = CountWatch().load(tx, "T1")
            return found

    until(
        lambda: 1 in state().count.sessions and state().count.sessions[1].streams["banker"].played == coups,
        30,
        "the watch reading every coup",
    )
    c.stop()
    assert state().count.sessions[5].streams["dragon_7"].score() == pytest.approx(final)  # scored, under the line
    with Archive(archive_url) as archive:
        assert all(i.kind != AlertKind.BETTING_WITH_THE_COUNT for i in archive.feed())


@pytest.mark.dialects
def test_an_unreadable_stored_state_starts_again_and_does_not_stop_surveillance(archive_url: str) -> None:
    chain, _ = counted_shoe()
    with Archive(archive_url) as archive:
        s = Surveillance(archive, watches=[CountWatch()])
        half = len(chain.records) // 2
        archive_in_steps(archive, s, chain.records[:half], step=500)
        cur = archive.connection.cursor()
        cur.execute(archive.sql("UPDATE count_heads SET state = ?, token = ?"), ('{"shoe": [', "x"))
        archive.connection.commit()
        archive_in_steps(archive, Surveillance(archive, watches=[CountWatch()]), chain.records[half:])
        with archive.repository.transaction() as tx:
            state = CountWatch().load(tx, "T1")
        assert state.refused == 1 and state.pending  # it read on ...
        assert state.tracker.shoe is None and not state.count.sessions  # ... and prices nothing until a new shoe
