"""shoe-floor serve against a real Mosquitto, archiving into a real PostgreSQL and SQLite (each test runs on
both): records once each whatever the wire does, the ack from the archive, gaps and tampering are alerts."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import floor.collector as collector_module
from controller.game.records import TableRecord
from floor.accounting import Accounting
from floor.archive import Alert, AlertKind, Archive
from floor.collector import Collector, RefusedBudget, Settings
from floor.shifts import ShiftPlan
from floor.surveillance import Surveillance
from floor_protocol.ack import Ack
from floor_protocol.signing import generate_key
from tests.floor.conftest import AlertWatch, InProcess, Keys, Table, as_table
from tests.floor.feeding import archive_in_steps
from tests.floor.test_accounting import MoneyChain
from tests.servers import Mosquitto
from tests.waiting import until


def dicts(records: list[TableRecord]) -> list[dict[str, object]]:
    return [r.to_dict() for r in records]


def alerts(archive: Archive, table: str | None = None) -> list[Alert]:
    """The feed's alerts but the fixture's own enrolments (``key_enrolled``: test_trust.py is about those) and
    the journal's clock (``clock_unsynchronised``: the test machine's clock; test_surveillance.py has its own)."""
    skip = (AlertKind.KEY_ENROLLED, AlertKind.CLOCK_UNSYNCHRONISED)
    return [x for x in archive.alerts(table) if x.kind not in skip]


def stored(url: str, table: str) -> list[dict[str, object]]:
    """The archived records, without the table's signatures (test_trust.py checks those)."""
    with Archive(url, create=False) as a:
        return [{k: v for k, v in r.to_dict().items() if k != "sig"} for r in a.records(table)]


@pytest.mark.dialects
@pytest.mark.e2e
def test_duplicates_and_resends_are_archived_once(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    c = collector()
    records = journal_records
    rng = random.Random(9)
    # every record, then a resend from record 100 (the table after a reconnect), then random duplicates
    wire = records + records[99:] + rng.sample(records, 50)
    table.publish(wire)
    table.wait_ack("T1", len(records))
    until(lambda: c.collector.stats.received >= len(wire), 30, "every message to be taken")
    assert stored(archive_url, "T1") == dicts(records)
    assert c.collector.stats.archived == len(records)
    assert c.collector.stats.duplicates == len(wire) - len(records)
    with Archive(archive_url) as a:
        assert a.head("T1").seq == len(records)
        assert a.head("T1").hash == records[-1].hash
        # no chain alert; the journal's own advantage records are an alert each, once whatever the resends; the
        # players' cash buy-ins (the demo's) may raise the cash log's alerts, each once too
        own = (AlertKind.ADVANTAGE, AlertKind.ADVANTAGE_CLEARED)
        expected = [(r.seq, r.kind) for r in records if r.kind in own]
        got = [(x.seq, x.kind) for x in alerts(a)]
        assert sorted(k for k in got if k[1] in own) == sorted(expected)
        assert {kind for _seq, kind in got} - set(own) <= {AlertKind.CASH_APPROACHING, AlertKind.CTR_DUE}, got
        assert len(got) == len(set(got)), "an alert archived twice"


@pytest.mark.dialects
@pytest.mark.e2e
def test_a_gap_holds_the_ack_and_is_an_alert_until_filled(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    c = collector(gap_grace=0.3)
    records = journal_records[:200]
    table.publish(records[:100] + records[120:])  # 101..120 lost on the way
    table.wait_ack("T1", 100)
    until(lambda: c.collector.stats.alerts >= 1, 15, "the gap's alert")
    with Archive(archive_url) as a:
        (alert,) = alerts(a, "T1")
        assert (alert.kind, alert.seq) == (AlertKind.GAP, 101)
        assert "101..120" in alert.detail
        assert a.head("T1").seq == 100
    assert table.ack("T1") == 100  # nothing acked beyond the gap
    table.publish(records[100:120])  # the table sends again from its ack
    table.wait_ack("T1", 200)
    assert stored(archive_url, "T1") == dicts(records)


@pytest.mark.e2e
def test_records_arriving_out_of_order_are_no_alert(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    c = collector(gap_grace=5.0)
    records = journal_records[:300]
    shuffled = records[:]
    random.Random(3).shuffle(shuffled)
    table.publish(shuffled)
    table.wait_ack("T1", 300)
    assert stored(archive_url, "T1") == dicts(records)
    # no gap alert: the only alerts are the journal's own advantage records, one each
    expected = [(r.seq, r.kind) for r in records if r.kind in (AlertKind.ADVANTAGE, AlertKind.ADVANTAGE_CLEARED)]
    with Archive(archive_url) as a:
        assert sorted((x.seq, x.kind) for x in alerts(a)) == sorted(expected)
    assert c.collector.stats.alerts == len(expected)


@pytest.mark.e2e
def test_a_tampered_record_is_refused_and_not_archived(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    c = collector(gap_grace=0.3)
    first = next(i for i, r in enumerate(journal_records) if r.kind == "coup")  # after the players' bets
    records = journal_records[: first + 10]
    coup = records[first]
    other = "player" if coup.body["winner"] != "player" else "banker"
    assert table.keys is not None
    genuine = table.keys.sign([coup])[0]  # the table's own signature: it covers the hash, not the body
    forged = {**genuine.to_dict(), "body": {**coup.body, "winner": other}}
    table.publish(records[: coup.seq - 1])
    table.send("T1", TableRecord.from_dict(forged).to_json()).wait_for_publish(10)
    table.send("T1", b"not json at all").wait_for_publish(10)
    table.publish([records[coup.seq]])
    until(lambda: c.collector.stats.refused >= 2, 15, "the forged record and the garbage to be refused")
    table.wait_ack("T1", coup.seq - 1)
    with Archive(archive_url) as a:
        kinds = [(x.kind, x.seq) for x in alerts(a, "T1")]
        assert (AlertKind.REFUSED, coup.seq) in kinds
        assert (AlertKind.REFUSED, None) in kinds
        assert coup.seq not in [r.seq for r in a.records("T1")]
        assert a.head("T1").seq == coup.seq - 1
    table.publish(records[coup.seq - 1 :])  # the genuine record: the chain goes on
    table.wait_ack("T1", len(records))
    assert stored(archive_url, "T1") == dicts(records)


@pytest.mark.e2e
def test_a_record_re_hashed_after_tampering_breaks_the_link_and_stops_the_ack(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    from controller.game.records import canonical_json, record_hash

    c = collector()
    records = journal_records[:40]
    victim = records[19]
    body = {**victim.body, "forged": True}
    own = record_hash(victim.prev, victim.seq, victim.at, victim.kind, victim.session, victim.number, victim.cause,
                      canonical_json(body))  # fmt: skip
    forged = TableRecord.from_dict({**victim.to_dict(), "body": body, "hash": own})
    table.publish([*records[:19], forged, *records[20:]])
    until(lambda: c.collector.stats.alerts >= 1, 15, "the broken link's alert")
    table.wait_ack("T1", 20)
    with Archive(archive_url) as a:
        assert [(x.kind, x.seq) for x in alerts(a, "T1")] == [(AlertKind.BROKEN_LINK, 21)]
        assert a.head("T1").seq == 20
        (report,) = a.verify()
        assert report.broken == [21] and not report.ok
    assert table.ack("T1") == 20


@pytest.mark.e2e
def test_a_table_resending_what_is_archived_hears_the_ack_again(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], keys: Keys
) -> None:
    """A broker back from an old save holds an old retained ack: the table takes it and resends from it. The
    collector has archived those records already (nothing new to ack), and must say the head again."""
    c = collector()
    table.publish(journal_records[:100])
    table.wait_ack("T1", 100)
    old = Ack.signed(keys.floor.key, c.archive.archive_id, "T1", 7, journal_records[6].hash)  # the old save's
    table.client.publish("baccarat/s1/T1/ack", old.to_json(), qos=1, retain=True).wait_for_publish(5)
    until(lambda: table.acks_heard.count(7) == 1, 10, "the old ack")
    table.acks["T1"] = 7  # the table takes the floor's word
    table.publish(journal_records[7:100])  # and sends again from it
    table.wait_ack("T1", 100, timeout=10)


@pytest.mark.e2e
def test_two_tables_get_their_own_acks(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    collector()
    t2 = as_table(journal_records, "T2")
    table.publish([x for pair in zip(journal_records, t2, strict=True) for x in pair])
    table.wait_ack("T1", len(journal_records))
    table.wait_ack("T2", len(t2))
    assert stored(archive_url, "T2") == dicts(t2)
    with Archive(archive_url) as a:
        assert all(r.ok for r in a.verify())


@pytest.mark.dialects
@pytest.mark.e2e
def test_two_collectors_sharing_the_subscription_archive_each_record_once(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    a, b = collector(gap_grace=10.0), collector(gap_grace=10.0)
    t2 = as_table(journal_records, "T2")
    wire = [x for pair in zip(journal_records, t2, strict=True) for x in pair]
    table.publish(wire + wire[::7])  # and some duplicates
    table.wait_ack("T1", len(journal_records))
    table.wait_ack("T2", len(t2))
    sent = len(wire) + len(wire[::7])
    until(lambda: a.collector.stats.received + b.collector.stats.received >= sent, 30, "all taken")
    assert a.collector.stats.received > 0 and b.collector.stats.received > 0  # the load was shared
    assert a.collector.stats.archived + b.collector.stats.archived == len(wire)
    assert stored(archive_url, "T1") == dicts(journal_records)
    assert stored(archive_url, "T2") == dicts(t2)


@pytest.mark.dialects
@pytest.mark.e2e
def test_an_alert_its_collector_never_got_onto_the_broker_is_published_by_the_sweep(
    broker: Mosquitto, collector: Callable[..., InProcess], archive_url: str
) -> None:
    """A collector stores an alert, then dies before the broker has it: the alert is in the feed and in the
    outbox. Another collector's sweep publishes it (at least once on the topic, with its id) and empties the
    outbox; one that reached the broker leaves the outbox at its PUBACK."""
    watch = AlertWatch(broker)
    try:
        with Archive(archive_url) as a:
            (orphan,) = a.alert([Alert("T9", 17, AlertKind.GAP, "records 17..20 missing", site="s1", key="gap:T9:17")])
            assert [i.id for i in a.unpublished(older_than=0)] == [orphan.id]
        c = collector(alert_sweep=0.5)
        until(lambda: [x["id"] for x in watch.alerts()] == [orphan.id], 15, "the orphan on the topic")
        assert watch.alerts()[0] == orphan.to_dict()
        until(lambda: c.archive.unpublished(older_than=0) == [], 10, "the outbox to empty")
        # an alert the collector raises itself: published once, out of the outbox at its PUBACK
        c.collector._raise(c.archive, [Alert("T9", 40, AlertKind.BROKEN_LINK, "prev is not 39's hash", site="s1")])
        until(lambda: len(watch.alerts()) == 2, 10, "the second alert")
        until(lambda: c.archive.unpublished(older_than=0) == [], 10, "the outbox to empty again")
        sweeps = {c.collector._last_sweep}  # stamped as each sweep starts: the fourth new one ends the third

        def three_sweeps() -> bool:
            sweeps.add(c.collector._last_sweep)
            return len(sweeps) > 4

        until(three_sweeps, 15, "three sweeps")
        # nothing is said twice once the broker has it
        assert [x["kind"] for x in watch.alerts()] == ["gap", "broken_link"]
    finally:
        watch.close()


def test_the_chain_stops_a_collector_remembers_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector keeps the chain stops it has said so as not to ask the archive again; past ALERTED_MAX it
    forgets the oldest, and the archive's unique key still says each once. Other alerts are not kept at all
    (a flood of refused messages must not grow the collector)."""
    monkeypatch.setattr(collector_module, "ALERTED_MAX", 3)
    c = Collector(
        Settings(broker="mqtt://127.0.0.1:1", archive=f"sqlite:///{tmp_path}/a.db", key=generate_key(), site="s1")
    )
    with Archive(f"sqlite:///{tmp_path}/a.db") as archive:
        gaps = [Alert("T1", seq, AlertKind.GAP, f"records {seq}.. missing") for seq in range(1, 6)]
        c._raise(archive, gaps)
        assert list(c._alerted) == [("T1", AlertKind.GAP, seq) for seq in (3, 4, 5)]
        c._raise(archive, gaps[:1])  # forgotten here, but the feed holds it: not stored or said again
        c._raise(archive, [Alert("T1", None, AlertKind.REFUSED, f"junk {i}") for i in range(10)])
        assert len(c._alerted) == 3
        kinds = [a.kind for a in archive.alerts()]
        assert kinds.count(AlertKind.GAP) == 5 and kinds.count(AlertKind.REFUSED) == 5  # the refused budget


def test_the_refused_budget_lets_a_few_through_and_sums_up_the_rest() -> None:
    budget = RefusedBudget(per_table=5, per_floor=8, window=60.0)
    junk = [Alert("T1", None, AlertKind.REFUSED, f"junk {i}", "s1") for i in range(200)]
    assert [budget.admit(a, 100.0) for a in junk[:7]] == [True] * 5 + [False] * 2
    for a in junk[7:]:
        assert not budget.admit(a, 100.0 + 59.0)
    assert budget.admit(Alert("T2", 7, AlertKind.CONFLICT, "a different record", "s1"), 110.0)
    assert budget.admit(Alert("T3", None, AlertKind.REFUSED, "garbage", "s1"), 110.0)
    assert budget.admit(Alert("T4", None, AlertKind.REFUSED, "garbage", "s1"), 110.0)
    assert not budget.admit(Alert("T5", None, AlertKind.REFUSED, "garbage", "s1"), 110.0)  # the floor's 8 are out
    assert not budget.admit(Alert("T2", 8, AlertKind.CONFLICT, "another record", "s1"), 110.0)
    assert budget.roll(159.9) == []  # the window is not over
    summary = budget.roll(160.0)
    assert [(a.table, a.kind, a.extra["held_back"]) for a in summary] == [
        ("T1", AlertKind.REFUSED, 195),
        ("T2", AlertKind.CONFLICT, 1),
        ("T5", AlertKind.REFUSED, 1),
    ]
    assert "195 more message(s) for table T1 refused in 60 s" in summary[0].detail and "junk 199" in summary[0].detail
    assert summary[0].site == "s1" and summary[1].extra["last_seq"] == 8
    assert budget.roll(500.0) == []  # nothing held: nothing to say
    assert budget.admit(junk[0], 500.0)  # a new window: T1 may say five again


def test_the_refused_budget_tracks_a_bounded_number_of_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector_module, "REFUSED_TABLES_MAX", 3)
    budget = RefusedBudget(per_table=1, per_floor=1000, window=1.0)
    admitted = [budget.admit(Alert(f"X{i}", None, AlertKind.REFUSED, "junk"), 0.0) for i in range(100)]
    assert admitted == [True] * 3 + [False] * 97
    for i in range(3):
        assert not budget.admit(Alert(f"X{i}", None, AlertKind.REFUSED, "junk"), 0.5)
    summary = budget.roll(1.0)
    # the first three tables held back have their own count; every other one shares "?"
    assert {a.table: a.extra["held_back"] for a in summary} == {"X3": 1, "X4": 1, "X5": 1, "?": 97}


@pytest.mark.e2e
def test_a_junk_flood_on_a_table_s_topic_is_a_few_alerts_and_the_floor_goes_on(
    journal_records: list[TableRecord], table: Table, collector: Callable[..., InProcess], archive_url: str
) -> None:
    # 3,000 junk messages at full speed on T9's topic while T1 deals: every one is refused and counted, the
    # feed says it in a handful of alerts (five a window, then one summing up the rest), and T1 is archived.
    c = collector(refused_window=1.0)
    flood = [table.send("T9", f"junk {i}".encode()) for i in range(3000)]
    table.publish(journal_records[:300])
    for info in flood:
        info.wait_for_publish(10)
    table.wait_ack("T1", 300)
    until(lambda: c.collector.stats.refused >= 3000, 30, "every junk message to be refused")
    assert c.collector.stats.refused == 3000
    with Archive(archive_url) as a:
        until(
            lambda: sum(int(x.extra.get("held_back", 1)) for x in alerts(a, "T9")) == 3000,
            15,
            "the window's summary to account for every junk message",
        )
        refused = alerts(a, "T9")
        assert all(x.kind == AlertKind.REFUSED for x in refused)
        assert len(refused) <= 5 * 8 + 8  # at most five and one summary a window (the flood lasts a few)
        assert any("held_back" in x.extra for x in refused)
    assert stored(archive_url, "T1") == dicts(journal_records[:300])


@pytest.mark.e2e
def test_a_quiet_table_s_ended_shift_is_judged_by_the_collector_s_sweep(
    broker: Mosquitto, collector: Callable[..., InProcess], archive_url: str
) -> None:
    """A table that dealt a shift far outside its interval yesterday and has said nothing since: a collector
    started today raises (and publishes) that shift's hold alert at its first sweep, without a record from the
    table; a second collector's sweeps add nothing (the alert's key)."""
    plan = ShiftPlan.parse("06:00,14:00,22:00", "UTC")
    t = MoneyChain("T5", hour=13)
    t.day = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    t.start()
    for _ in range(30):
        t.play({1: [("banker", 1000, 950)], 2: [("player", 1000, 1000)]})
    with Archive(archive_url) as a:
        archive_in_steps(a, Surveillance(a, watches=[Accounting(plan)]), t.records, step=97)
        assert not [x for x in a.alerts("T5") if x.kind == AlertKind.HOLD_OUTSIDE_INTERVAL]
    watch = AlertWatch(broker)
    try:
        collector(shift_plan=plan)
        until(lambda: [x["kind"] for x in watch.alerts()] == ["hold_outside_interval"], 15, "the quiet shift's alert")
        (said,) = watch.alerts()
        assert said["table"] == "T5" and said["seq"] == len(t.records) and said["extra"]["outside"] is True
        second = collector(shift_plan=plan, shift_sweep=0.2)
        sweeps = {second.collector._last_shift_sweep}

        def swept_twice() -> bool:
            sweeps.add(second.collector._last_shift_sweep)
            return len(sweeps) > 3

        until(swept_twice, 15, "the second collector's sweeps")
        assert len(watch.alerts()) == 1
        with Archive(archive_url) as a:
            assert len([x for x in a.alerts("T5") if x.kind == AlertKind.HOLD_OUTSIDE_INTERVAL]) == 1
    finally:
        watch.close()
