"""The money's book is rebuilt exactly from the journaled inputs: a replay of any prefix of a table's inputs
(cards, presses, and the bet-spot reader's spots, snapshots and link) equals the live table, boxes included,
and a replay from the newest shoe's start equals one from the first input."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK
from controller.game.chips import ChipStatus, SpotChips
from controller.game.records import KEPT_ACROSS_SHOES, RecordKind, canonical_json, derived_records, input_body
from controller.game.replay import ShoeStart, replay
from controller.game.table import CardDrawn, DeclarePressed, NewShoePressed, TableInput, TableRules, TableState
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from tests.game.money import BOX_RULES, Chips, every_money_kind, money, table_rules
from tests.game.strategies import inputs

RULES = table_rules(money(BOX_RULES, seats=4, leave_after_coups=1))

_chips = Chips()
#: A small pool, so that the same chip turns up on several spots (ghost reads) and values repeat.
POOL = [_chips.one(c) for c in (500, 2500, 2500, 10_000, 500, 2500, 5000, 2500)] + [
    _chips.one(2500, ChipStatus.RETIRED),
    _chips.one(0, ChipStatus.UNKNOWN),
]
stacks = st.lists(st.sampled_from(POOL), max_size=5).map(lambda cs: SpotChips(tuple(cs)))
spots = st.sampled_from([Spot.BANKER, Spot.PLAYER, Spot.TIE, Spot.DRAGON_BONUS_PLAYER, Spot.COMMISSION])
seats = st.integers(1, 5)  # seat 5 is beyond the table's four: ignored
spot_seen = st.builds(SpotSeen, seats, spots, stacks)
snapshot = st.lists(st.tuples(seats, spots, stacks), max_size=6).map(lambda s: SpotsSnapshot(tuple(s)))
money_inputs = st.one_of(
    spot_seen, spot_seen, snapshot, st.sampled_from([ReaderLinkChanged(False), ReaderLinkChanged(True)])
)
#: Good main wagers (chips of their own), so that coups settle and boxes fill.
good = [SpotChips((_chips.one(10_000),)), SpotChips((_chips.one(2500), _chips.one(2500)))]
good_bet = st.builds(SpotSeen, st.integers(1, 4), st.just(Spot.BANKER), st.sampled_from(good))
cards = st.sampled_from(DECK).map(CardDrawn)
#: A coup as it goes at a table with a reader: bets, the cards, changes, the declare, the payout.
coup = st.tuples(
    st.lists(st.one_of(money_inputs, good_bet), max_size=6),
    st.lists(cards, min_size=4, max_size=6),
    st.lists(money_inputs, max_size=3),
    st.just([DeclarePressed()]),
    st.lists(money_inputs, max_size=5),
).map(lambda parts: [e for part in parts for e in part])
table_inputs = st.lists(
    st.one_of(coup, coup, st.lists(inputs, max_size=3), st.just([NewShoePressed()])), max_size=8
).map(lambda blocks: [NewShoePressed(), *(e for block in blocks for e in block)])


def journaled(event: TableInput) -> dict[str, Any]:
    """The input's body as a journal gives it back (canonical JSON, read again)."""
    loaded: dict[str, Any] = json.loads(canonical_json(input_body(event)))
    return loaded


def fingerprint(state: TableState) -> tuple[object, ...]:
    book = state.money
    assert book is not None
    return state.view(), book.ledger.balances(), book.view().to_dict()


def dealt(events: list[TableInput], rules: TableRules = RULES) -> tuple[list[Any], list[dict[str, Any]], list[Any]]:
    state = TableState(rules)
    prints, bodies, notices = [], [], []
    for event in events:
        notices.append(state.apply(event))
        bodies.append(journaled(event))
        prints.append(fingerprint(state))
    return prints, bodies, notices


@settings(max_examples=60, deadline=None)
@given(table_inputs)
def test_a_replay_of_any_prefix_equals_the_live_table(events: list[TableInput]) -> None:
    prints, bodies, _ = dealt(events)
    for k in range(0, len(events) + 1, max(1, len(events) // 12)):
        again = replay(RULES, bodies[:k]).state
        assert fingerprint(again) == (prints[k - 1] if k else fingerprint(TableState(RULES)))


@settings(max_examples=60, deadline=None)
@given(table_inputs)
def test_a_replay_from_the_newest_shoe_start_equals_a_full_replay_boxes_included(events: list[TableInput]) -> None:
    prints, bodies, notices = dealt(events)
    starts = [
        (i, int(body["shoe"]), body.get("spots", []))
        for i, ns in enumerate(notices)
        for kind, body in derived_records(ns)
        if kind is RecordKind.SHOE and body["event"] == "start"
    ]
    if not starts or not events:
        return
    at, number, spots = starts[-1]
    spots = json.loads(canonical_json({"spots": spots}))["spots"]  # as the journal gives the record back
    last = {
        kind: max((i for i, b in enumerate(bodies[:at]) if b["kind"] == kind), default=None)
        for kind in KEPT_ACROSS_SHOES
    }
    kept = {kind: None if i is None else bodies[i] for kind, i in last.items()}
    ids = {kind: None if i is None else i + 1 for kind, i in last.items()}
    again = replay(RULES, bodies[at + 1 :], ShoeStart.of(number, kept, ids, spots=spots)).state
    assert fingerprint(again) == prints[-1] == fingerprint(replay(RULES, bodies).state)


def test_the_scripted_shoe_replays_to_the_live_book() -> None:
    events = every_money_kind()
    prints, bodies, _ = dealt(events, table_rules(money(leave_after_coups=1)))
    assert fingerprint(replay(table_rules(money(leave_after_coups=1)), bodies).state) == prints[-1]
