"""The rating slips' pure function (controller/game/slips.py): whose wagers, visits across seats, pauses and
tables, open visits, buy-ins, the estimate, and (Hypothesis) the slips' money equal to the sums over each
player's wagers."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.records import TableRecord
from controller.game.slips import Estimate, Slip, micros_of, rating_slips, slip_line

A, B, C = "E0040150A0000001", "E0040150B0000002", "E0040150C0000003"
T0 = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


class Table:
    """One table's records, written in order, each at ``minute`` minutes after T0."""

    def __init__(self, name: str = "T1") -> None:
        self.name = name
        self.records: list[TableRecord] = []

    def add(self, minute: float, kind: str, **body: Any) -> None:
        at = (T0 + timedelta(minutes=minute)).isoformat(timespec="milliseconds")
        seq = len(self.records) + 1
        self.records.append(TableRecord(self.name, seq, kind, at, None, None, None, body, "0" * 64, "0" * 64))

    def sit(self, minute: float, seat: int, ref: str, coup: int = 1) -> None:
        self.add(minute, "player_in", shoe=1, coup=coup, seat=seat, player_ref=ref)

    def leave(self, minute: float, seat: int, ref: str, coup: int = 1) -> None:
        self.add(minute, "player_out", shoe=1, coup=coup, seat=seat, player_ref=ref, reason="card_out")

    def wager(self, minute: float, coup: int, seat: int, stake: int, theo: float | None = 1.25) -> None:
        ev = None if theo is None else -theo / stake
        body = {"shoe": 1, "coup": coup, "seat": seat, "bet": "banker", "stake": stake, "ev": ev, "theo_cents": theo}
        self.add(minute, "wager", **body, variance=None if theo is None else 0.9)

    def coup(self, minute: float, coup: int, *, void: bool = False) -> None:
        if void:
            body = {"shoe": 1, "coup": coup, "declared": False, "void": True, "misdraw": False, "dummy_hand": []}
            self.add(minute, "coup", **body, cards=["9H"], winner=None)
            return
        self.add(
            minute, "coup", shoe=1, coup=coup, declared=True, void=False, misdraw=False, dummy_hand=[],
            player=["KS", "QS"], banker=["9H", "KD"], player_total=0, banker_total=9, winner="banker",
        )  # fmt: skip

    def settle(self, minute: float, coup: int, seat: int, stake: int, net: int) -> None:
        outcome = "win" if net > 0 else "lose" if net < 0 else "push"
        self.add(
            minute, "settlement", shoe=1, coup=coup, seat=seat, bet="banker", stake=stake, outcome=outcome,
            win=max(net, 0), commission=0, net=net, commission_owed=0, box=0,
        )  # fmt: skip

    def play(self, minute: float, coup: int, bets: dict[int, tuple[int, int]]) -> None:
        """Coup ``coup`` at ``minute``: each seat's (stake, net) locked, declared and settled."""
        for seat, (stake, _net) in sorted(bets.items()):
            self.wager(minute, coup, seat, stake)
        self.coup(minute + 0.1, coup)
        for seat, (stake, net) in sorted(bets.items()):
            self.settle(minute + 0.1, coup, seat, stake, net)


def one(slips: list[Slip], ref: str, table: str = "T1") -> Slip:
    found = [s for s in slips if s.player_ref == ref and s.table == table]
    assert len(found) == 1, found
    return found[0]


def test_micros_of_reads_the_journal_and_the_floor_times_exactly() -> None:
    for text in ("2026-12-01T20:00:12.345+00:00", "2026-12-01T20:00:12.345Z", "2026-12-01T21:00:12.345+01:00"):
        assert micros_of(text) == round(datetime(2026, 12, 1, 20, 0, 12, 345000, tzinfo=UTC).timestamp() * 1e6)
    assert micros_of("2024-02-29T00:00:00") == int(datetime(2024, 2, 29, tzinfo=UTC).timestamp()) * 1_000_000
    assert micros_of("1969-12-31T23:59:59.5Z") == -500_000
    for bad in ("yesterday", "2026-13-01T00:00:00Z", "2026-12-01", ""):
        with pytest.raises(ValueError, match="not an ISO 8601 time"):
            micros_of(bad)


def test_a_seats_wagers_are_the_player_carded_there_at_the_lock() -> None:
    t = Table()
    t.sit(0, 1, A)
    t.wager(1, 1, 1, 10_000)  # locked while A is seated ...
    t.leave(1.05, 1, A)  # ... A leaves before the declare
    t.sit(1.06, 1, B)
    t.coup(1.1, 1)
    t.settle(1.1, 1, 1, 10_000, 9_500)  # still A's
    t.play(2, 2, {1: (2_500, -2_500), 3: (5_000, 5_000)})  # seat 3 is uncarded: nobody's slip
    t.leave(3, 1, B)
    slips = rating_slips(t.records)
    assert [(s.player_ref, s.handle_cents, s.win_cents, s.coups) for s in slips] == [
        (A, 10_000, 9_500, 1),
        (B, 2_500, -2_500, 1),
    ]
    assert one(slips, A).theo_h == 125 and one(slips, A).decisions == 1  # the coup A had a wager in


def test_a_seat_move_and_a_pause_within_the_window_are_one_visit_longer_ones_are_two() -> None:
    t = Table()
    t.sit(0, 1, A)
    t.play(1, 1, {1: (10_000, 10_000)})
    t.leave(2, 1, A)
    t.sit(2.5, 4, A)  # a seat move
    t.play(3, 2, {4: (5_000, -5_000)})
    t.leave(4, 4, A)
    t.sit(20, 4, A)  # back after a 16-minute pause
    t.play(21, 3, {4: (5_000, 5_000)})
    t.leave(22, 4, A)
    t.sit(60, 2, A)  # 38 minutes later: a new visit
    t.play(61, 4, {2: (2_500, 2_500)})
    t.leave(62, 2, A)
    first, second = rating_slips(t.records)
    assert first.seats == (1, 4) and first.seat == 1 and first.coups == 3 and first.handle_cents == 20_000
    assert first.paused_us == (0.5 + 16) * 60_000_000 and first.rated_us == (22 - 0.5 - 16) * 60_000_000
    assert first.start == t.records[0].at and first.end == t.records[-6].at
    assert second.seats == (2,) and second.handle_cents == 2_500 and second.paused_us == 0
    # ... and with a window of ten minutes the pause splits the first visit
    assert [s.seats for s in rating_slips(t.records, window_seconds=600)] == [(1, 4), (4,), (2,)]


def test_a_visit_across_tables_is_one_visit_with_a_slip_at_each_table() -> None:
    t1, t2 = Table("T1"), Table("T2")
    t1.sit(0, 1, A)
    t1.play(1, 1, {1: (10_000, 10_000)})
    t1.leave(2, 1, A)
    t2.sit(5, 3, A)
    t2.play(6, 1, {3: (2_500, -2_500)})
    t2.leave(7, 3, A)
    t1.sit(10, 1, A)
    t1.play(11, 2, {1: (10_000, -10_000)})
    t1.leave(12, 1, A)
    slips = rating_slips([*t2.records, *t1.records])  # the tables in any order, each in its own
    at1, at2 = one(slips, A, "T1"), one(slips, A, "T2")
    assert at1.visit_start == at2.visit_start == t1.records[0].at
    assert (at1.handle_cents, at1.win_cents, at1.coups) == (20_000, 0, 2)
    assert at1.paused_us == 8 * 60_000_000  # at the other table meanwhile: not rated here
    assert (at2.handle_cents, at2.win_cents) == (2_500, -2_500)
    assert [s.table for s in slips] == ["T1", "T2"]  # by start
    # one table's slips alone are the same as the floor's of that table, visit_start and all
    assert [slip_line(s) for s in rating_slips(t1.records)] == [slip_line(at1)]


def test_an_open_visit_is_left_out_unless_asked_and_then_ends_at_the_tables_last_record() -> None:
    t = Table()
    t.sit(0, 1, A)
    t.sit(0, 2, B)
    t.play(1, 1, {1: (10_000, 10_000), 2: (2_500, 2_500)})
    t.leave(2, 2, B)
    t.play(3, 2, {1: (10_000, 10_000)})
    assert [s.player_ref for s in rating_slips(t.records)] == [B]
    slips = rating_slips(t.records, include_open=True)
    still = one(slips, A)
    assert still.open and still.end == t.records[-1].at and still.coups == 2
    assert not one(slips, B).open
    assert json.loads(slip_line(still))["open"] is True


def test_buy_ins_go_on_the_players_slip_at_their_table_even_before_the_card_is_read() -> None:
    t = Table()
    t.add(0, "buy_in", shoe=1, coup=1, seat=1, cents=50_000, tender="cash", player_ref=A)  # before player_in
    t.sit(0.1, 1, A)
    t.add(0.2, "buy_in", shoe=1, coup=1, seat=1, cents=20_000, tender="marker", player_ref=A)
    t.add(0.2, "buy_in", shoe=1, coup=1, seat=3, cents=10_000, tender="cash", player_ref=None)  # uncarded
    t.play(1, 1, {1: (10_000, 10_000)})
    t.leave(2, 1, A)
    t.add(90, "buy_in", shoe=1, coup=3, seat=1, cents=40_000, tender="cash", player_ref=A)  # long after the visit
    s = one(rating_slips(t.records), A)
    assert (s.buy_in_cents, s.buy_ins) == (70_000, 2)


def test_a_voided_coups_wagers_count_once_at_the_redeal() -> None:
    t = Table()
    t.sit(0, 1, A)
    t.wager(1, 1, 1, 10_000, theo=2.0)
    t.coup(1.05, 1, void=True)
    t.wager(1.1, 1, 1, 10_000, theo=1.5)  # the redeal's lock
    t.coup(1.2, 1)
    t.settle(1.2, 1, 1, 10_000, -10_000)
    t.leave(2, 1, A)
    s = one(rating_slips(t.records), A)
    assert (s.wagers, s.handle_cents, s.theo_h, s.coups) == (1, 10_000, 150, 1)


def test_a_shoe_start_opens_the_stint_of_a_card_kept_in_its_reader() -> None:
    t = Table()  # a journal pruned to a shoe's start: A's player_in is gone
    t.add(0, "shoe", event="start", shoe=2, decks=8, players=[{"seat": 5, "player_ref": A, "playing": True}])
    t.play(1, 1, {5: (10_000, 10_000)})
    t.leave(2, 5, A)
    s = one(rating_slips(t.records), A)
    assert (s.start, s.handle_cents, s.seat) == (t.records[0].at, 10_000, 5)


def test_the_estimate_names_its_assumptions_and_the_measured_pace_is_beside_it() -> None:
    t = Table()
    t.sit(0.5, 1, A)
    for coup in range(1, 7):  # six coups in six minutes: 60 decisions an hour, A bets four of them
        t.play(coup, coup, {1: (10_000, 0)} if coup <= 4 else {})
    t.leave(6.5, 1, A)
    s = one(rating_slips(t.records, estimate=Estimate(80, 0.0124)), A)
    assert (s.coups, s.decisions, s.avg_bet_cents, s.avg_bet_per_decision_cents) == (4, 6, 10_000, 6_667)
    assert s.decisions_per_hour == 60.0
    line = json.loads(slip_line(s))
    assert line["estimate"]["decisions_per_hour"] == 80 and line["estimate"]["house_edge"] == 0.0124
    assert line["estimated_theo_cents"] == round(10_000 * 80 * 0.1 * 0.0124, 2)
    assert line["theo_cents"] == 5.0 and line["rated_seconds"] == 360.0
    with pytest.raises(ValueError, match="house edge"):
        Estimate(70, 1.5)


def test_slip_lines_have_sorted_keys_and_the_issues_fields() -> None:
    t = Table()
    t.sit(0, 1, A)
    t.play(1, 1, {1: (10_000, 10_000)})
    t.leave(2, 1, A)
    (s,) = rating_slips(t.records)
    line = slip_line(s)
    keys = list(json.loads(line))
    assert keys == sorted(keys)
    fields = {"player_ref", "seat", "start", "end", "coups", "handle_cents", "avg_bet_cents", "theo_cents"}
    assert fields | {"win_cents", "buy_in_cents", "paused_seconds"} <= set(keys) and "table" not in keys
    assert json.loads(slip_line(s, table=True))["table"] == "T1"


# -- Hypothesis: the slips' money is the sum over each player's wagers ---------------------------------------

_REFS = (A, B, C)
_step = st.one_of(
    st.tuples(st.just("card"), st.integers(1, 4), st.sampled_from((*_REFS, None))),  # a card in (None: out)
    st.tuples(st.just("coup"), st.dictionaries(st.integers(1, 4), st.integers(-1, 1), max_size=4), st.booleans()),
    st.tuples(st.just("wait"), st.integers(1, 50), st.none()),
)


@given(st.lists(_step, max_size=40), st.integers(0, 40))
def test_every_players_handle_win_and_theo_are_the_sums_over_their_wagers(steps: list[Any], window: int) -> None:
    """Whatever the players do (sit, move, leave, come back; cards out mid-coup), the slips' handle, win and
    theo add up, per player, to the wagers locked while they were carded at the seat, and nothing else."""
    t = Table()
    minute, coup = 0.0, 0
    seated: dict[int, str] = {}
    want: Counter[tuple[str, str]] = Counter()
    for kind, a, b in steps:
        minute += 0.5
        if kind == "wait":
            minute += a
        elif kind == "card":
            held = seated.pop(a, None)
            if held is not None:
                t.leave(minute, a, held)
            if b is not None and b not in seated.values():
                seated[a] = b
                t.sit(minute, a, b)
        else:
            coup += 1
            for seat in sorted(a):
                t.wager(minute, coup, seat, 1_000 * seat, theo=0.25 * seat)
            owners = dict(seated)  # the lock
            if b and seated:  # a card out after the lock, before the declare
                seat = min(seated)
                t.leave(minute + 0.1, seat, seated.pop(seat))
            t.coup(minute + 0.2, coup)
            for seat, sign in sorted(a.items()):
                t.settle(minute + 0.2, coup, seat, 1_000 * seat, sign * 1_000 * seat)
                if seat in owners:
                    ref = owners[seat]
                    want.update({(ref, "handle"): 1_000 * seat, (ref, "theo_h"): 25 * seat})
                    want[(ref, "win")] += sign * 1_000 * seat
    got: Counter[tuple[str, str]] = Counter()
    for s in rating_slips(t.records, window_seconds=window * 60, include_open=True):
        got[(s.player_ref, "handle")] += s.handle_cents
        got[(s.player_ref, "theo_h")] += s.theo_h
        got[(s.player_ref, "win")] += s.win_cents
        assert s.paused_us >= 0 and s.rated_us >= 0
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}
    # and only the visits still seated are open
    open_refs = {s.player_ref for s in rating_slips(t.records, include_open=True) if s.open}
    assert open_refs <= set(seated.values())


def test_a_seat_move_between_a_lock_and_its_declare_counts_the_coup_once() -> None:
    t = Table()
    t.sit(0, 1, A)
    t.play(1, 1, {1: (10_000, 10_000)})
    t.wager(2, 2, 1, 10_000)  # coup 2 locked with A at seat 1 ...
    t.leave(2.05, 1, A)
    t.sit(2.06, 4, A)  # ... A moves to seat 4 before the declare
    t.coup(2.1, 2)
    t.settle(2.1, 2, 1, 10_000, -10_000)
    t.play(3, 3, {4: (5_000, 5_000)})
    t.leave(4, 4, A)
    s = one(rating_slips(t.records), A)
    assert (s.seats, s.coups, s.decisions, s.wagers, s.handle_cents) == ((1, 4), 3, 3, 3, 25_000)
