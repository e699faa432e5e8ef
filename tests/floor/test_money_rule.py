"""The shift's money is folded by one rule (floor.accounting.money_move): the pit's tiles (floor.pit.ShiftMoney)
and the accounting's buckets (``shoe-floor report``) both call it, so the tile and the report of a shift agree
record for record. The accounting's unsettled wagers are typed (PendingWager), saved in the form they always
had."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from controller.game.bodies import AlarmBody, CommissionBody, SettlementBody, parse_body
from floor.accounting import Accounting, AccountState, MoneyMove, PendingWager, money_move
from floor.pit import ShiftMoney
from floor.shifts import parse_time
from tests.floor.test_accounting import UTC_PLAN, MoneyChain

SETTLED = {"shoe": 1, "coup": 2, "seat": 3, "bet": "banker", "stake": 2500, "outcome": "win", "win": 2375,
           "commission": 125, "net": 2375, "commission_owed": 0, "box": 0}  # fmt: skip
BOX = {"shoe": 1, "seat": 3, "owed": 500, "collected": 400, "uncollected": 100, "over_collected": 0, "why": "shoe_end"}


def test_the_rule() -> None:
    assert money_move(SettlementBody.parse(SETTLED)) == MoneyMove(handle=2500, win=-2375, wagers=1)
    assert money_move(CommissionBody.parse(BOX)) == MoneyMove(win=400, collected=400, uncollected=100)
    assert money_move(AlarmBody.parse({"alarm": "misdraw", "text": "MISDRAW", "detail": ""})) is None


def test_the_tile_and_the_report_fold_the_same_records_the_same_way() -> None:
    plan = UTC_PLAN
    chain = MoneyChain("T1")
    chain.start()
    chain.play({1: [("banker", 1000, -1000), ("tie", 500, 4000)], 2: [("player", 2500, 2500)]})
    chain.play({1: [("banker", 1000, 950)]}, void=True)
    chain.play({2: [("player", 700, -700)]})
    chain.add("commission", BOX | {"seat": 2})
    records = chain.records
    out = Accounting(plan).scan(AccountState(), records)
    report = {k: sum(b[k] for b in out.buckets.values()) for k in ("handle", "win", "collected", "wagers")}
    tile = ShiftMoney(plan.shift_of(parse_time(records[0].at)))
    assert all(tile.shift.contains(parse_time(r.at)) for r in records)
    for r in records:
        tile.fold(r.kind, r.body)
    assert report == {"handle": tile.handle, "win": tile.win, "collected": tile.commission_collected,
                      "wagers": tile.wagers}  # fmt: skip
    assert report["handle"] == 1000 + 500 + 2500 + 700 and report["collected"] == 400


def test_a_body_not_of_its_kind_moves_no_money_on_the_tile() -> None:
    tile = ShiftMoney(UTC_PLAN.shift_of(datetime(2026, 12, 1, tzinfo=UTC)))
    tile.fold("settlement", SETTLED | {"stake": "2500"})
    tile.fold("commission", BOX | {"collected": -1})
    assert (tile.handle, tile.win, tile.wagers, tile.commission_collected) == (0, 0, 0, 0)
    tile.fold("settlement", SETTLED)
    assert (tile.handle, tile.win, tile.wagers) == (2500, -2375, 1)
    assert isinstance(parse_body("settlement", SETTLED), SettlementBody)


def test_the_unsettled_wagers_are_saved_as_they_always_were() -> None:
    old = json.dumps({"pending": [[1, 2, 3, "banker", 2500, 2650, 0.9], [1, 2, 4, "tie", 500, None]]})
    state = AccountState.from_json(old)
    assert state.pending == [
        PendingWager(1, 2, 3, "banker", 2500, 2650, 0.9),
        PendingWager(1, 2, 4, "tie", 500, None, None),  # written before the variance was kept
    ]
    again = json.loads(state.to_json())["pending"]
    assert again == [[1, 2, 3, "banker", 2500, 2650, 0.9], [1, 2, 4, "tie", 500, None, None]]
    assert AccountState.from_json(state.to_json()) == state
