"""One fact, one place: the inputs whose effect a new shoe keeps (``records.KEPT_ACROSS_SHOES``). The table's
state machine keeps exactly these through NEW SHOE, the loop's replay reads exactly these before the shoe it
starts at, and retention never prunes the newest of each before the newest shoe. A kind added to the pure
core's kept state (or taken from it) without the list, or a replay or a prune reading another list, fails
here."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from controller.game.cards import Card
from controller.game.records import KEPT_ACROSS_SHOES, InputKind, input_body, input_kind
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
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
from controller.journal import Journal
from controller.loop import resume
from tests.journal.test_retention import NOW, RULES, build, restarted_view, shoe_inputs

#: One input of each replayed kind, each with an effect on the table (a lamp, an alarm, a count).
SAMPLES: dict[InputKind, TableInput] = {
    InputKind.CARD: CardDrawn(Card.parse("9D")),
    InputKind.UNREADABLE: UnreadableCard(),
    InputKind.CUT_CARD: CutCardOut(),
    InputKind.DECLARE: DeclarePressed(),
    InputKind.VOID: VoidPressed(),
    InputKind.NEW_SHOE: NewShoePressed(),
    InputKind.LINK: LinkChanged(up=False),
    InputKind.SHOE_REBOOTED: ShoeRebooted(),
    InputKind.SHOE_PROTOCOL: ShoeProtocol(version=2),
    InputKind.LINE_NOISE: LineNoise(noisy=True),
}


def mid_coup() -> TableState:
    """A shoe burned and a coup under way (one card on the layout)."""
    state = TableState(RULES)
    state.apply(NewShoePressed())
    cards = iter(Card.parse(t) for t in ["5H", "2C", "3D", "4S", "6H", "2H", "3S", "AD", "KC", "8D", "7C"])
    while state.view().due is Due.BURN:
        state.apply(CardDrawn(next(cards)))
    state.apply(CardDrawn(next(cards)))
    assert state.view().due is Due.DEAL and state.view().player
    return state


def test_the_samples_are_one_effective_input_of_every_replayed_kind() -> None:
    assert {k for k in InputKind if k.replayed} == set(SAMPLES)
    for kind, sample in SAMPLES.items():
        assert input_kind(sample) is kind
        state = mid_coup()
        before = state.view()
        state.apply(sample)
        assert state.view() != before, kind  # not a no-op: what NEW SHOE then keeps or resets is visible


def test_a_new_shoe_keeps_the_effect_of_exactly_the_kinds_listed() -> None:
    kept = set()
    for kind, sample in SAMPLES.items():
        state = mid_coup()
        state.apply(sample)
        state.apply(NewShoePressed())
        if state.view() != TableState.at_shoe_start(RULES, state.shoe_number).view():
            kept.add(kind)
    assert kept == set(KEPT_ACROSS_SHOES)
    assert len(KEPT_ACROSS_SHOES) == len(set(KEPT_ACROSS_SHOES))


class AskedJournal:
    """A journal whose newest shoe started at input 5 (shoe 2) and whose every kept input left its effect."""

    def __init__(self) -> None:
        self.asked: list[tuple[InputKind, int]] = []

    def append_many(self, inputs: Any) -> list[int | None]:
        raise AssertionError("a replay writes nothing")

    def inputs(self, *, after: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        return iter(())

    def records(self, *, after: int = 0) -> Iterator[Any]:
        return iter(())

    def last_shoe_start(self) -> tuple[int, int] | None:
        return 5, 2

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None:
        self.asked.append((kind, before))
        return input_body(SAMPLES[kind])

    def last_input_id(self, kind: InputKind, *, before: int) -> int | None:
        return 1 + list(KEPT_ACROSS_SHOES).index(kind)


def test_the_loop_replay_reads_exactly_the_kinds_listed_before_the_shoe_it_starts_at() -> None:
    journal = AskedJournal()
    resumed = resume(journal, RULES)
    assert resumed.inputs == 0
    assert sorted(journal.asked) == sorted((kind, 5) for kind in KEPT_ACROSS_SHOES)
    expected = TableState.at_shoe_start(RULES, 2)
    for kind in KEPT_ACROSS_SHOES:
        expected.apply(SAMPLES[kind])
    assert resumed.state.view() == expected.view()


@pytest.mark.parametrize("kind", KEPT_ACROSS_SHOES, ids=str)
def test_retention_keeps_the_newest_input_of_each_kind_listed(tmp_path: Path, kind: InputKind) -> None:
    """The input raised in an old shoe and still standing: it survives the prune, so a replay still shows it."""
    path = tmp_path / "j.db"
    journal, loop = build(path, [40, 35])
    loop._apply(SAMPLES[kind], input_body(SAMPLES[kind]), None, None)
    loop.flush()
    kept_id = journal.head()[0]
    for event in shoe_inputs(random.Random(3)):  # a third shoe, today
        loop._apply(event, input_body(event), None, None)
        loop.flush()
    live = loop.view()
    assert live != TableState.at_shoe_start(RULES, live.shoe_number).view()  # the effect stands
    plan = journal.prunable(older_than=NOW + timedelta(days=1), ack=journal.head()[0])
    assert plan is not None and plan[0] <= kept_id
    assert plan[0] == journal.shoe_starts()[1]  # the shoe holding it is kept whole, the one before goes
    journal.prune(plan[0], keep_from_ack=journal.head()[0])
    assert journal.last_input(kind, before=journal.shoe_starts()[-1]) == input_body(SAMPLES[kind])
    assert restarted_view(journal) == live
    journal.close()
    with Journal.open(path, read_only=True) as again:
        assert again.verify() == []
