"""The record vocabulary: one codec for every input, derived records from notices, a pinned version."""

from typing import get_args

import pytest

from controller.game.cards import Card
from controller.game.chips import Chip, ChipStatus, SpotChips
from controller.game.records import (
    COUP_FIELDS,
    RECORD_VERSION,
    REPLAYED_KINDS,
    InputKind,
    RecordKind,
    Source,
    derived_records,
    input_body,
    input_from_body,
    input_kind,
    record_body,
    signature,
)
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    LineNoise,
    LinkChanged,
    NewShoePressed,
    ShoeProtocol,
    ShoeRebooted,
    TableInput,
    TableState,
    UnreadableCard,
    VoidPressed,
)
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot

CHIPS = SpotChips(
    (
        Chip("E004000000000001", 2500, ChipStatus.IN_PLAY),
        Chip("E004000000000002", 500, ChipStatus.RETIRED),
        Chip("E0040000000000FF", 0, ChipStatus.UNKNOWN),
    )
)

EVERY_INPUT: list[TableInput] = [
    CardDrawn(Card.parse("QS")),
    UnreadableCard(),
    CutCardOut(),
    DeclarePressed(),
    VoidPressed(),
    NewShoePressed(),
    LinkChanged(up=True),
    LinkChanged(up=False),
    ShoeRebooted(),
    ShoeProtocol(2),
    LineNoise(noisy=True),
    LineNoise(noisy=False),
    SpotSeen(3, Spot.BANKER, CHIPS),
    SpotSeen(14, Spot.COMMISSION, SpotChips()),
    SpotsSnapshot(((1, Spot.TIE, CHIPS), (9, Spot.DRAGON_7, SpotChips(CHIPS.chips[:1])))),
    SpotsSnapshot(()),
    ReaderLinkChanged(up=False),
    ReaderLinkChanged(up=True),
]


def test_every_table_input_type_has_a_kind_and_is_covered_here() -> None:
    types = set(get_args(TableInput))
    assert {type(e) for e in EVERY_INPUT} == types
    assert {input_kind(e).value for e in EVERY_INPUT} == REPLAYED_KINDS


@pytest.mark.parametrize("event", EVERY_INPUT, ids=repr)
def test_an_input_round_trips_through_its_body(event: TableInput) -> None:
    body = input_body(event, source=Source.SHOE, seq=7)
    assert body["kind"] == input_kind(event).value
    assert body["source"] == "shoe" and type(body["source"]) is str  # plain JSON, not an enum
    assert input_from_body(body) == event


def test_the_card_is_stored_by_its_canonical_token() -> None:
    assert input_body(CardDrawn(Card.parse("10h"))) == {"kind": "card", "card": "TH"}


@pytest.mark.parametrize("kind", [k for k in InputKind if not k.replayed])
def test_a_record_only_kind_replays_as_nothing(kind: InputKind) -> None:
    body = record_body(kind, detail="x")
    assert body == {"kind": kind.value, "detail": "x"}
    assert input_from_body(body) is None


def test_a_table_input_cannot_be_built_as_a_record_only_body() -> None:
    with pytest.raises(ValueError, match="card is a table input"):
        record_body(InputKind.CARD, card="QS")


def test_a_fact_cannot_overwrite_the_inputs_own_field() -> None:
    with pytest.raises(ValueError, match="'card'"):
        input_body(CardDrawn(Card.parse("QS")), card="AS")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"kind": "teleport"}, "unknown input kind 'teleport'"),
        ({}, "unknown input kind None"),
        ({"kind": "card"}, "card input without a good field"),
        ({"kind": "card", "card": "ZZ"}, "card input without a good field"),
        ({"kind": "shoe_protocol", "version": "two"}, "shoe_protocol input without a good field"),
        ({"kind": "spot", "seat": 1, "spot": "bankr", "chips": []}, "spot input without a good field"),
        ({"kind": "spot", "seat": "1", "spot": "banker", "chips": []}, "spot input without a good field"),
        ({"kind": "spot", "seat": 1, "spot": "banker", "chips": {}}, "spot input without a good field"),
        (
            {"kind": "spot", "seat": 1, "spot": "banker", "chips": [{"uid": "XYZ", "cents": 5, "status": "in_play"}]},
            "spot input without a good field",
        ),
        (
            {"kind": "spot", "seat": 1, "spot": "tie", "chips": [{"uid": "E004000000000001", "cents": 5}]},
            "spot input without a good field",
        ),
        ({"kind": "spots_snapshot", "spots": [{"seat": 1}]}, "spots_snapshot input without a good field"),
        ({"kind": "spots_snapshot", "spots": 3}, "spots_snapshot input without a good field"),
    ],
)
def test_a_bad_body_is_a_value_error_naming_it(body: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        input_from_body(body)


def test_derived_records_of_a_shoe_start_burns_coup_and_alarm() -> None:
    state = TableState()
    notices = state.apply(NewShoePressed())
    notices += state.apply(CardDrawn(Card.parse("2S")))  # exposed: burn 2 more
    notices += state.apply(CardDrawn(Card.parse("3S")))
    notices += state.apply(CardDrawn(Card.parse("4S")))
    for token in ("9H", "KD", "KS", "QS"):  # natural 9 against 0
        notices += state.apply(CardDrawn(Card.parse(token)))
    notices += state.apply(DeclarePressed())
    notices += state.apply(DeclarePressed())  # nothing to declare: an alarm
    kinds = [kind for kind, _ in derived_records(notices)]
    assert kinds == [
        RecordKind.SHOE,
        RecordKind.BURN,
        RecordKind.BURN,
        RecordKind.BURN,
        RecordKind.COUP,
        RecordKind.ALARM,
    ]
    coup = next(body for kind, body in derived_records(notices) if kind is RecordKind.COUP)
    assert set(COUP_FIELDS) - {"ts", "record"} <= set(coup)  # history's contract, filled by the daemon's record
    assert coup["winner"] == "player" and coup["player"] == ["9H", "KS"] and coup["natural"] is True


def test_the_vocabulary_is_pinned_to_its_version() -> None:
    # Changing a kind or a field changes the shape every journal, history and floor reader relies on:
    # bump RECORD_VERSION and pin the new signature here, in the same commit.
    assert (RECORD_VERSION, signature()) == (3, "d1eadd6ac4434aeb")
