"""The simulator's dealers (hw_sim/money.py, ``--dealer-swap``): a dealer's badge at the dealer's position, the
dealer swapped for the next every K coups, each a ``dealer_in`` / ``dealer_out`` truth line and a read of the
dealer's position; the fault ``unknown_badge`` (a badge not in the registry) in the truth log and on the reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.game.chips import format_uid
from hw_sim.cli import main
from hw_sim.core import Dialect, ShoeSimulator, SimConfig
from hw_sim.faults import Fault, FaultPlan, ScriptedFault
from hw_sim.money import CardRead, MoneyConfig, MoneyConfigError, approvers, staff


def run(swap: int, faults: FaultPlan | None = None) -> tuple[ShoeSimulator, list[CardRead]]:
    money = MoneyConfig(players=3, dealer_swap=swap)
    config = SimConfig(dialect=Dialect.ASCII, decks=1, seed=5, pace=0.5, money=money, shoes=1)
    if faults is not None:
        config = SimConfig(dialect=Dialect.ASCII, decks=1, seed=5, pace=0.5, money=money, shoes=1, faults=faults)
    sim = ShoeSimulator(config)
    assert sim.money is not None
    sim.money.keep_reads = True
    reads: list[CardRead] = []
    now = 0.0
    sim.start(now)
    while not sim.finished and now < 800:
        sim.poll(now)
        reads += [r for r in sim.money.due_reads(now) if isinstance(r, CardRead) and r.seat == 0]
        now += 0.05
    return sim, reads


def test_the_dealer_is_swapped_every_k_coups_each_a_truth_line_and_a_badge_read() -> None:
    sim, reads = run(2)
    ins, outs = sim.truth.of("dealer_in"), sim.truth.of("dealer_out")
    dealers = staff(5)
    assert [e["staff_id"] for e in ins[:4]] == ["D1", "D2", "D3", "D1"]  # they take turns
    assert [e["coup"] for e in ins[:3]] == [1, 3, 5]  # each dealt 2 coups
    assert all(e["badge"] == format_uid(dict(dealers)[e["staff_id"]]) for e in ins)
    assert [e["staff_id"] for e in outs] == [e["staff_id"] for e in ins[: len(outs)]]
    assert {e["reason"] for e in outs} == {"badge_out"} and len(ins) == len(outs) + 1  # the last stays on
    for before, after in zip(outs, ins[1:], strict=False):
        assert (before["shoe"], before["coup"]) == (after["shoe"], after["coup"])  # between coups: no coup lost
    # every truth line is one read of the dealer's position: the badge in, or out
    assert [None if r.uid is None else format_uid(r.uid) for r in reads] == [
        x for pair in zip([e["badge"] for e in ins], [None] * len(outs), strict=False) for x in pair
    ] + ([ins[-1]["badge"]] if len(ins) > len(outs) else [])


def test_no_swap_no_badges() -> None:
    sim, reads = run(0)
    assert sim.truth.of("dealer_in") == [] and reads == []


def test_an_unknown_badge_is_put_in_and_taken_out_and_the_dealers_goes_back() -> None:
    plan = FaultPlan(script=(ScriptedFault(0, Fault.UNKNOWN_BADGE, shoe=1, at_coup=2),))
    sim, reads = run(5, plan)
    [fault] = [e for e in sim.truth.of("fault") if e["kind"] == "unknown_badge"]
    assert fault["coup"] == 2 and fault["badge"] not in {format_uid(uid) for _i, uid in staff(5)}
    ins, outs = sim.truth.of("dealer_in"), sim.truth.of("dealer_out")
    assert [e["staff_id"] for e in ins[:2]] == ["D1", "D1"] and outs[0]["coup"] == 2
    seen = [None if r.uid is None else format_uid(r.uid) for r in reads[:5]]
    assert seen == [ins[0]["badge"], None, fault["badge"], None, ins[0]["badge"]]


def test_a_negative_swap_is_refused() -> None:
    with pytest.raises(MoneyConfigError, match="dealer_swap"):
        MoneyConfig(players=3, dealer_swap=-1)


def test_staff_out_writes_the_dealers_for_the_registry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "staff.jsonl"
    assert main(["--tcp", "127.0.0.1:0", "--staff-out", str(out), "--dealer-swap", "2"]) == 2  # needs players
    assert "--dealer-swap" in capsys.readouterr().err
    from hw_sim.cli import write_staff

    write_staff(out, 5)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["id"], x["role"]) for x in lines] == [
        ("D1", "dealer"), ("D2", "dealer"), ("D3", "dealer"), ("S1", "supervisor"), ("P1", "pit_manager")
    ]  # fmt: skip
    assert [x["badge"] for x in lines[:3]] == [format_uid(uid) for _i, uid in staff(5)]
    assert [(x["badge"], x["pin"]) for x in lines[3:]] == [(format_uid(u), p) for _i, _r, u, p in approvers(5)]
