"""The retained ``state`` message: ``baccarat/<site>/<table>/state``, the table now, as JSON.

A table's floor link builds it from the newest view at most every 0.25 s (``controller.link.floor_link.state_message``);
the floor's pit view reads it (:func:`parse_state`). :class:`TableStateMessage` is its typed model: every
field, its type and its bounds. :func:`parse_state` is the floor's side: a payload longer than
:data:`MAX_STATE_BYTES`, not JSON, or not exactly this shape is refused with a :class:`StateError` whose
message names the field and the problem; nothing else reaches the pit. :func:`json_schema` is the same model
as a JSON Schema, which ``docs/schemas/state.schema.json`` holds (``tools/state_schema.py`` writes it;
``tests/floor_protocol/test_state.py`` checks the file, the table's messages and the refusals).

**Squeeze games** (``reveal = on_declare``): while a coup is dealt the table says ``"due": "hidden"`` and
``"cards_dealt": null`` (the table process applies the squeeze to everything it lets out, not even the number
of cards leaves it), and leaves out ``player``, ``banker`` and ``result``; otherwise all three are there (the
cards of the coup on the layout, and its result or null). The model holds the table to exactly that.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, model_validator

from controller.game.coup import Winner
from controller.game.records import RECORD_VERSION
from controller.game.roads import PAIR_LETTERS
from controller.game.shoe import MAX_DECKS
from controller.game.table import Alarm, Due
from floor_protocol.topics import LEVEL_PATTERN

__all__ = [
    "ALARM_NAMES",
    "DUE_NAMES",
    "HIDDEN",
    "MAX_STATE_BYTES",
    "SCHEMA_ID",
    "StateError",
    "TableStateMessage",
    "json_schema",
    "parse_state",
]

#: Longest ``state`` payload read (a real one is well under 1 KiB: the bead road of a shoe is about 80 letters).
MAX_STATE_BYTES = 8192
#: What ``due`` says while a coup is dealt in a squeeze game.
HIDDEN: Final = "hidden"
#: The values of ``due``: what the dealer must do now (the core's :class:`~controller.game.table.Due`), or hidden.
DUE_NAMES: tuple[str, ...] = (*(d.value for d in Due), HIDDEN)
#: The names in ``alarms`` (the core's :class:`~controller.game.table.Alarm`, lower case).
ALARM_NAMES: tuple[str, ...] = tuple(a.name.lower() for a in Alarm)
SCHEMA_ID = "https://schemas.shoe-controller.invalid/v1/state.schema.json"

_CARDS_IN_SHOE = 52 * MAX_DECKS
_MAX_COUNT = 10_000  # coups of a shoe, and any count of them (an eight-deck shoe deals about 80)
_MAX_SEQ = 2**63 - 1
_CARD = r"^[A2-9TJQK][SHDC]$"
_TIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$"
_LEVEL = f"^{LEVEL_PATTERN.pattern}$"  # one topic level, as the floor takes a site or table


def _one_of(names: tuple[str, ...]) -> AfterValidator:
    def check(value: str) -> str:
        if value not in names:
            raise ValueError(f"{value[:40]!r} is not one of {', '.join(names)}")
        return value

    return AfterValidator(check)


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(values)) != len(values):
        raise ValueError("names an alarm twice")
    return values


Card = Annotated[str, Field(pattern=_CARD, description="a card token: rank A 2-9 T J Q K, suit S H D C")]
Count = Annotated[int, Field(ge=0, le=_MAX_COUNT)]
Seq = Annotated[int, Field(ge=0, le=_MAX_SEQ)]
Points = Annotated[int, Field(ge=0, le=9)]
DueName = Annotated[str, Field(json_schema_extra={"enum": list(DUE_NAMES)}), _one_of(DUE_NAMES)]
AlarmName = Annotated[str, Field(json_schema_extra={"enum": list(ALARM_NAMES)}), _one_of(ALARM_NAMES)]
WinnerName = Annotated[
    str, Field(json_schema_extra={"enum": [w.value for w in Winner]}), _one_of(tuple(w.value for w in Winner))
]
NaturalHand = Annotated[
    str, Field(json_schema_extra={"enum": ["player", "banker", "both"]}), _one_of(("player", "banker", "both"))
]


class _Part(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Counts(_Part):
    """The declared coups of the shoe (voids are not counted) and how they came out."""

    coups: Count
    banker: Count
    player: Count
    tie: Count
    natural: Count
    player_pair: Count
    banker_pair: Count


class Roads(_Part):
    bead: Annotated[
        str, Field(pattern=r"^[BPT]*$", max_length=_MAX_COUNT, description="the bead road: B, P or T per coup")
    ]
    pairs: Annotated[
        str | None,
        Field(
            pattern=f"^[{''.join(PAIR_LETTERS.values())}]*$",
            max_length=_MAX_COUNT,
            description="the pairs of each coup of the bead road: . none, p Player pair, b Banker pair, x both; "
            "absent from older tables",
        ),
    ] = None

    @model_validator(mode="after")
    def _a_pair_letter_per_coup(self) -> Roads:
        if self.pairs is not None and len(self.pairs) != len(self.bead):
            raise ValueError(f"pairs has {len(self.pairs)} letters for the bead road's {len(self.bead)} coups")
        return self

    def results(self) -> list[dict[str, Any]]:
        """The bead road as results :func:`controller.game.roads.compute_roads` reads, with their pairs."""
        winners = {"B": "banker", "P": "player", "T": "tie"}
        pairs = self.pairs if self.pairs is not None else "." * len(self.bead)
        return [
            {"winner": winners[w], "player_pair": p in "px", "banker_pair": p in "bx"}
            for w, p in zip(self.bead, pairs, strict=True)
        ]


Cents = Annotated[int, Field(ge=0, le=2**53)]


class Limits(_Part):
    """The table's limits (``[table.limits]``), in cents: what the pit shows on the table's tile."""

    minimum: Cents = Field(description="the minimum Banker, Player or Tie wager")
    maximum: Cents = Field(description="the maximum Banker, Player or Tie wager")
    side_minimum: Cents = Field(description="the minimum side wager")
    side_maximum: Cents = Field(description="the maximum side wager")


class JournalMarks(_Part):
    head: Seq = Field(description="the seq of the table's newest journal record")
    acked: Seq = Field(description="the highest seq the floor has acknowledged")


class CoupOutcome(_Part):
    """The coup's result once it is complete (``CoupResult.to_dict``)."""

    player: tuple[Card, ...] = Field(min_length=2, max_length=3)
    banker: tuple[Card, ...] = Field(min_length=2, max_length=3)
    player_total: Points
    banker_total: Points
    winner: WinnerName
    natural: bool
    natural_hand: NaturalHand | None
    player_pair: bool
    banker_pair: bool
    player_three_cards: bool
    banker_three_cards: bool
    margin: Points


_SHOWN = ("player", "banker", "result")
#: ``player`` and ``banker`` in the schema: a list, never null (absent when hidden, which the schema's if/then says).
_HAND_SCHEMA = WithJsonSchema(
    {"type": "array", "items": {"type": "string", "pattern": _CARD}, "maxItems": 3, "description": "absent when hidden"}
)


class TableStateMessage(_Part):
    """The retained ``state`` message (see the module's notes)."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        title="The retained state message of a table: the table now",
        json_schema_extra={
            "if": {"properties": {"due": {"const": HIDDEN}}},
            "then": {
                "not": {"anyOf": [{"required": [k]} for k in _SHOWN]},
                "properties": {"cards_dealt": {"type": "null"}},
            },
            "else": {"required": list(_SHOWN), "properties": {"cards_dealt": {"type": "integer"}}},
        },
    )

    v: int = Field(ge=1, le=RECORD_VERSION, description="the record vocabulary's version")
    site: str = Field(pattern=_LEVEL, description="the site's id: one topic level")
    table: str = Field(pattern=_LEVEL, description="the table's id: one topic level, its topic's")
    at: str = Field(pattern=_TIME, description="when the table built it: ISO 8601 with its UTC offset")
    shoe: int = Field(ge=0, le=2**62, description="the shoe's number (0 before the first shoe)")
    coup: int = Field(ge=0, le=2**62, description="the coup in progress, or next to open")
    due: DueName = Field(description="what the dealer must do now; hidden while a squeeze coup is dealt")
    cards_dealt: int | None = Field(
        ge=0, le=6, description="cards of the coup on the layout; null while a squeeze coup is dealt"
    )
    cards_remaining: int = Field(ge=0, le=_CARDS_IN_SHOE, description="cards still in the shoe by count")
    cut_card_out: bool
    last_coup: bool
    alarms: Annotated[
        tuple[AlarmName, ...],
        Field(max_length=len(ALARM_NAMES), json_schema_extra={"uniqueItems": True}),
        AfterValidator(_unique),
    ]
    counts: Counts
    roads: Roads
    journal: JournalMarks
    limits: Limits | None = Field(default=None, description="the table's limits in cents; absent from older tables")
    player: Annotated[tuple[Card, ...] | None, Field(max_length=3), _HAND_SCHEMA] = None
    banker: Annotated[tuple[Card, ...] | None, Field(max_length=3), _HAND_SCHEMA] = None
    result: CoupOutcome | None = Field(default=None, description="null until the coup is complete; absent when hidden")

    @model_validator(mode="after")
    def _hidden_or_shown(self) -> TableStateMessage:
        shown = [k for k in _SHOWN if k in self.model_fields_set]
        if self.due == HIDDEN and shown:
            raise ValueError(f"a hidden coup shows no {', '.join(shown)}")
        if self.due == HIDDEN and self.cards_dealt is not None:
            raise ValueError("a hidden coup does not say how many cards are out")
        if self.due != HIDDEN:
            if self.cards_dealt is None:
                raise ValueError("cards_dealt is null only while a coup is hidden")
            missing = [k for k in _SHOWN if k not in shown]
            if missing:
                raise ValueError(f"missing {', '.join(missing)} (only a hidden coup leaves them out)")
            if self.player is None or self.banker is None:
                raise ValueError("player and banker are lists of cards")
        return self

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, the fields a hidden coup leaves out left out."""
        return self.model_dump(mode="json", exclude_unset=True)


class StateError(ValueError):
    """A ``state`` payload that is not one; the message is one line naming the field and the problem."""


def parse_state(payload: bytes | bytearray | str) -> TableStateMessage:
    """The floor's side: the payload as a :class:`TableStateMessage`, or :class:`StateError` with the reason."""
    if len(payload) > MAX_STATE_BYTES:
        raise StateError(f"{len(payload)} bytes, more than a state message ({MAX_STATE_BYTES})")
    try:
        return TableStateMessage.model_validate_json(payload, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise StateError("not JSON") from None
        where = ".".join(str(p) for p in first["loc"]) or "message"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise StateError(f"{where}: {first['msg'].removeprefix('Value error, ')}{more}") from None


def json_schema() -> dict[str, Any]:
    """The model as a JSON Schema (draft 2020-12): what ``docs/schemas/state.schema.json`` holds."""
    schema = TableStateMessage.model_json_schema()
    for key in _SHOWN:  # absent is not null: the if/then/else says when they are there
        schema["properties"][key].pop("default", None)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}
