"""The retained ``state`` message: its model (floor_protocol.state), its JSON Schema in docs/schemas, and what
the table really sends (``controller.link.floor_link.state_message`` over a dealt shoe, shown and hidden). The
schema file is the model's (regenerate with tools/state_schema.py); the parser and the schema take and refuse
the same messages."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from controller.game.cards import Card
from controller.game.coup import CoupResult
from controller.game.public import PublicProjector
from controller.game.records import RECORD_VERSION
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    Alarm,
    CardDrawn,
    DeclarePressed,
    Due,
    NewShoePressed,
    TableRules,
    TableState,
    TableView,
    VoidPressed,
)
from controller.link.floor_link import state_message
from floor_protocol.state import (
    ALARM_NAMES,
    DUE_NAMES,
    MAX_STATE_BYTES,
    StateError,
    TableStateMessage,
    json_schema,
    parse_state,
)
from tools.state_schema import SCHEMA, text

_DECK = [Card.parse(r + s) for r in "A23456789TJQK" for s in "SHDC"] * 8


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_schema_file_is_the_models() -> None:
    assert SCHEMA.read_text() == text(), "run: .venv/bin/python tools/state_schema.py"
    assert json.loads(SCHEMA.read_text()) == json_schema()


def test_the_names_are_the_cores() -> None:
    assert (*(d.value for d in Due), "hidden") == DUE_NAMES
    assert tuple(a.name.lower() for a in Alarm) == ALARM_NAMES
    props = json_schema()["properties"]
    assert props["due"]["enum"] == list(DUE_NAMES)
    assert props["alarms"]["items"]["enum"] == list(ALARM_NAMES)
    assert props["v"]["maximum"] == RECORD_VERSION


def _views(seed: int) -> Iterator[tuple[TableView, list[dict[str, Any]]]]:
    """Every view of a shoe dealt card by card (a few voids), with the declared coups so far."""
    state = TableState(TableRules(burn_rule=BurnRule(mode=BurnMode.NONE)))
    rng = random.Random(seed)
    deck = list(_DECK)
    rng.shuffle(deck)
    coups: list[dict[str, Any]] = []
    state.apply(NewShoePressed())
    yield state.view(), coups
    for card in deck[:200]:
        view = state.view()
        if view.due is Due.DECLARE:
            result: CoupResult | None = view.result
            state.apply(DeclarePressed())
            assert result is not None
            coups.append({"declared": True, "void": False, **result.to_dict()})
            yield state.view(), coups
        elif rng.random() < 0.02:
            state.apply(VoidPressed())
            yield state.view(), coups
        state.apply(CardDrawn(card))
        yield state.view(), coups


def _messages() -> Iterator[dict[str, Any]]:
    for seed in (1, 2):
        for view, coups in _views(seed):
            for reveal in ("on_read", "on_declare"):
                public = PublicProjector(reveal).view(view)
                yield state_message(public, coups, table="t1", site="s", head=9, acked=3)
                yield state_message(public, coups, table="t1", site="s", head=9, acked=3, limits=LIMITS)


#: A table's limits as the link says them (cents): ``[table.limits]``'s defaults.
LIMITS = {"minimum": 2500, "maximum": 500000, "side_minimum": 500, "side_maximum": 50000}


def test_every_state_the_table_sends_is_valid_and_reads_back_the_same(validator: Draft202012Validator) -> None:
    seen_due, seen_pairs = set(), set()
    for message in _messages():
        payload = json.dumps(message, separators=(",", ":"))
        assert len(payload) < MAX_STATE_BYTES / 4
        assert list(validator.iter_errors(message)) == []
        parsed = parse_state(payload)
        assert parsed.to_dict() == message
        seen_due.add(parsed.due)
        pairs = message["roads"]["pairs"]  # a letter per coup of the bead road, as the counts count them
        assert len(pairs) == len(message["roads"]["bead"])
        assert sum(p in "px" for p in pairs) == message["counts"]["player_pair"]
        assert sum(p in "bx" for p in pairs) == message["counts"]["banker_pair"]
        seen_pairs.update(pairs)
    assert {"deal", "player_third", "banker_third", "declare", "hidden"} <= seen_due
    assert {".", "p", "b"} <= seen_pairs


def _good() -> dict[str, Any]:
    return next(m for m in _messages() if m.get("result") is not None)


def _hidden() -> dict[str, Any]:
    return next(m for m in _messages() if m["due"] == "hidden")


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda m: m | {"surprise": 1}, "surprise: Extra inputs are not permitted"),
        (lambda m: m | {"limits": {**LIMITS, "minimum": -5}}, "limits.minimum: Input should be greater than or equal"),
        (lambda m: m | {"limits": {"minimum": 2500}}, "limits.maximum: Field required"),
        (lambda m: {k: v for k, v in m.items() if k != "counts"}, "counts: Field required"),
        (lambda m: m | {"due": "dance"}, "due: 'dance' is not one of"),
        (lambda m: m | {"shoe": True}, "shoe: Input should be a valid integer"),
        (lambda m: m | {"shoe": "3"}, "shoe: Input should be a valid integer"),
        (lambda m: m | {"coup": -1}, "coup: Input should be greater than or equal to 0"),
        (lambda m: m | {"cards_remaining": 417}, "cards_remaining: Input should be less than or equal to 416"),
        (lambda m: m | {"cards_dealt": 7}, "cards_dealt: Input should be less than or equal to 6"),
        (lambda m: m | {"v": RECORD_VERSION + 1}, "v: Input should be less than or equal to"),
        (lambda m: m | {"table": "a/b"}, "table: String should match pattern"),
        (lambda m: m | {"at": "yesterday"}, "at: String should match pattern"),
        (lambda m: m | {"alarms": ["misdraw", "misdraw"]}, "alarms: names an alarm twice"),
        (lambda m: m | {"alarms": ["fire"]}, "alarms.0: 'fire' is not one of"),
        (lambda m: m | {"player": ["1X"]}, "player.0: String should match pattern"),
        (lambda m: m | {"player": ["AS", "2S", "3S", "4S"]}, "player: Tuple should have at most 3 items"),
        (lambda m: m | {"roads": {"bead": "BPX"}}, "roads.bead: String should match pattern"),
        (lambda m: m | {"roads": {"bead": "BP", "pairs": "pz"}}, "roads.pairs: String should match pattern"),
        (lambda m: m | {"counts": m["counts"] | {"tie": -1}}, "counts.tie: Input should be greater than or equal"),
        (lambda m: m | {"journal": {"head": 1}}, "journal.acked: Field required"),
        (lambda m: m | {"result": m["result"] | {"winner": "house"}}, "result.winner: 'house' is not one of"),
        (lambda m: {k: v for k, v in m.items() if k != "result"}, "missing result (only a hidden coup"),
        (lambda m: m | {"due": "hidden"}, "a hidden coup shows no player, banker, result"),
        (lambda m: m | {"cards_dealt": None}, "cards_dealt is null only while a coup is hidden"),
    ],
)
def test_a_wrong_message_is_refused_by_the_parser_and_the_schema(
    validator: Draft202012Validator, change: Any, says: str
) -> None:
    bad = change(_good())
    with pytest.raises(StateError) as caught:
        parse_state(json.dumps(bad))
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert list(validator.iter_errors(bad)), "the schema took what the model refused"


def test_the_pairs_go_with_the_bead_road_and_an_older_table_sends_none() -> None:
    """A letter of ``pairs`` per coup of the bead road, or the message is refused (the schema cannot say that
    one: the parser does); a state without ``pairs`` (an older table) is read, its coups without pairs."""
    good = _good()
    with pytest.raises(StateError, match=r"roads: .*pairs has 1 letters for the bead road's 2 coups"):
        parse_state(json.dumps(good | {"roads": {"bead": "BP", "pairs": "p"}}))
    both = parse_state(json.dumps(good | {"roads": {"bead": "BTP", "pairs": "x.b"}})).roads
    assert both.results() == [
        {"winner": "banker", "player_pair": True, "banker_pair": True},
        {"winner": "tie", "player_pair": False, "banker_pair": False},
        {"winner": "player", "player_pair": False, "banker_pair": True},
    ]
    older = parse_state(json.dumps(good | {"roads": {"bead": "BP"}})).roads
    assert older.pairs is None
    assert [(r["player_pair"], r["banker_pair"]) for r in older.results()] == [(False, False)] * 2


def test_a_hidden_coup_with_cards_is_refused_and_without_is_taken(validator: Draft202012Validator) -> None:
    hidden = _hidden()
    assert parse_state(json.dumps(hidden)).to_dict() == hidden
    bad = hidden | {"player": ["9S"]}
    with pytest.raises(StateError, match="a hidden coup shows no player"):
        parse_state(json.dumps(bad))
    assert list(validator.iter_errors(bad))
    counted = hidden | {"cards_dealt": 4}  # the number of cards out would tell the squeeze
    with pytest.raises(StateError, match="a hidden coup does not say how many cards are out"):
        parse_state(json.dumps(counted))
    assert list(validator.iter_errors(counted))


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (b"not json", "not JSON"),
        (b"\xff", "not JSON"),
        (b"[]", "message: Input should be an object"),
        (b" " * (MAX_STATE_BYTES + 1), "more than a state message"),
    ],
)
def test_what_is_not_a_message_is_refused(payload: bytes, says: str) -> None:
    with pytest.raises(StateError) as caught:
        parse_state(payload)
    assert says in str(caught.value)


def test_the_model_is_frozen() -> None:
    message = parse_state(json.dumps(_good()))
    assert isinstance(message, TableStateMessage)
    with pytest.raises(ValueError, match="frozen"):
        message.shoe = 9


#: sha256 of every message of _messages() as the link publishes it (compact JSON, the stamp fixed), taken when
#: the link still built the message by hand: building it through the model left the wire byte for byte as it was.
#: Taken at record version 3: a message's ``v`` is the version the table speaks (4 added record kinds only), so
#: the test builds them at 3.
STATE_BYTES = "65e0156e39e404de0aac54f9b2680e31b4977bc4d7fa2f5af7a1f258cfdfef55"


def test_the_state_on_the_wire_is_byte_for_byte_what_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    import controller.link.floor_link

    monkeypatch.setattr(controller.link.floor_link, "utc_now", lambda: "2026-11-30T12:00:00.000+00:00")
    assert {m["v"] for m in _messages()} == {RECORD_VERSION}
    monkeypatch.setattr("controller.link.floor_link.RECORD_VERSION", 3)
    digest = hashlib.sha256()
    for message in _messages():
        digest.update(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    assert digest.hexdigest() == STATE_BYTES
