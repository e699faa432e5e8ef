"""The table loop on a real journal: group commit, write-ahead ACKs, and a restart that replays only from the
newest shoe yet ends in exactly the state a replay of the whole journal gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK
from controller.game.records import REPLAYED_KINDS, derived_records, input_body, input_from_body
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    LinkChanged,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
    UnreadableCard,
    VoidPressed,
)
from controller.journal import Journal
from controller.loop import TableLoop
from controller.wire import AsciiWire

RULES = TableRules(decks=1)

inputs = st.one_of(
    st.sampled_from(DECK).map(CardDrawn),
    st.sampled_from(
        [
            DeclarePressed(),
            VoidPressed(),
            UnreadableCard(),
            CutCardOut(),
            NewShoePressed(),
            LinkChanged(up=False),
            LinkChanged(up=True),
        ]
    ),
)


def new_loop(journal: Journal, written: list[bytes] | None = None, **parts: Any) -> TableLoop:
    sink = written if written is not None else []
    return TableLoop(TableState(RULES), AsciiWire(), journal, sink.append, **parts)


def full_replay(journal: Journal) -> TableState:
    state = TableState(RULES)
    for _id, body in journal.inputs():
        if body["kind"] in REPLAYED_KINDS:
            state.apply(input_from_body(body))
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
        for event in [CardDrawn(DECK[5]), LinkChanged(up=False), NewShoePressed(), CardDrawn(DECK[9])]:
            loop._apply(event, input_body(event), None, None)
        loop.flush()
        assert loop.view().alarms
        restarted = new_loop(journal)
        restarted.replay()
        assert restarted.view() == loop.view()


def test_one_commit_per_batch(tmp_path: Path) -> None:
    written: list[bytes] = []
    with Journal.open(tmp_path / "j.db") as journal:
        loop = new_loop(journal, written)
        for token in ["9H", "2S", "KD", "5C"]:
            loop._apply(CardDrawn(DECK[0].parse(token)), {"kind": "card", "card": token}, None, None)
        assert journal.count() == 0  # staged, not yet committed
        loop.flush()
        assert loop.commit.stats.commits == 1
        assert loop.commit.stats.inputs == 4
        assert len(list(journal.inputs())) == 4


def test_a_full_batch_keeps_the_order_of_what_waits(tmp_path: Path) -> None:
    from controller.loop import Stop, WireBytes

    tokens = ["9H", "2S", "KD", "5C", "4H", "3S", "TD", "8C", "7D", "6S", "AH"]
    with Journal.open(tmp_path / "j.db") as journal:
        loop = new_loop(journal, max_batch=3)
        for token in tokens:  # ASCII lines: suit letter, then rank
            loop.put(WireBytes(f"{token[1]}{token[0]}\r\n".encode().replace(b"T", b"10"), 0.0))
        loop.put(Stop())
        loop.run()
        assert [b["card"] for _id, b in journal.inputs() if b["kind"] == "card"] == tokens
        assert loop.commit.stats.commits >= 4  # 11 events in batches of at most 3


def test_derived_records_of_a_declared_and_a_voided_coup() -> None:
    from controller.game.cards import Card

    state = TableState(TableRules(burn_rule=BurnRule(BurnMode.NONE)))
    notices = []
    for token in ["9H", "2S", "KD", "5C"]:
        notices += state.apply(CardDrawn(Card.parse(token)))
    notices += state.apply(CardDrawn(Card.parse("7H")))  # a misdraw: set aside
    notices += state.apply(DeclarePressed())
    notices += state.apply(CardDrawn(Card.parse("2H")))
    notices += state.apply(VoidPressed())
    coups = [body for kind, body in derived_records(notices) if kind == "coup"]
    assert coups[0] == {
        "shoe": 1, "coup": 1, "declared": True, "void": False, "misdraw": True, "dummy_hand": ["7H"],
        **state_free_result(["9H", "KD"], ["2S", "5C"]),
    }  # fmt: skip
    assert coups[1] == {
        "shoe": 1, "coup": 2, "declared": False, "void": True, "misdraw": False, "dummy_hand": [],
        "cards": ["2H"], "winner": None,
    }  # fmt: skip
    alarms = [body for kind, body in derived_records(notices) if kind == "alarm"]
    assert alarms == [
        {"alarm": "misdraw", "text": "MISDRAW", "card": "7H",
         "detail": "card 7H drawn when none was due; set aside (dummy hand)"},
    ]  # fmt: skip


def state_free_result(player: list[str], banker: list[str]) -> dict[str, object]:
    from controller.game.cards import Card
    from controller.game.coup import CoupResult

    return CoupResult(tuple(map(Card.parse, player)), tuple(map(Card.parse, banker))).to_dict()


def test_the_loop_reads_the_shoes_port_itself(tmp_path: Path) -> None:
    """No reader thread between the port and the loop: the loop waits on the port's descriptor, reads and
    decodes in its own thread (one wake-up per card), and the cards are journaled."""
    import os
    import threading
    import time
    import tty

    from controller.loop import Inbox, Stop
    from controller.shoe_link import ShoeLink

    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    with Journal.open(tmp_path / "j.db") as journal:
        inbox = Inbox()  # first: the link's opener reports to it
        link = ShoeLink(path, 9600, inbox.put)
        loop = TableLoop(TableState(RULES), AsciiWire(), journal, link.write, inbox=inbox, port=link)
        runner = threading.Thread(target=loop.run, name="test-loop")
        runner.start()
        try:
            link.start()
            assert link.wait_open(5)
            tokens = ["H9", "S2", "DK", "C5"]
            for token in tokens:
                os.write(master, token.encode() + b"\r\n")
                time.sleep(0.02)
            deadline = time.monotonic() + 5
            while len([b for _i, b in journal.inputs() if b["kind"] == "card"]) < 4:
                assert time.monotonic() < deadline, "the cards were not journaled"
                time.sleep(0.01)
        finally:
            loop.put(Stop())
            runner.join(5)
            link.stop()
            os.close(master)
        assert [b["card"] for _i, b in journal.inputs() if b["kind"] == "card"] == ["9H", "2S", "KD", "5C"]
        assert loop.stats.reads >= 1
        assert link.bytes_in == 16
        assert not runner.is_alive()


def test_after_commit_runs_once_per_commit_that_wrote_and_never_before_it(tmp_path: Path) -> None:
    # The floor link sends a record as soon as it is committed: the loop wakes it after the commit (a wake
    # before it, from the sinks, would find nothing new and the record would wait for the next card).
    from controller.game.cards import Card
    from controller.game.records import input_body
    from controller.game.table import CardDrawn, TableState
    from controller.journal import Journal
    from controller.wire import AsciiWire

    with Journal.open(tmp_path / "j.db") as journal:
        heads: list[int] = []
        loop = TableLoop(
            TableState(),
            AsciiWire(),
            journal,
            lambda data: None,
            after_commit=[lambda: heads.append(journal.head()[0])],
        )
        loop.flush()  # nothing staged: no commit, no wake
        assert heads == []
        for n, token in enumerate(("AS", "KD"), start=1):
            card = CardDrawn(Card.parse(token))
            loop._apply(card, input_body(card), None, None)
            assert len(heads) == n - 1  # applied and shown, not yet committed: no wake
            loop.flush()
            assert len(heads) == n and heads[-1] == journal.head()[0]  # the wake saw its record committed
