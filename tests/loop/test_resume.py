"""Resuming after a restart on a real journal: the loop's replay reads the journal from the input that started
the newest shoe and ends in exactly the state a replay of the whole journal gives (the link as it was)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK
from controller.game.records import REPLAYED_KINDS, input_body, input_from_body
from controller.game.table import (
    CardDrawn,
    LinkChanged,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
)
from controller.journal import Journal
from controller.table.loop import ShoePort, TableLoop, resume
from controller.table.wire import AsciiWire
from tests.game.strategies import inputs

RULES = TableRules(decks=1)


def new_loop(journal: Journal) -> TableLoop:
    return TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _data: None)])


def full_replay(journal: Journal) -> TableState:
    state = TableState(RULES)
    for _id, body in journal.inputs():
        if body["kind"] in REPLAYED_KINDS:
            table_input = input_from_body(body)
            assert table_input is not None  # a replayed kind is always a table input
            state.apply(table_input)
    return state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(inputs, max_size=150), st.integers(min_value=1, max_value=8))
def test_restart_replays_from_the_newest_shoe_to_the_same_state(
    tmp_path_factory: object, events: list[TableInput], batch: int
) -> None:
    path = Path(tmp_path_factory.mktemp("loop")) / "journal.db"  # type: ignore[attr-defined]
    with Journal.open(path) as journal:
        loop = new_loop(journal)
        for i, event in enumerate(events):
            loop._apply(event, input_body(event), None, None)
            if i % batch == 0:
                loop.flush()  # group commits of varying size
        loop.flush()
        live = loop.view()
    with Journal.open(path) as journal:
        restarted = new_loop(journal)
        restarted.replay()
        assert restarted.view() == live
        assert full_replay(journal).view() == live


def test_replay_starts_at_the_newest_shoe(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.db") as journal:
        loop = new_loop(journal)
        for token in ["5H", "2C", "3D", "4S", "6H", "2H", "3S", "AD", "KC", "8D"]:  # burn, then a coup
            loop._apply(CardDrawn(DECK[0].parse(token)), {"kind": "card", "card": token}, None, None)
        loop._apply(NewShoePressed(), {"kind": "new_shoe"}, None, None)
        loop._apply(CardDrawn(DECK[0].parse("7H")), {"kind": "card", "card": "7H"}, None, None)
        loop.flush()
        start = journal.last_shoe_start()
        assert start is not None
        assert start[1] == 2
        restarted = new_loop(journal)
        assert restarted.replay() == 1  # only the exposed card of shoe 2
        assert restarted.view() == loop.view()
        assert restarted.view().shoe_number == 2


def test_a_link_down_before_the_newest_shoe_is_restored(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.db") as journal:
        loop = new_loop(journal)
        events: list[TableInput] = [CardDrawn(DECK[5]), LinkChanged(up=False), NewShoePressed(), CardDrawn(DECK[9])]
        for event in events:
            loop._apply(event, input_body(event), None, None)
        loop.flush()
        assert loop.view().alarms
        restarted = new_loop(journal)
        restarted.replay()
        assert restarted.view() == loop.view()


def test_resume_gives_the_daemon_the_state_before_the_loop_is_built(tmp_path: Path) -> None:
    """The daemon resumes first (the scoreboard needs the shoe's number) and builds the loop with the state."""
    with Journal.open(tmp_path / "j.db") as journal:
        loop = new_loop(journal)
        events: list[TableInput] = [NewShoePressed(), CardDrawn(DECK[3]), LinkChanged(up=False), NewShoePressed()]
        for event in events:
            loop._apply(event, input_body(event), None, None)
        loop.flush()
        resumed = resume(journal, RULES)
        assert resumed.state.view() == loop.view() and resumed.state.view().shoe_number == 2
        assert resumed.inputs == 0 and resumed.edges is None  # nothing after the newest shoe's start
