"""One fact, one place: the inputs whose effect a new shoe keeps (``records.KEPT_ACROSS_SHOES``). The table's
state machine keeps exactly these through NEW SHOE, the loop's replay reads exactly these before the shoe it
starts at, and a prune's note carries the newest of each when it prunes them. A kind added to the pure
core's kept state (or taken from it) without the list, or a replay or a prune reading another list, fails
here."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from controller.game.cards import Card
from controller.game.chips import Chip, ChipStatus, SpotChips
from controller.game.records import KEPT_ACROSS_SHOES, InputKind, input_body, input_kind
from controller.game.seats import SeatCard
from controller.game.table import (
    Alarm,
    CardDrawn,
    CardKeyed,
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
from controller.game.tray import TrayLinkChanged, TraySnapshot, TrayStill, TubeSeen
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from controller.journal import Journal
from controller.table.loop import ShoePort, TableLoop, resume
from controller.table.wire import AsciiWire
from tests.game.strategies import inputs
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
    InputKind.SPOT: SpotSeen(2, Spot.PLAYER, SpotChips((Chip("E004000000000001", 2500, ChipStatus.IN_PLAY),))),
    InputKind.SPOTS_SNAPSHOT: SpotsSnapshot(
        ((5, Spot.BANKER, SpotChips((Chip("E004000000000002", 5000, ChipStatus.IN_PLAY),))),)
    ),
    InputKind.READER_LINK: ReaderLinkChanged(up=False),
    InputKind.SEAT_CARD: SeatCard(4, "00000000A1B2C3D4", True),
    InputKind.CARD_KEYED: CardKeyed(Card.parse("9D")),
    InputKind.TUBE: TubeSeen(3, SpotChips((Chip("E004000000000003", 10000, ChipStatus.IN_PLAY),))),
    InputKind.TRAY_SNAPSHOT: TraySnapshot(((1, SpotChips((Chip("E004000000000004", 500, ChipStatus.IN_PLAY),))),)),
    InputKind.TRAY_LINK: TrayLinkChanged(up=False),
    InputKind.TRAY_STILL: TrayStill(),
}
#: What a sample needs before it to be effective (a card keyed corrects an unreadable coup card only; the tray
#: still counts a tray its reader has counted).
BEFORE: dict[InputKind, TableInput] = {
    InputKind.CARD_KEYED: UnreadableCard(),
    InputKind.TRAY_STILL: SAMPLES[InputKind.TRAY_SNAPSHOT],
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
        if kind in BEFORE:
            state.apply(BEFORE[kind])
        before = state.view()
        state.apply(sample)
        assert state.view() != before, kind  # not a no-op: what NEW SHOE then keeps or resets is visible


def test_a_new_shoe_keeps_the_effect_of_exactly_the_kinds_listed() -> None:
    kept = set()
    for kind, sample in SAMPLES.items():
        state = mid_coup()
        if kind in BEFORE:
            state.apply(BEFORE[kind])
        state.apply(sample)
        state.apply(NewShoePressed())
        # the spots' readings go into the new shoe's start record (WagerBook.carried), not through a kept kind
        carried = state.money.carried() if state.money is not None else ()
        # ... and so do the cards in the seats' readers (SeatBook.carried)
        players = state.seats.carried() if state.seats is not None else ()
        # ... and so does the chip tray's book (TrayBook.carried)
        tray = state.tray.carried() if state.tray is not None else None
        if state.view() != TableState.at_shoe_start(RULES, state.shoe_number, carried, players, tray).view():
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

    def shoe_start_spots(self, cause: int) -> list[dict[str, Any]]:
        return []

    def shoe_start_players(self, cause: int) -> list[dict[str, Any]]:
        return []

    def shoe_start_tray(self, cause: int) -> dict[str, Any] | None:
        return None

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None:
        self.asked.append((kind, before))
        return input_body(SAMPLES[kind])

    def last_input_id(self, kind: InputKind, *, before: int) -> int | None:
        return 1 + list(KEPT_ACROSS_SHOES).index(kind)

    def standing_since(self, kind: InputKind, *, before: int) -> int | None:
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
def test_retention_carries_the_newest_input_of_each_kind_listed(tmp_path: Path, kind: InputKind) -> None:
    """The input raised in an old shoe and still standing: the prune takes its shoe, its note carries the
    input, so the journal still answers it and a replay still shows it."""
    path = tmp_path / "j.db"
    journal, loop = build(path, [40, 35])
    loop._apply(SAMPLES[kind], input_body(SAMPLES[kind]), None, None)
    loop.flush()
    kept_id = journal.last_input_id(kind, before=journal.head()[0] + 1)
    assert kept_id is not None
    for event in shoe_inputs(random.Random(3)):  # a third shoe, today
        loop._apply(event, input_body(event), None, None)
        loop.flush()
    live = loop.view()
    assert live != TableState.at_shoe_start(RULES, live.shoe_number).view()  # the effect stands
    plan = journal.prunable(older_than=NOW + timedelta(days=1), ack=journal.head()[0])
    assert plan is not None and plan[0] == journal.shoe_starts()[-1] > kept_id  # every old shoe goes, it too
    journal.prune(plan[0], keep_from_ack=journal.head()[0])
    assert kept_id not in {r.id for r in journal.records()}
    assert journal.last_input(kind, before=journal.shoe_starts()[-1]) == input_body(SAMPLES[kind])
    assert journal.last_input_id(kind, before=journal.shoe_starts()[-1]) == kept_id
    assert restarted_view(journal) == live
    journal.close()
    with Journal.open(path, read_only=True) as again:
        assert again.verify() == []


def test_a_kept_alarm_journaled_again_keeps_its_place_after_a_restart(tmp_path: Path) -> None:
    """LINK DOWN, NOISY LINE, then LINK DOWN again (the daemon journals the link down at every start): the
    second raised nothing, so LINK DOWN still stands first. The replay used to order the kept alarms by the
    newest input of each kind and swapped them (hypothesis found it)."""
    journal = Journal.open(tmp_path / "j.db", durable=False)
    loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)])
    events: list[TableInput] = [NewShoePressed(), LinkChanged(up=False), LineNoise(noisy=True), LinkChanged(up=False),
                                NewShoePressed()]  # fmt: skip
    for event in events:
        loop._apply(event, input_body(event), None, None)
        loop.flush()
    assert loop.view().alarms[:2] == (Alarm.LINK_DOWN, Alarm.NOISY_LINE)
    assert restarted_view(journal) == loop.view()
    journal.prune(journal.shoe_starts()[-1], keep_from_ack=None)  # and once the inputs are pruned
    assert restarted_view(journal) == loop.view()
    journal.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(inputs, max_size=40), min_size=2, max_size=5))
@example([[LinkChanged(up=False), LineNoise(noisy=True), LinkChanged(up=False)], []])
def test_pruning_shoe_after_shoe_replays_to_the_same_state(shoes: list[list[TableInput]]) -> None:
    """Any inputs (the link and the line up and down included), several shoes, pruned one shoe at a time:
    after each prune a restart replays to the table as it stands, and the chain verifies. Each prune's note
    carries the kept inputs forward from the one before when those records are long gone."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal.open(Path(tmp) / "j.db", durable=False)
        loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)])
        for shoe in shoes:
            for event in [NewShoePressed(), *shoe]:
                loop._apply(event, input_body(event), None, None)
            loop.flush()
        live = loop.view()
        for start in journal.shoe_starts()[1:]:
            journal.prune(start, keep_from_ack=None, chunk=7)
            assert restarted_view(journal) == live
            assert journal.verify() == []
        journal.close()
