"""One frozen class per record kind: the body of every record the table journals and the floor reads.

A record's envelope (seq, kind, the chain) is :class:`~controller.game.records.TableRecord`'s; its ``body`` is
one of these, by kind (:data:`BODIES`). Each class says every field, its type and its bounds, once:

* the table builds a body through it (the builders of :mod:`controller.game.records` construct the class and
  store :meth:`RecordBody.to_body`, the same JSON the journal always held: ``tests/test_record_bytes.py``
  pins it byte for byte);
* the floor reads a body through it (:meth:`RecordBody.parse`, or :func:`parse_body` by kind): a body that is
  not exactly its kind's shape is refused with a :class:`BodyError` whose one line names the kind, the field
  and the problem, and what passes is typed (``WagerBody.parse(body).stake``, never ``body.get("stake")``);
* its JSON Schema is generated from it (:meth:`RecordBody.json_schema`): ``docs/schemas/<kind>.schema.json``
  (``tools/record_schemas.py`` writes them; ``tests/test_record_schemas.py`` fails when they drift).

A field a body may leave out (``variance`` of the version 3 wagers written before it was added, a coup's
``set_aside``, an input's facts) is optional; :meth:`RecordBody.to_body` writes only the fields given, so an
absent field stays absent. A note (the journal's own) is open: its kinds carry what each note needs.

Pure: no I/O, no clock. The names (kinds, bets, spots, alarms) are the core's enums, by value.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from functools import cache
from typing import Annotated, Any, ClassVar, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from controller.game.approvals import APPROVING_ROLES, Action
from controller.game.approvals import RefusedWhy as ApprovalWhy
from controller.game.cash import MAX_BUY_IN_CENTS, Tender
from controller.game.chips import ChipStatus
from controller.game.kinds import InputKind, RecordKind, Source
from controller.game.payouts import Outcome
from controller.game.rules import Bet, CommissionCollection
from controller.game.seats import LeaveWhy
from controller.game.staff import OutWhy, RefusedWhy
from controller.game.table import Alarm
from controller.game.tray import MAX_TUBES
from controller.game.wagers import MAX_SEATS, BoxWhy, MispayKind, Spot
from floor_protocol.admission import INT_MAX, MAX_RECORD_BYTES

__all__ = [
    "BODIES",
    "SCHEMA_BASE",
    "AdvantageBody",
    "AdvantageClearedBody",
    "AlarmBody",
    "ApprovalAskedBody",
    "ApprovalBody",
    "ApprovalRefusedBody",
    "BadgeRefusedBody",
    "BodyError",
    "BurnBody",
    "BuyInBody",
    "CommissionBody",
    "CoupBody",
    "DealerInBody",
    "DealerOutBody",
    "GhostReadBody",
    "InputBody",
    "MispayBody",
    "MisreadBody",
    "NoteBody",
    "PastPostBody",
    "PlayerInBody",
    "PlayerOutBody",
    "PulledBetBody",
    "RecordBody",
    "SettlementBody",
    "ShoeBody",
    "WagerBody",
    "WagerRefusedBody",
    "parse_body",
]

_BUILDING = "building"
#: Where the schemas say they live (their ``$id``: ``<SCHEMA_BASE><kind>.schema.json``).
SCHEMA_BASE = "https://schemas.shoe-controller.invalid/v1/"

_CARD = r"^[A2-9TJQK][SHDC]$"
_UID = r"^[0-9A-F]{16}$"
_EXACT = r"^[0-9]+(/[0-9]+)?$"
_MAX_ITEMS = 4096  # any list in a body (a snapshot of a 14-seat layout has 140 spots at most)
_MAX_CENTS = 2**53  # an amount of money: exact in a double, and in JavaScript


def _names(values: tuple[str | None, ...]) -> AfterValidator:
    def check(value: str | None) -> str | None:
        if value not in values:
            raise ValueError(f"{str(value)[:40]!r} is not one of {', '.join(str(v) for v in values)}")
        return value

    return AfterValidator(check)


def _enum_values(enum: type[Enum]) -> tuple[str, ...]:
    return tuple(str(m.value) for m in enum)


def _enum(values: tuple[str | None, ...], description: str | None = None) -> Any:
    """The schema of a text field that is one of ``values``: an inline ``enum``."""
    return Field(json_schema_extra={"enum": list(values)}, description=description)


_BETS = _enum_values(Bet)
_SPOTS = _enum_values(Spot)
_ALARMS = tuple(a.name.lower() for a in Alarm)
_ALARM_TEXTS = _enum_values(Alarm)
_CHIP_STATUSES = _enum_values(ChipStatus)
_COLLECTIONS = _enum_values(CommissionCollection)
_OUTCOMES = _enum_values(Outcome)
_MISPAYS = _enum_values(MispayKind)
_WHYS = _enum_values(BoxWhy)
_LEAVE_WHYS = _enum_values(LeaveWhy)
_INPUT_KINDS = _enum_values(InputKind)
_TENDERS = _enum_values(Tender)
_SOURCES = _enum_values(Source)
_SHOE_EVENTS = ("start", "end")
_FAULT_EVENTS = ("raised", "cleared")
_NOTES = ("journal_restored", "journal_pruned")
_WINNERS = ("player", "banker", "tie", None)
_NATURAL_HANDS = ("player", "banker", "both", None)

Int = Annotated[int, Field(ge=-INT_MAX - 1, le=INT_MAX)]
Count = Annotated[int, Field(ge=0, le=INT_MAX)]
Number = Annotated[int, Field(ge=1, le=INT_MAX)]  # a shoe, a coup: 1, 2, 3 ...
Seat = Annotated[int, Field(ge=1, le=MAX_SEATS, description="the seat on the layout (1-14)")]
Cents = Annotated[int, Field(ge=0, le=_MAX_CENTS)]
Stake = Annotated[int, Field(ge=1, le=_MAX_CENTS, description="the wager as locked (integer cents)")]
Text = Annotated[str, Field(max_length=MAX_RECORD_BYTES)]
CardToken = Annotated[str, Field(pattern=_CARD, description="a card: rank A 2-9 T J Q K, suit S H D C")]
Uid = Annotated[str, Field(pattern=_UID, description="a chip's UID: 16 hex digits")]
Exact = Annotated[str, Field(pattern=_EXACT, description='an exact number as text: "11", "1/20"')]
Points = Annotated[int, Field(ge=0, le=9)]
Cards = Annotated[list[CardToken], Field(max_length=_MAX_ITEMS)]
BetName = Annotated[str, _enum(_BETS, "the wager, by its name in the ruleset"), _names(_BETS)]
SpotName = Annotated[str, _enum(_SPOTS, "a seat's spot: a wager, or its commission box"), _names(_SPOTS)]
AlarmName = Annotated[str, _enum(_ALARMS), _names(_ALARMS)]
AlarmText = Annotated[str, _enum(_ALARM_TEXTS, "what the dealer's display says"), _names(_ALARM_TEXTS)]
ChipStatusName = Annotated[str, _enum(_CHIP_STATUSES), _names(_CHIP_STATUSES)]
CollectionName = Annotated[str, _enum(_COLLECTIONS), _names(_COLLECTIONS)]
OutcomeName = Annotated[str, _enum(_OUTCOMES), _names(_OUTCOMES)]
MispayName = Annotated[str, _enum(_MISPAYS), _names(_MISPAYS)]
WhyName = Annotated[str, _enum(_WHYS), _names(_WHYS)]
LeaveWhyName = Annotated[str, _enum(_LEAVE_WHYS, "why the visit ended"), _names(_LEAVE_WHYS)]
PlayerRef = Annotated[
    str, Field(pattern=_UID, description="the player: the card's UID, the key of the floor's player registry")
]
InputKindName = Annotated[str, _enum(_INPUT_KINDS), _names(_INPUT_KINDS)]
SourceName = Annotated[str, _enum(_SOURCES, "where a press came from"), _names(_SOURCES)]
ShoeEvent = Annotated[str, _enum(_SHOE_EVENTS), _names(_SHOE_EVENTS)]
FaultEvent = Annotated[str, _enum(_FAULT_EVENTS), _names(_FAULT_EVENTS)]
NoteName = Annotated[str, _enum(_NOTES), _names(_NOTES)]
Hand = Annotated[list[CardToken], Field(max_length=3)]
TenderName = Annotated[str, _enum(_TENDERS, "what the player bought in with"), _names(_TENDERS)]
BuyInCents = Annotated[int, Field(ge=1, le=MAX_BUY_IN_CENTS, description="the buy-in (integer cents)")]


class _Part(BaseModel):
    """A part of a body: strict (no ``"3"`` for 3, no 1 for true), closed (no field it does not name), frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


class BodyError(ValueError):
    """A record body that is not its kind's; the message is one line naming the kind, the field and the problem."""


class RecordBody(_Part):
    """The body of one record kind (each kind's class below)."""

    #: The record kind whose body this is.
    kind_of: ClassVar[RecordKind]
    #: The schema's title.
    schema_title: ClassVar[str]
    #: The optional fields a body may hold as null; the other optional fields are absent or a value.
    nullable: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _absent_is_not_null(self) -> Self:
        for name in sorted(self.model_fields_set - self.nullable):
            if getattr(self, name) is None and name in _absent_or_value(type(self)):
                raise ValueError(f"{name} is left out or has a value, never null")
        return self

    def to_body(self) -> dict[str, Any]:
        """The body as the journal stores it: JSON-ready, the fields not given left out."""
        return self.model_dump(mode="json", exclude_unset=True)

    @classmethod
    def parse(cls, body: Mapping[str, Any]) -> Self:
        """A stored or received body as this class, or :class:`BodyError` naming the field and the problem."""
        if not isinstance(body, Mapping):
            raise BodyError(f"{cls.kind_of.value} body: not a JSON object but {type(body).__name__}")
        try:
            return cls.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            said = first["msg"].removeprefix("Value error, ")
            raise BodyError(f"{cls.kind_of.value} body: {where}: {said}{more}") from None

    @classmethod
    def read(cls, body: Mapping[str, Any]) -> Self | None:
        """:meth:`parse`, or None for a body that is not this kind's (a reader that skips what it cannot read)."""
        try:
            return cls.parse(body)
        except BodyError:
            return None

    @classmethod
    def build(cls, body: Mapping[str, Any]) -> dict[str, Any]:
        """The table's side: ``body`` checked as this kind's (types and bounds) and as the journal stores it.
        An input's facts the shell adds from the wire (:data:`INPUT_REQUIRED`) are checked when it is read."""
        return cls.model_validate(body, context=_BUILDING).to_body()

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The class as a JSON Schema (draft 2020-12): what ``docs/schemas/<kind>.schema.json`` holds."""
        schema = cls.model_json_schema()
        schema["title"] = cls.schema_title
        for name, prop in schema.get("properties", {}).items():
            prop.pop("title", None)
            if name in _absent_or_value(cls) and name not in cls.nullable:  # the value's schema, without null
                values = [s for s in prop.pop("anyOf") if s != {"type": "null"}]
                prop.pop("default", None)
                schema["properties"][name] = {**values[0], **prop} if len(values) == 1 else {"anyOf": values, **prop}
        for part in schema.get("$defs", {}).values():
            for prop in part.get("properties", {}).values():
                prop.pop("title", None)
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _schema_id(cls.kind_of), **schema}


@cache
def _absent_or_value(cls: type[RecordBody]) -> frozenset[str]:
    """The fields of ``cls`` that are optional with no value (``None``) when left out."""
    return frozenset(n for n, f in cls.model_fields.items() if not f.is_required() and f.default is None)


def _schema_id(kind: RecordKind) -> str:
    return f"{SCHEMA_BASE}{kind.value}.schema.json"


# -- the coup, the burn, the shoe, the alarm ---------------------------------------------------------------


class CoupBody(RecordBody):
    """A coup declared or voided, or cards set aside after the shoe ended (the fields of ``history --json``
    without ``ts`` and ``record``, which are the envelope's ``at`` and ``seq``)."""

    kind_of = RecordKind.COUP
    nullable = frozenset({"natural_hand"})
    schema_title = "The body of a coup record: a coup declared or voided, or cards set aside after the shoe ended"
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"declared": {"const": True}}},
                    "then": {
                        "required": [
                            "player",
                            "banker",
                            "player_total",
                            "banker_total",
                            "natural",
                            "player_pair",
                            "banker_pair",
                        ],
                        "properties": {"winner": {"enum": ["player", "banker", "tie"]}},
                    },
                },
                {
                    "if": {"properties": {"void": {"const": True}}},
                    "then": {"required": ["cards"], "properties": {"winner": {"const": None}}},
                },
            ]
        }
    )

    shoe: Number
    coup: Number | None = Field(description="null for cards set aside after the shoe ended")
    declared: bool
    void: bool
    misdraw: bool
    set_aside: bool = Field(default=False, description="cards drawn after the shoe ended, kept on the record")
    dummy_hand: Cards = Field(description="cards set aside (misdraws)")
    cards: Cards = Field(default_factory=list, description="a void coup's cards")
    player: Hand = Field(default_factory=list)
    banker: Hand = Field(default_factory=list)
    player_total: Points = 0
    banker_total: Points = 0
    winner: Annotated[str | None, _enum(_WINNERS), _names(_WINNERS)]
    natural: bool = False
    natural_hand: Annotated[str | None, _enum(_NATURAL_HANDS), _names(_NATURAL_HANDS)] = None
    player_pair: bool = False
    banker_pair: bool = False
    player_three_cards: bool = False
    banker_three_cards: bool = False
    margin: Points = 0

    @model_validator(mode="after")
    def _declared_or_void(self) -> Self:
        if self.declared and self.void:
            raise ValueError("a coup is declared or void, not both")
        if self.declared:
            missing = [
                k for k in ("player", "banker", "player_total", "banker_total") if k not in self.model_fields_set
            ]
            if missing or self.winner is None:
                raise ValueError(f"a declared coup without {', '.join(missing) or 'winner'}")
        if self.void and ("cards" not in self.model_fields_set or self.winner is not None):
            raise ValueError("a void coup has its cards and no winner")
        return self


class BurnBody(RecordBody):
    """One burned card (the exposed card included); an unreadable burn card is null."""

    kind_of = RecordKind.BURN
    schema_title = "The body of a burn record: one burned card"

    card: CardToken | None = Field(description="the card, or null for an unreadable burn card")
    exposed: bool = Field(description="the exposed card, which says how many are burned")


class ChipBody(_Part):
    """A chip on a spot, as the registry resolved it (a replay never needs the registry)."""

    uid: Uid
    cents: Cents = Field(description="its denomination (0 for an unknown chip)")
    status: ChipStatusName


Chips = Annotated[list[ChipBody], Field(max_length=_MAX_ITEMS)]


class CarriedPlayer(_Part):
    """A card a seat's reader keeps into a new shoe (version 4): whose, and whether its visit is open."""

    seat: Seat
    player_ref: PlayerRef
    playing: bool = Field(description="the visit is open (false: the card was left in the reader after it ended)")


class CarriedSpot(_Part):
    """The chips one spot keeps into a new shoe (a table with a bet-spot reader)."""

    seat: Seat
    spot: Annotated[str, Field(max_length=64)]
    chips: Chips
    ghosts: Annotated[list[Uid], Field(max_length=_MAX_ITEMS)] = Field(default_factory=list)


class DragonBonusBody(_Part):
    natural_win: Exact
    natural_tie_pushes: bool
    ladder: dict[Annotated[str, Field(pattern=r"^[1-9]$")], Exact] = Field(
        description="the pay by winning margin", json_schema_extra={"propertyNames": {"pattern": "^[1-9]$"}}
    )


class PaysBody(_Part):
    """Everything that prices a wager, exactly (fractions as text)."""

    banker_pays: Exact
    commission_rate: Exact
    player_pays: Exact
    tie_pays: Exact
    pair_pays: Exact
    dragon_7_pays: Exact
    panda_8_pays: Exact
    banker_six_pays: Exact | None
    banker_three_card_seven_pushes: bool
    tie_pushes_main_bets: bool
    commission_collection: CollectionName
    dragon_bonus: DragonBonusBody


class RulesBody(_Part):
    """The table's ruleset in a shoe's start record (:func:`controller.game.records.ruleset_body`)."""

    name: Text
    description: Text
    offered: Annotated[list[BetName], Field(max_length=len(Bet), json_schema_extra={"uniqueItems": True})] = Field(
        description="the wagers the table offers, main wagers included"
    )
    pays: PaysBody


class ShoeBody(RecordBody):
    """A shoe started (its decks, the table's ruleset, the chips it keeps on the layout) or ended."""

    kind_of = RecordKind.SHOE
    schema_title = "The body of a shoe record: a shoe started or ended"
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {"if": {"properties": {"event": {"const": "start"}}}, "then": {"required": ["decks"]}},
                {"if": {"properties": {"event": {"const": "end"}}}, "then": {"required": ["coups"]}},
            ]
        }
    )

    event: ShoeEvent
    shoe: Number
    decks: int | None = Field(default=None, ge=1, le=8, description="a start's decks")
    coups: Count | None = Field(default=None, description="an end's coups")
    rules: RulesBody | None = Field(default=None, description="a start's ruleset (a table that says it)")
    spots: Annotated[list[CarriedSpot], Field(max_length=_MAX_ITEMS)] = Field(
        default_factory=list, description="a start's chips kept on the layout (a table with a bet-spot reader)"
    )
    players: Annotated[list[CarriedPlayer], Field(max_length=_MAX_ITEMS)] = Field(
        default_factory=list, description="a start's cards kept in the seats' readers (absent: none; version 4)"
    )
    tray: CarriedTray | None = Field(
        default=None, description="a start's chip tray book, kept into the shoe (a table with a tray reader)"
    )

    @model_validator(mode="after")
    def _start_or_end(self) -> Self:
        needs = "decks" if self.event == "start" else "coups"
        if needs not in self.model_fields_set:
            raise ValueError(f"a shoe {self.event} without {needs}")
        return self


class AlarmBody(RecordBody):
    """An alarm raised: its name, the text the dealer sees, what happened, and the card when there is one."""

    kind_of = RecordKind.ALARM
    schema_title = "The body of an alarm record: an alarm raised"

    alarm: AlarmName
    text: AlarmText
    detail: Text
    card: CardToken | None = None


class NoteBody(RecordBody):
    """The journal's own notes. ``journal_restored``: the file was deleted while open and restored from the
    open connection (``reason``, ``head``). ``journal_pruned``: records up to ``through`` (with its ``hash``)
    were pruned (``shoes``, ``ack``, ``archive``; ``kept``: the newest ``link`` and ``line_noise`` input below
    the boundary, ``id``, ``body`` and ``since``, for a replay). A note is open: each carries its own facts."""

    kind_of = RecordKind.NOTE
    schema_title = "The body of a note record: the journal's own notes"
    model_config = ConfigDict(extra="allow")

    note: NoteName


# -- surveillance ------------------------------------------------------------------------------------------


class AdvantageBody(RecordBody):
    """A wager's exact player EV at a coup's betting time reached the surveillance threshold."""

    kind_of = RecordKind.ADVANTAGE
    schema_title = "The body of an advantage record: a wager's player EV reached the surveillance threshold"

    shoe: Number
    coup: Number = Field(description="the coup whose betting time it was")
    bet: BetName
    ev: float = Field(description="the wager's exact player EV per unit staked")
    cards_left: Count = Field(description="the cards left in the shoe")


class AdvantageClearedBody(AdvantageBody):
    """... and fell back below it, or its shoe ended (``shoe_ended``: the figures are the shoe's last)."""

    kind_of = RecordKind.ADVANTAGE_CLEARED
    schema_title = "The body of an advantage_cleared record: the wager's player EV fell back below the threshold"

    shoe_ended: bool = Field(
        default=True, description="the shoe ended (the figures are its last)", json_schema_extra={"const": True}
    )

    @model_validator(mode="after")
    def _ended_is_true(self) -> Self:
        if "shoe_ended" in self.model_fields_set and not self.shoe_ended:
            raise ValueError("shoe_ended is true or absent")
        return self


# -- the money (version 3) ----------------------------------------------------------------------------------


class WagerBody(RecordBody):
    """One wager locked at a coup's first card, with its exact expectation at the betting time."""

    kind_of = RecordKind.WAGER
    nullable = frozenset({"variance"})
    schema_title = (
        "The body of a wager record: one wager locked at a coup's first card, with its exact expectation at the "
        "betting time"
    )

    shoe: Number
    coup: Number = Field(description="the coup in its shoe")
    seat: Seat
    bet: BetName
    stake: Stake
    ev: float | None = Field(
        description="the wager's exact player EV per unit staked at the coup's betting time (null: not priced)"
    )
    theo_cents: float | None = Field(
        description="the house's theoretical win on the wager, -ev x stake, in cents rounded to a hundredth "
        "(null with ev)"
    )
    variance: float | None = Field(
        default=None,
        ge=0,
        description="the variance of the wager's net win per unit staked at the coup's betting time (the wager's "
        "variance is stake squared times it; null with ev; absent from version 3 records written before it was "
        "added)",
    )


class WagerRefusedBody(RecordBody):
    """A bet on a spot at the lock that breaks a table rule: to be returned."""

    kind_of = RecordKind.WAGER_REFUSED
    schema_title = "The body of a wager_refused record: a bet at the lock that breaks a table rule, to be returned"

    shoe: Number
    coup: Number
    seat: Seat
    bet: BetName
    cents: Cents = Field(description="what the spot held")
    text: Text = Field(description="the rule it breaks, in words")


class PastPostBody(RecordBody):
    """Chips added to (or swapped on) a locked spot before the declare."""

    kind_of = RecordKind.PAST_POST
    schema_title = "The body of a past_post record: chips added to or swapped on a locked spot before the declare"

    shoe: Number
    coup: Number
    seat: Seat
    bet: BetName
    locked_cents: Cents = Field(description="the spot as locked")
    seen_cents: Cents = Field(description="the spot as seen")


class PulledBetBody(PastPostBody):
    """Chips taken from a locked spot before the declare."""

    kind_of = RecordKind.PULLED_BET
    schema_title = "The body of a pulled_bet record: chips taken from a locked spot before the declare"


class SettlementBody(RecordBody):
    """One locked wager settled at the declare (every amount integer cents)."""

    kind_of = RecordKind.SETTLEMENT
    schema_title = "The body of a settlement record: one locked wager settled at the declare"

    shoe: Number
    coup: Number
    seat: Seat
    bet: BetName
    stake: Stake
    outcome: OutcomeName
    win: Cents = Field(description="paid to the player, beside the stake returned")
    commission: Cents = Field(description="commission taken at payout")
    net: Annotated[int, Field(ge=-_MAX_CENTS, le=_MAX_CENTS)] = Field(description="the player's net: + won, - lost")
    commission_owed: Cents = Field(description="commission put in the seat's box (collected at the shoe's end)")
    box: Cents = Field(description="the seat's commission box after it")


class MispayBody(RecordBody):
    """A payout check failed: underpay, overpay, a loser left."""

    kind_of = RecordKind.MISPAY
    schema_title = "The body of a mispay record: a payout check failed"

    shoe: Number
    coup: Number
    seat: Seat
    bet: BetName
    kind: MispayName
    expected_cents: Cents = Field(description="what the spot should hold")
    seen_cents: Cents = Field(description="what it held")


class CommissionBody(RecordBody):
    """A seat's commission box closed: owed, collected, uncollected (``over_collected``: above owed)."""

    kind_of = RecordKind.COMMISSION
    schema_title = "The body of a commission record: a seat's commission box closed"

    shoe: Number
    seat: Seat
    owed: Cents
    collected: Cents
    uncollected: Cents
    over_collected: Cents
    why: WhyName


class MisreadBody(RecordBody):
    """A locked spot changed and came back by the next snapshot (reader flicker)."""

    kind_of = RecordKind.MISREAD
    schema_title = "The body of a misread record: a locked spot changed and came back (reader flicker)"

    shoe: Number
    coup: Number
    seat: Seat
    bet: BetName
    locked_cents: Cents


class GhostReadBody(RecordBody):
    """A chip reported on a second spot while the first still held it."""

    kind_of = RecordKind.GHOST_READ
    schema_title = "The body of a ghost_read record: a chip reported on a second spot while the first held it"

    seat: Seat
    spot: SpotName
    uid: Uid
    owner_seat: Seat
    owner_spot: SpotName


# -- the players at the seats (version 4) --------------------------------------------------------------------


class PlayerInBody(RecordBody):
    """A player's visit at a seat began: their card came in at the seat's card reader."""

    kind_of = RecordKind.PLAYER_IN
    schema_title = "The body of a player_in record: a player's visit at a seat began (the card came in)"

    shoe: Number
    coup: Number = Field(description="the coup due when the card came in")
    seat: Seat
    player_ref: PlayerRef


class PlayerOutBody(PlayerInBody):
    """A player's visit at a seat ended: the card went out, another came in, or it was left in the reader."""

    kind_of = RecordKind.PLAYER_OUT
    schema_title = "The body of a player_out record: a player's visit at a seat ended, and why"

    coup: Number = Field(description="the coup due (or locked) when the visit ended")
    reason: LeaveWhyName
    note: Text | None = Field(default=None, description="in words, for a card left in a reader (seat_empty)")


# -- the cash at the table (version 4) -----------------------------------------------------------------------


class BuyInBody(RecordBody):
    """A buy-in taken at a seat: the amount, the tender, the player when carded, the shoe and coup it came in."""

    kind_of = RecordKind.BUY_IN
    nullable = frozenset({"player_ref"})
    schema_title = "The body of a buy_in record: a buy-in taken at a seat"

    shoe: Number
    coup: Number = Field(description="the coup being dealt when it came, or the next one between coups")
    seat: Seat
    cents: BuyInCents
    tender: TenderName
    player_ref: PlayerRef | None = Field(description="the seat's carded player (null: uncarded)")


# -- the staff at the table (version 4) ----------------------------------------------------------------------

StaffId = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$", description="the staff id (the registry's)")
]
Badge = Annotated[str, Field(pattern=r"^(?:[0-9A-F]{2}){4,10}$", description="a badge's card UID, upper-case hex")]
_ROLES = ("dealer", "supervisor")
_OUT_WHYS = _enum_values(OutWhy)
_REFUSED_WHYS = _enum_values(RefusedWhy)
DealingRole = Annotated[str, _enum(_ROLES, "the member's role on the staff list"), _names(_ROLES)]
OutWhyName = Annotated[str, _enum(_OUT_WHYS, "why the duty ended"), _names(_OUT_WHYS)]
RefusedWhyName = Annotated[str, _enum(_REFUSED_WHYS, "why the badge signed no one in"), _names(_REFUSED_WHYS)]


class DealerInBody(RecordBody):
    """A dealer on the table's staff list signed in with a badge at the dealer's position: on duty from now."""

    kind_of = RecordKind.DEALER_IN
    schema_title = "The body of a dealer_in record: a dealer signed in at the table (on duty from this record)"

    shoe: Number
    coup: Number = Field(description="the coup due when the badge came in")
    staff_id: StaffId
    role: DealingRole
    badge: Badge
    staff_as_of: Text = Field(description="the staff list the table verified it against (the registry's last change)")


class DealerOutBody(RecordBody):
    """A dealer's duty ended: the badge went out, or another dealer signed in."""

    kind_of = RecordKind.DEALER_OUT
    schema_title = "The body of a dealer_out record: the dealer on duty signed out, and why"

    shoe: Number
    coup: Number = Field(description="the coup due when the duty ended")
    staff_id: StaffId
    reason: OutWhyName


class BadgeRefusedBody(RecordBody):
    """A badge at the dealer's position that signed no one in (UNKNOWN BADGE on the dealer's display)."""

    kind_of = RecordKind.BADGE_REFUSED
    schema_title = "The body of a badge_refused record: a badge at the dealer's position signed no one in"

    shoe: Number
    coup: Number
    badge: Badge
    why: RefusedWhyName
    staff_as_of: Text = Field(description="the staff list the table looked in (empty: none verified yet)")


# -- what needs a supervisor (version 4) ---------------------------------------------------------------------

_ACTIONS = _enum_values(Action)
_APPROVING = tuple(sorted(APPROVING_ROLES))
_APPROVAL_WHYS = _enum_values(ApprovalWhy)
_APPROVAL_STEPS = ("ask", "pin")
ActionName = Annotated[str, _enum(_ACTIONS, "what needs a supervisor's approval"), _names(_ACTIONS)]
ApprovingRole = Annotated[str, _enum(_APPROVING, "the approver's role on the staff list"), _names(_APPROVING)]
ApprovalWhyName = Annotated[str, _enum(_APPROVAL_WHYS, "why the step was refused"), _names(_APPROVAL_WHYS)]
ApprovalStep = Annotated[str, _enum(_APPROVAL_STEPS, "an approval's step"), _names(_APPROVAL_STEPS)]


class ApprovalAskedBody(RecordBody):
    """The dealer asked for an action that needs a supervisor (VOID held, NEW SHOE pressed with a coup in progress or
    a commission box owing, RATE on the dealer screen): it waits for a badge and a PIN."""

    kind_of = RecordKind.APPROVAL_ASKED
    nullable = frozenset({"dealer"})
    schema_title = "The body of an approval_asked record: the dealer asked for an action a supervisor must approve"

    shoe: Number
    coup: Number = Field(description="the coup the action is for")
    action: ActionName
    dealer: StaffId | None = Field(description="the dealer on duty who asked (null: no one signed in)")
    seat: Seat | None = Field(default=None, description="rate_uncarded: the seat whose player is rated")
    uncollected_cents: Cents | None = Field(
        default=None, description="new_shoe: what the commission boxes would close uncollected (0: it voids a coup)"
    )
    card: CardToken | None = Field(default=None, description="key_card: the card the dealer keyed")


class ApprovalBody(RecordBody):
    """A supervisor approved the action with badge and PIN; the action's own record follows (a void's coup)."""

    kind_of = RecordKind.APPROVAL
    nullable = frozenset({"dealer"})
    schema_title = "The body of an approval record: a supervisor approved the action with badge and PIN"

    shoe: Number
    coup: Number = Field(description="the coup the action is for")
    action: ActionName
    approver: StaffId = Field(description="the supervisor (or pit manager) who approved")
    role: ApprovingRole
    dealer: StaffId | None = Field(description="the dealer on duty who asked (null: no one signed in)")
    staff_as_of: Text = Field(description="the staff list the badge and PIN were checked against")
    seat: Seat | None = Field(default=None, description="rate_uncarded: the seat whose player is rated")
    card: CardToken | None = Field(default=None, description="key_card: the card keyed, placed in the coup")


class ApprovalRefusedBody(RecordBody):
    """A step of a pending approval refused (the approval stays pending for another supervisor), or the
    request withdrawn by the dealer."""

    kind_of = RecordKind.APPROVAL_REFUSED
    nullable = frozenset({"staff_id"})
    schema_title = "The body of an approval_refused record: a step of a supervisor approval refused, or withdrawn"

    shoe: Number
    coup: Number = Field(description="the coup the action is for")
    action: ActionName
    why: ApprovalWhyName
    staff_id: StaffId | None = Field(
        description="whose badge or PIN (null: a badge not on the list); withdrawn: the dealer who asked"
    )
    badge: Badge | None = Field(default=None, description="the badge as read (left out: a PIN's verdict)")
    wrong_pins: Count = Field(description="wrong_pin, locked_out: the wrong PINs in a row so far (else 0)")
    staff_as_of: Text = Field(description="the staff list looked in (the registry's last change)")
    seat: Seat | None = Field(default=None, description="rate_uncarded: the seat whose player is rated")


# -- the chip tray (a tray reader; version 4) -----------------------------------------------------------------

Tube = Annotated[int, Field(ge=1, le=MAX_TUBES, description="a tube of the chip tray (1-16)")]
SignedCents = Annotated[int, Field(ge=-_MAX_CENTS, le=_MAX_CENTS)]


class DenominationBody(_Part):
    """A count of one denomination (a change: the count may be negative)."""

    cents: Annotated[int, Field(ge=1, le=_MAX_CENTS)] = Field(description="the denomination")
    count: Annotated[int, Field(ge=-INT_MAX, le=INT_MAX)] = Field(description="chips of it (a change: + more)")


Denominations = Annotated[list[DenominationBody], Field(max_length=_MAX_ITEMS)]


class TrayCountBody(RecordBody):
    """A coup's reconciliation: the chip tray's count held to the tray it must hold (controller.game.tray)."""

    kind_of = RecordKind.TRAY_COUNT
    schema_title = "The body of a tray_count record: the chip tray's count held to the expected tray after a coup"

    shoe: Number
    coup: Number = Field(description="the last coup declared since the last count (the coup due, when anchored)")
    expected_cents: Cents = Field(description="what the tray must hold: the anchor plus every flow since")
    counted_cents: Cents = Field(description="what the tray's reader counted, chips in play only")
    flow_cents: SignedCents = Field(
        description="what the coups since the last count moved into the tray (- out): losers and commission "
        "in, payouts and chips sold out"
    )
    variance_cents: SignedCents = Field(
        description="this count's own variance: counted - expected, less what it was at the last count"
    )
    denominations: Denominations = Field(description="the count per denomination, highest first")
    anchored: bool = Field(default=False, description="the tray's first count: the expected tray begins here")


class TrayVarianceBody(RecordBody):
    """A variance a full recount confirmed: the tray short (variance below 0) or over after a coup."""

    kind_of = RecordKind.TRAY_VARIANCE
    schema_title = "The body of a tray_variance record: the chip tray short or over after a coup, a recount confirmed"

    shoe: Number
    coup: Number
    variance_cents: SignedCents = Field(description="- short, + over")
    expected_cents: Cents
    counted_cents: Cents
    changed: Denominations = Field(description="how each denomination's count moved since the last count")


class CarriedTube(_Part):
    tube: Tube
    chips: Chips


class CarriedTray(_Part):
    """The chip tray's book a shoe keeps into the next (controller.game.tray.TrayBook.carried)."""

    counted: bool
    expected_cents: Cents | None
    discrepancy_cents: SignedCents
    flow_cents: SignedCents
    due: Annotated[list[Number], Field(min_length=2, max_length=2)] | None
    denominations: Denominations
    recount: bool
    recounted: bool
    misreads: Count
    alarm: Text | None
    tubes: Annotated[list[CarriedTube], Field(max_length=MAX_TUBES)]


# -- inputs --------------------------------------------------------------------------------------------------


class SnapshotSpot(_Part):
    seat: Seat = Field(description="a bet-spot reader's seat")
    spot: SpotName
    chips: Chips = Field(description="the chips the spot holds, as the registry resolved them")


class SnapshotTube(_Part):
    tube: Tube
    chips: Chips = Field(description="the chips the tube holds, as the registry resolved them")


#: The fields each input kind must carry (the others are facts it may carry).
INPUT_REQUIRED: dict[InputKind, tuple[str, ...]] = {
    InputKind.CARD: ("card",),
    InputKind.CARD_KEYED: ("card",),
    InputKind.LINK: ("up",),
    InputKind.SHOE_PROTOCOL: ("version",),
    InputKind.LINE_NOISE: ("noisy",),
    InputKind.HELLO: ("firmware_version", "serial_number", "protocol_version", "session_id"),
    InputKind.STATUS: ("flags",),
    InputKind.JOURNAL_FAULT: ("event", "alarm", "detail"),
    InputKind.NOISE: ("rejected", "bytes", "reasons", "seconds"),
    InputKind.MESSAGE: ("message",),
    InputKind.SHOE_REBOOTED: ("new_session",),
    InputKind.SPOT: ("seat", "spot", "chips"),
    InputKind.SPOTS_SNAPSHOT: ("spots",),
    InputKind.READER_LINK: ("up",),
    InputKind.SEAT_CARD: ("seat", "uid", "present"),
    InputKind.DEALER_CARD: ("uid", "present"),
    InputKind.BUY_IN: ("seat", "cents", "tender"),
    InputKind.APPROVAL: ("step", "action"),
    InputKind.READER_HELLO: ("firmware_version", "serial_number", "protocol_version", "session_id"),
    InputKind.READER_STATUS: ("flags",),
    InputKind.READER_MESSAGE: ("message",),
    InputKind.SNAPSHOT_REFUSED: ("snapshot", "detail"),
    InputKind.CLOCK: ("synchronised", "max_error_us", "detail"),
    InputKind.TUBE: ("tube", "chips"),
    InputKind.TRAY_SNAPSHOT: ("tubes",),
    InputKind.TRAY_LINK: ("up",),
    InputKind.TRAY_HELLO: ("firmware_version", "serial_number", "protocol_version", "session_id"),
    InputKind.TRAY_STATUS: ("flags",),
    InputKind.TRAY_MESSAGE: ("message",),
}
_Flags = Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=64)]
_Hex = Annotated[str, Field(pattern=r"^([0-9a-f]{2})*$", max_length=2 * MAX_RECORD_BYTES)]


class InputBody(RecordBody):
    """Something that reached the table. Table inputs (replayed after a restart): card, unreadable, card_keyed,
    cut_card, declare, void, new_shoe, link, shoe_rebooted, shoe_protocol, line_noise, and the bet-spot reader's spot,
    spots_snapshot, reader_link, seat_card. A record only: hello, status, journal_fault, noise, message,
    reader_hello, reader_status, reader_message, snapshot_refused, dealer_card, clock, a seat's buy_in, and a
    step of a supervisor approval (approval).
    Besides ``kind`` and its own fields an input carries facts about where it came from (``source``, ``seq``,
    ``detail``, ``raw`` ...)."""

    kind_of = RecordKind.INPUT
    nullable = frozenset({"old_session", "synchronised", "max_error_us", "player_ref"})
    schema_title = "The body of an input record (kind input): something that reached the table"
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {"if": {"properties": {"kind": {"const": k.value}}}, "then": {"required": list(fields)}}
                for k, fields in INPUT_REQUIRED.items()
            ]
        }
    )

    kind: InputKindName
    source: SourceName | None = None
    seq: Count | None = Field(default=None, description="the shoe's frame sequence number")
    detail: Text | None = None
    raw: _Hex | None = Field(default=None, description="the bytes of a damaged frame or line, hex")
    reason: Text | None = None
    card: CardToken | None = None
    up: bool | None = None
    version: Int | None = None
    noisy: bool | None = None
    flags: _Flags | None = None
    firmware_version: Text | None = None
    serial_number: Text | None = None
    protocol_version: Int | None = None
    session_id: Int | None = None
    old_session: Int | None = None
    new_session: Int | None = None
    event: FaultEvent | None = None
    alarm: AlarmName | None = None
    fault: Text | None = None
    rejected: Count | None = None
    bytes: Count | None = None
    reasons: dict[Annotated[str, Field(max_length=64)], Count] | None = None
    seconds: float | None = Field(default=None, ge=0)
    message: Text | None = None
    seat: Seat | None = Field(default=None, description="a bet-spot reader's seat")
    spot: SpotName | None = None
    chips: Chips | None = Field(
        default=None,
        description="the chips the spot holds, as the registry resolved them (a replay never needs the registry)",
    )
    spots: Annotated[list[SnapshotSpot | SpotName], Field(max_length=_MAX_ITEMS)] | None = Field(
        default=None,
        description="a spots_snapshot's spots (every spot not listed is empty), or the spots a reader's HELLO "
        "says it reads, by name",
    )
    uids: list[Uid] | dict[Annotated[str, Field(max_length=64)], list[Uid]] | None = Field(
        default=None,
        description="the UIDs as the reader sent them: a list for a spot, seat:spot -> list for a snapshot",
    )
    uid: Uid | None = Field(default=None, description="seat_card, dealer_card: the card's UID")
    present: bool | None = Field(default=None, description="seat_card, dealer_card: the card came in (false: out)")
    snapshot: Count | None = Field(default=None, description="a reader's snapshot number")
    reported: Count | None = Field(default=None, description="the spots a reader's SNAPSHOT_END counted")
    seats: Annotated[list[Seat], Field(max_length=MAX_SEATS)] | None = Field(
        default=None, description="the seats a reader's HELLO says it reads"
    )
    synchronised: bool | None = Field(
        default=None,
        description="clock: whether the kernel says the table's clock is synchronised (null: it could not be asked)",
    )
    max_error_us: Count | None = Field(default=None, description="clock: the kernel's bound on the clock's error, µs")
    cents: BuyInCents | None = Field(default=None, description="buy_in: the amount")
    tender: TenderName | None = None
    player_ref: PlayerRef | None = Field(default=None, description="buy_in: the seat's carded player (null: uncarded)")
    step: ApprovalStep | None = None
    action: ActionName | None = Field(default=None, description="approval: the action it is for")
    staff_id: StaffId | None = Field(default=None, description="approval (pin): whose PIN was checked")
    right: bool | None = Field(default=None, description="approval (pin): the PIN matched (never the PIN itself)")
    tube: Tube | None = None
    tubes: Annotated[list[SnapshotTube], Field(max_length=MAX_TUBES)] | int | None = Field(
        default=None,
        description="a tray_snapshot's tubes (every tube not listed is empty), or how many tubes a tray's HELLO "
        "says it has",
    )
    # approval (ask) of rate_uncarded: the seat is the bet-spot reader's seat field above

    @model_validator(mode="after")
    def _its_fields(self, info: ValidationInfo) -> Self:
        if info.context == _BUILDING:  # the table's own: the shell adds the wire's facts (a test may leave them out)
            return self
        missing = [k for k in INPUT_REQUIRED.get(InputKind(self.kind), ()) if k not in self.model_fields_set]
        if missing:
            raise ValueError(f"a {self.kind} input without {', '.join(missing)}")
        return self


#: The class of each record kind's body.
BODIES: dict[RecordKind, type[RecordBody]] = {
    cls.kind_of: cls
    for cls in (
        InputBody,
        CoupBody,
        BurnBody,
        ShoeBody,
        AlarmBody,
        NoteBody,
        AdvantageBody,
        AdvantageClearedBody,
        WagerBody,
        WagerRefusedBody,
        PastPostBody,
        PulledBetBody,
        SettlementBody,
        MispayBody,
        CommissionBody,
        MisreadBody,
        GhostReadBody,
        PlayerInBody,
        PlayerOutBody,
        BuyInBody,
        DealerInBody,
        DealerOutBody,
        BadgeRefusedBody,
        ApprovalAskedBody,
        ApprovalBody,
        ApprovalRefusedBody,
        TrayCountBody,
        TrayVarianceBody,
    )
}


def parse_body(kind: str, body: Mapping[str, Any]) -> RecordBody:
    """A record's body as its kind's class; :class:`BodyError` for an unknown kind or a bad body."""
    try:
        cls = BODIES[RecordKind(kind)]
    except ValueError:
        raise BodyError(f"unknown record kind {str(kind)[:40]!r}") from None
    return cls.parse(body)


# -- the envelope ---------------------------------------------------------------------------------------------

_HASH = r"^[0-9a-f]{64}$"


class _Envelope(_Part):
    """A journal record as it leaves the table (topic ``baccarat/<site>/<table>/record``): one record of a table's
    journal with what is needed to check it against the table's hash chain: hash = sha256 hex of prev followed
    by the JSON array [seq, at, kind, session, number, cause, canonical JSON of body] (compact separators,
    UTF-8). Canonical JSON: sorted keys, no spaces, UTF-8, no NaN. Read by
    :class:`~controller.game.records.TableRecord`; this model is its schema only."""

    model_config = ConfigDict(title="A journal record as it leaves the table (topic baccarat/<site>/<table>/record)")

    v: int = Field(
        ge=1,
        description="the record vocabulary's version (2 added the advantage kinds and the ruleset in a shoe's "
        "start record; 3 the bet-spot reader's inputs and the money's records; 4 the players, the buy-ins and the "
        "staff)",
    )
    table: str = Field(min_length=1, max_length=64, description="the table's id ([floor] table)")
    seq: int = Field(ge=1, le=INT_MAX, description="the record's journal id: 1, 2, 3 ... contiguous per table")
    kind: Annotated[str, _enum(tuple(k.value for k in RecordKind)), _names(tuple(k.value for k in RecordKind))]
    at: str = Field(json_schema_extra={"format": "date-time"}, description="when the record was written, UTC, ISO 8601")
    session: Int | None = Field(description="the shoe's session key of an input from the shoe")
    number: Int | None = Field(description="the shoe's event number of an input from the shoe")
    cause: Int | None = Field(description="for a derived record: the seq of the input it came from")
    prev: str = Field(pattern=_HASH, description="the previous record's hash (64 zeros before record 1)")
    hash: str = Field(pattern=_HASH)
    body: dict[str, Any] = Field(description="the record's body: its kind's (the kind's own schema)")
    sig: str | None = Field(
        default=None, max_length=256, description="the table key's Ed25519 signature over (table, seq, hash)"
    )


def envelope_schema(version: int) -> dict[str, Any]:
    """The record as published, as a JSON Schema: the envelope, and each kind's body by its kind's schema."""
    schema = _Envelope.model_json_schema()
    schema.pop("description", None)
    schema["description"] = " ".join((_Envelope.__doc__ or "").split()).split(" Read by")[0]
    for prop in schema["properties"].values():
        prop.pop("title", None)
    schema["properties"]["v"]["maximum"] = version
    schema["allOf"] = [
        {
            "if": {"properties": {"kind": {"const": kind.value}}},
            "then": {"properties": {"body": {"$ref": f"{kind.value}.schema.json"}}},
        }
        for kind in RecordKind
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_BASE}record.schema.json",
        **schema,
    }
