"""The money's surveillance (floor/money_watch.py) against both archives: each past-post, pulled bet, mispay and
foreign chip an alert once floor-wide with the record behind it (two collectors racing), a stolen chip its own
kind, the counts per table and shift equal to the records, the rate alert, and ``shoe-floor faults``."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.game.records import TableRecord
from controller.journal import Journal
from floor.archive import AlertKind, Archive
from floor.cli import main as shoe_floor
from floor.money_watch import MoneyState, MoneyThresholds, MoneyWatch, fault_rates, scan_money
from floor.shifts import ShiftPlan
from floor.surveillance import Surveillance
from tests.floor.conftest import PYTHON, ROOT, InProcess, Table
from tests.floor.feeding import archive_in_steps, race_two_collectors
from tests.floor.test_surveillance import TODAY, Chain, coup_body
from tests.waiting import until

MONEY_KINDS = {AlertKind.PAST_POST, AlertKind.PULLED_BET, AlertKind.MISPAY, AlertKind.FOREIGN_CHIP}
MONEY_KINDS |= {AlertKind.STOLEN_CHIP, AlertKind.MONEY_FAULTS}
CHIP = "E0040150040000{:02X}"


def chip(n: int, status: str = "in_play", cents: int = 2500) -> dict[str, Any]:
    return {"uid": CHIP.format(n), "cents": 0 if status == "unknown" else cents, "status": status}


class MoneyChain(Chain):
    """A :class:`Chain` with the money's records, in the shapes a real table journals them (docs/schemas)."""

    coup_no = 0

    def spot(self, seat: int, spot: str, chips: list[dict[str, Any]]) -> TableRecord:
        uids = [c["uid"] for c in chips]
        body = {"kind": "spot", "seat": seat, "spot": spot, "chips": chips, "uids": uids, "seq": len(self.records)}
        return self.add("input", body)

    def snapshot(self, spots: list[tuple[int, str, list[dict[str, Any]]]]) -> TableRecord:
        body = {"kind": "spots_snapshot", "spots": [{"seat": s, "spot": p, "chips": c} for s, p, c in spots]}
        return self.add("input", body)

    def wager(self, seat: int, bet: str = "banker", stake: int = 2500) -> TableRecord:
        body = {"shoe": self.shoe, "coup": self.coup_no + 1, "seat": seat, "bet": bet, "stake": stake}
        return self.add("wager", body | {"ev": -0.0106, "theo_cents": round(0.0106 * stake, 2)})

    def declared(self) -> TableRecord:
        self.coup_no += 1
        cause = self.add("input", {"kind": "declare", "source": "shoe"})
        return self.add("coup", coup_body(self.shoe, self.coup_no), cause=cause.seq)

    def money(self, record_kind: str, seat: int, bet: str = "banker", /, **cents: Any) -> TableRecord:
        return self.add(record_kind, {"shoe": self.shoe, "coup": self.coup_no + 1, "seat": seat, "bet": bet, **cents})


def money_surveillance(archive: Archive, **thresholds: Any) -> Surveillance:
    return Surveillance(archive, watches=[MoneyWatch(thresholds=MoneyThresholds(**thresholds))])


@pytest.mark.dialects
def test_each_money_fault_is_one_alert_in_the_pit_s_words_with_its_record(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = money_surveillance(archive)
        t = MoneyChain("T3")
        t.new_shoe()
        for _ in range(16):  # 16 coups of nine wagers: six faults are not yet a rate far above the floor's
            for seat in range(1, 10):
                t.wager(seat)
            t.declared()
        t.wager(4)
        post = t.money("past_post", 4, locked_cents=2500, seen_cents=5000)
        swap = t.money("past_post", 5, "tie", locked_cents=1000, seen_cents=1000)
        pulled = t.money("pulled_bet", 2, "player", locked_cents=25000, seen_cents=22500)
        under = t.money("mispay", 6, kind="underpay", expected_cents=4875, seen_cents=4375)
        over = t.money("mispay", 6, "dragon_7", kind="overpay", expected_cents=4250, seen_cents=5250)
        left = t.money("mispay", 1, "player_pair", kind="loser_left", expected_cents=0, seen_cents=3500)
        items = archive_in_steps(archive, s, t.records, step=5)
        by_seq = {i.seq or 0: i for i in items}  # each names its record
        assert len(items) == 6 and set(by_seq) == {r.seq for r in (post, swap, pulled, under, over, left)}
        for r in (post, swap, pulled, under, over, left):
            assert by_seq[r.seq].record == r.to_dict() and by_seq[r.seq].kind == r.kind
            assert {k: by_seq[r.seq].extra[k] for k in r.body} == r.body  # the record's fields in extra
        assert by_seq[post.seq].detail == (
            "Table T3 seat 4: past-post on Banker, $25 added after the first card"
            " ($25 locked, $50 seen; shoe 1, coup 17)"
        )
        assert "past-post on Tie, chips swapped after the first card" in by_seq[swap.seq].detail
        assert by_seq[pulled.seq].detail == (
            "Table T3 seat 2: pulled bet on Player, $25 taken off after the first card"
            " ($250 locked, $225 left; shoe 1, coup 17)"
        )
        said = "Banker underpaid by $5 (the spot held $43.75, it should have held $48.75)"
        assert said in by_seq[under.seq].detail
        assert "Dragon 7 overpaid by $10" in by_seq[over.seq].detail
        assert "losing Player Pair wager of $35 left on the layout" in by_seq[left.seq].detail
        assert by_seq[under.seq].extra["off_cents"] == 500 and by_seq[post.seq].extra["added_cents"] == 2500
        assert archive_in_steps(archive, s, t.records) == []  # read once: nothing again
        assert sorted(i.seq or 0 for i in archive.feed() if i.kind in MONEY_KINDS) == sorted(by_seq)


def test_a_foreign_chip_is_alerted_when_it_comes_onto_a_spot_and_a_stolen_one_says_so(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = money_surveillance(archive)
        t = MoneyChain("T1")
        t.new_shoe()
        first = t.spot(6, "banker", [chip(1), chip(2, "retired")])
        t.spot(6, "banker", [chip(1), chip(2, "retired"), chip(3)])  # still there: no second alert
        stolen = t.spot(1, "banker", [chip(4), chip(5, "stolen", 50000)])
        unknown = t.spot(4, "panda_8", [chip(6, "unknown")])
        t.snapshot([(1, "banker", [chip(4), chip(5, "stolen", 50000)])])  # 6 banker and 4 panda 8 now empty
        again = t.spot(6, "banker", [chip(2, "retired")])  # back on the spot: a new appearance
        t.spot(6, "banker", [chip(2, "retired")])
        boxed = t.snapshot([(1, "banker", [chip(5, "stolen", 50000)]), (3, "commission", [chip(7, "unknown")])])
        items = archive_in_steps(archive, s, t.records, step=3)
        got = sorted((i.seq, i.kind, i.extra["uid"]) for i in items)
        assert got == [
            (first.seq, AlertKind.FOREIGN_CHIP, CHIP.format(2)),
            (stolen.seq, AlertKind.STOLEN_CHIP, CHIP.format(5)),
            (unknown.seq, AlertKind.FOREIGN_CHIP, CHIP.format(6)),
            (again.seq, AlertKind.FOREIGN_CHIP, CHIP.format(2)),
            (boxed.seq, AlertKind.FOREIGN_CHIP, CHIP.format(7)),
        ]
        by_seq = {i.seq: i for i in items}
        assert by_seq[stolen.seq].detail.startswith(f"Table T1 seat 1 Banker: STOLEN chip {CHIP.format(5)}")
        assert "call surveillance now" in by_seq[stolen.seq].detail and by_seq[stolen.seq].record == stolen.to_dict()
        assert by_seq[stolen.seq].extra == {
            "seat": 1,
            "bet": "banker",
            "uid": CHIP.format(5),
            "status": "stolen",
            "cents": 50000,
        }
        assert "retired chip" in by_seq[first.seq].detail and "withdrawn from play" in by_seq[first.seq].detail
        assert "unknown chip" in by_seq[unknown.seq].detail and "Panda 8" in by_seq[unknown.seq].detail
        assert "seat 3 the commission box" in by_seq[boxed.seq].detail
        ((row),) = fault_rates(archive, ShiftPlan.parse(), *_today())
        assert (row.counts["foreign_chips"], row.counts["stolen_chips"]) == (4, 1)


@pytest.mark.dialects
def test_each_money_alert_is_stored_once_with_two_collectors_racing(archive_url: str) -> None:
    with Archive(archive_url) as a, Archive(archive_url) as b:
        sa, sb = money_surveillance(a), money_surveillance(b)
        t = MoneyChain("T1")
        t.new_shoe()
        expected = []
        for n in range(30):
            t.wager(n % 7 + 1)
            if n % 3 == 0:
                expected.append(t.money("past_post", 2, locked_cents=2500, seen_cents=3000).seq)
            if n % 5 == 0:
                expected.append(t.spot(3, "tie", [chip(n, "stolen")] if n % 10 == 0 else []).seq)
            t.declared()
        expected = [e for e in expected if t.records[e - 1].kind == "past_post" or t.records[e - 1].body["chips"]]
        found = race_two_collectors(t.records, (sa, a), (sb, b), 11)
        fault_items = [i for i in found if i.kind != AlertKind.MONEY_FAULTS]
        assert sorted(i.seq or 0 for i in fault_items) == sorted(expected)
        assert sorted(i.seq or 0 for i in a.feed(None) if i.kind != AlertKind.MONEY_FAULTS) == sorted(expected)
        ((row),) = fault_rates(a, ShiftPlan.parse(), *_today())
        assert (row.counts["past_posts"], row.counts["stolen_chips"], row.counts["wagers"]) == (10, 3, 30)
        assert row.counts["coups"] == 30


def _today() -> tuple[datetime, datetime]:
    day = datetime.fromisoformat(TODAY).replace(tzinfo=UTC)
    return day, day + timedelta(days=1)


@pytest.mark.dialects
def test_a_table_shift_far_above_the_floor_s_past_posts_is_one_alert(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = money_surveillance(archive)
        for n in range(5):  # an ordinary floor: 300 wagers a table, a past-post now and then
            t = MoneyChain(f"T{n}")
            t.new_shoe()
            for k in range(300):
                t.wager(k % 7 + 1)
                if k == 150 and n % 2:
                    t.money("past_post", 2, locked_cents=2500, seen_cents=5000)
                if k % 8 == 7:
                    t.declared()
            assert [
                i for i in archive_in_steps(archive, s, t.records, step=100) if i.kind == AlertKind.MONEY_FAULTS
            ] == []
        two = MoneyChain("TWO")  # two past-posts and two mispays: under the minimum count, nobody paged
        two.new_shoe()
        for k in range(40):
            two.wager(1)
            if k % 20 == 0:
                two.money("past_post", 2, locked_cents=2500, seen_cents=5000)
                two.money("mispay", 2, kind="underpay", expected_cents=5000, seen_cents=4000)
        assert [i.kind for i in archive_in_steps(archive, s, two.records)].count(AlertKind.MONEY_FAULTS) == 0
        bad = MoneyChain("BAD")
        bad.new_shoe()
        for k in range(100):
            bad.wager(k % 7 + 1)
            if k % 12 == 0:
                bad.money("past_post", 3, locked_cents=2500, seen_cents=7500)
            if k % 8 == 7:
                bad.declared()
        items = [i for i in archive_in_steps(archive, s, bad.records, step=20) if i.kind == AlertKind.MONEY_FAULTS]
        (item,) = items  # once for the shift, though every later step is as bad
        x = item.extra
        assert item.table == "BAD" and x["fault"] == "past_posts" and x["count"] >= 3 and x["p"] < 0.001
        assert x["shift"] == ShiftPlan.parse().shift_of(datetime.fromisoformat(f"{TODAY}T10:00+00:00")).name
        assert item.detail.startswith(f"Table BAD: {x['count']} past-posts in {x['shift_wagers']} wagers")
        assert "the floor's rate predicts" in item.detail and item.record is None
        rows = {r.table: r for r in fault_rates(archive, ShiftPlan.parse(), *_today())}
        assert rows["BAD"].counts["past_posts"] == 9 and rows["BAD"].counts["wagers"] == 100


@pytest.fixture(scope="module")
def faulty_journal(tmp_path_factory: pytest.TempPathFactory) -> list[TableRecord]:
    """A real journal with money faults: the demo (simulated shoe and players, real table loop) with the
    simulator's past-posts, pulled bets, foreign chips and the dealer's mispays."""
    path = tmp_path_factory.mktemp("faulty") / "journal.db"
    faults = ["late_bet=0.03", "pulled_bet=0.03", "unknown_chip=0.02", "underpay=0.02", "overpay=0.02"]
    faults.append("loser_not_taken=0.02")
    argv = [PYTHON, "-m", "controller.cli", "demo", "--pace", "fast", "--shoes", "1", "--seed", "3"]
    argv += [x for f in faults for x in ("--fault", f)] + ["--journal", str(path)]
    subprocess.run(argv, check=True, capture_output=True, timeout=180, cwd=ROOT)
    journal = Journal.open(str(path), create=False, read_only=True)
    try:
        return [r.for_floor("T1") for r in journal.records()]
    finally:
        journal.close()


def _foreign_appearances(records: list[TableRecord]) -> Counter[str]:
    """The test's own account: each foreign chip's coming onto a spot, by its status."""
    on: dict[tuple[Any, Any], set[str]] = {}
    out: Counter[str] = Counter()

    def seen(seat: Any, spot: Any, chips: list[dict[str, Any]]) -> set[str]:
        now = {c["uid"] for c in chips if c["status"] != "in_play"}
        for c in chips:
            if c["status"] != "in_play" and c["uid"] not in on.get((seat, spot), set()):
                out[c["status"]] += 1
        return now

    for r in records:
        if r.kind == "input" and r.body.get("kind") == "spot":
            on[(r.body["seat"], r.body["spot"])] = seen(r.body["seat"], r.body["spot"], r.body["chips"])
        elif r.kind == "input" and r.body.get("kind") == "spots_snapshot":
            on = {(x["seat"], x["spot"]): seen(x["seat"], x["spot"], x["chips"]) for x in r.body["spots"]}
    return out


@pytest.mark.dialects
@pytest.mark.e2e
def test_a_real_journal_s_faults_are_alerts_and_its_counts_are_its_records(
    archive_url: str, faulty_journal: list[TableRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    records = faulty_journal
    kinds = Counter(r.kind for r in records)
    assert kinds["past_post"] and kinds["pulled_bet"] and kinds["mispay"]  # the simulator's faults are there
    foreign = _foreign_appearances(records)
    assert foreign["stolen"] and foreign["retired"] + foreign["unknown"]
    with Archive(archive_url) as archive:
        s = money_surveillance(archive)
        archive_in_steps(archive, s, records, 250)
        feed = Counter(i.kind for i in archive.feed(None))
        assert feed[AlertKind.PAST_POST] == kinds["past_post"] and feed[AlertKind.PULLED_BET] == kinds["pulled_bet"]
        assert feed[AlertKind.MISPAY] == kinds["mispay"] and feed[AlertKind.STOLEN_CHIP] == foreign["stolen"]
        assert feed[AlertKind.FOREIGN_CHIP] == foreign["retired"] + foreign["unknown"]
        day = datetime.fromisoformat(records[0].at).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        rows = fault_rates(archive, ShiftPlan.parse(), day, day + timedelta(days=1))
    total = Counter[str]()
    for row in rows:
        total.update(row.counts)
    mispaid = sum(abs(r.body["seen_cents"] - r.body["expected_cents"]) for r in records if r.kind == "mispay")
    assert (total["past_posts"], total["pulled_bets"], total["mispays"]) == (
        kinds["past_post"],
        kinds["pulled_bet"],
        kinds["mispay"],
    )
    assert total["mispay_cents"] == mispaid and total["wagers"] == kinds["wager"]
    assert total["coups"] == sum(r.kind == "coup" and not r.body.get("set_aside") for r in records)
    assert total["stolen_chips"] == foreign["stolen"]
    # the command prints the same, one line per table and shift
    capsys.readouterr()
    start, end = day.isoformat(), (day + timedelta(days=1)).isoformat()
    assert shoe_floor(["faults", "--archive", archive_url, "--from", start, "--to", end, "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["past_posts"] for x in lines] == [r.counts["past_posts"] for r in rows]
    assert {x["table"] for x in lines} == {"T1"} and len(lines) == len(rows)
    line = max(lines, key=lambda x: x["wagers"])
    assert line["per_1000_wagers"]["past_posts"] == round(1000 * line["past_posts"] / line["wagers"], 3)
    assert line["per_100_coups"]["mispays"] == round(100 * line["mispays"] / line["coups"], 3)
    assert set(line) >= {"shift", "start", "end", "coups", "wagers", "mispay_cents", "foreign_chips"}


def test_the_faults_command_for_people_and_with_nothing_counted(
    archive_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Archive(archive_url).close()
    argv = ["faults", "--archive", archive_url, "--from", TODAY, "--to", f"{TODAY}T23:59Z"]
    assert shoe_floor(argv) == 0
    assert "no wagers or coups counted" in capsys.readouterr().err
    with Archive(archive_url) as archive:
        s = money_surveillance(archive)
        t = MoneyChain("T9")
        t.new_shoe()
        t.wager(1)
        t.money("mispay", 1, kind="underpay", expected_cents=4875, seen_cents=4375)
        t.declared()
        archive_in_steps(archive, s, t.records)
        other = MoneyChain("T8")  # another table: not in T9's lines
        other.new_shoe()
        other.wager(2)
        other.declared()
        archive_in_steps(archive, s, other.records)
        assert [r.table for r in fault_rates(archive, ShiftPlan.parse(), *_today())] == ["T8", "T9"]
    capsys.readouterr()
    assert shoe_floor([*argv, "--table", "T9", "--shifts", "08:00,20:00", "--zone", "Europe/London"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["shift", "table", "coups"]
    assert line.split()[3:9] == ["T9", "1", "1", "0", "0", "1"] and "$5" in line
    assert line.startswith(f"{TODAY} 08:00 GMT")  # the chain's 10:00 UTC is in London's 08:00 shift


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--from", "yesterday", "--to", "2026-12-02"], "'yesterday' is not an iso date"),
        (["--from", "2026-12-02", "--to", "2026-12-01"], "must be after --from"),
        (["--from", "2026-12-01", "--to", "2026-12-02", "--zone", "Mars/Olympus"], "unknown time zone"),
        (["--from", "2026-12-01", "--to", "2026-12-02", "--shifts", "06:00,25:00"], "is not hh:mm"),
        (["--from", "2026-12-01"], "--to"),
    ],
)
def test_the_faults_command_s_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    assert shoe_floor(["faults", "--archive", url, *args]) == 2
    err = capsys.readouterr().err
    assert says in err.lower() and err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_archive_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/none.db"
    assert shoe_floor(["faults", "--archive", url, "--from", "2026-12-01", "--to", "2026-12-02"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.e2e
def test_the_collector_runs_the_money_watch(
    collector: Callable[..., InProcess], table: Table, archive_url: str, faulty_journal: list[TableRecord]
) -> None:
    """``shoe-floor serve``'s collector surveils the money: a real table's past-posts reach the feed."""
    c = collector()
    table.publish(faulty_journal)
    table.wait_ack("T1", faulty_journal[-1].seq, timeout=60)
    posts = sum(r.kind == "past_post" for r in faulty_journal)
    until(lambda: sum(i.kind == AlertKind.PAST_POST for i in c.archive.feed(None)) == posts, 30, "the past-posts")
    (item,) = [i for i in c.archive.feed(None) if i.kind == AlertKind.PAST_POST][-1:]
    assert item.table == "T1" and item.site == "s1" and item.detail.startswith("Table T1 seat ")


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_FIELDS = ("shoe", "coup", "seat", "bet", "spot", "kind", "chips", "spots", "locked_cents", "seen_cents")
_body = st.fixed_dictionaries({}, optional={k: _json for k in (*_FIELDS, "expected_cents", "set_aside")})


@given(
    records=st.lists(
        st.tuples(
            st.sampled_from(["past_post", "pulled_bet", "mispay", "wager", "coup", "input"]),
            _body,
            st.sampled_from(["spot", "spots_snapshot", "card", None]),
            st.sampled_from(["2026-12-01T10:00:00.000Z", "not a time", "2026-12-01T10:20:00+00:00"]),
        ),
        max_size=20,
    )
)
@example(records=[("input", {"spots": 1}, "spots_snapshot", "2026-12-01T10:00:00.000Z")])
@example(records=[("input", {"spots": [{"chips": 7}, 3], "seat": {}}, "spots_snapshot", "x")])
@example(records=[("input", {"chips": "E0", "seat": [1], "spot": None}, "spot", "2026-12-01T10:00:00Z")])
@example(records=[("input", {"chips": [1, {"status": "stolen"}, {"uid": [], "status": 2}]}, "spot", "x")])
@example(records=[("mispay", {"kind": 3, "seen_cents": "a", "expected_cents": 1.5}, None, "x")])
@settings(max_examples=300, deadline=None)
def test_a_record_of_any_shape_is_read_without_a_crash(records: list[tuple[str, dict[str, Any], Any, str]]) -> None:
    """A record whose body is not what the schemas say (a newer table, a bug) is still an alert or nothing:
    the watch never raises, its counts stay whole numbers and its memory stays bounded."""
    state = MoneyState()
    chain = []
    for i, (kind, body, input_kind, at) in enumerate(records, 1):
        if kind == "input" and input_kind is not None:
            body = {**body, "kind": input_kind}
        chain.append(TableRecord("T1", i, kind, at, None, None, None, body, "0" * 64, "0" * 64))
    result = scan_money(state, chain)
    assert all(isinstance(n, int) for counts in result.counts.values() for n in counts.values())
    assert len(state.foreign) <= 256 and MoneyState.from_json(state.to_json()) == state
    assert MoneyState.from_json("{not json") == MoneyState() == MoneyState.from_json('{"foreign": 3}')
    assert all(a.detail.startswith("Table T1 ") for a in result.alerts)


def test_a_tray_variance_is_one_alert_naming_the_coup_the_amount_and_the_denominations(archive_url: str) -> None:
    with Archive(archive_url) as archive:
        s = money_surveillance(archive)
        t = MoneyChain("T5")
        t.new_shoe()
        t.declared()
        body = {"shoe": t.shoe, "coup": 1, "expected_cents": 57500, "counted_cents": 57000, "flow_cents": 0}
        t.add("tray_count", body | {"variance_cents": -500, "denominations": [{"cents": 500, "count": 19}]})
        short = t.add("tray_variance", {"shoe": t.shoe, "coup": 1, "variance_cents": -500, "expected_cents": 57500,
                                        "counted_cents": 57000, "changed": [{"cents": 500, "count": -1}]})  # fmt: skip
        items = archive_in_steps(archive, s, t.records, step=2)
        assert [(i.kind, i.seq) for i in items] == [(AlertKind.TRAY_VARIANCE, short.seq)]
        assert items[0].detail == (
            "Table T5: the chip tray $5 SHORT after coup 1 of shoe 1 (counted $570, it must hold $575; since the last"
            " count -1 x $5): count the tray with a supervisor and review the coup's video"
        )
        assert items[0].extra == short.body and items[0].record == short.to_dict()
        assert archive_in_steps(archive, s, t.records) == []  # read once
