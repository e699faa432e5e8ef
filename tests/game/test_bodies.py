"""controller.game.bodies: one frozen class per record kind. Every record of two fixed journals in which every
kind happens (tests/record_journals.py) reads back through its kind's class to exactly the body the journal
holds; a bad body is refused in one line naming the kind and the field; the class and its generated schema
(docs/schemas, tests/test_record_schemas.py) refuse the same bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from controller.game.bodies import (
    BODIES,
    BodyError,
    CoupBody,
    InputBody,
    SettlementBody,
    WagerBody,
    parse_body,
)
from controller.game.records import RecordKind
from tests.record_journals import (
    every_approval_journal,
    every_cash_journal,
    every_kind_journal,
    every_money_journal,
    every_player_journal,
    every_staff_journal,
    every_tray_journal,
)


def test_there_is_a_class_for_every_kind() -> None:
    assert set(BODIES) == set(RecordKind)
    assert all(cls.kind_of is kind for kind, cls in BODIES.items())


def test_every_record_reads_back_to_the_body_the_journal_holds(tmp_path: Path) -> None:
    seen = set()
    for build in (
        every_kind_journal,
        every_money_journal,
        every_player_journal,
        every_cash_journal,
        every_staff_journal,
        every_approval_journal,
        every_tray_journal,
    ):
        with build(tmp_path / f"{build.__name__}.db") as journal:
            for record in journal.records():
                stored = json.loads(record.body)
                body = parse_body(record.kind, stored)
                assert type(body) is BODIES[RecordKind(record.kind)]
                assert body.to_body() == stored
                seen.add(record.kind)
    assert seen == {k.value for k in RecordKind}


WAGER = {"shoe": 2, "coup": 7, "seat": 3, "bet": "banker", "stake": 2500, "ev": -0.0106, "theo_cents": 26.5}


def test_a_body_is_typed() -> None:
    wager = WagerBody.parse(WAGER)
    assert (wager.stake, wager.bet, wager.ev, wager.variance) == (2500, "banker", -0.0106, None)
    assert "variance" not in wager.to_body()  # left out stays left out (version 3 records before it)
    with pytest.raises(ValidationError):
        wager.stake = 1  # frozen: the test is that it raises


@pytest.mark.parametrize(
    ("kind", "body", "says"),
    [
        ("wager", WAGER | {"stake": "2500"}, "wager body: stake: Input should be a valid integer"),
        ("wager", WAGER | {"stake": 0}, "wager body: stake: Input should be greater than or equal to 1"),
        ("wager", WAGER | {"seat": 15}, "wager body: seat: Input should be less than or equal to 14"),
        ("wager", WAGER | {"bet": "lucky_6"}, "wager body: bet: 'lucky_6' is not one of banker"),
        ("wager", WAGER | {"tip": 1}, "wager body: tip: Extra inputs are not permitted"),
        ("wager", {k: v for k, v in WAGER.items() if k != "coup"}, "wager body: coup: Field required"),
        ("wager", WAGER | {"stake": True}, "wager body: stake: Input should be a valid integer"),
        ("settlement", {"shoe": 1}, "settlement body: coup: Field required (and 9 more)"),
        ("input", {"kind": "card"}, "input body: body: a card input without card"),
        ("input", {"kind": "card", "card": "1X"}, "input body: card: String should match pattern"),
        ("input", {"kind": "card", "card": None}, "input body: body: card is left out or has a value, never null"),
        ("input", {"kind": "teleport"}, "input body: kind: 'teleport' is not one of card"),
        (
            "coup",
            {
                "shoe": 1,
                "coup": 1,
                "declared": True,
                "void": False,
                "misdraw": False,
                "dummy_hand": [],
                "winner": "banker",
            },
            "coup body: body: a declared coup without player, banker",
        ),
        ("alarm", {"alarm": "fire", "text": "FIRE", "detail": ""}, "alarm body: alarm: 'fire' is not one of"),
        ("teleport", {}, "unknown record kind 'teleport'"),
    ],
)
def test_a_bad_body_is_refused_naming_the_field(kind: str, body: dict[str, Any], says: str) -> None:
    with pytest.raises(BodyError) as caught:
        parse_body(kind, body)
    assert str(caught.value).startswith(says), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(BodyError, match="settlement body: not a JSON object but list"):
        SettlementBody.parse([1, 2])  # type: ignore[arg-type]  # the test is that it is refused


@pytest.mark.parametrize(
    "body",
    [
        WAGER | {"stake": -5},
        WAGER | {"bet": "lucky_6"},
        WAGER | {"surprise": 1},
        {k: v for k, v in WAGER.items() if k != "ev"},
        WAGER | {"variance": -1.0},
    ],
)
def test_the_class_and_its_schema_refuse_the_same_wagers(body: dict[str, Any]) -> None:
    assert list(Draft202012Validator(WagerBody.json_schema()).iter_errors(body)) != []
    with pytest.raises(BodyError):
        WagerBody.parse(body)
    assert list(Draft202012Validator(WagerBody.json_schema()).iter_errors(WAGER)) == []


def test_the_schemas_say_what_each_input_and_coup_requires() -> None:
    schema = InputBody.json_schema()
    card = next(rule for rule in schema["allOf"] if rule["if"]["properties"]["kind"]["const"] == "card")
    assert card["then"]["required"] == ["card"]
    assert {"required": ["cards"], "properties": {"winner": {"const": None}}} in [
        rule["then"] for rule in CoupBody.json_schema()["allOf"]
    ]


def test_read_is_parse_or_none() -> None:
    assert WagerBody.read(WAGER) == WagerBody.parse(WAGER)
    assert WagerBody.read(WAGER | {"stake": "lots"}) is None
