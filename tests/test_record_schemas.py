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

from controller.game.approvals import RefusedWhy as ApprovalWhy
from controller.game.records import (
    APPROVAL_FIELDS,
    MONEY_FIELDS,
    PLAYER_FIELDS,
    STAFF_FIELDS,
    TRAY_FIELDS,
    InputKind,
    RecordKind,
)
from controller.game.table import (
    Alarm,
)
from controller.journal import Journal
from tests.record_journals import (
    every_approval_journal,
    every_cash_journal,
    every_kind_journal,
    every_money_journal,
    every_player_journal,
    every_staff_journal,
    every_tray_journal,
)

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
    with every_kind_journal(tmp_path / "j.db") as journal:
        kinds = {r.kind for r in journal.records()}
        # every other kind was written (the buy-ins are every_cash_journal's, the staff's every_staff_journal's,
        # the tray's every_tray_journal's)
        others = MONEY_KINDS | PLAYER_KINDS | STAFF_KINDS | APPROVAL_KINDS | {RecordKind.BUY_IN.value}
        others |= {k.value for k in TRAY_FIELDS}
        assert kinds == {k.value for k in RecordKind} - others
        assert problems(validator, journal) == []


#: The money's record kinds (a table with a bet-spot reader): written by the test below.
MONEY_KINDS = {k.value for k in MONEY_FIELDS}


def test_every_money_kind_and_reader_input_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with every_money_journal(tmp_path / "j.db") as journal:
        kinds = {r.kind for r in journal.records()}
        assert kinds >= MONEY_KINDS
        inputs = {json.loads(r.body)["kind"] for r in journal.records() if r.kind == "input"}
        assert inputs >= {"spot", "spots_snapshot", "reader_link", "reader_hello", "reader_status", "reader_message",
                          "snapshot_refused"}  # fmt: skip
        assert problems(validator, journal) == []


#: The players' record kinds (the seats' card readers, version 4): written by the test below.
PLAYER_KINDS = {k.value for k in PLAYER_FIELDS}


def test_every_player_kind_and_card_input_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with every_player_journal(tmp_path / "j.db") as journal:
        kinds = {r.kind for r in journal.records()}
        assert kinds >= PLAYER_KINDS
        bodies = [json.loads(r.body) for r in journal.records()]
        assert {b["kind"] for b in bodies if "kind" in b} >= {"seat_card", "dealer_card"}
        assert {b["reason"] for b in bodies if "reason" in b} == {"card_out", "card_replaced", "seat_empty"}
        assert problems(validator, journal) == []


#: The staff's record kinds (the dealer's position's badge, version 4): written by the test below.
STAFF_KINDS = {k.value for k in STAFF_FIELDS}


def test_every_staff_kind_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with every_staff_journal(tmp_path / "j.db") as journal:
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
        assert {k for k, _ in records} >= STAFF_KINDS
        assert {b["reason"] for k, b in records if k == "dealer_out"} == {"badge_out", "replaced"}
        assert {b["why"] for k, b in records if k == "badge_refused"} == {"unknown_badge", "not_a_dealer"}
        assert problems(validator, journal) == []


#: A supervisor's approval's record kinds (version 4): written by the test below.
APPROVAL_KINDS = {k.value for k in APPROVAL_FIELDS}


def test_every_approval_kind_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with every_approval_journal(tmp_path / "j.db") as journal:
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
        assert {k for k, _ in records} >= APPROVAL_KINDS
        whys = {b["why"] for k, b in records if k == "approval_refused"}
        assert whys == {w.value for w in ApprovalWhy} - {"no_pin"}  # every step but a member without a PIN
        assert [(b["approver"], b["action"]) for k, b in records if k == "approval"] == [
            ("P1", "void"),
            ("P1", "rate_uncarded"),
        ]
        assert problems(validator, journal) == []


def test_every_tray_kind_and_input_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with every_tray_journal(tmp_path / "j.db") as journal:
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
        assert {k for k, _ in records} >= {k.value for k in TRAY_FIELDS}
        inputs = {b["kind"] for k, b in records if k == "input"}
        assert inputs >= {"tube", "tray_snapshot", "tray_link", "tray_still", "tray_hello", "tray_status"}
        assert [b["variance_cents"] for k, b in records if k == "tray_variance"] == [-500]
        assert any("tray" in b for k, b in records if k == "shoe" and b["event"] == "start")
        assert problems(validator, journal) == []


def test_every_buy_in_is_valid(tmp_path: Path, validator: Draft202012Validator) -> None:
    with every_cash_journal(tmp_path / "j.db") as journal:
        bodies = [json.loads(r.body) for r in journal.records() if r.kind == "buy_in"]
        assert {b["tender"] for b in bodies} == {"cash", "chips", "marker"}
        assert {b["player_ref"] for b in bodies} == {"E0040150C0001001", None}
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


def test_the_schema_files_are_the_classes() -> None:
    """docs/schemas is generated from controller/game/bodies.py: a class changed without its file is caught."""
    from tools.record_schemas import SCHEMAS as WRITTEN
    from tools.record_schemas import stale, texts

    assert WRITTEN == SCHEMAS
    assert stale() == [], "run: .venv/bin/python tools/record_schemas.py"
    assert {p.name for p in texts()} | {"state.schema.json"} == {p.name for p in SCHEMAS.glob("*.schema.json")}


def test_the_drift_check_catches_a_changed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tools.record_schemas as tool

    for name in ("wager.schema.json", "record.schema.json"):
        (tmp_path / name).write_text((SCHEMAS / name).read_text())
    monkeypatch.setattr(tool, "SCHEMAS", tmp_path)
    (tmp_path / "wager.schema.json").write_text((SCHEMAS / "wager.schema.json").read_text().replace("stake", "stack"))
    stale = {p.name for p in tool.stale()}
    assert "wager.schema.json" in stale and "record.schema.json" not in stale
    assert tool.main(["--check"]) == 1
    tool.main([])
    assert tool.main(["--check"]) == 0
