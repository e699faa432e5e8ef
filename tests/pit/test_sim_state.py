"""tests/pitload.py's simulated tables publish the state message through its model (floor_protocol.state), as
the table's link does: what they publish reads back through the pit's parser as it was sent."""

from __future__ import annotations

import json
from pathlib import Path

from controller.game.records import TableRecord
from floor_protocol.state import parse_state
from tests.pitload import SimTable
from tests.record_journals import every_kind_journal


def test_a_simulated_tables_state_reads_back_as_it_was_sent(tmp_path: Path) -> None:
    with every_kind_journal(tmp_path / "j.db") as journal:
        records: list[TableRecord] = [r.for_floor("T1") for r in journal.records()]
    sim = SimTable("s1", "T1", records)
    states = []
    for record in records:
        sim.follow(record)
        sim.sent = record.seq
        states.append(sim.state())
    assert len({s["shoe"] for s in states}) >= 2 and any(s["alarms"] for s in states)
    assert any(s["counts"]["coups"] for s in states)
    for state in states:
        assert parse_state(json.dumps(state, separators=(",", ":"))).to_dict() == state
        assert (state["player"], state["banker"], state["result"]) == ([], [], None)
