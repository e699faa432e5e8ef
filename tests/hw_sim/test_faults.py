"""Fault specs (rates and scripts) and the byte stage between the firmware and the transport."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_protocol.binary import encode
from firmware_protocol.messages import CardRead
from hw_sim.faults import (
    Fault,
    FaultPlan,
    FaultSpecError,
    FaultStage,
    ScriptedFault,
    UnitInfo,
    parse_rate,
    parse_script,
)
from hw_sim.truth import TruthLog

FRAME = encode(5, CardRead(10, "H"))
INFO = UnitInfo(5, "CardRead")


def stage(**rates: float) -> tuple[FaultStage, TruthLog]:
    truth = TruthLog(keep=True)
    return FaultStage({Fault(k): v for k, v in rates.items()}, random.Random(1), truth), truth


def test_parse_rate() -> None:
    assert parse_rate("corrupt=0.01") == (Fault.CORRUPT, 0.01)
    assert parse_rate("early-declare=1") == (Fault.EARLY_DECLARE, 1.0)


@pytest.mark.parametrize(
    ("spec", "reason"),
    [("corrupt", "NAME=RATE"), ("smoke=0.1", "unknown fault"), ("drop=x", "not a number"), ("drop=1.5", "outside")],
)
def test_bad_rates_name_the_problem(spec: str, reason: str) -> None:
    with pytest.raises(FaultSpecError, match=reason):
        parse_rate(spec)


def test_parse_script() -> None:
    lines = ['{"at_card": 17, "fault": "misdraw"}', "", "# a comment", '{"at_card": 3, "fault": "drop", "shoe": 2}']
    assert parse_script(lines) == [ScriptedFault(17, Fault.MISDRAW), ScriptedFault(3, Fault.DROP, 2)]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{", "not JSON"),
        ("[1]", "expected an object"),
        ('{"at_card": 0, "fault": "drop"}', "at_card"),
        ('{"at_card": 1, "fault": "fire"}', "unknown fault"),
        ('{"at_card": 1, "fault": "drop", "when": 3}', "unknown key"),
    ],
)
def test_bad_script_lines_are_named_with_their_line_number(line: str, reason: str) -> None:
    with pytest.raises(FaultSpecError, match=reason) as info:
        parse_script(['{"at_card": 1, "fault": "drop"}', line], "f.jsonl")
    assert info.value.where == "f.jsonl:2"


def test_plan_scripted_in_run_and_in_shoe() -> None:
    plan = FaultPlan(script=(ScriptedFault(17, Fault.MISDRAW), ScriptedFault(3, Fault.REBOOT, shoe=2)))
    assert plan.scripted(17, 1, 17) == [Fault.MISDRAW]
    assert plan.scripted(20, 2, 3) == [Fault.REBOOT]
    assert plan.scripted(3, 1, 3) == []


def test_no_faults_pass_units_unchanged() -> None:
    s, truth = stage()
    assert s(FRAME, INFO) == [FRAME]
    assert truth.events == []


def test_corrupt_every_byte_changes_every_byte_and_logs_it() -> None:
    s, truth = stage(corrupt=1.0)
    (out,) = s(FRAME, INFO)
    assert len(out) == len(FRAME) and all(a != b for a, b in zip(out, FRAME, strict=True))
    (event,) = truth.of("fault")
    assert event["kind"] == "corrupt" and event["seq"] == 5
    assert event["offsets"] == list(range(len(FRAME))) and event["sent"] == out.hex()


def test_drop_every_byte_sends_nothing() -> None:
    s, truth = stage(drop=1.0)
    assert s(FRAME, INFO) == [b""]
    assert truth.of("fault")[0]["kind"] == "drop"


def test_duplicate_sends_the_unit_twice() -> None:
    s, truth = stage(duplicate=1.0)
    assert s(FRAME, INFO) == [FRAME + FRAME]
    assert truth.of("fault")[0]["kind"] == "duplicate"


@given(st.binary(min_size=2, max_size=64), st.integers(0, 1000))
def test_split_cuts_a_unit_into_chunks_that_join_back(unit: bytes, seed: int) -> None:
    truth = TruthLog(keep=True)
    s = FaultStage({Fault.SPLIT: 1.0}, random.Random(seed), truth)
    chunks = s(unit, UnitInfo(1, "line"))
    assert len(chunks) >= 2 and all(chunks)
    assert b"".join(chunks) == unit
    assert truth.of("fault")[0]["cuts"] == [len(b"".join(chunks[: i + 1])) for i in range(len(chunks) - 1)]


def test_armed_fault_hits_the_next_unit_with_that_seq_once() -> None:
    s, truth = stage()
    s.arm(5, Fault.CORRUPT)
    assert s(encode(4, CardRead(1, "S")), UnitInfo(4, "CardRead")) == [encode(4, CardRead(1, "S"))]
    (damaged,) = s(FRAME, INFO)
    assert sum(a != b for a, b in zip(damaged, FRAME, strict=True)) == 1
    assert s(FRAME, INFO) == [FRAME]  # the resend goes through intact
    assert [e["kind"] for e in truth.of("fault")] == ["corrupt"]
