"""docs/schemas: the JSON Schemas of every record a table sends to the floor, checked against what the table
really writes: every kind built by the record vocabulary, and a real daemon's journal over a simulated shoe
with dealer errors, a foreign card, a reboot and a disconnect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from controller.game.cards import Card
from controller.game.chips import SpotChips
from controller.game.edges import EdgeWatch
from controller.game.records import MONEY_FIELDS, InputKind, RecordKind, input_body, record_body
from controller.game.rules import SUPER6
from controller.game.table import (
    Alarm,
    CardDrawn,
    DeclarePressed,
    LineNoise,
    NewShoePressed,
    ShoeRebooted,
    TableInput,
    TableState,
    UnreadableCard,
    VoidPressed,
)
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from controller.journal import Journal
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.game.money import every_money_kind, money, table_rules
from tests.game.test_records import EVERY_INPUT

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def load(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((SCHEMAS / name).read_text())
    return value


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    resources = [(load(p.name)["$id"], Resource.from_contents(load(p.name))) for p in SCHEMAS.glob("*.schema.json")]
    registry: Registry[Any] = Registry().with_resources(resources)
    schema = load("record.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry, format_checker=FormatChecker())


def problems(validator: Draft202012Validator, journal: Journal) -> list[str]:
    out = []
    for record in journal.records():
        message = record.for_floor("T1").to_dict()
        out += [f"seq {record.id} ({record.kind}): {e.message}" for e in validator.iter_errors(message)]
    return out


def test_the_schemas_name_exactly_the_kinds_and_alarms_the_code_has() -> None:
    assert set(load("record.schema.json")["properties"]["kind"]["enum"]) == {k.value for k in RecordKind}
    # state.schema.json is the retained state message's, not a record's (tests/floor_protocol/test_state.py)
    assert {p.name.split(".")[0] for p in SCHEMAS.glob("*.schema.json")} == {"record", "state"} | {
        k.value for k in RecordKind
    }
    assert set(load("input.schema.json")["properties"]["kind"]["enum"]) == {k.value for k in InputKind}
    assert set(load("alarm.schema.json")["properties"]["alarm"]["enum"]) == {a.name.lower() for a in Alarm}
    assert set(load("alarm.schema.json")["properties"]["text"]["enum"]) == {a.value for a in Alarm}


def test_every_kind_the_vocabulary_builds_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    state = TableState()
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(
            state,
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            config=LoopConfig(
                ruleset=SUPER6,  # shoe start records carry it
                edges=EdgeWatch(-1.0, SUPER6, 8),  # every wager flagged at the first betting time ...
                wall=lambda: "2026-11-30T12:00:00+00:00",
            ),
        )
        for event in [*EVERY_INPUT, NewShoePressed()]:
            facts = {"old_session": 1, "new_session": 2} if isinstance(event, ShoeRebooted) else {"seq": 3}
            loop._apply(event, input_body(event, **facts), None, None)
        for number, token in enumerate(["2S", "3S", "4S", "9H", "KD", "KS", "QS"], start=1):  # burn, a natural
            card = CardDrawn(Card.parse(token))
            loop._apply(card, input_body(card, seq=number), 1, number)
        coup: list[TableInput] = [
            DeclarePressed(),
            CardDrawn(Card.parse("AS")),
            CardDrawn(Card.parse("AH")),
            UnreadableCard(),
        ]
        for event in coup:
            loop._apply(event, input_body(event), None, None)
        loop._apply(VoidPressed(), input_body(VoidPressed(), source="panel"), None, None)
        loop._apply(LineNoise(True), input_body(LineNoise(True), detail="flood"), None, None)
        for body in [
            record_body(InputKind.HELLO, firmware_version="1", serial_number="S", protocol_version=1, session_id=5),
            record_body(InputKind.STATUS, flags=["paper_low"]),
            record_body(InputKind.JOURNAL_FAULT, event="raised", alarm="journal_full", detail="full", fault="full"),
            record_body(InputKind.NOISE, rejected=40, bytes=4096, reasons={"bad_crc": 40}, seconds=10.0),
            record_body(InputKind.MESSAGE, message="reset"),
        ]:
            loop._apply(None, body, None, None)
        loop._apply(NewShoePressed(), input_body(NewShoePressed(), source="panel"), None, None)  # ... cleared
        loop.flush()
        journal.note({"note": "journal_restored", "reason": "test", "head": [1, "0" * 64]})
        kinds = {r.kind for r in journal.records()}
        assert kinds == {k.value for k in RecordKind} - MONEY_KINDS  # every other record kind was written
        assert problems(validator, journal) == []


#: The money's record kinds (a table with a bet-spot reader): written by the test below.
MONEY_KINDS = {k.value for k in MONEY_FIELDS}


def test_every_money_kind_and_reader_input_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(
            TableState(table_rules(money(leave_after_coups=1))),
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            config=LoopConfig(wall=lambda: "2026-11-30T12:00:00+00:00"),
        )
        for event in [*every_money_kind(), ReaderLinkChanged(up=False), SpotsSnapshot(())]:
            loop._apply(event, input_body(event), None, None)
        seen = SpotSeen(2, Spot.PLAYER, SpotChips())
        loop._apply(seen, input_body(seen, seq=9, uids=["E004000000000001"]), None, None)
        snap = SpotsSnapshot(())
        loop._apply(snap, input_body(snap, seq=10, snapshot=4, reported=0, uids={"2:player": []}), None, None)
        for body in [
            record_body(
                InputKind.READER_HELLO, firmware_version="1", serial_number="R", protocol_version=1, session_id=9
            ),
            record_body(InputKind.READER_STATUS, flags=["antenna_fault"]),
            # the facts controller/table/spot_wire.py gives them
            record_body(
                InputKind.READER_HELLO,
                seq=1,
                firmware_version="2",
                serial_number="R2",
                protocol_version=1,
                session_id=3,
                seats=[1, 2],
                spots=["banker", "player", "commission"],
            ),
            record_body(InputKind.READER_MESSAGE, seq=4, message="resend"),
            record_body(InputKind.SNAPSHOT_REFUSED, snapshot=7, detail="SNAPSHOT_END counts 3 spots, 2 were received"),
        ]:
            loop._apply(None, body, None, None)
        loop.flush()
        kinds = {r.kind for r in journal.records()}
        assert kinds >= MONEY_KINDS
        inputs = {json.loads(r.body)["kind"] for r in journal.records() if r.kind == "input"}
        assert inputs >= {"spot", "spots_snapshot", "reader_link", "reader_hello", "reader_status", "reader_message",
                          "snapshot_refused"}  # fmt: skip
        assert problems(validator, journal) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"card": "1X"}, "does not match"),
        ({"kind": "teleport"}, "is not one of"),
        ({"surprise": True}, "Additional properties"),
    ],
)
def test_a_wrong_body_is_refused(validator: Draft202012Validator, change: dict[str, Any], message: str) -> None:
    good: dict[str, Any] = {
        "v": 1, "table": "T1", "seq": 1, "kind": "input", "at": "2026-11-30T12:00:00+00:00", "session": None,
        "number": None, "cause": None, "prev": "0" * 64, "hash": "a" * 64, "body": {"kind": "card", "card": "QS"},
    }  # fmt: skip
    assert list(validator.iter_errors(good)) == []
    bad = good | {"body": good["body"] | change}
    assert any(message in e.message for e in validator.iter_errors(bad))


@pytest.mark.e2e
def test_a_real_daemons_journal_with_faults_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    from tests.e2e.harness import Harness
    from tests.e2e.test_faults_e2e import run_table

    script = tmp_path / "script.jsonl"
    faults = ["misdraw", "unreadable", "foreign", "reboot", "early_declare", "disconnect"]
    script.write_text("".join(json.dumps({"at_card": 20 + 15 * i, "fault": f}) + "\n" for i, f in enumerate(faults)))
    with Harness(tmp_path) as h:
        run_table(h, "--script", str(script), "--fault", "corrupt=0.01", "--shoes", "2", "--disconnect-for", "2")
        with Journal.open(h.journal, read_only=True) as journal:
            alarms = {json.loads(r.body)["alarm"] for r in journal.records() if r.kind == "alarm"}
            assert {"misdraw", "unreadable", "shoe_rebooted", "early_declare"} <= alarms  # the faults happened
            assert problems(validator, journal) == []
