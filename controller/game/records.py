"""The table's record vocabulary: one typed, versioned set of records from the wire to the journal to the floor.

Every record the table keeps is built here and read back here, nowhere else:

* **inputs** (journal kind ``input``): what reached the table, in order. A body carries ``kind`` (an
  :class:`InputKind`), the input's own fields (``card``, ``up``, ``version``) and facts about where it came
  from (``source``, the shoe's ``seq``, a ``detail``, the ``raw`` bytes of a damaged frame ...). The kinds
  in :data:`REPLAYED_KINDS` are table inputs: a restart replays them through
  :meth:`~controller.game.table.TableState.apply` (:func:`input_from_body`); the others (``hello``,
  ``status``, ``journal_fault``, ``noise``) are a record only.
* **derived records** (journal kinds ``coup``, ``burn``, ``shoe``, ``alarm``): what an input gave rise
  to, built from the pure core's notices by :func:`derived_records` and stored in the same transaction as
  their input. A ``coup`` body is what ``shoe-controller history --json`` prints (:data:`COUP_FIELDS`).
  A shoe's ``start`` record carries the table's ruleset (:func:`ruleset_body`), so that the journal alone
  prices every wager (:mod:`controller.game.edges`).
* **the cash** (``buy_in``): a buy-in taken at a seat, derived from its ``buy_in`` input (a record only:
  :func:`buy_in_input`) with the shoe and coup (:func:`buy_in_body`, :data:`BUY_IN_FIELDS`); the floor's cash
  log reads them.
* **the staff** (``dealer_in``, ``dealer_out``, ``badge_refused``): the dealer on duty signed in or out with a
  badge at the dealer's position, or a badge refused (:func:`staff_record`, :data:`STAFF_FIELDS`; the pure rules
  are :mod:`controller.game.staff`'s). Derived from the ``dealer_card`` input (a record only).
* **supervisor approvals** (``approval_asked``, ``approval``, ``approval_refused``): what needs a supervisor
  (a void) asked, approved with badge and PIN, or a step refused (:func:`approval_record`,
  :data:`APPROVAL_FIELDS`; the rules are :mod:`controller.game.approvals`'s). Derived from the ``approval``
  input (the ask, a PIN's verdict: :func:`approval_input`) or the ``dealer_card`` input (a badge).
* **surveillance records** (``advantage``, ``advantage_cleared``): a wager's exact player expectation at a
  coup's betting time reached the threshold, or fell back below it (:data:`ADVANTAGE_FIELDS`; built by
  :class:`controller.game.edges.EdgeWatch`, stored with the input after which the betting time came).

The vocabulary is versioned by :data:`RECORD_VERSION`. A journal written by this version holds bodies of
this shape; the floor link puts the version in every record it publishes. Adding, removing or renaming a
kind or a field is a new version: a test pins :func:`signature` to make that a conscious step.

Pure: no I/O, no clock. Bodies are plain JSON-ready dicts (the journal hashes their canonical JSON).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

from controller.game.approvals import Action, ApprovalAsked, ApprovalRefused, Approved
from controller.game.bodies import (
    BODIES,
    AdvantageBody,
    AdvantageClearedBody,
    AlarmBody,
    ApprovalAskedBody,
    ApprovalBody,
    ApprovalRefusedBody,
    BadgeRefusedBody,
    BurnBody,
    BuyInBody,
    CoupBody,
    DealerInBody,
    DealerOutBody,
    InputBody,
    PlayerInBody,
    PlayerOutBody,
    ShoeBody,
    WagerBody,
)
from controller.game.cards import Card
from controller.game.cash import BuyIn, BuyInTaken, Tender
from controller.game.chips import Chip, ChipStatus, SpotChips, format_uid, parse_uid
from controller.game.kinds import InputKind as InputKind  # the vocabulary's names, here as always
from controller.game.kinds import RecordKind as RecordKind
from controller.game.kinds import Source as Source
from controller.game.rules import Bet, CommissionCollection, DragonBonus, Ruleset
from controller.game.seats import PlayerIn, PlayerOut, SeatCard
from controller.game.staff import BadgeRefused, DealerIn, DealerOut
from controller.game.table import (
    AlarmRaised,
    BurnCard,
    CardDrawn,
    CardKeyed,
    CardsSetAside,
    CoupDeclared,
    CoupVoided,
    CutCardOut,
    DeclarePressed,
    LineNoise,
    LinkChanged,
    NewShoePressed,
    Notice,
    ShoeEnded,
    ShoeProtocol,
    ShoeRebooted,
    ShoeStarted,
    TableInput,
    UnreadableCard,
    VoidPressed,
)
from controller.game.tray import TrayCounted, TrayLinkChanged, TraySnapshot, TrayStill, TrayVarianceFound, TubeSeen
from controller.game.wagers import (
    BoxClosed,
    GhostRead,
    Mispay,
    Misread,
    PastPost,
    PulledBet,
    ReaderLinkChanged,
    Spot,
    SpotSeen,
    SpotsSnapshot,
    WagerRefused,
    WagerSettled,
    WagersLocked,
)
from floor_protocol.admission import DEFAULT_LIMITS, AdmissionError, Limits, admit_json, check_record

#: The version of the record shapes below (bump it with any change to a kind or a field).
RECORD_VERSION = 4


_KIND_OF_INPUT: dict[type, InputKind] = {
    CardDrawn: InputKind.CARD,
    UnreadableCard: InputKind.UNREADABLE,
    CardKeyed: InputKind.CARD_KEYED,
    CutCardOut: InputKind.CUT_CARD,
    DeclarePressed: InputKind.DECLARE,
    VoidPressed: InputKind.VOID,
    NewShoePressed: InputKind.NEW_SHOE,
    LinkChanged: InputKind.LINK,
    ShoeRebooted: InputKind.SHOE_REBOOTED,
    ShoeProtocol: InputKind.SHOE_PROTOCOL,
    LineNoise: InputKind.LINE_NOISE,
    SpotSeen: InputKind.SPOT,
    SpotsSnapshot: InputKind.SPOTS_SNAPSHOT,
    ReaderLinkChanged: InputKind.READER_LINK,
    SeatCard: InputKind.SEAT_CARD,
    TubeSeen: InputKind.TUBE,
    TraySnapshot: InputKind.TRAY_SNAPSHOT,
    TrayLinkChanged: InputKind.TRAY_LINK,
    TrayStill: InputKind.TRAY_STILL,
}
_INPUT_OF_KIND = {kind: cls for cls, kind in _KIND_OF_INPUT.items()}

#: Input kinds that are table inputs: a restart replays them (as strings, for the journal's queries).
REPLAYED_KINDS: frozenset[str] = frozenset(k.value for k in _INPUT_OF_KIND)

#: The table inputs whose effect a new shoe keeps: they are about the line to the shoe, not the game (the
#: line alarms LINK DOWN and NOISY LINE stand through NEW SHOE). A replay that starts at the input which
#: started the newest shoe first reads the newest input of each of these kinds before it
#: (``TableLoop.replay``), so retention never prunes those inputs (``Journal.prunable``).
#: ``tests/journal/test_kept_across_shoes.py`` checks the list against what the state machine keeps, and both uses.
#: The reader's link is one of them; the spots' readings are not: a new shoe forgets them, and the reader's
#: next snapshot (long before the burn is done) tells them again (:class:`~controller.game.wagers.WagerBook`).
KEPT_ACROSS_SHOES: tuple[InputKind, ...] = (
    InputKind.LINK,
    InputKind.LINE_NOISE,
    InputKind.READER_LINK,
    InputKind.TRAY_LINK,
)

#: The fields each input carries besides ``kind`` (the facts about where it came from are open).
_INPUT_FIELDS: dict[InputKind, tuple[str, ...]] = {
    InputKind.CARD: ("card",),
    InputKind.CARD_KEYED: ("card",),
    InputKind.LINK: ("up",),
    InputKind.SHOE_PROTOCOL: ("version",),
    InputKind.LINE_NOISE: ("noisy",),
    InputKind.SPOT: ("seat", "spot", "chips"),
    InputKind.SPOTS_SNAPSHOT: ("spots",),
    InputKind.READER_LINK: ("up",),
    InputKind.SEAT_CARD: ("seat", "uid", "present"),
    InputKind.TUBE: ("tube", "chips"),
    InputKind.TRAY_SNAPSHOT: ("tubes",),
    InputKind.TRAY_LINK: ("up",),
}

#: A chip in a spot input's ``chips``: its UID (16 hex digits), denomination and registry status, so that a
#: replay never needs the registry.
CHIP_FIELDS = ("uid", "cents", "status")
#: A spot in a ``spots_snapshot`` input's ``spots``.
SNAPSHOT_SPOT_FIELDS = ("seat", "spot", "chips")


def _chips_body(chips: SpotChips) -> list[dict[str, Any]]:
    return [{"uid": c.uid, "cents": c.cents, "status": c.status.value} for c in chips.chips]


def _chips_from(value: Any) -> SpotChips:
    if not isinstance(value, list):
        raise ValueError("chips is not a list")
    out = []
    for item in value:
        cents = item["cents"]
        if isinstance(cents, bool) or not isinstance(cents, int) or cents < 0:
            raise ValueError(f"chip cents {cents!r:.20}")
        out.append(Chip(format_uid(parse_uid(item["uid"])), cents, ChipStatus(item["status"])))
    return SpotChips(tuple(out))


def _seat_from(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"seat {value!r:.20}")
    return value


def input_kind(table_input: TableInput) -> InputKind:
    return _KIND_OF_INPUT[type(table_input)]


def input_body(table_input: TableInput, **facts: Any) -> dict[str, Any]:
    """The journal body of a table input, with ``facts`` (source, seq, detail, raw ...) beside its fields."""
    body: dict[str, Any] = {"kind": input_kind(table_input).value}
    if isinstance(table_input, CardDrawn | CardKeyed):
        body["card"] = table_input.card.token
    elif isinstance(table_input, LinkChanged):
        body["up"] = table_input.up
    elif isinstance(table_input, ShoeProtocol):
        body["version"] = table_input.version
    elif isinstance(table_input, LineNoise):
        body["noisy"] = table_input.noisy
    elif isinstance(table_input, SpotSeen):
        body |= {"seat": table_input.seat, "spot": table_input.spot.value, "chips": _chips_body(table_input.chips)}
    elif isinstance(table_input, SpotsSnapshot):
        body["spots"] = [
            {"seat": seat, "spot": spot.value, "chips": _chips_body(chips)} for seat, spot, chips in table_input.spots
        ]
    elif isinstance(table_input, ReaderLinkChanged):
        body["up"] = table_input.up
    elif isinstance(table_input, SeatCard):
        body |= {"seat": table_input.seat, "uid": table_input.uid, "present": table_input.present}
    elif isinstance(table_input, TubeSeen):
        body |= {"tube": table_input.tube, "chips": _chips_body(table_input.chips)}
    elif isinstance(table_input, TraySnapshot):
        body["tubes"] = [{"tube": tube, "chips": _chips_body(chips)} for tube, chips in table_input.tubes]
    elif isinstance(table_input, TrayLinkChanged):
        body["up"] = table_input.up
    return InputBody.build(_with_facts(body, facts))


def record_body(kind: InputKind, **facts: Any) -> dict[str, Any]:
    """The journal body of an input that is a record only (``hello``, ``status``, ``journal_fault`` ...)."""
    if kind.replayed:
        raise ValueError(f"{kind.value} is a table input: build it with input_body()")
    return InputBody.build(_with_facts({"kind": kind.value}, facts))


def _with_facts(body: dict[str, Any], facts: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in facts.items():
        if key in body:
            raise ValueError(f"fact {key!r} would overwrite the body's own field")
        body[key] = value.value if isinstance(value, StrEnum) else value
    return body


def input_from_body(body: Mapping[str, Any]) -> TableInput | None:
    """The table input a stored body carries, or None for a record-only kind.

    Raises ValueError naming an unknown kind or a missing or bad field (a journal from a newer version)."""
    raw_kind = body.get("kind")
    try:
        kind = InputKind(str(raw_kind))
    except ValueError:
        raise ValueError(f"unknown input kind {raw_kind!r}") from None
    cls = _INPUT_OF_KIND.get(kind)
    if cls is None:
        return None
    try:
        if cls is CardDrawn:
            return CardDrawn(Card.parse(str(body["card"])))
        if cls is CardKeyed:
            return CardKeyed(Card.parse(str(body["card"])))
        if cls is LinkChanged:
            return LinkChanged(bool(body["up"]))
        if cls is ShoeProtocol:
            return ShoeProtocol(int(body["version"]))
        if cls is LineNoise:
            return LineNoise(bool(body["noisy"]))
        if cls is SpotSeen:
            return SpotSeen(_seat_from(body["seat"]), Spot(body["spot"]), _chips_from(body["chips"]))
        if cls is SpotsSnapshot:
            return SpotsSnapshot(
                tuple((_seat_from(s["seat"]), Spot(s["spot"]), _chips_from(s["chips"])) for s in body["spots"])
            )
        if cls is ReaderLinkChanged:
            return ReaderLinkChanged(bool(body["up"]))
        if cls is SeatCard:
            present = body["present"]
            if not isinstance(present, bool):
                raise ValueError(f"present {present!r:.20}")
            return SeatCard(_seat_from(body["seat"]), str(body["uid"]), present)
        if cls is TubeSeen:
            return TubeSeen(_seat_from(body["tube"]), _chips_from(body["chips"]))
        if cls is TraySnapshot:
            return TraySnapshot(tuple((_seat_from(t["tube"]), _chips_from(t["chips"])) for t in body["tubes"]))
        if cls is TrayLinkChanged:
            return TrayLinkChanged(bool(body["up"]))
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(f"{kind.value} input without a good field: {exc}") from None
    return cls()  # type: ignore[no-any-return]


# -- derived records ---------------------------------------------------------------------------------------

#: The coup record's fields in ``history --json`` order (a contract other tools script against), with the
#: value a record that lacks the field reads as. Further fields the daemon stored follow.
COUP_FIELDS: dict[str, Any] = {
    "shoe": None,
    "coup": None,
    "ts": None,
    "player": [],
    "banker": [],
    "player_total": None,
    "banker_total": None,
    "winner": None,
    "natural": False,
    "player_pair": False,
    "banker_pair": False,
    "declared": False,
    "void": False,
    "misdraw": False,
    "dummy_hand": [],
    "record": None,
}


def shape_coup(coup: Mapping[str, Any]) -> dict[str, Any]:
    """A coup as ``history --json`` prints it: the :data:`COUP_FIELDS` in order, missing ones filled with their
    default, then the further fields the record holds (the table's and the floor's ``history`` both use it)."""
    out = {name: coup.get(name, copy.deepcopy(default)) for name, default in COUP_FIELDS.items()}
    out.update((k, v) for k, v in coup.items() if k not in out)
    return out


def _tokens(cards: Iterable[Card]) -> list[str]:
    return [c.token for c in cards]


def coup_body(notice: CoupDeclared | CoupVoided | CardsSetAside) -> dict[str, Any]:
    """The ``coup`` record of a declared or voided coup, or of cards set aside after the shoe ended."""
    if isinstance(notice, CardsSetAside):
        return CoupBody(
            shoe=notice.shoe_number,
            coup=None,
            declared=False,
            void=True,
            set_aside=True,
            misdraw=True,
            dummy_hand=_tokens(notice.cards),
            cards=[],
            winner=None,
        ).to_body()
    body: dict[str, Any] = {
        "shoe": notice.shoe_number,
        "coup": notice.coup_number,
        "declared": isinstance(notice, CoupDeclared),
        "void": isinstance(notice, CoupVoided),
        "misdraw": bool(notice.dummy_hand),
        "dummy_hand": _tokens(notice.dummy_hand),
    }
    if isinstance(notice, CoupDeclared):
        body |= notice.result.to_dict()
    else:
        body |= {"cards": _tokens(notice.cards), "winner": None}
    return CoupBody.parse(body).to_body()


def derived_records(
    notices: Iterable[Notice],
    ruleset: Ruleset | None = None,
    edges: Mapping[str, float] | None = None,
    variances: Mapping[str, float] | None = None,
) -> list[tuple[RecordKind, dict[str, Any]]]:
    """The journal's derived records for these notices: coups, burns, shoe start and end, alarms, and the
    money's records (:func:`money_record`). A shoe's start record carries ``ruleset`` (the table's game and
    the wagers it offers) under ``rules`` when given. ``edges`` are the player EVs per unit of the offered
    wagers at the betting time (by :class:`~controller.game.rules.Bet` name,
    :attr:`~controller.game.edges.EdgeWatch.betting_evs`): a ``wager`` record carries its own, and its
    ``variance`` from ``variances`` (:attr:`~controller.game.edges.EdgeWatch.betting_variances`)."""
    out: list[tuple[RecordKind, dict[str, Any]]] = []
    for n in notices:
        if isinstance(n, WagersLocked):
            out += [(RecordKind.WAGER, wager_body(n, i, edges, variances)) for i in range(len(n.wagers))]
            continue
        money = money_record(n) or player_record(n) or staff_record(n) or approval_record(n)
        if money is not None:
            out.append(money)
        elif isinstance(n, CoupDeclared | CoupVoided | CardsSetAside):
            out.append((RecordKind.COUP, coup_body(n)))
        elif isinstance(n, BurnCard):
            burn = BurnBody(card=None if n.card is None else n.card.token, exposed=n.exposed)
            out.append((RecordKind.BURN, burn.to_body()))
        elif isinstance(n, ShoeStarted):
            start: dict[str, Any] = {"event": "start", "shoe": n.shoe_number, "decks": n.decks}
            if ruleset is not None:
                start["rules"] = ruleset_body(ruleset)
            if n.spots:  # a table with a bet-spot reader: the chips the new shoe keeps on the layout
                start["spots"] = [dict(item) for item in n.spots]
            if n.players:  # cards in the seats' readers: the visits the new shoe keeps
                start["players"] = [dict(item) for item in n.players]
            if n.tray is not None:  # a table with a tray reader: the tray's book the new shoe keeps
                start["tray"] = dict(n.tray)
            out.append((RecordKind.SHOE, ShoeBody.parse(start).to_body()))
        elif isinstance(n, BuyInTaken):
            out.append((RecordKind.BUY_IN, buy_in_body(n)))
        elif isinstance(n, ShoeEnded):
            out.append((RecordKind.SHOE, ShoeBody(event="end", shoe=n.shoe_number, coups=n.coups).to_body()))
        elif isinstance(n, AlarmRaised):
            alarm = {"alarm": n.alarm.name.lower(), "text": n.alarm.value, "detail": n.detail}
            if n.card is not None:
                alarm["card"] = n.card.token
            out.append((RecordKind.ALARM, AlarmBody.parse(alarm).to_body()))
    return out


# -- the money's records (version 3) ------------------------------------------------------------------------

#: Each money record's fields, in order (``bet`` is the wager's :class:`~controller.game.rules.Bet` name, every
#: amount integer cents). A ``wager`` record's ``ev`` is the wager's exact player EV per unit staked at the
#: coup's betting time (None when the table did not price it) and ``theo_cents`` the house's theoretical win
#: on it, ``-ev x stake``, a float rounded to a hundredth of a cent (None with ``ev``), and ``variance`` the
#: variance of its net win per unit staked at the same time (None with ``ev``; the wager's variance is
#: ``stake**2`` x it; absent from the version 3 records written before it was added). A ``commission``
#: record's ``why`` is ``shoe_end`` or ``seat_left``; ``over_collected`` is what was collected above owed.
MONEY_FIELDS: dict[RecordKind, tuple[str, ...]] = {
    RecordKind.WAGER: ("shoe", "coup", "seat", "bet", "stake", "ev", "theo_cents", "variance"),
    RecordKind.WAGER_REFUSED: ("shoe", "coup", "seat", "bet", "cents", "text"),
    RecordKind.PAST_POST: ("shoe", "coup", "seat", "bet", "locked_cents", "seen_cents"),
    RecordKind.PULLED_BET: ("shoe", "coup", "seat", "bet", "locked_cents", "seen_cents"),
    RecordKind.SETTLEMENT: (
        "shoe",
        "coup",
        "seat",
        "bet",
        "stake",
        "outcome",
        "win",
        "commission",
        "net",
        "commission_owed",
        "box",
    ),
    RecordKind.MISPAY: ("shoe", "coup", "seat", "bet", "kind", "expected_cents", "seen_cents"),
    RecordKind.COMMISSION: ("shoe", "seat", "owed", "collected", "uncollected", "over_collected", "why"),
    RecordKind.MISREAD: ("shoe", "coup", "seat", "bet", "locked_cents"),
    RecordKind.GHOST_READ: ("seat", "spot", "uid", "owner_seat", "owner_spot"),
}

#: The chip tray's records (controller.game.tray; version 4).
TRAY_FIELDS: dict[RecordKind, tuple[str, ...]] = {
    RecordKind.TRAY_COUNT: (
        "shoe",
        "coup",
        "expected_cents",
        "counted_cents",
        "flow_cents",
        "variance_cents",
        "denominations",
        "anchored",
    ),
    RecordKind.TRAY_VARIANCE: ("shoe", "coup", "variance_cents", "expected_cents", "counted_cents", "changed"),
}


def wager_body(
    notice: WagersLocked,
    index: int,
    edges: Mapping[str, float] | None = None,
    variances: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The ``wager`` record of the ``index``-th wager a seat locked (:data:`MONEY_FIELDS`)."""
    wager = notice.wagers[index]
    ev = None if edges is None else edges.get(wager.bet.value)
    variance = None if ev is None or variances is None else variances.get(wager.bet.value)
    # "+ 0.0" turns a negative zero into zero: PostgreSQL's numeric has none, so a -0.0 would come back from
    # the floor's archive as 0.0 and the record's hash would no longer verify there.
    if ev is not None:
        ev = float(ev) + 0.0
    theo = None if ev is None else round(-ev * wager.amount_cents, 2) + 0.0
    return WagerBody(
        shoe=notice.shoe,
        coup=notice.coup,
        seat=notice.seat,
        bet=wager.bet.value,
        stake=wager.amount_cents,
        ev=ev,
        theo_cents=theo,
        variance=None if variance is None else float(variance) + 0.0,
    ).to_body()


def money_record(n: Notice) -> tuple[RecordKind, dict[str, Any]] | None:
    """The record of one money notice (a refusal, a past-post ...), or None for a notice that has none."""
    built = _money_body(n)
    if built is None:
        return None
    kind, body = built
    return kind, BODIES[kind].parse(body).to_body()


def _money_body(n: Notice) -> tuple[RecordKind, dict[str, Any]] | None:
    if isinstance(n, WagerSettled):
        o = n.outcome
        return RecordKind.SETTLEMENT, {
            "shoe": n.shoe,
            "coup": n.coup,
            "seat": n.seat,
            "bet": o.bet.value,
            "stake": o.stake_cents,
            "outcome": o.outcome.value,
            "win": o.paid_cents,
            "commission": o.commission_cents,
            "net": o.net_cents,
            "commission_owed": o.commission_owed_cents,
            "box": n.box_cents,
        }
    if isinstance(n, TrayCounted):
        body = {
            "shoe": n.shoe,
            "coup": n.coup,
            "expected_cents": n.expected_cents,
            "counted_cents": n.counted_cents,
            "flow_cents": n.flow_cents,
            "variance_cents": n.variance_cents,
            "denominations": [d.to_dict() for d in n.denominations],
        }
        return RecordKind.TRAY_COUNT, body | ({"anchored": True} if n.anchored else {})
    if isinstance(n, TrayVarianceFound):
        return RecordKind.TRAY_VARIANCE, {
            "shoe": n.shoe,
            "coup": n.coup,
            "variance_cents": n.variance_cents,
            "expected_cents": n.expected_cents,
            "counted_cents": n.counted_cents,
            "changed": [d.to_dict() for d in n.changed],
        }
    if isinstance(n, WagerRefused):
        body = {"shoe": n.shoe, "coup": n.coup, "seat": n.seat, "bet": n.spot.value, "cents": n.cents}
        return RecordKind.WAGER_REFUSED, body | {"text": n.text}
    if isinstance(n, PastPost | PulledBet):
        kind = RecordKind.PULLED_BET if isinstance(n, PulledBet) else RecordKind.PAST_POST
        return kind, {
            "shoe": n.shoe,
            "coup": n.coup,
            "seat": n.seat,
            "bet": n.spot.value,
            "locked_cents": n.locked_cents,
            "seen_cents": n.seen_cents,
        }
    if isinstance(n, Mispay):
        return RecordKind.MISPAY, {
            "shoe": n.shoe,
            "coup": n.coup,
            "seat": n.seat,
            "bet": n.spot.value,
            "kind": n.kind.value,
            "expected_cents": n.expected_cents,
            "seen_cents": n.seen_cents,
        }
    if isinstance(n, BoxClosed):
        return RecordKind.COMMISSION, {
            "shoe": n.shoe,
            "seat": n.seat,
            "owed": n.owed_cents,
            "collected": n.collected_cents,
            "uncollected": n.uncollected_cents,
            "over_collected": n.over_collected_cents,
            "why": n.why.value,
        }
    if isinstance(n, Misread):
        body = {"shoe": n.shoe, "coup": n.coup, "seat": n.seat, "bet": n.spot.value}
        return RecordKind.MISREAD, body | {"locked_cents": n.locked_cents}
    if isinstance(n, GhostRead):
        return RecordKind.GHOST_READ, {
            "seat": n.seat,
            "spot": n.spot.value,
            "uid": n.uid,
            "owner_seat": n.owner_seat,
            "owner_spot": n.owner_spot.value,
        }
    return None


# -- the players at the seats (version 4) -------------------------------------------------------------------

#: Each player record's fields, in order: ``player_ref`` is the card's UID (16 upper-case hex digits), the key
#: of the floor's player registry (:func:`~controller.game.seats.player_ref`); a ``player_out``'s ``reason`` is
#: ``card_out``, ``card_replaced`` or ``seat_empty`` (a card left in a reader, with its ``note``).
PLAYER_FIELDS: dict[RecordKind, tuple[str, ...]] = {
    RecordKind.PLAYER_IN: ("shoe", "coup", "seat", "player_ref"),
    RecordKind.PLAYER_OUT: ("shoe", "coup", "seat", "player_ref", "reason", "note"),
}


def player_record(n: Notice) -> tuple[RecordKind, dict[str, Any]] | None:
    """The record of a visit begun or ended, or None for another notice."""
    if isinstance(n, PlayerIn):
        body = PlayerInBody(shoe=n.shoe, coup=n.coup, seat=n.seat, player_ref=n.player_ref)
        return RecordKind.PLAYER_IN, body.to_body()
    if isinstance(n, PlayerOut):
        left: dict[str, Any] = {"shoe": n.shoe, "coup": n.coup, "seat": n.seat, "player_ref": n.player_ref}
        left["reason"] = n.reason.value
        if n.note is not None:
            left["note"] = n.note
        return RecordKind.PLAYER_OUT, PlayerOutBody.parse(left).to_body()
    return None


# -- the staff at the table (version 4) ---------------------------------------------------------------------

#: Each staff record's fields, in order (``docs/schemas/dealer_in.schema.json`` ...). ``staff_as_of`` names the
#: staff list the badge was looked up in (the registry's last change; empty: no list verified yet).
STAFF_FIELDS: dict[RecordKind, tuple[str, ...]] = {
    RecordKind.DEALER_IN: ("shoe", "coup", "staff_id", "role", "badge", "staff_as_of"),
    RecordKind.DEALER_OUT: ("shoe", "coup", "staff_id", "reason"),
    RecordKind.BADGE_REFUSED: ("shoe", "coup", "badge", "why", "staff_as_of"),
}


def staff_record(n: Notice) -> tuple[RecordKind, dict[str, Any]] | None:
    """The record of a dealer signed in or out, or of a badge refused; None for another notice."""
    if isinstance(n, DealerIn):
        body = DealerInBody(
            shoe=n.shoe, coup=n.coup, staff_id=n.staff_id, role=n.role, badge=n.badge, staff_as_of=n.staff_as_of
        )
        return RecordKind.DEALER_IN, body.to_body()
    if isinstance(n, DealerOut):
        out = DealerOutBody(shoe=n.shoe, coup=n.coup, staff_id=n.staff_id, reason=n.reason.value)
        return RecordKind.DEALER_OUT, out.to_body()
    if isinstance(n, BadgeRefused):
        refused = BadgeRefusedBody(
            shoe=n.shoe, coup=n.coup, badge=n.badge, why=n.reason.value, staff_as_of=n.staff_as_of
        )
        return RecordKind.BADGE_REFUSED, refused.to_body()
    return None


# -- what needs a supervisor (version 4) ---------------------------------------------------------------------

#: Each approval record's fields, in order (``docs/schemas/approval.schema.json`` ...).
APPROVAL_FIELDS: dict[RecordKind, tuple[str, ...]] = {
    RecordKind.APPROVAL_ASKED: ("shoe", "coup", "action", "dealer", "seat"),
    RecordKind.APPROVAL: ("shoe", "coup", "action", "approver", "role", "dealer", "staff_as_of", "seat"),
    RecordKind.APPROVAL_REFUSED: (
        "shoe",
        "coup",
        "action",
        "why",
        "staff_id",
        "badge",
        "wrong_pins",
        "staff_as_of",
        "seat",
    ),
}


def approval_input(
    step: str,
    action: Action,
    staff_id: str | None = None,
    right: bool | None = None,
    seat: int | None = None,
    **facts: Any,
) -> dict[str, Any]:
    """The journal body of an approval's step that is not a badge (an ``approval`` input, a record only): the
    dealer's ``ask`` (with the press's ``facts``: its ``source``, the shoe's ``seq``), or a ``pin``'s verdict for
    ``staff_id`` (``right``; the PIN itself is never kept)."""
    fields: dict[str, Any] = {"step": step, "action": action.value}
    if seat is not None:
        fields["seat"] = seat
    if staff_id is not None:
        fields |= {"staff_id": staff_id, "right": bool(right)}
    return record_body(InputKind.APPROVAL, **fields, **facts)


def approval_record(n: Notice) -> tuple[RecordKind, dict[str, Any]] | None:
    """The record of an approval asked, given or refused; None for another notice."""
    seat: dict[str, Any] = {}
    if isinstance(n, ApprovalAsked | Approved | ApprovalRefused) and n.seat is not None:
        seat["seat"] = n.seat
    if isinstance(n, ApprovalAsked):
        asked = {"shoe": n.shoe, "coup": n.coup, "action": n.action.value, "dealer": n.dealer, **seat}
        if n.cents is not None:
            asked["uncollected_cents"] = n.cents
        if n.card is not None:
            asked["card"] = n.card
        return RecordKind.APPROVAL_ASKED, ApprovalAskedBody.parse(asked).to_body()
    if isinstance(n, Approved):
        given: dict[str, Any] = {"shoe": n.shoe, "coup": n.coup, "action": n.action.value, "approver": n.approver}
        given["role"] = n.role
        given |= {"dealer": n.dealer, "staff_as_of": n.staff_as_of, **seat}
        if n.card is not None:
            given["card"] = n.card
        return RecordKind.APPROVAL, ApprovalBody.parse(given).to_body()
    if isinstance(n, ApprovalRefused):
        fields: dict[str, Any] = {"shoe": n.shoe, "coup": n.coup, "action": n.action.value, "why": n.reason.value}
        fields["staff_id"] = n.staff_id
        if n.badge is not None:
            fields["badge"] = n.badge
        fields |= {"wrong_pins": n.wrong_pins, "staff_as_of": n.staff_as_of, **seat}
        return RecordKind.APPROVAL_REFUSED, ApprovalRefusedBody.parse(fields).to_body()
    return None


# -- the cash at the table (version 4) ----------------------------------------------------------------------

#: A ``buy_in`` record's fields, in order: the shoe and coup it came in (the coup being dealt, or the next one
#: between coups), the seat, the amount (integer cents), the tender (``cash``, ``chips`` from another table, a
#: ``marker``) and the seat's ``player_ref`` (None: uncarded). Its input (kind ``buy_in``, a record only: a
#: buy-in changes nothing of the game) carries the four after the coup.
BUY_IN_FIELDS = ("shoe", "coup", "seat", "cents", "tender", "player_ref")


def buy_in_input(b: BuyIn, **facts: Any) -> dict[str, Any]:
    """The journal body of a buy-in entered for a seat (a ``buy_in`` input, a record only), with ``facts``."""
    fields = {"seat": b.seat, "cents": b.cents, "tender": b.tender.value, "player_ref": b.player_ref}
    return record_body(InputKind.BUY_IN, **fields, **facts)


def buy_in_from_input(body: Mapping[str, Any]) -> BuyIn | None:
    """The buy-in a ``buy_in`` input body carries (None for another kind, or one this version cannot read): what
    a replay hands :meth:`~controller.game.table.TableState.buy_in` again, for the chip tray's flows."""
    if body.get("kind") != InputKind.BUY_IN:
        return None
    seat, cents, tender, ref = body.get("seat"), body.get("cents"), body.get("tender"), body.get("player_ref")
    if isinstance(seat, bool) or not isinstance(seat, int) or isinstance(cents, bool) or not isinstance(cents, int):
        return None
    try:
        return BuyIn(seat, cents, Tender(str(tender)), ref if isinstance(ref, str) else None)
    except ValueError:
        return None


def buy_in_body(n: BuyInTaken) -> dict[str, Any]:
    """The ``buy_in`` record of a buy-in taken at a seat (:data:`BUY_IN_FIELDS`)."""
    return BuyInBody(
        shoe=n.shoe, coup=n.coup, seat=n.seat, cents=n.cents, tender=n.tender.value, player_ref=n.player_ref
    ).to_body()


# -- the ruleset in a shoe's start record ------------------------------------------------------------------

#: The pays of a ruleset as stored (exact, as text: ``"11"``, ``"1/20"``, ``"1/2"``), in this order.
_PAY_FIELDS = (
    "banker_pays",
    "commission_rate",
    "player_pays",
    "tie_pays",
    "pair_pays",
    "dragon_7_pays",
    "panda_8_pays",
)
#: The ``rules`` object of a shoe's start record: the ruleset's name, the wagers offered, the pays.
RULES_FIELDS = ("name", "description", "offered", "pays")
#: Its ``pays`` object.
PAYS_FIELDS = (
    *_PAY_FIELDS,
    "banker_six_pays",
    "banker_three_card_seven_pushes",
    "tie_pushes_main_bets",
    "commission_collection",
    "dragon_bonus",
)


def ruleset_body(rules: Ruleset) -> dict[str, Any]:
    """A ruleset as a shoe's start record holds it: its name and description, everything that prices a wager,
    exactly (fractions as text), and the wagers the table offers (``offered``, by
    :class:`~controller.game.rules.Bet` name, the three main wagers included)."""
    db = rules.dragon_bonus
    pays: dict[str, Any] = {name: str(getattr(rules, name)) for name in _PAY_FIELDS}
    pays |= {
        "banker_six_pays": None if rules.banker_six_pays is None else str(rules.banker_six_pays),
        "banker_three_card_seven_pushes": rules.banker_three_card_seven_pushes,
        "tie_pushes_main_bets": rules.tie_pushes_main_bets,
        "commission_collection": rules.commission_collection.value,
        "dragon_bonus": {
            "natural_win": str(db.natural_win),
            "natural_tie_pushes": db.natural_tie_pushes,
            "ladder": {str(m): str(p) for m, p in sorted(db.ladder.items())},
        },
    }
    return {
        "name": rules.name,
        "description": rules.description,
        "offered": [b.value for b in Bet if rules.offers(b)],
        "pays": pays,
    }


def ruleset_from_body(body: Mapping[str, Any]) -> Ruleset:
    """The ruleset a shoe's start record holds (:func:`ruleset_body`); ValueError naming a bad part."""
    try:
        pays = body["pays"]
        db = pays["dragon_bonus"]
        six = pays["banker_six_pays"]
        offered = frozenset(Bet(name) for name in body["offered"])
        return Ruleset(
            name=str(body["name"]),
            description=str(body.get("description", "")),
            **{name: Fraction(str(pays[name])) for name in _PAY_FIELDS},
            banker_six_pays=None if six is None else Fraction(str(six)),
            banker_three_card_seven_pushes=bool(pays["banker_three_card_seven_pushes"]),
            tie_pushes_main_bets=bool(pays["tie_pushes_main_bets"]),
            commission_collection=CommissionCollection(pays["commission_collection"]),
            dragon_bonus=DragonBonus(
                natural_win=Fraction(str(db["natural_win"])),
                natural_tie_pushes=bool(db["natural_tie_pushes"]),
                ladder={int(m): Fraction(str(p)) for m, p in db["ladder"].items()},
            ),
            offered_side_bets=offered - {Bet.BANKER, Bet.PLAYER, Bet.TIE},
        )
    except (KeyError, TypeError, AttributeError, ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"shoe record's rules are not a ruleset: {exc!r:.80}") from None


#: The body of an ``advantage`` or ``advantage_cleared`` record: the shoe and coup whose betting time it was,
#: the wager (its :class:`~controller.game.rules.Bet` name), its player EV per unit staked, the cards left.
#: A clear because the shoe ended adds ``"shoe_ended": true`` (the figures are the shoe's last).
ADVANTAGE_FIELDS = ("shoe", "coup", "bet", "ev", "cards_left")


def advantage_body(shoe: int, coup: int, bet: str, ev: float, cards_left: int, **extra: Any) -> dict[str, Any]:
    """An ``advantage`` or ``advantage_cleared`` body (:data:`ADVANTAGE_FIELDS`, then ``extra``)."""
    body = {"shoe": shoe, "coup": coup, "bet": bet, "ev": ev, "cards_left": cards_left, **extra}
    return (AdvantageClearedBody if extra else AdvantageBody).parse(body).to_body()


def signature() -> str:
    """A digest of the vocabulary's kinds and fixed fields: it changes when the shapes do (see the version)."""
    parts = [
        "records:" + ",".join(k.value for k in RecordKind),
        "inputs:" + ",".join(f"{k.value}{'*' if k.replayed else ''}" for k in InputKind),
        "fields:" + ";".join(f"{k.value}={','.join(v)}" for k, v in sorted(_INPUT_FIELDS.items())),
        "sources:" + ",".join(s.value for s in Source),
        "coup:" + ",".join(COUP_FIELDS),
        "shoe_start:event,shoe,decks,rules,spots,players,tray;rules:"
        + ",".join(RULES_FIELDS)
        + ";pays:"
        + ",".join(PAYS_FIELDS),
        "advantage:" + ",".join(ADVANTAGE_FIELDS),
        "chip:" + ",".join(CHIP_FIELDS) + ";snapshot_spot:" + ",".join(SNAPSHOT_SPOT_FIELDS),
        "money:" + ";".join(f"{k.value}={','.join(v)}" for k, v in MONEY_FIELDS.items()),
        "players:" + ";".join(f"{k.value}={','.join(v)}" for k, v in PLAYER_FIELDS.items()),
        "buy_in:" + ",".join(BUY_IN_FIELDS),
        "staff:" + ";".join(f"{k.value}={','.join(v)}" for k, v in STAFF_FIELDS.items()),
        "approvals:" + ";".join(f"{k.value}={','.join(v)}" for k, v in APPROVAL_FIELDS.items()),
        "tray:" + ";".join(f"{k.value}={','.join(v)}" for k, v in TRAY_FIELDS.items()),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


# -- the journal's hash chain and the record as it leaves the table ---------------------------------------

#: ``prev`` of a journal's record 1.
GENESIS_HASH = "0" * 64


def canonical_json(body: Mapping[str, Any]) -> str:
    """The one text form of a body: sorted keys, no spaces, UTF-8, no NaN or infinity."""
    if not isinstance(body, Mapping):
        raise TypeError(f"a record body must be a JSON object (a dict), not {type(body).__name__}")
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def record_hash(
    prev_hash: str,
    record_id: int,
    ts: str,
    kind: str,
    session: int | None,
    number: int | None,
    cause: int | None,
    body: str,
) -> str:
    """The journal's chain link: sha256 hex of ``prev_hash`` followed by the canonical encoding of the
    record's fields (``body`` as its canonical JSON text)."""
    fields = json.dumps([record_id, ts, kind, session, number, cause, body], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev_hash + fields).encode("utf-8")).hexdigest()


class RecordError(ValueError):
    """A record from elsewhere (the floor's side of the link) that is not a record of this vocabulary."""


@dataclass(frozen=True, slots=True)
class TableRecord:
    """One journal record as it leaves the table (the floor link's message): everything needed to check it
    against the table's hash chain, with the schema version and the table's id.

    ``seq`` is the journal's record id (contiguous per table), ``at`` its UTC ISO 8601 stamp, ``prev`` and
    ``hash`` the chain. ``session``, ``number`` and ``cause`` are the journal's columns (the shoe's event key,
    the input a derived record came from), part of what the hash covers."""

    table: str
    seq: int
    kind: str
    at: str
    session: int | None
    number: int | None
    cause: int | None
    body: Mapping[str, Any]
    prev: str
    hash: str
    v: int = RECORD_VERSION
    sig: str | None = None  # the table key's signature over (table, seq, hash); floor_protocol.signing

    def to_dict(self) -> dict[str, Any]:
        out = {
            "v": self.v,
            "table": self.table,
            "seq": self.seq,
            "kind": self.kind,
            "at": self.at,
            "session": self.session,
            "number": self.number,
            "cause": self.cause,
            "prev": self.prev,
            "hash": self.hash,
            "body": dict(self.body),
        }
        if self.sig is not None:
            out["sig"] = self.sig
        return out

    def to_json(self) -> str:
        return canonical_json(self.to_dict())

    def chain_ok(self) -> bool:
        """Whether ``hash`` is this record's link from ``prev`` (the body as sent, canonically encoded)."""
        link = record_hash(
            self.prev, self.seq, self.at, self.kind, self.session, self.number, self.cause, canonical_json(self.body)
        )
        return link == self.hash

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableRecord:
        """Read a record; raises :class:`RecordError` naming the first problem (a newer version included).

        The envelope and every value are checked first (:func:`floor_protocol.admission.check_record`: known
        fields only, ids, hashes, integers in the 64-bit range, no NUL or lone surrogate, bounded nesting)."""
        try:
            check_record(data)
        except AdmissionError as exc:
            raise RecordError(str(exc)) from None
        return cls._from_checked(data)

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> TableRecord:
        v = data.get("v")
        if not isinstance(v, int) or isinstance(v, bool):
            raise RecordError("record without a version (v)")
        if v > RECORD_VERSION:
            raise RecordError(f"record version {v} is newer than this reader's {RECORD_VERSION}")
        try:
            record = cls(
                table=_field(data, "table", str),
                seq=_field(data, "seq", int),
                kind=_field(data, "kind", str),
                at=_field(data, "at", str),
                session=_optional_int(data, "session"),
                number=_optional_int(data, "number"),
                cause=_optional_int(data, "cause"),
                body=_field(data, "body", dict),
                prev=_field(data, "prev", str),
                hash=_field(data, "hash", str),
                v=v,
                sig=_optional_str(data, "sig"),
            )
        except KeyError as exc:
            raise RecordError(f"record without {exc.args[0]}") from None
        if record.seq < 1:
            raise RecordError(f"record seq {record.seq} is not a journal number (1, 2, 3 ...)")
        if record.kind not in {k.value for k in RecordKind}:
            raise RecordError(f"unknown record kind {record.kind!r}")
        return record

    @classmethod
    def from_json(cls, text: str | bytes, limits: Limits = DEFAULT_LIMITS) -> TableRecord:
        """Read a record from its JSON, admitted first (:func:`floor_protocol.admission.admit_json`: size,
        nesting, UTF-8, integers, strings, then the envelope); raises :class:`RecordError` only."""
        try:
            value = admit_json(text, limits)
        except AdmissionError as exc:
            raise RecordError(str(exc)) from None
        return cls.from_admitted(value, limits)

    @classmethod
    def from_admitted(cls, value: Any, limits: Limits = DEFAULT_LIMITS) -> TableRecord:
        """Read a record from a value :func:`~floor_protocol.admission.admit_json` returned (its values are
        checked: only the envelope is, here); raises :class:`RecordError` only."""
        try:
            data = check_record(value, limits.max_depth, values=False)
        except AdmissionError as exc:
            raise RecordError(str(exc)) from None
        return cls._from_checked(data)


def _field(data: Mapping[str, Any], name: str, kind: type) -> Any:
    value = data[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"record field {name} is not {kind.__name__}: {value!r:.40}")
    return value


def _optional_str(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None or isinstance(value, str):
        return value
    raise RecordError(f"record field {name} is not a string: {value!r:.40}")


def _optional_int(data: Mapping[str, Any], name: str) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"record field {name} is not an integer: {value!r:.40}")
    return value
