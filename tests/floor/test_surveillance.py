"""Surveillance in-process, against both archives: the repeated-shoe index, dealer errors, advantage records,
each alert once floor-wide with two collectors' connections racing, the feed newest first."""

from __future__ import annotations

import json
import random
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from controller.game.cards import DECK
from controller.game.notation import WAGER_WORDS
from controller.game.records import GENESIS_HASH, TableRecord, canonical_json, record_hash
from controller.game.table import Alarm
from floor.archive import AlertKind, Archive, Transaction
from floor.cli import main as shoe_floor
from floor.surveillance import Surveillance, Thresholds, poisson_tail, stats_of, window_hash
from tests.floor.feeding import archive_in_steps, race_two_collectors

TODAY = datetime.now(UTC).date().isoformat()  # the records are recent: pruning keeps them


def coup_body(shoe: int, coup: int, *, void: bool = False, cards: list[str] | None = None) -> dict[str, Any]:
    """A coup's body as a real table journals it (controller.game.bodies.CoupBody): declared, Banker 9 over
    Player 5 (``cards`` the cards dealt), or voided with ``cards``."""
    dealt = ["5H", "6D", "7C", "8S"] if cards is None else cards
    body: dict[str, Any] = {"shoe": shoe, "coup": coup, "declared": not void, "void": void, "misdraw": False,
                            "dummy_hand": [], "cards": dealt}  # fmt: skip
    if void:
        return body | {"winner": None}
    return body | {"player": ["2S", "3H"], "banker": ["9D", "KC"], "player_total": 5, "banker_total": 9,
                   "winner": "banker", "natural": True, "natural_hand": "banker", "player_pair": False,
                   "banker_pair": False}  # fmt: skip


class Chain:
    """A table's journal written by the test: records with a real hash chain."""

    def __init__(self, table: str, hour: int = 10) -> None:
        self.table = table
        self.records: list[TableRecord] = []
        self.hour = hour
        self.day = TODAY  # the records' date (ISO), today unless a test moves it
        self.shoe = 0

    def add(self, kind: str, body: dict[str, Any], cause: int | None = None) -> TableRecord:
        seq = len(self.records) + 1
        prev = self.records[-1].hash if self.records else GENESIS_HASH
        at = f"{self.day}T{self.hour:02d}:{seq // 60 % 60:02d}:{seq % 60:02d}.000Z"
        h = record_hash(prev, seq, at, kind, None, None, cause, canonical_json(body))
        r = TableRecord(self.table, seq, kind, at, None, None, cause, body, prev, h)
        self.records.append(r)
        return r

    def card(self, token: str, burn: bool = False, exposed: bool = False) -> TableRecord:
        r = self.add("input", {"kind": "card", "card": token, "source": "shoe"})
        if burn:
            self.add("burn", {"card": token, "exposed": exposed}, cause=r.seq)
        return r

    def new_shoe(self, exposed: str = "3H", burned: tuple[str, ...] = ("4C", "5D", "6S")) -> None:
        self.shoe += 1
        cause = self.add("input", {"kind": "new_shoe", "source": "panel"})
        self.add("shoe", {"event": "start", "shoe": self.shoe, "decks": 8}, cause=cause.seq)
        self.card(exposed, burn=True, exposed=True)
        for c in burned:
            self.card(c, burn=True)

    def deal(self, tokens: list[str]) -> list[TableRecord]:
        return [self.card(t) for t in tokens]

    def alarm(self, name: str) -> None:
        cause = self.add("input", {"kind": "declare", "source": "shoe"})
        text = Alarm[name.upper()].value  # what the dealer's display says, as a real table journals it
        self.add("alarm", {"alarm": name, "text": text, "detail": "test"}, cause=cause.seq)

    def coup(self, void: bool = False) -> None:
        cause = self.add("input", {"kind": "void" if void else "declare", "source": "shoe"})
        self.add("coup", coup_body(self.shoe, 1, void=void), cause=cause.seq)


def shuffled(seed: int, decks: int = 8) -> list[str]:
    cards = [c.token for c in DECK] * decks
    random.Random(seed).shuffle(cards)
    return cards


@pytest.mark.dialects
def test_a_shoe_dealt_again_on_another_table_is_caught_at_its_20th_card(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        first = shuffled(1)
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(first[4:300])
        assert archive_in_steps(archive, s, t1.records) == []
        t2 = Chain("T2")
        t2.new_shoe(exposed="2S", burned=("9D", "KC"))
        dealt = t2.deal(first[104:150])  # cards 101-146 of T1's dealt shoe
        items = archive_in_steps(archive, s, t2.records)
        (item,) = items
        assert item.kind == AlertKind.REPEATED_SHOE and item.table == "T2" and item.site == "s1"
        assert item.seq == dealt[19].seq and item.record == dealt[19].to_dict()  # its 20th dealt card
        assert item.extra["other_table"] == "T1" and item.extra["other_shoe"] == 1
        assert item.extra["other_offset"] == 100 and item.extra["shoe"] == 1
        assert "T1's shoe 1" in item.detail and "cards 101-120" in item.detail
        assert archive.feed() == items


def test_the_same_shoe_on_the_same_table_later_is_caught_but_not_its_own_windows(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        t1 = Chain("T1")
        order = shuffled(2)
        t1.new_shoe()
        t1.deal(order[:60])
        assert archive_in_steps(archive, s, t1.records) == []  # its own windows never match itself
        t1.new_shoe()
        t1.deal(order[:30])
        (item,) = archive_in_steps(archive, s, t1.records)
        assert item.extra["shoe"] == 2 and item.extra["other_shoe"] == 1 and item.extra["other_offset"] == 0


def test_a_backlog_spanning_two_shoes_checks_each_shoe(archive_url: str) -> None:
    # A table's records after an outage reach surveillance as one run across shoes: the first shoe (a repeat
    # of another table's) is checked at its 20th card even though a later shoe's check follows in the same run,
    # and a shoe dealt again on the same table within that run is caught against the earlier one.
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        seen = shuffled(3)
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(seen[4:120])
        assert archive_in_steps(archive, s, t1.records) == []
        t2 = Chain("T2")
        t2.new_shoe()
        repeat = t2.deal(seen[4:60])
        fresh = shuffled(4)[4:]
        t2.new_shoe()
        t2.deal(fresh[:40])
        t2.new_shoe()
        again = t2.deal(fresh[:40])
        items = archive_in_steps(archive, s, t2.records, step=len(t2.records))  # one step: the whole backlog at once
        assert [(i.kind, i.seq, i.extra["shoe"], i.extra["other_table"], i.extra["other_shoe"]) for i in items] == [
            (AlertKind.REPEATED_SHOE, repeat[19].seq, 1, "T1", 1),
            (AlertKind.REPEATED_SHOE, again[19].seq, 3, "T2", 2),
        ]


def test_fresh_shuffles_are_never_a_repeated_shoe(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        tables = [Chain(f"T{i}") for i in range(4)]
        for n in range(60):
            t = tables[n % 4]
            t.new_shoe()
            t.deal(shuffled(1000 + n)[4:])
        items = []
        for t in tables:
            items += archive_in_steps(archive, s, t.records, step=500)
        assert items == []
        cur = archive.connection.cursor()
        cur.execute("SELECT count(*) FROM shoe_windows")
        # every window of every shoe is indexed, but the last card of each table: its next record decides
        # whether it was burned, and none has come yet
        assert cur.fetchone()[0] == 60 * (8 * 52 - 4 - 19) - 4
        archive.connection.commit()


@pytest.mark.dialects
def test_windows_past_repeat_days_are_pruned_and_no_longer_match(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive, Thresholds(repeat_days=30))
        order = shuffled(3)
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(order[:40])
        archive_in_steps(archive, s, t1.records)
        started = int(datetime.fromisoformat(f"{TODAY}T10:00:00+00:00").timestamp())
        assert s.prune(started + 3600) == 40 - 19 - 1  # the last card is still undecided
        t2 = Chain("T2")
        t2.new_shoe()
        t2.deal(order[:40])
        assert archive_in_steps(archive, s, t2.records) == []


def test_an_unreadable_card_breaks_the_run_no_window_spans_it(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        order = shuffled(4)
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(order[:30])
        archive_in_steps(archive, s, t1.records)
        t2 = Chain("T2")
        t2.new_shoe()
        t2.deal(order[:10])
        t2.add("input", {"kind": "unreadable", "source": "shoe"})
        t2.deal(order[11:30])  # 19 known cards after it: no window
        assert archive_in_steps(archive, s, t2.records) == []
        t2.deal(order[30:31])  # not in T1's shoe after card 30: still nothing
        assert archive_in_steps(archive, s, t2.records) == []


@pytest.mark.dialects
def test_an_advantage_record_is_one_alert_with_two_collectors_racing(archive_url: str) -> None:
    with Archive(archive_url) as a, Archive(archive_url) as b:
        sa, sb = Surveillance(a), Surveillance(b)
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(shuffled(5)[:10])
        body = {"shoe": 1, "coup": 3, "bet": "player_pair", "ev": 0.0123, "cards_left": 61}
        adv = t1.add("advantage", body)
        t1.deal(shuffled(5)[10:12])
        cleared = t1.add("advantage_cleared", {**body, "coup": 4, "ev": -0.01})
        a.store(t1.records)
        a.advance("T1", "s1")
        found: list[list[Any]] = [[], []]
        barrier = threading.Barrier(2)

        def run(i: int, s: Surveillance) -> None:
            barrier.wait()
            for _ in range(3):
                found[i] += s.process("T1", "s1")

        threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate((sa, sb))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        items = found[0] + found[1]
        assert sorted((i.kind, i.seq) for i in items) == [("advantage", adv.seq), ("advantage_cleared", cleared.seq)]
        feed = a.feed()
        assert [i.kind for i in feed] == ["advantage_cleared", "advantage"]  # newest first
        assert feed[1].record == adv.to_dict() and feed[1].extra == body
        assert feed[1].to_dict()["v"] == 1 and set(feed[1].to_dict()) == {
            "v",
            "id",
            "at",
            "site",
            "table",
            "seq",
            "kind",
            "detail",
            "record",
            "extra",
            "acked_by",
            "acked_at",
        }
        assert (feed[1].to_dict()["acked_by"], feed[1].to_dict()["acked_at"]) == (None, None)


@pytest.mark.dialects
def test_dealer_errors_far_above_the_floor_alert_and_ordinary_ones_do_not(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        floor = [Chain(f"T{i}") for i in range(5)]
        for t in floor:  # an ordinary floor: 60 coups an hour, an error now and then
            t.new_shoe()
            for n in range(60):
                t.coup(void=n == 17)
            t.alarm("misdraw")
            assert archive_in_steps(archive, s, t.records, step=50) == []
        bad = Chain("BAD")
        bad.new_shoe()
        for n in range(30):
            bad.coup(void=n % 6 == 0)
            if n % 3 == 0:
                bad.alarm("misdraw")
            if n % 10 == 0:
                bad.alarm("unreadable")
        bad.alarm("early_declare")
        items = archive_in_steps(archive, s, bad.records, step=20)
        (item,) = items  # once for the hour, though every later step is as bad
        assert item.kind == AlertKind.DEALER_ERRORS and item.table == "BAD"
        # raised as soon as the hour crossed the line, with the counts then
        x = item.extra
        assert x["errors"] == x["misdraws"] + x["early_declares"] + x["voids"] + x["unreadable"] >= 5
        assert x["p"] < 0.001 and f"{x['errors']} dealer errors in {x['coups']} coups" in item.detail
        (counts,) = stats_of(archive, "BAD")  # every error is counted
        assert (counts["coups"], counts["misdraws"], counts["voids"]) == (30, 10, 5)
        assert (counts["unreadable"], counts["early_declares"]) == (3, 1)


@pytest.mark.dialects
def test_the_errors_command_shows_each_table_s_hour_with_its_rate(
    archive_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Archive(archive_url).close()  # an archive no collector has run surveillance on
    assert shoe_floor(["errors", "--archive", archive_url]) == 0  # no counts yet: said, not an error
    assert "no dealer-error counts" in capsys.readouterr().err
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        bad = Chain("BAD")
        bad.new_shoe()
        for n in range(20):
            bad.coup(void=n % 5 == 0)
            if n % 4 == 0:
                bad.alarm("misdraw")
        archive_in_steps(archive, s, bad.records, step=20)
    capsys.readouterr()
    assert shoe_floor(["errors", "--archive", archive_url, "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["table"], row["coups"], row["misdraws"], row["voids"]) == ("BAD", 20, 5, 4)
    assert row["errors"] == 9 and row["per_100_coups"] == 45.0
    assert shoe_floor(["errors", "--archive", archive_url, "--table", "BAD"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["hour", "(UTC)", "table"]
    assert line.split()[1:] == ["BAD", "20", "5", "0", "4", "0", "45.0"]
    assert shoe_floor(["errors", "--archive", archive_url, "--table", "nobody"]) == 0
    assert "no coups counted" in capsys.readouterr().err


def test_one_bad_coup_on_a_quiet_floor_pages_nobody(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        t = Chain("T1")
        t.new_shoe()
        t.coup(void=True)
        for _ in range(3):
            t.alarm("misdraw")
        assert archive_in_steps(archive, s, t.records) == []  # 4 errors: below the minimum count


def test_poisson_tail() -> None:
    assert poisson_tail(0, 3.0) == 1.0
    assert poisson_tail(1, 2.0) == pytest.approx(1 - 2.718281828459045**-2.0)
    assert poisson_tail(5, 1.0) == pytest.approx(0.0036598468273437, rel=1e-9)
    assert poisson_tail(40, 2.0) < 1e-30
    assert window_hash(["9H"] * 20) != window_hash(["9H"] * 19 + ["9D"])


@pytest.mark.dialects
def test_shoe_floor_alerts_prints_the_feed(
    archive_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with Archive(archive_url) as archive:
        s = Surveillance(archive)
        t1 = Chain("T1")
        t1.new_shoe()
        adv = t1.add("advantage", {"shoe": 1, "coup": 1, "bet": "tie", "ev": 0.02, "cards_left": 40})
        t1.add("advantage_cleared", {"shoe": 1, "coup": 2, "bet": "tie", "ev": -0.02, "cards_left": 34})
        archive_in_steps(archive, s, t1.records)
    assert shoe_floor(["alerts", "--archive", archive_url, "--json", "--last", "1"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert '"kind":"advantage_cleared"' in line
    assert shoe_floor(["alerts", "--archive", archive_url, "--table", "T1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "advantage: table T1 seq" in lines[1] and f"seq {adv.seq}" in lines[1]
    assert shoe_floor(["alerts", "--archive", archive_url, "--last", "0"]) == 2
    assert "--last" in capsys.readouterr().err


def test_a_flag_cleared_because_its_shoe_ended_says_so(archive_url: str) -> None:
    """The table clears a flag still up when its shoe ends, with the shoe's last figures (the EV may still be
    positive): the alert says the shoe ended, not that the wager no longer favours the player."""
    with Archive(archive_url) as a:
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(shuffled(6)[:10])
        body = {"shoe": 1, "coup": 70, "bet": "player_pair", "ev": 0.636, "cards_left": 12}
        t1.add("advantage", {**body, "coup": 69})
        t1.add("advantage_cleared", {**body, "shoe_ended": True})
        a.store(t1.records)
        a.advance("T1", "s1")
        Surveillance(a).process("T1", "s1")
        cleared, raised = a.feed()[:2]
        assert raised.kind == "advantage" and "favours the player" in raised.detail
        assert cleared.kind == "advantage_cleared" and cleared.extra["shoe_ended"] is True
        assert "shoe 1 ended with Player Pair still favouring the player" in cleared.detail  # in words
        assert "no longer" not in cleared.detail


def test_a_flag_cleared_above_zero_does_not_say_the_edge_is_gone(archive_url: str) -> None:
    """With a wager's own threshold above its margin (dragon_7 = 0.05, margin 0.01) a flag clears while the EV is
    still positive: the alert says the flag cleared and where the edge fell, never that it no longer favours
    the player; one cleared below 0 does say so."""
    with Archive(archive_url) as a:
        t1 = Chain("T1")
        t1.new_shoe()
        body = {"shoe": 1, "coup": 60, "bet": "dragon_7", "ev": 0.061, "cards_left": 40}
        t1.add("advantage", body)
        t1.add("advantage_cleared", {**body, "coup": 61, "ev": 0.031})
        t1.add("advantage", {**body, "coup": 62, "ev": 0.12})
        t1.add("advantage_cleared", {**body, "coup": 63, "ev": -0.02})
        a.store(t1.records)
        a.advance("T1", "s1")
        Surveillance(a).process("T1", "s1")
        gone, _, still, _ = a.feed()[:4]
        assert "Dragon 7 flag cleared, its edge fell to EV +3.1000%" in still.detail  # the wager in words
        assert "no longer" not in still.detail
        assert "Dragon 7 no longer favours the player (EV -2.0000%)" in gone.detail


def test_advantage_alerts_name_the_wager_in_the_casino_s_words(archive_url: str) -> None:
    """Every wager's advantage alert, raised or cleared, names it as notation's WAGER_WORDS does (``Dragon Bonus
    Banker``), never by its record name (``dragon_bonus_banker``); the record and ``extra`` keep the name."""
    with Archive(archive_url) as a:
        t1 = Chain("T1")
        t1.new_shoe()
        for i, bet in enumerate(WAGER_WORDS):
            body = {"shoe": 1, "coup": 10 + i, "bet": bet, "ev": 0.04, "cards_left": 60}
            t1.add("advantage", body)
            t1.add("advantage_cleared", {**body, "ev": -0.01})
        a.store(t1.records)
        a.advance("T1", "s1")
        Surveillance(a).process("T1", "s1")
        alerts = [f for f in a.feed(100) if f.kind in ("advantage", "advantage_cleared")]
    assert len(alerts) == 2 * len(WAGER_WORDS)
    for f in alerts:
        bet = f.extra["bet"]
        assert WAGER_WORDS[bet] in f.detail, f.detail
        if "_" in bet:
            assert bet not in f.detail, f.detail


def test_a_table_whose_clock_is_not_synchronised_is_an_alert_once(archive_url: str) -> None:
    """Journal times are set against the cameras in a dispute: a table's ``clock`` input saying its clock is not
    synchronised is an alert naming it, once (two collectors, one key); a synchronised one is none."""
    with Archive(archive_url) as a:
        t1 = Chain("T1")
        t1.add("input", {"kind": "clock", "synchronised": True, "max_error_us": 1200, "detail": "synchronised"})
        t1.new_shoe()
        lost = t1.add(
            "input", {"kind": "clock", "synchronised": False, "max_error_us": 16_000_000, "detail": "not synchronised"}
        )
        a.store(t1.records)
        a.advance("T1", "s1")
        Surveillance(a).process("T1", "s1")
        Surveillance(a).process("T1", "s1")
        alerts = [item for item in a.feed() if item.kind == AlertKind.CLOCK_UNSYNCHRONISED]
        assert len(alerts) == 1 and alerts[0].seq == lost.seq and alerts[0].table == "T1"
        assert "not synchronised" in alerts[0].detail and "16 s" in alerts[0].detail
        assert alerts[0].extra == {"max_error_us": 16_000_000}


class _CountingWatch:
    """A watch that counts each table's input records and alerts on every 5th: the seam's test double."""

    schema: tuple[str, ...] = (
        'CREATE TABLE IF NOT EXISTS test_watch_counts ("table" TEXT PRIMARY KEY, n BIGINT NOT NULL)',
    )

    def load(self, tx: Transaction, table: str) -> int:
        tx.cursor.execute(tx.sql('SELECT n FROM test_watch_counts WHERE "table" = ?'), (table,))
        row = tx.cursor.fetchone()
        return 0 if row is None else int(row[0])

    def scan(self, state: int, records: Any) -> list[TableRecord]:
        return [r for r in records if r.kind == "input"]

    def store(self, tx: Transaction, table: str, site: str | None, state: int, result: Any) -> list[Any]:
        from floor.archive import Alert

        n = state + len(result)
        tx.cursor.execute(
            tx.sql(
                'INSERT INTO test_watch_counts ("table", n) VALUES (?, ?) ON CONFLICT ("table") DO UPDATE SET n = ?'
            ),
            (table, n, n),
        )
        return [
            Alert(table, r.seq, "test_watch", f"input {state + i + 1}")
            for i, r in enumerate(result)
            if (state + i + 1) % 5 == 0
        ]


@pytest.mark.dialects
def test_a_watch_reads_each_record_once_with_two_collectors_racing(archive_url: str) -> None:
    with Archive(archive_url) as a, Archive(archive_url) as b:
        sa, sb = Surveillance(a, watches=[_CountingWatch()]), Surveillance(b, watches=[_CountingWatch()])
        t1 = Chain("T1")
        t1.new_shoe()
        t1.deal(shuffled(9)[:40])
        inputs = sum(r.kind == "input" for r in t1.records)
        found = race_two_collectors(t1.records, (sa, a), (sb, b), 9)
        cur = a.connection.cursor()
        cur.execute("SELECT n FROM test_watch_counts WHERE \"table\" = 'T1'")
        assert cur.fetchone()[0] == inputs
        a.connection.commit()
        alerts = sorted(i.detail for i in found if i.kind == "test_watch")
        assert alerts == sorted(f"input {n}" for n in range(5, inputs + 1, 5))
