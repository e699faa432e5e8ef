"""A buy-in entered for a seat goes through the table loop like any input: journaled as a ``buy_in`` input with
its ``buy_in`` record (the shoe and coup it came in) in the same commit, and a restart's replay writes no
second record; one the table cannot take (a seat not on it) is refused in one line and journals nothing."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from controller.game.cash import BuyIn, Tender
from controller.game.records import input_body
from controller.game.table import NewShoePressed, TableState
from controller.journal import Journal
from controller.table.loop import BuyInEntry, Inbox, LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.game.money import money, table_rules

WALL = "2026-11-30T12:00:00+00:00"


def loop_on(journal: Journal) -> TableLoop:
    return TableLoop(
        TableState(table_rules(money(seats=7))),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL),
    )


def records(journal: Journal, kind: str) -> list[tuple[int | None, dict[str, Any]]]:
    return [(r.cause, json.loads(r.body)) for r in journal.records() if r.kind == kind]


def test_a_buy_in_is_journaled_with_its_record_and_replays_without_a_second(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.db") as journal:
        loop = loop_on(journal)
        loop.handle(BuyInEntry(BuyIn(3, 500_000, Tender.CASH, "E0040150C0001001")))  # before the first shoe: shoe 1
        loop._apply(NewShoePressed(), input_body(NewShoePressed()), None, None)
        loop.handle(BuyInEntry(BuyIn(7, 2_500, Tender.CHIPS)))
        loop.flush()
        inputs = [body for _id, body in journal.inputs() if body["kind"] == "buy_in"]
        assert inputs == [
            {"kind": "buy_in", "seat": 3, "cents": 500_000, "tender": "cash", "player_ref": "E0040150C0001001"},
            {"kind": "buy_in", "seat": 7, "cents": 2_500, "tender": "chips", "player_ref": None},
        ]
        taken = records(journal, "buy_in")
        assert [body for _cause, body in taken] == [
            {"shoe": 1, "coup": 1, "seat": 3, "cents": 500_000, "tender": "cash", "player_ref": "E0040150C0001001"},
            {"shoe": 1, "coup": 1, "seat": 7, "cents": 2_500, "tender": "chips", "player_ref": None},
        ]
        assert all(cause is not None for cause, _body in taken)  # each derived from its input
        count = len(list(journal.records()))
        view = loop.state.view()
    with Journal.open(tmp_path / "j.db") as journal:  # a restart: replayed, nothing written again
        again = loop_on(journal)
        again.replay()
        again.flush()
        assert again.state.view() == view and len(list(journal.records())) == count


def test_a_buy_in_at_a_seat_not_on_the_table_is_refused_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Journal.open(tmp_path / "j.db") as journal:
        loop = loop_on(journal)
        with caplog.at_level(logging.WARNING):
            loop.handle(BuyInEntry(BuyIn(8, 500_000, Tender.CASH)))
            loop.flush()
        assert records(journal, "buy_in") == [] and list(journal.records()) == []
        assert loop.buy_ins_refused == 1
        said = [r.getMessage() for r in caplog.records if "buy-in" in r.getMessage()]
        assert said == ["buy-in refused: seat 8 is not on this table (seats 1-7)"]


def test_a_buy_in_dropped_at_a_full_inbox_is_counted_by_its_kind() -> None:
    inbox = Inbox(bound=1, put_wait=0.0)
    inbox.put(BuyInEntry(BuyIn(1, 100, Tender.CASH)))
    inbox.put(BuyInEntry(BuyIn(2, 100, Tender.CASH)))
    assert inbox.take_dropped() == {"buy_in": 1}


def test_the_tables_metrics_count_each_buy_in_by_what_became_of_it(tmp_path: Path) -> None:
    """``shoe_buy_ins{outcome}``: taken (journaled) and refused (not a seat of the table) as the loop decided,
    each outcome exposed at 0 before the first."""
    from controller.metrics import TableMetrics

    metrics = TableMetrics()

    def count(outcome: str) -> float:
        value = metrics.registry.get_sample_value("shoe_buy_ins_total", {"outcome": outcome})
        assert value is not None, f"no shoe_buy_ins_total{{outcome={outcome!r}}}"
        return value

    assert (count("taken"), count("refused"), count("not_kept")) == (0, 0, 0)
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(
            TableState(table_rules(money(seats=7))),
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            config=LoopConfig(wall=lambda: WALL, metrics=metrics),
        )
        loop.handle(BuyInEntry(BuyIn(3, 500_000, Tender.CASH)))
        loop.handle(BuyInEntry(BuyIn(9, 500_000, Tender.CASH)))
        loop.handle(BuyInEntry(BuyIn(4, 2_500, Tender.MARKER)))
        loop.flush()
        assert len(records(journal, "buy_in")) == 2
    assert (count("taken"), count("refused"), count("not_kept")) == (2, 1, 0)
