"""The pure replay: stored input bodies back to the table state, from the first input or from the newest shoe's
start, and the edge watch back from the derived records. No journal: bodies built by the record vocabulary."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.game.cards import Card
from controller.game.edges import EdgeWatch
from controller.game.records import KEPT_ACROSS_SHOES, InputKind, RecordKind, derived_records, input_body, record_body
from controller.game.replay import ShoeStart, replay, replay_edges
from controller.game.rules import COMMISSION
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    Alarm,
    CardDrawn,
    DeclarePressed,
    LineNoise,
    LinkChanged,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
)
from tests.game.strategies import inputs

RULES = TableRules(decks=1)


def dealt(events: list[TableInput], rules: TableRules = RULES) -> tuple[TableState, list[dict[str, Any]], list[Any]]:
    """The live table after ``events``, the bodies a journal would hold, and each input's notices."""
    state = TableState(rules)
    bodies: list[dict[str, Any]] = []
    notices: list[Any] = []
    for event in events:
        notices.append(state.apply(event))
        bodies.append(input_body(event))
    return state, bodies, notices


@settings(max_examples=80, deadline=None)
@given(st.lists(inputs, max_size=150))
def test_a_replay_from_the_first_input_ends_in_the_live_state(events: list[TableInput]) -> None:
    live, bodies, _ = dealt(events)
    again = replay(RULES, bodies)
    assert again.state.view() == live.view()
    assert again.inputs == len(events)


@settings(max_examples=80, deadline=None)
@given(st.lists(inputs, max_size=150))
@example([LineNoise(True), LinkChanged(False), NewShoePressed()])  # found in a fresh Debian root: the order
def test_a_replay_from_the_newest_shoe_start_ends_in_the_state_of_a_full_replay(events: list[TableInput]) -> None:
    live, bodies, notices = dealt(events)
    starts = [
        (i, int(body["shoe"]))
        for i, ns in enumerate(notices)
        for kind, body in derived_records(ns)
        if kind is RecordKind.SHOE and body["event"] == "start"
    ]
    if not starts:
        assert replay(RULES, bodies).state.view() == live.view()
        return
    at, number = starts[-1]
    last = {
        kind: max((i for i, b in enumerate(bodies[:at]) if b["kind"] == kind), default=None)
        for kind in KEPT_ACROSS_SHOES
    }
    kept = {kind: None if i is None else bodies[i] for kind, i in last.items()}
    ids = {kind: None if i is None else i + 1 for kind, i in last.items()}  # as record ids: from 1, in order
    again = replay(RULES, bodies[at + 1 :], ShoeStart.of(number, kept, ids))
    assert again.state.view() == live.view() == replay(RULES, bodies).state.view()
    assert again.inputs == len(bodies) - at - 1


def test_the_link_and_the_line_as_they_were_at_the_shoe_start_are_restored() -> None:
    state = replay(RULES, [], ShoeStart(4, link_up=False, line_noisy=True)).state
    assert state.shoe_number == 4
    assert {Alarm.LINK_DOWN, Alarm.NOISY_LINE} <= set(state.view().alarms)
    assert not replay(RULES, [], ShoeStart(4)).state.view().alarms
    down: dict[InputKind, dict[str, Any] | None] = {
        InputKind.LINK: {"kind": "link", "up": False},
        InputKind.LINE_NOISE: {"kind": "line_noise", "noisy": True},
        InputKind.READER_LINK: None,  # a table without a bet-spot reader
        InputKind.TRAY_LINK: None,  # ... and without a chip tray's reader
    }
    assert ShoeStart.of(4, down) == ShoeStart(4, link_up=False, line_noisy=True)
    noisy_first = ShoeStart.of(4, down, {InputKind.LINK: 9, InputKind.LINE_NOISE: 7})
    assert noisy_first.order == (InputKind.READER_LINK, InputKind.TRAY_LINK, InputKind.LINE_NOISE, InputKind.LINK)
    # the alarms stand in the order they were raised, as on the live table
    assert replay(RULES, [], noisy_first).state.view().alarms == (Alarm.NOISY_LINE, Alarm.LINK_DOWN)
    none = dict.fromkeys(KEPT_ACROSS_SHOES)
    assert ShoeStart.of(4, none) == ShoeStart(4, link_up=True, line_noisy=False)


def test_record_only_bodies_are_skipped_and_an_unknown_kind_is_refused() -> None:
    card = CardDrawn(Card.parse("9H"))
    bodies = [record_body(InputKind.HELLO, session_id=1), input_body(card), record_body(InputKind.NOISE, rejected=3)]
    again = replay(TableRules(decks=1, burn_rule=BurnRule(BurnMode.NONE)), bodies)
    assert again.inputs == 1 and [c.token for c in again.state.view().player] == ["9H"]
    with pytest.raises(ValueError, match="unknown input kind"):
        replay(RULES, [{"kind": "teleport"}])


def test_the_edge_watch_comes_back_from_the_derived_records_alone() -> None:
    """A fresh watch (same threshold and defaults) fed a shoe's derived records, with its inputs among them,
    knows the shoe, the cards left and the flags standing exactly as the live watch that took each record as it
    was journaled."""
    ruleset = COMMISSION
    rules = TableRules(decks=1, burn_rule=BurnRule(BurnMode.NONE))
    live_watch = EdgeWatch(-1.0, ruleset, 1)  # every wager flagged at the betting time
    records: list[tuple[str, Any]] = []
    state = TableState(rules)
    events: list[TableInput] = [
        NewShoePressed(),
        *(CardDrawn(Card.parse(t)) for t in ["9H", "2S", "KD", "5C"]),
        DeclarePressed(),
    ]
    for event in events:
        body = input_body(event)
        records.append((RecordKind.INPUT, body))
        for kind, derived in derived_records(state.apply(event), ruleset):
            records.append((kind, derived))
            live_watch.record(kind, derived)
    advantages = live_watch.betting_time(state.shoe_number, state.coup_number)
    assert advantages and live_watch.flags.flagged
    records += advantages
    again = replay_edges(live_watch, records)
    assert again is not live_watch
    assert again.flags.threshold == -1.0 and again.tracker.default_decks == 1
    assert set(again.flags.flagged) == set(live_watch.flags.flagged)
    assert again.tracker.shoe == live_watch.tracker.shoe == state.shoe_number
    assert again.tracker.counts == live_watch.tracker.counts
    assert sum(again.tracker.counts) == 52 - 4
